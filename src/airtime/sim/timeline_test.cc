#include "airtime/sim/timeline.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

TEST(Timeline, AveragesEachIntervalExactly) {
  Timeline t(10, kMinute);
  t.Add(0, 30 * kSecond, 4000, 8000, 2);             // half the first minute: 4 of 8 GPUs
  t.Add(30 * kSecond, 90 * kSecond, 8000, 8000, 0);  // then all of them, into the second
  const auto p = t.Points();
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(t.step(), kMinute);
  EXPECT_DOUBLE_EQ(p[0].allocation, 0.75);
  EXPECT_DOUBLE_EQ(p[0].waiting, 1.0);
  EXPECT_EQ(p[1].start, kMinute);
  EXPECT_EQ(p[1].covered, 30 * kSecond);  // the last interval is covered halfway
  EXPECT_DOUBLE_EQ(p[1].allocation, 1.0);
}

// Times near the end of what a TimeMs holds (a hostile store's) end the walk: a bin's end
// once wrapped negative and the walk went back for ever.
TEST(Timeline, TimesNearTheLastOneEndTheWalk) {
  Timeline t(10, kMinute);
  t.Add(kNever - 10 * kMinute, kNever - 1, 1000, 1000, 0);
  t.Add(kNever - 1, kNever, 1000, 1000, 0);
  const auto p = t.Points();
  ASSERT_FALSE(p.empty());
  EXPECT_LE(p.size(), 10u);
  DurationMs covered = 0;
  for (const auto& point : p) covered += point.covered;
  EXPECT_EQ(covered, 10 * kMinute);
}

TEST(Timeline, StaysWithinItsPointsByMergingPairs) {
  Timeline fine(1000, kMinute), coarse(8, kMinute);
  // A day in irregular pieces: held GPUs and the queue change every 7 minutes.
  for (int i = 0; i * 7 < 24 * 60; ++i) {
    const TimeMs from = i * 7 * kMinute, to = std::min<TimeMs>((i + 1) * 7, 24 * 60) * kMinute;
    fine.Add(from, to, 1000 * (i % 8), 8000, i % 5);
    coarse.Add(from, to, 1000 * (i % 8), 8000, i % 5);
  }
  const auto p = coarse.Points();
  EXPECT_LE(p.size(), 8u);
  EXPECT_GE(p.size(), 4u);
  EXPECT_EQ(coarse.step(), 256 * kMinute);  // 1 min doubled until 8 intervals hold a day
  // Merging loses resolution only: the time-weighted means over the day agree.
  auto mean = [](const std::vector<TimelinePoint>& pts) {
    double a = 0, w = 0, d = 0;
    for (const auto& q : pts) {
      a += q.allocation * static_cast<double>(q.covered);
      w += q.waiting * static_cast<double>(q.covered);
      d += static_cast<double>(q.covered);
    }
    return std::make_pair(a / d, w / d);
  };
  EXPECT_NEAR(mean(p).first, mean(fine.Points()).first, 1e-12);
  EXPECT_NEAR(mean(p).second, mean(fine.Points()).second, 1e-12);
}

}  // namespace
}  // namespace airtime
