#include "airtime/policies/static/static_partition.h"

#include <cmath>
#include <memory>

#include "airtime/base/strings.h"
#include "airtime/engine/engine.h"
#include "airtime/policies/plugins/common_plugins.h"

namespace airtime {
namespace {

int PoolOf(const Job& job) { return IsInferenceKind(job.s().kind) ? 0 : 1; }

class PoolFilter : public FilterPlugin {
 public:
  explicit PoolFilter(std::vector<int> pools) : pools_(std::move(pools)) {}
  std::string_view name() const override { return "pool"; }
  bool Allows(const Job& job, NodeIndex node, const Engine&) const override {
    return pools_[static_cast<size_t>(node)] == PoolOf(job);
  }
  int FitClass(const Job& job) const override { return PoolOf(job); }

 private:
  std::vector<int> pools_;
};

class PoolOrder : public OrderPlugin {
 public:
  std::string_view name() const override { return "strict-per-pool"; }
  int BlockingGroup(const Job& job, const Engine&) const override { return PoolOf(job); }
};

}  // namespace

std::vector<int> AssignPools(const Cluster& cluster, double inference_share) {
  std::vector<int> pools(cluster.node_count(), -1);
  std::vector<std::vector<NodeIndex>> unlabelled(cluster.catalog().size());
  for (size_t i = 0; i < cluster.node_count(); ++i) {
    const Node& n = cluster.node(static_cast<NodeIndex>(i));
    const std::string label = ToLower(n.pool);
    if (label.find("infer") != std::string::npos || label.find("serv") != std::string::npos) {
      pools[i] = 0;
    } else if (label.find("train") != std::string::npos) {
      pools[i] = 1;
    } else if (n.gpu_count > 0) {
      unlabelled[static_cast<size_t>(n.gpu_type)].push_back(static_cast<NodeIndex>(i));
    } else {
      pools[i] = 1;
    }
  }
  for (const auto& nodes : unlabelled) {
    const auto k =
        static_cast<size_t>(std::llround(inference_share * static_cast<double>(nodes.size())));
    for (size_t j = 0; j < nodes.size(); ++j) pools[static_cast<size_t>(nodes[j])] = j < k ? 0 : 1;
  }
  return pools;
}

void RegisterStatic(PolicyRegistry& registry) {
  registry.Register(
      "static", "separate inference and training pools, strict FIFO and first fit in each",
      {"inference_share"},
      [](const Cluster& cluster, const PolicyParams& params) -> StatusOr<Policy> {
        auto share = params.GetDouble("inference_share", 0.5);
        if (!share.ok()) return share.status();
        if (*share < 0 || *share > 1)
          return InvalidArgument("policy 'static': inference_share must be within [0, 1]");
        Policy p;
        p.name = "static";
        p.description = "inference and training pools, FIFO in each";
        p.queue_sort = std::make_unique<ArrivalOrder>();
        p.order = std::make_unique<PoolOrder>();
        p.filters.push_back(std::make_unique<PoolFilter>(AssignPools(cluster, *share)));
        return p;
      });
}

}  // namespace airtime
