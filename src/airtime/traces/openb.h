// Importers for the Alibaba GPU-sharing trace of 2023 ("openb", cluster-trace-gpu-v2023).
//
// Nodes: `sn,cpu_milli,memory_mib,gpu,model`, e.g. `openb-node-0000,64000,262144,2,P100`;
// `model` is empty on CPU-only nodes (gpu 0) and otherwise one of the catalogue's names or
// aliases (V100M16, V100M32, G2, G3, A10, P100, T4). ImportOpenbNodes builds a Cluster named
// after the file (without ".csv"); `limit` keeps the first N nodes. Broken rows: wrong
// field count, an empty or repeated `sn`, a negative or non-integer number, a GPU node
// without a known model.
//
// Pods: `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
// deletion_time,scheduled_time`. Columns are found by header name; only the first five are
// required (openb_pod_list_multigpu50.csv has no others; absent times read as 0). Times are
// seconds on the trace's clock; `scheduled_time` is empty for pods that never ran
// (pod_phase Pending). `gpu_milli` is per GPU. Broken rows: wrong field count, an empty or
// repeated name, negative CPU or memory, num_gpu < 0, gpu_milli outside 1..1000 for a GPU
// pod or not 0 for a CPU-only one, a multi-GPU pod asking less than 1000 per GPU, an unknown
// type in gpu_spec, times out of order (creation <= scheduled <= deletion). `limit` keeps
// the first N pods in file order. All four published pod lists import without a skip.
//
// ToWorkloadSpec maps a pod to a batch workload (see there). Pure functions over files;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/model/cluster.h"
#include "airtime/model/gpu_catalog.h"
#include "airtime/model/workload.h"
#include "airtime/traces/import_options.h"

namespace airtime {

StatusOr<Cluster> ImportOpenbNodes(const std::string& path, const ImportOptions& options = {},
                                   ImportStats* stats = nullptr);

struct OpenbPod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;                        // 0: a CPU-only pod
  int gpu_milli = 0;                      // per GPU, 1..1000 (0 for CPU-only pods)
  std::vector<GpuTypeId> allowed;         // from gpu_spec, repeats removed, in order; empty: any
  std::string qos;                        // LS, BE, Burstable, Guaranteed (empty when absent)
  std::string pod_phase;                  // Running, Pending, Succeeded, Failed (empty when absent)
  int64_t creation_time = 0;              // seconds
  int64_t deletion_time = 0;              // seconds
  std::optional<int64_t> scheduled_time;  // seconds; empty: never scheduled
  int line = 0;
  std::string source;  // "openb_pod_list_default.csv:12"
};

StatusOr<std::vector<OpenbPod>> ImportOpenbPods(const std::string& path,
                                                const ImportOptions& options = {},
                                                ImportStats* stats = nullptr);

// A pod as a workload: kind kBatch, name = pod name, tenant "openb-<qos>" ("openb" without
// one), source from the pod. Shape: num_gpu GPUs (0: a host-only task), kFraction with
// gpu_milli when one GPU is asked below 1000, else whole GPUs; allowed_types from
// gpu_spec; locality kNode; cpu_milli and memory_mib as asked. submit_at = creation_time
// in ms. work_seconds = deletion_time - scheduled_time (creation_time for a pod never
// scheduled), at least 1. The trace records wall time, not work at a reference speed, so
// the spec carries a speed override of 1.0 for every type of `catalog`: the pod takes its
// traced time on whatever GPU it gets. Not preemptible (the trace says nothing about
// checkpoints).
WorkloadSpec ToWorkloadSpec(const OpenbPod& pod, const GpuCatalog& catalog = GpuCatalog::Builtin());

// ImportOpenbPods then ToWorkloadSpec, sorted by (submit_at, line).
StatusOr<std::vector<WorkloadSpec>> ImportOpenbWorkloads(const std::string& path,
                                                         const ImportOptions& options = {},
                                                         ImportStats* stats = nullptr);

}  // namespace airtime
