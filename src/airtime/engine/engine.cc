#include "airtime/engine/engine.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace airtime {

Engine::Engine(const Cluster& cluster, Policy policy, EngineOptions options)
    : cluster_(&cluster),
      policy_(std::move(policy)),
      options_(options),
      rng_(options.seed),
      state_(cluster),
      nodes_of_type_(cluster.catalog().size()),
      installed_of_type_(cluster.catalog().size(), 0),
      biggest_node_of_type_(cluster.catalog().size(), 0),
      mig_installed_of_type_(cluster.catalog().size(), 0),
      mig_biggest_node_of_type_(cluster.catalog().size(), 0) {
  std::map<int32_t, int> domain_gpus, rack_gpus;  // installed GPUs per NVLink domain / rack
  for (size_t n = 0; n < cluster.node_count(); ++n) {
    const Node& node = cluster.node(static_cast<NodeIndex>(n));
    if (node.gpu_count > 0) {
      const auto t = static_cast<size_t>(node.gpu_type);
      nodes_of_type_[t].push_back(static_cast<NodeIndex>(n));
      installed_of_type_[t] += node.gpu_count;
      biggest_node_of_type_[t] = std::max(biggest_node_of_type_[t], node.gpu_count);
      if (node.mig_enabled) {
        mig_installed_of_type_[t] += node.gpu_count;
        mig_biggest_node_of_type_[t] = std::max(mig_biggest_node_of_type_[t], node.gpu_count);
      }
      domain_gpus[cluster.domain_of(static_cast<NodeIndex>(n))] += node.gpu_count;
      rack_gpus[cluster.rack_of(static_cast<NodeIndex>(n))] += node.gpu_count;
    }
    max_node_gpus_ = std::max(max_node_gpus_, node.gpu_count);
  }
  for (const auto& [g, count] : domain_gpus)
    biggest_domain_gpus_ = std::max(biggest_domain_gpus_, count);
  for (const auto& [g, count] : rack_gpus) biggest_rack_gpus_ = std::max(biggest_rack_gpus_, count);
  tie_rank_.resize(cluster.node_count());
  for (size_t n = 0; n < tie_rank_.size(); ++n) tie_rank_[n] = static_cast<int32_t>(n);
  if (options.seed != 0) rng_.Shuffle(tie_rank_);
  std::map<int, std::vector<size_t>> tiers;
  for (size_t i = 0; i < policy_.scores.size(); ++i) tiers[policy_.scores[i].tier].push_back(i);
  for (auto& [tier, terms] : tiers) score_tiers_.push_back(std::move(terms));
  RefreshFilters();
}

const CycleResult& Engine::Handle(const Event& event) {
  result_ = CycleResult{};
  ++cycles_;
  now_ = std::max(now_, event.at);
  result_.at = now_;
  result_.trigger = event.type;
  headroom_.clear();
  cycle_state_.Clear();
  relook_asked_ = false;
  Apply(event);
  if (paused_) return result_;
  ScaleServices();
  for (auto& p : policy_.cycle) p->BeforeAllocate(*this);
  RefreshFilters();
  AllocatePass();
  GrowElastic();
  for (auto& p : policy_.cycle) p->AfterAllocate(*this);
  GrantRelook(event);
  ExplainWaiting();
  return result_;
}

StatusOr<AllocationId> Engine::Adopt(WorkloadId id, const std::vector<GpuIndex>& gpus) {
  if (id < 0 || static_cast<size_t>(id) >= jobs_.size())
    return NotFound("no workload with id " + std::to_string(id));
  Job& job = jobs_[static_cast<size_t>(id)];
  if (!job.is_service() && !job.queued)
    return FailedPrecondition("workload '" + job.s().name + "' is not waiting; cannot adopt");
  const RealtimeProfile& rt = job.s().realtime;
  if (rt.is_member() && !VariantAvailable(rt, static_cast<size_t>(rt.variant)))
    return FailedPrecondition("workload '" + job.s().name + "' is a variant not yet produced");
  const Shape& shape = job.s().shape;
  for (GpuIndex g : gpus) {
    if (g < 0 || static_cast<size_t>(g) >= cluster_->gpu_count())
      return InvalidArgument("no GPU with index " + std::to_string(g));
    if (!state_.GpuTakes(shape, g))
      return FailedPrecondition("GPU " + std::to_string(g) + " has no room for '" + job.s().name +
                                "'");
  }
  Placement p;
  p.gpus = gpus;
  if (!gpus.empty()) p.host_node = cluster_->gpu(gpus[0]).node;
  state_.FillPlacement(shape, &p);
  if (job.queued) Dequeue(job);
  const size_t decisions = result_.decisions.size();
  Start(job, std::move(p));
  result_.decisions.resize(decisions);  // an adoption is not a decision
  Allocation& a = allocations_.at(job.allocations.back());
  a.ready_at = now_;
  a.segment.overhead = 0;
  if (!job.is_service()) a.expected_end = SegmentEnd(job.s(), a.segment);
  return a.id;
}

