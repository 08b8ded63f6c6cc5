// Plug-in interfaces: the named extension points every policy is assembled from.
//
// Modelled on the Kubernetes scheduler framework. In one decision cycle the engine
//   1. asks Scale for each service's replica target,
//   2. runs every Cycle plug-in's BeforeAllocate (holds, reservations, quota bookkeeping),
//   3. walks the queue in QueueSort order; Order says which workloads must not be passed
//      (head-of-line blocking) and which may be skipped when they do not fit,
//   4. for each workload, keeps the nodes every Filter allows and that have room, ranks
//      them by the Score plug-ins (no scorer: first fit) in lexicographic order of tiers
//      (ScoreTerm) and lets the engine pick devices on the winner (tightest share first),
//   5. calls Preempt for a workload that found no room, which may free some,
//   5a. tells every Permit plug-in (Unplaced) about a workload that still found no room,
//      and asks every Permit plug-in (Permit) whether a workload may take the placement
//      found for it; one refusal keeps it waiting this cycle (WaitReason::kPolicy). This is
//      how a plug-in learns, during the pass, which workload was the first left waiting (an
//      EASY-backfill reservation) and vets what starts after it,
//   6. runs every Cycle plug-in's AfterAllocate.
// A plug-in that needs a cycle at a time when no event is due (a threshold crossed, a wait
// grown too long) asks for one with Engine::WakeAt; the driver feeds a timer event then.
// Plug-ins are stateless with respect to the engine or keep only their own bookkeeping;
// they read engine state through `const Engine&` and change it only through the Engine
// methods documented as callable from plug-ins. A plug-in instance belongs to one engine.
// Every plug-in has Forget(id): the engine has let go of that ended workload
// (Engine::Forget, in a driver that runs for months), and a plug-in that keeps anything
// for it beyond the cycle drops it then, so that its memory follows the workloads the
// engine still knows rather than every workload it ever saw.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "airtime/engine/job.h"
#include "airtime/model/cluster.h"

namespace airtime {

class Engine;

class QueueSortPlugin {
 public:
  virtual ~QueueSortPlugin() = default;
  virtual std::string_view name() const = 0;
  virtual void Forget(WorkloadId /*id*/) {}
  // Ascending QueueKey; equal keys in arrival order.
  virtual QueueKey Key(const Job& job, const Engine& engine) const = 0;
  // True when keys change with time (ages, attained service): the keys of waiting work are
  // computed again each cycle. False keys are computed once when a workload joins the queue.
  virtual bool dynamic() const { return false; }
  // With dynamic(): whether this workload's key may change while it waits. Only those are
  // computed again, so that a policy whose keys move for a few workloads (deadlines near)
  // does not pay for the whole queue every cycle.
  virtual bool KeyChanges(const Job&) const { return true; }
  // What a user should know about where this order puts `job`, added to its explanation
  // while it waits for GPUs ("" for nothing).
  virtual std::string Note(const Job& /*job*/) const { return {}; }
};

class OrderPlugin {
 public:
  virtual ~OrderPlugin() = default;
  virtual std::string_view name() const = 0;
  virtual void Forget(WorkloadId /*id*/) {}
  // -1: the workload may be passed when it does not fit. g >= 0: the workload blocks every
  // later workload of group g when it does not fit (strict order within g).
  virtual int BlockingGroup(const Job& job, const Engine& engine) const = 0;
};

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual std::string_view name() const = 0;
  virtual void Forget(WorkloadId /*id*/) {}
  virtual bool Allows(const Job& job, NodeIndex node, const Engine& engine) const = 0;
  // Whether it may refuse anything in this cycle (asked after the cycle plug-ins'
  // BeforeAllocate). The engine skips a filter that says no, so one that is idle most of
  // the time costs nothing then.
  virtual bool Active(const Engine& /*engine*/) const { return true; }
  // Workloads with equal shapes and equal classes are allowed on the same nodes; the
  // engine caches "does not fit" per class within a cycle. Must not change over a job's life.
  virtual int FitClass(const Job& /*job*/) const { return 0; }
};

class ScorePlugin {
 public:
  virtual ~ScorePlugin() = default;
  virtual std::string_view name() const = 0;
  virtual void Forget(WorkloadId /*id*/) {}
  // Higher is better. Called only for nodes where the shape fits and every filter allows.
  virtual double Score(const Job& job, NodeIndex node, const Engine& engine) const = 0;
  // Optional device choice on the node the engine picked (a single-node placement): appends
  // job.s().shape.gpu_count GPUs of `node` that can take the shape and returns true, or
  // returns false to leave the choice to the engine (tightest share first, then lowest
  // index). The first scorer, in policy order, that returns true decides.
  virtual bool SelectGpus(const Job& /*job*/, NodeIndex /*node*/, const Engine& /*engine*/,
                          std::vector<GpuIndex>* /*out*/) const {
    return false;
  }
};

class PreemptPlugin {
 public:
  virtual ~PreemptPlugin() = default;
  virtual std::string_view name() const = 0;
  virtual void Forget(WorkloadId /*id*/) {}
  // Called when `job` found no room. May preempt allocations through the engine; returns
  // true when it freed room and the engine should try the job again.
  virtual bool MakeRoom(const Job& job, Engine& engine) = 0;
  // True when a failure for one workload implies failure, in the same cycle, for every later
  // workload of the same fit class (later in queue order). The engine then stops asking for
  // that class until something frees room -- what keeps a long queue cheap.
  virtual bool monotone_in_queue_order() const { return false; }
  // Room made for `job` went unused: a permit refused the placement found there. The engine
  // asks MakeRoom for `job` again only after this long (0: at once), so that work is not
  // stopped over and over for a workload that may not start (the room goes to others).
  virtual DurationMs RetryAfterRefusal(const Job& /*job*/) const { return 0; }
};

