// Tests of airtime_exec with real processes: the shim (exec_shim_for_test), the executor's
// launching, watching, stopping and adoption, the run directory protocol and the process
// identity parser.
#include "airtime/exec/executor.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "airtime/exec/gpu_env.h"
#include "airtime/exec/process_identity.h"
#include "airtime/exec/run_cgroup.h"
#include "airtime/exec/run_files.h"
#include "airtime/exec/run_user.h"
#include "airtime/exec/shim.h"

namespace airtime {
namespace {

namespace fs = std::filesystem;
using std::chrono::steady_clock;

constexpr int kGenerousMs = 60000;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airtime_exec_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    StatusOr<std::unique_ptr<Executor>> e = Executor::Create();
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    exec_ = std::move(*e);
  }
  void TearDown() override {
    exec_.reset();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string Dir(const std::string& name) const { return root_ + "/" + name; }

  LaunchRequest Request(const std::string& name, std::vector<std::string> argv) const {
    LaunchRequest r;
    r.run_dir = Dir(name);
    r.argv = std::move(argv);
    r.shim_path = AIRTIME_EXEC_SHIM_PATH;
    return r;
  }

  RunHandle LaunchAndWatch(int64_t run_id, const LaunchRequest& r) {
    StatusOr<RunHandle> h = exec_->Launch(r);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    if (!h.ok()) return RunHandle{};
    Status st = exec_->Watch(run_id, *h);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return *h;
  }

  // Waits (generously) for the end of `run_id`, keeping the ends of other runs for later
  // calls; fails the test when it does not come.
  Exited WaitFor(int64_t run_id) {
    auto deadline = steady_clock::now() + std::chrono::milliseconds(kGenerousMs);
    while (steady_clock::now() < deadline) {
      auto it = seen_.find(run_id);
      if (it != seen_.end()) {
        Exited e = it->second;
        seen_.erase(it);
        return e;
      }
      for (const Exited& e : exec_->WaitForExits(1000)) {
        EXPECT_TRUE(seen_.emplace(e.run_id, e).second) << "two ends of run " << e.run_id;
      }
    }
    ADD_FAILURE() << "run " << run_id << " did not end";
    return Exited{run_id, -999, "timeout"};
  }

  // Polls until `path` contains `text` (for readiness handshakes, not timing).
  bool WaitForText(const std::string& path, const std::string& text) {
    auto deadline = steady_clock::now() + std::chrono::milliseconds(kGenerousMs);
    while (steady_clock::now() < deadline) {
      if (ReadFile(path).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  std::string root_;
  std::unique_ptr<Executor> exec_;
  std::map<int64_t, Exited> seen_;
};

TEST_F(ExecutorTest, ExitCodesAreReported) {
  LaunchAndWatch(1, Request("t", {"/bin/true"}));
  LaunchAndWatch(2, Request("f", {"/bin/false"}));
  LaunchAndWatch(3, Request("s", {"/bin/sh", "-c", "kill -TERM $$"}));
  Exited t = WaitFor(1);
  EXPECT_EQ(t.how, "exit");
  EXPECT_EQ(t.exit_code, 0);
  Exited f = WaitFor(2);
  EXPECT_EQ(f.how, "exit");
  EXPECT_EQ(f.exit_code, 1);
  Exited s = WaitFor(3);
  EXPECT_EQ(s.how, "signal");
  EXPECT_EQ(s.exit_code, 128 + SIGTERM);
  EXPECT_EQ(ReadFile(Dir("s") + "/exit"), "signal 15\n");
  EXPECT_FALSE(exec_->IsWatched(1));
}

TEST_F(ExecutorTest, LogsAreCaptured) {
  LaunchAndWatch(1, Request("r", {"/bin/sh", "-c", "echo x; echo y >&2"}));
  EXPECT_EQ(WaitFor(1).exit_code, 0);
  EXPECT_EQ(ReadFile(Dir("r") + "/stdout.log"), "x\n");
  EXPECT_EQ(ReadFile(Dir("r") + "/stderr.log"), "y\n");
  EXPECT_EQ(ReadFile(Dir("r") + "/exit"), "exit 0\n");
}

TEST_F(ExecutorTest, EnvironmentAndWorkdirArePassed) {
  LaunchRequest r = Request("r", {"/usr/bin/env"});
  r.env = GpuEnv({"GPU-aaaa", "GPU-bbbb"}, 250, 2048, "/ckpt/7", 8080);
  r.env.emplace_back("HOME", "/overridden");
  r.workdir = root_;
  LaunchAndWatch(1, r);
  EXPECT_EQ(WaitFor(1).exit_code, 0);
  std::string out = ReadFile(Dir("r") + "/stdout.log");
  EXPECT_NE(out.find("CUDA_VISIBLE_DEVICES=GPU-aaaa,GPU-bbbb\n"), std::string::npos) << out;
  EXPECT_NE(out.find("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25\n"), std::string::npos);
  EXPECT_NE(out.find("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=GPU-aaaa=2048MB,GPU-bbbb=2048MB\n"),
            std::string::npos);
  EXPECT_NE(out.find("AIRTIME_CHECKPOINT_DIR=/ckpt/7\n"), std::string::npos);
  EXPECT_NE(out.find("\nPORT=8080\n"), std::string::npos);
  EXPECT_NE(out.find("AIRTIME_PORT=8080\n"), std::string::npos);
  EXPECT_NE(out.find("HOME=/overridden\n"), std::string::npos);
  EXPECT_NE(out.find("PATH="), std::string::npos);  // inherited from this process

  LaunchRequest pwd = Request("pwd", {"/bin/pwd"});
  pwd.workdir = root_;
  LaunchAndWatch(2, pwd);
  EXPECT_EQ(WaitFor(2).exit_code, 0);
  EXPECT_EQ(ReadFile(Dir("pwd") + "/stdout.log"), root_ + "\n");
}

TEST(GpuEnvTest, WholeGpuHasNoMpsLimits) {
  EnvVars env = GpuEnv({"GPU-1"}, 1000, 4096, "", 0);
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env[0], (std::pair<std::string, std::string>("CUDA_VISIBLE_DEVICES", "GPU-1")));
  EnvVars share = GpuEnv({"GPU-1"}, 333, 0, "", 0);
  ASSERT_EQ(share.size(), 2u);
  EXPECT_EQ(share[1].second, "34");  // ceil(33.3)
}

TEST_F(ExecutorTest, ExecFailureIs127WithMessage) {
  LaunchAndWatch(1, Request("r", {"/nonexistent/program", "arg"}));
  Exited e = WaitFor(1);
  EXPECT_EQ(e.how, "exit");
  EXPECT_EQ(e.exit_code, kShimExecFailed);
  std::string err = ReadFile(Dir("r") + "/stderr.log");
  EXPECT_NE(err.find("/nonexistent/program"), std::string::npos) << err;
  EXPECT_NE(err.find("No such file or directory"), std::string::npos) << err;
}

TEST_F(ExecutorTest, LaunchFailsForMissingShim) {
  LaunchRequest r = Request("r", {"/bin/true"});
  r.shim_path = "/nonexistent/airtime";
  StatusOr<RunHandle> h = exec_->Launch(r);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("/nonexistent/airtime"), std::string::npos);
}

TEST_F(ExecutorTest, StopSendsTermThenKillToTheGroup) {
  // The shell survives SIGTERM (it prints instead); each `sleep` it starts dies of it.
  LaunchAndWatch(1, Request("r", {"/bin/sh", "-c",
                                  "trap 'echo got-term' TERM; echo ready;"
                                  " while true; do sleep 0.05; done"}));
  ASSERT_TRUE(WaitForText(Dir("r") + "/stdout.log", "ready"));
  ASSERT_TRUE(exec_->Stop(1, 10 * kGenerousMs).ok());
  ASSERT_TRUE(WaitForText(Dir("r") + "/stdout.log", "got-term"));
  EXPECT_TRUE(exec_->WaitForExits(0).empty());  // it survived SIGTERM
  // A second Stop with a shorter grace brings the SIGKILL forward.
  ASSERT_TRUE(exec_->Stop(1, 10).ok());
  Exited e = WaitFor(1);
  // SIGKILL reached the shim too, so it could not write the exit file.
  EXPECT_EQ(e.how, "vanished");
  EXPECT_EQ(e.exit_code, 128 + SIGKILL);
  EXPECT_FALSE(fs::exists(Dir("r") + "/exit"));
}

TEST_F(ExecutorTest, StopIgnoredTermEscalatesToKill) {
  LaunchAndWatch(1, Request("r", {"/bin/sh", "-c", "trap '' TERM; echo ready; sleep 30"}));
  ASSERT_TRUE(WaitForText(Dir("r") + "/stdout.log", "ready"));
  ASSERT_TRUE(exec_->Stop(1, 100).ok());
  Exited e = WaitFor(1);
  EXPECT_EQ(e.how, "vanished");
  EXPECT_EQ(e.exit_code, 128 + SIGKILL);
}

TEST_F(ExecutorTest, StopWithGraceLetsTheWorkloadExit) {
  LaunchAndWatch(1, Request("r", {"/bin/sh", "-c", "echo ready; exec sleep 30"}));
  ASSERT_TRUE(WaitForText(Dir("r") + "/stdout.log", "ready"));
  ASSERT_TRUE(exec_->Stop(1, kGenerousMs).ok());
  Exited e = WaitFor(1);
  EXPECT_EQ(e.how, "signal");
  EXPECT_EQ(e.exit_code, 128 + SIGTERM);
}

TEST_F(ExecutorTest, StopNowKills) {
  LaunchAndWatch(1, Request("r", {"/bin/sleep", "30"}));
  ASSERT_TRUE(exec_->StopNow(1).ok());
  EXPECT_EQ(WaitFor(1).exit_code, 128 + SIGKILL);
  EXPECT_EQ(exec_->Stop(1, 10).code(), StatusCode::kNotFound);
}

TEST_F(ExecutorTest, WakeInterruptsWait) {
  LaunchAndWatch(1, Request("r", {"/bin/sleep", "30"}));
  std::thread waker([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    exec_->Wake();
  });
  auto start = steady_clock::now();
  std::vector<Exited> exits = exec_->WaitForExits(10 * kGenerousMs);
  waker.join();
  EXPECT_TRUE(exits.empty());
  EXPECT_LT(steady_clock::now() - start, std::chrono::milliseconds(kGenerousMs));
  // A Wake() with nobody waiting makes the next wait return at once.
  exec_->Wake();
  EXPECT_TRUE(exec_->WaitForExits(10 * kGenerousMs).empty());
  ASSERT_TRUE(exec_->StopNow(1).ok());
  WaitFor(1);
}

// Launches from a forked process that then exits: the run must survive its launcher.
TEST_F(ExecutorTest, RunSurvivesItsLauncherAndIsAdopted) {
  std::string dir = Dir("r");
  std::string go = dir + "/go";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t launcher = fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    close(fds[0]);
    StatusOr<std::unique_ptr<Executor>> e = Executor::Create();
    if (!e.ok()) _exit(2);
    StatusOr<RunHandle> h = (*e)->Launch(Request(
        "r",
        {"/bin/sh", "-c", "echo ready; while [ ! -e '" + go + "' ]; do sleep 0.02; done; exit 3"}));
    if (!h.ok()) _exit(3);
    std::string line =
        std::to_string(h->pid) + " " + std::to_string(h->start_ticks) + " " + h->boot_id + "\n";
    (void)!write(fds[1], line.data(), line.size());
    _exit(0);
  }
  close(fds[1]);
  char buf[256] = {};
  ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(launcher, &status, 0), launcher);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_GT(n, 0);
  std::istringstream in(buf);
  pid_t pid = 0;
  int64_t ticks = 0;
  std::string boot;
  in >> pid >> ticks >> boot;
  // Adopting before the shim claimed the run would (rightly) abandon it.
  ASSERT_TRUE(WaitForText(dir + "/stdout.log", "ready"));

