// Engine: the scheduling core. One event in, one decision cycle out.
//
// The engine owns the runtime state of every workload and the cluster's allocation state,
// and runs the policy's plug-ins over them at every event. It is pure and deterministic:
// no I/O, no clock (time comes with each event), randomness only from a seeded Rng, and
// iteration orders that do not depend on addresses. The same events give the same
// decisions, which is what lets the simulator and the daemon share it.
//
// The engine applies its own decisions to its state at once (a started workload is running
// as far as the engine knows); drivers report what really happened with later events
// (completion, failure). Not thread-safe: one thread feeds it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "airtime/base/rng.h"
#include "airtime/base/status.h"
#include "airtime/engine/cluster_state.h"
#include "airtime/engine/cycle_state.h"
#include "airtime/engine/decision.h"
#include "airtime/engine/event.h"
#include "airtime/engine/hold_decision.h"
#include "airtime/engine/job.h"
#include "airtime/engine/job_table.h"
#include "airtime/engine/plugins.h"
#include "airtime/model/interference.h"

namespace airtime {

struct EngineOptions {
  // Seeds the tie-breaking between equally scored nodes: the engine draws one random order
  // of the nodes at construction and a tie goes to the node earliest in it (as the FGD
  // reference simulator does, which ranks nodes by a seeded permutation of their names).
  // 0: ties go to the lowest node index.
  uint64_t seed = 0;
  // Slowdown of work sharing a GPU by fractions (model/interference.h); null: none. The
  // simulator uses InterferenceModel::Gavel(); the daemon none (real GPUs interfere on
  // their own).
  const InterferenceModel* interference = nullptr;
  // Crash loops: after a run fails on its own (a Failure event: its process exited with an
  // error), the workload (a job, or a service's missing replica) is not started again
  // before `restart_backoff` has passed, doubled for each failure in a row up to
  // `restart_backoff_max`, as Kubernetes' CrashLoopBackOff does: a command that fails at
  // once is not restarted in a tight loop. A run that lasted `restart_backoff_reset` or
  // longer before it failed starts a new count. 0: restart at once (the simulator's
  // default: a trace's failures are not crash loops).
  DurationMs restart_backoff = 0;
  DurationMs restart_backoff_max = 5 * 60 * 1000;
  DurationMs restart_backoff_reset = 10 * 60 * 1000;
};

// An allocation that ended in this cycle, for whatever reason.
struct Stopped {
  AllocationId allocation = kNoAllocation;
  WorkloadId workload = kNoWorkload;
  bool completed = false;  // finished its work (jobs) or exited cleanly (replicas)
  double lost_gpu_ms = 0;  // GPU-milliseconds of work thrown away (milli-weighted / 1000)
};

struct CycleResult {
  TimeMs at = 0;
  EventType trigger = EventType::kTimer;
  Status event_status;  // a malformed event (unknown id) is refused here
  std::vector<Decision> decisions;
  // One entry per waiting workload, in queue order.
  std::vector<std::pair<WorkloadId, WaitInfo>> waiting;
  std::vector<Stopped> stopped;
  WorkloadId arrived = kNoWorkload;  // kArrival: the id given to the new workload
  // Hold-or-hand-off calls on services' headroom made in this cycle (Engine::RecordHold).
  std::vector<HoldDecision> holds;
  // The earliest time a plug-in asked for another cycle (Engine::WakeAt); kNever: none. The
  // driver feeds a timer event then unless another event comes first.
  TimeMs wake_at = kNever;
};

class Engine {
 public:
  Engine(const Cluster& cluster, Policy policy, EngineOptions options = {});
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Applies `event` and runs one decision cycle. Events must come in time order; an event
  // earlier than the last one is treated as happening now.
  const CycleResult& Handle(const Event& event);

  // Restores, between cycles, an allocation that exists outside the engine: the daemon,
  // restarted after a crash, re-submits its workloads and then adopts the processes still
  // running on the GPUs they hold. `id` must be waiting (a job) or a service; `gpus` must be
  // free enough for one unit of its shape each. The allocation starts now, ready at once (no
  // cold start: the process was already running); no decision is emitted. Returns its id.
  StatusOr<AllocationId> Adopt(WorkloadId id, const std::vector<GpuIndex>& gpus);

