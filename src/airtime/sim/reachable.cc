// Reachable: see reachable.h.
#include "airtime/sim/reachable.h"

namespace airtime {

double BestInstalledSpeed(const WorkloadSpec& s, const Cluster& cluster) {
  double best = 0;
  const auto& per_type = cluster.gpus_per_type();
  for (size_t t = 0; t < per_type.size(); ++t) {
    const auto type = static_cast<GpuTypeId>(t);
    if (per_type[t] > 0 && s.shape.AllowsType(type))
      best = std::max(best, s.SpeedOn(type, cluster.catalog()));
  }
  return best;
}

std::unordered_map<std::string, TimeMs> CancelTimes(const SimInput& input) {
  std::unordered_map<std::string, TimeMs> submitted;
  for (const WorkloadSpec& s : input.workloads) submitted.emplace(s.name, s.submit_at);
  std::unordered_map<std::string, TimeMs> out;
  for (const ScenarioEvent& e : input.events) {  // sorted by time: the first one counts
    if (e.type != ScenarioEvent::kCancel || out.count(e.target)) continue;
    auto it = submitted.find(e.target);
    // At the arrival's own instant the scenario event goes first and finds nothing.
    if (it != submitted.end() && e.at > it->second) out.emplace(e.target, e.at);
  }
  return out;
}

}  // namespace airtime
