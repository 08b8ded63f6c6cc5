// The plug-ins of the `airtime` policy that are about value: queue order by value density,
// GPU speed in placement, the hold-or-hand-off decision for forecast bursts, and preemption
// only where the gain pays for what it throws away.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "airtime/engine/plugins.h"
#include "airtime/policies/airtime/cycle_views.h"
#include "airtime/policies/plugins/kai_queues.h"

namespace airtime {

// Whether finishing later can lose `job` value: a deadline after which its value decays.
bool HasCostOfDelay(const Job& job);

// What one GPU-hour given to `job` now is worth: its value density, plus, for work whose
// value decays after a deadline, the cost of delay. With `urgency` > 0 that is the value
// the job would lose if it started `urgency` later instead of now (on the fastest GPU type
// it may use), per GPU-hour of that wait; and its density counts only what finishing now
// would still earn. Work without a decaying deadline keeps its density: waiting costs it
// nothing. So a batch job nearing its deadline goes ahead of denser work that can wait,
// and work already past all value goes last.
double UrgentDensity(const Job& job, const Engine& engine, DurationMs urgency);

// What stopping running allocation `a` risks beyond its lost work: its whole completion
// value when it is on time now (its expected end meets its deadline) and would not be after
// a stop, counting the lost work and restart cost (`cost`, PreemptionCost's GPU-seconds)
// and `wait` before it runs again; else 0. A victim with a deadline is thus taken only when
// nothing without that risk makes room.
double DeadlineRisk(const Allocation& a, const Engine& engine, double cost, DurationMs wait);

// The explanation's note for a finite job that declares no value: under a value order, work
// that declares one goes first wherever both could run; it says so and how to change it (""
// for every other workload).
std::string NoValueNote(const Job& job);

// How a workload's priority weighs in the queue order: its value density is multiplied by
// 2^(priority / `doubling`) (the exponent held within +-16), so `doubling` priority points
// double its rank's density; 1 for `doubling` <= 0 (priority ignored). Priority orders the
// queue only: the value counted, and what preemption may take, stay the value itself.
double PriorityWeight(int priority, double doubling);

// Hours of work `job` has left at reference speed (0 for a service): its work less what it
// kept across stops.
double WorkLeftHours(const Job& job);

// Realtime replicas first; then value per GPU-hour (UrgentDensity) times the priority's
// weight (PriorityWeight), highest first; among equal ranks the least work left first
// (WorkLeftHours), then arrival. Work of one value rate earns the same per GPU-hour in any
// order, but value comes on completion: the shortest first brings it soonest and lowers
// the mean time to finish, and a job resumed after a preemption keeps its place among
// equals by what it has left, not behind everything that queued meanwhile. Dynamic while
// `urgency` > 0: a deadline's cost of delay grows as it nears.
class ValueOrder : public QueueSortPlugin {
 public:
  explicit ValueOrder(DurationMs urgency = kHour, double priority_doubling = 0)
      : urgency_(urgency), doubling_(priority_doubling) {}
  std::string_view name() const override { return "value-density"; }
  bool dynamic() const override { return urgency_ > 0; }
  bool KeyChanges(const Job& job) const override;
  QueueKey Key(const Job& job, const Engine& engine) const override;
  std::string Note(const Job& job) const override { return NoValueNote(job); }

 private:
  DurationMs urgency_;
  double doubling_;
};

// Tenant quotas (the `quota` and `limit` parameters, read as `kai` reads them: KaiQueues
// keeps each tenant's deserved quota per GPU pool and what it holds). A tenant's work runs
// over its quota only on capacity others leave idle (borrowing), and only when preemptible:
// non-preemptible work and services stay within the quota, so that the owner can always
// get its quota back by preemption.

// Whether `job` would stay within its tenant's deserved quota in some pool it may use.
bool WithinQuota(KaiQueues& q, const Job& job, const Engine& engine);

// ValueOrder with quotas: realtime replicas first, then work within its tenant's quota,
// then borrowing work; value density times the priority's weight within each. Dynamic:
// usage changes every cycle.
class QuotaValueOrder : public QueueSortPlugin {
 public:
  QuotaValueOrder(std::shared_ptr<KaiQueues> q, DurationMs urgency = kHour,
                  double priority_doubling = 0)
      : q_(std::move(q)), urgency_(urgency), doubling_(priority_doubling) {}
  std::string_view name() const override { return "value-density-within-quota"; }
  bool dynamic() const override { return true; }
  QueueKey Key(const Job& job, const Engine& engine) const override;
  std::string Note(const Job& job) const override { return NoValueNote(job); }

