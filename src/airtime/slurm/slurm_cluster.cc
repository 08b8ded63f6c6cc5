#include "airtime/slurm/slurm_cluster.h"

#include <set>

#include "airtime/base/strings.h"

namespace airtime::slurm {

StatusOr<SlurmCluster> ClusterFromSlurm(const std::vector<SlurmNode>& nodes,
                                        const std::string& name, const GpuCatalog& catalog) {
  if (nodes.empty()) return InvalidArgument("Slurm reports no nodes");
  std::vector<Node> out;
  std::vector<std::string> left_out;
  // Per engine Node: its Slurm node, the Slurm index of its first GPU and their GRES type.
  struct Origin {
    std::string node;
    int first = 0;
    std::string type;
  };
  std::vector<Origin> origin;
  std::set<std::string> seen;
  std::map<std::string, int64_t> shards_per_gpu;
  std::vector<std::string> uneven;
  for (const SlurmNode& sn : nodes) {
    if (!seen.insert(sn.name).second)
      return InvalidArgument("Slurm reports node '" + sn.name + "' twice");
    std::vector<const Gres*> gpus;
    int64_t total = 0;
    for (const Gres& g : sn.gres) {
      if (g.name != "gpu") continue;
      gpus.push_back(&g);
      total += g.count;
    }
    if (total > 4096)
      return InvalidArgument("Slurm node '" + sn.name + "' reports " + std::to_string(total) +
                             " GPUs (more than 4096)");
    // Shards: per GPU, when the node has both (shards without GPUs share nothing).
    const int64_t shards = ShardCount(sn.gres);
    if (shards > 0 && total > 0) {
      shards_per_gpu[sn.name] = shards / total;
      if (shards % total != 0)
        uneven.push_back(sn.name + ": " + std::to_string(shards) + " shards on " +
                         std::to_string(total) + " GPUs, taken as " +
                         std::to_string(shards / total) + " each");
    }
    Node base;
    base.cpu_milli = sn.cpus > 0 ? sn.cpus * 1000 : 0;
    base.memory_mib = sn.real_memory_mb > 0 ? sn.real_memory_mb : 0;
    if (sn.partitions.size() == 1) base.pool = sn.partitions[0];
    int first_index = 0;
    bool any = false;
    for (const Gres* g : gpus) {
      const int index = first_index;
      first_index += static_cast<int>(g->count);
      if (g->count == 0) continue;
      auto type =
          g->type.empty() ? StatusOr<GpuTypeId>(NotFound("untyped")) : catalog.Find(g->type);
      if (!type.ok()) {
        left_out.push_back(
            sn.name + ": " + std::to_string(g->count) + " x gpu" +
            (g->type.empty() ? " without a type" : ":" + g->type + " (unknown type)"));
        continue;
      }
      Node n = base;
      n.gpu_type = *type;
      n.gpu_count = static_cast<int>(g->count);
      n.name = gpus.size() > 1 ? sn.name + "-" + ToLower(g->type) : sn.name;
      out.push_back(std::move(n));
      origin.push_back({sn.name, index, g->type});
      any = true;
    }
    if (!any) {
      Node n = base;
      n.name = sn.name;
      out.push_back(std::move(n));
      origin.push_back({sn.name, 0, ""});
    }
  }
  auto cluster = Cluster::Build(name, std::move(out), catalog);
  if (!cluster.ok()) return cluster.status();
  SlurmCluster result{std::move(*cluster), "", {}, {}, {}, std::move(shards_per_gpu)};
  for (const SlurmNode& sn : nodes)
    result.address_of[sn.name] = sn.address.empty() ? sn.name : sn.address;
  std::vector<std::string> notes;
  if (!left_out.empty())
    notes.push_back("left out GPUs airtime cannot type: " + Join(left_out, "; "));
  if (!uneven.empty()) notes.push_back("uneven gres/shard: " + Join(uneven, "; "));
  result.note = Join(notes, "; ");
  for (size_t g = 0; g < result.cluster.gpu_count(); ++g) {
    const GpuRef& ref = result.cluster.gpu(static_cast<GpuIndex>(g));
    const Origin& o = origin[static_cast<size_t>(ref.node)];
    result.gpu_of[{o.node, o.first + ref.index_on_node}] = static_cast<GpuIndex>(g);
    result.slurm_gpu.push_back({o.node, o.first + ref.index_on_node, o.type});
  }
  return result;
}

StatusOr<std::vector<GpuIndex>> SlurmCluster::GpusOf(const SlurmJob& job) const {
  std::vector<GpuIndex> out;
  for (const NodeGpus& ng : job.gpus) {
    for (int i : ng.indices) {
      auto it = gpu_of.find({ng.node, i});
      if (it == gpu_of.end())
        return NotFound("job " + std::to_string(job.id) + ": GPU " + std::to_string(i) +
                        " of node '" + ng.node + "' is not in the cluster airtime knows");
      out.push_back(it->second);
    }
  }
  return out;
}

}  // namespace airtime::slurm
