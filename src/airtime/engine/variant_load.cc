#include "airtime/engine/variant_load.h"

namespace airtime {

double VariantLoad::Served(size_t v) const {
  double s = 0;
  if (v < route.served.size())
    for (double x : route.served[v]) s += x;
  return s;
}

double ReadyCapacity(const Engine& engine, const Job& m,
                     std::vector<std::pair<GpuTypeId, double>>* ready) {
  const RealtimeProfile& rt = m.s().realtime;
  const auto v = static_cast<size_t>(rt.variant);
  double capacity = 0;
  if (v >= rt.variants.size()) return capacity;
  for (AllocationId a : m.allocations) {
    const Allocation* al = engine.allocation(a);
    if (al->ready_at > engine.now() || al->placement.gpus.empty()) continue;
    const GpuTypeId type = engine.cluster().gpu_type(al->placement.gpus.front());
    const double rps = rt.variants[v].ThroughputOn(type) * al->interference;
    capacity += rps;
    if (ready != nullptr) ready->push_back({type, rps});
  }
  return capacity;
}

std::map<std::string, VariantLoad> VariantLoads(const Engine& engine) {
  std::map<std::string, VariantLoad> loads;
  for (WorkloadId id : engine.services()) {
    const Job& m = engine.job(id);
    const RealtimeProfile& rt = m.s().realtime;
    if (!rt.is_member() || m.phase == JobPhase::kCancelled) continue;
    VariantLoad& l = loads[rt.group];
    const size_t nv = rt.variants.size();
    if (l.members.empty()) {
      l.members.assign(nv, kNoWorkload);
      l.capacity.assign(nv, 0.0);
      l.ready.assign(nv, {});
    }
    const auto v = static_cast<size_t>(rt.variant);
    if (v >= nv) continue;
    l.members[v] = id;
    l.capacity[v] += ReadyCapacity(engine, m, &l.ready[v]);
  }
  for (auto& [name, l] : loads) {
    const Job* first = nullptr;
    for (WorkloadId id : l.members)
      if (id != kNoWorkload && first == nullptr) first = &engine.job(id);
    const RealtimeProfile& rt = first->s().realtime;
    std::vector<double> demand(rt.classes.size(), 0.0);
    for (size_t c = 0; c < demand.size() && c < first->class_rps.size(); ++c)
      demand[c] = first->class_rps[c];
    std::vector<std::vector<double>> share(rt.variants.size());
    for (size_t v = 0; v < l.members.size(); ++v)
      if (l.members[v] != kNoWorkload) share[v] = engine.job(l.members[v]).route_share;
    l.route = RouteRequests(rt, l.capacity, demand, share);
  }
  return loads;
}

}  // namespace airtime
