// What-if fit checks on a hypothetical ClusterState, for plug-ins that plan ahead.
//
// A plug-in copies the engine's ClusterState, releases allocations that will end (or that
// it considers preempting) and applies placements it is about to allow, then asks whether a
// shape would fit there. The rules mirror the engine's placement search: one node first,
// then, for a multi-GPU shape whose locality allows it, one NVLink domain, one rack or the
// whole cluster; reserved GPUs and down nodes take nothing. Filter plug-ins are not
// consulted (the policies that use this have none). Pure functions.
#pragma once

#include <vector>

#include "airtime/engine/cluster_state.h"
#include "airtime/model/workload.h"

namespace airtime {

// The nodes that could take `shape` (or a part of it, for a multi-node shape) in `state`,
// in index order; empty when the shape does not fit.
std::vector<NodeIndex> CandidateNodes(const ClusterState& state, const Shape& shape);

// Whether `shape` fits in `state`.
bool FitsIn(const ClusterState& state, const Shape& shape);

}  // namespace airtime
