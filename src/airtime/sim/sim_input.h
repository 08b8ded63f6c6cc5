// SimInput: everything one simulation replays -- a cluster, workloads, timed changes.
//
// LoadSimInput reads a cluster YAML and workload YAML files, pulls in the trace sources
// they name (Philly or openb workloads; Azure arrivals as a service's demand curve), and
// checks that every timed event names a node or workload that exists. The result is plain
// data, shared read-only by every policy run.
#pragma once

#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/config/workload_yaml.h"
#include "airtime/model/cluster.h"
#include "airtime/model/gpu_cost.h"
#include "airtime/model/workload.h"

namespace airtime {

struct SimInput {
  Cluster cluster;
  std::vector<WorkloadSpec> workloads;  // sorted by (submit_at, file order)
  std::vector<ScenarioEvent> events;    // sorted by time
  std::vector<std::string> notes;       // what was imported, rows skipped, ...
  // Hourly-cost inputs per GPU type of the cluster's catalogue (by GpuTypeId): the
  // catalogue's defaults with the cluster file's `costs:` (model/gpu_cost.h).
  std::vector<GpuCost> costs;
};

struct LoadOptions {
  bool skip_bad_rows = false;  // applies to every trace source
  // The families a workload's `family` may name (null: the built-in Gavel table's).
  const InterferenceModel* families = nullptr;
};

StatusOr<SimInput> LoadSimInput(const std::string& cluster_path,
                                const std::vector<std::string>& workload_paths,
                                const LoadOptions& options = {});

// Builds a SimInput from parts already in memory (sorting workloads and events), with the
// catalogue's default costs.
SimInput MakeSimInput(Cluster cluster, std::vector<WorkloadSpec> workloads,
                      std::vector<ScenarioEvent> events = {});

}  // namespace airtime
