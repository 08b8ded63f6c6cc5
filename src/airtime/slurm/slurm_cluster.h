// SlurmCluster: Slurm's nodes as the Cluster airtime's engine schedules onto, and the map
// from the GPUs Slurm names (node, index) to the engine's GpuIndex, so that the GPU indices
// Slurm chose for a job can be adopted into the engine (Engine::Adopt) per real GPU.
//
// A Node holds GPUs of one type (model/cluster.h). A Slurm node whose GRES has one GPU type
// gives one Node of its name; one with several ("gpu:h100:4,gpu:a100:4") gives one Node per
// type, "<node>-<type>" (lower case). Slurm numbers a node's GPUs across its types in the
// order of its GRES list (h100 0-3, a100 4-7 above), which the map follows. GPUs without a
// type, or of a type the catalogue does not know, are left out and named in `note`; their
// indices map to nothing. The GPU type is looked up by the GRES type ("h100") in the
// catalogue's names and aliases, case-insensitively. Partitions become the Node's pool when
// the node is in exactly one partition. A node's gres/shard ("shard:h100:8000": GPU sharing,
// how the Slurm backend runs a fraction of a GPU) is read as shards per GPU, the node's
// shards over its GPUs, rounded down (Slurm reports only the node's total; an uneven
// gres.conf, some GPUs with more shards than others, is named in `note`). Stateless: safe
// from any thread.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/model/cluster.h"
#include "airtime/model/gpu_catalog.h"
#include "airtime/slurm/records.h"

namespace airtime::slurm {

struct SlurmCluster {
  Cluster cluster;
  std::string note;  // GPUs left out, or ""
  // (Slurm node, Slurm GPU index) -> the engine's GpuIndex.
  std::map<std::pair<std::string, int>, GpuIndex> gpu_of;
  // The other way, by engine GpuIndex: Slurm's node, index and GRES type ("h100").
  struct SlurmGpu {
    std::string node;
    int index = 0;
    std::string type;
  };
  std::vector<SlurmGpu> slurm_gpu;
  // Slurm node -> where it is reached (Slurm's NodeAddr, else the node's name).
  std::map<std::string, std::string> address_of;
  // Slurm node -> its gres/shard per GPU; nodes without shards are absent.
  std::map<std::string, int64_t> shards_per_gpu;

  // The engine GPUs of a job's allocation (SlurmJob::gpus): NotFound naming the first GPU
  // that maps to nothing (a node or index this cluster does not have).
  StatusOr<std::vector<GpuIndex>> GpusOf(const SlurmJob& job) const;
};

// InvalidArgument for no nodes, duplicate names or a node with more than 4096 GPUs.
// `catalog` must outlive the result.
StatusOr<SlurmCluster> ClusterFromSlurm(const std::vector<SlurmNode>& nodes,
                                        const std::string& name,
                                        const GpuCatalog& catalog = GpuCatalog::Builtin());

}  // namespace airtime::slurm
