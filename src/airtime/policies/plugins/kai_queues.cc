#include "airtime/policies/plugins/kai_queues.h"

#include <algorithm>
#include <limits>

#include "airtime/base/strings.h"

namespace airtime {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSlack = 0.5;  // milli-GPU: rounding slack in quota comparisons

// Entries of a list value, separated by ';' or ','.
std::vector<std::string_view> Entries(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] != ';' && s[i] != ',') continue;
    auto t = Trim(s.substr(start, i - start));
    if (!t.empty()) out.push_back(t);
    start = i + 1;
  }
  return out;
}

Status Bad(const std::string& key, std::string_view entry, const std::string& want) {
  return InvalidArgument("policy 'kai': " + key + " entry '" + std::string(entry) + "': " + want);
}

// Calls fn(name, value) for every NAME=VALUE entry of params[key].
template <typename Fn>
Status ForEachEntry(const PolicyParams& params, const std::string& key, Fn fn) {
  const std::string value = params.GetString(key, "");
  for (std::string_view entry : Entries(value)) {
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || Trim(entry.substr(0, eq)).empty())
      return Bad(key, entry, "expected NAME=VALUE");
    Status s = fn(std::string(Trim(entry.substr(0, eq))), Trim(entry.substr(eq + 1)), entry);
    if (!s.ok()) return s;
  }
  return Status();
}

StatusOr<KaiAmount> ParseAmount(const std::string& key, std::string_view entry,
                                std::string_view value, const GpuCatalog& catalog) {
  KaiAmount a;
  for (std::string_view term : Split(value, '+')) {
    term = Trim(term);
    const size_t star = term.find('*');
    auto n = ParseDouble(Trim(star == std::string_view::npos ? term : term.substr(star + 1)));
    if (!n || *n < 0)
      return Bad(key, entry, "expected GPUS or TYPE*GPUS terms joined by '+', e.g. H100*8+16");
    if (star == std::string_view::npos) {
      a.any += *n;
      continue;
    }
    auto t = catalog.Find(Trim(term.substr(0, star)));
    if (!t.ok()) return Bad(key, entry, t.status().message());
    a.typed[*t] += *n;
  }
  return a;
}

}  // namespace

StatusOr<KaiConfig> ParseKaiConfig(const PolicyParams& params, const GpuCatalog& catalog) {
  KaiConfig c;
  for (const char* key : {"quota", "limit"}) {
    auto& into = std::string(key) == "quota" ? c.quota : c.limit;
    Status s = ForEachEntry(params, key, [&](std::string name, std::string_view v, auto entry) {
      auto a = ParseAmount(key, entry, v, catalog);
      if (!a.ok()) return a.status();
      c.typed_pools |= !a->typed.empty();
      into[name] = *a;
      return Status();
    });
    if (!s.ok()) return s;
  }
  Status s = ForEachEntry(params, "over_quota_weight", [&](std::string name, auto v, auto entry) {
    auto w = ParseDouble(v);
    if (!w || *w < 0) return Bad("over_quota_weight", entry, "expected a weight >= 0");
    c.weight[name] = *w;
    return Status();
  });
  if (!s.ok()) return s;
  s = ForEachEntry(params, "departments", [&](std::string name, auto v, auto entry) {
    for (auto t : Split(v, '+')) {
      if (Trim(t).empty()) return Bad("departments", entry, "expected DEPT=tenant+tenant");
      for (const auto& [d, tenants] : c.departments)
        if (std::find(tenants.begin(), tenants.end(), Trim(t)) != tenants.end())
          return Bad("departments", entry, "tenant in two departments ('" + d + "')");
      c.departments[name].emplace_back(Trim(t));
    }
    return Status();
  });
  if (!s.ok()) return s;
  for (const char* key : {"preempt_min_runtime", "reclaim_min_runtime"}) {
    auto d = ParseDurationMs(params.GetString(key, "0"));
    if (!d || *d < 0)
      return InvalidArgument(std::string("policy 'kai': ") + key +
                             " must be a duration (90s, 15m, 2h)");
    (std::string(key) == "preempt_min_runtime" ? c.preempt_min_runtime : c.reclaim_min_runtime) =
        *d;
  }
  const std::string cons = ToLower(params.GetString("consolidate", "true"));
  if (cons != "true" && cons != "false")
    return InvalidArgument("policy 'kai': consolidate must be true or false");
  c.consolidate = cons == "true";
  return c;
}

