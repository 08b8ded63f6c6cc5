#include "airtime/policies/kai/kai.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "airtime/engine/engine.h"
#include "airtime/policies/plugins/common_plugins.h"
#include "airtime/policies/plugins/kai_queues.h"
#include "airtime/policies/plugins/victims.h"

namespace airtime {
namespace {

using Queues = std::shared_ptr<KaiQueues>;

bool Preemptible(const Job& job) { return job.s().preemptible && !job.is_service(); }

double Need(const Job& job, const Engine& engine) {
  return static_cast<double>(engine.fit_class_shape(job.fit_class).milli);
}

// Allocate's order: queue standing first (KaiQueues::OrderKey), then priority, then age.
class KaiOrder : public QueueSortPlugin {
 public:
  explicit KaiOrder(Queues q) : q_(std::move(q)) {}
  std::string_view name() const override { return "kai-queue-order"; }
  bool dynamic() const override { return true; }
  QueueKey Key(const Job& job, const Engine&) const override {
    const TimeMs t = job.is_service() ? job.queued_since : job.submitted;
    return {q_->OrderKey(job), -1e13 * job.priority + static_cast<double>(t)};
  }

 private:
  Queues q_;
};

// Limits, and deserved quotas for non-preemptible work, per node pool.
class KaiQuotaFilter : public FilterPlugin {
 public:
  explicit KaiQuotaFilter(Queues q) : q_(std::move(q)) {}
  std::string_view name() const override { return "kai-quota"; }
  bool Allows(const Job& job, NodeIndex node, const Engine& engine) const override {
    q_->SyncUsage(engine);
    return q_->Admits(job, q_->PoolOfNode(node), Need(job, engine));
  }
  int FitClass(const Job& job) const override {
    return 2 * q_->QueueOf(job) + (Preemptible(job) ? 1 : 0);
  }

 private:
  Queues q_;
};

class KaiCycle : public CyclePlugin {
 public:
  explicit KaiCycle(Queues q) : q_(std::move(q)) {}
  std::string_view name() const override { return "kai-fair-share"; }
  void BeforeAllocate(Engine& engine) override { q_->Refresh(engine); }

 private:
  Queues q_;
};

// Consolidate, reclaim and preempt, for a workload the allocate action could not place.
class KaiActions : public PreemptPlugin {
 public:
  explicit KaiActions(Queues q) : q_(std::move(q)) {}
  std::string_view name() const override { return "kai-consolidate-reclaim-preempt"; }
  void Forget(WorkloadId id) override { moved_.erase(id); }

  bool MakeRoom(const Job& job, Engine& engine) override {
    if (job.never_fits) return false;
    q_->SyncUsage(engine);
    // Nothing changed since the same kind of workload found no victims: none now either.
    const auto& allocs = engine.allocations();
    const std::tuple<uint64_t, int64_t, size_t, AllocationId> fp{
        q_->generation(), engine.state().allocated_milli(), allocs.size(),
        allocs.empty() ? kNoAllocation : allocs.rbegin()->first};
    if (fp != fp_) {
      fp_ = fp;
      failed_.clear();
    }
    const std::pair<int, int> kind{job.fit_class, job.priority};
    if (failed_.count(kind) || job.s().shape.gpu_count <= 0) return false;
    const double need = Need(job, engine);
    const auto pools = q_->DemandSplit(job.s().shape, need);
    for (int action = 0; action < 3; ++action) {
      for (const auto& [pool, part] : pools) {
        std::string why;
        std::optional<std::vector<AllocationId>> v;
        if (action == 0) v = Consolidate(job, engine, pool, need, &why);
        if (action == 1) v = Reclaim(job, engine, pool, need, &why);
        if (action == 2) v = PreemptInQueue(job, engine, pool, need, &why);
        if (!v || v->empty()) continue;
        for (AllocationId id : *v) engine.Preempt(id, why);
        return true;
      }
    }
    failed_.insert(kind);
    return false;
  }

