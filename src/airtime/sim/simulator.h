// Simulator: replays a SimInput through the engine on a virtual clock.
//
// The simulator is the world: it turns workload arrivals, demand curves and timed scenario
// events into engine events, carries out the engine's decisions (a started job completes
// when its work is done, a preempted one never does, a replica is ready after its cold
// start) and feeds the ledger and the metrics between events. It drives the same Engine the
// daemon drives; only the clock and the actuator differ. Deterministic for a given input,
// policy and seed. One Simulate call is independent of any other (thread-compatible).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/ledger/costs.h"
#include "airtime/ledger/ledger.h"
#include "airtime/ledger/metrics.h"
#include "airtime/model/interference.h"
#include "airtime/sim/sim_input.h"
#include "airtime/sim/timeline.h"

namespace airtime {

struct SimOptions {
  uint64_t seed = 1;         // engine tie-breaking
  TimeMs horizon = kNever;   // stop here; kNever: when no event is left
  bool time_cycles = false;  // measure each decision cycle's wall time
  // How work that shares a GPU by fractions slows down (model/interference.h): by default as
  // Gavel measured; null: not at all. Must outlive the run.
  const InterferenceModel* interference = &InterferenceModel::Gavel();
  // When set, every decision is written here as one JSON object per line, and at the end
  // every workload still waiting with its explanation.
  std::ostream* decision_log = nullptr;
  // SimulatePolicies: how many policies replay at once, each on its own thread (a replay
  // itself is single-threaded). Results do not depend on it. With a decision log, 1.
  int threads = 1;
  // The allocation and queue over time (SimResult::timeline) in at most this many points
  // (sim/timeline.h); 0: none.
  size_t timeline_points = 200;
  // SimulatePolicies: called once per policy when its replay ends (before any second replay
  // to a common end), from the thread that ran it. For progress on a terminal.
  std::function<void()> on_replay_done = nullptr;
};

struct SimResult {
  std::string policy;
  std::string policy_description;
  TimeMs end = 0;
  LedgerTotals ledger;
  std::unordered_map<std::string, int64_t> shape_blocked;  // milli-GPU-ms per shape
  MetricsSummary metrics;
  // What the installed GPUs cost over the run (SimInput::costs), per bucket and per type,
  // and the margin: ledger/costs.h. Computed from the ledger and the metrics; it changes
  // no decision.
  CostSummary costs;
  size_t events = 0;
  std::vector<double> cycle_us;  // per cycle, when SimOptions::time_cycles
  double wall_seconds = 0;
  std::vector<std::string> event_errors;  // events the engine refused (first 10)
  // Workloads still waiting at the end, with why ("name: explanation"), first 20.
  std::vector<std::string> waiting_at_end;
  size_t waiting_at_end_count = 0;
  // Allocation and workloads waiting over time, at most SimOptions::timeline_points
  // intervals of timeline_step each.
  std::vector<TimelinePoint> timeline;
  DurationMs timeline_step = 0;

  double return_per_gpu_hour() const;
  double allocation_rate() const;  // allocated GPU-time / installed GPU-time
};

StatusOr<SimResult> Simulate(const SimInput& input, const std::string& policy_spec,
                             const SimOptions& options = {});

// Runs every policy on the same input. Without a horizon, all runs are brought to the same
// end (the latest of the runs' own ends) so that installed GPU-hours are equal and returns
// per installed GPU-hour compare like for like.
StatusOr<std::vector<SimResult>> SimulatePolicies(const SimInput& input,
                                                  const std::vector<std::string>& policy_specs,
                                                  const SimOptions& options = {});

}  // namespace airtime
