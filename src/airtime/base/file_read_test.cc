#include "airtime/base/file_read.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace airtime {
namespace {

using ::testing::HasSubstr;

class FileReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("airtime-file-read-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST_F(FileReadTest, ReadsARegularFileWhole) {
  std::ofstream(Path("a.txt"), std::ios::binary) << std::string("x\0y\n", 4);
  auto text = ReadFileBounded(Path("a.txt"), 4, "test file");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, std::string("x\0y\n", 4));
}

TEST_F(FileReadTest, MissingFileIsNotFound) {
  auto text = ReadFileBounded(Path("none.txt"), 10, "test file");
  EXPECT_EQ(text.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(text.status().message(), HasSubstr("cannot open test file '" + Path("none.txt")));
}

TEST_F(FileReadTest, OverTheLimitIsRefusedNamingTheLimit) {
  std::ofstream(Path("big.txt")) << "12345";
  auto text = ReadFileBounded(Path("big.txt"), 4, "test file");
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(text.status().message(),
            Path("big.txt") + ": larger than the 4-byte limit for a test file");
}

TEST_F(FileReadTest, HugeSparseFileIsRefusedWithoutReadingIt) {
  const std::string p = Path("sparse.bin");
  int fd = ::open(p.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t{1} << 40), 0);  // 1 TiB of holes
  ::close(fd);
  auto text = ReadFileBounded(p, 1 << 20, "test file");
  EXPECT_THAT(text.status().message(), HasSubstr("larger than the 1048576-byte limit"));
}

// /dev/zero never ends: the old readers grew until std::bad_alloc.
TEST_F(FileReadTest, DevZeroIsRefused) {
  auto text = ReadFileBounded("/dev/zero", 1 << 20, "test file");
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(text.status().message(),
            "test file '/dev/zero' is a character device, not a regular file");
}

TEST_F(FileReadTest, DirectoryIsRefused) {
  auto text = ReadFileBounded(dir_.string(), 1 << 20, "test file");
  EXPECT_THAT(text.status().message(), HasSubstr("is a directory, not a regular file"));
}

// A FIFO nobody writes to would block a plain open forever.
TEST_F(FileReadTest, FifoIsRefusedWithoutWaitingForAWriter) {
  ASSERT_EQ(::mkfifo(Path("pipe").c_str(), 0600), 0);
  auto text = ReadFileBounded(Path("pipe"), 1 << 20, "test file");
  EXPECT_THAT(text.status().message(), HasSubstr("is a FIFO (named pipe), not a regular file"));
}

}  // namespace
}  // namespace airtime