 private:
  std::optional<std::vector<AllocationId>> Consolidate(const Job& job, Engine& engine, int pool,
                                                       double need, std::string* why) {
    const Shape& shape = job.s().shape;
    if (!q_->config().consolidate || shape.mode != ShareMode::kWhole ||
        shape.locality != Locality::kNode || !q_->Admits(job, pool, need))
      return std::nullopt;
    const Cluster& c = engine.cluster();
    std::vector<int> free(c.node_count(), 0);
    int free_in_pool = 0;
    for (size_t n = 0; n < c.node_count(); ++n) {
      const auto node = static_cast<NodeIndex>(n);
      if (!engine.state().node(node).up) continue;
      free[n] = engine.state().node(node).free_whole;
      if (q_->PoolOfNode(node) == pool && NodeCouldHost(engine, shape, node))
        free_in_pool += free[n];
    }
    if (free_in_pool < shape.gpu_count) return std::nullopt;  // short of GPUs, not fragmented
    VictimQuery query;
    for (const auto& [id, a] : engine.allocations()) {
      const Job& v = engine.job(a.workload);
      if (!Preemptible(v) || moved_.count(v.id) || a.placement.mode != ShareMode::kWhole ||
          a.placement.gpus.empty() || q_->MilliInPool(a, pool) <= 0)
        continue;
      const NodeIndex home = c.gpu(a.placement.gpus[0]).node;
      bool one_node = true;
      for (GpuIndex g : a.placement.gpus) one_node &= c.gpu(g).node == home;
      if (one_node) query.candidates.push_back({id, PreemptionCost(engine, a)});
    }
    std::stable_sort(query.candidates.begin(), query.candidates.end(),
                     [](const auto& x, const auto& y) { return x.cost < y.cost; });
    query.node_ok = [&](NodeIndex n) { return q_->PoolOfNode(n) == pool; };
    auto victims = FindVictims(engine, job, query);
    if (!victims || victims->empty()) return std::nullopt;
    // Every moved workload must fit in what stays free once the job has its GPUs.
    const Allocation* first = engine.allocation(victims->front());
    const auto target = static_cast<size_t>(c.gpu(first->placement.gpus[0]).node);
    std::vector<const Allocation*> moved;
    for (AllocationId id : *victims) {
      moved.push_back(engine.allocation(id));
      for (GpuIndex g : moved.back()->placement.gpus) ++free[static_cast<size_t>(c.gpu(g).node)];
    }
    free[target] -= shape.gpu_count;
    if (free[target] < 0) return std::nullopt;
    std::stable_sort(moved.begin(), moved.end(), [](const Allocation* x, const Allocation* y) {
      return x->placement.gpus.size() > y->placement.gpus.size();
    });
    for (const Allocation* a : moved) {
      const Shape& s = engine.job(a->workload).s().shape;
      bool placed = false;
      for (size_t n = 0; n < c.node_count() && !placed; ++n) {
        if (free[n] < s.gpu_count || !NodeCouldHost(engine, s, static_cast<NodeIndex>(n))) continue;
        free[n] -= s.gpu_count;
        placed = true;
      }
      if (!placed) return std::nullopt;
    }
    for (const Allocation* a : moved) moved_.insert(a->workload);
    *why = "kai consolidate: moved to another node so that '" + job.s().name + "' fits";
    return victims;
  }

  std::optional<std::vector<AllocationId>> Reclaim(const Job& job, Engine& engine, int pool,
                                                   double need, std::string* why) {
    if (!q_->Admits(job, pool, need)) return std::nullopt;
    const int r = q_->QueueOf(job);
    const auto p = static_cast<size_t>(pool);
    struct Cand {
      VictimCandidate c;
      double saturation;
      int priority;
    };
    std::vector<Cand> cands;
    std::map<int, int> budget_of;  // victim-side entity -> budget index
    VictimQuery query;
    const auto& rq = q_->entity(r);
    const DurationMs min_run = q_->config().reclaim_min_runtime;
    for (const auto& [id, a] : engine.allocations()) {
      const Job& vj = engine.job(a.workload);
      if (!Preemptible(vj) || engine.now() - a.started < min_run) continue;
      const int v = q_->QueueOf(vj);
      const double amount = q_->MilliInPool(a, pool);
      if (v == r || amount <= 0) continue;
      const auto [re, ve] = q_->Diverge(r, v);
      const auto& R = q_->entity(re);
      const auto& V = q_->entity(ve);
      double budget = 0;
      // Fair-share reclaim: for preemptible work, which may run over quota.
      if (Preemptible(job) && rq.alloc[p] + need <= rq.fair[p] + 0.5 &&
          R.alloc[p] + need <= R.fair[p] + 0.5)
        budget = std::max(budget, V.alloc[p] - V.fair[p]);
      // Quota reclaim: the reclaimer gets back to its deserved quota.
      if (rq.alloc[p] + need <= rq.deserved[p] + 0.5 && R.alloc[p] + need <= R.deserved[p] + 0.5)
        budget = std::max(budget, V.alloc[p] - V.deserved[p]);
      if (budget < amount - 0.5) continue;
      auto [it, fresh] = budget_of.emplace(ve, static_cast<int>(query.budgets.size()));
      if (fresh) query.budgets.push_back(std::llround(budget));
      cands.push_back({{id, PreemptionCost(engine, a), it->second, std::llround(amount)},
                       q_->Saturation(ve, pool),
                       vj.priority});
    }
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& x, const Cand& y) {
      if (x.saturation != y.saturation) return x.saturation > y.saturation;
      if (x.priority != y.priority) return x.priority < y.priority;
      return x.c.cost < y.c.cost;
    });
    for (const Cand& c : cands) query.candidates.push_back(c.c);
    query.node_ok = [&](NodeIndex n) { return q_->PoolOfNode(n) == pool; };
    auto victims = FindVictims(engine, job, query);
    *why = "kai reclaim: queue '" + rq.name + "' takes back GPUs over another queue's " +
           "fair share for '" + job.s().name + "'";
    return victims;
  }

