// Reports of simulation runs: the JSON document (docs/report-format.md describes every
// field) and the terminal tables that put policies side by side.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "airtime/sim/simulator.h"

namespace airtime {

nlohmann::json ResultToJson(const SimResult& result);
nlohmann::json PercentilesToJson(const Percentiles& p);
// {"policies": [...]} with a header describing the input.
nlohmann::json ReportToJson(const SimInput& input, const std::vector<SimResult>& results,
                            uint64_t seed);
// Side-by-side tables: summary, ledger shares, queueing delay per kind.
std::string ResultsTable(const std::vector<SimResult>& results);

}  // namespace airtime
