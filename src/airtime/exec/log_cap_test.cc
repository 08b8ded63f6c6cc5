#include "airtime/exec/log_cap.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace airtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class LogCapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airtime_log_cap_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Read(const std::string& name) const {
    std::ifstream in(dir_ + "/" + name, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::string dir_;
};

constexpr TimeMs kNow = 1764900000000;  // a wall-clock time

TEST_F(LogCapTest, ALogUnderItsCapOrAbsentIsLeftAlone) {
  std::ofstream(dir_ + "/stdout.log") << "hello\n";
  auto cut = CapLog(dir_, "stdout.log", 6, kNow);
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_FALSE(cut->has_value());
  EXPECT_EQ(Read("stdout.log"), "hello\n");
  auto absent = CapLog(dir_, "stderr.log", 6, kNow);
  ASSERT_TRUE(absent.ok()) << absent.status().ToString();
  EXPECT_FALSE(absent->has_value());
  auto no_dir = CapLog(dir_ + "/nope", "stdout.log", 6, kNow);
  ASSERT_TRUE(no_dir.ok()) << no_dir.status().ToString();
  EXPECT_FALSE(no_dir->has_value());
}

// The process's own descriptor (O_APPEND, as the shim opens it) writes on after the cut, at
// the new end: after the note, nothing in between lost or overwritten.
TEST_F(LogCapTest, ALogOverItsCapKeepsItsTailAndTheWriterGoesOnAfterTheNote) {
  const int writer = open((dir_ + "/stdout.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  ASSERT_GE(writer, 0);
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "line " + std::to_string(i) + "\n";
  ASSERT_EQ(write(writer, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  const int64_t cap = 4000;
  auto cut = CapLog(dir_, "stdout.log", cap, kNow);
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  ASSERT_TRUE(cut->has_value());
  EXPECT_EQ((*cut)->size, static_cast<int64_t>(text.size()));
  EXPECT_EQ((*cut)->kept, LogCutKeep(cap));
  EXPECT_EQ(Read("stdout.log.1"), text.substr(text.size() - static_cast<size_t>(LogCutKeep(cap))));
  const std::string note = Read("stdout.log");
  EXPECT_THAT(note, StartsWith("[airtime "));
  EXPECT_THAT(note, HasSubstr("over its cap of 0.0 MiB: its last 1000 bytes are in stdout.log.1"));
  ASSERT_EQ(write(writer, "after\n", 6), 6);
  close(writer);
  EXPECT_EQ(Read("stdout.log"), note + "after\n");
  // The next cut replaces the last one's tail.
  std::ofstream(dir_ + "/stdout.log", std::ios::app) << std::string(5000, 'x');
  cut = CapLog(dir_, "stdout.log", cap, kNow + 1000);
  ASSERT_TRUE(cut.ok() && cut->has_value());
  EXPECT_EQ(Read("stdout.log.1"), std::string(1000, 'x'));
  EXPECT_FALSE(fs::exists(dir_ + "/stdout.log.1.tmp"));
}

TEST_F(LogCapTest, ALinkOrAnotherKindOfFileIsNotCut) {
  std::ofstream(dir_ + "/elsewhere") << std::string(100, 'y');
  fs::create_symlink(dir_ + "/elsewhere", dir_ + "/stdout.log");
  auto link = CapLog(dir_, "stdout.log", 10, kNow);
  EXPECT_FALSE(link.ok());
  EXPECT_THAT(link.status().message(), HasSubstr("stdout.log"));
  fs::create_hard_link(dir_ + "/elsewhere", dir_ + "/stderr.log");
  auto hard = CapLog(dir_, "stderr.log", 10, kNow);
  EXPECT_FALSE(hard.ok());
  EXPECT_THAT(hard.status().message(), HasSubstr("not a regular file of one link"));
  EXPECT_EQ(Read("elsewhere"), std::string(100, 'y'));
  ASSERT_EQ(mkfifo((dir_ + "/shim.log").c_str(), 0600), 0);
  auto fifo = CapLog(dir_, "shim.log", 10, kNow);
  EXPECT_FALSE(fifo.ok());
}

}  // namespace
}  // namespace airtime
