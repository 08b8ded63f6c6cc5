#include "airtime/model/cluster.h"

#include <map>
#include <set>

namespace airtime {

StatusOr<Cluster> Cluster::Build(std::string name, std::vector<Node> nodes,
                                 const GpuCatalog& catalog) {
  Cluster c;
  c.name_ = std::move(name);
  c.catalog_ = &catalog;
  c.gpus_per_type_.assign(catalog.size(), 0);
  std::set<std::string> seen;
  std::map<std::string, int32_t> domains, racks;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const std::string where = "node " + std::to_string(i) + " ('" + n.name + "')";
    if (n.name.empty()) return InvalidArgument("node " + std::to_string(i) + ": empty name");
    if (!seen.insert(n.name).second) return InvalidArgument(where + ": duplicate node name");
    if (n.gpu_count < 0) return InvalidArgument(where + ": negative GPU count");
    if (n.gpu_count > 0 && (n.gpu_type < 0 || static_cast<size_t>(n.gpu_type) >= catalog.size()))
      return InvalidArgument(where + ": GPU type not in the catalogue");
    if (n.cpu_milli < 0 || n.memory_mib < 0)
      return InvalidArgument(where + ": negative CPU or memory");
    c.first_gpu_.push_back(static_cast<GpuIndex>(c.gpus_.size()));
    for (int g = 0; g < n.gpu_count; ++g) c.gpus_.push_back({static_cast<NodeIndex>(i), g});
    if (n.gpu_count > 0) c.gpus_per_type_[static_cast<size_t>(n.gpu_type)] += n.gpu_count;
    auto dkey = n.nvlink_domain.empty() ? "\x01node:" + n.name : n.nvlink_domain;
    auto rkey = n.rack.empty() ? "\x01node:" + n.name : n.rack;
    c.domain_.push_back(domains.emplace(dkey, static_cast<int32_t>(domains.size())).first->second);
    c.rack_.push_back(racks.emplace(rkey, static_cast<int32_t>(racks.size())).first->second);
  }
  c.nodes_ = std::move(nodes);
  return c;
}

std::string Cluster::gpu_name(GpuIndex g) const {
  const GpuRef& r = gpus_[static_cast<size_t>(g)];
  return nodes_[static_cast<size_t>(r.node)].name + "/gpu" + std::to_string(r.index_on_node);
}

}  // namespace airtime
