// Tests of the start pause rule on free space (no mount needed) and of FreeBytes.
#include "airtime/server/disk_space.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1024 * 1024;

TEST(DiskSpaceTest, BelowTheThresholdPausesStartsAndSaysWhy) {
  const std::string why = DiskPauseReason("/srv/airtime", 3 * kMiB + 5, 100 * kMiB);
  EXPECT_THAT(why, HasSubstr("starts paused"));
  EXPECT_THAT(why, HasSubstr("/srv/airtime's file system has 3 MiB free"));
  EXPECT_THAT(why, HasSubstr("below the 100 MiB needed"));
  EXPECT_THAT(why, HasSubstr("--min-free-mib"));
}

TEST(DiskSpaceTest, AtOrAboveTheThresholdStartsGoOn) {
  EXPECT_EQ(DiskPauseReason("/d", 100 * kMiB, 100 * kMiB), "");
  EXPECT_EQ(DiskPauseReason("/d", 100 * kMiB + 1, 100 * kMiB), "");
  EXPECT_NE(DiskPauseReason("/d", 100 * kMiB - 1, 100 * kMiB), "");
}

TEST(DiskSpaceTest, ThresholdZeroNeverPauses) { EXPECT_EQ(DiskPauseReason("/d", 0, 0), ""); }

TEST(DiskSpaceTest, FreeBytesOfARealDirectoryAndAMissingOne) {
  StatusOr<uint64_t> free = FreeBytes("/tmp");
  ASSERT_TRUE(free.ok()) << free.status().ToString();
  StatusOr<uint64_t> missing = FreeBytes("/no/such/dir/at/all");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("/no/such/dir/at/all"));
}

}  // namespace
}  // namespace airtime
