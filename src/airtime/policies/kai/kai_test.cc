// Scenario tests for kai: quota borrowing, reclaim, priority preemption, consolidation.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "airtime/engine/engine.h"
#include "airtime/engine/test_util.h"
#include "airtime/policies/registry.h"

namespace airtime {
namespace {

using testing::MakeCluster;

WorkloadSpec Work(const std::string& name, const std::string& tenant, int gpus, double hours,
                  int priority = 0, bool preemptible = true) {
  WorkloadSpec s = testing::MakeJob(name, WorkloadKind::kTraining, gpus, hours * 3600);
  s.tenant = tenant;
  s.priority = priority;
  s.preemptible = preemptible;
  s.checkpoint_interval = 30 * kMinute;
  s.restart_cost = 2 * kMinute;
  return s;
}

std::unique_ptr<Engine> Make(const Cluster& c, const std::string& spec = "kai") {
  auto p = PolicyRegistry::Builtin().Make(spec, c);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::make_unique<Engine>(c, std::move(*p));
}

// GPUs held per tenant.
std::map<std::string, int> Held(const Engine& e) {
  std::map<std::string, int> out;
  for (const auto& [id, a] : e.allocations())
    out[e.job(a.workload).s().tenant] += static_cast<int>(a.placement.gpus.size());
  return out;
}

bool Running(const Engine& e, const std::string& name) {
  auto id = e.FindByName(name);
  return id && e.job(*id).phase == JobPhase::kRunning;
}

AllocationId AllocOf(const Engine& e, const std::string& name) {
  return e.job(*e.FindByName(name)).allocations.front();
}

int Count(const CycleResult& r, DecisionType t) {
  int n = 0;
  for (const Decision& d : r.decisions) n += d.type == t ? 1 : 0;
  return n;
}

TEST(KaiTest, ParametersParseAndRefuseNonsense) {
  Cluster c = MakeCluster({{"H100", 8, 1}, {"L40S", 8, 1}});
  const auto& reg = PolicyRegistry::Builtin();
  EXPECT_TRUE(reg.Make("kai", c).ok());
  EXPECT_TRUE(reg.Make("kai:quota=research=4;product=H100*4+L40S*2:over_quota_weight=research=2:"
                       "limit=research=12:departments=ml=research+product:consolidate=false",
                       c)
                  .ok());
  EXPECT_TRUE(reg.Make("kai:quota=a=2,b=3", c).ok());  // ',' works outside the CLI
  EXPECT_FALSE(reg.Make("kai:quota=a", c).ok());
  EXPECT_FALSE(reg.Make("kai:quota=a=Z100*3", c).ok());
  EXPECT_FALSE(reg.Make("kai:quota=a=-2", c).ok());
  EXPECT_FALSE(reg.Make("kai:over_quota_weight=a=x", c).ok());
  EXPECT_FALSE(reg.Make("kai:departments=d=a;e=a", c).ok());
  EXPECT_FALSE(reg.Make("kai:consolidate=maybe", c).ok());
  EXPECT_TRUE(reg.Make("kai:preempt_min_runtime=30m:reclaim_min_runtime=1h", c).ok());
  EXPECT_FALSE(reg.Make("kai:preempt_min_runtime=soon", c).ok());
  EXPECT_FALSE(reg.Make("kai:quotas=a=1", c).ok());
}

// 8 GPUs, tenants a and b (default quota: 4 each). While b is idle, a borrows all 8 with
// preemptible work; b then reclaims its deserved 4, and no more: its fair share is 4.
TEST(KaiTest, IdleQuotaIsBorrowedAndReclaimedUpToTheDeservedQuota) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  auto e = Make(c);
  e->Handle(Event::Arrival(0, Work("b0", "b", 1, 0.1)));
  for (int i = 0; i < 8; ++i)
    e->Handle(Event::Arrival(0, Work("a" + std::to_string(i), "a", 1, 10)));
  EXPECT_EQ(Held(*e)["a"], 7);
  e->Handle(Event::Completion(6 * kMinute, AllocOf(*e, "b0")));
  EXPECT_EQ(Held(*e)["a"], 8) << "a borrows b's idle quota";