  StatusOr<AdoptResult> a = exec_->Adopt(7, dir, pid, ticks, boot);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->state, AdoptState::kRunning) << AdoptStateName(a->state);
  EXPECT_TRUE(exec_->IsWatched(7));
  std::ofstream(go).put('\n');
  Exited e = WaitFor(7);
  EXPECT_EQ(e.how, "exit");
  EXPECT_EQ(e.exit_code, 3);

  // Adopting it again after it ended reads the exit file.
  StatusOr<AdoptResult> again = exec_->Adopt(7, dir, pid, ticks, boot);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->state, AdoptState::kExited);
  ASSERT_TRUE(again->exit.has_value());
  EXPECT_EQ(again->exit->exit_code, 3);
}

TEST_F(ExecutorTest, AdoptWithoutPidUsesTheClaim) {
  RunHandle h = LaunchAndWatch(1, Request("r", {"/bin/sh", "-c", "echo ready; sleep 30"}));
  ASSERT_TRUE(WaitForText(Dir("r") + "/stdout.log", "ready"));
  StatusOr<AdoptResult> a = exec_->Adopt(2, Dir("r"), 0, 0, "");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->state, AdoptState::kRunning);
  EXPECT_EQ(a->handle.pid, h.pid);
  EXPECT_EQ(a->handle.start_ticks, h.start_ticks);
  ASSERT_TRUE(exec_->StopNow(2).ok());
  EXPECT_EQ(WaitFor(2).exit_code, 128 + SIGKILL);
}

