#include "airtime/policies/airtime/gang_plugins.h"

#include <algorithm>

#include "airtime/base/time.h"
#include "airtime/engine/engine.h"
#include "airtime/policies/plugins/victims.h"

namespace airtime {
namespace {

// Whether `job` is a gang: two or more whole GPUs, not a service, able to fit somewhere.
bool IsGang(const Job& job) {
  const Shape& s = job.s().shape;
  return !job.is_service() && !job.never_fits && s.gpu_count >= 2 && s.mode == ShareMode::kWhole;
}

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
  engine.cycle_state().Publish<ReservationView>(this);
  const Cluster& c = engine.cluster();
  if (r_.gpu_reserved.size() != c.gpu_count()) r_.gpu_reserved.assign(c.gpu_count(), 0);
  if (last_gpus_.size() != c.gpu_count()) last_gpus_.assign(c.gpu_count(), 0);
  for (GpuIndex g : last_list_) last_gpus_[static_cast<size_t>(g)] = 0;
  last_list_.clear();
  for (NodeIndex n : r_.nodes) {
    const GpuIndex first = c.first_gpu(n);
    for (int i = 0; i < c.node(n).gpu_count; ++i) {
      const auto g = static_cast<size_t>(first + i);
      if (r_.gpu_reserved[g]) {
        last_gpus_[g] = 1;
        last_list_.push_back(first + i);
      }
      r_.gpu_reserved[g] = 0;
    }
  }
  const WorkloadId was_holder = r_.holder;
  const std::vector<NodeIndex> was_nodes = r_.nodes;
  r_.holder = kNoWorkload;
  r_.nodes.clear();
  r_.at = kNever;
  held_.clear();
  replica_waits_ = false;
  replica_queued_ = false;
  if (keep_replicas_off_)
    for (WorkloadId id : engine.services())
      replica_queued_ = replica_queued_ || engine.job(id).queued;
  // Replicas let in stay let in while the same gang holds the same node.
  auto settle = [&] {
    if (r_.holder != was_holder || r_.nodes != was_nodes) let_in_.clear();
  };

  if (max_node_gpus_ < 0) {
    max_node_gpus_ = 0;
    for (size_t n = 0; n < c.node_count(); ++n)
      max_node_gpus_ = std::max(max_node_gpus_, c.node(static_cast<NodeIndex>(n)).gpu_count);
  }

  // A job's queued_since does not change while it waits, and work joins the queue with the
  // time it joins: while the longest-waiting gang of the last full walk still waits, no gang
  // waits longer, and if it has not waited `wait_` none has (the walk below would find none
  // and ask for a cycle when it will have).
  if (oldest_ != kNoWorkload) {
    const Job& o = engine.job(oldest_);
    if (o.queued && o.queued_since == oldest_since_ && engine.now() - oldest_since_ < wait_) {
      settle();
      engine.WakeAt(oldest_since_ + wait_);
      return;
    }
    oldest_ = kNoWorkload;
  }

  // The first gang in queue order that has waited `wait_`; a cycle is asked for when the
  // next one will have.
  const Job* gang = nullptr;
  TimeMs wake = kNever;
  WorkloadId oldest = kNoWorkload;
  if (reservable_.size() < engine.job_count()) reservable_.resize(engine.job_count(), -1);
  for (WorkloadId id : engine.queue()) {
    int8_t& known = reservable_[static_cast<size_t>(id)];
    if (known == 0) continue;
    const Job& j = engine.job(id);
    if (known < 0) known = Reservable(j) ? 1 : 0;
    if (known == 0) continue;
    if (engine.now() - j.queued_since < wait_) {
      if (j.queued_since + wait_ < wake) {
        wake = j.queued_since + wait_;
        oldest = id;
      }
      continue;
    }
    gang = &j;
    break;
  }
  if (!gang) {
    settle();
    if (wake != kNever) {
      oldest_ = oldest;
      oldest_since_ = engine.job(oldest).queued_since;
      engine.WakeAt(wake);
    }
    return;
  }

  ExpectedGpuFree(engine, &gpu_free_);

