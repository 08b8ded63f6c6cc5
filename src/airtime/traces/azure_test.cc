#include "airtime/traces/azure.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "airtime/traces/trace_test_util.h"

namespace airtime {
namespace {

using ::airtime::testing::TraceTestData;
using ::testing::HasSubstr;

const std::string kTen = TraceTestData("azure-llm-2023/azure_code_10min.csv");
const std::string kBad = TraceTestData("azure-llm-2023/azure_bad.csv");

double MaxRps(const std::vector<DemandPoint>& points) {
  double m = 0;
  for (const auto& p : points) m = std::max(m, p.rps);
  return m;
}

TEST(AzureTest, ReadsArrivalsAndTokens) {
  ImportStats stats;
  auto trace = ReadAzureTrace(kTen, {}, &stats);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->arrivals.size(), 1482u);
  EXPECT_EQ(stats.rows_imported, 1482u);
  EXPECT_EQ(trace->arrivals.front(), 0);
  EXPECT_EQ(trace->span, 585904);  // 18:17:03.979 to 18:26:49.883
  EXPECT_EQ(trace->tokens.requests, 1482u);
  EXPECT_NEAR(trace->tokens.mean_context_tokens, 2076.979082, 1e-5);
  EXPECT_NEAR(trace->tokens.mean_generated_tokens, 27.428475, 1e-5);
  EXPECT_EQ(trace->tokens.max_context_tokens, 7437);
  EXPECT_EQ(trace->tokens.max_generated_tokens, 841);
}

TEST(AzureTest, CountsArrivalsPerMinute) {
  AzureTokenSummary tokens;
  auto curve = ImportAzureDemand(kTen, {}, nullptr, &tokens);
  ASSERT_TRUE(curve.ok()) << curve.status().ToString();
  EXPECT_EQ(tokens.requests, 1482u);
  // Ten one-minute buckets (0..9) and the closing zero point.
  ASSERT_EQ(curve->size(), 11u);
  const double counts[] = {63, 0, 0, 531, 187, 130, 15, 42, 38, 476};
  for (size_t k = 0; k < 10; ++k) {
    EXPECT_EQ((*curve)[k].at, static_cast<TimeMs>(k) * kMinute);
    EXPECT_DOUBLE_EQ((*curve)[k].rps, counts[k] / 60.0) << k;
  }
  EXPECT_EQ(curve->back().at, 10 * kMinute);
  EXPECT_EQ(curve->back().rps, 0.0);

  AzureOptions o;
  o.bucket = 10 * kSecond;
  o.peak_rps = 50;
  curve = ImportAzureDemand(kTen, o);
  ASSERT_TRUE(curve.ok());
  EXPECT_EQ(curve->size(), 60u);  // 59 buckets (585.9 s) + the end
  EXPECT_DOUBLE_EQ(MaxRps(*curve), 50.0);
}

TEST(AzureTest, DiurnalFactorShape) {
  EXPECT_DOUBLE_EQ(DiurnalFactor(4), 0.25);
  EXPECT_DOUBLE_EQ(DiurnalFactor(14), 1.0);
  EXPECT_NEAR(DiurnalFactor(9), 0.625, 1e-12);   // halfway up
  EXPECT_NEAR(DiurnalFactor(21), 0.625, 1e-12);  // halfway down
  EXPECT_DOUBLE_EQ(DiurnalFactor(28), DiurnalFactor(4));
  double prev = DiurnalFactor(4);
  for (double h = 4.25; h <= 14; h += 0.25) {
    EXPECT_GT(DiurnalFactor(h), prev) << h;
    prev = DiurnalFactor(h);
  }
  for (double h = 14.25; h <= 28; h += 0.25) {
    EXPECT_LT(DiurnalFactor(h), prev) << h;
    prev = DiurnalFactor(h);
  }
  // Continuous at midnight.
  EXPECT_NEAR(DiurnalFactor(23.9999), DiurnalFactor(0), 1e-4);
}

TEST(AzureTest, TilesADayWithDiurnalShape) {
  auto trace = ReadAzureTrace(kTen);
  ASSERT_TRUE(trace.ok());
  AzureOptions o;
  o.diurnal_day = true;
  auto day = AzureDemandCurve(*trace, o);
  ASSERT_TRUE(day.ok()) << day.status().ToString();
  ASSERT_EQ(day->size(), 24u * 60 + 1);
  EXPECT_EQ(day->back().at, kDay);
  EXPECT_EQ(day->back().rps, 0.0);
  // Nine full buckets tile the day: bucket k repeats bucket k mod 9.
  const double counts[] = {63, 0, 0, 531, 187, 130, 15, 42, 38};
  for (size_t k : {0u, 3u, 9u, 12u, 240u, 840u, 843u}) {
    const double hour = (static_cast<double>(k) + 0.5) / 60;
    EXPECT_NEAR((*day)[k].rps, counts[k % 9] / 60.0 * DiurnalFactor(hour), 1e-12) << k;
  }
  // Busy buckets near 14:00 stand far above busy buckets near 04:00.
  EXPECT_GT((*day)[840].rps, 3.5 * (*day)[246].rps);  // both tile bucket 3

  o.days = 7;
  o.weekend_factor = 0.5;
  o.peak_rps = 120;
  auto week = AzureDemandCurve(*trace, o);
  ASSERT_TRUE(week.ok());
  ASSERT_EQ(week->size(), 7u * 24 * 60 + 1);
  EXPECT_DOUBLE_EQ(MaxRps(*week), 120.0);
  // Same bucket of the day, same tile phase (7 x 1440 is not a multiple of 9, so compare a
  // weekday with its own tile): Saturday is half of what Saturday would be on a weekday.
  const size_t sat = 5 * 1440 + 843;
  const double weekday_level = (*week)[843].rps / (counts[843 % 9] / 60.0);
  EXPECT_NEAR((*week)[sat].rps, 0.5 * weekday_level * counts[sat % 9] / 60.0, 1e-9);
}

TEST(AzureTest, RejectsOptionsThatMakeNoCurve) {
  auto trace = ReadAzureTrace(kTen);
  ASSERT_TRUE(trace.ok());
  AzureOptions o;
  o.bucket = 0;
  EXPECT_FALSE(AzureDemandCurve(*trace, o).ok());
  o = {};
  o.days = 2;
  EXPECT_THAT(AzureDemandCurve(*trace, o).status().message(), HasSubstr("diurnal_day"));
  o.diurnal_day = true;
  o.bucket = 7 * kSecond;
  EXPECT_FALSE(AzureDemandCurve(*trace, o).ok());
  EXPECT_FALSE(AzureDemandCurve(AzureTrace{}, AzureOptions{}).ok());
}

// Two requests centuries apart (a one-byte typo in a year) made the demand curve
// allocate billions of buckets (std::bad_alloc, or all memory).
TEST(AzureTest, ASpanTooLongForTheCurveIsAnError) {
  AzureTrace trace;
  trace.arrivals = {0, 300LL * 365 * kDay};
  trace.span = trace.arrivals.back();
  auto curve = AzureDemandCurve(trace, AzureOptions{});
  ASSERT_FALSE(curve.ok());
  EXPECT_THAT(curve.status().message(),
              HasSubstr("more than the 1000000 buckets of 60000 ms a demand curve may have"));
  AzureOptions tiled;
  tiled.diurnal_day = true;
  tiled.days = 1'000'000;
  trace.arrivals = {0};
  trace.span = 0;
  EXPECT_THAT(AzureDemandCurve(trace, tiled).status().message(),
              HasSubstr("points a demand curve may have"));
}

TEST(AzureTest, BrokenRows) {
  auto curve = ImportAzureDemand(kBad);
  ASSERT_FALSE(curve.ok());
  EXPECT_EQ(curve.status().message(),
            kBad + ":3: column 'ContextTokens': expected a token count >= 0, got 'abc'");
  AzureOptions o;
  o.skip_bad_rows = true;
  ImportStats stats;
  AzureTokenSummary tokens;
  curve = ImportAzureDemand(kBad, o, &stats, &tokens);
  ASSERT_TRUE(curve.ok()) << curve.status().ToString();
  EXPECT_EQ(stats.rows_read, 5u);
  EXPECT_EQ(stats.rows_skipped, 3u);
  EXPECT_THAT(stats.first_errors[1], HasSubstr(":4: column 'TIMESTAMP'"));
  EXPECT_THAT(stats.first_errors[2], HasSubstr(":5: column 'GeneratedTokens'"));
  EXPECT_EQ(tokens.requests, 2u);
  EXPECT_DOUBLE_EQ(tokens.mean_context_tokens, (4808 + 200) / 2.0);
  ASSERT_EQ(curve->size(), 2u);
  EXPECT_DOUBLE_EQ(curve->front().rps, 2 / 60.0);
  EXPECT_EQ(ImportAzureDemand("/no/azure.csv").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace airtime
