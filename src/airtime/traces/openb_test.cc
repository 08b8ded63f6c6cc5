#include "airtime/traces/openb.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "airtime/traces/trace_test_util.h"

namespace airtime {
namespace {

using ::airtime::testing::TraceTestData;
using ::testing::HasSubstr;

const std::string kNodes = TraceTestData("alibaba-gpu-2023/openb_nodes_sample.csv");
const std::string kPods = TraceTestData("alibaba-gpu-2023/openb_pods_gpuspec33_head300.csv");
const std::string kMulti = TraceTestData("alibaba-gpu-2023/openb_pods_multigpu50_head40.csv");
const std::string kBadNodes = TraceTestData("alibaba-gpu-2023/openb_nodes_bad.csv");
const std::string kBadPods = TraceTestData("alibaba-gpu-2023/openb_pods_bad.csv");

GpuTypeId Type(const char* name) { return *GpuCatalog::Builtin().Find(name); }

TEST(OpenbNodesTest, ImportsTheSample) {
  ImportStats stats;
  auto cluster = ImportOpenbNodes(kNodes, {}, &stats);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  EXPECT_EQ(cluster->name(), "openb_nodes_sample");
  EXPECT_EQ(cluster->node_count(), 102u);
  EXPECT_EQ(cluster->gpu_count(), 394u);
  EXPECT_EQ(stats.rows_imported, 102u);
  int cpu_only = 0;
  for (const auto& n : cluster->nodes()) cpu_only += n.gpu_count == 0;
  EXPECT_EQ(cpu_only, 21);
  const Node& first = cluster->node(0);  // openb-node-0000,32000,262144,0,
  EXPECT_EQ(first.name, "openb-node-0000");
  EXPECT_EQ(first.cpu_milli, 32000);
  EXPECT_EQ(first.memory_mib, 262144);
  EXPECT_EQ(first.gpu_count, 0);
  const Node& p100 = cluster->node(9);  // openb-node-0135,64000,262144,2,P100
  EXPECT_EQ(p100.name, "openb-node-0135");
  EXPECT_EQ(p100.gpu_count, 2);
  EXPECT_EQ(p100.gpu_type, Type("P100"));
  // Types by alias: V100M16 and G2 appear in the sample.
  const auto& per_type = cluster->gpus_per_type();
  EXPECT_EQ(per_type[Type("V100-16GB")], 4);
  EXPECT_EQ(per_type[Type("G2")], 36 * 8);

  ImportOptions limited;
  limited.limit = 10;
  cluster = ImportOpenbNodes(kNodes, limited, &stats);
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(cluster->node_count(), 10u);
  EXPECT_EQ(stats.rows_read, 10u);
}

TEST(OpenbNodesTest, BrokenRows) {
  auto cluster = ImportOpenbNodes(kBadNodes);
  ASSERT_FALSE(cluster.ok());
  EXPECT_THAT(cluster.status().message(),
              HasSubstr("openb_nodes_bad.csv:3: column 'model': unknown GPU type 'H800X'"));
  ImportOptions o;
  o.skip_bad_rows = true;
  ImportStats stats;
  cluster = ImportOpenbNodes(kBadNodes, o, &stats);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  EXPECT_EQ(cluster->node_count(), 2u);
  EXPECT_EQ(stats.rows_skipped, 4u);
  ASSERT_EQ(stats.first_errors.size(), 4u);
  EXPECT_THAT(stats.first_errors[1], HasSubstr(":4: column 'model': expected a GPU model"));
  EXPECT_THAT(stats.first_errors[2], HasSubstr(":5: column 'sn': node name 'bad-node-0' repeats "
                                               "line 2"));
  EXPECT_THAT(stats.first_errors[3], HasSubstr(":6: column 'cpu_milli'"));
}

TEST(OpenbPodsTest, ImportsTheExcerpt) {
  ImportStats stats;
  auto pods = ImportOpenbPods(kPods, {}, &stats);
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  ASSERT_EQ(pods->size(), 300u);
  EXPECT_EQ(stats.rows_imported, 300u);

  // openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061
  const OpenbPod& p1 = (*pods)[1];
  EXPECT_EQ(p1.name, "openb-pod-0001");
  EXPECT_EQ(p1.cpu_milli, 6000);
  EXPECT_EQ(p1.memory_mib, 12288);
  EXPECT_EQ(p1.num_gpu, 1);
  EXPECT_EQ(p1.gpu_milli, 460);
  EXPECT_TRUE(p1.allowed.empty());
  EXPECT_EQ(p1.qos, "LS");
  EXPECT_EQ(p1.pod_phase, "Running");
  EXPECT_EQ(p1.creation_time, 427061);
  EXPECT_EQ(p1.deletion_time, 12902960);
  EXPECT_EQ(p1.scheduled_time, 427061);
  EXPECT_EQ(p1.line, 3);
  EXPECT_EQ(p1.source, "openb_pods_gpuspec33_head300.csv:3");

  WorkloadSpec w = ToWorkloadSpec(p1);
  EXPECT_EQ(w.name, "openb-pod-0001");
  EXPECT_EQ(w.kind, WorkloadKind::kBatch);
  EXPECT_EQ(w.tenant, "openb-LS");
  EXPECT_EQ(w.shape.gpu_count, 1);
  EXPECT_EQ(w.shape.mode, ShareMode::kFraction);
  EXPECT_EQ(w.shape.gpu_milli, 460);
  EXPECT_EQ(w.shape.locality, Locality::kNode);
  EXPECT_EQ(w.shape.cpu_milli, 6000);
  EXPECT_EQ(w.shape.memory_mib, 12288);
  EXPECT_EQ(w.submit_at, 427061 * kSecond);
  EXPECT_DOUBLE_EQ(w.work_seconds, 12902960.0 - 427061.0);
  // Traced wall time on any GPU.
  const GpuCatalog& cat = GpuCatalog::Builtin();
  EXPECT_EQ(w.RunTimeOn(Type("T4"), w.work_seconds, cat), (12902960 - 427061) * kSecond);
  EXPECT_EQ(w.source, p1.source);

  // openb-pod-0021,8000,30517,1,440,G2|P100|T4|V100M16|V100M32,LS,Running,...
  const OpenbPod& p21 = (*pods)[21];
  EXPECT_EQ(p21.allowed, (std::vector<GpuTypeId>{Type("G2"), Type("P100"), Type("T4"),
                                                 Type("V100-16GB"), Type("V100")}));
  EXPECT_EQ(ToWorkloadSpec(p21).shape.allowed_types, p21.allowed);

  // openb-pod-0005,20000,65536,0,0,,LS,...: a host-only task.
  WorkloadSpec cpu = ToWorkloadSpec((*pods)[5]);
  EXPECT_EQ(cpu.shape.gpu_count, 0);
  EXPECT_EQ(cpu.shape.mode, ShareMode::kWhole);
  EXPECT_EQ(cpu.shape.cpu_milli, 20000);

  // openb-pod-0017,88000,327680,8,1000,G2,Burstable,Succeeded,...: 8 whole GPUs.
  WorkloadSpec eight = ToWorkloadSpec((*pods)[17]);
  EXPECT_EQ(eight.shape.gpu_count, 8);
  EXPECT_EQ(eight.shape.mode, ShareMode::kWhole);
  EXPECT_EQ(eight.tenant, "openb-Burstable");

  // openb-pod-0061,...,BE,Pending,10001278,10001403, : never scheduled.
  const OpenbPod& pending = (*pods)[61];
  EXPECT_EQ(pending.pod_phase, "Pending");
  EXPECT_FALSE(pending.scheduled_time.has_value());
  EXPECT_DOUBLE_EQ(ToWorkloadSpec(pending).work_seconds, 10001403.0 - 10001278.0);

  for (const auto& p : *pods) {
    Status s = ValidateSpec(ToWorkloadSpec(p), cat);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
}

TEST(OpenbPodsTest, FiveColumnListHasNoTimes) {
  auto pods = ImportOpenbPods(kMulti);
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  ASSERT_EQ(pods->size(), 40u);
  const OpenbPod& p = (*pods)[17];  // openb-pod-0017,88000,327680,8,1000
  EXPECT_EQ(p.num_gpu, 8);
  EXPECT_TRUE(p.qos.empty());
  EXPECT_EQ(p.creation_time, 0);
  EXPECT_FALSE(p.scheduled_time.has_value());
  WorkloadSpec w = ToWorkloadSpec(p);
  EXPECT_EQ(w.tenant, "openb");
  EXPECT_EQ(w.submit_at, 0);
  EXPECT_DOUBLE_EQ(w.work_seconds, 1.0);
}

TEST(OpenbPodsTest, BrokenRows) {
  auto pods = ImportOpenbPods(kBadPods);
  ASSERT_FALSE(pods.ok());
  EXPECT_THAT(pods.status().message(),
              HasSubstr("openb_pods_bad.csv:3: column 'gpu_spec': unknown GPU type 'X99'"));
  ImportOptions o;
  o.skip_bad_rows = true;
  ImportStats stats;
  pods = ImportOpenbPods(kBadPods, o, &stats);
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_EQ(stats.rows_read, 7u);
  EXPECT_EQ(stats.rows_skipped, 5u);
  EXPECT_THAT(stats.first_errors[1],
              HasSubstr(":4: column 'gpu_milli': expected 1000 for a pod with more than one GPU"));
  EXPECT_THAT(stats.first_errors[2],
              HasSubstr(":5: column 'deletion_time': expected a time >= scheduled_time"));
  EXPECT_THAT(stats.first_errors[3], HasSubstr(":6: column 'num_gpu': expected a GPU count"));
  EXPECT_THAT(stats.first_errors[4], HasSubstr(":8: expected 11 fields"));
  // T4|T4|P100: the repeat is dropped.
  EXPECT_EQ((*pods)[0].allowed, (std::vector<GpuTypeId>{Type("T4"), Type("P100")}));
  EXPECT_FALSE((*pods)[1].scheduled_time.has_value());
  EXPECT_DOUBLE_EQ(ToWorkloadSpec((*pods)[1]).work_seconds, 10.0);
}

TEST(OpenbPodsTest, WorkloadsComeInSubmissionOrder) {
  ImportOptions o;
  o.skip_bad_rows = true;
  auto specs = ImportOpenbWorkloads(kPods, o);
  ASSERT_TRUE(specs.ok());
  ASSERT_EQ(specs->size(), 300u);
  EXPECT_EQ(specs->front().name, "openb-pod-0000");
  for (size_t i = 1; i < specs->size(); ++i)
    EXPECT_LE((*specs)[i - 1].submit_at, (*specs)[i].submit_at);
  EXPECT_EQ(ImportOpenbPods("/no/pods.csv").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace airtime
