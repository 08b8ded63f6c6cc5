// ValueCeiling: how much value a replay could earn at most, whatever the policy.
//
// Two ceilings over [0, horizon), both per installed GPU-hour so that they compare with a
// policy's return:
//   offered      every request served and every job submitted before the horizon completed
//                (its full completion value): what the owners asked for, reachable or not;
//   reachable    every request served from the service's first possible ready time (its
//                submission plus one cold start) on, up to what its max_replicas can serve, and
//                every job that could complete before the horizon if it started at its
//                submission on the fastest GPU type installed that it allows, valued at that
//                completion (decay after its deadline included). No contention is counted:
//                a bound, not a schedule.
// A target such as "1.5 x fifo" above `reachable` cannot be met on that input by any policy.
// The same bound on realtime SLO attainment: requests arriving before a service's first
// replica can be ready, or above what its max_replicas serve, are missed under any policy.
// Pure function of the input.
#pragma once

#include "airtime/base/time.h"
#include "airtime/sim/sim_input.h"

namespace airtime {

struct ValueCeiling {
  double offered_value = 0;
  double reachable_value = 0;
  double installed_gpu_hours = 0;
  int jobs = 0;                   // submitted before the horizon (services not counted)
  int reachable_jobs = 0;         // of those, the ones that could complete in time
  double requests = 0;            // arriving at services over [submission, horizon)
  double reachable_requests = 0;  // of those, the ones some schedule could serve in SLO
  double missed_at_start = 0;     // arriving within a service's first cold start

  double offered_per_gpu_hour() const {
    return installed_gpu_hours > 0 ? offered_value / installed_gpu_hours : 0;
  }
  double reachable_per_gpu_hour() const {
    return installed_gpu_hours > 0 ? reachable_value / installed_gpu_hours : 0;
  }
  double reachable_slo_attainment() const {
    return requests > 0 ? reachable_requests / requests : 1.0;
  }
};

ValueCeiling ComputeValueCeiling(const SimInput& input, TimeMs horizon);

}  // namespace airtime
