// The importers on the full traces in ../shared/traces; skipped when the folder is absent.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "airtime/traces/azure.h"
#include "airtime/traces/openb.h"
#include "airtime/traces/pai.h"
#include "airtime/traces/philly.h"
#include "airtime/traces/trace_test_util.h"

namespace airtime {
namespace {

using ::airtime::testing::SharedTrace;
using ::airtime::testing::SharedTracesPresent;

#define SKIP_WITHOUT_SHARED_TRACES() \
  if (!SharedTracesPresent()) GTEST_SKIP() << "../shared/traces not present"

TEST(FullTracesTest, Philly) {
  SKIP_WITHOUT_SHARED_TRACES();
  ImportStats stats;
  auto start = std::chrono::steady_clock::now();
  auto jobs = ImportPhilly(SharedTrace("philly/philly.csv"), {}, &stats);
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  std::printf("full Philly import: %zu jobs in %.1f ms\n", jobs->size(), ms.count());
  EXPECT_EQ(jobs->size(), 82247u);
  EXPECT_EQ(stats.rows_read, 82247u);
  EXPECT_EQ(stats.rows_skipped, 0u);
  EXPECT_EQ(jobs->front().submit_at, 0);  // 2017-09-04 10:30:41
  // Last submission 2017-12-22 08:02:11.
  EXPECT_EQ(jobs->back().submit_at,
            (109 * 86400LL + (8 * 3600 + 2 * 60 + 11) - (10 * 3600 + 30 * 60 + 41)) * 1000);
  size_t spanning = 0, gpus = 0;
  for (const auto& j : *jobs) {
    spanning += j.shape.locality == Locality::kAny;
    gpus += static_cast<size_t>(j.shape.gpu_count);
  }
  EXPECT_EQ(spanning, 289u);  // 7 x 12, 199 x 16, 7 x 24, 67 x 32, 6 x 64, 3 x 128 GPUs
  EXPECT_EQ(gpus, 76627u + 2 * 1818 + 4 * 1870 + 8 * 1643 + 12 * 7 + 16 * 199 + 24 * 7 + 32 * 67 +
                      64 * 6 + 128 * 3);
  PhillyOptions one;
  one.clusters = {"6214e9"};
  auto cluster = ImportPhilly(SharedTrace("philly/philly.csv"), one);
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(cluster->size(), 41226u);
}

TEST(FullTracesTest, OpenbNodes) {
  SKIP_WITHOUT_SHARED_TRACES();
  auto gpu = ImportOpenbNodes(SharedTrace("alibaba-gpu-2023/openb_node_list_gpu_node.csv"));
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_EQ(gpu->node_count(), 1213u);
  EXPECT_EQ(gpu->gpu_count(), 6212u);
  auto all = ImportOpenbNodes(SharedTrace("alibaba-gpu-2023/openb_node_list_all_node.csv"));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->node_count(), 1523u);
  EXPECT_EQ(all->gpu_count(), 6212u);
}

TEST(FullTracesTest, OpenbPodListsAllImportCleanly) {
  SKIP_WITHOUT_SHARED_TRACES();
  const struct {
    const char* file;
    size_t pods;
  } lists[] = {{"openb_pod_list_default.csv", 8152},
               {"openb_pod_list_gpushare40.csv", 8152},
               {"openb_pod_list_gpuspec33.csv", 8152},
               {"openb_pod_list_multigpu50.csv", 9061}};
  for (const auto& l : lists) {
    ImportStats stats;
    auto pods = ImportOpenbPods(SharedTrace(std::string("alibaba-gpu-2023/") + l.file), {}, &stats);
    ASSERT_TRUE(pods.ok()) << pods.status().ToString();
    EXPECT_EQ(pods->size(), l.pods) << l.file;
    EXPECT_EQ(stats.rows_skipped, 0u);
    for (const auto& p : *pods) {
      Status s = ValidateSpec(ToWorkloadSpec(p), GpuCatalog::Builtin());
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }
}

TEST(FullTracesTest, PaiMachines) {
  SKIP_WITHOUT_SHARED_TRACES();
  const std::string path = SharedTrace("alibaba-pai-2020/pai_machine_spec.csv");
  ImportStats stats;
  auto gpu_only = ImportPaiMachines(path, {}, &stats);
  ASSERT_TRUE(gpu_only.ok()) << gpu_only.status().ToString();
  EXPECT_EQ(gpu_only->node_count(), 1814u);
  EXPECT_EQ(gpu_only->gpu_count(), 6742u);
  EXPECT_EQ(stats.rows_read, 1897u);
  EXPECT_EQ(stats.rows_filtered, 83u);
  PaiOptions o;
  o.include_cpu_nodes = true;
  auto all = ImportPaiMachines(path, o);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->node_count(), 1897u);
  EXPECT_EQ(all->gpu_count(), 6742u);
}

TEST(FullTracesTest, AzureHours) {
  SKIP_WITHOUT_SHARED_TRACES();
  for (auto [file, requests] : {std::pair<const char*, size_t>{"code", 8819}, {"conv", 19366}}) {
    AzureTokenSummary tokens;
    AzureOptions o;
    o.diurnal_day = true;
    auto curve = ImportAzureDemand(
        SharedTrace(std::string("azure-llm-2023/AzureLLMInferenceTrace_") + file + ".csv"), o,
        nullptr, &tokens);
    ASSERT_TRUE(curve.ok()) << curve.status().ToString();
    EXPECT_EQ(tokens.requests, requests) << file;
    EXPECT_EQ(curve->size(), 24u * 60 + 1);
  }
}

}  // namespace
}  // namespace airtime
