// Scenario tests for the slurm policy: multifactor priority and EASY backfill.
#include "airtime/policies/slurm/slurm.h"

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
                 const std::string& tenant = "default") {
  WorkloadSpec s = MakeJob(name, WorkloadKind::kTraining, gpus, hours * 3600, submit);
  s.tenant = tenant;
  return s;
}

// One 8-GPU node (speed 1.0). 'a' holds 4 GPUs until 2 h; 'big' needs all 8 and gets the
// reservation at 2 h. 'short' (2 GPUs, 1 h) finishes before then and is backfilled; 'long'
// (2 GPUs, 3 h) would still hold GPUs the reservation needs and waits.
TEST(SlurmTest, BackfillRunsAShortJobAheadWithoutDelayingTheReservation) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 1}});
  Engine e = MakeEngine(c, "slurm");
  std::vector<WorkloadSpec> jobs = {Job("a", 4, 2, 0), Job("big", 8, 1, kSecond),
                                    Job("short", 2, 1, 2 * kSecond),
                                    Job("long", 2, 3, 3 * kSecond)};
  auto log = Drive(e, jobs, 3 * kSecond);
  EXPECT_EQ(log.start("short"), 2 * kSecond);
  EXPECT_EQ(log.start("long"), kNever);
  EXPECT_EQ(e.job(3).wait.reason, WaitReason::kPolicy);
  const std::string why = e.Explain(3);
  EXPECT_NE(why.find("reserved for 'big'"), std::string::npos) << why;
  EXPECT_NE(why.find("02:00:00"), std::string::npos) << why;

  Engine e2 = MakeEngine(c, "slurm");
  log = Drive(e2, jobs);
  EXPECT_EQ(log.start("big"), 2 * kHour);  // not delayed by the backfilled job
  EXPECT_EQ(log.start("long"), 3 * kHour);
  EXPECT_EQ(log.finished["short"], kHour + 2 * kSecond);
}

// Without backfill the main scheduler stops at the first job that cannot start.
TEST(SlurmTest, WithoutBackfillTheShortJobWaits) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 1}});
  Engine e = MakeEngine(c, "slurm:backfill=0");
  auto log =
      Drive(e, {Job("a", 4, 2, 0), Job("big", 8, 1, kSecond), Job("short", 2, 1, 2 * kSecond)});
  EXPECT_EQ(log.start("big"), 2 * kHour);
  EXPECT_EQ(log.start("short"), 3 * kHour);
}

// Two 8-GPU nodes, 2 GPUs free on each. The reservation for 'big' (8 GPUs on one node) is
// node 0 at 2 h. 'long' would run past 2 h: best fit alone would put it on node 0 (tie,
// lower index), which would delay 'big'; it goes to node 1, whose GPUs the reservation
// does not need. 'long2' finds room only on node 0 and waits; 'short2' is done by 2 h and
// takes it.
TEST(SlurmTest, BackfillUsesGpusTheReservationDoesNotNeed) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 2}});
  std::vector<WorkloadSpec> jobs = {Job("a", 6, 2, 0),     Job("b", 6, 3, 1),
                                    Job("big", 8, 1, 2),   Job("long", 2, 5, 3),
                                    Job("long2", 2, 5, 4), Job("short2", 2, 1, 5)};
  Engine e = MakeEngine(c, "slurm");
  auto log = Drive(e, jobs, 10);
  EXPECT_EQ(log.start("long"), 3);
  EXPECT_EQ(log.start("long2"), kNever);
  EXPECT_EQ(log.start("short2"), 5);
  const Allocation* a = e.allocation(e.job(3).allocations.at(0));
  EXPECT_EQ(c.gpu(a->placement.gpus[0]).node, 1);
  Engine e2 = MakeEngine(c, "slurm");
  log = Drive(e2, jobs);
  EXPECT_EQ(log.start("big"), 2 * kHour);
}

// Fair-share: 'heavy' has used the only GPU for 10 h; at the next start its tenant's later
// job yields to the light tenant's, although that one was submitted later.
TEST(SlurmTest, FairShareOrdersTenantsByUsage) {
  Cluster c = MakeCluster({{"A100-80GB", 1, 1}});
  std::vector<WorkloadSpec> jobs = {Job("h1", 1, 10, 0, "heavy"), Job("h2", 1, 1, kHour, "heavy"),
                                    Job("l1", 1, 1, kHour + kSecond, "light")};
  Engine e = MakeEngine(c, "slurm");
  auto log = Drive(e, jobs);
  EXPECT_EQ(log.start("l1"), 10 * kHour);
  EXPECT_EQ(log.start("h2"), 11 * kHour);
  // With fair-share weighted out, submission order (age) decides.
  Engine e2 = MakeEngine(c, "slurm:w_fairshare=0");
  log = Drive(e2, jobs);
  EXPECT_EQ(log.start("h2"), 10 * kHour);
}