  // Moves allocations, between cycles, onto the GPUs they really hold: a backend that picks
  // the GPU indices itself (Slurm) may choose others than the engine did, on the same node
  // or elsewhere. All moves apply together (two allocations may trade GPUs) or none does:
  // every listed allocation's GPUs are released, then each takes its new ones, which must
  // be as many as it had and have room for one unit of its shape each (else
  // FailedPrecondition naming the GPU and nothing changes). A fraction moves its share onto
  // GPUs that have room for it (Slurm's gres/shard picks the GPU of a fraction itself). No
  // decision is emitted; the allocation's segment, ready time and expected end are kept.
  Status Move(const std::vector<std::pair<AllocationId, std::vector<GpuIndex>>>& moves);

  // GPUs that work outside airtime holds now (a Slurm job submitted directly), replacing the
  // previous set: they are not offered to placement, and the ledger counts their free
  // capacity as `foreign`. An allocation already on one keeps it. Between cycles.
  void SetForeign(const std::vector<GpuIndex>& gpus);
  // The same with a share of each GPU (ForeignShare::milli; shares of one GPU add up, to
  // 1000 at most): beside a share below 1000, fractions still fit in what is left of the
  // GPU (ClusterState::GpuTakes), and the ledger counts the share as `foreign`.
  struct ForeignShare {
    GpuIndex gpu = -1;
    int milli = 1000;
  };
  void SetForeignShares(const std::vector<ForeignShare>& shares);
  // The GPUs outside work holds some of, ascending.
  const std::vector<GpuIndex>& foreign() const { return foreign_; }

  // While paused, Handle applies events but decides nothing (no starts, scaling or
  // preemption): a restarting daemon re-submits its workloads and adopts running processes
  // first, then unpauses and feeds a timer event for the first real cycle.
  void SetPaused(bool paused) { paused_ = paused; }

  // Lets go of what the engine keeps of job `id` once it has ended (done or cancelled, holding
  // nothing, not queued), for a driver that runs for months (the daemon; the simulator never
  // calls it): its spec becomes a shared stand-in of the same kind with no name, its vectors
  // are freed, and FindByName no longer finds it; once the other jobs of its chunk of ids are
  // forgotten too, their memory goes (JobTable) and job(id) reads a stand-in. Services
  // (listed in services()) and jobs that produce a model variant (their names are asked
  // after: VariantAvailable) are kept whole. The policy's plug-ins are told (Forget on each)
  // so that they drop what they keep for it. Returns whether it let go.
  bool Forget(WorkloadId id);
  // Chunks of jobs whose memory is held (JobTable; tests and benchmarks).
  size_t job_chunks_held() const { return jobs_.chunks_held(); }

  // ---- Read access (drivers, ledger, plug-ins).
  TimeMs now() const { return now_; }
  // How many decision cycles have run (plug-ins key per-cycle caches on it).
  uint64_t cycles() const { return cycles_; }
  const Cluster& cluster() const { return *cluster_; }
  const GpuCatalog& catalog() const { return cluster_->catalog(); }
  const ClusterState& state() const { return state_; }
  const Policy& policy() const { return policy_; }
  size_t job_count() const { return jobs_.size(); }
  const Job& job(WorkloadId id) const { return jobs_[static_cast<size_t>(id)]; }
  const FitClassShape& fit_class_shape(int fit_class) const {
    return fit_class_shapes_[static_cast<size_t>(fit_class)];
  }
  std::optional<WorkloadId> FindByName(std::string_view name) const;
  // Waiting workloads in the policy's order (as of the last cycle).
  const std::vector<WorkloadId>& queue() const { return queue_; }
  // Realtime services, in arrival order (cancelled ones included).
  const std::vector<WorkloadId>& services() const { return services_; }
  const Allocation* allocation(AllocationId id) const;
  const std::map<AllocationId, Allocation>& allocations() const { return allocations_; }
  const CycleResult& last_cycle() const { return result_; }
  // Nodes grouped by GPU type (index: GpuTypeId), for plug-ins that scan by type.
  const std::vector<std::vector<NodeIndex>>& nodes_of_type() const { return nodes_of_type_; }
  // A sentence a user can act on: why `id` waits (or what it is doing).
  std::string Explain(WorkloadId id) const;
  // Model variants that work makes (ModelVariant::produced_by): whether variant `v` of the
  // service `rt` describes (the service's or any member's profile) may run now. One that
  // names no producer may, unless it awaits one (ModelVariant::awaits_producer); one that
  // does, once the job of that name has completed. Until then (the job has not arrived,
  // waits, runs, failed and waits to run again, or was cancelled: then for good) its member
  // gets no replicas, whatever the scale plug-in asks, and plug-ins plan without it.
  bool VariantAvailable(const RealtimeProfile& rt, size_t v) const;
  // Names job `producer` as the one that makes variant `v` of member `member`'s service (a
  // producer that came after its service, the daemon's later submission): the member's spec
  // becomes a copy that says so. Call it for every member of the service, between cycles;
  // nothing else of the spec changes. Returns the new spec.
  StatusOr<std::shared_ptr<const WorkloadSpec>> SetVariantProducer(WorkloadId member, size_t v,
                                                                   const std::string& producer);