  for (int i = 0; i < 3; ++i) {
    auto& r = e->Handle(Event::Arrival(kHour, Work("b" + std::to_string(i + 1), "b", 1, 10)));
    EXPECT_EQ(Count(r, DecisionType::kPreempt), 1);
    EXPECT_NE(r.decisions[0].reason.find("kai reclaim"), std::string::npos)
        << r.decisions[0].reason;
  }
  EXPECT_EQ(Held(*e)["b"], 3);
  for (int i = 4; i < 7; ++i)
    e->Handle(Event::Arrival(2 * kHour, Work("b" + std::to_string(i), "b", 1, 10)));
  EXPECT_EQ(Held(*e)["b"], 4);
  EXPECT_EQ(Held(*e)["a"], 4) << "a keeps its deserved quota";
  // The preempted work of a waits, and keeps its checkpoint (1 h at the first reclaim).
  int waiting_a = 0;
  for (WorkloadId id : e->queue()) {
    const Job& j = e->job(id);
    if (j.s().tenant != "a") continue;
    ++waiting_a;
    EXPECT_EQ(j.preemptions, 1);
    EXPECT_GE(j.work_saved, 3600);
  }
  EXPECT_EQ(waiting_a, 4);
}

// The tenants' standings for the daemon's /metrics (Policy::tenants): deserved quota, fair
// share, allocation now and borrowing over the quota; only policies with tenant quotas report.
TEST(KaiTest, TenantReportGivesDeservedAllocatedAndBorrowed) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  auto e = Make(c);
  ASSERT_NE(e->policy().tenants, nullptr);
  e->Handle(Event::Arrival(0, Work("b0", "b", 1, 0.1)));
  for (int i = 0; i < 8; ++i)
    e->Handle(Event::Arrival(0, Work("a" + std::to_string(i), "a", 1, 10)));
  auto standing = [&](const std::string& tenant) {
    for (const TenantStanding& t : e->policy().tenants->Standings(*e))
      if (t.tenant == tenant) return t;
    ADD_FAILURE() << "no standing for tenant " << tenant;
    return TenantStanding{};
  };
  EXPECT_EQ(e->policy().tenants->Standings(*e).size(), 2u);
  EXPECT_DOUBLE_EQ(standing("a").deserved, 4);  // no quota configured: half of 8 each
  EXPECT_DOUBLE_EQ(standing("a").allocated, 7);
  EXPECT_DOUBLE_EQ(standing("a").borrowed, 3);
  EXPECT_DOUBLE_EQ(standing("b").allocated, 1);
  EXPECT_DOUBLE_EQ(standing("b").borrowed, 0);
  // Allocation is read as the engine stands now, before the next cycle's refresh.
  e->Handle(Event::Completion(6 * kMinute, AllocOf(*e, "b0")));
  EXPECT_DOUBLE_EQ(standing("a").allocated, 8);
  EXPECT_DOUBLE_EQ(standing("a").borrowed, 4);
  EXPECT_DOUBLE_EQ(standing("b").allocated, 0);
  EXPECT_DOUBLE_EQ(standing("b").deserved, 4);

  auto configured = Make(c, "airtime:quota=a=6;b=2");
  ASSERT_NE(configured->policy().tenants, nullptr);
  configured->Handle(Event::Arrival(0, Work("a0", "a", 3, 1)));
  const auto standings = configured->policy().tenants->Standings(*configured);
  ASSERT_EQ(standings.size(), 1u) << "b has sent nothing yet";
  EXPECT_EQ(standings[0].tenant, "a");
  EXPECT_DOUBLE_EQ(standings[0].deserved, 6);
  EXPECT_DOUBLE_EQ(standings[0].allocated, 3);
  EXPECT_DOUBLE_EQ(standings[0].borrowed, 0);
  EXPECT_EQ(Make(c, "airtime")->policy().tenants, nullptr) << "no quotas, no report";
}

// Quotas 2 + 2 of 8 GPUs, over-quota weights 3:1: with both queues asking for everything,
// fair shares are 2 + 4 x 3/4 = 5 and 2 + 4 x 1/4 = 3, and reclaim restores exactly that.
TEST(KaiTest, OverQuotaWeightsSplitTheSurplusAndReclaimRestoresFairShares) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  auto e = Make(c, "kai:quota=a=2;b=2:over_quota_weight=a=3;b=1");
  e->Handle(Event::Arrival(0, Work("b0", "b", 1, 0.1)));
  for (int i = 0; i < 8; ++i)
    e->Handle(Event::Arrival(0, Work("a" + std::to_string(i), "a", 1, 10)));
  e->Handle(Event::Completion(6 * kMinute, AllocOf(*e, "b0")));
  ASSERT_EQ(Held(*e)["a"], 8);
  for (int i = 1; i <= 8; ++i)
    e->Handle(Event::Arrival(kHour, Work("b" + std::to_string(i), "b", 1, 10)));
  e->Handle(Event::Timer(kHour + kSecond));
  EXPECT_EQ(Held(*e)["a"], 5);
  EXPECT_EQ(Held(*e)["b"], 3);
}