TEST_F(ExecutorTest, SecondShimOnAClaimedRunRefuses) {
  LaunchAndWatch(1, Request("r", {"/bin/true"}));
  EXPECT_EQ(WaitFor(1).exit_code, 0);
  std::string marker = Dir("r") + "/marker";
  LaunchAndWatch(2, Request("r", {"/usr/bin/touch", marker}));
  Exited e = WaitFor(2);
  EXPECT_EQ(e.how, "refused");
  EXPECT_EQ(e.exit_code, kShimRefused);
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_EQ(ReadFile(Dir("r") + "/exit"), "exit 0\n");  // the first run's record is intact
}

// Fills the file system of `dir` until a write fails with ENOSPC; returns whether it did.
bool FillUp(const std::string& dir) {
  std::ofstream out(dir + "/filler", std::ios::binary);
  const std::string block(64 * 1024, 'x');
  for (int i = 0; i < 100000 && out; ++i) out.write(block.data(), block.size());
  out.flush();
  return !out;
}

// A full disk is not the workload's failure: the shim runs nothing, writes no exit record
// and says "no space" (the daemon then starts the run again later instead of counting a
// failed attempt). Needs root to mount a small tmpfs.
TEST_F(ExecutorTest, ShimOnAFullFileSystemRunsNothingAndReportsNoSpace) {
  const std::string mnt = Dir("small");
  fs::create_directories(mnt);
  if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs at " << mnt << " (needs root): " << std::strerror(errno);
  ASSERT_TRUE(FillUp(mnt));
  const std::string marker = Dir("marker");
  LaunchRequest r = Request("small/run", {"/usr/bin/touch", marker});
  LaunchAndWatch(1, r);
  Exited e = WaitFor(1);
  EXPECT_EQ(e.how, "no space");
  EXPECT_EQ(e.exit_code, kShimNoSpace);
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_FALSE(fs::exists(mnt + "/run/exit"));
  // With space again the same kind of run goes through.
  fs::remove(mnt + "/filler");
  LaunchAndWatch(2, Request("small/run2", {"/usr/bin/touch", marker}));
  EXPECT_EQ(WaitFor(2).exit_code, 0);
  EXPECT_TRUE(fs::exists(marker));
  umount2(mnt.c_str(), MNT_DETACH);
}