TEST(SlurmTest, FairShareFactor) {
  EXPECT_DOUBLE_EQ(SlurmFairShare(0, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(SlurmFairShare(0.5, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(SlurmFairShare(1.0, 0.5), 0.25);
  EXPECT_DOUBLE_EQ(SlurmFairShare(0.3, 0), 0.0);
}

// QoS (the priority field) outweighs size by default; at equal QoS larger jobs go first,
// smaller ones with favor_small.
TEST(SlurmTest, QosThenSizeOrder) {
  Cluster c = MakeCluster({{"A100-80GB", 4, 1}});
  std::vector<WorkloadSpec> jobs = {Job("run", 4, 1, 0), Job("small", 1, 1, 1),
                                    Job("large", 3, 1, 2), Job("urgent", 1, 1, 3)};
  jobs[3].priority = 50;
  Engine e = MakeEngine(c, "slurm");
  auto log = Drive(e, jobs);
  EXPECT_EQ(log.start("urgent"), kHour);
  EXPECT_EQ(log.start("large"), kHour);
  EXPECT_EQ(log.start("small"), 2 * kHour);
  Engine e2 = MakeEngine(c, "slurm:favor_small=1");
  log = Drive(e2, jobs);
  EXPECT_EQ(log.start("urgent"), kHour);
  EXPECT_EQ(log.start("small"), kHour);
  EXPECT_EQ(log.start("large"), 2 * kHour);
}

// bf_interval=1m: between backfill passes the main scheduler stops at 'big', which cannot
// start, so 'short' (which backfill would run at once, above) waits for the pass at 1 min.
// 'big' still starts when 'a' ends, and the engine is woken for the pass with no event due.
TEST(SlurmTest, BackfillRunsOnlyAtItsInterval) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 1}});
  std::vector<WorkloadSpec> jobs = {Job("a", 4, 2, 0), Job("big", 8, 1, kSecond),
                                    Job("short", 2, 1, 2 * kSecond)};
  Engine e = MakeEngine(c, "slurm:bf_interval=1m");
  auto log = Drive(e, jobs, 30 * kSecond);
  EXPECT_EQ(log.start("short"), kNever);
  EXPECT_EQ(e.job(2).wait.reason, WaitReason::kBehindHead);
  Engine e2 = MakeEngine(c, "slurm:bf_interval=1m");
  log = Drive(e2, jobs);
  EXPECT_EQ(log.start("short"), kMinute);
  EXPECT_EQ(log.start("big"), 2 * kHour);
  // A job that fits at once still starts at its arrival (the main scheduler's cycle).
  Engine e3 = MakeEngine(c, "slurm:bf_interval=1m");
  log = Drive(e3, {Job("a", 4, 2, 0), Job("b", 2, 1, kSecond)});
  EXPECT_EQ(log.start("b"), kSecond);
}

// Backfill plans with time limits, the running work's and the candidate's: 'a' (1 h 40 min)
// is planned to end at 2 h (run time + 10 min, rounded up to whole hours), which is when
// 'big' is reserved; 'short' runs 1 h 5 min and would end before 'a' does, but its limit
// (2 h) ends after the reservation, so backfill does not start it: it starts when 'big' is
// done. With exact run times it is backfilled at once.
TEST(SlurmTest, BackfillPlansWithTimeLimits) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 1}});
  std::vector<WorkloadSpec> jobs = {Job("a", 4, 100.0 / 60, 0), Job("big", 8, 1, kSecond),
                                    Job("short", 2, 65.0 / 60, 2 * kSecond)};
  Engine e = MakeEngine(c, "slurm");
  auto log = Drive(e, jobs);
  EXPECT_EQ(log.start("short"), 2 * kSecond);
  Engine e2 = MakeEngine(c, "slurm:limit_pad=10m:limit_round=1h");
  log = Drive(e2, jobs);
  EXPECT_EQ(log.start("big"), 100 * kMinute);
  EXPECT_EQ(log.start("short"), 160 * kMinute);
}