 private:
  std::shared_ptr<KaiQueues> q_;
  DurationMs urgency_;
  double doubling_;
};

// Limits, and the deserved quota for non-preemptible work (KaiQueues::Admits).
class QuotaFilter : public FilterPlugin {
 public:
  explicit QuotaFilter(std::shared_ptr<KaiQueues> q) : q_(std::move(q)) {}
  std::string_view name() const override { return "tenant-quota"; }
  bool Allows(const Job& job, NodeIndex node, const Engine& engine) const override;
  int FitClass(const Job& job) const override;

 private:
  std::shared_ptr<KaiQueues> q_;
};

// Prefers the GPU type on which the job runs fastest (its per-type speed), so that work
// ends sooner and earns sooner; indifferent for services. Where the policy trades types
// (a SpeedRankView in the cycle's state, TypeTrade), a job traded off its fastest type this
// cycle ranks that type below every other (TypeTrade::RankSpeed).
class SpeedScore : public ScorePlugin {
 public:
  std::string_view name() const override { return "speed"; }
  double Score(const Job& job, NodeIndex node, const Engine& engine) const override;
};

// Whether `job` can give GPUs back within `reclaim_budget` (< 0: nothing is reclaimed):
// preemptible work whose grace period (`preempt_grace`, the time it takes to stop) fits.
inline bool ReclaimableWithin(const Job& job, DurationMs reclaim_budget) {
  return reclaim_budget >= 0 && job.s().preemptible && job.s().preempt_grace <= reclaim_budget;
}

// Work that could not give GPUs back in time keeps off the nodes that are the only home of a
// service (HeadroomView::ServiceHome: a MIG service's MIG-enabled nodes) while other nodes
// take it: BurstHold counts a service's headroom on those nodes alone, and would otherwise
// hold the work back for a place it need not have taken. -1 on such a node, 0 elsewhere.
class ServiceHomeScore : public ScorePlugin {
 public:
  explicit ServiceHomeScore(DurationMs reclaim_budget) : reclaim_budget_(reclaim_budget) {}
  std::string_view name() const override { return "service-home"; }
  double Score(const Job& job, NodeIndex node, const Engine& engine) const override;

 private:
  DurationMs reclaim_budget_;
};

// SLOs first, where a replica needs several GPUs of one node: while a service's SLO buffer
// asks for a replica that the free GPUs cannot take (HeadroomView::SloClaims), work other
// than services keeps off the claimed node unless the replica's GPUs stay free there beside
// it. Without it each GPU that frees on the node goes to small waiting work, one at a time,
// and the replica waits for a cold start until demand has already outgrown the service.
class SloClaimFilter : public FilterPlugin {
 public:
  std::string_view name() const override { return "slo-claim"; }
  bool Allows(const Job& job, NodeIndex node, const Engine& engine) const override;
  bool Active(const Engine& engine) const override;
  int FitClass(const Job& job) const override { return job.is_service() ? 1 : 0; }
};

// The 3 a.m. decision. Work that could not give GPUs back in time may not take capacity
// that services are forecast to need before it would end (of its GPU type, or of the nodes
// that alone can host a service), unless its value exceeds the value of the requests the
// services would then fail and those requests fit in the service's error budget (SLOs
// first). Capacity held for a forecast is loaned to
// work that can be reclaimed within the services' budget: preemptible work whose grace
// period (`preempt_grace`, the time it takes to stop) fits within `reclaim_budget` (the
// `lead` a replica is started ahead of its cold start), while the policy preempts at all.
class BurstHold : public PermitPlugin {
 public:
  // `reclaim_budget` < 0: nothing is reclaimed (preemption=off), so nothing borrows.
  explicit BurstHold(DurationMs reclaim_budget) : reclaim_budget_(reclaim_budget) {}
  std::string_view name() const override { return "burst-hold"; }
  bool Permit(const Job& job, const Placement& placement, const Engine& engine) override;
  std::string WhyHeld(const Job& job, const Engine& engine) const override;
  // A job held and then cancelled is never asked about again: its note goes here.
  void Forget(WorkloadId id) override { why_.erase(id); }

