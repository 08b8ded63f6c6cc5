// airtime: the value scheduler (see docs/policies.md).
//
// Assembled from plug-ins: ValueOrder (realtime replicas first, then value density with a
// deadline's cost of delay, UrgentDensity), placement by GPU speed, packing of preemptible
// work (PackScore) and interference, then fragmentation (FGD's measure, task mix learned
// from arrivals), TypeTrade (scarce fast GPUs to the waiting work that gains most there),
// ForecastScale (replicas for the forecast over each service's cold start, warm spares,
// the scale-down window, declared headroom), BurstHold (the hold-or-hand-off decision for
// work that could not give GPUs back in time), SloClaimFilter (a node's freeing GPUs kept
// for a replica the SLO buffer asks for), FasterLater (deadline work waits for a faster
// type that frees soon when that earns more), ValuePreempt (preempt only when the gain pays
// for the loss, or for a replica the demand of a service below its SLO needs; no thrash),
// MoveUp (running work moves to a faster type nobody waits for), GangReserve (EASY-style
// reservation for a gang that has waited gang_wait) and, with `quota`/`limit`, tenant
// quotas in kai's format (borrowing by preemptible work, reclaim of borrowed capacity
// first). Parameters: RegisterAirtime's list and docs/policies.md's table.
#pragma once

#include "airtime/policies/registry.h"

namespace airtime {
void RegisterAirtime(PolicyRegistry& registry);
}  // namespace airtime