// services_first: a service sorts ahead of every job (a partition of higher PriorityTier)
// whatever the weights, and between backfill passes is not blocked behind a job that
// cannot start.
TEST(SlurmTest, ServicesFirstPutsServicesAheadOfJobs) {
  Cluster c = MakeCluster({{"A100-80GB", 4, 1}});
  WorkloadSpec svc = testing::MakeService("svc", 10);
  svc.priority = 0;
  const std::string spec = "slurm:w_age=0:w_fairshare=0:w_size=0:w_qos=0:bf_interval=1m";
  for (bool first : {false, true}) {
    Engine e = MakeEngine(c, spec + (first ? ":services_first=1" : ""));
    e.Handle(Event::Arrival(0, Job("a", 3, 1, 0)));
    e.Handle(Event::Arrival(1, Job("big", 4, 1, 1)));
    e.Handle(Event::Arrival(2, svc));
    e.Handle(Event::Demand(3, 2, 5));
    EXPECT_EQ(e.job(2).live_replicas(), first ? 1 : 0) << "services_first=" << first;
  }
}

// sched_tick=1s, phase=0.5s: work starts only at 0.5 s + k seconds, whatever the events; the
// engine is woken for the tick. A job that arrives on a tick starts at once.
TEST(SlurmTest, WorkStartsOnlyOnSchedulerTicks) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 1}});
  Engine e = MakeEngine(c, "slurm:sched_tick=1s:phase=500ms");
  auto log = Drive(e, {Job("a", 4, 1, 200), Job("b", 4, 1, 1500), Job("c", 4, 1, 1600)});
  EXPECT_EQ(log.start("a"), 500);
  EXPECT_EQ(log.start("b"), 1500);
  // 'c' waits for 'a' to end (1 h + 500 ms, on a tick) and starts then.
  EXPECT_EQ(log.start("c"), kHour + 500);
  Engine e2 = MakeEngine(c, "slurm:sched_tick=1s:phase=500ms");
  Drive(e2, {Job("a", 4, 1, 200)}, 300);
  EXPECT_EQ(e2.job(0).wait.reason, WaitReason::kPolicy);
  const std::string why = e2.Explain(0);
  EXPECT_NE(why.find("next tick"), std::string::npos) << why;
}

// placement=firstfit: the lowest-indexed node with room (Slurm at equal node weights), where
// best fit takes the fullest node. 'a' holds 2 GPUs of node 0 and 'b' 7 of node 1; 'c' (1
// GPU) fills node 1 under best fit and goes to node 0 under first fit.
TEST(SlurmTest, FirstFitTakesTheLowestNodeWithRoom) {
  Cluster c = MakeCluster({{"A100-80GB", 8, 2}});
  std::vector<WorkloadSpec> jobs = {Job("a", 2, 1, 0), Job("b", 7, 1, 1), Job("c", 1, 1, 2)};
  for (bool first : {false, true}) {
    Engine e = MakeEngine(c, first ? "slurm:placement=firstfit" : "slurm");
    Drive(e, jobs, 10);
    const Allocation* a = e.allocation(e.job(2).allocations.at(0));
    EXPECT_EQ(c.gpu(a->placement.gpus[0]).node, first ? 0 : 1) << "first fit: " << first;
  }
}

TEST(SlurmTest, ParametersAreChecked) {
  Cluster c = MakeCluster({{"A100-80GB", 4, 1}});
  const auto& reg = PolicyRegistry::Builtin();
  EXPECT_TRUE(reg.Make("slurm:w_age=10:max_age=2d:half_life=12h:shares=a@2,b@1", c).ok());
  EXPECT_FALSE(reg.Make("slurm:w_age=-1", c).ok());
  EXPECT_FALSE(reg.Make("slurm:max_age=soon", c).ok());
  EXPECT_TRUE(
      reg.Make("slurm:bf_interval=30s:limit_pad=5s:limit_round=1m:services_first=1", c).ok());
  EXPECT_FALSE(reg.Make("slurm:bf_interval=-30s", c).ok());
  EXPECT_FALSE(reg.Make("slurm:limit_round=often", c).ok());
  EXPECT_TRUE(reg.Make("slurm:sched_tick=1s:phase=4.3s:placement=firstfit", c).ok());
  EXPECT_FALSE(reg.Make("slurm:placement=worst", c).ok());
  EXPECT_FALSE(reg.Make("slurm:shares=a", c).ok());
  EXPECT_FALSE(reg.Make("slurm:weight=1", c).ok());
}

}  // namespace
}  // namespace airtime
