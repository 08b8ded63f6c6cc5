// Tests of device rules and cgroup v2's device program: the compiled program run by a small
// interpreter here, and (as root, where a cgroup2 hierarchy is mounted) by the kernel.
#include "airtime/exec/device_program.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "airtime/exec/run_cgroup.h"

namespace airtime {
namespace {

namespace fs = std::filesystem;

DeviceRule Rule(const std::string& text) {
  auto r = ParseDeviceRule(text);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : DeviceRule{};
}

TEST(DeviceRuleTest, ParsesTheV1Syntax) {
  DeviceRule r = Rule("c 195:0 rwm");
  EXPECT_EQ(r.type, 'c');
  EXPECT_EQ(r.major, 195);
  EXPECT_EQ(r.minor, 0);
  EXPECT_TRUE(r.read && r.write && r.mknod);
  r = Rule("b 8:* r");
  EXPECT_EQ(r.type, 'b');
  EXPECT_EQ(r.minor, DeviceRule::kAny);
  EXPECT_TRUE(r.read);
  EXPECT_FALSE(r.write || r.mknod);
  r = Rule("a *:* w");
  EXPECT_EQ(r.major, DeviceRule::kAny);
  EXPECT_TRUE(r.write);
}

TEST(DeviceRuleTest, BadRulesSayWhatIsWrong) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"c 195:0", "not three fields"},
           {"c 195:0 rw extra", "not three fields"},
           {"x 1:3 r", "type is not"},
           {"c 1-3 r", "no ':'"},
           {"c 4096:0 r", "major '4096' is not '*' or a number from 0 to 4095"},
           {"c 1:1048576 r", "minor '1048576'"},
           {"c -1:3 r", "major '-1'"},
           {"c 1:3 rx", "access is not"},
           {"c 1:3 rr", "access is not"},
           {"c 1:3 ", "no access"},
       }) {
    auto r = ParseDeviceRule(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.says), std::string::npos)
        << c.text << ": " << r.status().message();
  }
}

// Runs `prog` on one access the way the kernel would, for the instructions DeviceProgram
// emits; fails the test on any other instruction or a jump out of the program.
int Interpret(const std::vector<bpf_insn>& prog, int type, int access, uint32_t major,
              uint32_t minor) {
  const uint32_t ctx[3] = {static_cast<uint32_t>(access << 16 | type), major, minor};
  uint64_t reg[11] = {};
  for (size_t pc = 0; pc < prog.size(); ++pc) {
    const bpf_insn& i = prog[pc];
    uint64_t& dst = reg[i.dst_reg];
    const uint64_t imm = static_cast<uint64_t>(static_cast<int64_t>(i.imm));
    switch (i.code) {
      case BPF_LDX | BPF_MEM | BPF_W:
        EXPECT_EQ(i.src_reg, BPF_REG_1);
        EXPECT_EQ(i.off % 4, 0);
        dst = ctx[i.off / 4];
        break;
      case BPF_ALU64 | BPF_MOV | BPF_X:
        dst = reg[i.src_reg];
        break;
      case BPF_ALU64 | BPF_MOV | BPF_K:
        dst = imm;
        break;
      case BPF_ALU64 | BPF_AND | BPF_K:
        dst &= imm;
        break;
      case BPF_ALU64 | BPF_RSH | BPF_K:
        dst >>= i.imm;
        break;
      case BPF_JMP | BPF_JNE | BPF_K:
        if (dst != imm) pc += i.off;
        EXPECT_LT(pc + 1, prog.size()) << "a jump past the end";
        break;
      case BPF_JMP | BPF_EXIT:
        return static_cast<int>(reg[0]);
      default:
        ADD_FAILURE() << "unexpected instruction " << int(i.code);
        return -1;
    }
  }
  ADD_FAILURE() << "the program fell off its end";
  return -1;
}

constexpr int kChar = BPF_DEVCG_DEV_CHAR, kBlock = BPF_DEVCG_DEV_BLOCK;
constexpr int kRead = BPF_DEVCG_ACC_READ, kWrite = BPF_DEVCG_ACC_WRITE,
              kMknod = BPF_DEVCG_ACC_MKNOD;

