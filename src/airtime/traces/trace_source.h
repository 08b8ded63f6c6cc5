// ImportWorkloadTrace: one entry point for the workload traces, chosen by format name.
//
// Configuration files and the command line name a trace by format ("philly", "openb"), a
// path, and options as strings; this parses the options for that format and calls its
// importer. Options every format takes:
//   limit          integer >= 0 (0: all)
//   skip_bad_rows  true/false (also yes/no, 1/0)
// "philly" also takes:
//   reference_type       GPU type name the durations were measured on (default V100)
//   clusters             virtual clusters to keep, comma-separated (default all)
//   gpus_per_node        integer >= 1 (default 8)
//   checkpoint_interval  duration such as "30m" (default 30m)
//   restart_cost         duration (default 2m)
//   preemptible          true/false (default true)
//   rebase_to_first_job  true/false (default false)
//   tenant               every job's tenant (default: its virtual cluster)
//   priority             integer, every job's priority (default 0)
//   value_per_gpu_hour   number >= 0: completion value per recorded GPU-hour (default 0)
//   utilization          number in (0, 1]: share of held GPU time that computes (default 1)
// "openb" (a pod list) takes only the common options; its workloads come sorted by
// (submit_at, line) like Philly's. An unknown format or option is InvalidArgument naming
// it and listing the known ones; a malformed value names the option. Thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/model/workload.h"
#include "airtime/traces/import_options.h"

namespace airtime {

// "openb", "philly".
std::vector<std::string> KnownWorkloadTraceFormats();

StatusOr<std::vector<WorkloadSpec>> ImportWorkloadTrace(
    std::string_view format, const std::string& path,
    const std::map<std::string, std::string>& options = {}, ImportStats* stats = nullptr);

}  // namespace airtime
