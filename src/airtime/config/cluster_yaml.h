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
// Every error is an InvalidArgument "FILE:LINE: node 'h100': field 'gpus': expected ...,
// found ...". The returned Cluster keeps a pointer to `catalog`, which must outlive it.
// Stateless functions: safe to call from any thread.
#pragma once

#include <string>
#include <string_view>

#include "airtime/base/status.h"
#include "airtime/model/cluster.h"
#include "airtime/model/gpu_catalog.h"

namespace airtime {

// Parses cluster YAML `text`; `filename` is used in messages only.
StatusOr<Cluster> ParseClusterYaml(std::string_view text, std::string_view filename,
                                   const GpuCatalog& catalog = GpuCatalog::Builtin());

// Reads and parses the file at `path` (NotFound when it cannot be read).
StatusOr<Cluster> LoadClusterYaml(const std::string& path,
                                  const GpuCatalog& catalog = GpuCatalog::Builtin());

}  // namespace airtime
