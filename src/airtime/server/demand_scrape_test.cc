#include "airtime/server/demand_scrape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime {
namespace {

using ::testing::ElementsAre;

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

TEST(DemandScrapeTest, NegativeAndOverflowingSamplesGiveNoSum) {
  EXPECT_FALSE(SumMetrics("x -3\nx +Inf\n", {"x"}).has_value());
  EXPECT_FALSE(SumMetrics("x 1e308\nx 1e308\n", {"x"}).has_value());
  auto v = SumMetrics("x -3\nx +4\n", {"x"});
  ASSERT_TRUE(v.has_value());
  EXPECT_DOUBLE_EQ(*v, 4);
}

// A two-class service's exposition: each class's samples summed over its other labels;
// samples without the label, naming another class, or malformed are counted, not summed.
TEST(DemandScrapeTest, SumsPerClassByTheClassLabel) {
  const char* text =
      "# TYPE in_flight gauge\n"
      "in_flight{class=\"code\",model=\"a\"} 3\n"
      "in_flight{ model=\"b\" , class = \"code\" ,} 1.5 1700000000000\n"
      "in_flight{class=\"conv\"} 4\n"
      "waiting{class=\"conv\"} 2\n"
      "other{class=\"conv\"} 100\n"
      "in_flight 50\n"
      "in_flight{model=\"code\"} 60\n"
      "in_flight{class=\"chitchat\"} 70\n"
      "in_flight{class=\"co\\\"de\"} 80\n"
      "in_flight{class=\"code\"} NaN\n"
      "in_flight{class=\"code\"} -2\n"
      "in_flight{class=\"code\",class=\"conv\"} 90\n"
      "in_flight{class=\"code} 5\n"
      "in_flight{class=\"code\"}\n";
  ClassSums s = SumMetricsByClass(text, {"in_flight", "waiting"}, "class", {"code", "conv"});
  ASSERT_EQ(s.sums.size(), 2u);
  EXPECT_DOUBLE_EQ(s.sums[0], 4.5);
  EXPECT_DOUBLE_EQ(s.sums[1], 6);
  EXPECT_TRUE(s.seen[0] && s.seen[1]);
  EXPECT_EQ(s.without_label, 2);
  EXPECT_EQ(s.unknown_class, 2);
  EXPECT_EQ(s.malformed, 5);
  EXPECT_THAT(s.unknown_values, ElementsAre("chitchat", "co\"de"));
  EXPECT_EQ(s.SkippedText("class"),
            "label 'class' absent: 2; a class the service does not have: 2 (e.g. 'chitchat', "
            "'co\"de'); malformed, negative or not finite: 5");
}

// Escapes in a class's value are the text format's: \\, \" and \n; an unknown escape makes
// the line malformed. A class no sample names is not seen (its rate is not known).
TEST(DemandScrapeTest, ClassValuesAreUnescaped) {
  const char* text =
      "x{class=\"a\\\\b\"} 1\n"
      "x{class=\"c\\nd\"} 2\n"
      "x{class=\"e\\tf\"} 4\n";
  ClassSums s = SumMetricsByClass(text, {"x"}, "class", {"a\\b", "c\nd", "unused"});
  EXPECT_DOUBLE_EQ(s.sums[0], 1);
  EXPECT_DOUBLE_EQ(s.sums[1], 2);
  EXPECT_FALSE(s.seen[2]);
  EXPECT_EQ(s.malformed, 1);
}

// Hostile values: a class whose sum overflows is not seen, and counts as malformed; unknown
// values kept for messages are few, printable and short.
TEST(DemandScrapeTest, HostileExpositionsAreCountedNotSummed) {
  std::string text = "x{class=\"a\"} 1e308\nx{class=\"a\"} 1e308\nx{class=\"b\"} 1\n";
  for (int i = 0; i < 10; ++i) text += "x{class=\"u" + std::to_string(i) + "\"} 1\n";
  text += "x{class=\"" + std::string(1000, 'z') + "\x01\"} 1\n";
  text += "x{class=\"\xff\x01\"} 1\n";
  ClassSums s = SumMetricsByClass(text, {"x"}, "class", {"a", "b"});
  EXPECT_FALSE(s.seen[0]);
  EXPECT_DOUBLE_EQ(s.sums[0], 0);
  EXPECT_TRUE(s.seen[1]);
  EXPECT_EQ(s.malformed, 1);
  EXPECT_EQ(s.unknown_class, 12);
  EXPECT_EQ(s.unknown_values.size(), kUnknownValuesKept);
  // A long, unprintable value is cut and masked.
  ClassSums t = SumMetricsByClass("x{class=\"" + std::string(1000, 'z') + "\x01\"} 1\n", {"x"},
                                  "class", {"a"});
  ASSERT_EQ(t.unknown_values.size(), 1u);
  EXPECT_EQ(t.unknown_values[0], std::string(kUnknownValueBytes, 'z') + "...");
  ClassSums u = SumMetricsByClass("x{class=\"\xff\x01\"} 1\n", {"x"}, "class", {"a"});
  EXPECT_THAT(u.unknown_values, ElementsAre("??"));
  // A huge line of labels, an unterminated one, and binary noise: no crash, nothing summed.
  std::string noise = "x{" + std::string(1 << 20, 'a') + "\n" + "x{class=\"a\n" +
                      std::string("\0\xff{}\"\\", 6) + "\n";
  ClassSums n = SumMetricsByClass(noise, {"x"}, "class", {"a"});
  EXPECT_FALSE(n.seen[0]);
  EXPECT_EQ(n.malformed, 2);
}

// Replicas' sums add per class; a sum that would overflow is not taken.
TEST(DemandScrapeTest, ReplicasSumsAddUp) {
  ClassSums a = SumMetricsByClass("x{c=\"p\"} 1\nx 1\n", {"x"}, "c", {"p", "q"});
  ClassSums b =
      SumMetricsByClass("x{c=\"q\"} 2\nx{c=\"p\"} 1e308\nx{c=\"r\"} 1\n", {"x"}, "c", {"p", "q"});
  ClassSums c = SumMetricsByClass("x{c=\"p\"} 1e308\n", {"x"}, "c", {"p", "q"});
  a.Add(b);
  EXPECT_DOUBLE_EQ(a.sums[0], 1 + 1e308);
  EXPECT_DOUBLE_EQ(a.sums[1], 2);
  EXPECT_TRUE(a.seen[1]);
  EXPECT_EQ(a.without_label, 1);
  EXPECT_EQ(a.unknown_class, 1);
  a.Add(c);
  EXPECT_DOUBLE_EQ(a.sums[0], 1 + 1e308);  // 2e308 would overflow: not taken
  EXPECT_EQ(a.malformed, 1);
}

TEST(DemandScrapeTest, CounterRateNeedsTwoRisingReadings) {
  EXPECT_FALSE(CounterRate(std::nullopt, 10, 1000).has_value());
  EXPECT_FALSE(CounterRate(CounterReading{10, 1000}, 5, 2000).has_value());   // a reset
  EXPECT_FALSE(CounterRate(CounterReading{10, 1000}, 20, 1000).has_value());  // no time
  auto r = CounterRate(CounterReading{10, 1000}, 20, 3000);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(*r, 5);
}

TEST(DemandScrapeTest, LittlesLawTurnsInFlightIntoARate) {
  EXPECT_DOUBLE_EQ(RateFromInFlight(10, 200), 50);
  EXPECT_DOUBLE_EQ(RateFromInFlight(-1, 200), 0);
  EXPECT_DOUBLE_EQ(RateFromInFlight(3, 0), 0);
}

}  // namespace
}  // namespace airtime