class PermitPlugin {
 public:
  virtual ~PermitPlugin() = default;
  virtual std::string_view name() const = 0;
  virtual void Forget(WorkloadId /*id*/) {}
  // Called in the allocation pass after the engine found `placement` for `job` and before
  // it starts. False keeps the workload waiting this cycle (WaitReason::kPolicy); the
  // refusal is not cached, so a later workload of the same shape is still tried.
  virtual bool Permit(const Job& job, const Placement& placement, const Engine& engine) = 0;
  // Whether Permit would refuse `job` on `node`, as the state stands (Engine::NodePermitted):
  // a preemption plug-in makes no room there. It may err on the side of true where Permit
  // refuses some of the node's GPUs only: room freed by node may be freed on those.
  virtual bool RefusesNode(const Job& /*job*/, NodeIndex /*node*/, const Engine& /*engine*/) const {
    return false;
  }
  // Called in the allocation pass when `job` found no room (after Preempt was tried). Not
  // called for workloads the order holds behind a head or that can never fit.
  virtual void Unplaced(const Job& /*job*/, const Engine& /*engine*/) {}
  // Why it held `job` back in the last cycle, in words a user can act on (for explanations;
  // empty: the plug-in's name is shown).
  virtual std::string WhyHeld(const Job& /*job*/, const Engine& /*engine*/) const { return {}; }
  // What the plug-in does for `job` while it waits (a reservation it holds for it, when it
  // will get one), for its explanation; empty: nothing.
  virtual std::string WaitNote(const Job& /*job*/, const Engine& /*engine*/) const { return {}; }
};

class ScalePlugin {
 public:
  virtual ~ScalePlugin() = default;
  virtual std::string_view name() const = 0;
  virtual void Forget(WorkloadId /*id*/) {}
  virtual int TargetReplicas(const Job& service, const Engine& engine) const = 0;
  // For a member of a service with variants (RealtimeProfile::is_member), asked right after
  // its target: the share of each request class the policy routes to it (Job::route_share);
  // empty: none (requests go to the best ready variant that serves their class).
  virtual std::vector<double> Routing(const Job& member, const Engine& engine) const {
    (void)member;
    (void)engine;
    return {};
  }
  // Why the target exceeds what the current demand needs, for the service's explanation
  // ("" : it does not, or no reason to give).
  virtual std::string WhyTarget(const Job& service, const Engine& engine) const {
    (void)service;
    (void)engine;
    return "";
  }
};

class CyclePlugin {
 public:
  virtual ~CyclePlugin() = default;
  virtual std::string_view name() const = 0;
  virtual void Forget(WorkloadId /*id*/) {}
  virtual void BeforeAllocate(Engine& engine) { (void)engine; }
  virtual void AfterAllocate(Engine& engine) { (void)engine; }
};

// One term of the placement score. Nodes compare tier by tier, lowest tier first: within a
// tier by the weighted sum of its terms, and a later tier only breaks the ties of the ones
// before it (a lexicographic order; equal within a relative 1e-9). A later tier's scores are
// not computed for nodes an earlier one already ranked.
struct ScoreTerm {
  ScoreTerm(std::unique_ptr<ScorePlugin> p, double w = 1.0, int t = 0)
      : plugin(std::move(p)), weight(w), tier(t) {}
  std::unique_ptr<ScorePlugin> plugin;
  double weight = 1.0;
  int tier = 0;
};

// A tenant's standing under a policy with tenant quotas, in GPUs (summed over GPU pools).
struct TenantStanding {
  std::string tenant;
  double deserved = 0;    // its deserved quota (configured, or its part of what is left)
  double fair_share = 0;  // what the policy's fair-share division gave it at the last cycle
  double allocated = 0;   // what its workloads hold now
  double borrowed = 0;    // what it holds over its deserved quota (per pool, summed)
};

// Reports tenants' quotas and use for the daemon's /metrics; only a policy that divides the
// cluster between tenants has one.
class TenantReportPlugin {
 public:
  virtual ~TenantReportPlugin() = default;
  // Every tenant the policy has seen a workload of, by name; allocation as the engine's
  // allocations stand now, quotas and fair shares as of the last cycle.
  virtual std::vector<TenantStanding> Standings(const Engine& engine) const = 0;
};

// A policy: one plug-in (or list) per extension point, under a name.
struct Policy {
  std::string name;
  std::string description;
  std::unique_ptr<QueueSortPlugin> queue_sort;  // required
  std::unique_ptr<OrderPlugin> order;           // null: every workload may be passed
  std::vector<std::unique_ptr<FilterPlugin>> filters;
  std::vector<ScoreTerm> scores;
  std::unique_ptr<PreemptPlugin> preempt;              // null: never preempt
  std::vector<std::unique_ptr<PermitPlugin>> permits;  // all must permit a start
  std::unique_ptr<ScalePlugin> scale;                  // null: replicas follow demand
  std::vector<std::unique_ptr<CyclePlugin>> cycle;
  std::unique_ptr<TenantReportPlugin> tenants;  // null: the policy has no tenant quotas
};

}  // namespace airtime
