#include "airtime/policies/gang_plugins.h"

#include <algorithm>

#include "airtime/base/time.h"
#include "airtime/engine/engine.h"
#include "airtime/policies/victims.h"

namespace airtime {
namespace {

// When `job` would finish if it started now on GPUs of `speed` (kNever for services).
TimeMs EndAt(const Job& job, double speed, const Engine& engine) {
  return EndIfStartedAt(job, engine.now(), speed);
}

}  // namespace

double PackScore::Score(const Job& job, NodeIndex node, const Engine& engine) const {
  const Node& n = engine.cluster().node(node);
  if (n.gpu_count == 0 || job.s().shape.gpu_count == 0 || !job.s().preemptible) return 0;
  const double capacity = 1000.0 * n.gpu_count;
  const double take =
      std::min(capacity, static_cast<double>(job.s().shape.TotalMilli(engine.catalog())));
  const double free = static_cast<double>(engine.state().node(node).free_milli);
  return (capacity - free + take) / capacity;
}

void GangReserve::BeforeAllocate(Engine& engine) {
  const Cluster& c = engine.cluster();
  if (r_.gpu_reserved.size() != c.gpu_count()) r_.gpu_reserved.assign(c.gpu_count(), 0);
  if (r_.node >= 0) {
    const GpuIndex first = c.first_gpu(r_.node);
    for (int i = 0; i < c.node(r_.node).gpu_count; ++i)
      r_.gpu_reserved[static_cast<size_t>(first + i)] = 0;
  }
  const WorkloadId was_holder = r_.holder;
  const NodeIndex was_node = r_.node;
  r_.holder = kNoWorkload;
  r_.node = -1;
  r_.at = kNever;
  held_.clear();
  replica_waits_ = false;
  replica_queued_ = false;
  if (keep_replicas_off_)
    for (WorkloadId id : engine.services())
      replica_queued_ = replica_queued_ || engine.job(id).queued;
  // Replicas let in stay let in while the same gang holds the same node.
  auto settle = [&] {
    if (r_.holder != was_holder || r_.node != was_node) let_in_.clear();
  };

  if (max_node_gpus_ < 0) {
    max_node_gpus_ = 0;
    for (size_t n = 0; n < c.node_count(); ++n)
      max_node_gpus_ = std::max(max_node_gpus_, c.node(static_cast<NodeIndex>(n)).gpu_count);
  }

  // The first gang in queue order that has waited `wait_`; a cycle is asked for when the
  // next one will have.
  const Job* gang = nullptr;
  TimeMs wake = kNever;
  for (WorkloadId id : engine.queue()) {
    const Job& j = engine.job(id);
    const Shape& s = j.s().shape;
    if (j.is_service() || j.never_fits || s.gpu_count < 2 || s.mode != ShareMode::kWhole ||
        s.gpu_count > max_node_gpus_)
      continue;
    if (engine.now() - j.queued_since < wait_) {
      wake = std::min(wake, j.queued_since + wait_);
      continue;
    }
    gang = &j;
    break;
  }
  if (!gang) {
    settle();
    if (wake != kNever) engine.WakeAt(wake);
    return;
  }

  ExpectedGpuFree(engine, &gpu_free_);

  const Shape& shape = gang->s().shape;
  NodeIndex best = -1;
  TimeMs best_at = kNever;
  double best_speed = 0;
  std::vector<TimeMs> times;
  for (size_t i = 0; i < c.node_count(); ++i) {
    const auto n = static_cast<NodeIndex>(i);
    // A gang is reserved one node: it must hold all of it (NodeCouldHost checks the count
    // only for node-local shapes).
    if (c.node(n).gpu_count < shape.gpu_count || !NodeCouldHost(engine, shape, n)) continue;
    const TimeMs at = NodeFreesFor(engine, gpu_free_, n, shape.gpu_count, &times);
    if (at == kNever) continue;
    const double speed = gang->s().SpeedOn(c.node(n).gpu_type, engine.catalog());
    // Earliest first; then keep last cycle's node (a reservation that hops between nodes
    // drains none); then the fastest.
    const bool sticky = gang->id == last_holder_ && n == last_node_;
    const bool best_sticky = gang->id == last_holder_ && best == last_node_;
    if (best < 0 || at < best_at ||
        (at == best_at && (sticky || (!best_sticky && speed > best_speed)))) {
      best = n;
      best_at = at;
      best_speed = speed;
    }
  }
  if (best < 0) {  // nothing running now ever makes room
    settle();
    return;
  }
  r_.holder = gang->id;
  r_.node = best;
  r_.at = best_at;
  settle();
  last_holder_ = gang->id;
  last_node_ = best;
  // The GPUs of the node that free first.
  for (GpuIndex g : FirstToFree(engine, gpu_free_, best, shape.gpu_count))
    r_.gpu_reserved[static_cast<size_t>(g)] = 1;
}

bool GangReserve::RunsPast(const Job& job, NodeIndex node, const Engine& engine) const {
  if (r_.holder == kNoWorkload || job.id == r_.holder) return false;
  if (job.is_service()) return true;  // a replica has no end
  return EndAt(job, job.s().SpeedOn(engine.cluster().node(node).gpu_type, engine.catalog()),
               engine) > r_.at;
}

bool GangReserve::Permit(const Job& job, const Placement& placement, const Engine& engine) {
  if (r_.holder == kNoWorkload || job.id == r_.holder || job.is_service()) return true;
  // What is free on the reserved node stays free for a replica that found no room elsewhere
  // this cycle: it tries the node in the next one.
  if (replica_waits_ && !placement.gpus.empty() &&
      engine.cluster().gpu(placement.gpus[0]).node == r_.node) {
    held_[job.id] = true;
    return false;
  }
  bool overlaps = false;
  for (GpuIndex g : placement.gpus) overlaps |= r_.gpu_reserved[static_cast<size_t>(g)] != 0;
  if (!overlaps) return true;
  double speed = 1e18;
  for (GpuIndex g : placement.gpus)
    speed = std::min(speed, job.s().SpeedOn(engine.cluster().gpu_type(g), engine.catalog()));
  if (EndAt(job, speed, engine) <= r_.at) return true;  // backfill: done before the gang
  held_[job.id] = false;
  return false;
}

bool GangReserve::RefusesNode(const Job& job, NodeIndex node, const Engine& engine) const {
  return node == r_.node && !job.is_service() && RunsPast(job, node, engine);
}

void GangReserve::Unplaced(const Job& job, const Engine&) {
  // Called for every workload left waiting: decide on the plug-in's own state first.
  if (!replica_queued_ || r_.holder == kNoWorkload || !job.is_service()) return;
  // Newly let in: it tries the reserved node next cycle. (One let in already found no room
  // there either.)
  if (let_in_.insert(job.id).second) replica_waits_ = true;
}

void GangReserve::AfterAllocate(Engine& engine) {
  // A replica that found no room elsewhere tries the reserved node at once.
  if (replica_waits_) engine.WakeAt(engine.now() + 1);
}

std::string GangReserve::WhyHeld(const Job& job, const Engine& engine) const {
  auto it = held_.find(job.id);
  if (it == held_.end() || r_.holder == kNoWorkload) return {};
  const Job& gang = engine.job(r_.holder);
  if (it->second)
    return "the free GPUs of " + engine.cluster().node(r_.node).name + " (reserved for the " +
           std::to_string(gang.s().shape.gpu_count) + "-GPU gang '" + gang.s().name +
           "') are kept this cycle for a realtime replica that found no room elsewhere";
  return "it would still run at " + FormatTime(r_.at) + " on GPUs of " +
         engine.cluster().node(r_.node).name + " reserved for the " +
         std::to_string(gang.s().shape.gpu_count) + "-GPU gang '" + gang.s().name +
         "', waiting since " + FormatTime(gang.queued_since) + " (only work that ends by then " +
         "may use them)";
}

std::string GangReserve::WaitNote(const Job& job, const Engine& engine) const {
  const Shape& s = job.s().shape;
  if (job.is_service() || job.never_fits || s.gpu_count < 2 || s.mode != ShareMode::kWhole ||
      max_node_gpus_ < 0)
    return {};
  if (s.gpu_count > max_node_gpus_)
    return "a gang larger than any node gets no reservation: it starts only once " +
           std::to_string(s.gpu_count) + " GPUs are free at the same time";
  if (job.id == r_.holder)
    return "the GPUs of " + engine.cluster().node(r_.node).name +
           " are reserved for it (it has waited since " + FormatTime(job.queued_since) +
           "): expected free at " + FormatTime(r_.at) +
           ", and only work that ends by then may use them";
  const TimeMs eligible = job.queued_since + wait_;
  if (engine.now() < eligible)
    return "a gang still waiting at " + FormatTime(eligible) + " (after " + FormatDuration(wait_) +
           ") gets GPUs reserved on the node that frees soonest";
  if (r_.holder != kNoWorkload)
    return "next in line for a reservation: one gang at a time, and '" +
           engine.job(r_.holder).s().name + "' holds it, ahead in queue order";
  return {};
}

double ReservationScore::Score(const Job& job, NodeIndex node, const Engine& engine) const {
  const GangReservation& r = reserve_->reservation();
  if (node != r.node) return 0;
  return reserve_->RunsPast(job, node, engine) ? -1 : 0;
}

bool ReservedNodeFilter::Allows(const Job& job, NodeIndex node, const Engine&) const {
  return node != reserve_->reservation().node || !job.is_service() || reserve_->LetIn(job.id);
}

}  // namespace airtime
