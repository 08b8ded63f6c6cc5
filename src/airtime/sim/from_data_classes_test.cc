// RebuildClassCurves: each request class's demand from a store's member rows and last rates.
#include "airtime/sim/from_data_classes.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

// Three classes, each with a submitted rate: `big` serves all three best, `coder` only code.
RealtimeProfile ThreeClasses() {
  RealtimeProfile rt;
  rt.classes = {{"code", {{0, 1}}}, {"conv", {{0, 2}}}, {"math", {{0, 3}}}};
  ModelVariant big, coder;
  big.name = "big";
  coder.name = "coder";
  coder.quality = 0.5;
  coder.classes = {0};
  rt.variants = {big, coder};
  rt.variant = 0;
  rt.group = "chat";
  return rt;
}

TEST(RebuildClassCurves, ClassesNotAtTheirLastRateShareWhatTheSumLeaves) {
  const RealtimeProfile rt = ThreeClasses();
  // math was never reported: at its submitted 3 throughout. code and conv last reported 0
  // (no weight between them): the rest is split equally until their last reports.
  const std::map<int, WallCurve> history = {{0, {{100, 13}, {200, 7}, {300, 3}}}};
  const std::map<int, std::pair<TimeMs, double>> last = {{0, {300, 0}}, {1, {200, 0}}};
  const ClassCurves c = RebuildClassCurves(rt, 50, history, last);
  ASSERT_EQ(c.classes.size(), 3u);
  EXPECT_EQ(c.classes[0], (WallCurve{{50, 1}, {100, 5}, {200, 4}, {300, 0}}));
  EXPECT_EQ(c.classes[1], (WallCurve{{50, 2}, {100, 5}, {200, 0}}));
  EXPECT_EQ(c.classes[2], (WallCurve{{50, 3}}));
  EXPECT_EQ(c.estimated_until, 100);
  EXPECT_EQ(c.estimated, (std::vector<int>{0, 1}));
}

TEST(RebuildClassCurves, RecordedStepsAreTakenAsTheyWereAndOnlyTheReportsBeforeAreEstimated) {
  const RealtimeProfile rt = ThreeClasses();
  // The store recorded each class's rates from 200 on (a version-6 store migrated then):
  // at 100 code and conv share what math leaves; from 200 each is as recorded.
  const std::map<int, WallCurve> history = {{0, {{100, 13}, {200, 7}, {300, 3}}}};
  const std::map<int, std::pair<TimeMs, double>> last = {{0, {300, 0}}, {1, {200, 0}}};
  const std::map<int, WallCurve> steps = {{0, {{300, 0}}}, {1, {{200, 0}}}};
  const ClassCurves c = RebuildClassCurves(rt, 50, history, last, steps);
  EXPECT_EQ(c.classes[0], (WallCurve{{50, 1}, {100, 5}, {200, 4}, {300, 0}}));
  EXPECT_EQ(c.classes[1], (WallCurve{{50, 2}, {100, 5}, {200, 0}}));
  EXPECT_EQ(c.estimated_until, 100);
  // Recorded from the start: nothing is estimated, and a class's steps stand even where
  // the sum would say otherwise.
  const std::map<int, WallCurve> all = {{0, {{100, 6}, {300, 0}}}, {1, {{100, 4}, {200, 0}}}};
  const ClassCurves d = RebuildClassCurves(rt, 50, history, last, all);
  EXPECT_EQ(d.classes[0], (WallCurve{{50, 1}, {100, 6}, {300, 0}}));
  EXPECT_EQ(d.classes[1], (WallCurve{{50, 2}, {100, 4}, {200, 0}}));
  EXPECT_EQ(d.classes[2], (WallCurve{{50, 3}}));
  EXPECT_EQ(d.estimated_until, 0);
  // Without the default member's rows, a class's steps rather than its last rate alone.
  const ClassCurves e = RebuildClassCurves(rt, 50, {}, last, all);
  EXPECT_EQ(e.classes[1], (WallCurve{{50, 2}, {100, 4}, {200, 0}}));
}

TEST(RebuildClassCurves, WithoutTheDefaultMembersHistoryTheLastRatesAreWhatIsKnown) {
  const RealtimeProfile rt = ThreeClasses();
  // Only coder's rows (it serves no class by default: its own demand is 0).
  const std::map<int, WallCurve> history = {{1, {{100, 0}}}};
  const std::map<int, std::pair<TimeMs, double>> last = {{1, {150, 9}}};
  const ClassCurves c = RebuildClassCurves(rt, 0, history, last);
  EXPECT_EQ(c.classes[0], (WallCurve{{0, 1}}));
  EXPECT_EQ(c.classes[1], (WallCurve{{0, 2}, {150, 9}}));
  EXPECT_EQ(c.estimated_until, 0);
}

TEST(RebuildClassCurves, OneClassTakesAnyMembersRowsWhenItsDefaultHasNone) {
  RealtimeProfile rt = ThreeClasses();
  rt.classes = {{"all", {}}};
  rt.variants[1].classes = {};
  const std::map<int, WallCurve> history = {{1, {{10, 4}, {20, 4}, {30, 6}}}};
  const ClassCurves c = RebuildClassCurves(rt, 0, history, {});
  EXPECT_EQ(c.classes[0], (WallCurve{{0, 0}, {10, 4}, {30, 6}}));
}

}  // namespace
}  // namespace airtime
