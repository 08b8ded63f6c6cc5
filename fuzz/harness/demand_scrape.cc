// Harness: a replica's Prometheus text exposition as the daemon reads a service's demand from
// it (src/airtime/server/demand_scrape.h): the named metrics' whole sum, and their sums per
// request class by a label, added up as two replicas' would be.
#include <string>
#include <string_view>
#include <vector>

#include "airtime/server/demand_scrape.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> names = {"in_flight", "vllm:num_requests_running", "x"};
  (void)airtime::SumMetrics(text, names);
  airtime::ClassSums sums = airtime::SumMetricsByClass(text, names, "class", {"code", "conv", ""});
  airtime::ClassSums both = sums;
  both.Add(sums);
  (void)both.SkippedText("class");
  return 0;
}
