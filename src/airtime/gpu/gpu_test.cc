// Tests of the fake inventory, the NVML name table, OpenInventory and ClusterFromDevices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "airtime/gpu/fake_inventory.h"
#include "airtime/gpu/host_cluster.h"
#include "airtime/gpu/inventory.h"
#include "airtime/gpu/model_names.h"

namespace airtime {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(FakeGpuSpecTest, ParsesCountsAndTypes) {
  auto d = ParseFakeGpuSpec("2xH200, 4xL4");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->size(), 6u);
  EXPECT_EQ((*d)[0].type, "H200");
  EXPECT_EQ((*d)[0].model, "airtime fake H200");
  EXPECT_EQ((*d)[0].memory_mib, 141 * 1024);
  EXPECT_TRUE((*d)[0].fake);
  EXPECT_EQ((*d)[5].type, "L4");
  EXPECT_EQ((*d)[5].index, 5);
  EXPECT_EQ((*d)[5].memory_mib, 24 * 1024);
}

TEST(FakeGpuSpecTest, AcceptsAliasesAndBareTypes) {
  auto d = ParseFakeGpuSpec("1XA100-SXM4-80GB,h100");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[0].type, "A100-80GB");
  EXPECT_EQ((*d)[1].type, "H100");
}

TEST(FakeGpuSpecTest, UnknownTypeNamesItWithSuggestion) {
  auto d = ParseFakeGpuSpec("8xH10");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(d.status().message(),
              AllOf(HasSubstr("unknown GPU type 'H10'"), HasSubstr("did you mean 'H100'?"),
                    HasSubstr("known: H200, H100")));
  auto far = ParseFakeGpuSpec("2xRTX4090");
  ASSERT_FALSE(far.ok());
  EXPECT_THAT(far.status().message(), HasSubstr("'RTX4090'"));
  EXPECT_THAT(far.status().message(), ::testing::Not(HasSubstr("did you mean")));
}

TEST(FakeGpuSpecTest, RejectsMalformedItems) {
  for (const char* bad :
       {"", "8x", "0xH100", "8*H100", "8xH100,,2xL4", "99999xH100", "600xH100,600xH100"}) {
    auto d = ParseFakeGpuSpec(bad);
    ASSERT_FALSE(d.ok()) << "'" << bad << "'";
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(FakeInventoryTest, UuidsAreDeterministic) {
  auto a = FakeInventory::Create("2xH100,1xA100-80GB");
  auto b = FakeInventory::Create("2xH100,1xA100-80GB");
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<std::string> uuids;
  for (const auto& d : (*a)->Devices()) uuids.push_back(d.uuid);
  EXPECT_THAT(uuids, ElementsAre("GPU-fake-0000-h100-00", "GPU-fake-0001-h100-01",
                                 "GPU-fake-0002-a100-80gb-00"));
  for (size_t i = 0; i < uuids.size(); ++i) EXPECT_EQ((*b)->Devices()[i].uuid, uuids[i]);
}

TEST(FakeInventoryTest, ReportsFlowIntoSamples) {
  auto inv = FakeInventory::Create("2xH100");
  ASSERT_TRUE(inv.ok());
  auto before = (*inv)->Sample(1000);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].at, 1000);
  EXPECT_FALSE(before[0].utilization.has_value());
  EXPECT_FALSE(before[0].memory_used_mib.has_value());

  ASSERT_TRUE((*inv)->Report("GPU-fake-0001-h100-01", 0.75, 30000, {12, 7, 12}).ok());
  auto after = (*inv)->Sample(2000);
  EXPECT_FALSE(after[0].utilization.has_value());
  EXPECT_EQ(after[1].uuid, "GPU-fake-0001-h100-01");
  EXPECT_DOUBLE_EQ(after[1].utilization.value_or(-1), 0.75);
  EXPECT_EQ(after[1].memory_used_mib.value_or(-1), 30000);
  EXPECT_FALSE(after[1].power_w.has_value());
  EXPECT_THAT(after[1].pids, ElementsAre(7, 12));

  ASSERT_TRUE((*inv)->Report("GPU-fake-0001-h100-01", 0.1, std::nullopt, {}).ok());
  EXPECT_FALSE((*inv)->Sample(3000)[1].memory_used_mib.has_value());  // last report wins
}