KaiQueues::KaiQueues(const Cluster& cluster, KaiConfig config)
    : cluster_(&cluster), config_(std::move(config)) {
  if (config_.typed_pools) {
    for (int g : cluster.gpus_per_type()) capacity_.push_back(1000.0 * g);
  } else {
    capacity_.push_back(1000.0 * static_cast<double>(cluster.gpu_count()));
  }
  for (const auto& [d, tenants] : config_.departments) EntityOf(d, false);
}

int KaiQueues::PoolOfNode(NodeIndex n) const {
  return config_.typed_pools ? static_cast<int>(cluster_->node(n).gpu_type) : 0;
}

int KaiQueues::EntityOf(const std::string& name, bool is_queue) {
  const std::string key = (is_queue ? "q:" : "d:") + name;
  auto it = by_name_.find(key);
  if (it != by_name_.end()) return it->second;
  Entity e;
  e.name = name;
  e.is_queue = is_queue;
  if (auto w = config_.weight.find(name); w != config_.weight.end()) e.weight = w->second;
  const size_t pools = capacity_.size();
  e.deserved.assign(pools, 0);
  e.limit.assign(pools, kInf);
  e.fair = e.alloc = e.alloc_fixed = e.request = e.deserved;
  if (is_queue) {
    for (const auto& [d, tenants] : config_.departments)
      if (std::find(tenants.begin(), tenants.end(), name) != tenants.end())
        e.parent = EntityOf(d, false);
  }
  entities_.push_back(std::move(e));
  const int id = static_cast<int>(entities_.size()) - 1;
  by_name_.emplace(key, id);
  return id;
}

int KaiQueues::QueueOf(const Job& job) {
  const auto id = static_cast<size_t>(job.id);
  if (queue_of_job_.size() <= id) queue_of_job_.resize(id + 1, -1);
  int& q = queue_of_job_[id];
  if (q < 0) {
    q = EntityOf(job.s().tenant, true);
    for (int e = q; e >= 0; e = entities_[static_cast<size_t>(e)].parent)
      entities_[static_cast<size_t>(e)].active = true;
  }
  return q;
}

std::vector<double> KaiQueues::Resolve(const KaiAmount& a) const {
  std::vector<double> v(capacity_.size(), 0);
  if (!config_.typed_pools) {
    v[0] = 1000 * a.any;
    for (const auto& [t, n] : a.typed) v[0] += 1000 * n;
    return v;
  }
  double total = 0;
  for (double c : capacity_) total += c;
  for (size_t p = 0; p < v.size(); ++p) {
    if (total > 0) v[p] = 1000 * a.any * capacity_[p] / total;
    if (auto it = a.typed.find(static_cast<GpuTypeId>(p)); it != a.typed.end())
      v[p] += 1000 * it->second;
  }
  return v;
}

void KaiQueues::ComputeDeserved() {
  // Levels: the top (parent -1), then each department's queues.
  std::map<int, std::vector<int>> levels;
  for (size_t e = 0; e < entities_.size(); ++e)
    levels[entities_[e].parent].push_back(static_cast<int>(e));
  for (auto& [parent, members] : levels) {  // parent -1 first: departments are set before
    std::vector<double> left =
        parent < 0 ? capacity_ : entities_[static_cast<size_t>(parent)].deserved;
    int unconfigured = 0;
    for (int m : members) {
      Entity& e = entities_[static_cast<size_t>(m)];
      if (auto l = config_.limit.find(e.name); l != config_.limit.end())
        e.limit = Resolve(l->second);
      if (auto q = config_.quota.find(e.name); q != config_.quota.end()) {
        e.deserved = Resolve(q->second);
        for (size_t p = 0; p < left.size(); ++p) left[p] -= e.deserved[p];
      } else if (e.active) {
        ++unconfigured;
      }
    }
    for (int m : members) {
      Entity& e = entities_[static_cast<size_t>(m)];
      if (config_.quota.count(e.name)) continue;
      for (size_t p = 0; p < left.size(); ++p)
        e.deserved[p] = e.active && unconfigured > 0 ? std::max(0.0, left[p]) / unconfigured : 0;
    }
  }
}

