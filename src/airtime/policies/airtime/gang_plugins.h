// The plug-ins of the `airtime` policy that keep gangs (multi-GPU jobs that need their GPUs
// on one node) from being stranded by a stream of small work.
//
// PackScore weighs speed against fragmentation (`pack`, 2 by default; docs/policies.md).
// Speed alone sends every small job to the fastest type and, among equally fast nodes,
// anywhere: small work ends up spread over all the fast nodes and no node ever drains for
// an 8-GPU gang (the mixed day's "enough by count but not in one place"). PackScore prefers
// the node left fullest by the placement (best fit), so small work fills nodes that are
// already partly used and lightly used nodes drain; weighted against SpeedScore, a much
// faster empty node still wins over a slow full one. It packs preemptible work only: that
// work's placement is not final (MoveUp takes it to a faster type once nothing waits for
// one; preemption makes it give way), while work that cannot be stopped holds its GPUs
// until it ends, and for it the fragmentation it leaves (FgdScore) and speed decide. On
// the FGD placement protocol, where every pod is non-preemptible, airtime thus places as
// FGD does; best fit there lost 2-3 points of allocation.
//
// GangReserve is EASY backfill (as `slurm` does it) for one starving gang: once a gang has
// waited `wait` (`gang_wait`, default 4h) and still finds no place, it gets the node that
// frees enough GPUs soonest (from the running allocations' expected ends; ties to the node
// reserved last cycle, then the fastest) and the GPUs there that free first. Until it
// starts, other work may take those GPUs only when it ends before the reservation's time.
// Realtime replicas are not held back by the permit (SLOs first), but a replica has no end,
// and one on the draining node puts the reservation back by hours. So ReservationScore
// steers work that would run past the reservation, replicas included, to other nodes
// wherever they fit, and with `keep_replicas_off` (under preemption) ReservedNodeFilter
// keeps replicas off the node while preemption can make room elsewhere, which loses minutes
// of small work: only a replica that found no room anywhere else (Unplaced) is let in, in
// the next cycle, 1 ms later, the node's free GPUs kept for it until then. Preemption makes
// no room on the reserved node for work that the reservation would then keep off it
// (RefusesNode): the freed GPUs would go to others, and the work would stop those next.
// One reservation at a time, the first starving gang in queue order; recomputed every cycle
// in O(GPUs + allocated GPUs), and only while a gang starves. Gangs larger than any node get
// no reservation unless `wide_gangs=reserve` and they may spread over nodes (locality any):
// then the GPUs that free first, on the nodes with the most of them (ReserveWide).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/engine/plugins.h"
#include "airtime/policies/airtime/cycle_views.h"

namespace airtime {

class PackScore : public ScorePlugin {
 public:
  std::string_view name() const override { return "pack"; }
  // The share of the node's GPU capacity in use once the job is placed there, in (0, 1];
  // 0 for work that is not preemptible.
  double Score(const Job& job, NodeIndex node, const Engine& engine) const override;
};

struct GangReservation {
  WorkloadId holder = kNoWorkload;
  // The nodes whose GPUs are reserved: one for a gang that fits a node, the fewest that
  // free enough GPUs in time for one wider than any node (`wide_gangs`).
  std::vector<NodeIndex> nodes;
  TimeMs at = kNever;              // when enough of their GPUs are expected free
  std::vector<char> gpu_reserved;  // per GPU of the cluster: reserved for the holder