  // ---- Callable from plug-ins during a cycle.
  // Stops `allocation`; a job goes back to the queue with its checkpointed progress, a
  // service replica is dropped (and re-requested if still needed). Emits a kPreempt decision.
  // Inside PreemptPlugin::MakeRoom the stop is part of the engine's preemption statement:
  // it takes effect at once for the plug-in and the placement, but is undone (no decision,
  // nothing stopped) unless the waiting workload then starts.
  void Preempt(AllocationId allocation, std::string reason);
  // Finds where `job` would go now, without placing it.
  std::optional<Placement> FindPlacement(const Job& job);
  // Whether `job` fits somewhere now (first fit, no scoring, no randomness).
  bool FitsNow(const Job& job);
  // The same, ignoring the policy's filters: whether the hardware has room for it now.
  bool FitsIgnoringPolicy(const Job& job);
  // Keeps GPUs free on purpose; emits kHold / kUnhold decisions.
  void Hold(const std::vector<GpuIndex>& gpus, TimeMs until, std::string reason);
  void Unhold(const std::vector<GpuIndex>& gpus, std::string reason);
  // Asks for a decision cycle at `at` (at least 1 ms from now) even if no event comes; the
  // earliest request of the cycle goes out as CycleResult::wake_at. Requests last one cycle:
  // a plug-in that still needs the time asks again in the next one. A request for 1 ms
  // from now is a re-look: after kMaxRelooks of them in a row, each from a cycle that was
  // itself one, the engine stops granting them until another event comes (plug-ins whose
  // decisions flip back and forth would otherwise keep time from moving); later requests
  // still stand.
  void WakeAt(TimeMs at);
  static constexpr int kMaxRelooks = 8;
  // Declares that the policy keeps `milli` of free capacity of GPU type `type` on purpose
  // until the next cycle (headroom for a forecast peak). Declarations last one cycle; the
  // ledger counts free capacity up to the declared amount as reserved headroom.
  void DeclareHeadroom(GpuTypeId type, int64_t milli);
  // What plug-ins share within this cycle (cycle_state.h); cleared as each cycle begins.
  CycleState& cycle_state() { return cycle_state_; }
  const CycleState& cycle_state() const { return cycle_state_; }
  // Records a hold-or-hand-off call on a service's headroom (the 3 a.m. report); it goes
  // out with this cycle's result.
  void RecordHold(HoldDecision d) { result_.holds.push_back(std::move(d)); }
  int64_t declared_headroom(GpuTypeId type) const {
    return headroom_.empty() ? 0 : headroom_[static_cast<size_t>(type)];
  }
  Rng& rng() { return rng_; }
  // The interference model the engine applies (EngineOptions::interference; may be null).
  const InterferenceModel* interference() const { return options_.interference; }
  // Whether every filter of the policy lets `job` use node `n` (a preemption plug-in asks
  // this of the places it frees, so that it frees none the placement would refuse).
  bool NodeAllowed(const Job& job, NodeIndex n) const;
  // NodeAllowed, and no permit refuses `job` on `n` whatever GPUs it took there
  // (PermitPlugin::RefusesNode): where a preemption plug-in may make room for it.
  bool NodePermitted(const Job& job, NodeIndex n) const;
  // Whether some filter may refuse something in this cycle (FilterPlugin::Active).
  bool FiltersActive() const { return !active_filters_.empty(); }
  // The fractional allocations on `gpu` (null: none).
  const std::vector<AllocationId>* SharedOn(GpuIndex gpu) const {
    auto it = shared_.find(gpu);
    return it == shared_.end() ? nullptr : &it->second;
  }

