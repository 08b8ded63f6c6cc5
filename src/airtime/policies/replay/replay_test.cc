#include "airtime/policies/replay/replay.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/sim/simulator.h"

namespace airtime {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::MakeService;

// Two H100 nodes of 8 GPUs: H100-0 and H100-1.
Cluster TwoNodes() { return MakeCluster({{"H100", 8, 2}}); }

Policy FromText(const std::string& text, const Cluster& c,
                const std::vector<WorkloadSpec>* workloads = nullptr) {
  auto rows = ParseReplaySchedule(text, "s.csv", c, workloads);
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  return MakeReplayPolicy(rows.ok() ? *rows : std::vector<ReplayRow>{});
}

std::string Error(const std::string& text, const Cluster& c,
                  const std::vector<WorkloadSpec>* workloads = nullptr) {
  auto rows = ParseReplaySchedule(text, "s.csv", c, workloads);
  return rows.ok() ? "ok" : rows.status().message();
}

TEST(ReplayTest, StartsEachJobAtItsTimeOnItsNodeAndGpus) {
  Cluster c = TwoNodes();
  Engine e(c, FromText("job,start_s,end_s,node,gpus\n"
                       "a,5,none,H100-1,6;7\n"
                       "b,2,none,H100-0\n",
                       c));
  const auto& r0 = e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kBatch, 2, 100)));
  EXPECT_TRUE(r0.decisions.empty());
  EXPECT_EQ(r0.wake_at, 2000);
  e.Handle(Event::Arrival(0, MakeJob("b", WorkloadKind::kBatch, 1, 100)));
  const auto& r2 = e.Handle(Event::Timer(2000));
  ASSERT_EQ(r2.decisions.size(), 1u);
  EXPECT_EQ(e.job(r2.decisions[0].workload).s().name, "b");
  EXPECT_EQ(c.gpu(r2.decisions[0].placement.gpus[0]).node, 0);
  EXPECT_EQ(r2.wake_at, 5000);
  const auto& r5 = e.Handle(Event::Timer(5000));
  ASSERT_EQ(r5.decisions.size(), 1u);
  const Placement& p = r5.decisions[0].placement;
  ASSERT_EQ(p.gpus.size(), 2u);
  EXPECT_EQ(c.gpu(p.gpus[0]).node, 1);
  EXPECT_EQ(c.gpu(p.gpus[0]).index_on_node, 6);
  EXPECT_EQ(c.gpu(p.gpus[1]).index_on_node, 7);
}

TEST(ReplayTest, StartsNothingTheScheduleDoesNotName) {
  Cluster c = TwoNodes();
  Engine e(c, FromText("a,0,none,H100-0\n", c));
  e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kBatch, 1, 100)));
  const auto& r = e.Handle(Event::Arrival(0, MakeJob("other", WorkloadKind::kBatch, 1, 100)));
  EXPECT_TRUE(r.decisions.empty());
  EXPECT_EQ(e.job(*e.FindByName("other")).phase, JobPhase::kPending);
  EXPECT_EQ(e.job(*e.FindByName("a")).phase, JobPhase::kRunning);
}

TEST(ReplayTest, StopsARunAtItsEndAndStartsTheNextRowElsewhere) {
  // An observed requeue: the first run stopped at 10 s on node 0, the second ran on node 1.
  Cluster c = TwoNodes();
  Engine e(c, FromText("a,0,10,H100-0\na,12,none,H100-1\n", c));
  e.Handle(Event::Arrival(0, MakeJob("a", WorkloadKind::kBatch, 1, 100)));
  EXPECT_EQ(e.job(*e.FindByName("a")).phase, JobPhase::kRunning);
  const auto& r10 = e.Handle(Event::Timer(10000));
  ASSERT_EQ(r10.decisions.size(), 1u);
  EXPECT_EQ(r10.decisions[0].type, DecisionType::kPreempt);
  EXPECT_EQ(r10.wake_at, 12000);
  const auto& r12 = e.Handle(Event::Timer(12000));
  ASSERT_EQ(r12.decisions.size(), 1u);
  EXPECT_EQ(r12.decisions[0].type, DecisionType::kStart);
  EXPECT_EQ(c.gpu(r12.decisions[0].placement.gpus[0]).node, 1);
}