TEST(RunFilesTest, ClaimOnAFullFileSystemIsResourceExhausted) {
  char tmpl[] = "/tmp/airtime_full_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string mnt = tmpl;
  if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m") != 0) {
    fs::remove(mnt);
    GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << std::strerror(errno);
  }
  ASSERT_TRUE(FillUp(mnt));
  Status st = WriteClaim(mnt, Claim{});
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_FALSE(fs::exists(mnt + "/claim"));
  umount2(mnt.c_str(), MNT_DETACH);
  fs::remove_all(mnt);
}

// A damaged run directory cannot hang or exhaust a restarting daemon that reads it.
TEST(RunFilesTest, EndlessOrBlockingRunFilesAreErrors) {
  char tmpl[] = "/tmp/airtime_runfiles_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  fs::create_symlink("/dev/zero", dir + "/claim");
  StatusOr<Claim> claim = ReadClaim(dir);
  ASSERT_FALSE(claim.ok());
  EXPECT_NE(claim.status().message().find("larger than"), std::string::npos);
  ASSERT_EQ(mkfifo((dir + "/exit").c_str(), 0600), 0);
  EXPECT_EQ(ReadExitFile(dir).status().code(), StatusCode::kInvalidArgument);
  std::ofstream(dir + "/workload") << "12 train-a\n";
  ASSERT_TRUE(ReadRunOwner(dir).has_value());
  EXPECT_EQ(ReadRunOwner(dir)->workload_id, 12);
  EXPECT_EQ(ReadRunOwner(dir)->name, "train-a");
  std::ofstream(dir + "/workload") << "0 x\n";
  EXPECT_FALSE(ReadRunOwner(dir).has_value());
  fs::remove_all(dir);
}

