// Scenario tests for the tiresias policy: 2D-LAS queues, demotion, preemption, promotion.
#include <gtest/gtest.h>

#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/policies/plugins/scenario_test_util.h"
#include "airtime/policies/registry.h"

namespace airtime {
namespace {

using testing::Drive;
using testing::MakeCluster;
using testing::MakeEngine;
using testing::MakeJob;

WorkloadSpec Job(const std::string& name, int gpus, double hours, TimeMs submit,
                 bool preemptible = true) {
  WorkloadSpec s = MakeJob(name, WorkloadKind::kTraining, gpus, hours * 3600, submit);
  s.preemptible = preemptible;
  s.checkpoint_interval = 30 * kMinute;
  s.restart_cost = 5 * kMinute;
  return s;
}

// 'long' (4 GPUs) crosses the 1 GPU-hour threshold after 15 min and drops to the second
// queue. 'early' arrived at 10 min, waits FIFO behind it in the top queue, and at 15 min
// (a wake-up: no event is due) preempts it. 'late' arrives at 2 h 10 min, after 'long' has
// resumed, and preempts it at once; 'long' keeps its checkpoints and pays its restart cost.
TEST(TiresiasTest, ALongJobIsDemotedAndNewShortJobsPreemptIt) {
  Cluster c = MakeCluster({{"A100-80GB", 4, 1}});
  Engine e = MakeEngine(c, "tiresias");
  std::vector<WorkloadSpec> jobs = {Job("long", 4, 10, 0), Job("early", 4, 0.5, 10 * kMinute),
                                    Job("late", 4, 0.5, 2 * kHour + 10 * kMinute)};
  auto log = Drive(e, jobs);
  EXPECT_EQ(log.start("early"), 15 * kMinute);
  EXPECT_EQ(log.start("late"), 2 * kHour + 10 * kMinute);
  ASSERT_EQ(log.preempted["long"].size(), 2u);
  EXPECT_EQ(log.preempted["long"][0], 15 * kMinute);
  EXPECT_EQ(log.preempted["long"][1], 2 * kHour + 10 * kMinute);
  ASSERT_EQ(log.starts["long"].size(), 3u);
  EXPECT_EQ(log.start("long", 1), 45 * kMinute);
  EXPECT_EQ(log.start("long", 2), 2 * kHour + 40 * kMinute);
  EXPECT_NE(log.reasons[0].find("in Q1"), std::string::npos) << log.reasons[0];
  // Work: 15 min run (nothing checkpointed: lost, no restart cost), then 45 min .. 2 h 10 min
  // (85 min run, 60 min checkpointed), then 5 min restart and the 9 h left.
  EXPECT_EQ(log.finished["long"], 2 * kHour + 40 * kMinute + 5 * kMinute + 9 * kHour);
  EXPECT_EQ(e.job(0).preemptions, 2);
}

// Jobs that are not preemptible, or in the same queue, are never preempted.
TEST(TiresiasTest, OnlyPreemptibleJobsOfLowerQueuesArePreempted) {
  Cluster c = MakeCluster({{"A100-80GB", 4, 1}});
  Engine e = MakeEngine(c, "tiresias");
  auto log = Drive(e, {Job("long", 4, 10, 0, false), Job("short", 4, 0.5, kHour)});
  EXPECT_TRUE(log.preempted.empty());
  EXPECT_EQ(log.start("short"), 10 * kHour);
  // The same queue: 'long' ends (4 GPU-hours) before it crosses a 5 GPU-hour threshold.
  Engine e2 = MakeEngine(c, "tiresias:thresholds=5h");
  log = Drive(e2, {Job("long", 4, 1, 0), Job("short", 4, 0.5, 10 * kMinute)});
  EXPECT_TRUE(log.preempted.empty());
  EXPECT_EQ(log.start("short"), kHour);
}

// One GPU. 'victim' runs an hour, drops to the second queue and is preempted by 's1'
// (5 h). 's1' drops to the second queue at 2 h; with promote_knob=2, 'victim' has waited
// twice its run time at 3 h, returns to the top queue and preempts 's1'. Without promotion
// it waits until 's1' ends.
TEST(TiresiasTest, StarvedJobsArePromotedBackToTheTopQueue) {
  Cluster c = MakeCluster({{"A100-80GB", 1, 1}});
  std::vector<WorkloadSpec> jobs = {Job("victim", 1, 10, 0), Job("s1", 1, 5, kHour)};
  jobs[0].restart_cost = 0;
  jobs[1].restart_cost = 0;
  Engine e = MakeEngine(c, "tiresias:promote_knob=2");
  auto log = Drive(e, jobs);
  EXPECT_EQ(log.start("s1"), kHour);
  ASSERT_GE(log.starts["victim"].size(), 2u);
  EXPECT_EQ(log.start("victim", 1), 3 * kHour);
  ASSERT_EQ(log.preempted["s1"].size(), 1u);
  EXPECT_EQ(log.preempted["s1"][0], 3 * kHour);

  Engine e2 = MakeEngine(c, "tiresias:promote_knob=0");
  log = Drive(e2, jobs);
  EXPECT_EQ(log.start("victim", 1), 6 * kHour);
  EXPECT_TRUE(log.preempted["s1"].empty());
}

// Several queues: a job drops one queue per threshold.
TEST(TiresiasTest, ThresholdsMakeQueues) {
  Cluster c = MakeCluster({{"A100-80GB", 1, 1}});
  Engine e = MakeEngine(c, "tiresias:thresholds=1h,3h");
  // 'a' reaches Q2 at 3 h; 'b' (arrived at 30 min) ran from 1 h and reaches Q1 at 2 h and
  // waits in Q1; 'c' arrives at 4 h in Q0 and preempts whoever runs in a lower queue.
  std::vector<WorkloadSpec> jobs = {Job("a", 1, 8, 0), Job("b", 1, 8, 30 * kMinute),
                                    Job("c", 1, 1, 4 * kHour)};
  for (auto& j : jobs) j.restart_cost = 0;
  auto log = Drive(e, jobs, 4 * kHour);
  EXPECT_EQ(log.start("b"), kHour);  // 'a' crossed into Q1 at 1 h: 'b' (Q0) preempts it
  EXPECT_EQ(log.start("c"), 4 * kHour);
  ASSERT_EQ(log.reasons.size(), 2u);
  EXPECT_NE(log.reasons[1].find("'b' in Q2"), std::string::npos) << log.reasons[1];
  EXPECT_FALSE(PolicyRegistry::Builtin().Make("tiresias:thresholds=3h,1h", c).ok());
  EXPECT_FALSE(PolicyRegistry::Builtin().Make("tiresias:promote_knob=-1", c).ok());
}

}  // namespace
}  // namespace airtime
