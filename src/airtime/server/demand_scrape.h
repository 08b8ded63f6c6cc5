// Demand scraping: a realtime service's request load read from its own Prometheus metrics.
//
// A service names the metrics that carry its load (ExecSpec::demand_metrics). The daemon
// fetches each replica's exposition, sums the named metrics over every label set and every
// replica, and turns the sum into a request rate: a counter of requests by its increase per
// second between two scrapes, a gauge of requests in flight by Little's law (rate = in
// flight / time each request takes, the latency SLO). Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace airtime {

// Sum of the samples of the metrics named `names` (any labels) in a Prometheus text
// exposition; nullopt when none of them appears. Comment lines and other metrics are
// skipped; a malformed sample line of a named metric is skipped too.
std::optional<double> SumMetrics(std::string_view exposition,
                                 const std::vector<std::string>& names);

// Requests per second from a gauge of requests in flight and the latency SLO (ms).
double RateFromInFlight(double in_flight, double latency_slo_ms);

}  // namespace airtime
