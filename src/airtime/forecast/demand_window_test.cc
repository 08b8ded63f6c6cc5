#include "airtime/forecast/demand_window.h"

#include <gtest/gtest.h>

#include <utility>

namespace airtime {
namespace {

using Range = std::pair<double, double>;

TEST(DemandWindowTest, StepsFarApartAreKeptAsTheyWere) {
  DemandWindow w;
  w.Add(0, 10);
  w.Add(10 * kMinute, 40);
  w.Add(20 * kMinute, 20);
  const TimeMs now = 30 * kMinute;
  EXPECT_EQ(w.size(), 3u);
  EXPECT_EQ(w.Range(now, kHour, w.last()), Range(10, 40));
  // 40 was in force until 20:00: a window from 21:00 on sees only 20.
  EXPECT_EQ(w.Range(now, 9 * kMinute, w.last()), Range(20, 20));
  EXPECT_EQ(w.Range(now, 11 * kMinute, w.last()), Range(20, 40));
  // 10 leaves a 25-minute window at 35:00, 40 at 45:00; 20 is still in force.
  EXPECT_EQ(w.NextLeave(now, 25 * kMinute, 20), 35 * kMinute);
  EXPECT_EQ(w.NextLeave(now, 5 * kMinute, 20), kNever);
  // Were the rate now another one, 20 would end now.
  EXPECT_EQ(w.NextLeave(now, 5 * kMinute, 30), now + 5 * kMinute);
  w.DropEndedBy(15 * kMinute);
  EXPECT_EQ(w.size(), 2u);
  EXPECT_EQ(w.Range(now, kHour, w.last()), Range(20, 40));
}

TEST(DemandWindowTest, AFloodOfReportsKeepsOneEntryPerResolution) {
  DemandWindow w;  // 10 s
  // Four changes a second for an hour, alternating 12 and 25 req/s, then 30 req/s steady.
  TimeMs t = 0;
  for (int i = 0; i < 4 * 3600; ++i, t += 250) w.Add(t, i % 2 ? 25 : 12);
  EXPECT_LE(w.size(), 361u);
  w.Add(t, 30);
  w.DropEndedBy(t - kHour);
  EXPECT_LE(w.size(), 362u);
  EXPECT_EQ(w.Range(t, kHour, w.last()), Range(12, 30));
  // The alternation ended at t: it stays in a window no longer than it lasted, plus at most
  // the resolution.
  const TimeMs later = t + 20 * kSecond;
  EXPECT_EQ(w.Range(later, 10 * kSecond, w.last()), Range(30, 30));
  EXPECT_EQ(w.Range(later, 21 * kSecond, w.last()), Range(12, 30));
}

TEST(DemandWindowTest, AJoinedPeakLeavesWithinTheResolutionNotWithTheRateThatFollows) {
  DemandWindow w;
  w.Add(0, 10);
  w.Add(2 * kSecond, 50);  // joins the entry opened at 0
  w.Add(3 * kSecond, 20);  // and so does the fall to 20, which then lasts
  ASSERT_EQ(w.size(), 1u);
  const TimeMs now = kHour;
  // 50 ended at 3 s: a window that begins after it sees only 20, however long 20 lasts.
  EXPECT_EQ(w.Range(now, kHour - 4 * kSecond, w.last()), Range(20, 20));
  EXPECT_EQ(w.Range(now, kHour - 2 * kSecond, w.last()), Range(10, 50));
  // It leaves a 10-minute window 10 minutes after 3 s (already past) and a 2-hour one then.
  EXPECT_EQ(w.NextLeave(now, 10 * kMinute, 20), kNever);
  EXPECT_EQ(w.NextLeave(now, 2 * kHour, 20), 2 * kHour + 3 * kSecond);
}

TEST(DemandWindowTest, ResolutionZeroKeepsEveryStep) {
  DemandWindow w(0);
  for (int i = 0; i < 100; ++i) w.Add(i, i);
  EXPECT_EQ(w.size(), 100u);
  EXPECT_EQ(w.Range(100, 10, w.last()), Range(90, 99));
  // An empty window holds only the rate given as current.
  EXPECT_EQ(w.Range(100, 0, 7), Range(7, 7));
}

TEST(DemandWindowTest, EmptyHasOnlyTheCurrentRateAndNothingLeaves) {
  DemandWindow w;
  EXPECT_EQ(w.Range(kHour, kHour, 7), Range(7, 7));
  EXPECT_EQ(w.NextLeave(kHour, kHour, 5), kNever);
}

}  // namespace
}  // namespace airtime