void KaiQueues::WaterFill(const std::vector<int>& members, int pool, double amount) {
  const auto p = static_cast<size_t>(pool);
  auto want = [&](const Entity& e) { return std::min(e.request[p], e.limit[p]); };
  double sum = 0;
  for (int m : members) {
    Entity& e = entities_[static_cast<size_t>(m)];
    e.fair[p] = std::min(e.deserved[p], want(e));
    sum += e.fair[p];
  }
  if (sum > amount) {  // quotas oversubscribe what there is: scale them down alike
    for (int m : members) entities_[static_cast<size_t>(m)].fair[p] *= sum > 0 ? amount / sum : 0;
    return;
  }
  double rest = amount - sum;
  for (size_t round = 0; round <= members.size() && rest > kSlack; ++round) {
    double weights = 0;
    for (int m : members) {
      const Entity& e = entities_[static_cast<size_t>(m)];
      if (e.weight > 0 && e.fair[p] < want(e) - kSlack) weights += e.weight;
    }
    if (weights <= 0) break;
    double given = 0;
    for (int m : members) {
      Entity& e = entities_[static_cast<size_t>(m)];
      if (e.weight <= 0 || e.fair[p] >= want(e) - kSlack) continue;
      const double give = std::min(rest * e.weight / weights, want(e) - e.fair[p]);
      e.fair[p] += give;
      given += give;
    }
    rest -= given;
  }
}

double KaiQueues::Demand(const Job& job, const Engine& engine) const {
  if (job.never_fits) return 0;
  const double one = static_cast<double>(engine.fit_class_shape(job.fit_class).milli);
  if (!job.is_service()) return one;
  return one * std::max(0, job.target_replicas - job.live_replicas());
}

std::vector<std::pair<int, double>> KaiQueues::DemandSplit(const Shape& shape, double milli) const {
  std::vector<std::pair<int, double>> out;
  ForEachDemandPart([&](GpuTypeId t) { return shape.AllowsType(t); }, milli,
                    [&](int p, double part) { out.emplace_back(p, part); });
  return out;
}

void KaiQueues::SyncUsage(const Engine& engine) {
  const auto& allocs = engine.allocations();
  const AllocationId last = allocs.empty() ? kNoAllocation : allocs.rbegin()->first;
  if (fp_milli_ == engine.state().allocated_milli() && fp_count_ == allocs.size() &&
      fp_last_ == last)
    return;
  fp_milli_ = engine.state().allocated_milli();
  fp_count_ = allocs.size();
  fp_last_ = last;
  for (Entity& e : entities_) {
    std::fill(e.alloc.begin(), e.alloc.end(), 0.0);
    std::fill(e.alloc_fixed.begin(), e.alloc_fixed.end(), 0.0);
  }
  for (const auto& [id, a] : allocs) {
    const Job& job = engine.job(a.workload);
    const int q = QueueOf(job);
    const bool fixed = !job.s().preemptible || job.is_service();
    for (GpuIndex g : a.placement.gpus) {
      const auto p = static_cast<size_t>(PoolOfNode(cluster_->gpu(g).node));
      for (int e = q; e >= 0; e = entities_[static_cast<size_t>(e)].parent) {
        entities_[static_cast<size_t>(e)].alloc[p] += a.placement.milli;
        if (fixed) entities_[static_cast<size_t>(e)].alloc_fixed[p] += a.placement.milli;
      }
    }
  }
}

void KaiQueues::Refresh(const Engine& engine) {
  ++generation_;
  for (; seen_jobs_ < engine.job_count(); ++seen_jobs_)
    QueueOf(engine.job(static_cast<WorkloadId>(seen_jobs_)));
  ComputeDeserved();
  fp_milli_ = -1;
  SyncUsage(engine);
  for (Entity& e : entities_) e.request = e.alloc;
  std::map<int, std::vector<const Job*>> pending;  // by queue
  for (WorkloadId id : engine.queue()) {
    const Job& job = engine.job(id);
    const int q = QueueOf(job);
    pending[q].push_back(&job);
    const std::vector<GpuTypeId>& types = engine.fit_class_shape(job.fit_class).types;
    const auto allows = [&](GpuTypeId t) {
      return std::binary_search(types.begin(), types.end(), t);
    };
    ForEachDemandPart(allows, Demand(job, engine), [&](int p, double part) {
      for (int e = q; e >= 0; e = entities_[static_cast<size_t>(e)].parent)
        entities_[static_cast<size_t>(e)].request[static_cast<size_t>(p)] += part;
    });
  }
  for (int p = 0; p < pool_count(); ++p) {
    std::map<int, std::vector<int>> levels;
    for (size_t e = 0; e < entities_.size(); ++e)
      if (entities_[e].active) levels[entities_[e].parent].push_back(static_cast<int>(e));
    for (const auto& [parent, members] : levels)
      WaterFill(members, p,
                parent < 0 ? capacity_[static_cast<size_t>(p)]
                           : entities_[static_cast<size_t>(parent)].fair[static_cast<size_t>(p)]);
  }
  // Order keys: each queue's waiting work in its own order (priority, then age), keyed by
  // where the queue would stand once everything ahead of it in the queue were allocated.
  if (order_key_.size() < engine.job_count()) {
    order_key_.resize(engine.job_count());
    order_key_at_.resize(engine.job_count(), 0);
  }
  for (auto& [q, jobs] : pending) {
    std::stable_sort(jobs.begin(), jobs.end(), [](const Job* a, const Job* b) {
      if (a->priority != b->priority) return a->priority > b->priority;
      return a->seq < b->seq;
    });
    double cum = 0;
    for (double a : entities_[static_cast<size_t>(q)].alloc) cum += a;
    for (const Job* j : jobs) {
      cum += Demand(*j, engine);
      double deserved = 0, cap = 0;
      const Entity& e = entities_[static_cast<size_t>(q)];
      for (size_t p = 0; p < capacity_.size(); ++p) {
        deserved += e.deserved[p];
        cap += capacity_[p];
      }
      double key = 0;
      if (deserved > 0 && cum <= deserved + kSlack) {
        key = cum / deserved;
      } else {
        const double over = (cum - deserved) / std::max(cap, 1.0);
        key = e.weight > 0 ? 1 + over / e.weight : 1e6 + over;
      }
      order_key_[static_cast<size_t>(j->id)] = key;
      order_key_at_[static_cast<size_t>(j->id)] = generation_;
    }
  }
}

