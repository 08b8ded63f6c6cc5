#include <gtest/gtest.h>

#include "airtime/model/cluster.h"
#include "airtime/model/gpu_catalog.h"
#include "airtime/model/workload.h"

namespace airtime {
namespace {

TEST(GpuCatalogTest, KnowsTheRequiredTypes) {
  const auto& c = GpuCatalog::Builtin();
  for (const char* n : {"H200", "H100", "A100-80GB", "A100-40GB", "L40S", "L4", "A10", "T4", "V100",
                        "P100", "G2", "G3", "MISC", "v100m16", "V100M32"}) {
    EXPECT_TRUE(c.Find(n).ok()) << n;
  }
  auto h100 = c.Find("H100");
  ASSERT_TRUE(h100.ok());
  EXPECT_NE(c.type(*h100).FindMig("3g.40gb"), nullptr);
  EXPECT_NE(c.type(*h100).FindMig("1g.10gb"), nullptr);
  EXPECT_NE(c.type(*c.Find("H200")).FindMig("1g.18gb"), nullptr);
  EXPECT_NE(c.type(*c.Find("A100-40GB")).FindMig("1g.5gb"), nullptr);
  EXPECT_TRUE(c.type(*c.Find("T4")).mig_profiles.empty());
  auto bad = c.Find("B900");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("H100"), std::string::npos);
}

TEST(ClusterTest, BuildsGpuTableAndRejectsDuplicates) {
  auto t = *GpuCatalog::Builtin().Find("H100");
  std::vector<Node> nodes = {{"a", t, 8, 0, 0, "nvl0", "r0", "", false},
                             {"b", t, 4, 0, 0, "nvl0", "r0", "", false}};
  auto c = Cluster::Build("x", nodes);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->gpu_count(), 12u);
  EXPECT_EQ(c->gpu(9).node, 1);
  EXPECT_EQ(c->first_gpu(1), 8);
  EXPECT_EQ(c->domain_of(0), c->domain_of(1));
  EXPECT_EQ(c->gpu_name(9), "b/gpu1");
  nodes[1].name = "a";
  EXPECT_FALSE(Cluster::Build("x", nodes).ok());
}

TEST(WorkloadTest, ValueDecaysAfterDeadline) {
  ValueModel v;
  v.on_completion = 100;
  v.decay_after_deadline = 10 * kHour;
  EXPECT_DOUBLE_EQ(v.CompletionValue(5, std::nullopt), 100);
  EXPECT_DOUBLE_EQ(v.CompletionValue(kHour, kHour), 100);
  EXPECT_NEAR(v.CompletionValue(6 * kHour, kHour), 50, 1e-9);
  EXPECT_DOUBLE_EQ(v.CompletionValue(20 * kHour, kHour), 0);
}

TEST(WorkloadTest, ValidationNamesTheField) {
  WorkloadSpec s;
  s.name = "svc";
  s.kind = WorkloadKind::kRealtime;
  s.source = "w.yaml:3";
  Status st = ValidateSpec(s, GpuCatalog::Builtin());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("w.yaml:3"), std::string::npos);
  EXPECT_NE(st.message().find("capacity_rps"), std::string::npos);
  s.realtime.capacity_rps = 10;
  s.realtime.latency_slo_ms = 200;
  EXPECT_TRUE(ValidateSpec(s, GpuCatalog::Builtin()).ok());
  EXPECT_EQ(s.realtime.ReplicasFor(25), 3);
  EXPECT_EQ(s.realtime.ReplicasFor(0), 0);
}

// A demand of any size over any throughput gives a replica count within bounds: counted in
// double and bounded before it becomes an int (a rate 2^31 times the throughput once came
// out as min_replicas, and stopped every replica).
TEST(WorkloadSpecTest, ReplicasForAnyRateStayWithinTheirBounds) {
  RealtimeProfile rt;
  rt.capacity_rps = 1;
  rt.min_replicas = 1;
  rt.max_replicas = 3;
  EXPECT_EQ(rt.ReplicasFor(2147483648.0), 3);
  EXPECT_EQ(rt.ReplicasFor(1e300), 3);
  rt.capacity_rps = 1e-300;
  EXPECT_EQ(rt.ReplicasFor(1), 3);
  rt.max_replicas = kUnboundedReplicas;
  EXPECT_EQ(rt.ReplicasFor(kMaxRps), kUnboundedReplicas);
  EXPECT_EQ(ReplicasForRate(2147483648.0, 1), kUnboundedReplicas);
  EXPECT_EQ(ReplicasForRate(10, 0), 0);
  EXPECT_EQ(ReplicasForRate(-1, 1), 0);
  EXPECT_EQ(ReplicasForRate(7.0, 3.5), 2);
}

}  // namespace
}  // namespace airtime
