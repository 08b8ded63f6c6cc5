// Cluster YAML: loading a cluster description (nodes, GPU types, topology) from YAML.
//
// Schema (one document):
//   cluster:
//     name: mixed-64
//     nodes:
//       - name: h100          # with `count`, expands to h100-0 .. h100-3
//         count: 4            # optional; absent: one node named exactly `name`
//         gpu: H100           # catalogue name or alias; may be omitted when gpus is 0
//         gpus: 8             # GPUs per node (0: a CPU-only node)
//         cpu: 128            # host cores (optional; stored as cpu_milli)
//         memory_gib: 1024    # host memory (optional; stored as memory_mib)
//         nvlink_domain: nvl-a  # optional; nodes expanded from one entry share it
//         rack: r1            # optional
//         pool: inference     # optional label for partitioning policies
//         mig: true           # optional, default false; the GPU type must support MIG
//     costs:                  # optional: per GPU type, overrides of the catalogue's costs
//       H100: {price: 30000, life_years: 4, power_w: 700, electricity_per_kwh: 0.12, pue: 1.3}
//       L4: {per_hour: 0.35}  # a direct hourly cost instead (not with the fields above)
// Cost fields left out keep the type's default (model/gpu_cost.h, docs/costs.md).
// Every error is an InvalidArgument "FILE:LINE: node 'h100': field 'gpus': expected ...,
// found ...". The returned Cluster keeps a pointer to `catalog`, which must outlive it.
// Stateless functions: safe to call from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/model/cluster.h"
#include "airtime/model/gpu_catalog.h"
#include "airtime/model/gpu_cost.h"

namespace airtime {

// A cluster file: the cluster, and the hourly-cost inputs of every GPU type of its
// catalogue (indexed by GpuTypeId): the catalogue's defaults with the file's `costs:`.
struct ClusterFile {
  Cluster cluster;
  std::vector<GpuCost> costs;
};

// Parses cluster YAML `text`; `filename` is used in messages only.
StatusOr<ClusterFile> ParseClusterFile(std::string_view text, std::string_view filename,
                                       const GpuCatalog& catalog = GpuCatalog::Builtin());
StatusOr<ClusterFile> LoadClusterFile(const std::string& path,
                                      const GpuCatalog& catalog = GpuCatalog::Builtin());

// As ParseClusterFile, the cluster alone.
StatusOr<Cluster> ParseClusterYaml(std::string_view text, std::string_view filename,
                                   const GpuCatalog& catalog = GpuCatalog::Builtin());

// Reads and parses the file at `path` (NotFound when it cannot be read).
StatusOr<Cluster> LoadClusterYaml(const std::string& path,
                                  const GpuCatalog& catalog = GpuCatalog::Builtin());

// `cluster` as a cluster file that ParseClusterFile reads back to the same nodes (one entry
// per node, names quoted whatever they hold; no costs).
std::string ClusterFileYaml(const Cluster& cluster);

}  // namespace airtime
