// KaiQueues: the queue tree of the kai policy -- deserved quotas, over-quota weights, limits,
// usage and fair shares -- recomputed at the start of every decision cycle.
//
// One queue per tenant, created when the tenant's first workload arrives; a queue sits under
// a department when the `departments` parameter names it there, else at the top. Quotas are
// counted in milli-GPUs per node pool: one pool (the whole cluster) when every quota is a
// plain GPU count, one pool per GPU type as soon as any quota or limit names a type (as
// KAI's node pools, each with its own quotas); a plain count then spreads over the pools in
// proportion to their capacity. An entity without a configured quota gets an equal part of
// what its parent's configured children leave (at the top: the installed GPUs), among the
// active entities of its level; without weight, weight 1; without limit, no limit.
//
// Fair share, per pool and level, as KAI's proportion plug-in: every entity first gets
// min(deserved, requested); what remains goes to entities still requesting in proportion to
// their over-quota weight, repeatedly, capped by request and limit. A department's fair share
// is then divided among its queues the same way. Requested = allocated + waiting demand (a
// waiting workload that may use several pools counts in each in proportion to capacity).
//
// Owned by one policy instance; its plug-ins share it. Not thread-safe (like the engine).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/engine/engine.h"
#include "airtime/policies/registry.h"

namespace airtime {

// A quota or limit: GPUs of any type plus GPUs of named types.
struct KaiAmount {
  double any = 0;
  std::map<GpuTypeId, double> typed;
};

struct KaiConfig {
  std::map<std::string, KaiAmount> quota, limit;                // by queue or department name
  std::map<std::string, double> weight;                         // over-quota weight
  std::map<std::string, std::vector<std::string>> departments;  // department -> tenants
  bool consolidate = true;
  DurationMs preempt_min_runtime = 0;  // a victim of preempt must have run this long
  DurationMs reclaim_min_runtime = 0;  // a victim of reclaim must have run this long
  bool typed_pools = false;            // some amount names a GPU type: one pool per type
};

// Reads quota, limit, over_quota_weight, departments, consolidate and the min runtimes
// (see kai/kai.h).
StatusOr<KaiConfig> ParseKaiConfig(const PolicyParams& params, const GpuCatalog& catalog);

class KaiQueues {
 public:
  struct Entity {
    std::string name;
    int parent = -1;        // department entity, or -1 at the top
    bool is_queue = false;  // false: a department
    bool active = false;    // has seen a workload (departments: through a queue)
    double weight = 1;
    std::vector<double> deserved, limit, fair;  // per pool, milli-GPU
    std::vector<double> alloc, request;         // per pool, milli-GPU
    std::vector<double> alloc_fixed;            // per pool: held by non-preemptible work
  };

  KaiQueues(const Cluster& cluster, KaiConfig config);

  const KaiConfig& config() const { return config_; }
  int pool_count() const { return static_cast<int>(capacity_.size()); }
  int PoolOfNode(NodeIndex n) const;
  double capacity(int pool) const { return capacity_[static_cast<size_t>(pool)]; }
  const Entity& entity(int e) const { return entities_[static_cast<size_t>(e)]; }
  size_t entity_count() const { return entities_.size(); }

  // The queue entity of a workload's tenant (created on first sight).
  int QueueOf(const Job& job);
  // Recomputes deserved quotas, requests, fair shares and queue-order keys (a new cycle).
  void Refresh(const Engine& engine);
  // Counts Refresh calls: fair shares may have changed when it moved.
  uint64_t generation() const { return generation_; }
  // Brings allocated amounts up to date when the engine's allocations changed.
  void SyncUsage(const Engine& engine);
  // Whether `job` may take `need` milli-GPU more in `pool`: within every limit on its path,
  // and, when it is not preemptible, with the non-preemptible work on its path within the
  // deserved quota (KAI: only preemptible work runs over quota).
  bool Admits(const Job& job, int pool, double need);
  // The two entities just below the lowest common ancestor of queues a and b.
  std::pair<int, int> Diverge(int a, int b) const;
  // allocated / fair share (large when the fair share is zero).
  double Saturation(int e, int pool) const;
  // Queue-order key (see KaiOrder in kai/kai.cc): lower goes first.
  double OrderKey(const Job& job) const;
  // The milli-GPU that `a` holds in `pool`.
  double MilliInPool(const Allocation& a, int pool) const;
  // Pools a shape could use, and the capacity-weighted split of its demand over them.
  std::vector<std::pair<int, double>> DemandSplit(const Shape& shape, double milli) const;
  // The same, handed to f(pool, part) one by one (no allocation: the queue walk uses it),
  // for a shape that allows(type) says which types it may use.
  template <typename Allows, typename F>
  void ForEachDemandPart(Allows&& allows, double milli, F&& f) const;
  // Each tenant's queue: deserved quota and fair share as of the last Refresh, allocation
  // and borrowing (allocation over the deserved quota, pool by pool) as `engine` stands now.
  std::vector<TenantStanding> Standings(const Engine& engine) const;

 private:
  int EntityOf(const std::string& name, bool is_queue);
  std::vector<double> Resolve(const KaiAmount& a) const;
  void ComputeDeserved();
  void WaterFill(const std::vector<int>& members, int pool, double amount);
  double Demand(const Job& job, const Engine& engine) const;

  const Cluster* cluster_;
  KaiConfig config_;
  std::vector<double> capacity_;  // per pool, milli-GPU installed
  std::vector<Entity> entities_;
  std::unordered_map<std::string, int> by_name_;
  std::vector<int> queue_of_job_;  // by workload id; -1 not yet seen
  size_t seen_jobs_ = 0;
  uint64_t generation_ = 0;
  // By workload id: the order key Refresh gave it, valid where order_key_at_ is generation_.
  std::vector<double> order_key_;
  std::vector<uint64_t> order_key_at_;
  // Usage fingerprint: allocated milli, allocation count, newest allocation id.
  int64_t fp_milli_ = -1;
  size_t fp_count_ = 0;
  AllocationId fp_last_ = kNoAllocation;
};

// The queues' standings for the daemon's /metrics (Policy::tenants), for the policies that
// keep KaiQueues (kai, and airtime with quotas).
class KaiTenantReport : public TenantReportPlugin {
 public:
  explicit KaiTenantReport(std::shared_ptr<const KaiQueues> q) : q_(std::move(q)) {}
  std::vector<TenantStanding> Standings(const Engine& engine) const override {
    return q_->Standings(engine);
  }

 private:
  std::shared_ptr<const KaiQueues> q_;
};

template <typename Allows, typename F>
void KaiQueues::ForEachDemandPart(Allows&& allows, double milli, F&& f) const {
  if (!config_.typed_pools) {
    f(0, milli);
    return;
  }
  double total = 0;
  for (size_t p = 0; p < capacity_.size(); ++p)
    if (capacity_[p] > 0 && allows(static_cast<GpuTypeId>(p))) total += capacity_[p];
  for (size_t p = 0; p < capacity_.size(); ++p)
    if (capacity_[p] > 0 && allows(static_cast<GpuTypeId>(p)))
      f(static_cast<int>(p), milli * capacity_[p] / total);
}

}  // namespace airtime