void Engine::SetForeign(const std::vector<GpuIndex>& gpus) {
  std::vector<ForeignShare> whole;
  whole.reserve(gpus.size());
  for (GpuIndex g : gpus) whole.push_back({g, 1000});
  SetForeignShares(whole);
}

void Engine::SetForeignShares(const std::vector<ForeignShare>& shares) {
  for (GpuIndex g : foreign_) state_.SetForeign(g, 0);
  std::map<GpuIndex, int> milli;
  for (const ForeignShare& s : shares) {
    if (s.gpu < 0 || static_cast<size_t>(s.gpu) >= cluster_->gpu_count() || s.milli <= 0) continue;
    int& m = milli[s.gpu];
    m = std::min(1000, m + std::min(s.milli, 1000));
  }
  foreign_.clear();
  for (const auto& [g, m] : milli) {
    state_.SetForeign(g, m);
    foreign_.push_back(g);
  }
}

Status Engine::Move(const std::vector<std::pair<AllocationId, std::vector<GpuIndex>>>& moves) {
  std::vector<Allocation*> moving;
  for (const auto& [id, gpus] : moves) {
    auto it = allocations_.find(id);
    if (it == allocations_.end()) return NotFound("no live allocation " + std::to_string(id));
    Allocation& a = it->second;
    if (gpus.size() != a.placement.gpus.size())
      return InvalidArgument("allocation " + std::to_string(id) + " holds " +
                             std::to_string(a.placement.gpus.size()) + " GPU(s), not " +
                             std::to_string(gpus.size()));
    for (GpuIndex g : gpus)
      if (g < 0 || static_cast<size_t>(g) >= cluster_->gpu_count())
        return InvalidArgument("no GPU with index " + std::to_string(g));
    if (std::find(moving.begin(), moving.end(), &a) != moving.end())
      return InvalidArgument("allocation " + std::to_string(id) + " is listed twice");
    moving.push_back(&a);
  }
  for (Allocation* a : moving) state_.Release(a->placement);
  std::vector<Placement> placed;
  Status refused;
  for (size_t i = 0; i < moving.size() && refused.ok(); ++i) {
    const Shape& shape = jobs_[static_cast<size_t>(moving[i]->workload)].s().shape;
    Placement p = moving[i]->placement;
    p.gpus = moves[i].second;
    p.host_node = p.gpus.empty() ? p.host_node : cluster_->gpu(p.gpus[0]).node;
    for (GpuIndex g : p.gpus) {
      if (!state_.GpuTakes(shape, g)) {
        refused = FailedPrecondition("GPU " + std::to_string(g) + " has no room for allocation " +
                                     std::to_string(moves[i].first));
        break;
      }
    }
    if (!refused.ok()) break;
    state_.Apply(p);
    placed.push_back(std::move(p));
  }
  if (!refused.ok()) {  // undo: back where they were
    for (const Placement& p : placed) state_.Release(p);
    for (Allocation* a : moving) state_.Apply(a->placement);
    return refused;
  }
  for (size_t i = 0; i < moving.size(); ++i) moving[i]->placement = std::move(placed[i]);
  return OkStatus();
}

