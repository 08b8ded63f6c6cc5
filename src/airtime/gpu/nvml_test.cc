// Tests of the real NVML path (dlopen, dlsym, per-field reads) against fake_nvml.cc, a
// stand-in libnvidia-ml built beside the test, so that no GPU is needed.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "airtime/gpu/host_cluster.h"
#include "airtime/gpu/inventory.h"
#include "airtime/gpu/nvml.h"
#include "airtime/gpu/nvml_inventory.h"

namespace airtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kFakeNvml[] = AIRTIME_FAKE_NVML_PATH;

// The fake library's test knobs, reached through its own handle (the same loaded copy
// that Nvml uses, since dlopen of one path shares it).
class FakeNvmlKnobs {
 public:
  FakeNvmlKnobs() : handle_(dlopen(kFakeNvml, RTLD_NOW | RTLD_LOCAL)) {}
  ~FakeNvmlKnobs() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  bool ok() const { return handle_ != nullptr; }
  void SetProcessRecordSize(unsigned int bytes) const {
    reinterpret_cast<void (*)(unsigned int)>(dlsym(handle_, "fake_nvml_set_process_record_size"))(
        bytes);
  }
  int InitCount() const {
    return reinterpret_cast<int (*)()>(dlsym(handle_, "fake_nvml_init_count"))();
  }

 private:
  void* handle_;
};

TEST(NvmlTest, MissingLibraryIsUnavailable) {
  auto nvml = Nvml::Open("/nonexistent/dir/libnvidia-ml.so.1");
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(nvml.status().message(),
              AllOf(HasSubstr("NVML not available"), HasSubstr("/nonexistent/dir/libnvidia-ml")));
}

TEST(NvmlTest, LibraryWithoutNvmlSymbolsIsUnusable) {
  auto nvml = Nvml::Open("libm.so.6");
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(nvml.status().message(), HasSubstr("nvmlInit_v2"));
}

TEST(NvmlTest, ReadsDevicesFromTheLibrary) {
  FakeNvmlKnobs knobs;
  ASSERT_TRUE(knobs.ok()) << dlerror();
  {
    auto nvml = Nvml::Open(kFakeNvml);
    ASSERT_TRUE(nvml.ok()) << nvml.status().ToString();
    EXPECT_EQ(knobs.InitCount(), 1);
    EXPECT_EQ((*nvml)->driver_version(), "550.0-fake");
    EXPECT_STREQ((*nvml)->process_api(), "v3");
    EXPECT_EQ((*nvml)->DeviceCount().value(), 2);
    auto d1 = (*nvml)->Device(1);
    ASSERT_TRUE(d1.ok()) << d1.status().ToString();
    EXPECT_EQ(d1->name, "NVIDIA H200");
    EXPECT_EQ(d1->uuid, "GPU-11111111-fake-nvml-1111-111111111111");
    EXPECT_EQ(d1->memory_total_mib, 143771);
    EXPECT_EQ(d1->mig_enabled, true);
    EXPECT_EQ(d1->minor, 7);  // /dev/nvidia7, whatever its index
    EXPECT_FALSE((*nvml)->Device(2).ok());
    EXPECT_THAT((*nvml)->ErrorText(3), HasSubstr("Not Supported (3)"));
  }
  EXPECT_EQ(knobs.InitCount(), 0);  // nvmlShutdown on destruction
}

TEST(NvmlTest, InventoryReadsDevicesAndSamples) {
  auto nvml = Nvml::Open(kFakeNvml);
  ASSERT_TRUE(nvml.ok()) << nvml.status().ToString();
  std::string note;
  auto inv = NvmlInventory::Open(std::move(*nvml), &note);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(note, "NVML driver 550.0-fake: 2 GPUs");
  auto devices = (*inv)->Devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].model, "NVIDIA H200");
  EXPECT_EQ(devices[0].type, "H200");
  EXPECT_EQ(devices[0].memory_mib, 143771);
  EXPECT_FALSE(devices[0].mig_enabled);
  EXPECT_TRUE(devices[1].mig_enabled);
  EXPECT_FALSE(devices[1].fake);
  EXPECT_EQ(devices[0].minor, 4);  // the device cgroup allows /dev/nvidia4 for it
  EXPECT_EQ(devices[1].minor, 7);

  auto samples = (*inv)->Sample(5000);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].uuid, devices[0].uuid);
  EXPECT_EQ(samples[0].at, 5000);
  EXPECT_DOUBLE_EQ(samples[0].utilization.value_or(-1), 0.40);
  EXPECT_EQ(samples[0].memory_used_mib.value_or(-1), 1024);
  EXPECT_DOUBLE_EQ(samples[0].power_w.value_or(-1), 350.0);
  EXPECT_THAT(samples[0].pids, ElementsAre(4242, 4343));
  EXPECT_FALSE(samples[1].utilization.has_value());  // NOT_SUPPORTED: unknown, not 0
  EXPECT_EQ(samples[1].memory_used_mib.value_or(-1), 0);
  EXPECT_DOUBLE_EQ(samples[1].power_w.value_or(-1), 90.0);
  EXPECT_TRUE(samples[1].pids.empty());

  auto c = ClusterFromDevices(devices, "h200-box");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->node_count(), 2u);  // one MIG-enabled, one not
}

TEST(NvmlTest, ProcessesOfEarlyR535RecordLayout) {
  FakeNvmlKnobs knobs;
  ASSERT_TRUE(knobs.ok());
  auto nvml = Nvml::Open(kFakeNvml);
  ASSERT_TRUE(nvml.ok()) << nvml.status().ToString();
  knobs.SetProcessRecordSize(32);
  auto t = (*nvml)->Telemetry(0);
  knobs.SetProcessRecordSize(24);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(t->pids.has_value());
  EXPECT_THAT(*t->pids, ElementsAre(4242, 4343));
}

TEST(NvmlTest, OpenInventoryUsesNvmlWhenNoFakeSpec) {
  std::string note;
  auto inv = OpenInventory("", &note, kFakeNvml);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ((*inv)->Devices().size(), 2u);
  EXPECT_THAT(note, HasSubstr("2 GPUs"));
}

}  // namespace
}  // namespace airtime