TEST(ReplayTest, AServiceRunsAsManyReplicasAsRowsDue) {
  Cluster c = TwoNodes();
  WorkloadSpec svc = MakeService("svc", 10);
  svc.realtime.cold_start = 0;
  Engine e(c, FromText("svc,0,none,H100-0\nsvc,3,6,H100-1\n", c));
  e.Handle(Event::Arrival(0, svc));
  const WorkloadId id = *e.FindByName("svc");
  EXPECT_EQ(e.job(id).live_replicas(), 1);
  e.Handle(Event::Timer(3000));
  ASSERT_EQ(e.job(id).live_replicas(), 2);
  const Allocation* second = e.allocation(e.job(id).allocations[1]);
  EXPECT_EQ(c.gpu(second->placement.gpus[0]).node, 1);
  e.Handle(Event::Timer(6000));
  ASSERT_EQ(e.job(id).live_replicas(), 1);
  EXPECT_EQ(c.gpu(e.allocation(e.job(id).allocations[0])->placement.gpus[0]).node, 0);
}

TEST(ReplayTest, BadInputNamesTheFileLineAndField) {
  Cluster c = TwoNodes();
  std::vector<WorkloadSpec> w = {MakeJob("a", WorkloadKind::kBatch, 2, 100)};
  EXPECT_EQ(Error("a,1,none,nowhere\n", c),
            "replay schedule s.csv:1: node: 'nowhere' is not a node of cluster test");
  EXPECT_EQ(Error("job,start_s,end_s,node\n# note\n\na,x,none,H100-0\n", c),
            "replay schedule s.csv:4: start_s: expected seconds (a number >= 0), got 'x'");
  EXPECT_EQ(Error("a,1,-2,H100-0\n", c),
            "replay schedule s.csv:1: end_s: expected seconds (a number >= 0) or none, got '-2'");
  EXPECT_EQ(Error("a,5,4,H100-0\n", c), "replay schedule s.csv:1: end_s: 4 is before start_s 5");
  EXPECT_EQ(Error("a,5,none\n", c),
            "replay schedule s.csv:1: row: expected job,start_s,end_s,node[,gpus], got 3 field(s)");
  EXPECT_EQ(Error("a,0,none,H100-0,0;8\n", c),
            "replay schedule s.csv:1: gpus: '8' is not a GPU index of node H100-0 (0-7)");
  EXPECT_EQ(Error("a,0,none,H100-0,1;1\n", c), "replay schedule s.csv:1: gpus: GPU 1 given twice");
  EXPECT_EQ(Error("b,0,none,H100-0\n", c, &w),
            "replay schedule s.csv:1: job: 'b' is not a workload of this replay (check the name)");
  EXPECT_EQ(Error("a,0,none,H100-0,3\n", c, &w),
            "replay schedule s.csv:1: gpus: 1 given, workload a asks for 2");
  EXPECT_EQ(Error("a,0,none,H100-0,3;4\n", c, &w), "ok");
}

TEST(ReplayTest, RegisteredNeedsItsScheduleAndIsNotComparedByDefault) {
  const PolicyRegistry& reg = PolicyRegistry::Builtin();
  Cluster c = TwoNodes();
  auto none = reg.Make("replay", c);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("replay:schedule=FILE"), std::string::npos);
  auto missing = reg.Make("replay:schedule=/nonexistent/s.csv", c);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/s.csv"), std::string::npos);
  auto names = reg.compared_names();
  EXPECT_EQ(std::find(names.begin(), names.end(), "replay"), names.end());
  names = reg.names();
  EXPECT_NE(std::find(names.begin(), names.end(), "replay"), names.end());
}

// Through the simulator, from a file: the observed schedule's value is the ledger's.
TEST(ReplayTest, SimulatorCountsTheObservedScheduleValue) {
  Cluster c = TwoNodes();
  std::vector<WorkloadSpec> w = {MakeJob("early", WorkloadKind::kBatch, 8, 10),
                                 MakeJob("late", WorkloadKind::kBatch, 8, 10)};
  for (WorkloadSpec& s : w) {
    s.deadline = 15 * kSecond;
    s.value.decay_after_deadline = 10 * kSecond;
    s.speed_overrides = {{c.node(0).gpu_type, 1.0}};
  }
  const std::string path = ::testing::TempDir() + "replay_test_schedule.csv";
  {
    std::ofstream f(path);
    // early: 0-10 s, done by its deadline (10 earned); late: 10-20 s, 5 s past it (half).
    f << "job,start_s,end_s,node,gpus\nearly,0,10,H100-0\nlate,10,20,H100-0\n";
  }
  SimInput in = MakeSimInput(c, w);
  auto r = Simulate(in, "replay:schedule=" + path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->metrics.value, 15.0, 1e-9);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace airtime