bool Engine::Forget(WorkloadId id) {
  if (id < 0 || static_cast<size_t>(id) >= jobs_.size()) return false;
  Job& job = jobs_[static_cast<size_t>(id)];
  if (job.phase != JobPhase::kDone && job.phase != JobPhase::kCancelled) return false;
  if (!job.allocations.empty() || job.queued || job.is_service() || !job.s().produces.empty())
    return false;
  if (job.spec == ForgottenSpec(job.s().kind)) return true;  // forgotten before
  if (auto it = by_name_.find(job.s().name); it != by_name_.end() && it->second == id)
    by_name_.erase(it);
  job.spec = ForgottenSpec(job.s().kind);
  std::vector<double>().swap(job.class_rps);
  std::vector<double>().swap(job.route_share);
  std::vector<AllocationId>().swap(job.allocations);
  jobs_.Release(static_cast<size_t>(id));
  ForgetInPolicy(id);
  return true;
}

void Engine::ForgetInPolicy(WorkloadId id) {
  Policy& p = policy_;
  p.queue_sort->Forget(id);
  if (p.order) p.order->Forget(id);
  for (auto& f : p.filters) f->Forget(id);
  for (auto& t : p.scores) t.plugin->Forget(id);
  if (p.preempt) p.preempt->Forget(id);
  for (auto& permit : p.permits) permit->Forget(id);
  if (p.scale) p.scale->Forget(id);
  for (auto& c : p.cycle) c->Forget(id);
}