 private:
  void Apply(const Event& e);
  void OnArrival(const Event& e);
  void OnStop(AllocationId id, bool completed, bool lost_work, std::string reason,
              DecisionType decision);
  // A run that ended on its own: a failure counts towards the workload's restart backoff
  // (EngineOptions::restart_backoff), a clean end clears the count.
  void CountRunEnd(Job& job, const Allocation& a, bool failed);
  void ScaleServices();
  void AllocatePass();
  void RefreshFilters();
  void ExplainWaiting();
  // Sets CycleResult::wake_at for a re-look the cycle asked for, within kMaxRelooks in a row.
  void GrantRelook(const Event& event);
  void Enqueue(Job& job);
  void Dequeue(Job& job);
  // The queue's order: ascending (key0, key1), then arrival.
  auto QueueLess() const {
    return [this](WorkloadId a, WorkloadId b) {
      const Job& x = jobs_[static_cast<size_t>(a)];
      const Job& y = jobs_[static_cast<size_t>(b)];
      if (x.key != y.key) return x.key < y.key;
      return x.seq < y.seq;
    };
  }
  void SortQueue();
  // Tells every plug-in of the policy that workload `id` is let go (Forget).
  void ForgetInPolicy(WorkloadId id);
  // A walk of a long queue visits jobs in queue order, not in memory order: each is a cache
  // miss. Asking for the one a few places ahead lets the misses overlap. (Inlined by force:
  // GCC 12 finds the call free of side effects and drops it, prefetch and all, otherwise.)
  [[gnu::always_inline]] void PrefetchJob(const std::vector<WorkloadId>& ids, size_t i) const {
    constexpr size_t kAhead = 8;
    if (i + kAhead < ids.size())
      __builtin_prefetch(&jobs_[static_cast<size_t>(ids[i + kAhead])], 1);
  }
  // Dynamic keys: computes again the keys of waiting work listed in rekey_ and moves the
  // workloads whose keys changed to their places (the rest of the queue is in order).
  void RekeyQueue();
  void Start(Job& job, Placement placement, AllocationId resized_from = kNoAllocation);
  // Preemption as a transaction (as KAI-Scheduler's Statement): the stops a MakeRoom makes
  // are applied at once and recorded; Commit keeps them when the preemptor starts, Rollback
  // restores every victim as it was (allocation, job, co-located shares, queue) and drops
  // the decisions and stops the cycle had gained since Begin.
  void BeginStatement();
  void CommitStatement();
  void RollbackStatement();
  void RecordStop(AllocationId id);  // inside a statement: what OnStop(id) is about to change
  // Elastic gangs (Shape::min_gpus > 0): placements with fewer GPUs than asked, and the
  // step after the allocation pass that resizes running ones up when GPUs are free.
  std::optional<Placement> FindWithCount(const Job& job, int count);
  std::optional<Placement> FindElastic(const Job& job, int at_least);
  void GrowElastic();
  const Shape& ShapeOf(const Job& job) const {
    return shape_override_ ? *shape_override_ : job.s().shape;
  }
  std::optional<Placement> Find(const Job& job, bool first_fit);
  // Whether placement may visit the open nodes alone for `shape` (ClusterState::open).
  static bool UsesOpenNodes(const Shape& shape);
  // Whether too few whole GPUs are free for `shape` anywhere (whole-GPU shapes only).
  bool NoRoomForWhole(const Shape& shape) const;
  std::optional<Placement> FindSingleNode(const Job& job, bool first_fit);
  std::optional<Placement> FindMultiNode(const Job& job);
  int InternFitClass(const Job& job);
  WaitInfo FreeInfo(const Job& job) const;
  // Interference (EngineOptions::interference): the factor `a` would have on `gpu` beside
  // the other fractional allocations there, and the update of every allocation on the
  // GPUs of `p` after one came or went (a job's speed changes now: kRetime).
  double InterferenceOn(const Allocation& a, GpuIndex gpu) const;
  void Reinterfere(const Placement& p);
  std::string FilteredOut(const Job& job) const;
  // Why a workload that fits nowhere waits although some node has the GPUs it asks for free:
  // that node's host CPU or memory is short ("" when no node is in that case).
  std::string HostShortNote(const Job& job) const;
  // Explain for a member whose variant is not yet produced: by which job, and how it is.
  std::string UnproducedNote(const RealtimeProfile& rt) const;
  // "; " and the queue order's note on `job` (QueueSortPlugin::Note), or "".
  std::string OrderNote(const Job& job) const;
  // "; " and each permit plug-in's note on waiting `job` (PermitPlugin::WaitNote), or "".
  std::string PermitNotes(const Job& job) const;

