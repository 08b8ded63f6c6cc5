// Cluster: the installed hardware airtime schedules onto.
//
// A cluster is a list of nodes; each node holds GPUs of one type plus host CPU and memory,
// and sits in an NVLink domain and a rack (topology used for gang placement). GPUs are
// numbered densely across the cluster (GpuIndex) so that engine state is a flat vector.
// Immutable once built; Cluster::Build validates and derives the GPU table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/model/gpu_catalog.h"

namespace airtime {

using NodeIndex = int32_t;
using GpuIndex = int32_t;

struct Node {
  std::string name;
  GpuTypeId gpu_type = kNoGpuType;
  int gpu_count = 0;
  int64_t cpu_milli = 0;      // 0: not tracked
  int64_t memory_mib = 0;     // 0: not tracked
  std::string nvlink_domain;  // empty: the node is its own domain
  std::string rack;
  std::string pool;  // optional label used by partitioning policies ("inference", "training")
  bool mig_enabled = false;
};

struct GpuRef {
  NodeIndex node = 0;
  int index_on_node = 0;
};

class Cluster {
 public:
  // Validates names (unique, non-empty) and counts, and builds the GPU table.
  static StatusOr<Cluster> Build(std::string name, std::vector<Node> nodes,
                                 const GpuCatalog& catalog = GpuCatalog::Builtin());

  const std::string& name() const { return name_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeIndex n) const { return nodes_[static_cast<size_t>(n)]; }
  size_t node_count() const { return nodes_.size(); }
  size_t gpu_count() const { return gpus_.size(); }
  const GpuRef& gpu(GpuIndex g) const { return gpus_[static_cast<size_t>(g)]; }
  GpuIndex first_gpu(NodeIndex n) const { return first_gpu_[static_cast<size_t>(n)]; }
  GpuTypeId gpu_type(GpuIndex g) const { return nodes_[gpus_[g].node].gpu_type; }
  const GpuCatalog& catalog() const { return *catalog_; }
  // Dense id of the node's NVLink domain and rack (nodes without one get their own).
  int32_t domain_of(NodeIndex n) const { return domain_[static_cast<size_t>(n)]; }
  int32_t rack_of(NodeIndex n) const { return rack_[static_cast<size_t>(n)]; }
  // Installed GPUs per type, indexed by GpuTypeId.
  const std::vector<int>& gpus_per_type() const { return gpus_per_type_; }
  std::string gpu_name(GpuIndex g) const;  // "node-3/gpu2"

 private:
  std::string name_;
  const GpuCatalog* catalog_ = nullptr;
  std::vector<Node> nodes_;
  std::vector<GpuRef> gpus_;
  std::vector<GpuIndex> first_gpu_;
  std::vector<int32_t> domain_, rack_;
  std::vector<int> gpus_per_type_;
};

}  // namespace airtime
