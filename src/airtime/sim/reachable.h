// Reachable: what any schedule of a SimInput could reach at best, the arithmetic that the
// value ceiling (value_ceiling.h) and the LP bound (lp_bound.h) share.
//
// A service serves nothing before its first replica can be ready (its submission plus one
// cold start) and sees its demand curve from its submission on, the point in force at its
// arrival first, as the simulator replays it. A job cannot finish before its submission plus
// its work at the fastest speed it can have. Workloads cancelled by a scenario event earn
// nothing after the cancellation. Pure functions; thread-compatible.
#pragma once

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "airtime/base/time.h"
#include "airtime/model/cluster.h"
#include "airtime/model/workload.h"
#include "airtime/sim/sim_input.h"

namespace airtime {

// The fastest speed among the GPU types installed in `cluster` that `s` allows (0: none).
double BestInstalledSpeed(const WorkloadSpec& s, const Cluster& cluster);

// When a service's first replica could be ready: its submission plus one cold start.
inline TimeMs FirstReady(const WorkloadSpec& s) { return s.submit_at + s.realtime.cold_start; }

// The earliest a job of `speed` could complete: its submission plus its work at that speed,
// rounded down to the millisecond (never later than the engine's completion).
inline TimeMs EarliestEnd(const WorkloadSpec& s, double speed) {
  return s.submit_at + static_cast<DurationMs>(s.work_seconds / speed * kSecond);
}

// Calls fn(from, to, rps) for each piece of a demand curve over [from, to) from `submit` on:
// before its first point the demand is 0; a point at or before the submission is in force
// from the submission. ForEachDemandPiece: a service's own curve from its submission.
template <class Fn>
void ForEachCurvePiece(const std::vector<DemandPoint>& d, TimeMs submit, TimeMs from, TimeMs to,
                       Fn&& fn) {
  for (size_t i = 0; i < d.size(); ++i) {
    const TimeMs a = std::max({d[i].at, submit, from});
    const TimeMs b = std::min(i + 1 < d.size() ? d[i + 1].at : kNever, to);
    if (b > a) fn(a, b, d[i].rps);
  }
}
template <class Fn>
void ForEachDemandPiece(const WorkloadSpec& s, TimeMs from, TimeMs to, Fn&& fn) {
  ForEachCurvePiece(s.realtime.demand, s.submit_at, from, to, std::forward<Fn>(fn));
}

// When each workload is cancelled, by name: the first kCancel event after its submission (a
// cancel at or before the arrival finds nothing to cancel). Workloads never cancelled are
// absent.
std::unordered_map<std::string, TimeMs> CancelTimes(const SimInput& input);

}  // namespace airtime