  std::optional<std::vector<AllocationId>> PreemptInQueue(const Job& job, Engine& engine, int pool,
                                                          double need, std::string* why) {
    const int r = q_->QueueOf(job);
    const auto p = static_cast<size_t>(pool);
    VictimQuery query;
    std::vector<std::pair<int, VictimCandidate>> cands;
    const DurationMs min_run = q_->config().preempt_min_runtime;
    for (const auto& [id, a] : engine.allocations()) {
      const Job& vj = engine.job(a.workload);
      if (!Preemptible(vj) || q_->QueueOf(vj) != r || vj.priority >= job.priority ||
          q_->MilliInPool(a, pool) <= 0 || engine.now() - a.started < min_run)
        continue;
      cands.push_back({vj.priority, {id, PreemptionCost(engine, a)}});
    }
    std::stable_sort(cands.begin(), cands.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : x.second.cost < y.second.cost;
    });
    // Non-preemptible work over quota stays so whatever stops (only non-preemptible work
    // counts against it); over a limit, stop enough of the queue's own work first.
    double over = 0;
    for (int e = r; e >= 0; e = q_->entity(e).parent) {
      const auto& x = q_->entity(e);
      if (!Preemptible(job) && x.alloc_fixed[p] + need > x.deserved[p] + 0.5) return std::nullopt;
      over = std::max(over, x.alloc[p] + need - x.limit[p]);
    }
    size_t i = 0;
    for (double freed = 0; over > 0.5 && freed < over - 0.5; ++i) {
      if (i == cands.size()) return std::nullopt;
      query.already.push_back(cands[i].second.id);
      freed += q_->MilliInPool(*engine.allocation(cands[i].second.id), pool);
    }
    for (; i < cands.size(); ++i) query.candidates.push_back(cands[i].second);
    query.node_ok = [&](NodeIndex n) { return q_->PoolOfNode(n) == pool; };
    auto victims = FindVictims(engine, job, query);
    if (!victims) return std::nullopt;
    victims->insert(victims->begin(), query.already.begin(), query.already.end());
    *why = "kai preempt: '" + job.s().name + "' of priority " + std::to_string(job.priority) +
           " in queue '" + q_->entity(r).name + "' needs the GPUs";
    return victims;
  }

  Queues q_;
  std::set<WorkloadId> moved_;  // consolidation moves a workload at most once
  std::tuple<uint64_t, int64_t, size_t, AllocationId> fp_{0, -1, 0, kNoAllocation};
  std::set<std::pair<int, int>> failed_;  // (fit class, priority) with no victims at fp_
};

}  // namespace

void RegisterKai(PolicyRegistry& registry) {
  registry.Register(
      "kai",
      "KAI-Scheduler/Run:ai: queues with deserved quota, over-quota weight and limit; allocate, "
      "consolidate, reclaim, preempt",
      {"quota", "over_quota_weight", "limit", "departments", "consolidate", "preempt_min_runtime",
       "reclaim_min_runtime"},
      [](const Cluster& cluster, const PolicyParams& params) -> StatusOr<Policy> {
        auto config = ParseKaiConfig(params, cluster.catalog());
        if (!config.ok()) return config.status();
        auto q = std::make_shared<KaiQueues>(cluster, std::move(*config));
        Policy p;
        p.name = "kai";
        p.description = "KAI queues: deserved quota, fair share, reclaim and preempt";
        p.queue_sort = std::make_unique<KaiOrder>(q);
        p.filters.push_back(std::make_unique<KaiQuotaFilter>(q));
        p.scores.emplace_back(std::make_unique<BestFitScore>(), 1.0);
        p.preempt = std::make_unique<KaiActions>(q);
        p.cycle.push_back(std::make_unique<KaiCycle>(q));
        p.tenants = std::make_unique<KaiTenantReport>(q);
        return p;
      });
}

}  // namespace airtime
