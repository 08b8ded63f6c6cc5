#include "airtime/server/log_read.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace airtime {
namespace {

using ::testing::HasSubstr;

std::string Dir() {
  std::string d = ::testing::TempDir() + "/log_read_XXXXXX";
  EXPECT_NE(mkdtemp(d.data()), nullptr);
  return d;
}

TEST(ReadLogRange, ReadsFromAnOffsetOrTheTailWithinTheLimit) {
  const std::string dir = Dir();
  std::ofstream(dir + "/stdout.log") << "0123456789";
  auto all = ReadLogRange(dir + "/stdout.log", 0, 100);
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->data, "0123456789");
  EXPECT_EQ(all->size, 10);
  auto middle = ReadLogRange(dir + "/stdout.log", 3, 4);
  EXPECT_EQ(middle->data, "3456");
  EXPECT_EQ(middle->offset, 3);
  auto tail = ReadLogRange(dir + "/stdout.log", -1, 3);
  EXPECT_EQ(tail->data, "789");
  EXPECT_EQ(tail->offset, 7);
  auto past = ReadLogRange(dir + "/stdout.log", 50, 10);
  EXPECT_EQ(past->data, "");
  EXPECT_EQ(past->offset, 10);
  EXPECT_EQ(ReadLogRange(dir + "/stdout.log", -1, 100)->data, "0123456789");
}

TEST(ReadLogRange, AMissingLogIsNotFound) {
  auto r = ReadLogRange(Dir() + "/stdout.log", 0, 10);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("no log yet"));
}

// A workload that replaces its log with a link to a file it cannot read (or that another
// tenant owns) gets an error, not the file.
TEST(ReadLogRange, ALinkInPlaceOfTheLogIsNotFollowed) {
  const std::string dir = Dir();
  std::ofstream(dir + "/secret") << "not yours";
  std::filesystem::create_symlink(dir + "/secret", dir + "/stdout.log");
  auto r = ReadLogRange(dir + "/stdout.log", 0, 100);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("symbolic link"));
  std::filesystem::remove(dir + "/stdout.log");
  std::filesystem::create_hard_link(dir + "/secret", dir + "/stdout.log");
  r = ReadLogRange(dir + "/stdout.log", 0, 100);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("hard links"));
  std::filesystem::remove(dir + "/stdout.log");
  std::filesystem::create_directory(dir + "/stdout.log");
  r = ReadLogRange(dir + "/stdout.log", 0, 100);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("not a regular file"));
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  r = ReadLogRange(dir + "/fifo", 0, 100);  // opened without blocking, then refused
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("not a regular file"));
}

}  // namespace
}  // namespace airtime
