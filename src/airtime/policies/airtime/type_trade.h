// TypeTrade: scarce fast GPUs go to the work that gains most from them (Gavel's point).
//
// Jobs do not speed up alike on a faster type: a convolutional network may run ten times
// faster on an H100 than on a T4 where a host-bound recommendation model gains 10%. In
// value order the denser job takes the fast type first, even where it would lose little on
// a slower one and the job behind it loses most of its value rate there. Before each
// allocation pass, TypeTrade looks at the waiting jobs on whole GPUs (the first `scan` of
// the queue, in the order of the last pass) and, for each, at its fastest GPU type t1 and
// the next fastest t2 it may use (its per-type speed, and GPU memory that holds it). Its
// claim on t1 is the value per GPU-hour it gains there over t2: value density x (speed on
// t1 - speed on t2), or its whole value rate when it has no other type. Where the jobs that
// prefer t1 and could start on it now (a node of t1 with room that the policy's filters
// allow) ask for more GPUs than t1 has free, the largest claims get them (greedily, in claim
// order, a job too big for what is left skipped). Every other one that could start on t2
// now is traded off t1 for the cycle: SpeedScore ranks t1, for it, below every other type,
// so it goes to t2 (or wherever the other scores send it) and leaves t1 to the larger
// claims behind it. A job that could start on no other type keeps t1: nothing waits for a
// trade.
//
// A claim the pass does not take up (the job is then held back by a permit: a burst hold,
// a gang reservation, a faster type soon) would leave t1's GPUs idle while the traded jobs
// run slower elsewhere. So when a pass in which jobs were traded off t1 ends with t1 still
// able to take one of them, trading on t1 stops until t1 has fewer free GPUs than then
// (something started there). With one GPU type, with work that speeds up alike everywhere,
// or with enough fast GPUs for everyone, nothing changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "airtime/engine/plugins.h"
#include "airtime/policies/airtime/cycle_views.h"

namespace airtime {

class TypeTrade : public CyclePlugin, public SpeedRankView {
 public:
  explicit TypeTrade(size_t scan = 512) : scan_(scan) {}
  std::string_view name() const override { return "type-trade"; }
  void BeforeAllocate(Engine& engine) override;
  void AfterAllocate(Engine& engine) override;

  // The speed SpeedScore ranks `job` on GPU type `type` by: its own, or, where the job was
  // traded off `type` this cycle, a speed below every type's (kDemoted under the next one).
  double RankSpeed(const Job& job, GpuTypeId type, const Engine& engine) const override;
  // How far below its next type a traded job ranks its fastest one, in units of relative
  // speed: more than packing (weight `pack`) and fragmentation can add to a node's score.
  static constexpr double kDemoted = 100;

  // A job traded off its fastest type in this cycle.
  struct Trade {
    GpuTypeId from = 0, to = 0;
    double to_speed = 0;
    double gain = 0;  // its claim on `from`, value per GPU-hour
  };
  const std::unordered_map<WorkloadId, Trade>& trades() const { return trades_; }

 private:
  // Whether `job` could start on a node of `type` now: one with room that every filter of
  // the policy allows (a gang over several nodes: enough free GPUs of the type).
  bool CouldStartOn(const Job& job, GpuTypeId type, const Engine& engine);

  size_t scan_;
  std::unordered_map<WorkloadId, Trade> trades_;
  // Per type: trading stops while the type has at least this many free GPUs (a pass left
  // them free after trading jobs off it); INT32_MAX: trading on.
  std::vector<int> stop_at_free_;
  struct Claim {
    double gain = 0;
    int gpus = 0;
    WorkloadId id = 0;
    Trade trade;
  };
  // A waiting job's claim on its fastest type (trade.from -1: no type holds it).
  Claim ClaimOf(const Job& job, const GpuCatalog& catalog) const;
  struct Cached {
    bool known = false;
    Claim claim;
  };
  std::vector<Cached> claim_of_;              // per workload id, once worked out
  std::vector<std::vector<Claim>> by_type_;   // scratch: claims per fastest type
  std::vector<std::vector<NodeIndex>> open_;  // scratch: per type, nodes with a free GPU
  std::vector<char> open_known_;              // scratch: open_[type] filled this cycle
  std::vector<GpuTypeId> present_;            // scratch: the types the cluster has
  // RankSpeed's lookup of the job it was last asked about, in this cycle.
  mutable WorkloadId last_job_ = kNoWorkload;
  mutable uint64_t last_cycle_ = 0;
  mutable const Trade* last_trade_ = nullptr;
};

}  // namespace airtime