// Non-preemptible work runs only within its queue's deserved quota, even with GPUs free.
TEST(KaiTest, NonPreemptibleWorkStaysWithinQuota) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  auto e = Make(c);
  e->Handle(Event::Arrival(0, Work("b0", "b", 1, 10)));
  for (int i = 0; i < 5; ++i)
    e->Handle(Event::Arrival(0, Work("a" + std::to_string(i), "a", 1, 10, 0, false)));
  EXPECT_EQ(Held(*e)["a"], 4);
  EXPECT_FALSE(Running(*e, "a4"));
  EXPECT_EQ(e->state().node(0).free_whole, 3);
  // A preemptible one may use the surplus.
  e->Handle(Event::Arrival(kSecond, Work("a5", "a", 1, 10)));
  EXPECT_TRUE(Running(*e, "a5"));
}

// Only non-preemptible work counts against the quota of non-preemptible work: a queue far
// over quota with preemptible work still starts non-preemptible work within its quota.
TEST(KaiTest, PreemptibleOverQuotaWorkDoesNotUseUpTheQuotaOfFixedWork) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  auto e = Make(c);
  e->Handle(Event::Arrival(0, Work("b0", "b", 1, 0.01)));
  e->Handle(Event::Completion(kMinute, AllocOf(*e, "b0")));
  for (int i = 0; i < 6; ++i)
    e->Handle(Event::Arrival(kMinute, Work("a" + std::to_string(i), "a", 1, 10)));
  e->Handle(Event::Arrival(2 * kMinute, Work("fixed", "a", 2, 1, 0, false)));
  EXPECT_TRUE(Running(*e, "fixed"));
  EXPECT_EQ(Held(*e)["a"], 8);
}

// Within one queue, higher priority preempts lower-priority preemptible work, taking the
// victims that lose the least work; equal priority preempts nothing.
TEST(KaiTest, HigherPriorityPreemptsWithinTheQueueAtLeastLostWork) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  auto e = Make(c);
  e->Handle(Event::Arrival(0, Work("b0", "b", 1, 0.01)));
  e->Handle(Event::Completion(kMinute, AllocOf(*e, "b0")));
  // old0..3 start at 0:01 and checkpoint at 0:31, 1:01; new0..3 start at 0:50.
  for (int i = 0; i < 4; ++i)
    e->Handle(Event::Arrival(kMinute, Work("old" + std::to_string(i), "a", 1, 10)));
  for (int i = 0; i < 4; ++i)
    e->Handle(Event::Arrival(50 * kMinute, Work("new" + std::to_string(i), "a", 1, 10)));
  ASSERT_EQ(Held(*e)["a"], 8);
  // At 1:11, old work has lost 10 min since its checkpoint, new work 21 min.
  auto& same = e->Handle(Event::Arrival(71 * kMinute, Work("peer", "a", 2, 1)));
  EXPECT_EQ(Count(same, DecisionType::kPreempt), 0);
  auto& r = e->Handle(Event::Arrival(71 * kMinute, Work("urgent", "a", 2, 1, 5)));
  EXPECT_EQ(Count(r, DecisionType::kPreempt), 2);
  for (const Decision& d : r.decisions) {
    if (d.type != DecisionType::kPreempt) continue;
    EXPECT_EQ(e->job(d.workload).s().name.substr(0, 3), "old");
    EXPECT_NE(d.reason.find("kai preempt"), std::string::npos);
  }
  EXPECT_TRUE(Running(*e, "urgent"));
  EXPECT_FALSE(Running(*e, "peer"));
}

