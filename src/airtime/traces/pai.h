// Importer for the machine list of Alibaba's PAI 2020 cluster (pai_machine_spec.csv).
//
// File: headerless rows `machine,gpu_type,cap_cpu,cap_mem,cap_gpu`, e.g.
// `7399a758eb02bae1a3621236,CPU,96,512,0` (a header line starting "machine," is accepted
// and skipped). cap_cpu is cores (-> cpu_milli x 1000), cap_mem GB (-> memory_mib x 1024).
// gpu_type maps to the catalogue as follows: T4, P100, MISC by name; V100M32 -> "V100"
// (the 32 GB card); plain V100 -> "V100-16GB", because the trace writes the 32 GB model
// apart as V100M32 and its plain V100 machines are the 16 GB ones; CPU -> a node without
// GPUs (cap_gpu must be 0), imported only with include_cpu_nodes. Other names go through
// GpuCatalog::Find.
//
// The real file has 1,897 machines holding 6,742 GPUs: 1,814 GPU machines plus 83 CPU
// machines (the traces README says 1,896 machines; the file has 1,897 rows, none
// repeated). Broken rows: wrong field count, an empty or repeated machine id, a number
// that is not an integer >= 0, an unknown gpu_type, a CPU machine with GPUs or a GPU
// machine without. `limit` keeps the first N imported machines; CPU machines left out
// count as filtered. Deterministic; thread-safe.
#pragma once

#include <string>

#include "airtime/base/status.h"
#include "airtime/model/cluster.h"
#include "airtime/traces/import_options.h"

namespace airtime {

struct PaiOptions : ImportOptions {
  bool include_cpu_nodes = false;
};

// The cluster is named "pai-2020".
StatusOr<Cluster> ImportPaiMachines(const std::string& path, const PaiOptions& options = {},
                                    ImportStats* stats = nullptr);

}  // namespace airtime
