// PromWriter: builds a Prometheus text exposition (format version 0.0.4).
//
// Each metric family gets its "# HELP" and "# TYPE" lines once, followed by all of its
// samples, even when samples of different families are added interleaved. Label values are
// escaped (backslash, double quote, newline), HELP text too (backslash, newline). Histograms
// are written as cumulative NAME_bucket{le="..."} lines ending with le="+Inf", then NAME_sum
// and NAME_count. Not thread-safe: build one per scrape.
//
//   PromWriter w;
//   w.Gauge("airtime_gpus", "Installed GPUs.", 8);
//   w.Counter("airtime_submitted_total", "Workloads accepted.", 12, {{"tenant", "team-a"}});
//   std::string body = w.Text();
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace airtime {

using PromLabels = std::vector<std::pair<std::string, std::string>>;

// Observations sorted into buckets: counts[i] holds those in (bounds[i-1], bounds[i]], and
// counts.back() (index bounds.size()) those above every bound.
struct PromHistogram {
  explicit PromHistogram(std::vector<double> upper_bounds);
  void Observe(double v);

  std::vector<double> bounds;  // ascending upper bounds, without +Inf
  std::vector<uint64_t> counts;
  double sum = 0;
};

class PromWriter {
 public:
  void Counter(std::string_view name, std::string_view help, double value,
               const PromLabels& labels = {});
  void Gauge(std::string_view name, std::string_view help, double value,
             const PromLabels& labels = {});
  void Histogram(std::string_view name, std::string_view help, const PromHistogram& h,
                 const PromLabels& labels = {});
  // The exposition: families in the order they first appeared.
  std::string Text() const;

  // Helpers, exposed for tests and for callers that format by hand.
  static std::string EscapeLabelValue(std::string_view v);
  static std::string EscapeHelp(std::string_view v);
  // Shortest exact form: "1", "0.25", "1e+21", "NaN", "+Inf", "-Inf".
  static std::string FormatValue(double v);

 private:
  std::string& Family(std::string_view name, std::string_view help, std::string_view type);
  void Sample(std::string& out, std::string_view name, const PromLabels& labels, double value);

  std::vector<std::string> order_;
  std::map<std::string, std::string, std::less<>> text_;
};

}  // namespace airtime