std::optional<WorkloadId> Engine::FindByName(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

bool Engine::VariantAvailable(const RealtimeProfile& rt, size_t v) const {
  if (v >= rt.variants.size()) return false;
  const std::string& producer = rt.variants[v].produced_by;
  if (producer.empty()) return !rt.variants[v].awaits_producer;
  const std::optional<WorkloadId> id = FindByName(producer);
  return id && job(*id).phase == JobPhase::kDone;
}

StatusOr<std::shared_ptr<const WorkloadSpec>> Engine::SetVariantProducer(
    WorkloadId member, size_t v, const std::string& producer) {
  if (member < 0 || static_cast<size_t>(member) >= jobs_.size())
    return NotFound("no workload with id " + std::to_string(member));
  Job& job = jobs_[static_cast<size_t>(member)];
  if (!job.s().realtime.is_member() || v >= job.s().realtime.variants.size())
    return InvalidArgument("workload '" + job.s().name + "' has no variant " + std::to_string(v));
  auto spec = std::make_shared<WorkloadSpec>(job.s());
  spec->realtime.variants[v].produced_by = producer;
  job.spec = spec;
  return std::shared_ptr<const WorkloadSpec>(std::move(spec));
}

const Allocation* Engine::allocation(AllocationId id) const {
  auto it = allocations_.find(id);
  return it == allocations_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------- events

void Engine::Apply(const Event& e) {
  auto check_workload = [&]() {
    if (e.workload < 0 || static_cast<size_t>(e.workload) >= jobs_.size()) {
      result_.event_status = NotFound("no workload with id " + std::to_string(e.workload));
      return false;
    }
    return true;
  };
  switch (e.type) {
    case EventType::kArrival:
      OnArrival(e);
      break;
    case EventType::kCompletion:
      OnStop(e.allocation, /*completed=*/true, /*lost_work=*/false, "", DecisionType::kStart);
      break;
    case EventType::kFailure:
      OnStop(e.allocation, /*completed=*/false, /*lost_work=*/true, "", DecisionType::kStart);
      break;
    case EventType::kDemandChange:
      if (!check_workload()) return;
      if (e.request_class >= 0) {
        Job& job = jobs_[static_cast<size_t>(e.workload)];
        const auto c = static_cast<size_t>(e.request_class);
        if (c >= job.s().realtime.classes.size()) {
          result_.event_status = InvalidArgument("workload '" + job.s().name +
                                                 "' has no request class " + std::to_string(c));
          return;
        }
        if (job.class_rps.size() <= c) job.class_rps.resize(c + 1, 0.0);
        job.class_rps[c] = std::max(0.0, e.rps);
      } else {
        jobs_[static_cast<size_t>(e.workload)].demand_rps = std::max(0.0, e.rps);
      }
      services_dirty_ = true;
      break;
    case EventType::kPriorityChange: {
      if (!check_workload()) return;
      Job& job = jobs_[static_cast<size_t>(e.workload)];
      job.priority = e.priority;
      if (job.queued) {
        // Re-sort with the new key; the arrival order (seq) is kept.
        const int64_t seq = job.seq;
        const TimeMs since = job.queued_since;
        Dequeue(job);
        job.waited -= now_ - since;
        Enqueue(job);
        job.seq = seq;
        job.queued_since = since;
        SortQueue();
      }
      break;
    }
    case EventType::kCancel: {
      if (!check_workload()) return;
      Job& job = jobs_[static_cast<size_t>(e.workload)];
      if (job.phase == JobPhase::kDone || job.phase == JobPhase::kCancelled) return;
      if (job.queued) Dequeue(job);
      while (!job.allocations.empty())
        OnStop(job.allocations.back(), false, false, "cancelled", DecisionType::kRelease);
      job.phase = JobPhase::kCancelled;
      job.finished = now_;
      job.wait = {};
      break;
    }
    case EventType::kNodeDown: {
      if (e.node < 0 || static_cast<size_t>(e.node) >= cluster_->node_count()) {
        result_.event_status = NotFound("no node with index " + std::to_string(e.node));
        return;
      }
      std::vector<AllocationId> hit;
      for (const auto& [id, a] : allocations_) {
        bool on_node = a.placement.host_node == e.node;
        for (GpuIndex g : a.placement.gpus) on_node |= cluster_->gpu(g).node == e.node;
        if (on_node) hit.push_back(id);
      }
      for (AllocationId id : hit)
        OnStop(id, false, true, "node " + cluster_->node(e.node).name + " went down",
               DecisionType::kPreempt);
      state_.SetNodeUp(e.node, false);
      break;
    }
    case EventType::kNodeUp:
      if (e.node < 0 || static_cast<size_t>(e.node) >= cluster_->node_count()) {
        result_.event_status = NotFound("no node with index " + std::to_string(e.node));
        return;
      }
      state_.SetNodeUp(e.node, true);
      break;
    case EventType::kTimer:
      break;
  }
}

void Engine::OnArrival(const Event& e) {
  if (!e.spec) {
    result_.event_status = InvalidArgument("arrival without a workload spec");
    return;
  }
  if (by_name_.count(e.spec->name)) {
    result_.event_status =
        Status(StatusCode::kAlreadyExists, "a workload named '" + e.spec->name + "' exists");
    return;
  }
  Job job;
  job.id = static_cast<WorkloadId>(jobs_.size());
  job.spec = e.spec;
  job.priority = e.spec->priority;
  job.submitted = now_;
  job.value_density = ValueDensity(*e.spec, catalog());
  job.elastic = e.spec->shape.min_gpus > 0;
  job.service = e.spec->is_service();
  const Shape& shape = e.spec->shape;
  if (shape.gpu_count > 0) {
    int installed = 0, biggest_node = 0;
    const int need = shape.min_gpus > 0 ? shape.min_gpus : shape.gpu_count;  // elastic: its least
    for (size_t t = 0; t < installed_of_type_.size(); ++t) {
      const auto type = static_cast<GpuTypeId>(t);
      if (installed_of_type_[t] == 0 || !shape.AllowsType(type)) continue;
      // A type whose GPUs can never take one of its units does not count: too little memory,
      // or for a MIG slice no such profile or no node of the type with MIG enabled.
      const GpuType& gt = catalog().type(type);
      if (shape.mode == ShareMode::kMig) {
        if (gt.FindMig(shape.mig_profile) == nullptr || mig_installed_of_type_[t] == 0) continue;
        installed += mig_installed_of_type_[t];
        biggest_node = std::max(biggest_node, mig_biggest_node_of_type_[t]);
        continue;
      }
      if (shape.memory_gb > gt.memory_gb + 1e-6) continue;
      installed += installed_of_type_[t];
      biggest_node = std::max(biggest_node, biggest_node_of_type_[t]);
    }
    const int biggest_domain =
        shape.locality == Locality::kRack ? biggest_rack_gpus_ : biggest_domain_gpus_;
    if (installed == 0) {
      job.never_fits = true;
      job.wait.reason = WaitReason::kNoSuchHardware;
    } else if ((shape.locality == Locality::kNode && need > biggest_node) || need > installed ||
               (shape.locality != Locality::kAny && shape.locality != Locality::kNode &&
                need > biggest_domain)) {
      job.never_fits = true;
      job.wait.reason = WaitReason::kTooLarge;
    }
  }
  job.fit_class = InternFitClass(job);
  Job& j = jobs_.push_back(std::move(job));
  by_name_.emplace(j.s().name, j.id);
  result_.arrived = j.id;
  if (j.is_service()) {
    // The demand the spec's own curve gives for now, until demand events say otherwise.
    for (const DemandPoint& d : j.s().realtime.demand)
      if (d.at <= now_) j.demand_rps = d.rps;
    const auto& classes = j.s().realtime.classes;
    if (j.s().realtime.is_member()) {
      j.class_rps.assign(classes.size(), 0.0);
      for (size_t c = 0; c < classes.size(); ++c)
        j.class_rps[c] = j.s().realtime.ClassRpsAt(static_cast<int>(c), now_);
    }
    services_.push_back(j.id);
    services_dirty_ = true;
  } else {
    Enqueue(j);
  }
}

void Engine::OnStop(AllocationId id, bool completed, bool lost_work, std::string reason,
                    DecisionType decision) {
  auto it = allocations_.find(id);
  if (it == allocations_.end()) {
    result_.event_status = NotFound("no live allocation " + std::to_string(id));
    return;
  }
  if (statement_.open) RecordStop(id);
  const Allocation a = it->second;
  allocations_.erase(it);
  small_elastic_.erase(id);
  state_.Release(a.placement);
  if (a.placement.mode == ShareMode::kFraction) {
    for (GpuIndex g : a.placement.gpus) {
      auto& on = shared_[g];
      on.erase(std::remove(on.begin(), on.end(), id), on.end());
      if (on.empty()) shared_.erase(g);
    }
    if (options_.interference) Reinterfere(a.placement);  // neighbours speed up at once
  }
  Job& job = jobs_[static_cast<size_t>(a.workload)];
  job.allocations.erase(std::find(job.allocations.begin(), job.allocations.end(), id));
  const bool engine_initiated = decision != DecisionType::kStart;
  if (!engine_initiated) CountRunEnd(job, a, /*failed=*/!completed);
  if (engine_initiated) {
    Decision d;
    d.type = decision;
    d.workload = a.workload;
    d.allocation = id;
    d.replica = a.replica;
    d.placement = a.placement;
    d.reason = std::move(reason);
    result_.decisions.push_back(std::move(d));
  }
  Stopped stopped{id, a.workload, completed, 0.0};
  if (job.is_service()) {
    result_.stopped.push_back(stopped);
    if (!completed && lost_work) ++job.failures;
    job.phase = job.allocations.empty() ? JobPhase::kPending : JobPhase::kRunning;
    services_dirty_ = true;
    return;
  }
  if (completed) {
    result_.stopped.push_back(stopped);
    job.phase = JobPhase::kDone;
    job.finished = now_;
    job.work_saved = job.s().work_seconds;
    return;
  }
  const StopOutcome out = StopSegment(job.s(), a.segment, now_);
  job.work_saved = out.work_saved;
  stopped.lost_gpu_ms =
      static_cast<double>(out.lost_ms) * static_cast<double>(a.placement.total_milli()) / 1000.0;
  job.lost_gpu_ms += stopped.lost_gpu_ms;
  result_.stopped.push_back(stopped);
  job.last_stopped = now_;
  if (lost_work && decision == DecisionType::kPreempt) ++job.preemptions;
  if (lost_work && decision == DecisionType::kStart) ++job.failures;
  if (decision == DecisionType::kRelease) return;  // cancelled: the caller finishes it
  job.phase = JobPhase::kPending;
  Enqueue(job);
}

void Engine::CountRunEnd(Job& job, const Allocation& a, bool failed) {
  if (!failed) {
    job.failed_in_a_row = 0;
    return;
  }
  const bool long_run = now_ - a.started >= options_.restart_backoff_reset;
  job.failed_in_a_row = long_run ? 1 : job.failed_in_a_row + 1;
  if (options_.restart_backoff <= 0) return;
  DurationMs wait = options_.restart_backoff;
  for (int i = 1; i < job.failed_in_a_row && wait < options_.restart_backoff_max; ++i) wait *= 2;
  job.restart_at = now_ + std::min(wait, options_.restart_backoff_max);
  job.backing_off = true;
}

// ---------------------------------------------------------------- queue

void Engine::Enqueue(Job& job) {
  if (job.queued) return;
  job.queued = true;
  job.seq = next_seq_++;
  job.queued_since = now_;
  job.key = policy_.queue_sort->Key(job, *this);
  if (policy_.queue_sort->dynamic() && !job.rekey && policy_.queue_sort->KeyChanges(job)) {
    job.rekey = true;
    rekey_.push_back(job.id);
  }
  queue_.insert(std::upper_bound(queue_.begin(), queue_.end(), job.id, QueueLess()), job.id);
}

void Engine::Dequeue(Job& job) {
  if (!job.queued) return;
  job.queued = false;
  job.waited += now_ - job.queued_since;
  auto it = std::find(queue_.begin(), queue_.end(), job.id);
  if (it != queue_.end()) queue_.erase(it);
}

void Engine::SortQueue() {
  if (policy_.queue_sort->dynamic()) {
    for (WorkloadId id : queue_) {
      Job& j = jobs_[static_cast<size_t>(id)];
      j.key = policy_.queue_sort->Key(j, *this);
    }
  }
  std::stable_sort(queue_.begin(), queue_.end(), QueueLess());
}

void Engine::RekeyQueue() {
  std::vector<WorkloadId> moved;
  size_t kept = 0;
  for (WorkloadId id : rekey_) {
    Job& j = jobs_[static_cast<size_t>(id)];
    if (!j.queued) {
      j.rekey = false;
      continue;
    }
    rekey_[kept++] = id;
    const auto key = policy_.queue_sort->Key(j, *this);
    if (key == j.key) continue;
    j.key = key;
    moved.push_back(id);
  }
  rekey_.resize(kept);
  if (moved.empty()) return;
  if (moved.size() * 8 > queue_.size()) {  // many moved: one sort is cheaper
    std::stable_sort(queue_.begin(), queue_.end(), QueueLess());
    return;
  }
  // Take the moved ones out (the rest stays in order), then insert each where it belongs.
  std::sort(moved.begin(), moved.end());
  std::erase_if(queue_,
                [&](WorkloadId id) { return std::binary_search(moved.begin(), moved.end(), id); });
  for (WorkloadId id : moved)
    queue_.insert(std::upper_bound(queue_.begin(), queue_.end(), id, QueueLess()), id);
}

// ---------------------------------------------------------------- services

void Engine::ScaleServices() {
  for (WorkloadId id : services_) {
    Job& job = jobs_[static_cast<size_t>(id)];
    if (job.phase == JobPhase::kCancelled || job.phase == JobPhase::kDone) continue;
    const RealtimeProfile& rt = job.s().realtime;
    // A variant that work has not produced yet runs nothing (and its producer's completion
    // makes it available in the cycle of that event).
    const bool unproduced =
        rt.is_member() && !VariantAvailable(rt, static_cast<size_t>(rt.variant));
    const int target = unproduced      ? 0
                       : policy_.scale ? policy_.scale->TargetReplicas(job, *this)
                                       : rt.ReplicasFor(job.demand_rps);
    job.scaled = true;
    if (target != job.target_replicas) {
      Decision d;
      d.type = DecisionType::kScale;
      d.workload = id;
      d.replicas = target;
      char buf[96];
      std::snprintf(buf, sizeof buf, "demand %.1f req/s needs %d replica(s)", job.demand_rps,
                    target);
      d.reason = buf;
      result_.decisions.push_back(std::move(d));
      job.target_replicas = target;
    }
    if (unproduced)
      job.route_share.clear();
    else if (rt.is_member() && policy_.scale)
      job.route_share = policy_.scale->Routing(job, *this);
    while (job.live_replicas() > job.target_replicas)
      OnStop(job.allocations.back(), false, false, "scaled down", DecisionType::kRelease);
    if (job.live_replicas() < job.target_replicas) {
      Enqueue(job);
    } else if (job.queued) {
      Dequeue(job);
    }
  }
  services_dirty_ = false;
}

}  // namespace airtime