TEST_F(ExecutorTest, AdoptOfUnclaimedRunAbandonsItAndALateShimRefuses) {
  std::string dir = Dir("r");
  StatusOr<AdoptResult> a = exec_->Adopt(1, dir, 0, 0, "");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->state, AdoptState::kNeverStarted);
  EXPECT_EQ(ReadFile(dir + "/claim"), "abandoned\n");
  std::string marker = dir + "/marker";
  LaunchAndWatch(1, Request("r", {"/usr/bin/touch", marker}));
  Exited e = WaitFor(1);
  EXPECT_EQ(e.how, "refused");
  EXPECT_EQ(e.exit_code, kShimRefused);
  EXPECT_FALSE(fs::exists(marker));
  // Adopting again is stable.
  StatusOr<AdoptResult> again = exec_->Adopt(1, dir, 0, 0, "");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->state, AdoptState::kNeverStarted);
}

TEST_F(ExecutorTest, AdoptDetectsPidReuse) {
  RunHandle h = LaunchAndWatch(1, Request("r", {"/bin/sh", "-c", "echo ready; sleep 30"}));
  ASSERT_TRUE(WaitForText(Dir("r") + "/stdout.log", "ready"));
  StatusOr<AdoptResult> a = exec_->Adopt(2, Dir("r"), h.pid, h.start_ticks + 1, h.boot_id);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->state, AdoptState::kNotOurs);
  EXPECT_FALSE(exec_->IsWatched(2));
  StatusOr<AdoptResult> other_boot = exec_->Adopt(3, Dir("r"), h.pid, h.start_ticks, "x");
  ASSERT_TRUE(other_boot.ok());
  EXPECT_EQ(other_boot->state, AdoptState::kExited);
  ASSERT_TRUE(exec_->StopNow(1).ok());
  WaitFor(1);
}

TEST_F(ExecutorTest, WatchOfAGoneProcessReportsItsEnd) {
  RunHandle h = LaunchAndWatch(1, Request("r", {"/bin/false"}));
  EXPECT_EQ(WaitFor(1).exit_code, 1);  // reaped
  ASSERT_TRUE(exec_->Watch(2, h).ok());
  std::vector<Exited> e = exec_->WaitForExits(0);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].run_id, 2);
  EXPECT_EQ(e[0].exit_code, 1);
}

TEST(ShimTest, ShimBinaryRefusesAClaimedDir) {
  char tmpl[] = "/tmp/airtime_shim_test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  ASSERT_TRUE(WriteClaim(dir, Claim{}).ok());
  EXPECT_EQ(WriteClaim(dir, Claim{}).code(), StatusCode::kAlreadyExists);
  std::string marker = dir + "/marker";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl(AIRTIME_EXEC_SHIM_PATH, AIRTIME_EXEC_SHIM_PATH, "_shim", "--run-dir", dir.c_str(), "--",
          "/usr/bin/touch", marker.c_str(), static_cast<char*>(nullptr));
    _exit(99);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kShimRefused);
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_FALSE(fs::exists(dir + "/exit"));
  fs::remove_all(dir);
}

TEST(RunFilesTest, ClaimAndExitRoundTrip) {
  Claim c;
  c.kind = Claim::Kind::kStarted;
  c.pid = 42;
  c.start_ticks = 123456;
  c.boot_id = "b-1";
  std::optional<Claim> back = ParseClaim(FormatClaim(c));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->pid, 42);
  EXPECT_EQ(back->start_ticks, 123456);
  EXPECT_EQ(back->boot_id, "b-1");
  EXPECT_TRUE(ParseClaim("started 42 7\n").has_value());  // the 3-field form
  EXPECT_FALSE(ParseClaim("").has_value());
  EXPECT_FALSE(ParseClaim("started x 7").has_value());
  std::optional<ExitRecord> sig = ParseExit("signal 9\n");
  ASSERT_TRUE(sig.has_value());
  EXPECT_EQ(sig->Code(), 137);
  EXPECT_FALSE(ParseExit("exit").has_value());
}

