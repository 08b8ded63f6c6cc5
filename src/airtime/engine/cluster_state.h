// ClusterState: what is free and what is held on every GPU and node, right now.
//
// It answers the questions placement asks in O(1) per node (does this shape fit here?) by
// keeping per-node summaries (free whole GPUs, largest free share, free MIG slices, free CPU
// and memory) in step with every Apply and Release. It knows nothing about workloads or
// policies: callers pass shapes and placements. Not thread-safe; owned by the engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "airtime/engine/placement.h"
#include "airtime/model/cluster.h"
#include "airtime/model/workload.h"

namespace airtime {

struct GpuSlot {
  int16_t used_milli = 0;  // whole = 1000; fractions add up; MIG slices counted as sevenths
  int8_t mig_slices = 0;   // compute slices held by MIG instances (of 7)
  int8_t holders = 0;      // allocations on this GPU
  ShareMode mode = ShareMode::kWhole;  // meaningful while holders > 0
  bool reserved = false;               // held free on purpose (headroom); not offered to placement
  // Held by work outside airtime (a Slurm job of others), in milli-GPUs: 1000, the whole GPU
  // (not offered to placement); less, a share (Slurm's gres/shard), beside which only
  // fractions fit, in what is left of its capacity and (pro rata) of its memory.
  int16_t foreign_milli = 0;
  float memory_used_gb = 0;

  bool foreign_whole() const { return foreign_milli >= 1000; }
  // Capacity neither airtime's allocations nor outside work hold.
  int free_milli() const { return std::max(0, 1000 - used_milli - foreign_milli); }
};

struct NodeSummary {
  bool up = true;
  int free_whole = 0;       // GPUs with nothing on them, not reserved, no foreign share
  int max_free_milli = 0;   // largest share free on one fraction-mode or empty GPU
  int max_free_slices = 0;  // largest MIG slice count free on one GPU (MIG nodes)
  int free_milli = 0;       // GPU capacity free on the node, in milli-GPUs (not reserved)
  int64_t cpu_free = 0;
  int64_t memory_free = 0;
};

class ClusterState {
 public:
  explicit ClusterState(const Cluster& cluster);

  const Cluster& cluster() const { return *cluster_; }
  const GpuSlot& gpu(GpuIndex g) const { return gpus_[static_cast<size_t>(g)]; }
  const NodeSummary& node(NodeIndex n) const { return nodes_[static_cast<size_t>(n)]; }
  // Free whole GPUs per type (up nodes, not reserved).
  int free_whole_of_type(GpuTypeId t) const { return free_whole_by_type_[static_cast<size_t>(t)]; }
  int64_t free_milli_of_type(GpuTypeId t) const {
    return free_milli_by_type_[static_cast<size_t>(t)];
  }
  // Free capacity on reserved GPUs of up nodes, and all capacity of down nodes, per type.
  int64_t reserved_milli_of_type(GpuTypeId t) const {
    return reserved_milli_by_type_[static_cast<size_t>(t)];
  }
  // Capacity that others' work holds (SetForeign), per type: up nodes only; on a GPU held
  // whole, what airtime's allocations do not hold of it.
  int64_t foreign_milli_of_type(GpuTypeId t) const {
    return foreign_milli_by_type_[static_cast<size_t>(t)];
  }
  int64_t down_milli_of_type(GpuTypeId t) const {
    return down_milli_by_type_[static_cast<size_t>(t)];
  }
  int64_t allocated_milli() const { return allocated_milli_; }

  // Whether node `n` has GPU capacity free for placement: up, and some GPU capacity not
  // used and not reserved. Every shape with GPUs fits only on such nodes, so a placement
  // search visits these alone (in a full cluster, a few).
  bool open(NodeIndex n) const {
    const auto i = static_cast<size_t>(n);
    return (open_bits_[i / 64] >> (i % 64)) & 1;
  }
  // Calls f(n) for every open node in ascending index order until f returns true; returns
  // whether one did.
  template <typename F>
  bool ForEachOpenNode(F&& f) const {
    for (size_t w = 0; w < open_bits_.size(); ++w) {
      for (uint64_t bits = open_bits_[w]; bits != 0; bits &= bits - 1) {
        const auto n = static_cast<NodeIndex>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
        if (f(n)) return true;
      }
    }
    return false;
  }

  // Whether `shape` fits on node `n` alone, counting GPUs, shares, slices, CPU and memory.
  bool FitsOnNode(const Shape& shape, NodeIndex n) const;
  // Whether a single GPU can take one unit of `shape` (a share, a slice or a whole GPU).
  bool GpuTakes(const Shape& shape, GpuIndex g) const;
  // How many units of `shape` node `n` can take (GPU side only).
  int UnitsOnNode(const Shape& shape, NodeIndex n) const;
  // Chooses up to `count` GPUs on node `n` for `shape` (tightest share first, then lowest
  // index), appending them to `out`. Returns how many were chosen.
  int SelectOnNode(const Shape& shape, NodeIndex n, int count, std::vector<GpuIndex>* out) const;
  // Fills milli/mig/memory/host fields of a placement for `shape` (GPUs already chosen).
  void FillPlacement(const Shape& shape, Placement* p) const;

  void Apply(const Placement& p);
  void Release(const Placement& p);
  void SetNodeUp(NodeIndex n, bool up);
  void SetReserved(GpuIndex g, bool reserved);
  // Outside work holds `milli` of GPU `g` (0: none; 1000 or more: all of it).
  void SetForeign(GpuIndex g, int milli);

 private:
  void Refresh(NodeIndex n);
  int MigSlicesFor(const Shape& shape, GpuTypeId t) const;

  const Cluster* cluster_;
  std::vector<GpuSlot> gpus_;
  std::vector<NodeSummary> nodes_;
  std::vector<int> free_whole_by_type_;
  std::vector<int64_t> free_milli_by_type_;
  std::vector<int64_t> reserved_milli_by_type_;
  std::vector<int64_t> down_milli_by_type_;
  std::vector<int64_t> foreign_milli_by_type_;
  struct Contribution {
    int whole = 0;
    int milli = 0;
    int reserved = 0;
    int down = 0;
    int foreign = 0;
  };
  std::vector<Contribution> contribution_;  // what each node adds to the per-type totals
  std::vector<uint64_t> open_bits_;         // per node: open(n)
  int64_t allocated_milli_ = 0;
};

}  // namespace airtime