  const Cluster* cluster_;
  Policy policy_;
  EngineOptions options_;
  Rng rng_;
  ClusterState state_;
  TimeMs now_ = 0;
  uint64_t cycles_ = 0;
  // Re-looks (WakeAt 1 ms from now): whether this cycle asked for one, the time the last one
  // granted was for, and how many were granted in a row.
  bool relook_asked_ = false;
  TimeMs relook_at_ = kNever;
  int relooks_ = 0;

  JobTable jobs_;
  std::unordered_map<std::string, WorkloadId> by_name_;
  std::vector<WorkloadId> queue_;
  std::vector<WorkloadId> rekey_;  // with dynamic keys: queued work whose key may change
  int64_t next_seq_ = 0;
  std::map<AllocationId, Allocation> allocations_;
  AllocationId next_allocation_ = 1;
  std::vector<WorkloadId> services_;
  bool services_dirty_ = true;

  std::map<std::string, int> fit_classes_;       // shape+filter key -> class id
  std::vector<FitClassShape> fit_class_shapes_;  // by class id
  std::vector<int64_t> headroom_;                // per GPU type, declared this cycle
  std::set<AllocationId> small_elastic_;         // elastic allocations below their full size
  std::unordered_map<GpuIndex, std::vector<AllocationId>> shared_;  // fractional, per GPU
  const Shape* shape_override_ = nullptr;                           // set only inside FindWithCount
  bool ignore_filters_ = false;  // set only inside FitsIgnoringPolicy
  // The policy's filters that may refuse something in this cycle (RefreshFilters).
  std::vector<const FilterPlugin*> active_filters_;
  bool paused_ = false;
  std::vector<GpuIndex> foreign_;       // SetForeign
  std::vector<int8_t> preempt_failed_;  // per cycle: MakeRoom failed for the class
  std::vector<int8_t> class_fit_;       // per cycle: 0 unknown, 1 fits, 2 does not fit
  std::vector<std::vector<NodeIndex>> nodes_of_type_;
  std::vector<int32_t> tie_rank_;  // per node: its place in the tie-breaking order
  // policy_.scores' indices grouped by tier, the first tier first (ScoreTerm).
  std::vector<std::vector<size_t>> score_tiers_;
  int max_node_gpus_ = 0;
  // Installed GPUs per type, and of its largest node (index: GpuTypeId), the same on nodes
  // with MIG enabled; the GPUs of the largest NVLink domain and rack. An arrival checks its
  // shape against these.
  std::vector<int> installed_of_type_, biggest_node_of_type_;
  std::vector<int> mig_installed_of_type_, mig_biggest_node_of_type_;
  int biggest_domain_gpus_ = 0, biggest_rack_gpus_ = 0;

  // The open preemption statement (BeginStatement), if any.
  struct StopUndo {
    Allocation allocation;  // the victim as it was
    Job job;                // its workload as it was
    bool small_elastic = false;
    std::vector<Allocation> neighbours;  // fractional allocations on its GPUs, as they were
    std::vector<std::pair<GpuIndex, std::vector<AllocationId>>> shared;  // shared_ there
  };
  struct Statement {
    bool open = false;
    size_t decisions = 0, stopped = 0;  // result_'s sizes at Begin
    bool services_dirty = false;
    std::vector<StopUndo> undo;
  };
  Statement statement_;

  CycleResult result_;
  CycleState cycle_state_;
};

}  // namespace airtime
