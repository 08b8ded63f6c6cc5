// `airtime sim --from-data`: what the daemon recorded over the replayed window, beside the
// replay of the policy it ran, so that a reader can judge how faithful the replay is.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "airtime/html/page.h"
#include "airtime/sim/from_data.h"
#include "airtime/sim/simulator.h"

namespace airtime {

// A table of the recorded figures (RecordedWindow) beside `replay`'s (null: none), and a
// line on the daemon's own ledger (its span may differ from the window's: it says so).
// `same_cluster` false (--cluster, --add-nodes): the replay ran on another cluster, and a
// line says the difference is the change's, not the replay's error.
std::string RecordedReport(const FromData& data, const SimResult* replay, bool same_cluster);

// The same as a section of an HTML report (a heading, a table, the lines, and the
// warnings; HtmlPage escapes every text).
void AddRecordedSection(HtmlPage& page, const FromData& data, const SimResult* replay,
                        bool same_cluster);

// The same as JSON: {"store", "from", "to", "daemon_policy", "recorded": {...},
// "ledger": {...} or null, "replay_of_daemon_policy": {...} or null, "warnings": [...]}.
nlohmann::json RecordedJson(const FromData& data, const SimResult* replay);

}  // namespace airtime