TEST(ProcessIdentityTest, ParsesStatWithNastyComm) {
  // comm "a) (b c)" contains spaces and parentheses; starttime is field 22 = 777.
  std::string stat =
      "123 (a) (b c)) S 1 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 777 "
      "1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0";
  std::optional<ProcStat> p = ParseProcStat(stat);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->state, 'S');
  EXPECT_EQ(p->start_ticks, 777);
  EXPECT_FALSE(ParseProcStat("123 (x) S 1 2").has_value());
}

TEST(ProcessIdentityTest, RecognizesItself) {
  StatusOr<ProcStat> self = ReadProcStat(getpid());
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  StatusOr<std::string> boot = CurrentBootId();
  ASSERT_TRUE(boot.ok());
  EXPECT_TRUE(SameProcess(getpid(), self->start_ticks, *boot));
  EXPECT_FALSE(SameProcess(getpid(), self->start_ticks + 1, *boot));
  EXPECT_FALSE(SameProcess(getpid(), self->start_ticks, "another-boot"));
}

// A missing workdir is named, not reported as the shim's spawn failing.
TEST_F(ExecutorTest, LaunchNamesAMissingWorkdir) {
  LaunchRequest r = Request("nowd", {"/bin/true"});
  r.workdir = Dir("no-such-dir");
  StatusOr<RunHandle> h = exec_->Launch(r);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("workdir '" + Dir("no-such-dir") +
                                      "' does not exist (or is not a directory)"),
            std::string::npos)
      << h.status().message();
  EXPECT_EQ(h.status().message().find("posix_spawn"), std::string::npos);
  std::ofstream(Dir("a-file")) << "x";
  r.workdir = Dir("a-file");
  h = exec_->Launch(r);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("is not a directory"), std::string::npos);
}

TEST_F(ExecutorTest, LaunchRefusesRootAsTheRunUser) {
  LaunchRequest r = Request("asroot", {"/bin/true"});
  RunUser root;
  root.name = "root";
  r.user = root;
  StatusOr<RunHandle> h = exec_->Launch(r);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("refusing to run a workload as uid 0"), std::string::npos);
}

TEST(ShimArgs, RoundTripAndErrors) {
  RunUser u;
  u.uid = 1234;
  u.gid = 567;
  u.groups = {567, 89};
  ShimArgs in{"/d/runs/3", {"prog", "--", "x"}, u, {"/cg/devices/a/run-3", "/cg/freezer/a/run-3"}};
  StatusOr<ShimArgs> out = ParseShimArgs(ShimArgv(in));
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->run_dir, in.run_dir);
  EXPECT_EQ(out->argv, in.argv);
  ASSERT_TRUE(out->user.has_value());
  EXPECT_EQ(out->user->uid, 1234u);
  EXPECT_EQ(out->user->gid, 567u);
  EXPECT_EQ(out->user->groups, (std::vector<gid_t>{567, 89}));
  EXPECT_EQ(out->cgroups, in.cgroups);
  EXPECT_FALSE(ParseShimArgs({"--run-dir", "d", "--user", "0:0:", "--", "p"}).ok());
  EXPECT_FALSE(ParseShimArgs({"--run-dir", "d", "--user", "x:1:", "--", "p"}).ok());
  EXPECT_FALSE(ParseShimArgs({"--run-dir", "d", "--bogus", "1", "--", "p"}).ok());
  EXPECT_FALSE(ParseShimArgs({"--run-dir", "d", "--"}).ok());
  StatusOr<ShimArgs> plain = ParseShimArgs({"--run-dir", "d", "--", "p"});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->user.has_value());
}

TEST(RunCgroupsTest, DeviceRulesNameCharacterDevicesOnly) {
  std::vector<std::string> rules =
      DeviceRulesFor({"/dev/null", "/nonexistent/nvidia9", "/etc/hostname", "/dev/zero"});
  EXPECT_EQ(rules, (std::vector<std::string>{"c 1:3 rwm", "c 1:5 rwm"}));
}

