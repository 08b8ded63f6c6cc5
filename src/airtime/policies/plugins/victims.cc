#include "airtime/policies/plugins/victims.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace airtime {
namespace {

int32_t GroupOf(const Cluster& c, Locality l, NodeIndex n) {
  switch (l) {
    case Locality::kNode:
      return n;
    case Locality::kNvlinkDomain:
      return c.domain_of(n);
    case Locality::kRack:
      return c.rack_of(n);
    case Locality::kAny:
      return 0;
  }
  return n;
}

// One place the job could go (a node, or a group of nodes for wide shapes) and whether a
// set of stopped allocations frees enough of it.
class Place {
 public:
  Place(const Engine& e, const Shape& shape, std::vector<NodeIndex> nodes)
      : e_(e), shape_(shape), nodes_(std::move(nodes)), in_(e.cluster().node_count(), 0) {
    for (NodeIndex n : nodes_) {
      in_[static_cast<size_t>(n)] = 1;
      base_units_ += e.state().node(n).free_whole;
      gpus_ += e.cluster().node(n).gpu_count;
    }
  }

  bool big_enough() const { return gpus_ >= shape_.gpu_count; }

  // Whether the allocation holds anything here (a GPU, or the host of a one-node place).
  bool Touches(const Allocation& a) const {
    for (GpuIndex g : a.placement.gpus)
      if (in_[static_cast<size_t>(e_.cluster().gpu(g).node)]) return true;
    return single() && a.placement.host_node == nodes_[0];
  }

  bool Fits(const std::vector<const Allocation*>& stopped) const {
    std::unordered_map<GpuIndex, int> hits;
    int64_t cpu = 0, mem = 0;
    for (const Allocation* a : stopped) {
      for (GpuIndex g : a->placement.gpus)
        if (in_[static_cast<size_t>(e_.cluster().gpu(g).node)]) ++hits[g];
      if (single() && a->placement.host_node == nodes_[0]) {
        cpu += a->placement.cpu_milli;
        mem += a->placement.memory_mib;
      }
    }
    int units = base_units_;
    for (const auto& [g, h] : hits) {
      const GpuSlot& s = e_.state().gpu(g);
      // (A GPU that outside work holds a share of is never free whole.)
      if (!s.reserved && s.foreign_milli == 0 && s.holders > 0 && h >= s.holders) ++units;
    }
    if (units < shape_.gpu_count) return false;
    if (!single()) return true;
    const Node& node = e_.cluster().node(nodes_[0]);
    const NodeSummary& ns = e_.state().node(nodes_[0]);
    if (node.cpu_milli > 0 && ns.cpu_free + cpu < shape_.cpu_milli) return false;
    if (node.memory_mib > 0 && ns.memory_free + mem < shape_.memory_mib) return false;
    return true;
  }

 private:
  bool single() const { return shape_.locality == Locality::kNode || nodes_.size() == 1; }

  const Engine& e_;
  const Shape& shape_;
  std::vector<NodeIndex> nodes_;
  std::vector<char> in_;
  int base_units_ = 0;
  int gpus_ = 0;
};

}  // namespace

bool NodeCouldHost(const Engine& engine, const Shape& shape, NodeIndex n) {
  const Node& node = engine.cluster().node(n);
  if (!engine.state().node(n).up || node.gpu_count == 0) return false;
  if (!shape.AllowsType(node.gpu_type)) return false;
  const GpuType& type = engine.catalog().type(node.gpu_type);
  if (shape.mode == ShareMode::kMig && (!node.mig_enabled || !type.FindMig(shape.mig_profile)))
    return false;
  if (shape.mode != ShareMode::kMig && shape.memory_gb > type.memory_gb) return false;
  if (shape.locality == Locality::kNode && node.gpu_count < shape.gpu_count) return false;
  if (shape.cpu_milli > 0 && node.cpu_milli > 0 && node.cpu_milli < shape.cpu_milli) return false;
  return true;
}

double PreemptionCost(const Engine& engine, const Allocation& a) {
  const Job& job = engine.job(a.workload);
  const double gpus = static_cast<double>(a.placement.total_milli()) / 1000.0;
  if (job.is_service()) return 1e18;  // never a victim; make it obvious if listed
  const StopOutcome out = StopSegment(job.s(), a.segment, engine.now());
  return (ToSeconds(out.lost_ms) + ToSeconds(job.s().restart_cost)) * std::max(gpus, 0.001);
}

