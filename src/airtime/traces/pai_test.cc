#include "airtime/traces/pai.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "airtime/traces/trace_test_util.h"

namespace airtime {
namespace {

using ::airtime::testing::TraceTestData;
using ::testing::HasSubstr;

const std::string kSample = TraceTestData("alibaba-pai-2020/pai_machine_sample.csv");
const std::string kBad = TraceTestData("alibaba-pai-2020/pai_bad.csv");

GpuTypeId Type(const char* name) { return *GpuCatalog::Builtin().Find(name); }

TEST(PaiTest, ImportsGpuMachinesByDefault) {
  ImportStats stats;
  auto cluster = ImportPaiMachines(kSample, {}, &stats);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  EXPECT_EQ(cluster->name(), "pai-2020");
  EXPECT_EQ(cluster->node_count(), 181u);
  EXPECT_EQ(cluster->gpu_count(), 674u);
  EXPECT_EQ(stats.rows_read, 190u);
  EXPECT_EQ(stats.rows_filtered, 9u);
  EXPECT_EQ(stats.rows_imported, 181u);
  // Line 167: a24587964cada7173df3c5af,V100,96,384,8 -> the 16 GB V100.
  const Node* v100 = nullptr;
  for (const auto& n : cluster->nodes())
    if (n.name == "a24587964cada7173df3c5af") v100 = &n;
  ASSERT_NE(v100, nullptr);
  EXPECT_EQ(v100->gpu_type, Type("V100-16GB"));
  EXPECT_EQ(v100->gpu_count, 8);
  EXPECT_EQ(v100->cpu_milli, 96000);
  EXPECT_EQ(v100->memory_mib, 384 * 1024);
  const auto& per_type = cluster->gpus_per_type();
  EXPECT_EQ(per_type[Type("V100")], 13 * 8);  // V100M32
  EXPECT_EQ(per_type[Type("MISC")], 28 * 8);
  EXPECT_EQ(per_type[Type("P100")], 80 * 2);
}

TEST(PaiTest, IncludesCpuMachinesOnRequest) {
  PaiOptions o;
  o.include_cpu_nodes = true;
  auto cluster = ImportPaiMachines(kSample, o);
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(cluster->node_count(), 190u);
  EXPECT_EQ(cluster->gpu_count(), 674u);
  EXPECT_EQ(cluster->node(0).name, "7399a758eb02bae1a3621236");
  EXPECT_EQ(cluster->node(0).gpu_count, 0);
  o.limit = 3;
  cluster = ImportPaiMachines(kSample, o);
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(cluster->node_count(), 3u);
}

TEST(PaiTest, BrokenRows) {
  auto cluster = ImportPaiMachines(kBad);
  ASSERT_FALSE(cluster.ok());
  EXPECT_THAT(cluster.status().message(),
              HasSubstr("pai_bad.csv:2: column 'gpu_type': unknown GPU type 'A800'"));
  PaiOptions o;
  o.skip_bad_rows = true;
  o.include_cpu_nodes = true;
  ImportStats stats;
  cluster = ImportPaiMachines(kBad, o, &stats);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  EXPECT_EQ(cluster->node_count(), 2u);
  EXPECT_EQ(stats.rows_skipped, 5u);
  EXPECT_THAT(stats.first_errors[1], HasSubstr(":3: column 'cap_gpu': expected 0 on a CPU"));
  EXPECT_THAT(stats.first_errors[2],
              HasSubstr(":4: column 'cap_mem': expected a memory size in GB >= 0, got 'lots'"));
  EXPECT_THAT(stats.first_errors[3], HasSubstr(":5: column 'machine': machine 'm-ok-1' repeats"));
  EXPECT_THAT(stats.first_errors[4], HasSubstr(":6: expected 5 fields"));
}

TEST(PaiTest, AcceptsAHeaderLine) {
  // A copy of the list with its header prepended imports the same.
  auto cluster = ImportPaiMachines(TraceTestData("alibaba-pai-2020/pai_with_header.csv"));
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  EXPECT_EQ(cluster->node_count(), 1u);
  EXPECT_EQ(ImportPaiMachines("/no/pai.csv").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace airtime
