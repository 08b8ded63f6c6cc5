#include "airtime/server/demand_scrape.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

TEST(DemandScrapeTest, SumsNamedMetricsOverLabelSets) {
  const char* text =
      "# HELP vllm:num_requests_running Requests running.\n"
      "# TYPE vllm:num_requests_running gauge\n"
      "vllm:num_requests_running{model_name=\"a\"} 3\n"
      "vllm:num_requests_running{model_name=\"b}\\\"x\"} 2.5 1700000000000\n"
      "vllm:num_requests_waiting 4\r\n"
      "vllm:num_requests_running_other 100\n"
      "other_metric 7\n";
  auto v = SumMetrics(text, {"vllm:num_requests_running", "vllm:num_requests_waiting"});
  ASSERT_TRUE(v.has_value());
  EXPECT_DOUBLE_EQ(*v, 9.5);
}

TEST(DemandScrapeTest, AbsentOrMalformedSamplesAreSkipped) {
  EXPECT_FALSE(SumMetrics("other 1\n# x 2\n", {"x"}).has_value());
  auto v = SumMetrics("x{a=\"1\"} notanumber\nx 2\nx NaN\n", {"x"});
  ASSERT_TRUE(v.has_value());
  EXPECT_DOUBLE_EQ(*v, 2);
}

TEST(DemandScrapeTest, LittlesLawTurnsInFlightIntoARate) {
  EXPECT_DOUBLE_EQ(RateFromInFlight(10, 200), 50);
  EXPECT_DOUBLE_EQ(RateFromInFlight(-1, 200), 0);
  EXPECT_DOUBLE_EQ(RateFromInFlight(3, 0), 0);
}

}  // namespace
}  // namespace airtime
