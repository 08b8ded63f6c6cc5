// airtime: the value scheduler (first version; see docs/policies.md).
//
// Assembled from plug-ins: ValueOrder (realtime replicas first, then value density),
// placement by GPU speed then fragmentation (FGD's measure, task mix learned from
// arrivals), ForecastScale (replicas for the forecast over each service's cold start, and
// declared headroom), BurstHold (the hold-or-hand-off decision for work that could not give
// GPUs back in time), ValuePreempt (preempt only when the gain pays for the loss; no
// thrash), GangReserve (EASY-style reservation for a gang that has waited gang_wait) and,
// optionally, PackScore (best fit against speed) and tenant quotas in kai's format
// (borrowing by preemptible work, reclaim of borrowed capacity first). Parameters:
// preemption=on|off, lead, hold_horizon, margin, gain_horizon, gang_wait, pack, quota, limit.
#pragma once

#include "airtime/policies/registry.h"

namespace airtime {
void RegisterAirtime(PolicyRegistry& registry);
}  // namespace airtime
