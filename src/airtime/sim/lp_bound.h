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
//   variants   a service with model variants (its members) serves each request class with
//              any mix of the variants that serve it, as a fluid: per slot, replica-hours of
//              each variant per type (from its own first ready time, up to its
//              max_replicas), serving up to their throughput there, each request valued x
//              the quality of the variant that served it; the quality floor is not imposed
//              and a variant a job produces may serve from the start (both only loosen it);
//   cancelled  workloads earn nothing after their cancellation.
//
// The bound at an SLO target (LpBoundOptions::slo) bounds the schedules that meet it: the
// same LP with one more row, the services' requests served within the SLO at least the
// target's share of all their requests (from each service's submission on, those before its
// first replica can be ready included, as the simulator counts attainment over all
// services). The relaxation serves a request only where a replica is held for it, so it can
// drop the top replica's thinnest slices when the GPUs earn more for jobs; a policy held to
// the target cannot, and this bound says what that costs at best.
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
  // Slot length; 0: AutoSlot(horizon), or longer (the next of AutoSlot's lengths, again and
  // again) while the LP would have more than max_columns columns (0: no limit).
  DurationMs slot = 0;
  int max_columns = 250'000;
  double max_seconds = 0;  // the solver's time limit (0: none); past it, no bound
  // The realtime SLO attainment the second bound holds every schedule to (0: no second
  // bound). It is solved from the first bound's optimum.
  double slo = 0;
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
  // The bound on the schedules that meet LpBoundOptions::slo (0: not asked, or no service
  // with demand): "optimal", "unreachable" (no schedule meets the target), or why the LP
  // gave none. slo_most: the highest attainment the replicas could reach at all.
  double slo = 0;
  std::string slo_status;
  double slo_value = 0;
  double slo_most = 0;

  bool ok() const { return status == "optimal"; }
  double per_gpu_hour() const { return installed_gpu_hours > 0 ? value / installed_gpu_hours : 0; }
  bool slo_ok() const { return slo_status == "optimal"; }
  double slo_per_gpu_hour() const {
    return installed_gpu_hours > 0 ? slo_value / installed_gpu_hours : 0;
  }
};

// The slot length a horizon starts from: the shortest of 1, 2, 5, 10, 15, 20, 30 minutes, 1,
// 2, 3, 4, 6, 12 or 24 hours that cuts it into at most 48 slots per day, and at most 48 (a day
// or less) to 192 (from four days on) in all: 30 minutes for one to four days, 1 hour for a
// week, 2 minutes for 90 minutes. The LP grows with jobs x slots and its solve time faster,
// while its optimum hardly moves with the slot length: on the 63 (scenario, Philly day)
// replays of scripts/held-out-days.py, 15-minute slots took up to 24 s for a day (71 s in
// all) and 30-minute ones at most 6 s (20 s in all), for bounds at most 0.17% looser; the
// 2-day launch-burst scenario (808,547 columns at 30 minutes) took 47 s at 30 minutes and
// 2.2 s at 2 hours, for the same bound to 4 digits. Hence also max_columns.
DurationMs AutoSlot(TimeMs horizon);

LpBound ComputeLpBound(const SimInput& input, TimeMs horizon, const LpBoundOptions& options = {});

}  // namespace airtime
