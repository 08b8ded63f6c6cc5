// The 3 a.m. report (hold_book.h) as JSON and as a table: one form for the simulator's report
// (`holds` of docs/report-format.md), the daemon's GET /v1/holds and `airtime holds`
// (docs/api.md), so the field names and the table are the same everywhere.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/ledger/hold_book.h"

namespace airtime {

nlohmann::json HoldSummaryToJson(const HoldSummary& summary);
// One call. Times (`t_s`, `until_s`) are seconds of the clock the decision was made on: the
// replay's in the simulator, since the Unix epoch in the daemon.
nlohmann::json HoldToJson(const ScoredHold& call);
// {"services": {name: summary, ...}, "decisions": [call, ...]}.
nlohmann::json HoldsToJson(const std::map<std::string, HoldSummary>& summaries,
                           const std::vector<ScoredHold>& calls);

// The reverse, for what was written by the functions above (a saved book, an API answer).
// Errors name the field. A call read back has what HoldToJson wrote: the decision's
// display fields and its scores, not what scoring needs further (capacity, value per
// request, cold start, replica GPUs, hours), which stay 0.
StatusOr<HoldSummary> HoldSummaryFromJson(const nlohmann::json& j);
StatusOr<ScoredHold> HoldFromJson(const nlohmann::json& j);

// One line per service, and all services together when there are several, then whether the
// holds paid: the table of `airtime sim`'s 3 a.m. report and of `airtime holds` ("" for no
// service).
std::string HoldsTable(const std::map<std::string, HoldSummary>& summaries);

}  // namespace airtime
