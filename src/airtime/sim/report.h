// Reports of simulation runs: the JSON document (docs/report-format.md describes every
// field) and the terminal tables that put policies side by side.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "airtime/ledger/cost_json.h"
#include "airtime/ledger/hold_json.h"
#include "airtime/sim/lp_bound.h"
#include "airtime/sim/simulator.h"

namespace airtime {

nlohmann::json ResultToJson(const SimResult& result);
// The run's allocation and queue over time (SimResult::timeline: the points the HTML report
// draws), as columns: step_s, and per point start_s, covered_s, allocation, waiting.
nlohmann::json TimelineToJson(const SimResult& result);
// The 3 a.m. report: per service (HoldSummary) and every call (ScoredHold); the JSON of each
// and the table are ledger/hold_json.h's.
nlohmann::json HoldsToJson(const MetricsSummary& metrics);
// The 3 a.m. report as a table, one service per line ("" when the policy made no call).
std::string HoldsReport(const SimResult& result);
// What the run's GPUs cost, and the margin: a heading and the table of ledger/cost_json.h.
std::string CostsReport(const SimResult& result);
nlohmann::json PercentilesToJson(const Percentiles& p);
// {"policies": [...]} with a header describing the input; with a bound, "bound" and each
// policy's "return_of_bound".
nlohmann::json ReportToJson(const SimInput& input, const std::vector<SimResult>& results,
                            uint64_t seed, const LpBound* bound = nullptr);
// The LP bound: its status, value, value per installed GPU-hour (null without a bound), slot
// length and count, LP size and wall_seconds.
nlohmann::json LpBoundToJson(const LpBound& bound);
// A policy's return per installed GPU-hour as a share of the bound's (null without one).
nlohmann::json ReturnOfBound(const SimResult& result, const LpBound& bound);
// `value` as a percentage of `bound` (> 0), rounded down to 0.1%: "96.3%".
std::string PercentOfBound(double value, double bound);
// "bound per installed GPU-h: 1.234 (LP relaxation: ...)\n".
std::string BoundLine(const LpBound& bound);
// Side-by-side tables: summary, ledger shares, queueing delay per kind. With a bound per
// installed GPU-hour (> 0), each return also as a percentage of it.
std::string ResultsTable(const std::vector<SimResult>& results, double bound_per_gpu_hour = 0);

}  // namespace airtime
