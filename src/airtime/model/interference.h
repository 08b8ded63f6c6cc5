// Interference: how much a workload slows down while work of another model family shares
// its GPU by fractions (MPS-style space sharing; MIG slices are isolated and whole GPUs are
// not shared, so neither interferes).
//
// The built-in table comes from Gavel's measured co-located throughputs on a V100 (the
// Gavel data in ../shared/traces/gavel; scripts/gen-interference-table.py derives it and
// explains the derivation). Gavel measured each job sharing a whole GPU against running
// alone; airtime splits a GPU by fixed fractions, each workload's work stated at its own
// fraction, so what carries over is the capacity a pair loses to contention: when the two
// relative throughputs sum to T < 1, each runs at T of the speed its fraction would give,
// and a pair with T >= 1 fits side by side without loss. With several co-tenants the
// factors multiply. Work of no known family (the `family` field left out) gets the median
// over every measured pair, which is 1: most measured pairs lose nothing.
//
// A table may also be one a site measured on its own GPUs (sim/interference_file.h reads
// it from a CSV file; scripts/device/interference-check.sh writes one): there a pair may
// be listed both ways, each with the factor of its first family, since two workloads
// sharing a GPU need not slow each other alike. A pair listed one way only holds both ways.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace airtime {

class InterferenceModel {
 public:
  struct Pair {
    std::string a, b;
    double factor = 1.0;  // speed factor of `a` (and of `b`, unless b-a is listed) sharing
  };
  InterferenceModel(std::vector<Pair> pairs, double default_factor);

  // The table derived from Gavel (see above).
  static const InterferenceModel& Gavel();

  // Speed factor of a workload of `family` sharing its GPU with one of `other` ("" : no
  // known family): the pair (family, other) if listed, else (other, family). Case-insensitive;
  // a pair with an unknown side gets default_factor().
  double Factor(std::string_view family, std::string_view other) const;
  // The family as the table spells it, or "" when it does not know it.
  std::string Canonical(std::string_view family) const;
  // The families the table knows, sorted.
  const std::vector<std::string>& families() const { return families_; }
  double default_factor() const { return default_; }

 private:
  std::vector<Pair> pairs_;
  std::vector<std::string> families_;
  double default_;
};

}  // namespace airtime
