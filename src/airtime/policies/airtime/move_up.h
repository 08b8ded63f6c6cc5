// MoveUp: a running job moves to a faster GPU type that sits free.
//
// Which type a job runs on matters as much as when it starts (Gavel's point); a job placed
// on a slow type because nothing faster was free then keeps crawling there after faster
// GPUs free up. After each allocation pass, for every running preemptible job on whole GPUs
// of one node, MoveUp asks where the engine would place it now, among GPUs still free after
// the pass and of types no waiting work could use: a move never competes with the queue,
// nor fills a node that drains for a waiting gang. If that is a faster type and the job,
// stopped now (keeping its last checkpoint) and restarted there (paying its restart cost),
// would end strictly sooner than where it runs, it is stopped; the engine places it again
// in the next cycle, a millisecond later, on the node it was moved for (below), and the
// slow GPUs it leaves go to waiting work. The stop's reason names both ends.
//
// Never moved: services, fractions and MIG slices, multi-node gangs, elastic gangs, jobs
// still in their cold start or restart, and a job within its no-thrash payback since it
// started (3 x restart cost + checkpoint interval, as for preemption). GPUs a gang
// reservation drains are not taken. Largest saving of GPU time first; each free GPU is
// claimed by one move per cycle. The `airtime` policy runs it unless `move_up=off` or
// `preemption=off` (a move is a stop and a restart).
#pragma once

#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "airtime/engine/placement.h"
#include "airtime/engine/plugins.h"
#include "airtime/policies/airtime/cycle_views.h"

namespace airtime {

class GangReserve;

// A cycle plug-in (the moves) and a score plug-in: in the cycle after a move, the node the
// job was moved for scores 1 for that job and every other node 0, so that the job lands
// there even where other scores (packing) would put it back on the node it left. The
// policy owns one and reaches it through both interfaces.
class MoveUp : public CyclePlugin, public ScorePlugin {
 public:
  std::string_view name() const override { return "move-up"; }
  void AfterAllocate(Engine& engine) override;
  double Score(const Job& job, NodeIndex node, const Engine& engine) const override;

 private:
  std::unordered_map<WorkloadId, NodeIndex> target_;  // moved in the last cycle: where to
  std::vector<char> claimed_;  // scratch: per GPU, taken by a move this cycle
  std::unordered_map<int, std::optional<Placement>> found_;  // scratch: per fit class
};

}  // namespace airtime
