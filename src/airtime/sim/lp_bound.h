// LpBound: a capacity-aware upper bound on the value any schedule of a replay can earn.
//
// The value ceiling (value_ceiling.h) ignores capacity: on a contended day it promises far
// more than fits on the GPUs. This bound is the optimum of a time-indexed linear relaxation
// of the replay over [0, horizon), cut into slots, solved with COIN-OR CLP:
//
//   capacity   per GPU type and slot, the GPU-time its nodes are up; work occupies it by the
//              fraction of a GPU it holds (whole GPUs, gpu_fraction, MIG compute sevenths, as
//              the engine counts them); MIG work also fits within the MIG-enabled GPUs;
//   jobs       run on the types their shape can use, from their submission, at most at their
//              gang's full width in any slot, advancing at the type's speed; completing in a
//              slot needs all their work done by its end and earns the completion value at
//              the slot's start (or the earliest possible completion, if later), so the decay
//              after a deadline is never under-counted; partial work earns nothing, but a
//              fraction of a job may complete (the relaxation);
//   services   serve in each slot at most the requests arriving in it after their first
//              replica could be ready, and at most what the replica-time they hold serves
//              (capacity_rps per replica, up to max_replicas), valued per request served;
//   cancelled  workloads earn nothing after their cancellation.
//
// Every schedule the simulator can produce maps to a feasible point of the relaxation with
// at least its value (preemption, restarts, cold starts after the first, interference and
// fragmentation only cost), so the bound is never below any policy's return. Pure function of
// its input (solve_seconds apart); thread-compatible.
#pragma once

#include <cstdint>
#include <string>

#include "airtime/base/time.h"
#include "airtime/sim/sim_input.h"

namespace airtime {

struct LpBoundOptions {
  DurationMs slot = 0;     // slot length; 0: AutoSlot(horizon)
  double max_seconds = 0;  // the solver's time limit (0: none); past it, no bound
};

struct LpBound {
  // "optimal" when the LP was solved; otherwise why there is no bound ("time limit", ...).
  std::string status;
  double value = 0;                // the bound on value earned over [0, horizon)
  double installed_gpu_hours = 0;  // GPUs x horizon, as the ledger counts them
  DurationMs slot = 0;
  int slots = 0;
  int rows = 0, columns = 0;
  int64_t nonzeros = 0;
  double solve_seconds = 0;  // wall time to build and solve the LP
  int jobs = 0;              // jobs submitted before the horizon
  int jobs_in_lp = 0;        // of those, the ones some schedule could complete (in the LP)
  int services = 0;          // services submitted before the horizon

  bool ok() const { return status == "optimal"; }
  double per_gpu_hour() const { return installed_gpu_hours > 0 ? value / installed_gpu_hours : 0; }
};

// The slot length used by default: the shortest of 1, 2, 5, 10, 15, 20, 30 minutes, 1, 2, 3,
// 4, 6, 12 or 24 hours that cuts the horizon into at most 96 slots per day, and at most 96
// (under a day) to 192 (from two days on) in all: 15 minutes for one or two days, 1 minute
// for 90 minutes, 1 hour for a week. The LP grows with jobs x slots, and a week's LP at 15
// minutes took minutes to solve where one at 1 hour took seconds and bounded within 0.01%.
DurationMs AutoSlot(TimeMs horizon);

LpBound ComputeLpBound(const SimInput& input, TimeMs horizon, const LpBoundOptions& options = {});

}  // namespace airtime
