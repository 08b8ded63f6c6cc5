// Tables: the text the CLI prints from API answers (`airtime ls`, `describe`, `gpus`,
// `ledger`, `top`).
//
// Each function takes the JSON document of control_plane.h and returns the text, so that it
// can be tested without a terminal or a daemon. Missing or null fields print as "-". `now`
// is milliseconds since the Unix epoch, for ages and waits.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "airtime/base/time.h"

namespace airtime {

// Left-aligned columns two spaces apart, no trailing spaces, one line per row.
std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// {"workloads": [...]}: ID NAME TENANT KIND STATE GPUS AGE/WAIT REASON. AGE/WAIT is the
// wait of a queued workload, the run time of a running one, and the time since a finished
// one ended ("3m ago"). Reasons are cut to 60 characters. Wide (`ls -o wide`) adds
// PRIORITY, PREEMPTIONS, DEMAND and the GPU ids, and prints the reason whole.
struct WorkloadTable {
  bool wide = false;
  bool header = true;  // false: the rows alone (`ls --watch` after its first listing)
};
std::string RenderWorkloads(const nlohmann::json& list, TimeMs now, const WorkloadTable& how = {});
// One workload view with runs: fields, a runs table and the explanation.
std::string RenderWorkloadDetail(const nlohmann::json& w, TimeMs now);
// {"gpus": [...]}: INDEX TYPE UUID UTIL MEM USED/TOTAL POWER WORKLOADS.
std::string RenderGpus(const nlohmann::json& gpus);
// The ledger: each bucket in GPU-hours and in % of installed GPU-hours, then the totals.
std::string RenderLedger(const nlohmann::json& ledger);
// GET /v1/holds: the per-service table of the 3 a.m. report (hold_json.h's HoldsTable), then
// the calls, oldest first: TIME SERVICE CHOICE NEEDED/HELD DEMAND/FORECAST RPS
// HOLD/HAND-OFF VALUE CAME REGRET WHY (the why in full).
std::string RenderHolds(const nlohmann::json& holds);
// GET /v1/workloads/{id}/events: TIME KIND RUN MESSAGE, oldest first, the message whole.
std::string RenderEvents(const nlohmann::json& events);
// One frame of `airtime top`: a title line, GPUs, active workloads and the ledger.
std::string RenderTopFrame(const nlohmann::json& gpus, const nlohmann::json& workloads,
                           const nlohmann::json& ledger, TimeMs now);

}  // namespace airtime
