// Importer for the Microsoft Philly training trace (Sep-Dec 2017, 82,247 jobs).
//
// File: `timestamp,duration,num_gpus,gpu_time,cluster`, one job a row, rows NOT in time
// order; e.g. `2017-10-09 07:01:55,66.0,1,66.0,11cb48`. Columns are found by header name;
// `gpu_time` (= duration x num_gpus) is redundant and ignored.
//
// Each job becomes a training WorkloadSpec:
//   name "philly-<row>" (1-based data row in the file), tenant = the virtual cluster (or
//   `tenant` when set), priority from the options, source "philly.csv:<line>";
//   shape: num_gpus whole GPUs of any type, gang; locality kNode when num_gpus <=
//   gpus_per_node, else kAny (Philly placed large jobs across servers);
//   submit_at = timestamp - earliest timestamp among the file's good rows, in ms (so
//   imports with different cluster filters share one clock), or - the first selected
//   job's when rebase_to_first_job;
//   work_seconds = duration x relative speed of `reference_type` (default V100), so the
//   job runs exactly `duration` on that type and proportionally on others;
//   checkpoint_interval, restart_cost, preemptible, utilization from the options;
//   value.on_completion = value_per_gpu_hour x num_gpus x duration in hours (the trace
//   carries no value; 0 by default), so a job's worth follows its recorded GPU-hours.
// Result sorted by (submit_at, line). `limit` keeps the earliest N selected jobs (the file
// is not in time order, so its first N rows would be an arbitrary sample).
//
// Broken rows: wrong field count, a timestamp that is not "YYYY-MM-DD HH:MM:SS", a
// duration that is not a number or is <= 0 (a zero-length job has nothing to schedule; the
// real file has none, its shortest jobs last 1 s), a GPU count that is not a whole number
// >= 1 (the real file has 1 to 128), an empty cluster. A cluster named in the filter that
// no row of the file carries is an error (most likely a typo). Deterministic; importing
// the full file takes a few tens of milliseconds.
#pragma once

#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/base/time.h"
#include "airtime/model/gpu_catalog.h"
#include "airtime/model/workload.h"
#include "airtime/traces/import_options.h"

namespace airtime {

struct PhillyOptions : ImportOptions {
  std::vector<std::string> clusters;      // keep only these virtual clusters; empty: all
  GpuTypeId reference_type = kNoGpuType;  // durations were measured on it; none: "V100"
  int gpus_per_node = 8;                  // jobs up to this size must sit on one node
  DurationMs checkpoint_interval = 30 * kMinute;
  DurationMs restart_cost = 2 * kMinute;
  bool preemptible = true;
  bool rebase_to_first_job = false;  // time 0 = first selected job, not the file's first row
  std::string tenant;                // every job's tenant; empty: its virtual cluster
  int priority = 0;                  // every job's priority
  double value_per_gpu_hour = 0;     // completion value per recorded GPU-hour (>= 0)
  double utilization = 1.0;          // share of held GPU time that computes, (0, 1]
};

StatusOr<std::vector<WorkloadSpec>> ImportPhilly(const std::string& path,
                                                 const PhillyOptions& options = {},
                                                 ImportStats* stats = nullptr);

}  // namespace airtime