// With a preempt min-runtime, work that started recently is not a victim.
TEST(KaiTest, PreemptMinRuntimeProtectsFreshWork) {
  Cluster c = MakeCluster({{"H100", 2, 1}});
  auto e = Make(c, "kai:preempt_min_runtime=30m");
  e->Handle(Event::Arrival(0, Work("low", "a", 2, 10)));
  e->Handle(Event::Arrival(10 * kMinute, Work("high", "a", 2, 1, 5)));
  EXPECT_FALSE(Running(*e, "high"));
  e->Handle(Event::Timer(31 * kMinute));
  EXPECT_TRUE(Running(*e, "high"));
  EXPECT_FALSE(Running(*e, "low"));
}

// Two departments: ops borrowed the whole cluster while ml was idle; ml's queue reclaims up
// to ml's fair share (its quota 6), ops keeps its quota 2.
TEST(KaiTest, DepartmentsAreComparedWhereQueuesDiverge) {
  Cluster c = MakeCluster({{"H100", 8, 1}});
  auto e = Make(c, "kai:departments=ml=a+b;ops=c:quota=ml=6;ops=2");
  e->Handle(Event::Arrival(0, Work("a0", "a", 1, 0.01)));
  e->Handle(Event::Completion(kMinute, AllocOf(*e, "a0")));
  for (int i = 0; i < 8; ++i)
    e->Handle(Event::Arrival(kMinute, Work("c" + std::to_string(i), "c", 1, 10)));
  ASSERT_EQ(Held(*e)["c"], 8);
  for (int i = 1; i <= 8; ++i)
    e->Handle(Event::Arrival(kHour, Work("a" + std::to_string(i), "a", 1, 10)));
  EXPECT_EQ(Held(*e)["a"], 6);
  EXPECT_EQ(Held(*e)["c"], 2);
}

// Typed quotas make each GPU type a pool: b deserves L40S only, so its non-preemptible
// H100 work waits while its L40S work runs.
TEST(KaiTest, TypedQuotasArePerGpuTypePools) {
  Cluster c = MakeCluster({{"H100", 8, 1}, {"L40S", 8, 1}});
  auto e = Make(c, "kai:quota=a=H100*8;b=L40S*8");
  WorkloadSpec h = Work("b-h100", "b", 1, 1, 0, false);
  h.shape.allowed_types = {*GpuCatalog::Builtin().Find("H100")};
  WorkloadSpec l = Work("b-l40s", "b", 1, 1, 0, false);
  l.shape.allowed_types = {*GpuCatalog::Builtin().Find("L40S")};
  e->Handle(Event::Arrival(0, h));
  e->Handle(Event::Arrival(0, l));
  EXPECT_FALSE(Running(*e, "b-h100"));
  EXPECT_TRUE(Running(*e, "b-l40s"));
}

// Fragmentation: 4 GPUs free over two nodes, a 4-GPU job needs one node. Consolidation
// moves the 1-GPU job that blocks node 0 (it fits on node 1) and the big job starts.
TEST(KaiTest, ConsolidationMovesSmallWorkToFitAGang) {
  Cluster c = MakeCluster({{"H100", 4, 2}});
  for (const char* spec : {"kai", "kai:consolidate=false"}) {
    auto e = Make(c, spec);
    e->Handle(Event::Arrival(0, Work("j1", "a", 3, 1)));      // node 0
    e->Handle(Event::Arrival(0, Work("j2", "a", 3, 10)));     // node 1
    e->Handle(Event::Arrival(0, Work("small", "a", 1, 10)));  // node 0 (best fit tie)
    ASSERT_EQ(c.gpu(e->allocation(AllocOf(*e, "small"))->placement.gpus[0]).node, 0);
    e->Handle(Event::Completion(kHour, AllocOf(*e, "j1")));
    auto& r = e->Handle(Event::Arrival(kHour + kSecond, Work("big", "a", 4, 1)));
    if (std::string(spec) == "kai") {
      ASSERT_TRUE(Running(*e, "big")) << spec;
      EXPECT_EQ(Count(r, DecisionType::kPreempt), 1);
      EXPECT_NE(r.decisions[0].reason.find("consolidate"), std::string::npos);
      e->Handle(Event::Timer(kHour + 2 * kSecond));
      ASSERT_TRUE(Running(*e, "small"));
      EXPECT_EQ(c.gpu(e->allocation(AllocOf(*e, "small"))->placement.gpus[0]).node, 1);
    } else {
      EXPECT_FALSE(Running(*e, "big")) << spec;
    }
  }
}

}  // namespace
}  // namespace airtime