// Under cgroup v2 (the hierarchy mounted here, whatever the v1 controllers) a run's cgroup
// gets the device program, holds whatever the run starts (a setsid grandchild included),
// and Kill() ends them all and removes it.
TEST(RunCgroupsTest, UnderCgroupV2ARunIsKilledWholeAndRemoved) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const std::string v2 = CgroupV2Root("/sys/fs/cgroup");
  if (v2.empty())
    GTEST_SKIP() << "no cgroup2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified";
  const std::string data = "/tmp/airtime_cgv2_" + std::to_string(getpid());
  RunCgroups cgroups(v2, CgroupParentFor(data));
  ASSERT_EQ(cgroups.layout(), CgroupLayout::kV2);
  EXPECT_NE(cgroups.Describe().find("(cgroup v2)"), std::string::npos) << cgroups.Describe();
  Status st = cgroups.Check();
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_TRUE(cgroups.Create(7, BasicDeviceRules()).ok());
  ASSERT_EQ(cgroups.Paths(7).size(), 1u);
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(pipefd[0]);
    if (!JoinCgroups(cgroups.Paths(7)).ok()) _exit(1);
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      setsid();
      execl("/bin/sleep", "sleep", "1000", static_cast<char*>(nullptr));
      _exit(127);
    }
    (void)!write(pipefd[1], &grandchild, sizeof grandchild);
    pause();
    _exit(0);
  }
  close(pipefd[1]);
  pid_t grandchild = 0;
  ASSERT_EQ(read(pipefd[0], &grandchild, sizeof grandchild),
            static_cast<ssize_t>(sizeof grandchild));
  close(pipefd[0]);
  EXPECT_EQ(cgroups.Pids(7).size(), 2u);
  st = cgroups.Kill(7);
  EXPECT_TRUE(st.ok()) << st.message();
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  // The grandchild was reparented away from us; it must be gone (or a zombie).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    gone = text.empty() || text.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!gone) kill(grandchild, SIGKILL);
  EXPECT_TRUE(gone) << "the setsid grandchild outlived Kill()";
  EXPECT_FALSE(fs::exists(cgroups.Paths(7)[0]));
  EXPECT_TRUE(cgroups.Kill(7).ok());  // nothing left: still fine
  rmdir((v2 + "/" + cgroups.parent()).c_str());
}

TEST(RunCgroupsTest, AHostWithoutTheControllersSaysWhatIsMissing) {
  char tmpl[] = "/tmp/airtime_cgroot.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  Status st = RunCgroups(tmpl, CgroupParentFor("/data")).Check();
  EXPECT_FALSE(st.ok());
  if (geteuid() == 0) {
    EXPECT_NE(
        st.message().find(std::string("no cgroup v1 'devices' controller at ") + tmpl + "/devices"),
        std::string::npos)
        << st.message();
  } else {
    EXPECT_NE(st.message().find("not running as root"), std::string::npos) << st.message();
  }
  fs::remove_all(tmpl);
  EXPECT_EQ(CgroupParentFor("/data"), CgroupParentFor("/data"));
  EXPECT_NE(CgroupParentFor("/data"), CgroupParentFor("/data2"));
}

TEST(RunUserTest, SearchableChecksEveryDirectoryOnTheWay) {
  char tmpl[] = "/tmp/airtime_search.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string top = tmpl;
  fs::create_directories(top + "/open/inner");
  chmod(top.c_str(), 0700);
  chmod((top + "/open").c_str(), 0755);
  RunUser other;
  other.name = "other";
  other.uid = geteuid() + 4242;
  other.gid = getegid() + 4242;
  Status st = CheckSearchableBy(top + "/open/inner", other);
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(st.message().find("user 'other' cannot enter '" + top + "'"), std::string::npos)
      << st.message();
  chmod(top.c_str(), 0711);
  EXPECT_TRUE(CheckSearchableBy(top + "/open/inner", other).ok());
  EXPECT_EQ(CheckSearchableBy(top + "/nope", other).code(), StatusCode::kNotFound);
  fs::remove_all(top);
}

}  // namespace
}  // namespace airtime
