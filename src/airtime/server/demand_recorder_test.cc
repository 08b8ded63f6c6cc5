#include "airtime/server/demand_recorder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace airtime {
namespace {

// The history the writes leave, as a store keeps it: steps by time.
struct History {
  std::vector<DemandPoint> steps;
  void Apply(const std::vector<DemandWrite>& writes) {
    for (const DemandWrite& d : writes) {
      if (d.kind == DemandWrite::kAdd) {
        steps.push_back({d.at, d.rps});
        continue;
      }
      auto it = std::find_if(steps.begin(), steps.end(),
                             [&](const DemandPoint& p) { return p.at == d.at; });
      ASSERT_NE(it, steps.end()) << "raised a step that was never added, at " << d.at;
      it->rps = d.rps;
    }
    std::sort(steps.begin(), steps.end(),
              [](const DemandPoint& a, const DemandPoint& b) { return a.at < b.at; });
  }
  // The rate in force at `t` by the history.
  double At(TimeMs t) const {
    double rps = 0;
    for (const DemandPoint& p : steps)
      if (p.at <= t) rps = p.rps;
    return rps;
  }
};

TEST(DemandRecorderTest, ReportsFarApartAreEachAStep) {
  DemandRecorder r;
  History h;
  h.Apply(r.Report(0, 10));
  h.Apply(r.Report(kMinute, 20));
  h.Apply(r.Report(2 * kMinute, 5));
  ASSERT_EQ(h.steps.size(), 3u);
  EXPECT_EQ(h.At(90 * kSecond), 20);
  EXPECT_EQ(h.At(3 * kMinute), 5);
}

TEST(DemandRecorderTest, AFloodKeepsAtMostTwoStepsPerResolutionAndNoRateTooLong) {
  DemandRecorder r;  // 10 s
  History h;
  // Ten reports a second for an hour, a peak of 90 once a minute, else 10 or 20.
  const int reports = 10 * 3600;
  std::vector<double> truth(reports);
  for (int i = 0; i < reports; ++i) {
    truth[i] = i % 600 == 300 ? 90 : (i % 2 ? 20 : 10);
    h.Apply(r.Report(i * 100, truth[i]));
  }
  EXPECT_LE(h.steps.size(), 2u * 360 + 1);
  // Every rate stored was in force within the resolution before its step ends; every peak
  // is in the history within the resolution of when it came.
  for (int i = 300; i < reports; i += 600) {
    const TimeMs at = i * 100;
    double seen = 0;
    for (TimeMs t = at - 10 * kSecond; t <= at; t += 100) seen = std::max(seen, h.At(t));
    EXPECT_EQ(seen, 90) << "the peak at " << at << " ms";
    EXPECT_LT(h.At(at + 10 * kSecond + 100), 90) << "the peak at " << at << " stays too long";
  }
}

TEST(DemandRecorderTest, TheRateThatEndedABurstStartsWhenItCame) {
  DemandRecorder r;
  History h;
  h.Apply(r.Report(0, 10));
  h.Apply(r.Report(2 * kSecond, 50));  // joins the step begun at 0, raising it
  h.Apply(r.Report(3 * kSecond, 20));  // joins it too: kept aside
  ASSERT_EQ(h.steps.size(), 1u);
  EXPECT_EQ(h.At(0), 50);
  // An hour later a report opens the next step: 20 is written first, from 3 s on.
  h.Apply(r.Report(kHour, 30));
  ASSERT_EQ(h.steps.size(), 3u);
  EXPECT_EQ(h.At(2 * kSecond), 50);
  EXPECT_EQ(h.At(3 * kSecond), 20);
  EXPECT_EQ(h.At(kHour - 1), 20);
  EXPECT_EQ(h.At(kHour), 30);
}

TEST(DemandRecorderTest, AReportAsideAtTheStepsOwnRateAddsNothing) {
  DemandRecorder r;
  History h;
  h.Apply(r.Report(0, 10));
  h.Apply(r.Report(kSecond, 40));
  h.Apply(r.Report(2 * kSecond, 40));
  h.Apply(r.Report(kMinute, 5));
  ASSERT_EQ(h.steps.size(), 2u);
  EXPECT_EQ(h.At(kMinute - 1), 40);
}

TEST(DemandRecorderTest, AfterARestartTheLastReportIsWrittenWhenTheNextStepOpens) {
  // Before the restart: a step at 0 (raised to 50) and the last report, 20 at 3 s, stored as
  // the workload's last demand only.
  DemandRecorder r;
  History h;
  h.steps = {{0, 50}};
  r.Resume(DemandPoint{0, 50}, DemandPoint{3 * kSecond, 20});
  h.Apply(r.Report(kHour, 30));
  ASSERT_EQ(h.steps.size(), 3u);
  EXPECT_EQ(h.At(3 * kSecond), 20);
  // Within the resolution of the resumed step, a report joins it.
  DemandRecorder soon;
  History s;
  s.steps = {{0, 50}};
  soon.Resume(DemandPoint{0, 50}, std::nullopt);
  s.Apply(soon.Report(5 * kSecond, 70));
  ASSERT_EQ(s.steps.size(), 1u);
  EXPECT_EQ(s.At(0), 70);
  // Nothing stored: the first report is the first step.
  DemandRecorder fresh;
  fresh.Resume(std::nullopt, DemandPoint{3 * kSecond, 20});
  const std::vector<DemandWrite> w = fresh.Report(4 * kSecond, 25);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].kind, DemandWrite::kAdd);
  EXPECT_EQ(w[0].at, 4 * kSecond);
}

}  // namespace
}  // namespace airtime