TEST(FakeInventoryTest, RejectsBadReports) {
  auto inv = FakeInventory::Create("1xL4");
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ((*inv)->Report("GPU-nope", 0.5, 1, {}).code(), StatusCode::kNotFound);
  const std::string uuid = (*inv)->Devices()[0].uuid;
  EXPECT_EQ((*inv)->Report(uuid, 1.5, 1, {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*inv)->Report(uuid, 0.5, 25 * 1024, {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*inv)->Report(uuid, 0.5, -1, {}).code(), StatusCode::kInvalidArgument);
}

TEST(ModelNamesTest, MapsNvmlNamesToCatalogTypes) {
  struct Case {
    const char* name;
    int64_t memory_mib;
    const char* type;
  };
  const Case cases[] = {
      {"NVIDIA H200", 143771, "H200"},
      {"NVIDIA H200 NVL", 143771, "H200"},
      {"NVIDIA H100 80GB HBM3", 81559, "H100"},
      {"NVIDIA H100 PCIe", 81559, "H100"},
      {"NVIDIA A100-SXM4-80GB", 81920, "A100-80GB"},
      {"NVIDIA A100 80GB PCIe", 81920, "A100-80GB"},
      {"NVIDIA A100-PCIE-40GB", 40960, "A100-40GB"},
      {"NVIDIA A100-SXM4-40GB", 40536, "A100-40GB"},
      {"NVIDIA A100-SXM4-80GB", 0, "A100-80GB"},  // memory unknown: the name decides
      {"NVIDIA A100-SXM4-40GB", 0, "A100-40GB"},
      {"Tesla V100-SXM2-32GB", 32510, "V100"},
      {"Tesla V100-PCIE-16GB", 16160, "V100-16GB"},
      {"Tesla V100S-PCIE-32GB", 32510, "V100"},
      {"NVIDIA L40S", 46068, "L40S"},
      {"NVIDIA L4", 23034, "L4"},
      {"NVIDIA A10", 23028, "A10"},
      {"NVIDIA A10G", 23028, "A10"},
      {"Tesla T4", 15360, "T4"},
      {"Tesla P100-PCIE-16GB", 16280, "P100"},
      {"Tesla K80", 11441, "K80"},
      {"nvidia h100 80gb hbm3", 81559, "H100"},
      // Not in the catalogue, or not what their letters suggest.
      {"NVIDIA GH200 480GB", 97871, ""},
      {"NVIDIA L40", 46068, ""},
      {"NVIDIA GeForce RTX 4090", 24564, ""},
      {"NVIDIA B200", 183359, ""},
      {"", 0, ""},
  };
  for (const auto& c : cases)
    EXPECT_EQ(CatalogTypeForModel(c.name, c.memory_mib), c.type) << "'" << c.name << "'";
}

TEST(OpenInventoryTest, FakeSpecGivesFakeGpus) {
  std::string note;
  auto inv = OpenInventory("8xH100", &note);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ((*inv)->Devices().size(), 8u);
  EXPECT_THAT(note, HasSubstr("8xH100"));
  EXPECT_TRUE((*inv)->Report((*inv)->Devices()[0].uuid, 0.5, std::nullopt, {}).ok());
  EXPECT_FALSE(OpenInventory("8xH10", &note).ok());
}

TEST(OpenInventoryTest, AbsentNvmlGivesEmptyInventoryAndNote) {
  std::string note;
  auto inv = OpenInventory("", &note, "/nonexistent/libnvidia-ml.so.1");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_TRUE((*inv)->Devices().empty());
  EXPECT_TRUE((*inv)->Sample(1).empty());
  EXPECT_EQ(note,
            "NVML not found (/nonexistent/libnvidia-ml.so.1): no GPUs; use --fake-gpus 8xH100 "
            "to simulate");
  EXPECT_EQ((*inv)->Report("GPU-x", 0.5, 1, {}).code(), StatusCode::kFailedPrecondition);
}

GpuDevice Dev(const std::string& uuid, const std::string& type, bool mig = false) {
  GpuDevice d;
  d.uuid = uuid;
  d.model = type.empty() ? "NVIDIA Mystery" : "NVIDIA " + type;
  d.type = type;
  d.mig_enabled = mig;
  return d;
}

TEST(HostClusterTest, OneNodeNamedAfterTheHost) {
  auto devices = ParseFakeGpuSpec("8xH100");
  ASSERT_TRUE(devices.ok());
  std::string note = "stale";
  auto c = ClusterFromDevices(*devices, "gpu-host-1", &note);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->name(), "gpu-host-1");
  ASSERT_EQ(c->node_count(), 1u);
  EXPECT_EQ(c->node(0).name, "gpu-host-1");
  EXPECT_EQ(c->gpu_count(), 8u);
  EXPECT_EQ(c->catalog().type(c->gpu_type(0)).name, "H100");
  EXPECT_EQ(c->gpu_name(7), "gpu-host-1/gpu7");
  EXPECT_EQ(note, "");
}

TEST(HostClusterTest, LeavesOutUnknownTypesWithNote) {
  std::vector<GpuDevice> devices = {Dev("GPU-a", "H200"), Dev("GPU-b", ""), Dev("GPU-c", "H200")};
  std::string note;
  auto c = ClusterFromDevices(devices, "h", &note);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->gpu_count(), 2u);
  EXPECT_THAT(note, AllOf(HasSubstr("GPU-b"), HasSubstr("NVIDIA Mystery")));
  EXPECT_THAT(ClusterGpuUuids(devices), ElementsAre("GPU-a", "GPU-c"));
}

TEST(HostClusterTest, MixedTypesGiveOneNodePerType) {
  std::vector<GpuDevice> devices = {Dev("GPU-l0", "L4"), Dev("GPU-h0", "H200", true),
                                    Dev("GPU-l1", "L4"), Dev("GPU-h1", "H200")};
  auto c = ClusterFromDevices(devices, "box");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->node_count(), 3u);
  EXPECT_EQ(c->node(0).name, "box-l4");
  EXPECT_EQ(c->node(0).gpu_count, 2);
  EXPECT_EQ(c->node(1).name, "box-h200-mig");
  EXPECT_TRUE(c->node(1).mig_enabled);
  EXPECT_EQ(c->node(2).name, "box-h200");
  EXPECT_FALSE(c->node(2).mig_enabled);
  EXPECT_EQ(c->rack_of(0), c->rack_of(2));
  EXPECT_THAT(ClusterGpuUuids(devices), ElementsAre("GPU-l0", "GPU-l1", "GPU-h0", "GPU-h1"));
}

TEST(HostClusterTest, NoDevicesAndBadHost) {
  auto c = ClusterFromDevices({}, "cpu-only");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->node_count(), 1u);
  EXPECT_EQ(c->gpu_count(), 0u);
  EXPECT_EQ(ClusterFromDevices({}, " ").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace airtime
