// Tests for the checkpoint cap's measure and rule.
#include "airtime/server/checkpoint_cap.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace airtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class CheckpointCapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ckpt_cap_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const fs::path& p, size_t bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << std::string(bytes, 'x');
  }
  fs::path dir_;
};

TEST_F(CheckpointCapTest, CountsWhatIsAllocatedBelowTheDirectory) {
  Write(dir_ / "step-1" / "model.pt", 1 << 20);
  Write(dir_ / "step-1" / "optim.pt", 1 << 20);
  Write(dir_ / "latest", 10);
  DirUsage u = MeasureDir(dir_.string(), kMaxCheckpointEntries);
  EXPECT_EQ(u.entries, 4u);  // step-1, its two files, latest
  EXPECT_GE(u.bytes, uint64_t{2} << 20);
  EXPECT_LT(u.bytes, uint64_t{3} << 20);
  EXPECT_FALSE(u.more);
  EXPECT_FALSE(u.deep);
}

TEST_F(CheckpointCapTest, ASparseFileCountsWhatItUsesNotItsLength) {
  {
    const int fd = open((dir_ / "sparse").c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, off_t{1} << 40), 0);  // 1 TiB long, nothing written
    close(fd);
  }
  DirUsage u = MeasureDir(dir_.string(), kMaxCheckpointEntries);
  EXPECT_LT(u.bytes, uint64_t{1} << 20);
}

TEST_F(CheckpointCapTest, ALinkIsNotFollowed) {
  Write(dir_ / "outside" / "big", 4 << 20);
  fs::create_directories(dir_ / "ckpt");
  fs::create_directory_symlink(dir_ / "outside", dir_ / "ckpt" / "link");
  fs::create_directory_symlink("/", dir_ / "ckpt" / "root");
  DirUsage u = MeasureDir((dir_ / "ckpt").string(), kMaxCheckpointEntries);
  EXPECT_EQ(u.entries, 2u);
  EXPECT_LT(u.bytes, uint64_t{1} << 20);
  // The directory itself a link: not walked either.
  fs::create_directory_symlink(dir_ / "outside", dir_ / "swapped");
  const DirUsage swapped = MeasureDir((dir_ / "swapped").string(), kMaxCheckpointEntries);
  EXPECT_EQ(swapped.bytes, 0u);
  EXPECT_THAT(swapped.unreadable, HasSubstr("swapped: "));
  EXPECT_THAT(CheckpointOverCap("/d/checkpoints/7", swapped, 0),
              HasSubstr("its checkpoint directory /d/checkpoints/7 cannot be measured ("));
}

TEST_F(CheckpointCapTest, AMissingDirectoryHoldsNothing) {
  DirUsage u = MeasureDir((dir_ / "never-made").string(), kMaxCheckpointEntries);
  EXPECT_EQ(u.entries, 0u);
  EXPECT_EQ(u.bytes, 0u);
}

TEST_F(CheckpointCapTest, TooManyFilesStopTheWalkAndAreOverTheCap) {
  for (int i = 0; i < 30; ++i) Write(dir_ / ("f" + std::to_string(i)), 1);
  DirUsage u = MeasureDir(dir_.string(), 25);
  EXPECT_TRUE(u.more);
  EXPECT_EQ(u.entries, 25u);
  EXPECT_THAT(CheckpointOverCap("/d/checkpoints/7", u, 0), HasSubstr("more than 100000 files"));
}

TEST_F(CheckpointCapTest, NestingBeyondTheDepthLimitIsOverTheCap) {
  fs::path p = dir_;
  for (size_t i = 0; i < kMaxCheckpointDepth + 5; ++i) p /= "d";
  fs::create_directories(p);
  DirUsage u = MeasureDir(dir_.string(), kMaxCheckpointEntries);
  EXPECT_TRUE(u.deep);
  EXPECT_THAT(CheckpointOverCap("/d/checkpoints/7", u, 0), HasSubstr("more than 64 deep"));
  // Up to the limit is fine.
  fs::remove_all(dir_ / "d");
  p = dir_;
  for (size_t i = 0; i < kMaxCheckpointDepth; ++i) p /= "d";
  fs::create_directories(p);
  u = MeasureDir(dir_.string(), kMaxCheckpointEntries);
  EXPECT_FALSE(u.deep);
  EXPECT_EQ(u.entries, kMaxCheckpointDepth);
}

TEST(CheckpointCapRuleTest, OverTheCapSaysWhereAndByHowMuch) {
  DirUsage u;
  u.bytes = uint64_t{3} << 20;
  u.entries = 2;
  EXPECT_EQ(CheckpointOverCap("/d/checkpoints/7", u, uint64_t{4} << 20), "");
  EXPECT_EQ(CheckpointOverCap("/d/checkpoints/7", u, uint64_t{3} << 20), "");  // at it: fine
  EXPECT_EQ(CheckpointOverCap("/d/checkpoints/7", u, 0), "");                  // 0: no cap
  EXPECT_EQ(CheckpointOverCap("/d/checkpoints/7", u, uint64_t{2} << 20),
            "its checkpoint directory /d/checkpoints/7 holds 3.0 MiB, over the cap of 2.0 MiB "
            "(--max-checkpoint-mib)");
  EXPECT_EQ(DefaultCheckpointCap(uint64_t{100} << 30), uint64_t{50} << 30);
}

}  // namespace
}  // namespace airtime
