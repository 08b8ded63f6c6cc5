// RouteRequests: how a service with model variants serves its request classes with the
// replicas it has ready.
//
// The policy may say what share of each class's requests it sends to each variant (the
// routing of its plan); those go first, each variant serving at most its ready capacity
// (spread over the classes routed to it in proportion). What is left of each class then goes
// to the variants that serve it and have capacity to spare, the best quality first (a load
// balancer that prefers quality while it can). Requests no ready capacity can take are
// missed. A service's quality_floor holds for what it serves: when the ready mix would
// serve below it (the better variants' replicas did not find room), requests of the
// variants under the floor are missed instead, the lowest quality first, until the mean
// quality served is the floor (KeepQualityFloor). The simulator's metrics serve requests
// this way; the policy estimates its plans with it. Pure function.
#pragma once

#include <vector>

#include "airtime/model/workload.h"

namespace airtime {

struct VariantRoute {
  // served[v][c]: requests/s of class c served within the SLO by variant v.
  std::vector<std::vector<double>> served;
  double demand_rps = 0;   // all classes
  double served_rps = 0;   // within the SLO
  double quality_rps = 0;  // served requests weighted by the quality of their variant
  double MeanQuality() const { return served_rps > 0 ? quality_rps / served_rps : 1.0; }
};

// `rt`: the service's profile (its variants and classes); `capacity[v]`: requests/s variant
// v's ready replicas serve; `demand[c]`: class c's requests/s; `share[v]`: the share of each
// class the policy routes to v (an empty row: none).
VariantRoute RouteRequests(const RealtimeProfile& rt, const std::vector<double>& capacity,
                           const std::vector<double>& demand,
                           const std::vector<std::vector<double>>& share);

// Misses the fewest requests of the variants below `rt.quality_floor` (the lowest quality
// first, each class it serves in proportion) that bring the mean quality of what `r` serves
// up to the floor; nothing when it meets the floor already or has none.
void KeepQualityFloor(const RealtimeProfile& rt, VariantRoute& r);

}  // namespace airtime