 private:
  // Whether `job` can give GPUs back within the reclaim budget.
  bool Reclaimable(const Job& job) const { return ReclaimableWithin(job, reclaim_budget_); }

  DurationMs reclaim_budget_;
  std::map<WorkloadId, std::string> why_;
};

// Preempts only when the gain exceeds the cost: the victims' work lost since their last
// checkpoint plus their restart cost, valued at their value density, against the waiting
// workload's extra value over the time it would run before the victims could. Densities
// are UrgentDensity: work near its deadline is worth more now, to start and to keep
// running; a victim that would miss a deadline it meets now costs its whole value
// (DeadlineRisk, with `urgency` as the wait). Victims are preemptible, denser work never
// yields to sparser work, services are
// never victims, and a workload is not preempted again before it has run `payback` (3 x
// its restart cost plus one checkpoint interval): no thrash.
class ValuePreempt : public PreemptPlugin {
 public:
  struct Options {
    double margin = 1.2;              // the waiting job must be this much denser
    DurationMs gain_horizon = kHour;  // how long the swap is assumed to last
    DurationMs urgency = kHour;       // victims are valued at UrgentDensity(urgency)
  };
  // With `quotas`, a tenant within its quota first reclaims what other tenants borrowed
  // (their over-quota work, cheapest loss first, no gain test: the quota is guaranteed), and
  // the value rule never takes another tenant's work within its quota.
  explicit ValuePreempt(Options o, std::shared_ptr<KaiQueues> quotas = nullptr)
      : o_(o), quotas_(std::move(quotas)) {}
  std::string_view name() const override { return "value-preempt"; }
  bool MakeRoom(const Job& job, Engine& engine) override;
  // The queue is in value order: a sparser workload of the same shape gains less and may
  // take fewer victims, so a failure holds for the rest of the class.
  bool monotone_in_queue_order() const override { return true; }
  // Room that went unused bought nothing with the victims' loss: not again for the job's
  // own payback, as a victim waits its payback before it may be stopped again.
  DurationMs RetryAfterRefusal(const Job& job) const override { return Payback(job.s()); }

  static DurationMs Payback(const WorkloadSpec& spec);

 private:
  struct Candidate {
    AllocationId id;
    double density;
  };
  // Preemptible non-service allocations as of the start of this cycle's first MakeRoom,
  // sparsest first; entries preempted since are skipped.
  const std::vector<Candidate>& Candidates(const Engine& engine);
  bool Reclaim(const Job& job, Engine& engine);
  // The value rule; `pool` >= 0 with quotas: victims and room within that GPU pool.
  bool ByValue(const Job& job, Engine& engine, int pool);

  Options o_;
  std::shared_ptr<KaiQueues> quotas_;
  uint64_t cached_cycle_ = ~uint64_t{0};
  // Kept across cycles, so that a cycle costs the allocations started since the last one,
  // not all of them: candidates whose density does not change while they run (no cost of
  // delay), sorted by (density, id); the ids of those whose density moves with time
  // (recomputed at each refresh); and the highest allocation id seen (ids only grow).
  // Entries of stopped allocations are dropped once they could be half of the list.
  std::vector<Candidate> fixed_;
  std::vector<AllocationId> urgent_;
  AllocationId seen_ = kNoAllocation;
  std::vector<Candidate> candidates_;  // fixed_ and urgent_ merged, when urgent_ has any
};

}  // namespace airtime