  bool Holds(NodeIndex n) const { return std::find(nodes.begin(), nodes.end(), n) != nodes.end(); }
};

// Computes the reservation each cycle (a cycle plug-in) and vets starts against it (a
// permit plug-in); the policy owns one and reaches it through both interfaces.
class GangReserve : public CyclePlugin, public PermitPlugin, public ReservationView {
 public:
  // `keep_replicas_off`: a ReservedNodeFilter reads LetIn (see above). `wide`: gangs wider
  // than any node that may spread over nodes (locality any) get reservations too.
  GangReserve(DurationMs wait, bool keep_replicas_off, bool wide = false)
      : wait_(wait), keep_replicas_off_(keep_replicas_off), wide_(wide) {}
  std::string_view name() const override { return "gang-reserve"; }
  void BeforeAllocate(Engine& engine) override;
  void AfterAllocate(Engine& engine) override;
  bool Permit(const Job& job, const Placement& placement, const Engine& engine) override;
  // The reserved node, for work that would still run at the reservation's time (not for
  // replicas, which Permit lets in): preemption makes no room there for it. The whole node,
  // though Permit refuses only its reserved GPUs: victims are found by node, and GPUs freed
  // among the reserved ones would be refused.
  bool RefusesNode(const Job& job, NodeIndex node, const Engine& engine) const override;
  void Unplaced(const Job& job, const Engine& engine) override;
  std::string WhyHeld(const Job& job, const Engine& engine) const override;
  // For the gang holding the reservation: the node, and when its GPUs are expected free;
  // for another gang that can have one: when it may, or which gang holds it now; for a gang
  // that can have none (larger than any node), that it gets none.
  std::string WaitNote(const Job& job, const Engine& engine) const override;

  const GangReservation& reservation() const override { return r_; }
  // Whether `job` started now on `node` would still hold GPUs at the reservation's time
  // (always true for realtime replicas, which have no end; Permit lets them in all the same).
  bool RunsPast(const Job& job, NodeIndex node, const Engine& engine) const override;
  // Whether the replicas of `service` may use the reserved node: they found no room elsewhere.
  bool LetIn(WorkloadId service) const override { return let_in_.count(service) > 0; }
  // Whether replicas are kept off a reserved node in this cycle: with `keep_replicas_off`,
  // while a gang holds a node and a replica waits.
  bool KeepsReplicasOff() const override { return !r_.nodes.empty() && replica_queued_; }

 private:
  // Whether `job` is a gang this plug-in reserves for.
  bool Reservable(const Job& job) const;
  // The reservation for a gang wider than any node: the GPUs that free first, on the fewest
  // nodes (ties to last cycle's GPUs). False when not enough GPUs ever free.
  bool ReserveWide(const Engine& engine, const Job& gang);
  std::string NodeNames(const Engine& engine) const;

  DurationMs wait_;
  bool keep_replicas_off_;
  bool wide_;
  GangReservation r_;
  std::vector<char> last_gpus_;      // last cycle's gpu_reserved (wide reservations stick to it)
  std::vector<GpuIndex> last_list_;  // the GPUs set in last_gpus_
  NodeIndex last_node_ = -1;
  WorkloadId last_holder_ = kNoWorkload;
  std::vector<TimeMs> gpu_free_;  // scratch: per GPU, when it is expected free
  // Per workload: Reservable (1 or 0; -1 not asked yet; it does not change).
  std::vector<int8_t> reservable_;
  // The gang that had waited longest at the last walk of the whole queue that found none
  // waiting `wait_`, and since when it waits (kNoWorkload: walk the queue).
  WorkloadId oldest_ = kNoWorkload;
  TimeMs oldest_since_ = kNever;
  int max_node_gpus_ = -1;  // GPUs of the largest node (computed once)
  // Refused this cycle (for WhyHeld); true: to keep the reserved node's free GPUs for a
  // replica let in.
  std::map<WorkloadId, bool> held_;
  // Services whose replicas may use the reserved node (while the same gang holds the same
  // node), and whether one was let in this cycle: it tries the node in the next.
  std::set<WorkloadId> let_in_;
  bool replica_waits_ = false;
  bool replica_queued_ = false;  // with keep_replicas_off, a replica waits this cycle
};

// Keeps realtime replicas off the reserved node unless GangReserve let them in.
class ReservedNodeFilter : public FilterPlugin {
 public:
  std::string_view name() const override { return "gang-reservation"; }
  bool Allows(const Job& job, NodeIndex node, const Engine& engine) const override;
  // Only while a gang holds a node and a replica waits: the filter refuses nothing else.
  bool Active(const Engine& engine) const override;
  int FitClass(const Job& job) const override { return job.is_service() ? 1 : 0; }
};

// -1 on the reserved node for work that would still run at the reservation's time, else 0.
class ReservationScore : public ScorePlugin {
 public:
  std::string_view name() const override { return "avoid-gang-reservation"; }
  double Score(const Job& job, NodeIndex node, const Engine& engine) const override;
};

}  // namespace airtime
