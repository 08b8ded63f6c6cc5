// Victims: which running allocations to stop so that a waiting workload fits.
//
// Shared by the policies that preempt (kai, lyra). The caller lists candidate allocations
// in the order it would rather stop them (its victim order) with what stopping each costs;
// FindVictims looks at every place the waiting job could go (one node for node-local
// shapes; the NVLink domain, rack or whole cluster for wider ones), takes candidates there
// in order until enough GPUs would be free, drops any that turn out unnecessary, and returns
// the cheapest such set over all places. Optional per-owner budgets cap how much may be
// taken from each owner (a queue's over-quota part).
//
// The search is conservative: a GPU counts as freed only when every allocation on it is a
// victim, and the job is assumed to need that many empty GPUs, so room a returned set frees
// is room the engine's placement finds (shares, MIG slices and, on one node, host CPU and
// memory included) unless a filter the caller did not express in `node_ok` refuses it.
// Pure: reads the engine, changes nothing. Not thread-safe (like the engine).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "airtime/engine/engine.h"

namespace airtime {

struct VictimCandidate {
  AllocationId id = kNoAllocation;
  double cost = 0;     // summed to compare sets (PreemptionCost, or a policy's own rank)
  int budget = -1;     // index into VictimQuery::budgets; -1: not capped
  int64_t amount = 0;  // what taking it draws from its budget (milli-GPU)
};

struct VictimQuery {
  std::vector<VictimCandidate> candidates;  // in the order they should be taken
  std::vector<int64_t> budgets;             // per budget index: the most that may be taken
  std::function<bool(NodeIndex)> node_ok;   // nodes the job may use (null: every node)
  std::vector<AllocationId> already;        // stopped anyway: count as freed, cost nothing
};

// A subset of the candidates whose stopping makes room for `job`, or nullopt when none does
// (or the job needs no GPU). An empty result means the room is there already.
std::optional<std::vector<AllocationId>> FindVictims(const Engine& engine, const Job& job,
                                                     const VictimQuery& query);

// What stopping `a` now throws away, in GPU-seconds: the work since its last checkpoint
// (the engine's progress model) plus the restart cost it pays to resume, times its GPUs.
double PreemptionCost(const Engine& engine, const Allocation& a);

// When each GPU of the cluster is expected free, into `out` (one entry per GPU): now, or
// the latest expected end of what holds it; never (kNever) under a service replica, when
// held on purpose (Engine::Hold), or when work outside airtime holds any of it
// (Engine::SetForeignShares).
void ExpectedGpuFree(const Engine& engine, std::vector<TimeMs>* out);

// From ExpectedGpuFree's `free`: when `k` GPUs of node `n` are expected free (kNever if they
// never are; `scratch` is working space), and which `k` GPUs of it free first (ties in
// index order).
TimeMs NodeFreesFor(const Engine& engine, const std::vector<TimeMs>& free, NodeIndex n, int k,
                    std::vector<TimeMs>* scratch);
std::vector<GpuIndex> FirstToFree(const Engine& engine, const std::vector<TimeMs>& free,
                                  NodeIndex n, int k);

// Whether an empty node `n` could take `shape` as far as its hardware goes (type, memory,
// MIG, GPU count for node-local shapes) and is up.
bool NodeCouldHost(const Engine& engine, const Shape& shape, NodeIndex n);

}  // namespace airtime