std::optional<std::vector<AllocationId>> FindVictims(const Engine& engine, const Job& job,
                                                     const VictimQuery& query) {
  const Shape& shape = job.s().shape;
  if (shape.gpu_count <= 0 || job.never_fits) return std::nullopt;
  const Cluster& c = engine.cluster();
  std::map<int32_t, std::vector<NodeIndex>> groups;
  for (size_t i = 0; i < c.node_count(); ++i) {
    const auto n = static_cast<NodeIndex>(i);
    if (!NodeCouldHost(engine, shape, n) || (query.node_ok && !query.node_ok(n))) continue;
    groups[GroupOf(c, shape.locality, n)].push_back(n);
  }
  std::vector<const Allocation*> already;
  for (AllocationId id : query.already)
    if (const Allocation* a = engine.allocation(id)) already.push_back(a);

  std::optional<std::vector<AllocationId>> best;
  double best_cost = 0;
  for (auto& [key, nodes] : groups) {
    Place place(engine, shape, std::move(nodes));
    if (!place.big_enough()) continue;
    std::vector<const Allocation*> set = already;
    std::vector<size_t> taken;  // indices into query.candidates
    std::vector<int64_t> spent(query.budgets.size(), 0);
    bool fits = place.Fits(set);
    for (size_t i = 0; i < query.candidates.size() && !fits; ++i) {
      const VictimCandidate& v = query.candidates[i];
      const Allocation* a = engine.allocation(v.id);
      if (!a || !place.Touches(*a)) continue;
      if (v.budget >= 0) {
        const auto b = static_cast<size_t>(v.budget);
        if (spent[b] + v.amount > query.budgets[b]) continue;
        spent[b] += v.amount;
      }
      set.push_back(a);
      taken.push_back(i);
      fits = place.Fits(set);
    }
    if (!fits) continue;
    // Drop victims the place turned out not to need, latest taken first.
    for (size_t k = taken.size(); k-- > 0;) {
      std::vector<const Allocation*> without = set;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(already.size() + k));
      if (place.Fits(without)) {
        set.swap(without);
        taken.erase(taken.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
    double cost = 0;
    for (size_t i : taken) cost += query.candidates[i].cost;
    if (!best || cost < best_cost || (cost == best_cost && taken.size() < best->size())) {
      best_cost = cost;
      best.emplace();
      for (size_t i : taken) best->push_back(query.candidates[i].id);
    }
    if (best->empty()) break;  // room already: nothing cheaper exists
  }
  return best;
}

void ExpectedGpuFree(const Engine& engine, std::vector<TimeMs>* out) {
  const Cluster& c = engine.cluster();
  out->assign(c.gpu_count(), engine.now());
  for (size_t g = 0; g < c.gpu_count(); ++g)
    if (const GpuSlot& s = engine.state().gpu(static_cast<GpuIndex>(g));
        s.reserved || s.foreign_milli > 0)  // held free on purpose, or outside work holds some
      (*out)[g] = kNever;
  for (const auto& [id, a] : engine.allocations())
    for (GpuIndex g : a.placement.gpus)
      (*out)[static_cast<size_t>(g)] = std::max((*out)[static_cast<size_t>(g)], a.expected_end);
}

TimeMs NodeFreesFor(const Engine& engine, const std::vector<TimeMs>& free, NodeIndex n, int k,
                    std::vector<TimeMs>* scratch) {
  const Cluster& c = engine.cluster();
  const GpuIndex first = c.first_gpu(n);
  std::vector<TimeMs>& times = *scratch;
  times.assign(free.begin() + first, free.begin() + first + c.node(n).gpu_count);
  std::nth_element(times.begin(), times.begin() + (k - 1), times.end());
  return times[static_cast<size_t>(k - 1)];
}

std::vector<GpuIndex> FirstToFree(const Engine& engine, const std::vector<TimeMs>& free,
                                  NodeIndex n, int k) {
  const Cluster& c = engine.cluster();
  const GpuIndex first = c.first_gpu(n);
  std::vector<GpuIndex> gpus;
  for (int i = 0; i < c.node(n).gpu_count; ++i) gpus.push_back(first + i);
  std::stable_sort(gpus.begin(), gpus.end(), [&](GpuIndex a, GpuIndex b) {
    return free[static_cast<size_t>(a)] < free[static_cast<size_t>(b)];
  });
  gpus.resize(static_cast<size_t>(k));
  return gpus;
}

}  // namespace airtime
