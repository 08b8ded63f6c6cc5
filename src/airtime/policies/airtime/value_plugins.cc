#include "airtime/policies/airtime/value_plugins.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "airtime/engine/engine.h"
#include "airtime/policies/plugins/victims.h"

namespace airtime {
namespace {

// Value per hour of one replica of `service` at full load.
double ReplicaValuePerHour(const WorkloadSpec& s) {
  return s.value.per_1k_requests * s.realtime.capacity_rps * 3.6;
}

std::string Money(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

bool HasCostOfDelay(const Job& job) {
  const WorkloadSpec& s = job.s();
  return !job.is_service() && s.deadline && s.value.decay_after_deadline != kNever &&
         s.value.on_completion > 0;
}

double UrgentDensity(const Job& job, const Engine& engine, DurationMs urgency) {
  const WorkloadSpec& s = job.s();
  if (urgency <= 0 || !HasCostOfDelay(job)) return job.value_density;
  double speed = s.shape.gpu_count == 0 ? 1.0 : 0.0;
  const std::vector<int>& per_type = engine.cluster().gpus_per_type();
  for (size_t t = 0; t < per_type.size() && s.shape.gpu_count > 0; ++t) {
    const auto type = static_cast<GpuTypeId>(t);
    if (per_type[t] > 0 && s.shape.AllowsType(type))
      speed = std::max(speed, s.SpeedOn(type, engine.catalog()));
  }
  if (speed <= 0) return job.value_density;
  const TimeMs end = EndIfStartedAt(job, engine.now(), speed);
  const double now = s.value.CompletionValue(end, s.deadline);
  const double later = s.value.CompletionValue(end + urgency, s.deadline);
  const double gpus =
      std::max(1e-3, static_cast<double>(s.shape.TotalMilli(engine.catalog())) / 1000.0);
  return job.value_density * now / s.value.on_completion +
         (now - later) / (gpus * ToHours(urgency));
}

double DeadlineRisk(const Allocation& a, const Engine& engine, double cost, DurationMs wait) {
  const WorkloadSpec& s = engine.job(a.workload).s();
  if (!s.deadline || a.expected_end == kNever || a.expected_end > *s.deadline) return 0;
  const double gpus = std::max(0.001, static_cast<double>(a.placement.total_milli()) / 1000.0);
  const TimeMs later = a.expected_end + FromSeconds(cost / gpus) + wait;
  return later > *s.deadline ? s.value.on_completion : 0;
}

std::string NoValueNote(const Job& job) {
  if (job.is_service() || job.s().value.on_completion > 0) return {};
  return "it declares no value, so work that does goes first wherever both could run (give it "
         "`value: {on_completion: V}` to rank it)";
}

double PriorityWeight(int priority, double doubling) {
  if (doubling <= 0) return 1.0;
  return std::exp2(std::clamp(static_cast<double>(priority) / doubling, -16.0, 16.0));
}

double WorkLeftHours(const Job& job) {
  if (job.is_service()) return 0;
  return std::max(0.0, job.s().work_seconds - job.work_saved) / 3600.0;
}

bool ValueOrder::KeyChanges(const Job& job) const { return HasCostOfDelay(job); }

QueueKey ValueOrder::Key(const Job& job, const Engine& engine) const {
  // Services first, each group densest first; then the least work left.
  return {job.is_service() ? 0.0 : 1.0,
          -UrgentDensity(job, engine, urgency_) * PriorityWeight(job.priority, doubling_),
          WorkLeftHours(job)};
}

double SpeedScore::Score(const Job& job, NodeIndex node, const Engine& engine) const {
  if (job.is_service() || job.s().shape.gpu_count == 0) return 0;
  const GpuTypeId type = engine.cluster().node(node).gpu_type;
  const SpeedRankView* rank = engine.cycle_state().Find<SpeedRankView>();
  return rank ? rank->RankSpeed(job, type, engine) : job.s().SpeedOn(type, engine.catalog());
}

double ServiceHomeScore::Score(const Job& job, NodeIndex node, const Engine& engine) const {
  if (job.is_service() || ReclaimableWithin(job, reclaim_budget_)) return 0;
  const HeadroomView* headroom = engine.cycle_state().Find<HeadroomView>();
  return headroom != nullptr && headroom->ServiceHome(node, engine) ? -1 : 0;
}

bool SloClaimFilter::Active(const Engine& engine) const {
  const HeadroomView* headroom = engine.cycle_state().Find<HeadroomView>();
  return headroom != nullptr && !headroom->SloClaims().empty();
}

bool SloClaimFilter::Allows(const Job& job, NodeIndex node, const Engine& engine) const {
  if (job.is_service()) return true;
  const HeadroomView* headroom = engine.cycle_state().Find<HeadroomView>();
  if (headroom == nullptr) return true;
  for (const HeadroomView::SloClaim& c : headroom->SloClaims())
    if (c.node == node && engine.state().node(node).free_whole - job.s().shape.gpu_count < c.gpus)
      return false;
  return true;
}

bool BurstHold::Permit(const Job& job, const Placement& placement, const Engine& engine) {
  why_.erase(job.id);
  if (job.is_service() || placement.gpus.empty() || Reclaimable(job)) return true;
  const HeadroomView* headroom = engine.cycle_state().Find<HeadroomView>();
  if (headroom == nullptr) return true;  // no forecast in the policy: nothing is held
  const GpuTypeId type = engine.cluster().gpu_type(placement.gpus.front());
  const double speed = job.s().SpeedOn(type, engine.catalog());
  const TimeMs end =
      engine.now() +
      FromSeconds(std::max(0.0, job.s().work_seconds - job.work_saved) / std::max(speed, 1e-6));
  // Short of the services' need on the type, or of a service's on the nodes it can use.
  const auto need = headroom->ForecastNeed(engine, end);
  auto it = need.find(type);
  int64_t needed = it == need.end() ? 0 : it->second;
  const int64_t free_after = engine.state().free_milli_of_type(type) - placement.total_milli();
  int64_t short_milli = std::clamp<int64_t>(needed - free_after, 0, placement.total_milli());
  const Job* only = nullptr;  // the service short on the nodes that alone can host it
  if (short_milli == 0) {
    const HeadroomView::Shortfall on_its_nodes = headroom->ShortOnItsNodes(engine, placement, end);
    if (on_its_nodes.service == nullptr) return true;
    only = on_its_nodes.service;
    needed = on_its_nodes.need;
    short_milli = on_its_nodes.missing;
  }
  // What failing the services for the rest of this job's run would cost, at the densest
  // service's value per GPU-hour, against what the job is worth.
  double service_density = 0;
  std::string who;
  for (WorkloadId id : engine.services()) {
    const Job& s = engine.job(id);
    if (s.phase == JobPhase::kCancelled || !s.s().shape.AllowsType(type)) continue;
    const double gpus = static_cast<double>(s.s().shape.TotalMilli(engine.catalog())) / 1000.0;
    const double d = ReplicaValuePerHour(s.s()) / std::max(gpus, 1e-3);
    if (d > service_density) {
      service_density = d;
      who = s.s().name;
    }
  }
  const double at_risk =
      static_cast<double>(short_milli) / 1000.0 * service_density * ToHours(end - engine.now());
  const double worth = job.s().value.CompletionValue(end, job.s().deadline);
  // SLOs first: value outbids a service's forecast peak only while the requests it would then
  // miss fit in the service's error budget.
  const Job* slo = worth > at_risk ? headroom->SloAtRisk(engine, type, short_milli, end) : nullptr;
  if (worth > at_risk && slo == nullptr) return true;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.1f GPU(s)", static_cast<double>(needed) / 1000.0);
  why_[job.id] =
      "held for the forecast peak of '" +
      (slo    ? slo->s().name
       : only ? only->s().name
              : who) +
      "': services are expected to need " + buf + " of " + engine.catalog().type(type).name +
      " before this would end at " + FormatTime(end) + "; " +
      (slo ? "without them '" + slo->s().name +
                 "' would miss more requests than its SLO's error budget allows, and "
           : "serving them is worth about " + Money(at_risk) + ", this work " + Money(worth) +
                 ", and ") +
      (reclaim_budget_ < 0 ? std::string("the policy does not preempt")
       : !job.s().preemptible
           ? std::string("it cannot be preempted")
           : "it takes " + FormatDuration(job.s().preempt_grace) + " to stop, longer than the " +
                 FormatDuration(reclaim_budget_) + " a replica is started ahead of its cold start");
  return false;
}

std::string BurstHold::WhyHeld(const Job& job, const Engine&) const {
  auto it = why_.find(job.id);
  return it == why_.end() ? std::string() : it->second;
}

DurationMs ValuePreempt::Payback(const WorkloadSpec& spec) {
  return std::max<DurationMs>(kMinute, 3 * spec.restart_cost + spec.checkpoint_interval);
}

const std::vector<ValuePreempt::Candidate>& ValuePreempt::Candidates(const Engine& engine) {
  const bool merged = !urgent_.empty();
  if (cached_cycle_ == engine.cycles()) return merged ? candidates_ : fixed_;
  cached_cycle_ = engine.cycles();
  // The order is that of a stable sort by density of the allocations in id order: by
  // (density, id).
  auto less = [](const Candidate& x, const Candidate& y) {
    return x.density < y.density || (x.density == y.density && x.id < y.id);
  };
  auto live = [&](AllocationId id) { return engine.allocation(id) != nullptr; };
  const auto& all = engine.allocations();
  // Stopped allocations never come back once a cycle is over (a preemption statement
  // restores its victims within the cycle): their entries go when they could be half.
  if (fixed_.size() > 2 * all.size() + 64)
    std::erase_if(fixed_, [&](const Candidate& c) { return !live(c.id); });
  std::erase_if(urgent_, [&](AllocationId id) { return !live(id); });
  // The allocations started since the last refresh.
  const size_t old = fixed_.size();
  for (auto it = all.upper_bound(seen_); it != all.end(); ++it) {
    const Job& v = engine.job(it->second.workload);
    seen_ = it->first;
    if (v.is_service() || !v.s().preemptible) continue;
    if (o_.urgency > 0 && HasCostOfDelay(v)) {
      urgent_.push_back(it->first);
    } else {
      fixed_.push_back({it->first, UrgentDensity(v, engine, o_.urgency)});
    }
  }
  if (fixed_.size() > old) {
    const auto mid = fixed_.begin() + static_cast<std::ptrdiff_t>(old);
    std::sort(mid, fixed_.end(), less);
    std::inplace_merge(fixed_.begin(), mid, fixed_.end(), less);
  }
  if (urgent_.empty()) return fixed_;
  // Densities that move with time: computed again, then merged with the fixed ones (whose
  // stopped entries go here, as the merged list is built anyway).
  std::vector<Candidate> moving;
  moving.reserve(urgent_.size());
  for (AllocationId id : urgent_)
    moving.push_back(
        {id, UrgentDensity(engine.job(engine.allocation(id)->workload), engine, o_.urgency)});
  std::sort(moving.begin(), moving.end(), less);
  std::erase_if(fixed_, [&](const Candidate& c) { return !live(c.id); });
  candidates_.clear();
  candidates_.reserve(fixed_.size() + moving.size());
  std::merge(fixed_.begin(), fixed_.end(), moving.begin(), moving.end(),
             std::back_inserter(candidates_), less);
  return candidates_;
}

bool ValuePreempt::MakeRoom(const Job& job, Engine& engine) {
  if (job.never_fits || job.s().shape.gpu_count == 0) return false;
  if (!quotas_) return ByValue(job, engine, -1);
  quotas_->SyncUsage(engine);
  if (Reclaim(job, engine)) return true;
  const double need = static_cast<double>(job.s().shape.TotalMilli(engine.catalog()));
  for (const auto& [pool, part] : quotas_->DemandSplit(job.s().shape, need))
    if (ByValue(job, engine, pool)) return true;
  return false;
}

bool ValuePreempt::Reclaim(const Job& job, Engine& engine) {
  KaiQueues& q = *quotas_;
  const int r = q.QueueOf(job);
  const auto& mine = q.entity(r);
  const double need = static_cast<double>(job.s().shape.TotalMilli(engine.catalog()));
  for (const auto& [pool, part] : q.DemandSplit(job.s().shape, need)) {
    const auto p = static_cast<size_t>(pool);
    if (mine.alloc[p] + need > mine.deserved[p] + 0.5) continue;  // over quota here: no claim
    // Victims: other tenants' preemptible work, only as much as each runs over its quota
    // (its borrowed part), cheapest loss first; the no-thrash rule still holds.
    VictimQuery query;
    std::map<int, int> budget_of;  // victim queue -> budget index
    for (const Candidate& cand : Candidates(engine)) {
      const Allocation* a = engine.allocation(cand.id);
      if (!a) continue;
      const Job& v = engine.job(a->workload);
      const int vq = q.QueueOf(v);
      const double amount = q.MilliInPool(*a, pool);
      if (vq == r || amount <= 0) continue;
      const double over = q.entity(vq).alloc[p] - q.entity(vq).deserved[p];
      if (over < amount - 0.5) continue;
      if (v.preemptions > 0 && engine.now() - a->started < Payback(v.s())) continue;
      auto [it, fresh] = budget_of.emplace(vq, static_cast<int>(query.budgets.size()));
      if (fresh) query.budgets.push_back(std::llround(over));
      query.candidates.push_back(
          {cand.id, PreemptionCost(engine, *a), it->second, std::llround(amount)});
    }
    if (query.candidates.empty()) continue;
    std::stable_sort(
        query.candidates.begin(), query.candidates.end(),
        [](const VictimCandidate& x, const VictimCandidate& y) { return x.cost < y.cost; });
    query.node_ok = [&](NodeIndex n) {
      return q.PoolOfNode(n) == pool && engine.NodePermitted(job, n);
    };
    auto victims = FindVictims(engine, job, query);
    if (!victims || victims->empty()) continue;
    for (AllocationId id : *victims) {
      const Job& v = engine.job(engine.allocation(id)->workload);
      engine.Preempt(id, "reclaimed for '" + job.s().name + "': tenant '" + job.s().tenant +
                             "' is within its quota, and tenant '" + v.s().tenant +
                             "' runs over its own (borrowed capacity is given back first; '" +
                             v.s().name + "' resumes from its last checkpoint)");
    }
    return true;
  }
  return false;
}

bool ValuePreempt::ByValue(const Job& job, Engine& engine, int pool) {
  const bool service = job.is_service();
  VictimQuery q;
  std::map<AllocationId, double> cost;
  std::map<int, int> budget_of;  // other tenants' queues -> budget index (with quotas)
  const int mine = quotas_ ? quotas_->QueueOf(job) : -1;
  double densest_victim = 0;
  const double density = UrgentDensity(job, engine, o_.urgency);
  for (const Candidate& cand : Candidates(engine)) {
    // Sparsest first: past the margin nobody further is a victim.
    if (!service && cand.density * o_.margin >= density) break;
    const Allocation* live = engine.allocation(cand.id);
    if (!live) continue;  // preempted earlier in this cycle
    const Allocation& a = *live;
    const AllocationId id = cand.id;
    const Job& v = engine.job(a.workload);
    if (v.id == job.id) continue;
    // No thrash: a workload already preempted runs its payback before it can be again.
    if (v.preemptions > 0 && engine.now() - a.started < Payback(v.s())) continue;
    const double lost = PreemptionCost(engine, a);
    const double c = lost / 3600.0 * cand.density + DeadlineRisk(a, engine, lost, o_.urgency);
    VictimCandidate vc{id, c, -1, 0};
    if (quotas_) {
      // With quotas, another tenant's work within its quota is never a victim: only its
      // over-quota (borrowed) part may be taken, whatever the value.
      const double amount = quotas_->MilliInPool(a, pool);
      if (amount <= 0) continue;
      const int vq = quotas_->QueueOf(v);
      if (vq != mine) {
        const auto p = static_cast<size_t>(pool);
        const double over = quotas_->entity(vq).alloc[p] - quotas_->entity(vq).deserved[p];
        if (over < amount - 0.5) continue;
        auto [it, fresh] = budget_of.emplace(vq, static_cast<int>(q.budgets.size()));
        if (fresh) q.budgets.push_back(std::llround(over));
        vc.budget = it->second;
        vc.amount = std::llround(amount);
      }
    }
    cost[id] = c;
    q.candidates.push_back(vc);
  }
  if (q.candidates.empty()) return false;
  std::stable_sort(
      q.candidates.begin(), q.candidates.end(),
      [](const VictimCandidate& x, const VictimCandidate& y) { return x.cost < y.cost; });
  // Only where the placement could then put it and the permits let it start (filters, the
  // gang reservation, FasterLater), within the pool with quotas.
  q.node_ok = [&](NodeIndex n) {
    return (!quotas_ || quotas_->PoolOfNode(n) == pool) && engine.NodePermitted(job, n);
  };
  auto victims = FindVictims(engine, job, q);
  if (!victims || victims->empty()) return false;
  double total = 0;
  for (AllocationId id : *victims) {
    total += cost[id];
    const Job& v = engine.job(engine.allocation(id)->workload);
    densest_victim = std::max(densest_victim, UrgentDensity(v, engine, o_.urgency));
  }
  const double gpus = static_cast<double>(job.s().shape.TotalMilli(engine.catalog())) / 1000.0;
  double gain;
  if (service) {
    gain = ReplicaValuePerHour(job.s()) * ToHours(o_.gain_horizon);
  } else {
    const double hours = std::min(ToHours(o_.gain_horizon), job.s().work_seconds / 3600.0);
    gain = (density - densest_victim) * gpus * hours;
  }
  // SLOs first: a replica that the service's current demand needs, while the service is
  // below its SLO target, takes GPUs back whatever the gain (the cheapest victims still).
  const HeadroomView* headroom = service ? engine.cycle_state().Find<HeadroomView>() : nullptr;
  const bool slo_first = headroom != nullptr &&
                         job.live_replicas() < job.s().realtime.ReplicasFor(job.demand_rps) &&
                         headroom->BelowSlo(job, engine);
  if (gain <= total && !slo_first) return false;
  for (AllocationId id : *victims) {
    const Job& v = engine.job(engine.allocation(id)->workload);
    engine.Preempt(id, "preempted for '" + job.s().name + "': " +
                           (gain > total ? "its value " + Money(gain) + " over the next " +
                                               FormatDuration(o_.gain_horizon) +
                                               " exceeds the work this throws away (" +
                                               Money(total) + " in all; '"
                                         : "it is below its SLO target and its demand needs "
                                           "this replica now (SLOs first; this throws away " +
                                               Money(total) + " in all; '") +
                           v.s().name + "' resumes from its last checkpoint)");
  }
  return true;
}

QueueKey QuotaValueOrder::Key(const Job& job, const Engine& engine) const {
  if (job.is_service()) return {0.0, -job.value_density};
  return {WithinQuota(*q_, job, engine) ? 1.0 : 2.0,
          -UrgentDensity(job, engine, urgency_) * PriorityWeight(job.priority, doubling_),
          WorkLeftHours(job)};
}

bool WithinQuota(KaiQueues& q, const Job& job, const Engine& engine) {
  const double need = static_cast<double>(job.s().shape.TotalMilli(engine.catalog()));
  const auto& e = q.entity(q.QueueOf(job));
  for (const auto& [pool, part] : q.DemandSplit(job.s().shape, need)) {
    const auto p = static_cast<size_t>(pool);
    if (e.alloc[p] + need <= e.deserved[p] + 0.5) return true;
  }
  return false;
}

bool QuotaFilter::Allows(const Job& job, NodeIndex node, const Engine& engine) const {
  q_->SyncUsage(engine);
  return q_->Admits(job, q_->PoolOfNode(node),
                    static_cast<double>(job.s().shape.TotalMilli(engine.catalog())));
}

int QuotaFilter::FitClass(const Job& job) const {
  return 2 * q_->QueueOf(job) + (job.s().preemptible && !job.is_service() ? 1 : 0);
}

}  // namespace airtime
