#include "airtime/forecast/demand_forecast.h"

#include <gtest/gtest.h>

#include <cmath>

namespace airtime {
namespace {

// A day shape: 10 rps at night, 100 rps from 09:00 to 18:00.
double Day(TimeMs t) {
  const double h = static_cast<double>(t % kDay) / kHour;
  return h >= 9 && h < 18 ? 100 : 10;
}

TEST(DemandForecastTest, PersistenceUntilADayIsKnown) {
  DemandForecast f;
  f.Observe(0, 10);
  f.Observe(2 * kHour, 30);
  EXPECT_FALSE(f.seasonal());
  EXPECT_DOUBLE_EQ(f.At(5 * kHour), 30);
}

TEST(DemandForecastTest, LearnsTheDailyShapeAndForecastsTheMorningRise) {
  DemandForecast f;
  for (TimeMs t = 0; t < 2 * kDay + 6 * kHour; t += 15 * kMinute) f.Observe(t, Day(t));
  ASSERT_TRUE(f.seasonal());
  const TimeMs now = 2 * kDay + 6 * kHour;
  EXPECT_NEAR(f.At(now + kHour), 10, 1e-6);
  // At 06:00 the burst at 09:00 is already in sight: no peeking, only the past days.
  EXPECT_NEAR(f.At(2 * kDay + 10 * kHour), 100, 1e-6);
  EXPECT_NEAR(f.PeakOver(now, now + 4 * kHour), 100, 1e-6);
  EXPECT_NEAR(f.PeakOver(now, now + 2 * kHour), 10, 1e-6);
}

// At the time of the last observation At gives the rate observed; Expected still gives what
// the past expected then, so a jump can be compared with it.
TEST(DemandForecastTest, ExpectedIgnoresTheObservationItIsComparedWith) {
  DemandForecast f;
  for (TimeMs t = 0; t < 2 * kDay + 2 * kHour; t += 15 * kMinute) f.Observe(t, Day(t));
  const TimeMs now = 2 * kDay + 2 * kHour;
  f.Observe(now, 50);
  EXPECT_DOUBLE_EQ(f.At(now), 50);
  EXPECT_NEAR(f.Expected(now), 10, 1e-6);
  DemandForecast fresh;
  fresh.Observe(0, 10);
  fresh.Observe(kHour, 30);
  EXPECT_DOUBLE_EQ(fresh.Expected(kHour), 30);  // no seasonal forecast yet: the rate now
}

TEST(DemandForecastTest, LevelScalesTheShapeToToday) {
  DemandForecast f;
  for (TimeMs t = 0; t < 2 * kDay; t += 15 * kMinute) f.Observe(t, Day(t));
  // Today runs at twice the usual rate.
  for (TimeMs t = 2 * kDay; t < 2 * kDay + 12 * kHour; t += 15 * kMinute) f.Observe(t, 2 * Day(t));
  EXPECT_NEAR(f.At(2 * kDay + 14 * kHour), 200, 1e-6);
}

TEST(DemandForecastTest, UsesTheWeekWhenAWeekIsKnown) {
  DemandForecast f;
  auto week = [](TimeMs t) { return (t / kDay) % 7 >= 5 ? 0.5 * Day(t) : Day(t); };
  for (TimeMs t = 0; t < 8 * kDay; t += 15 * kMinute) f.Observe(t, week(t));
  // Day 12 is a Saturday (day 5 of week 1): half the weekday rate at noon.
  EXPECT_NEAR(f.At(12 * kDay + 12 * kHour), 50, 10);
}

// Its own errors: a steady rate is forecast exactly (every ratio 1); bursts inside slots
// show in the upper quantiles, not the median.
TEST(DemandForecastTest, ErrorQuantilesMeasureTheForecastsOwnMisses) {
  DemandForecast steady;
  EXPECT_EQ(steady.ErrorQuantile(0.9), -1);  // nothing recorded yet
  for (TimeMs t = 0; t < kDay; t += kMinute) steady.Observe(t, 20);
  EXPECT_GT(steady.error_count(), 80u);
  EXPECT_DOUBLE_EQ(steady.ErrorQuantile(0.5), 1.0);
  EXPECT_DOUBLE_EQ(steady.ErrorQuantile(0.99), 1.0);

  // One slot in four holds a 5-minute burst to three times the rate.
  DemandForecast bursty;
  for (TimeMs t = 0; t < 2 * kDay; t += kMinute) {
    const int64_t slot = t / (15 * kMinute);
    const bool burst =
        slot % 4 == 1 && t % (15 * kMinute) >= 5 * kMinute && t % (15 * kMinute) < 10 * kMinute;
    bursty.Observe(t, burst ? 30 : 10);
  }
  EXPECT_NEAR(bursty.ErrorQuantile(0.5), 1.0, 0.15);
  EXPECT_NEAR(bursty.ErrorQuantile(0.9), 3.0, 0.4);
}

// No peeking: the error of the slot where demand jumps is measured against a forecast made
// before the jump (at error_lead), so the jump shows in full.
TEST(DemandForecastTest, ErrorsCompareWithForecastsMadeBeforeTheSlot) {
  DemandForecast::Options o;
  o.error_lead = 30 * kMinute;
  DemandForecast f(o);
  for (TimeMs t = 0; t < 12 * kHour; t += kMinute) f.Observe(t, 10);
  // From 12:00 on, 40 rps: the forecasts made before then expected 10.
  for (TimeMs t = 12 * kHour; t < 13 * kHour; t += kMinute) f.Observe(t, 40);
  EXPECT_NEAR(f.ErrorQuantile(1.0), 4.0, 1e-9);
  // The share of ratios at 4: the slots from 12:00 whose forecasts were made at or before
  // 12:00 (30 minutes ahead: 12:00-12:15 and 12:15-12:30); later ones knew the new rate.
  EXPECT_NEAR(f.ErrorQuantile(0.9), 1.0, 1e-9);
}

}  // namespace
}  // namespace airtime
