#include "airtime/policies/plugins/what_if.h"

#include <map>

namespace airtime {

std::vector<NodeIndex> CandidateNodes(const ClusterState& state, const Shape& shape) {
  const Cluster& cluster = state.cluster();
  std::vector<NodeIndex> out;
  for (size_t i = 0; i < cluster.node_count(); ++i)
    if (state.FitsOnNode(shape, static_cast<NodeIndex>(i)))
      out.push_back(static_cast<NodeIndex>(i));
  if (!out.empty() || shape.gpu_count <= 1 || shape.locality == Locality::kNode) return out;
  // Multi-node: the groups (domain, rack or the whole cluster) with enough units.
  std::map<int32_t, int> units;
  std::vector<std::pair<int32_t, NodeIndex>> nodes;
  for (size_t i = 0; i < cluster.node_count(); ++i) {
    const auto n = static_cast<NodeIndex>(i);
    const int u = state.UnitsOnNode(shape, n);
    if (u == 0) continue;
    const int32_t g = shape.locality == Locality::kNvlinkDomain ? cluster.domain_of(n)
                      : shape.locality == Locality::kRack       ? cluster.rack_of(n)
                                                                : 0;
    units[g] += u;
    nodes.push_back({g, n});
  }
  for (const auto& [g, n] : nodes)
    if (units[g] >= shape.gpu_count) out.push_back(n);
  return out;
}

bool FitsIn(const ClusterState& state, const Shape& shape) {
  const Cluster& cluster = state.cluster();
  for (size_t i = 0; i < cluster.node_count(); ++i)
    if (state.FitsOnNode(shape, static_cast<NodeIndex>(i))) return true;
  if (shape.gpu_count <= 1 || shape.locality == Locality::kNode) return false;
  return !CandidateNodes(state, shape).empty();
}

}  // namespace airtime
