// Demand scraping: a realtime service's request load read from its own Prometheus metrics.
//
// A service names the metrics that carry its load (ExecSpec::demand_metrics). The daemon
// fetches each replica's exposition, sums the named metrics over every label set and every
// replica, and turns the sum into a request rate: a counter of requests by its increase per
// second between two scrapes, a gauge of requests in flight by Little's law (rate = in
// flight / time each request takes, the latency SLO). A service whose demand is split by
// request class names the label that carries the class (ExecSpec::demand_class_label): the
// samples are then summed per value of that label, one sum per class. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/time.h"

namespace airtime {

// The most of a replica's exposition the daemon reads: a vLLM server's is tens of KiB; a
// replica that sends more is not read at all (it could make the daemon hold any amount).
inline constexpr size_t kMaxExpositionBytes = 8 << 20;

// Sum of the samples of the metrics named `names` (any labels) in a Prometheus text
// exposition; nullopt when none of them appears. Comment lines and other metrics are
// skipped; a malformed sample line of a named metric, or one whose value is negative or
// not finite (no count of requests is), is skipped too.
std::optional<double> SumMetrics(std::string_view exposition,
                                 const std::vector<std::string>& names);

// The named metrics of one or more expositions summed per request class: the class is the
// value of one label (unescaped: `\\`, `\"` and `\n` as the text format defines them).
struct ClassSums {
  std::vector<double> sums;  // per class, in the order of the classes given
  std::vector<bool> seen;    // per class: whether a sample named it
  // Samples of a named metric that count for no class: without the label, with a value of
  // it that names no class, or malformed (as SumMetrics skips them; a class whose sum is
  // no longer finite counts here too, and is not seen).
  int64_t without_label = 0, unknown_class = 0, malformed = 0;
  std::vector<std::string> unknown_values;  // a few of them, for messages (printable, cut)

  int64_t skipped() const { return without_label + unknown_class + malformed; }
  // Adds another replica's sums (same classes).
  void Add(const ClassSums& other);
  // One line for a warning, "" when nothing was skipped: "label 'class' absent: 2; a class
  // the service does not have: 3 (e.g. 'cdoe'); malformed: 1".
  std::string SkippedText(std::string_view label) const;
};

// Up to this many distinct unknown label values are kept, each cut to this many bytes.
inline constexpr size_t kUnknownValuesKept = 3;
inline constexpr size_t kUnknownValueBytes = 64;

ClassSums SumMetricsByClass(std::string_view exposition, const std::vector<std::string>& names,
                            std::string_view label, const std::vector<std::string>& classes);

// What one workload's replicas gave at one scrape: the sum of its named metrics over every
// label set, or, for a service with a class label, the sums per class.
struct ScrapeReading {
  std::optional<double> sum;
  std::optional<ClassSums> classes;
};

// Requests per second from a gauge of requests in flight and the latency SLO (ms).
double RateFromInFlight(double in_flight, double latency_slo_ms);

// A counter's last reading: its value and when it was read.
struct CounterReading {
  double value = 0;
  TimeMs at = 0;
};

// Requests per second between a counter's last reading and `value` read at `now`: nullopt
// for its first reading, a decrease (a reset: a replica restarted or went) and no time
// passed.
std::optional<double> CounterRate(const std::optional<CounterReading>& last, double value,
                                  TimeMs now);

}  // namespace airtime
