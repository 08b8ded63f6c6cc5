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

}  // namespace
}  // namespace airtime