bool KaiQueues::Admits(const Job& job, int pool, double need) {
  const auto p = static_cast<size_t>(pool);
  const bool over_quota_ok = job.s().preemptible && !job.is_service();
  for (int e = QueueOf(job); e >= 0; e = entities_[static_cast<size_t>(e)].parent) {
    const Entity& x = entities_[static_cast<size_t>(e)];
    if (x.alloc[p] + need > x.limit[p] + kSlack) return false;
    if (!over_quota_ok && x.alloc_fixed[p] + need > x.deserved[p] + kSlack) return false;
  }
  return true;
}

std::pair<int, int> KaiQueues::Diverge(int a, int b) const {
  const int pa = entities_[static_cast<size_t>(a)].parent;
  const int pb = entities_[static_cast<size_t>(b)].parent;
  if (pa == pb) return {a, b};
  return {pa >= 0 ? pa : a, pb >= 0 ? pb : b};
}

double KaiQueues::Saturation(int e, int pool) const {
  const Entity& x = entities_[static_cast<size_t>(e)];
  const auto p = static_cast<size_t>(pool);
  if (x.fair[p] > 0) return x.alloc[p] / x.fair[p];
  return x.alloc[p] > 0 ? 1e9 : 0;
}

double KaiQueues::OrderKey(const Job& job) const {
  const auto id = static_cast<size_t>(job.id);
  if (id >= order_key_at_.size() || order_key_at_[id] != generation_)
    return 1e12;  // joined mid-cycle: after the rest
  return order_key_[id];
}

double KaiQueues::MilliInPool(const Allocation& a, int pool) const {
  double m = 0;
  for (GpuIndex g : a.placement.gpus)
    if (PoolOfNode(cluster_->gpu(g).node) == pool) m += a.placement.milli;
  return m;
}

std::vector<TenantStanding> KaiQueues::Standings(const Engine& engine) const {
  const size_t pools = capacity_.size();
  std::map<std::string, std::vector<double>> alloc;  // by tenant, per pool (milli-GPU)
  for (const Entity& e : entities_)
    if (e.is_queue) alloc[e.name].assign(pools, 0.0);
  for (const auto& [id, a] : engine.allocations()) {
    // Every allocation's tenant has a queue: the cycle that placed it refreshed the queues.
    auto it = alloc.find(engine.job(a.workload).s().tenant);
    if (it == alloc.end()) continue;
    for (GpuIndex g : a.placement.gpus)
      it->second[static_cast<size_t>(PoolOfNode(cluster_->gpu(g).node))] += a.placement.milli;
  }
  std::vector<TenantStanding> out;
  for (const Entity& e : entities_) {
    if (!e.is_queue) continue;
    const std::vector<double>& held = alloc.at(e.name);
    TenantStanding t;
    t.tenant = e.name;
    for (size_t p = 0; p < pools; ++p) {
      t.deserved += e.deserved[p] / 1000.0;
      t.fair_share += e.fair[p] / 1000.0;
      t.allocated += held[p] / 1000.0;
      t.borrowed += std::max(0.0, held[p] - e.deserved[p]) / 1000.0;
    }
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(),
            [](const TenantStanding& a, const TenantStanding& b) { return a.tenant < b.tenant; });
  return out;
}

}  // namespace airtime
