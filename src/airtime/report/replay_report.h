// The sections of `airtime sim --html` for one replay of several policies: return and SLO
// per policy, the ledger as stacked bars, allocation and workloads waiting over time, and
// queueing delay per kind. Names from the input (policies, services) are escaped by the page.
#pragma once

#include <vector>

#include "airtime/html/page.h"
#include "airtime/sim/simulator.h"

namespace airtime {

// Appends the sections (level-3 headings) for `results`, replays of one input brought to a
// common end. With a bound per installed GPU-hour (> 0), each return also as a share of it.
void AddReplaySections(HtmlPage& page, const std::vector<SimResult>& results,
                       double bound_per_gpu_hour = 0);

}  // namespace airtime
