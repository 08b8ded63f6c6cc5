// Random scenarios for property tests and benchmarks: clusters of mixed GPU types and
// topologies, workloads of all seven kinds and shapes (whole, MIG, fractions, gangs,
// host-only), demand curves, node failures, cancellations and priority changes.
// Deterministic for a seed.
#pragma once

#include <cstdint>

#include "airtime/sim/sim_input.h"

namespace airtime {

struct RandomScenarioOptions {
  int nodes = 6;
  int workloads = 60;
  TimeMs span = 12 * kHour;  // arrivals spread over this
  bool node_events = true;
  bool cancels = true;
};

SimInput RandomScenario(uint64_t seed, const RandomScenarioOptions& options = {});

}  // namespace airtime
