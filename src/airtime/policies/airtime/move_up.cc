#include "airtime/policies/airtime/move_up.h"

#include <algorithm>
#include <cstdio>

#include "airtime/engine/engine.h"
#include "airtime/policies/airtime/gang_plugins.h"
#include "airtime/policies/airtime/value_plugins.h"

namespace airtime {
namespace {

struct Move {
  AllocationId id = kNoAllocation;
  Placement to;
  TimeMs stay_end = kNever, move_end = kNever;
  double saved_gpu_s = 0;  // GPU-seconds the move saves
};

}  // namespace

double MoveUp::Score(const Job& job, NodeIndex node, const Engine& /*engine*/) const {
  if (target_.empty()) return 0;
  auto it = target_.find(job.id);
  return it != target_.end() && it->second == node ? 1 : 0;
}

void MoveUp::AfterAllocate(Engine& engine) {
  const Cluster& c = engine.cluster();
  const TimeMs now = engine.now();
  target_.clear();  // this cycle's allocation pass has placed last cycle's moves
  // Only GPUs no waiting work could use are moved onto (what the ledger counts as
  // free_no_demand): a move never competes with the queue, nor fills a node that is
  // draining for a waiting gang. Among their types, the fastest in the catalogue: a job
  // already at least that fast has nothing to gain (the test that keeps busy clusters cheap).
  const size_t types = engine.nodes_of_type().size();
  bool any_free = false;
  for (size_t t = 0; t < types && !any_free; ++t)
    any_free = engine.state().free_milli_of_type(static_cast<GpuTypeId>(t)) >= 1000;
  if (!any_free) return;               // a full cluster: no queue walk
  std::vector<char> wanted(types, 0);  // some waiting work could use the type
  for (WorkloadId w : engine.queue()) {
    const Job& j = engine.job(w);
    if (j.never_fits) continue;
    if (j.s().shape.allowed_types.empty()) {
      wanted.assign(types, 1);
      break;
    }
    for (GpuTypeId t : j.s().shape.allowed_types) wanted[static_cast<size_t>(t)] = 1;
  }
  double free_top = 0;
  for (size_t t = 0; t < types; ++t) {
    const auto type = static_cast<GpuTypeId>(t);
    if (!wanted[t] && engine.state().free_milli_of_type(type) >= 1000)
      free_top = std::max(free_top, engine.catalog().type(type).relative_speed);
  }
  if (free_top <= 0) return;
  // A move does not drain GPUs reserved for a gang (when the policy reserves).
  const ReservationView* reservation = engine.cycle_state().Find<ReservationView>();
  std::vector<Move> moves;
  found_.clear();
  for (const auto& [id, a] : engine.allocations()) {
    const Job& job = engine.job(a.workload);
    const WorkloadSpec& spec = job.s();
    if (job.is_service() || !spec.preemptible || spec.shape.min_gpus > 0) continue;
    if (a.placement.mode != ShareMode::kWhole || a.placement.gpus.empty()) continue;
    if (a.ready_at > now || now - a.started < ValuePreempt::Payback(spec)) continue;
    const NodeIndex node = c.gpu(a.placement.gpus.front()).node;
    bool one_node = true;
    for (GpuIndex g : a.placement.gpus) one_node = one_node && c.gpu(g).node == node;
    if (!one_node) continue;
    const GpuTypeId type = c.node(node).gpu_type;
    const double speed = spec.SpeedOn(type, engine.catalog());
    // A faster free type is possible only if the catalogue's fastest free one is faster
    // than this type in the catalogue or the job has its own speeds.
    if (spec.speed_overrides.empty() && engine.catalog().type(type).relative_speed >= free_top)
      continue;
    // Jobs of one fit class fit alike: one search per class and cycle (the state does not
    // change until the moves below), so a cycle costs a search per class, not per job.
    auto [found, fresh] = found_.try_emplace(job.fit_class);
    if (fresh) found->second = engine.FindPlacement(job);
    const std::optional<Placement>& to = found->second;
    if (!to || to->gpus.empty()) continue;
    const GpuTypeId to_type = c.gpu_type(to->gpus.front());
    if (wanted[static_cast<size_t>(to_type)]) continue;
    const double to_speed = spec.SpeedOn(to_type, engine.catalog());
    if (to_speed <= speed) continue;
    if (reservation != nullptr) {
      const auto& reserved = reservation->reservation().gpu_reserved;
      bool drains = false;
      for (GpuIndex g : to->gpus)
        drains = drains || (static_cast<size_t>(g) < reserved.size() && reserved[g]);
      if (drains) continue;
    }
    Job moved = job;
    moved.work_saved = StopSegment(spec, a.segment, now).work_saved;
    const TimeMs move_end = EndIfStartedAt(moved, now, to_speed);
    if (move_end == kNever || a.expected_end == kNever || move_end >= a.expected_end) continue;
    const double gpus = static_cast<double>(a.placement.gpus.size());
    moves.push_back(
        {id, *to, a.expected_end, move_end, gpus * ToSeconds(a.expected_end - move_end)});
  }
  if (moves.empty()) return;
  std::stable_sort(moves.begin(), moves.end(),
                   [](const Move& x, const Move& y) { return x.saved_gpu_s > y.saved_gpu_s; });
  claimed_.assign(c.gpu_count(), 0);
  bool moved_any = false;
  for (const Move& m : moves) {
    bool free = true;
    for (GpuIndex g : m.to.gpus) free = free && !claimed_[static_cast<size_t>(g)];
    if (!free) continue;
    for (GpuIndex g : m.to.gpus) claimed_[static_cast<size_t>(g)] = 1;
    const Allocation* a = engine.allocation(m.id);
    const GpuTypeId from = c.gpu_type(a->placement.gpus.front());
    const GpuTypeId to = c.gpu_type(m.to.gpus.front());
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "moved to a faster GPU type: on %s it would end at %s; restarted from its last "
                  "checkpoint on %s (%s), at %s",
                  engine.catalog().type(from).name.c_str(), FormatTime(m.stay_end).c_str(),
                  engine.catalog().type(to).name.c_str(),
                  c.node(c.gpu(m.to.gpus.front()).node).name.c_str(),
                  FormatTime(m.move_end).c_str());
    target_[a->workload] = c.gpu(m.to.gpus.front()).node;
    engine.Preempt(m.id, buf);
    moved_any = true;
  }
  if (moved_any) engine.WakeAt(now + 1);
}

}  // namespace airtime
