#include "airtime/server/gpu_history.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

using nlohmann::json;

TEST(GpuHistory, MeansPerSlotAndNullWithoutSample) {
  GpuHistory h(2, kMinute, 5);
  const TimeMs t0 = 10 * kMinute;
  h.Record(0, t0, 1.0, 0.5);
  h.Record(0, t0 + 30 * kSecond, 0.0, 0.1);  // same slot: means 0.5 and 0.3
  h.Record(1, t0 + 2 * kMinute, 0.5, std::nullopt);
  const json j = h.Json(t0 + 2 * kMinute, 3, {0, 1}, {"GPU-a", "GPU-b"});
  EXPECT_EQ(j["step_s"], 60.0);
  EXPECT_EQ(j["start"], t0);
  EXPECT_EQ(j["gpus"][0]["uuid"], "GPU-a");
  EXPECT_EQ(j["gpus"][0]["allocated"], json({0.5, nullptr, nullptr}));
  EXPECT_EQ(j["gpus"][0]["utilization"], json({0.3, nullptr, nullptr}));
  EXPECT_EQ(j["gpus"][1]["allocated"], json({nullptr, nullptr, 0.5}));
  EXPECT_EQ(j["gpus"][1]["utilization"], json({nullptr, nullptr, nullptr}));
  // The cluster: the mean over the GPUs that have a sample in the slot.
  EXPECT_EQ(j["cluster"]["allocated"], json({0.5, nullptr, 0.5}));
  EXPECT_EQ(j["cluster"]["utilization"], json({0.3, nullptr, nullptr}));
}

TEST(GpuHistory, KeepsOnlyTheLastSlotsAndClampsItsInput) {
  GpuHistory h(1, kMinute, 3);
  h.Record(0, 0, 1.0, 1.0);
  h.Record(0, 3 * kMinute, 7.0, -2.0);  // the same ring cell as slot 0: replaces it
  h.Record(5, 0, 1.0, 1.0);             // no GPU 5: ignored
  json j = h.Json(3 * kMinute, 99, {0, 5}, {});
  EXPECT_EQ(j["start"], 1 * kMinute);  // 99 slots asked, 3 kept
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["allocated"], json({nullptr, nullptr, 1.0}));
  EXPECT_EQ(j["gpus"][0]["utilization"], json({nullptr, nullptr, 0.0}));
  // Later: slot 0 is gone, slot 3 (the clamped sample) is the first of the window.
  j = h.Json(5 * kMinute, 3, {0}, {});
  EXPECT_EQ(j["gpus"][0]["allocated"], json({1.0, nullptr, nullptr}));
}

}  // namespace
}  // namespace airtime
