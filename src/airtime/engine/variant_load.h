// How the members of each service with model variants serve its request classes now: the
// ready capacity of each variant (its replicas' throughput on the GPU types they got,
// slowed by interference) and RouteRequests over it with the policy's shares. One
// implementation for the metrics (value x quality, GPU-hours freed) and the ledger (a
// member's replicas are useful by the share of their capacity that serves requests).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "airtime/engine/engine.h"
#include "airtime/model/variant_route.h"

namespace airtime {

struct VariantLoad {
  std::vector<WorkloadId> members;  // by variant index (kNoWorkload: none)
  std::vector<double> capacity;     // ready requests/s per variant
  // Per variant, each ready replica's GPU type and requests/s.
  std::vector<std::vector<std::pair<GpuTypeId, double>>> ready;
  VariantRoute route;
  double Served(size_t v) const;  // requests/s variant v serves
};

// Requests/s the ready replicas of member `m` serve: each at its variant's throughput on
// its (first GPU's) type, slowed by interference. `ready`: when not null, each replica's
// type and requests/s are appended to it.
double ReadyCapacity(const Engine& engine, const Job& m,
                     std::vector<std::pair<GpuTypeId, double>>* ready = nullptr);

// Every service with variants that has a member not cancelled, by service name.
std::map<std::string, VariantLoad> VariantLoads(const Engine& engine);

}  // namespace airtime