TEST(DeviceProgramTest, AllowsWhatARuleAllowsAndDeniesTheRest) {
  const std::vector<bpf_insn> prog =
      DeviceProgram({Rule("c 1:3 rwm"), Rule("c 195:1 rw"), Rule("c 136:* rwm"), Rule("b 8:0 r")});
  EXPECT_EQ(Interpret(prog, kChar, kRead | kWrite, 1, 3), 1);
  EXPECT_EQ(Interpret(prog, kChar, kMknod, 1, 3), 1);
  EXPECT_EQ(Interpret(prog, kChar, kRead, 195, 1), 1);
  EXPECT_EQ(Interpret(prog, kChar, kRead | kWrite, 195, 1), 1);
  EXPECT_EQ(Interpret(prog, kChar, kMknod, 195, 1), 0);  // access not in the rule
  EXPECT_EQ(Interpret(prog, kChar, kRead, 195, 0), 0);   // another GPU
  EXPECT_EQ(Interpret(prog, kChar, kRead, 136, 7), 1);   // a pty: any minor
  EXPECT_EQ(Interpret(prog, kBlock, kRead, 1, 3), 0);    // type matters
  EXPECT_EQ(Interpret(prog, kBlock, kRead, 8, 0), 1);
  EXPECT_EQ(Interpret(prog, kBlock, kWrite, 8, 0), 0);
  EXPECT_EQ(Interpret(prog, kChar, kRead, 1, 5), 0);
}

TEST(DeviceProgramTest, NoRulesDenyEverythingAndAWildcardAllowsAll) {
  EXPECT_EQ(Interpret(DeviceProgram({}), kChar, kRead, 1, 3), 0);
  const std::vector<bpf_insn> all = DeviceProgram({Rule("a *:* rwm")});
  EXPECT_EQ(Interpret(all, kChar, kRead | kWrite | kMknod, 4095, 1048575), 1);
  EXPECT_EQ(Interpret(all, kBlock, kWrite, 0, 0), 1);
}

TEST(DeviceProgramTest, ABadRuleIsRefusedBeforeAnythingIsLoaded) {
  Status st = AttachDeviceProgram(-1, {"c 1:3 rwm", "c 1:3 bogus"});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'c 1:3 bogus'"), std::string::npos) << st.message();
}

// The kernel's answer: a child in a cgroup with the program opens what the rules allow and
// gets EPERM for the rest. Device nodes made with mknod on an unused major: an allowed
// open then fails with ENXIO (no driver), a denied one with EPERM.
TEST(DeviceProgramTest, TheKernelEnforcesTheProgram) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (bpf, cgroups, mknod)";
  const std::string v2 = CgroupV2Root("/sys/fs/cgroup");
  if (v2.empty())
    GTEST_SKIP() << "no cgroup2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified";
  const std::string dir = v2 + "/airtime-device-program-test-" + std::to_string(getpid());
  const std::string nodes = "/tmp/airtime_devprog_" + std::to_string(getpid());
  fs::create_directories(nodes);
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0) << strerror(errno);
  for (int minor : {0, 1})
    ASSERT_EQ(mknod((nodes + "/gpu" + std::to_string(minor)).c_str(), S_IFCHR | 0666,
                    makedev(240, minor)),
              0);
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  Status st = AttachDeviceProgram(fd, {"c 1:3 rwm", "c 240:0 r"});
  close(fd);
  ASSERT_TRUE(st.ok()) << st.message();

  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(pipefd[0]);
    int errs[4] = {-1, -1, -1, -1};
    if (JoinCgroups({dir}).ok()) {
      auto try_open = [](const std::string& path, int flags) {
        const int f = open(path.c_str(), flags);
        if (f >= 0) close(f);
        return f >= 0 ? 0 : errno;
      };
      errs[0] = try_open("/dev/null", O_RDWR);
      errs[1] = try_open(nodes + "/gpu0", O_RDONLY);
      errs[2] = try_open(nodes + "/gpu0", O_WRONLY);
      errs[3] = try_open(nodes + "/gpu1", O_RDONLY);
    }
    (void)!write(pipefd[1], errs, sizeof errs);
    _exit(0);
  }
  close(pipefd[1]);
  int errs[4] = {};
  ASSERT_EQ(read(pipefd[0], errs, sizeof errs), static_cast<ssize_t>(sizeof errs));
  close(pipefd[0]);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(errs[0], 0) << strerror(errs[0]);      // /dev/null: allowed
  EXPECT_EQ(errs[1], ENXIO) << strerror(errs[1]);  // gpu0 read: allowed, no driver
  EXPECT_EQ(errs[2], EPERM) << strerror(errs[2]);  // gpu0 write: not in the rule
  EXPECT_EQ(errs[3], EPERM) << strerror(errs[3]);  // gpu1: another GPU
  // Outside the cgroup nothing changed.
  const int outside = open((nodes + "/gpu1").c_str(), O_RDONLY);
  EXPECT_EQ(outside < 0 ? errno : 0, ENXIO);
  EXPECT_EQ(rmdir(dir.c_str()), 0) << strerror(errno);
  fs::remove_all(nodes);
}

}  // namespace
}  // namespace airtime
