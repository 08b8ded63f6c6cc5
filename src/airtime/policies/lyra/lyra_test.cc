// Scenario tests for lyra: idle inference servers go to training and come back on demand.
#include <gtest/gtest.h>

#include <memory>

#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/policies/registry.h"
#include "airtime/sim/simulator.h"

namespace airtime {
namespace {

using testing::MakeCluster;

WorkloadSpec Train(const std::string& name, int gpus, double hours, bool preemptible = true,
                   DurationMs checkpoint = 30 * kMinute) {
  WorkloadSpec s = testing::MakeJob(name, WorkloadKind::kTraining, gpus, hours * 3600);
  s.preemptible = preemptible;
  s.checkpoint_interval = checkpoint;
  s.restart_cost = 2 * kMinute;
  return s;
}

WorkloadSpec Service(int gpus) {
  WorkloadSpec s = testing::MakeService("svc", 10, gpus);
  s.realtime.min_replicas = 0;
  return s;
}

std::unique_ptr<Engine> Make(const Cluster& c, const std::string& spec = "lyra") {
  auto p = PolicyRegistry::Builtin().Make(spec, c);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::make_unique<Engine>(c, std::move(*p));
}

NodeIndex NodeOf(const Engine& e, const std::string& name) {
  const Job& j = e.job(*e.FindByName(name));
  if (j.allocations.empty()) return -1;
  return e.cluster().gpu(e.allocation(j.allocations.front())->placement.gpus[0]).node;
}

// Two 8-GPU inference servers, one training server; a 1-GPU-per-replica service.
TEST(LyraTest, TrainingBorrowsIdleInferenceServersAndGivesThemBackOnDemand) {
  Cluster c = MakeCluster({{"H100", 8, 2, "", "inference"}, {"H100", 8, 1, "", "training"}});
  auto e = Make(c);
  auto& a = e->Handle(Event::Arrival(0, Service(1)));
  const WorkloadId svc = a.arrived;
  e->Handle(Event::Demand(0, svc, 10));  // one replica
  EXPECT_EQ(e->job(svc).live_replicas(), 1);
  e->Handle(Event::Arrival(kSecond, Train("t-home", 8, 10)));
  e->Handle(Event::Arrival(kSecond, Train("t-loan", 8, 10)));
  e->Handle(Event::Arrival(kSecond, Train("t-rigid", 8, 10, /*preemptible=*/false)));
  EXPECT_EQ(NodeOf(*e, "t-home"), 2);
  const NodeIndex loan = NodeOf(*e, "t-loan");
  EXPECT_TRUE(loan == 0 || loan == 1) << "the idle inference server is loaned";
  EXPECT_NE(loan, NodeOf(*e, "svc"));
  EXPECT_EQ(NodeOf(*e, "t-rigid"), -1) << "non-preemptible work never borrows";

  // 1:40: demand for 9 replicas. 8 fit on the serving server; the 9th takes the loaned
  // server back at once, preempting t-loan (which keeps its 1:30 checkpoint).
  auto& r = e->Handle(Event::Demand(100 * kMinute + kSecond, svc, 85));
  EXPECT_EQ(e->job(svc).live_replicas(), 9);
  int preempts = 0;
  for (const Decision& d : r.decisions) {
    if (d.type == DecisionType::kPreempt) {
      ++preempts;
      EXPECT_EQ(e->job(d.workload).s().name, "t-loan");
      EXPECT_NE(d.reason.find("reclaimed for 'svc'"), std::string::npos) << d.reason;
    }
    if (d.type == DecisionType::kStart && d.workload == svc) {
      EXPECT_EQ(d.ready_at, r.at + 60 * kSecond);  // SLO: only the cold start, no wait
    }
  }
  EXPECT_EQ(preempts, 1);
  const Job& tl = e->job(*e->FindByName("t-loan"));
  EXPECT_EQ(tl.phase, JobPhase::kPending);
  EXPECT_NEAR(tl.work_saved, 90 * 60 * 1.8, 1e-6);  // three checkpoints at H100 speed

  // 3:00: demand falls back to one replica (the newest replicas go first); the freed
  // server goes on loan again and the preempted job resumes there.
  e->Handle(Event::Demand(3 * kHour, svc, 10));
  EXPECT_EQ(e->job(svc).live_replicas(), 1);
  EXPECT_EQ(NodeOf(*e, "t-loan"), loan);
  EXPECT_EQ(NodeOf(*e, "t-rigid"), -1);
}

// Reclaim takes the loaned server whose guests lose the least work.
TEST(LyraTest, ReclaimPicksTheServerWithTheLeastPreemptionCost) {
  Cluster c = MakeCluster({{"H100", 4, 3, "", "inference"}, {"H100", 4, 1, "", "training"}});
  auto e = Make(c);
  const WorkloadId svc = e->Handle(Event::Arrival(0, Service(4))).arrived;
  e->Handle(Event::Demand(0, svc, 10));
  const NodeIndex serving = NodeOf(*e, "svc");
  e->Handle(Event::Arrival(0, Train("home", 4, 10)));
  e->Handle(Event::Arrival(0, Train("cheap", 4, 10, true, 10 * kMinute)));
  e->Handle(Event::Arrival(0, Train("dear", 4, 10, true, /*checkpoint=*/0)));
  ASSERT_EQ(NodeOf(*e, "home"), 3);
  ASSERT_NE(NodeOf(*e, "cheap"), -1);
  ASSERT_NE(NodeOf(*e, "dear"), -1);
  const NodeIndex cheap_node = NodeOf(*e, "cheap");
  // 1:05: cheap lost 5 min since its checkpoint, dear 65 min (it never checkpoints).
  auto& r = e->Handle(Event::Demand(65 * kMinute, svc, 20));
  EXPECT_EQ(e->job(svc).live_replicas(), 2);
  EXPECT_EQ(NodeOf(*e, "cheap"), -1);
  EXPECT_NE(NodeOf(*e, "dear"), -1);
  bool started_on_reclaimed = false;
  for (const Decision& d : r.decisions)
    if (d.type == DecisionType::kStart && d.workload == svc)
      started_on_reclaimed = c.gpu(d.placement.gpus[0]).node == cheap_node;
  EXPECT_TRUE(started_on_reclaimed);
  EXPECT_NE(serving, cheap_node);
}

// loan_after: a server must stay free of replicas that long before it goes on loan; the
// policy asks for a cycle at that time.
TEST(LyraTest, LoanAfterWaitsBeforeLending) {
  Cluster c = MakeCluster({{"H100", 8, 1, "", "inference"}, {"H100", 8, 1, "", "training"}});
  auto e = Make(c, "lyra:loan_after=10m");
  const WorkloadId svc = e->Handle(Event::Arrival(0, Service(1))).arrived;
  e->Handle(Event::Demand(0, svc, 10));
  e->Handle(Event::Arrival(0, Train("home", 8, 10)));
  e->Handle(Event::Arrival(0, Train("guest", 8, 10)));
  auto& r = e->Handle(Event::Demand(kHour, svc, 0));  // the server falls idle at 1:00
  EXPECT_EQ(r.wake_at, kHour + 10 * kMinute);
  EXPECT_EQ(NodeOf(*e, "guest"), -1);
  e->Handle(Event::Timer(kHour + 10 * kMinute));
  EXPECT_EQ(NodeOf(*e, "guest"), 0);
}

TEST(LyraTest, ParametersAreChecked) {
  Cluster c = MakeCluster({{"H100", 8, 2}});
  const auto& reg = PolicyRegistry::Builtin();
  EXPECT_TRUE(reg.Make("lyra:inference_share=0.25:reserve=1", c).ok());
  EXPECT_FALSE(reg.Make("lyra:inference_share=2", c).ok());
  EXPECT_FALSE(reg.Make("lyra:reserve=1.5", c).ok());
  EXPECT_FALSE(reg.Make("lyra:loan_after=later", c).ok());
}

// Replayed through the simulator: a service with a day-night demand curve and a backlog of
// training. Against `static` (same pools, no loans) lyra finishes more training while the
// service keeps the same SLO attainment.
TEST(LyraTest, LoaningFinishesMoreTrainingAtTheSameSlo) {
  Cluster c = MakeCluster({{"H100", 8, 2, "", "inference"}, {"H100", 8, 1, "", "training"}});
  WorkloadSpec svc = testing::MakeService("svc", 10, 1);
  svc.realtime.min_replicas = 1;
  svc.realtime.cold_start = 2 * kMinute;
  svc.realtime.demand = {{0, 150}, {4 * kHour, 20}, {12 * kHour, 150}, {16 * kHour, 20}};
  std::vector<WorkloadSpec> ws = {svc};
  for (int i = 0; i < 12; ++i) {
    WorkloadSpec t = Train("t" + std::to_string(i), 8, 4.0, true, 15 * kMinute);
    t.submit_at = i * 10 * kMinute;
    t.value.on_completion = 20;
    ws.push_back(t);
  }
  SimInput in = MakeSimInput(c, ws);
  SimOptions opt;
  opt.horizon = 20 * kHour;
  auto rs = SimulatePolicies(in, {"static", "lyra"}, opt);
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  const SimResult& st = (*rs)[0];
  const SimResult& ly = (*rs)[1];
  EXPECT_GE(ly.metrics.slo_attainment, st.metrics.slo_attainment - 1e-9);
  EXPECT_GT(ly.metrics.slo_attainment, 0.99);
  const auto& training_static = st.metrics.kinds[static_cast<size_t>(WorkloadKind::kTraining)];
  const auto& training_lyra = ly.metrics.kinds[static_cast<size_t>(WorkloadKind::kTraining)];
  EXPECT_GT(training_lyra.value, training_static.value);
  EXPECT_EQ(ly.ledger.sum(), ly.ledger.installed_milli_ms);
}

}  // namespace
}  // namespace airtime
