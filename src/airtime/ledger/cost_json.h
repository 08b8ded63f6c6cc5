// Costs (costs.h) as JSON and as a table: one form for the simulator's report (`costs` of
// docs/report-format.md), the daemon's GET /v1/ledger and `airtime ledger` (docs/api.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "airtime/ledger/costs.h"

namespace airtime {

// {"cost", "value", "margin", "cost_per_installed_gpu_hour", "unattributed_value",
//  "buckets": {bucket: cost}, "types": [...], "unpriced": [...]}; docs/costs.md.
nlohmann::json CostsToJson(const CostSummary& costs);

// The table of `costs` as CostsToJson wrote it (fields missing or of the wrong kind show as
// "-"): one line per GPU type, a total line, and the cost of each bucket. "" when `costs`
// is not an object with types.
std::string CostsTable(const nlohmann::json& costs);

}  // namespace airtime