  if (gang->s().shape.gpu_count > max_node_gpus_) {
    if (ReserveWide(engine, *gang)) last_holder_ = gang->id;
    settle();
    return;
  }
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
  r_.nodes = {best};
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
      r_.Holds(engine.cluster().gpu(placement.gpus[0]).node)) {
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
  return r_.Holds(node) && !job.is_service() && RunsPast(job, node, engine);
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
    return "the free GPUs of " + NodeNames(engine) + " (reserved for the " +
           std::to_string(gang.s().shape.gpu_count) + "-GPU gang '" + gang.s().name +
           "') are kept this cycle for a realtime replica that found no room elsewhere";
  return "it would still run at " + FormatTime(r_.at) + " on GPUs of " + NodeNames(engine) +
         " reserved for the " + std::to_string(gang.s().shape.gpu_count) + "-GPU gang '" +
         gang.s().name + "', waiting since " + FormatTime(gang.queued_since) +
         " (only work that ends by then may use them)";
}

std::string GangReserve::WaitNote(const Job& job, const Engine& engine) const {
  const Shape& s = job.s().shape;
  if (!IsGang(job) || max_node_gpus_ < 0) return {};
  if (!Reservable(job))
    return "a gang larger than any node gets no reservation" +
           std::string(wide_ && s.locality != Locality::kAny
                           ? " when it must stay within one " +
                                 std::string(LocalityName(s.locality))
                           : "") +
           ": it starts only once " + std::to_string(s.gpu_count) +
           " GPUs are free at the same time" +
           (!wide_ && s.locality == Locality::kAny
                ? " (the policy parameter wide_gangs=reserve gives it one)"
                : "");
  if (job.id == r_.holder)
    return "the GPUs of " + NodeNames(engine) + " are reserved for it (it has waited since " +
           FormatTime(job.queued_since) + "): expected free at " + FormatTime(r_.at) +
           ", and only work that ends by then may use them";
  const TimeMs eligible = job.queued_since + wait_;
  if (engine.now() < eligible)
    return "a gang still waiting at " + FormatTime(eligible) + " (after " + FormatDuration(wait_) +
           ") gets GPUs reserved " +
           (s.gpu_count > max_node_gpus_ ? "on the nodes that free them soonest"
                                         : "on the node that frees soonest");
  if (r_.holder != kNoWorkload)
    return "next in line for a reservation: one gang at a time, and '" +
           engine.job(r_.holder).s().name + "' holds it, ahead in queue order";
  return {};
}

bool GangReserve::Reservable(const Job& job) const {
  if (!IsGang(job)) return false;
  const Shape& s = job.s().shape;
  return s.gpu_count <= max_node_gpus_ || (wide_ && s.locality == Locality::kAny);
}

bool GangReserve::ReserveWide(const Engine& engine, const Job& gang) {
  const Cluster& c = engine.cluster();
  const Shape& shape = gang.s().shape;
  const auto k = static_cast<size_t>(shape.gpu_count);
  // The GPUs it could use, and when the k-th of them is expected free.
  std::vector<GpuIndex> gpus;
  for (size_t i = 0; i < c.node_count(); ++i) {
    const auto n = static_cast<NodeIndex>(i);
    if (!NodeCouldHost(engine, shape, n)) continue;
    for (int g = 0; g < c.node(n).gpu_count; ++g) {
      const GpuIndex gi = c.first_gpu(n) + g;
      if (gpu_free_[static_cast<size_t>(gi)] != kNever) gpus.push_back(gi);
    }
  }
  if (gpus.size() < k) return false;
  std::vector<TimeMs> times;
  for (GpuIndex g : gpus) times.push_back(gpu_free_[static_cast<size_t>(g)]);
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(k - 1), times.end());
  const TimeMs at = times[k - 1];
  // Of the GPUs free by then, those on the nodes with the most of them (the fewest nodes to
  // drain), last cycle's first so that the reservation stays put, then the fastest node.
  std::map<NodeIndex, int> per_node;
  std::erase_if(gpus, [&](GpuIndex g) { return gpu_free_[static_cast<size_t>(g)] > at; });
  const bool sticky = gang.id == last_holder_;
  std::map<NodeIndex, bool> was_reserved;
  for (GpuIndex g : gpus) {
    ++per_node[c.gpu(g).node];
    was_reserved[c.gpu(g).node] |= sticky && last_gpus_[static_cast<size_t>(g)];
  }
  std::stable_sort(gpus.begin(), gpus.end(), [&](GpuIndex a, GpuIndex b) {
    const NodeIndex na = c.gpu(a).node, nb = c.gpu(b).node;
    if (na != nb) {
      if (per_node[na] != per_node[nb]) return per_node[na] > per_node[nb];
      if (was_reserved[na] != was_reserved[nb]) return was_reserved[na];
      const double sa = gang.s().SpeedOn(c.node(na).gpu_type, engine.catalog());
      const double sb = gang.s().SpeedOn(c.node(nb).gpu_type, engine.catalog());
      if (sa != sb) return sa > sb;
      return na < nb;
    }
    const bool la = sticky && last_gpus_[static_cast<size_t>(a)];
    const bool lb = sticky && last_gpus_[static_cast<size_t>(b)];
    if (la != lb) return la;
    return gpu_free_[static_cast<size_t>(a)] < gpu_free_[static_cast<size_t>(b)];
  });
  gpus.resize(k);
  r_.holder = gang.id;
  r_.at = at;
  for (GpuIndex g : gpus) {
    r_.gpu_reserved[static_cast<size_t>(g)] = 1;
    const NodeIndex n = c.gpu(g).node;
    if (!r_.Holds(n)) r_.nodes.push_back(n);
  }
  std::sort(r_.nodes.begin(), r_.nodes.end());
  return true;
}

std::string GangReserve::NodeNames(const Engine& engine) const {
  std::string names;
  for (NodeIndex n : r_.nodes) names += (names.empty() ? "" : ", ") + engine.cluster().node(n).name;
  return names;
}

double ReservationScore::Score(const Job& job, NodeIndex node, const Engine& engine) const {
  const ReservationView* view = engine.cycle_state().Find<ReservationView>();
  if (view == nullptr || !view->reservation().Holds(node)) return 0;
  return view->RunsPast(job, node, engine) ? -1 : 0;
}

bool ReservedNodeFilter::Active(const Engine& engine) const {
  const ReservationView* view = engine.cycle_state().Find<ReservationView>();
  return view != nullptr && view->KeepsReplicasOff();
}

bool ReservedNodeFilter::Allows(const Job& job, NodeIndex node, const Engine& engine) const {
  const ReservationView* view = engine.cycle_state().Find<ReservationView>();
  return view == nullptr || !view->reservation().Holds(node) || !job.is_service() ||
         view->LetIn(job.id);
}

}  // namespace airtime
