// The allocation pass of a decision cycle: queue walk, placement search, starts.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <unordered_map>

#include "airtime/engine/engine.h"

namespace airtime {

int Engine::InternFitClass(const Job& job) {
  const Shape& s = job.s().shape;
  std::string key;
  key.reserve(64);
  key += std::to_string(s.gpu_count) + '|' + std::to_string(static_cast<int>(s.mode)) + '|' +
         std::to_string(s.gpu_milli) + '|' + s.mig_profile + '|' + std::to_string(s.memory_gb) +
         '|' + std::to_string(static_cast<int>(s.locality)) + '|' + std::to_string(s.cpu_milli) +
         '|' + std::to_string(s.memory_mib) + "|t";
  for (GpuTypeId t : s.allowed_types) key += ',' + std::to_string(t);
  key += "|p";
  for (GpuTypeId t : s.preferred_types) key += ',' + std::to_string(t);
  for (const auto& f : policy_.filters) key += "|f" + std::to_string(f->FitClass(job));
  auto [it, inserted] = fit_classes_.emplace(key, static_cast<int>(fit_classes_.size()));
  if (inserted) {
    FitClassShape& fs = fit_class_shapes_.emplace_back();
    fs.milli = s.TotalMilli(catalog());
    fs.whole_gpus = s.mode == ShareMode::kWhole ? s.gpu_count : 0;
    for (size_t t = 0; t < catalog().size(); ++t)
      if (s.AllowsType(static_cast<GpuTypeId>(t))) fs.types.push_back(static_cast<GpuTypeId>(t));
  }
  return it->second;
}

bool Engine::NodeAllowed(const Job& job, NodeIndex n) const {
  if (ignore_filters_) return true;
  for (const FilterPlugin* f : active_filters_)
    if (!f->Allows(job, n, *this)) return false;
  return true;
}

bool Engine::NodePermitted(const Job& job, NodeIndex n) const {
  if (!NodeAllowed(job, n)) return false;
  for (const auto& p : policy_.permits)
    if (p->RefusesNode(job, n, *this)) return false;
  return true;
}

void Engine::RefreshFilters() {
  active_filters_.clear();
  for (const auto& f : policy_.filters)
    if (f->Active(*this)) active_filters_.push_back(f.get());
}

std::optional<Placement> Engine::FindPlacement(const Job& job) { return Find(job, false); }

bool Engine::FitsNow(const Job& job) { return Find(job, true).has_value(); }

bool Engine::FitsIgnoringPolicy(const Job& job) {
  ignore_filters_ = true;
  const bool fits = Find(job, true).has_value();
  ignore_filters_ = false;
  return fits;
}

bool Engine::UsesOpenNodes(const Shape& shape) {
  // Whole GPUs and shares need a GPU with capacity free (MIG slices are left to the full
  // scan: a profile's slices are the catalogue's, not the state's).
  return shape.gpu_count > 0 && (shape.mode == ShareMode::kWhole ||
                                 (shape.mode == ShareMode::kFraction && shape.gpu_milli >= 1));
}

bool Engine::NoRoomForWhole(const Shape& shape) const {
  if (shape.mode != ShareMode::kWhole || shape.gpu_count <= 0) return false;
  // Free whole GPUs of the types it may use, on up nodes: fewer than it needs means no node
  // and no group of nodes can take it.
  int64_t free = 0;
  for (size_t t = 0; t < catalog().size(); ++t)
    if (shape.AllowsType(static_cast<GpuTypeId>(t)))
      free += state_.free_whole_of_type(static_cast<GpuTypeId>(t));
  return free < shape.gpu_count;
}

std::optional<Placement> Engine::Find(const Job& job, bool first_fit) {
  if (job.never_fits) return std::nullopt;
  const Shape& shape = ShapeOf(job);
  if (NoRoomForWhole(shape)) return std::nullopt;
  if (auto p = FindSingleNode(job, first_fit)) return p;
  if (shape.gpu_count <= 1 || shape.locality == Locality::kNode) return std::nullopt;
  return FindMultiNode(job);
}

std::optional<Placement> Engine::FindSingleNode(const Job& job, bool first_fit) {
  const Shape& shape = ShapeOf(job);
  const bool scored = !first_fit && !policy_.scores.empty();
  NodeIndex best = -1;
  // Tier scores, computed as far as a comparison needed them: of the best node so far, and
  // of the node under consideration.
  std::vector<double> best_scores, scores;
  auto tier_score = [&](NodeIndex n, size_t tier) {
    double v = 0;
    for (size_t i : score_tiers_[tier]) {
      const ScoreTerm& t = policy_.scores[i];
      v += t.weight * t.plugin->Score(job, n, *this);
    }
    return v;
  };
  auto consider = [&](NodeIndex n) {
    if (!state_.FitsOnNode(shape, n) || !NodeAllowed(job, n)) return false;
    if (!scored) {
      best = n;
      return true;  // first fit: stop here
    }
    scores.clear();
    int cmp = 0;  // > 0: n ranks above best
    if (best < 0) {
      cmp = 1;
    } else {
      for (size_t t = 0; t < score_tiers_.size() && cmp == 0; ++t) {
        if (best_scores.size() <= t) best_scores.push_back(tier_score(best, t));
        scores.push_back(tier_score(n, t));
        const double eps = 1e-9 * std::max(1.0, std::fabs(best_scores[t]));
        if (scores[t] > best_scores[t] + eps) cmp = 1;
        if (scores[t] < best_scores[t] - eps) cmp = -1;
      }
      // A tie on every tier: the node earlier in the seeded order.
      if (cmp == 0 && tie_rank_[static_cast<size_t>(n)] < tie_rank_[static_cast<size_t>(best)])
        cmp = 1;
    }
    if (cmp > 0) {
      best = n;
      best_scores.swap(scores);
    }
    return false;
  };
  // Only open nodes can take a shape with GPUs (ClusterState::open): visit those alone, in
  // the same ascending order as a scan of all nodes (the others fail FitsOnNode).
  const bool open_only = UsesOpenNodes(shape);
  auto scan = [&](const std::vector<GpuTypeId>& types) {
    if (open_only) {
      state_.ForEachOpenNode([&](NodeIndex n) {
        if (!types.empty() &&
            std::find(types.begin(), types.end(), cluster_->node(n).gpu_type) == types.end())
          return false;
        return consider(n);
      });
      return;
    }
    if (types.size() == 1 && shape.gpu_count > 0) {
      for (NodeIndex n : nodes_of_type_[static_cast<size_t>(types[0])])
        if (consider(n)) return;
      return;
    }
    for (size_t n = 0; n < cluster_->node_count(); ++n) {
      const Node& node = cluster_->node(static_cast<NodeIndex>(n));
      if (shape.gpu_count > 0 && !types.empty() &&
          std::find(types.begin(), types.end(), node.gpu_type) == types.end())
        continue;
      if (consider(static_cast<NodeIndex>(n))) return;
    }
  };
  if (!shape.preferred_types.empty()) scan(shape.preferred_types);
  if (best < 0) scan(shape.allowed_types);
  if (best < 0) return std::nullopt;
  Placement p;
  p.host_node = best;
  if (shape.gpu_count > 0) {
    bool chosen = false;
    if (scored) {
      for (const auto& scorer : policy_.scores) {
        if (scorer.plugin->SelectGpus(job, best, *this, &p.gpus)) {
          chosen = true;
          break;
        }
        p.gpus.clear();
      }
    }
    if (!chosen) state_.SelectOnNode(shape, best, shape.gpu_count, &p.gpus);
  }
  state_.FillPlacement(shape, &p);
  return p;
}

std::optional<Placement> Engine::FindMultiNode(const Job& job) {
  const Shape& shape = ShapeOf(job);
  // Group the nodes that can contribute by NVLink domain, rack, or the whole cluster.
  std::map<int32_t, std::vector<std::pair<int, NodeIndex>>> groups;
  std::map<int32_t, int> units;
  auto add = [&](NodeIndex n) {
    const int u = state_.UnitsOnNode(shape, n);
    if (u == 0 || !NodeAllowed(job, n)) return false;
    const int32_t g = shape.locality == Locality::kNvlinkDomain ? cluster_->domain_of(n)
                      : shape.locality == Locality::kRack       ? cluster_->rack_of(n)
                                                                : 0;
    groups[g].push_back({u, n});
    units[g] += u;
    return false;
  };
  if (UsesOpenNodes(shape)) {
    state_.ForEachOpenNode(add);  // a closed node has no units to give
  } else {
    for (size_t i = 0; i < cluster_->node_count(); ++i) add(static_cast<NodeIndex>(i));
  }
  int32_t best = -1;
  int best_left = 0;
  for (const auto& [g, u] : units) {
    if (u < shape.gpu_count) continue;
    if (best < 0 || u - shape.gpu_count < best_left) {
      best = g;
      best_left = u - shape.gpu_count;
    }
  }
  if (best < 0) return std::nullopt;
  auto& nodes = groups[best];
  // Fewest nodes: take from the fullest-free nodes first.
  std::stable_sort(nodes.begin(), nodes.end(), [](auto& a, auto& b) { return a.first > b.first; });
  Placement p;
  int need = shape.gpu_count;
  for (const auto& [u, n] : nodes) {
    if (need == 0) break;
    need -= state_.SelectOnNode(shape, n, std::min(u, need), &p.gpus);
  }
  if (need > 0) return std::nullopt;
  p.host_node = cluster_->gpu(p.gpus[0]).node;
  state_.FillPlacement(shape, &p);
  return p;
}

void Engine::Start(Job& job, Placement placement, AllocationId resized_from) {
  Allocation a;
  a.id = next_allocation_++;
  a.workload = job.id;
  a.placement = std::move(placement);
  a.started = now_;
  // Slowed by the work already sharing its GPU (a job's speed, a replica's capacity).
  if (options_.interference && a.placement.mode == ShareMode::kFraction)
    for (GpuIndex g : a.placement.gpus) a.interference *= InterferenceOn(a, g);
  if (job.is_service()) {
    a.replica = job.next_replica++;
    a.ready_at = now_ + job.s().realtime.cold_start;
  } else {
    double speed = 1.0;
    if (!a.placement.gpus.empty()) {
      speed = 1e18;
      for (GpuIndex g : a.placement.gpus)
        speed = std::min(speed, job.s().SpeedOn(cluster_->gpu_type(g), catalog()));
      // An elastic job on fewer GPUs than it asked for advances proportionally slower.
      if (job.s().shape.min_gpus > 0)
        speed *= static_cast<double>(a.placement.gpus.size()) / job.s().shape.gpu_count;
    }
    a.segment.start = now_;
    a.segment.overhead = job.work_saved > 0 ? job.s().restart_cost : 0;
    a.segment.speed = speed * a.interference;
    a.segment.work_at_start = job.work_saved;
    a.ready_at = now_ + a.segment.overhead;
    a.expected_end = SegmentEnd(job.s(), a.segment);
  }
  state_.Apply(a.placement);
  job.allocations.push_back(a.id);
  if (job.s().shape.min_gpus > 0 &&
      static_cast<int>(a.placement.gpus.size()) < job.s().shape.gpu_count)
    small_elastic_.insert(a.id);
  if (job.first_start == kNever) job.first_start = now_;
  job.phase = JobPhase::kRunning;
  job.wait = {};

  Decision d;
  d.type = resized_from == kNoAllocation ? DecisionType::kStart : DecisionType::kResize;
  d.resized_from = resized_from;
  d.workload = job.id;
  d.allocation = a.id;
  d.replica = a.replica;
  d.placement = a.placement;
  d.ready_at = a.ready_at;
  d.expected_end = a.expected_end;
  d.waited = now_ - job.queued_since;
  d.reason = policy_.name;
  result_.decisions.push_back(std::move(d));
  const AllocationId id = a.id;
  const Allocation& placed = allocations_.emplace(id, std::move(a)).first->second;
  if (placed.placement.mode == ShareMode::kFraction) {
    for (GpuIndex g : placed.placement.gpus) shared_[g].push_back(id);
    if (options_.interference) Reinterfere(placed.placement);  // its neighbours slow down
  }
}

double Engine::InterferenceOn(const Allocation& a, GpuIndex gpu) const {
  double f = 1.0;
  auto it = shared_.find(gpu);
  if (it == shared_.end()) return f;
  const std::string& mine = jobs_[static_cast<size_t>(a.workload)].s().family;
  for (AllocationId other : it->second) {
    if (other == a.id) continue;
    const Allocation& o = allocations_.at(other);
    f *= options_.interference->Factor(mine, jobs_[static_cast<size_t>(o.workload)].s().family);
  }
  return f;
}

void Engine::Reinterfere(const Placement& p) {
  for (GpuIndex g : p.gpus) {
    auto it = shared_.find(g);
    if (it == shared_.end()) continue;
    // Every share of one family on this GPU sees the same others (all but one of its own
    // family): on a GPU shared by many (1,000 shares of 0.001), each family's factor is
    // found once, not once per share (a placement cost the square of the shares, and a
    // one-line workload file hung the replay).
    const bool many = it->second.size() > 16;
    std::unordered_map<std::string_view, double> by_family;
    for (AllocationId id : it->second) {
      Allocation& a = allocations_.at(id);
      double f = 1.0;
      if (many && a.placement.gpus.size() == 1) {
        const std::string& family = jobs_[static_cast<size_t>(a.workload)].s().family;
        auto [known, fresh] = by_family.try_emplace(family, 1.0);
        if (fresh) known->second = InterferenceOn(a, g);
        f = known->second;
      } else {
        for (GpuIndex h : a.placement.gpus) f *= InterferenceOn(a, h);
      }
      // The grouped product may differ from the one a start computed in its last bit: no
      // change is a change below 1e-12.
      if (f == a.interference || (many && std::abs(f - a.interference) <= 1e-12 * a.interference))
        continue;
      const Job& job = jobs_[static_cast<size_t>(a.workload)];
      if (!job.is_service()) {
        // The speed changes from now on; the progress so far stands.
        const double speed = a.segment.SpeedAt(now_) / a.interference * f;
        if (now_ <= a.segment.start) {
          a.segment.speed = speed;
        } else {
          a.segment.speed_changes.emplace_back(now_, speed);
        }
        a.expected_end = SegmentEnd(job.s(), a.segment);
        Decision d;
        d.type = DecisionType::kRetime;
        d.workload = a.workload;
        d.allocation = a.id;
        d.replica = a.replica;
        d.placement = a.placement;
        d.expected_end = a.expected_end;
        char why[96];
        std::snprintf(why, sizeof why, "co-located work changed: speed x%.2f", f);
        d.reason = why;
        result_.decisions.push_back(std::move(d));
      }
      a.interference = f;
    }
  }
}

void Engine::AllocatePass() {
  if (policy_.queue_sort->dynamic()) RekeyQueue();
  class_fit_.assign(fit_classes_.size(), 0);
  preempt_failed_.assign(fit_classes_.size(), 0);
  std::vector<std::pair<int, WorkloadId>> blocked;  // (group, head)
  auto head_of = [&](int group) -> WorkloadId {
    for (const auto& [g, head] : blocked)
      if (g == group) return head;
    return kNoWorkload;
  };
  std::vector<WorkloadId> pending;
  pending.swap(queue_);  // workloads preempted during the pass land in queue_
  std::vector<WorkloadId> kept;
  kept.reserve(pending.size());
  for (size_t i = 0; i < pending.size(); ++i) {
    PrefetchJob(pending, i);
    const WorkloadId id = pending[i];
    Job& job = jobs_[static_cast<size_t>(id)];
    if (!job.queued) continue;
    if (job.backing_off) {
      if (now_ < job.restart_at) {
        // Its last run failed: it waits out its backoff, and blocks no one meanwhile.
        job.wait = {};
        job.wait.reason = WaitReason::kBackoff;
        WakeAt(job.restart_at);
        kept.push_back(id);
        continue;
      }
      job.backing_off = false;
    }
    const int group = policy_.order ? policy_.order->BlockingGroup(job, *this) : -1;
    if (group >= 0) {
      if (WorkloadId head = head_of(group); head != kNoWorkload) {
        job.wait = {};
        job.wait.reason = WaitReason::kBehindHead;
        job.wait.blocker = head;
        kept.push_back(id);
        continue;
      }
    }
    if (job.never_fits) {
      kept.push_back(id);
      continue;
    }
    bool satisfied = false;
    bool refused = false;
    while (true) {
      const size_t fc = static_cast<size_t>(job.fit_class);
      std::optional<Placement> p;
      if (class_fit_[fc] != 2) p = FindPlacement(job);
      if (!p && job.elastic) p = FindElastic(job, job.s().shape.min_gpus);
      const bool ask = !p && policy_.preempt && now_ >= job.preempt_retry_at &&
                       !(preempt_failed_[fc] && policy_.preempt->monotone_in_queue_order());
      bool made_room = false;
      if (ask) {
        // The victims MakeRoom stops are kept only if this workload then starts.
        BeginStatement();
        if (policy_.preempt->MakeRoom(job, *this)) {
          p = FindPlacement(job);
          made_room = true;
        }
        if (!p) {
          RollbackStatement();
          preempt_failed_[fc] = 1;
        } else {
          class_fit_.assign(fit_classes_.size(), 0);
          preempt_failed_.assign(fit_classes_.size(), 0);
        }
      }
      if (!p) {
        class_fit_[fc] = 2;
        for (auto& permit : policy_.permits) permit->Unplaced(job, *this);
        break;
      }
      for (auto& permit : policy_.permits) refused = refused || !permit->Permit(job, *p, *this);
      if (refused) {
        // No wake is asked for: like any waiting work it is tried at the next cycle after
        // that (a wake would keep a replay with no horizon going for ever).
        if (made_room) {
          RollbackStatement();
          job.preempt_retry_at = now_ + policy_.preempt->RetryAfterRefusal(job);
        }
        break;
      }
      if (made_room) CommitStatement();
      Start(job, std::move(*p));
      if (!job.is_service() || job.live_replicas() >= job.target_replicas) {
        satisfied = true;
        break;
      }
    }
    if (satisfied) {
      job.queued = false;
      job.waited += now_ - job.queued_since;
      continue;
    }
    job.wait = {};
    job.wait.reason = refused ? WaitReason::kPolicy : WaitReason::kNoFit;
    job.wait.fits_now = refused;  // a place was found; the policy, not the hardware, held it
    if (group >= 0) blocked.push_back({group, id});
    kept.push_back(id);
  }
  if (!queue_.empty()) {
    // Both are in order: what waited on, and what was preempted during the pass.
    const auto middle = static_cast<std::ptrdiff_t>(kept.size());
    kept.insert(kept.end(), queue_.begin(), queue_.end());
    queue_.swap(kept);
    std::inplace_merge(queue_.begin(), queue_.begin() + middle, queue_.end(), QueueLess());
  } else {
    queue_.swap(kept);
  }
}

WaitInfo Engine::FreeInfo(const Job& job) const {
  WaitInfo info = job.wait;
  info.free_compatible = 0;
  info.free_compatible_milli = 0;
  const Shape& s = job.s().shape;
  for (size_t t = 0; t < catalog().size(); ++t) {
    if (!s.AllowsType(static_cast<GpuTypeId>(t))) continue;
    info.free_compatible += state_.free_whole_of_type(static_cast<GpuTypeId>(t));
    info.free_compatible_milli += state_.free_milli_of_type(static_cast<GpuTypeId>(t));
  }
  return info;
}

void Engine::ExplainWaiting() {
  result_.waiting.clear();
  result_.waiting.reserve(queue_.size());
  class_fit_.assign(fit_classes_.size(), 0);
  std::vector<int8_t> fit_free(fit_classes_.size(), 0);  // ignoring the policy: 1 fits, 2 not
  std::vector<int> free_cache(fit_classes_.size(), -1);
  std::vector<int64_t> milli_cache(fit_classes_.size(), 0);
  for (size_t i = 0; i < queue_.size(); ++i) {
    PrefetchJob(queue_, i);
    const WorkloadId id = queue_[i];
    Job& job = jobs_[static_cast<size_t>(id)];
    const size_t fc = static_cast<size_t>(job.fit_class);
    if (free_cache[fc] < 0) {
      WaitInfo f = FreeInfo(job);
      free_cache[fc] = f.free_compatible;
      milli_cache[fc] = f.free_compatible_milli;
    }
    job.wait.free_compatible = free_cache[fc];
    job.wait.free_compatible_milli = milli_cache[fc];
    // Would it fit if the policy's order and filters let it? Then the policy, not the
    // hardware, keeps it waiting.
    const bool ask = job.wait.reason == WaitReason::kBehindHead ||
                     (job.wait.reason == WaitReason::kNoFit && !active_filters_.empty());
    if (ask) {
      if (fit_free[fc] == 0) fit_free[fc] = FitsIgnoringPolicy(job) ? 1 : 2;
      job.wait.fits_now = fit_free[fc] == 1;
      job.wait.fits_in_policy = false;
      if (job.wait.fits_now && job.wait.reason == WaitReason::kBehindHead) {
        if (class_fit_[fc] == 0) class_fit_[fc] = FitsNow(job) ? 1 : 2;
        job.wait.fits_in_policy = class_fit_[fc] == 1;
      }
    }
    result_.waiting.emplace_back(id, job.wait);
  }
}

// ---------------------------------------------------------------- elastic jobs

std::optional<Placement> Engine::FindWithCount(const Job& job, int count) {
  Shape shape = job.s().shape;
  shape.gpu_count = count;
  shape_override_ = &shape;
  auto p = Find(job, false);
  shape_override_ = nullptr;
  return p;
}

std::optional<Placement> Engine::FindElastic(const Job& job, int at_least) {
  for (int k = job.s().shape.gpu_count - 1; k >= at_least; --k)
    if (auto p = FindWithCount(job, k)) return p;
  return std::nullopt;
}

void Engine::GrowElastic() {
  if (small_elastic_.empty()) return;
  const std::vector<AllocationId> small(small_elastic_.begin(), small_elastic_.end());
  for (AllocationId id : small) {
    if (!allocations_.count(id)) {
      small_elastic_.erase(id);
      continue;
    }
    const Allocation old = allocations_.at(id);
    Job& job = jobs_[static_cast<size_t>(old.workload)];
    const int have = static_cast<int>(old.placement.gpus.size());
    // Look for more GPUs counting its own as free; keep them if nothing bigger fits.
    state_.Release(old.placement);
    std::optional<Placement> p = FindWithCount(job, job.s().shape.gpu_count);
    if (!p) p = FindElastic(job, have + 1);
    state_.Apply(old.placement);
    if (!p) continue;
    // A resize restarts from saved progress and pays the restart cost: only when the time
    // it saves on the remaining work is larger.
    const double progress = old.segment.work_at_start + SegmentWork(old.segment, now_);
    const double remaining = std::max(0.0, job.s().work_seconds - progress);
    const double speed = old.segment.SpeedAt(now_);
    const double new_speed = speed * static_cast<double>(p->gpus.size()) / have;
    const double saved_s = remaining / speed - remaining / new_speed;
    if (saved_s <= ToSeconds(job.s().restart_cost)) continue;
    allocations_.erase(id);
    small_elastic_.erase(id);
    state_.Release(old.placement);
    job.allocations.erase(std::find(job.allocations.begin(), job.allocations.end(), id));
    result_.stopped.push_back({id, job.id, false, 0.0});
    job.work_saved = std::min(job.s().work_seconds, progress);
    Start(job, std::move(*p), id);
  }
}

// ---------------------------------------------------------------- preemption statement

void Engine::BeginStatement() {
  statement_ = Statement{};
  statement_.open = true;
  statement_.decisions = result_.decisions.size();
  statement_.stopped = result_.stopped.size();
  statement_.services_dirty = services_dirty_;
}

void Engine::CommitStatement() { statement_ = Statement{}; }

void Engine::RecordStop(AllocationId id) {
  const Allocation& a = allocations_.at(id);
  StopUndo u;
  u.allocation = a;
  u.job = jobs_[static_cast<size_t>(a.workload)];
  u.small_elastic = small_elastic_.count(id) > 0;
  if (a.placement.mode == ShareMode::kFraction) {
    for (GpuIndex g : a.placement.gpus) {
      auto it = shared_.find(g);
      if (it == shared_.end()) continue;
      u.shared.emplace_back(g, it->second);
      for (AllocationId other : it->second)
        if (other != id) u.neighbours.push_back(allocations_.at(other));
    }
  }
  statement_.undo.push_back(std::move(u));
}

void Engine::RollbackStatement() {
  if (!statement_.open) return;
  for (auto it = statement_.undo.rbegin(); it != statement_.undo.rend(); ++it) {
    StopUndo& u = *it;
    const AllocationId id = u.allocation.id;
    state_.Apply(u.allocation.placement);
    allocations_[id] = std::move(u.allocation);
    if (u.small_elastic) small_elastic_.insert(id);
    for (Allocation& n : u.neighbours) allocations_[n.id] = std::move(n);
    for (auto& [gpu, ids] : u.shared) shared_[gpu] = std::move(ids);
    Job& job = jobs_[static_cast<size_t>(u.job.id)];
    if (job.queued && !u.job.queued) {
      // OnStop queued it again: take it out of the queue and the rekey list.
      queue_.erase(std::remove(queue_.begin(), queue_.end(), job.id), queue_.end());
      if (job.rekey && !u.job.rekey)
        rekey_.erase(std::remove(rekey_.begin(), rekey_.end(), job.id), rekey_.end());
    }
    job = std::move(u.job);
  }
  result_.decisions.erase(
      result_.decisions.begin() + static_cast<std::ptrdiff_t>(statement_.decisions),
      result_.decisions.end());
  result_.stopped.erase(result_.stopped.begin() + static_cast<std::ptrdiff_t>(statement_.stopped),
                        result_.stopped.end());
  services_dirty_ = statement_.services_dirty;
  statement_ = Statement{};
}

// ---------------------------------------------------------------- plug-in actions

void Engine::DeclareHeadroom(GpuTypeId type, int64_t milli) {
  if (headroom_.empty()) headroom_.assign(catalog().size(), 0);
  headroom_[static_cast<size_t>(type)] += std::max<int64_t>(0, milli);
}

void Engine::Preempt(AllocationId allocation, std::string reason) {
  OnStop(allocation, false, true, std::move(reason), DecisionType::kPreempt);
}

void Engine::Hold(const std::vector<GpuIndex>& gpus, TimeMs until, std::string reason) {
  Decision d;
  d.type = DecisionType::kHold;
  d.placement.gpus = gpus;
  d.until = until;
  d.reason = std::move(reason);
  for (GpuIndex g : gpus) state_.SetReserved(g, true);
  result_.decisions.push_back(std::move(d));
}

void Engine::WakeAt(TimeMs at) {
  if (at <= now_ + 1) {
    relook_asked_ = true;
    return;
  }
  result_.wake_at = std::min(result_.wake_at, at);
}

void Engine::GrantRelook(const Event& event) {
  // A chain of re-looks: this cycle is the one the last re-look asked for.
  const bool chained = event.type == EventType::kTimer && event.at == relook_at_;
  relooks_ = chained ? relooks_ + 1 : 0;
  relook_at_ = kNever;
  if (!relook_asked_ || relooks_ >= kMaxRelooks) return;
  relook_at_ = now_ + 1;
  result_.wake_at = relook_at_;
}

void Engine::Unhold(const std::vector<GpuIndex>& gpus, std::string reason) {
  Decision d;
  d.type = DecisionType::kUnhold;
  d.placement.gpus = gpus;
  d.reason = std::move(reason);
  for (GpuIndex g : gpus) state_.SetReserved(g, false);
  result_.decisions.push_back(std::move(d));
}

}  // namespace airtime
