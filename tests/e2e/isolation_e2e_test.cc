// End-to-end tests of tenant isolation (docs/server.md, "Trust model"): the real
// `airtime server` with fake GPUs and real workload processes, tenants' tokens, users made
// with useradd, device nodes made with mknod and the host's cgroups.
//
// The tests that isolate need root and the v1 `devices` and `freezer` controllers; those
// about devices and killing whole run again under cgroup v2 (a device program, cgroup.kill)
// where a cgroup2 hierarchy is mounted (--cgroup-root pointing at it). They skip (with the
// reason) elsewhere. CI runs them as root on a hybrid host that has both.
//
// Run as `isolation_e2e_test --airtime=PATH [gtest flags]` (tests/CMakeLists.txt).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e_util.h"
#include "server_process.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using namespace std::chrono_literals;
using airtime::e2e::ReadFile;

std::string g_airtime;  // --airtime=PATH

constexpr char kAdminToken[] = "admin-e2e-token-0123456789abcdef";
constexpr char kTokenA[] = "team-a-e2e-token-0123456789abcdef";
constexpr char kTokenB[] = "team-b-e2e-token-0123456789abcdef";
// team-a is mapped in DATA/tenant-users; e2e-b runs as its default user, airtime-e2e-b.
constexpr char kUserA[] = "airtime-e2e-a";
constexpr char kUserB[] = "airtime-e2e-b";

std::string TempDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir =
      fs::path("/tmp") / ("airtime_iso_" + std::to_string(getpid()) + "_" + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  chmod(dir.c_str(), 0755);  // the tenants' users must reach what lies inside
  return dir.string();
}

// Why the isolating tests cannot run here ("" when they can).
std::string CannotIsolate() {
  if (geteuid() != 0) return "needs root (setuid, cgroups, mknod)";
  for (const char* probe : {"/sys/fs/cgroup/devices/devices.allow", "/sys/fs/cgroup/freezer/tasks"})
    if (access(probe, F_OK) != 0) return std::string("needs the cgroup v1 controller of ") + probe;
  if (access("/usr/sbin/useradd", X_OK) != 0) return "needs useradd";
  return "";
}

// The uid of `name`, made with useradd when missing (never removed: others may use it).
uid_t EnsureUser(const std::string& name) {
  const std::string cmd = "/usr/sbin/useradd --system --no-create-home --shell /usr/sbin/nologin " +
                          name + " >/dev/null 2>&1";
  // Tests running in parallel may race for /etc/passwd's lock: try again.
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (passwd* pw = getpwnam(name.c_str())) return pw->pw_uid;
    (void)!system(cmd.c_str());
    if (passwd* pw = getpwnam(name.c_str())) return pw->pw_uid;
    std::this_thread::sleep_for(100ms);
  }
  return 0;
}

// Removes the per-data-directory cgroups a test's daemon left (run_cgroup.h: the parent is
// airtime/<FNV-1a of the data directory>, empty once its runs ended).
void RemoveCgroupParents(const std::string& data_dir) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : data_dir) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  for (const char* under : {"devices", "freezer", "unified", "."})
    rmdir((std::string("/sys/fs/cgroup/") + under + "/airtime/" + hex).c_str());
}

// The cgroup2 hierarchy of this host: /sys/fs/cgroup (v2 only) or /sys/fs/cgroup/unified
// (hybrid); "" when there is none.
std::string CgroupV2Mount() {
  for (const char* dir : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    if (access((std::string(dir) + "/cgroup.subtree_control").c_str(), F_OK) == 0) return dir;
  }
  return "";
}

// Whether `pid` is gone (or a zombie that no longer runs), waiting up to 2 s.
bool Gone(pid_t pid) {
  for (int i = 0; i < 40; ++i) {
    const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    if (stat.empty() || stat.find(") Z ") != std::string::npos) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// A running `airtime server`; killed (SIGKILL) on destruction.
class Server {
 public:
  Server(std::string data, std::vector<std::string> args)
      : data_(std::move(data)), args_(std::move(args)) {
    fs::create_directories(data_);
    std::ofstream(data_ + "/tokens")
        << "admin " << kAdminToken << "\nteam-a " << kTokenA << "\ne2e-b " << kTokenB << "\n";
    chmod((data_ + "/tokens").c_str(), 0600);
  }
  ~Server() { Kill(); }

  // Starts it; false (with the log in `log`) when it exited instead.
  bool Start() {
    fs::remove(data_ + "/address");
    pid_ = fork();
    if (pid_ == 0) {
      // A working directory every tenant's user can enter (workloads without a workdir
      // start there).
      if (chdir(fs::path(data_).parent_path().c_str()) != 0) _exit(126);
      FILE* f = fopen(log_path().c_str(), "a");
      if (f) {
        dup2(fileno(f), 1);
        dup2(fileno(f), 2);
      }
      std::vector<std::string> all = {g_airtime,  "server",      "--data",      data_,
                                      "--listen", "127.0.0.1:0", "--fake-gpus", "2xH100"};
      all.insert(all.end(), args_.begin(), args_.end());
      std::vector<char*> argv;
      for (std::string& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(g_airtime.c_str(), argv.data());
      _exit(127);
    }
    for (int i = 0; i < 400 && !fs::exists(data_ + "/address"); ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        exit_status_ = status;
        return false;
      }
      std::this_thread::sleep_for(25ms);
    }
    std::string addr = ReadFile(data_ + "/address");
    addr.erase(addr.find_last_not_of("\n") + 1);
    address_ = addr;
    return !addr.empty();
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  httplib::Client Client(const std::string& token) const {
    return airtime::e2e::ApiClient(address_, token);
  }
  std::string log() const { return ReadFile(log_path()); }
  int exit_status() const { return exit_status_; }
  const std::string& data() const { return data_; }

 private:
  std::string log_path() const { return data_ + ".server.log"; }
  std::string data_;
  std::vector<std::string> args_;
  std::string address_;
  pid_t pid_ = -1;
  int exit_status_ = -1;
};

// Submits one workload running `script` with /bin/sh; returns the HTTP answer.
httplib::Result Submit(httplib::Client& c, const std::string& name, const std::string& script,
                       int gpus = 0, const std::string& workdir = "") {
  json w = {
      {"name", name}, {"kind", "batch"}, {"gpus", gpus}, {"command", {"/bin/sh", "-c", script}}};
  if (gpus == 0) w["cpu"] = 1;  // a workload needs something
  if (!workdir.empty()) w["workdir"] = workdir;
  return c.Post("/v1/workloads", w.dump(), "application/json");
}

json Describe(httplib::Client& c, const std::string& name) {
  auto r = c.Get("/v1/workloads/" + name);
  if (!r || r->status != 200) return json();
  return json::parse(r->body, nullptr, false);
}

// Polls until the workload reached a final state; returns its description.
json WaitEnded(httplib::Client& c, const std::string& name, std::chrono::seconds limit = 30s) {
  json w;
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    w = Describe(c, name);
    const std::string state = w.is_object() ? w.value("state", "") : "";
    if (state == "succeeded" || state == "failed" || state == "cancelled") break;
    std::this_thread::sleep_for(100ms);
  }
  return w;
}

// The first run's directory of a described workload.
std::string RunDir(const json& w) {
  if (!w.is_object() || !w.contains("runs") || w["runs"].empty()) return "";
  return w["runs"][0].value("log_dir", "");
}

class IsolationE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = CannotIsolate();
    if (!why.empty()) GTEST_SKIP() << "tenant isolation tests skipped: " << why;
    uid_a_ = EnsureUser(kUserA);
    uid_b_ = EnsureUser(kUserB);
    ASSERT_NE(uid_a_, 0u) << "useradd " << kUserA << " failed";
    ASSERT_NE(uid_b_, 0u) << "useradd " << kUserB << " failed";
    dir_ = TempDir();
    data_ = dir_ + "/data";
    fs::create_directories(data_);
    std::ofstream(data_ + "/tenant-users") << "# tenant user\nteam-a " << kUserA << "\n";
  }
  void TearDown() override {
    if (dir_.empty()) return;  // skipped
    RemoveCgroupParents(data_);
    std::error_code ec;
    if (!HasFailure()) fs::remove_all(dir_, ec);  // kept for a look when it failed
  }

  // Submits `script` as team-a and waits until its stdout shows "child=PID"; returns PID.
  pid_t StartEscaper(httplib::Client& a, const std::string& name, const std::string& script) {
    auto r = Submit(a, name, script);
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    std::string out;
    for (int i = 0; i < 200 && out.find("child=") == std::string::npos; ++i) {
      std::this_thread::sleep_for(50ms);
      const std::string run = RunDir(Describe(a, name));
      if (!run.empty()) out = ReadFile(run + "/stdout.log");
    }
    EXPECT_THAT(out, HasSubstr("child="));
    if (out.find("child=") == std::string::npos) return 0;
    return std::stoi(out.substr(out.find("child=") + 6));
  }

  // The daemon's flags: --isolation required and those of the cgroup version under test.
  virtual std::vector<std::string> Isolating() const { return {"--isolation", "required"}; }

  std::string dir_, data_;
  uid_t uid_a_ = 0, uid_b_ = 0;
};

// The tests about devices and killing whole, under each cgroup version: "v1" (the devices
// and freezer controllers, what the daemon prefers on a hybrid host) and "v2" (a device
// program and cgroup.kill, with --cgroup-root at the cgroup2 hierarchy).
class IsolationCgroupE2E : public IsolationE2E, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "v2" && geteuid() == 0 && CgroupV2Mount().empty())
      GTEST_SKIP() << "no cgroup2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified";
    IsolationE2E::SetUp();
  }
  std::vector<std::string> Isolating() const override {
    std::vector<std::string> args = IsolationE2E::Isolating();
    if (GetParam() == "v2") args.insert(args.end(), {"--cgroup-root", CgroupV2Mount()});
    return args;
  }
  // The start message names the layout in use.
  void ExpectLayoutSaid(const Server& s) const {
    EXPECT_THAT(s.log(), HasSubstr(GetParam() == "v2" ? "(cgroup v2)" : "(cgroup v1)"));
  }
};
INSTANTIATE_TEST_SUITE_P(Cgroup, IsolationCgroupE2E, ::testing::Values("v1", "v2"),
                         [](const auto& info) { return info.param; });

// A tenant's workload runs as its tenant's user, with HOME/USER following it, and cannot
// read the token file, the store or the lock; it can write its telemetry file and its
// checkpoint directory. An admin workload for a tenant without a user is refused.
TEST_F(IsolationE2E, ATenantsWorkloadRunsAsItsUserAndCannotReadTheStoreOrTokens) {
  Server s(data_, Isolating());
  ASSERT_TRUE(s.Start()) << s.log();
  EXPECT_THAT(s.log(), HasSubstr("tenant isolation on"));
  auto a = s.Client(kTokenA);
  const std::string script =
      "echo uid=$(id -u) home=$HOME user=$USER; "
      "for f in " +
      data_ + "/tokens " + data_ + "/airtime.db " + data_ +
      "/daemon.lock; do "
      "cat $f >/dev/null; done; "
      "touch " +
      data_ +
      "/planted || echo cannot-plant; "
      "echo utilization=0.5 >> $AIRTIME_TELEMETRY_FILE && echo telemetry-ok; "
      "echo state > $AIRTIME_CHECKPOINT_DIR/ck && echo checkpoint-ok";
  auto r = Submit(a, "probe-a", script);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  json w = WaitEnded(a, "probe-a");
  ASSERT_EQ(w.value("state", ""), "succeeded") << w.dump(2);
  const std::string run = RunDir(w);
  const std::string out = ReadFile(run + "/stdout.log");
  const std::string err = ReadFile(run + "/stderr.log");
  EXPECT_THAT(out, HasSubstr("uid=" + std::to_string(uid_a_) + " "));
  EXPECT_THAT(out, HasSubstr(std::string("user=") + kUserA));
  EXPECT_THAT(out, Not(HasSubstr("uid=0 ")));
  for (const char* f : {"tokens", "airtime.db", "daemon.lock"})
    EXPECT_THAT(err, HasSubstr(data_ + "/" + f + ": Permission denied")) << err;
  EXPECT_THAT(out, HasSubstr("cannot-plant"));
  EXPECT_FALSE(fs::exists(data_ + "/planted"));
  EXPECT_THAT(out, HasSubstr("telemetry-ok"));
  EXPECT_THAT(out, HasSubstr("checkpoint-ok"));
  // The store and the tokens are the daemon's alone.
  for (const char* f : {"tokens", "airtime.db", "daemon.lock"}) {
    struct stat st {};
    ASSERT_EQ(stat((data_ + "/" + f).c_str(), &st), 0) << f;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << f;
  }

  // An admin submission for a tenant with no user is refused before it is accepted.
  auto admin = s.Client(kAdminToken);
  r = Submit(admin, "no-user", "true");
  ASSERT_TRUE(r);
  EXPECT_NE(r->status, 201);
  EXPECT_THAT(r->body, HasSubstr("tenant 'default' has no user to run as"));

  // A workdir the tenant's user cannot enter is refused at submission, naming it.
  const std::string closed = dir_ + "/closed";
  fs::create_directories(closed + "/inner");
  chmod(closed.c_str(), 0700);
  r = Submit(a, "shut-out", "true", 0, closed + "/inner");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_THAT(r->body,
              HasSubstr("field 'workdir': '" + closed + "/inner' is not accessible: user '" +
                        kUserA + "' cannot enter '" + closed + "'"));
}

// A second tenant cannot read the first one's run logs or checkpoints.
TEST_F(IsolationE2E, ASecondTenantCannotReadTheFirstOnesLogsOrCheckpoints) {
  Server s(data_, Isolating());
  ASSERT_TRUE(s.Start()) << s.log();
  auto a = s.Client(kTokenA);
  auto r = Submit(a, "secret", "echo the-secret; echo kept > $AIRTIME_CHECKPOINT_DIR/ck");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  json wa = WaitEnded(a, "secret");
  ASSERT_EQ(wa.value("state", ""), "succeeded") << wa.dump(2);
  const std::string run_a = RunDir(wa);
  const std::string ckpt_a = data_ + "/checkpoints/" + std::to_string(wa["id"].get<int64_t>());
  ASSERT_THAT(ReadFile(run_a + "/stdout.log"), HasSubstr("the-secret"));

  auto b = s.Client(kTokenB);
  r = Submit(b, "snoop",
             "echo uid=$(id -u); cat " + run_a + "/stdout.log; cat " + ckpt_a + "/ck; ls " +
                 ckpt_a + "; ls " + data_ + "/runs");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  json wb = WaitEnded(b, "snoop");
  ASSERT_TRUE(wb.is_object()) << "no answer";
  const std::string run_b = RunDir(wb);
  const std::string out = ReadFile(run_b + "/stdout.log");
  const std::string err = ReadFile(run_b + "/stderr.log");
  EXPECT_THAT(out, HasSubstr("uid=" + std::to_string(uid_b_)));  // the default user
  EXPECT_THAT(out, Not(HasSubstr("the-secret")));
  EXPECT_THAT(out, Not(HasSubstr("kept")));
  EXPECT_THAT(err, HasSubstr(run_a + "/stdout.log: Permission denied"));
  EXPECT_THAT(err, HasSubstr(ckpt_a + "/ck: Permission denied"));
  EXPECT_THAT(err, HasSubstr(data_ + "/runs': Permission denied"));
}

// The run sees only its own GPU's device node: the other GPU's node (made with mknod, an
// unused major, so an allowed open fails with ENXIO and a denied one with EPERM) is denied
// by the run's device cgroup whatever CUDA_VISIBLE_DEVICES says.
TEST_P(IsolationCgroupE2E, AWorkloadCanOpenOnlyItsOwnGpusDeviceNode) {
  const std::string dev = dir_ + "/dev";
  fs::create_directories(dev);
  chmod(dev.c_str(), 0755);
  for (int minor : {0, 1}) {
    const std::string node = dev + "/nvidia" + std::to_string(minor);
    ASSERT_EQ(mknod(node.c_str(), S_IFCHR | 0666, makedev(240, minor)), 0) << node;
    chmod(node.c_str(), 0666);
  }
  std::vector<std::string> args = Isolating();
  args.insert(args.end(), {"--gpu-devices", dev});
  Server s(data_, args);
  ASSERT_TRUE(s.Start()) << s.log();
  ExpectLayoutSaid(s);
  auto a = s.Client(kTokenA);
  auto r = Submit(a, "gpu-probe",
                  "echo visible=$CUDA_VISIBLE_DEVICES; for n in 0 1; do "
                  "if cat " +
                      dev +
                      "/nvidia$n 2>/tmp/null-$$; then echo node$n=read; "
                      "else echo node$n=$(cat " +
                      dev +
                      "/nvidia$n 2>&1 >/dev/null | sed 's/.*: //'); "
                      "fi; done",
                  1);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  json w = WaitEnded(a, "gpu-probe");
  ASSERT_EQ(w.value("state", ""), "succeeded") << w.dump(2);
  const std::string out = ReadFile(RunDir(w) + "/stdout.log");
  const bool on_first = out.find("visible=GPU-fake-0000-h100-00") != std::string::npos;
  const std::string own = on_first ? "node0=" : "node1=";
  const std::string other = on_first ? "node1=" : "node0=";
  EXPECT_THAT(out, HasSubstr(own + "No such device or address")) << out;  // allowed: ENXIO
  EXPECT_THAT(out, HasSubstr(other + "Operation not permitted")) << out;  // denied: EPERM
  // Even setting CUDA_VISIBLE_DEVICES to every GPU opens nothing more: the nodes are denied.
}

// A `setsid` grandchild leaves the run's session and process group but not its cgroup:
// cancelling the workload kills it too, and so does the workload's own end.
TEST_P(IsolationCgroupE2E, ASetsidGrandchildDiesWithItsCancelledRun) {
  Server s(data_, Isolating());
  ASSERT_TRUE(s.Start()) << s.log();
  auto a = s.Client(kTokenA);
  const pid_t child = StartEscaper(a, "escaper", "setsid sleep 1000 & echo child=$!; wait");
  ASSERT_GT(child, 1);
  ASSERT_FALSE(ReadFile("/proc/" + std::to_string(child) + "/stat").empty());
  auto cancel = a.Delete("/v1/workloads/escaper");
  ASSERT_TRUE(cancel);
  ASSERT_LT(cancel->status, 300) << cancel->body;
  json w = WaitEnded(a, "escaper");
  EXPECT_EQ(w.value("state", ""), "cancelled");
  const bool gone = Gone(child);
  if (!gone) kill(child, SIGKILL);
  EXPECT_TRUE(gone) << "the setsid child " << child << " outlived its cancel";

  // A workload that ends on its own, leaving a setsid child behind: the child ends with it.
  const pid_t orphan = StartEscaper(a, "leaver", "setsid sleep 1000 & echo child=$!");
  ASSERT_GT(orphan, 1);
  w = WaitEnded(a, "leaver");
  EXPECT_EQ(w.value("state", ""), "succeeded");
  const bool orphan_gone = Gone(orphan);
  if (!orphan_gone) kill(orphan, SIGKILL);
  EXPECT_TRUE(orphan_gone) << "the setsid child " << orphan << " outlived its run";
}

// After kill -9 of the daemon the run keeps running; the restarted daemon adopts it and
// finds its cgroup again by the run id, so a cancel still kills the setsid grandchild.
TEST_P(IsolationCgroupE2E, AnAdoptedRunsSetsidGrandchildDiesWithItsCancel) {
  Server s(data_, Isolating());
  ASSERT_TRUE(s.Start()) << s.log();
  pid_t child = 0;
  {
    auto a = s.Client(kTokenA);
    child = StartEscaper(a, "survivor", "setsid sleep 1000 & echo child=$!; wait");
  }
  ASSERT_GT(child, 1);
  s.Kill();
  ASSERT_TRUE(s.Start()) << s.log();
  EXPECT_THAT(s.log(), HasSubstr("1 adopted"));
  auto a = s.Client(kTokenA);
  auto cancel = a.Delete("/v1/workloads/survivor");
  ASSERT_TRUE(cancel);
  ASSERT_LT(cancel->status, 300) << cancel->body;
  json w = WaitEnded(a, "survivor");
  EXPECT_EQ(w.value("state", ""), "cancelled");
  const bool gone = Gone(child);
  if (!gone) kill(child, SIGKILL);
  EXPECT_TRUE(gone) << "the setsid child " << child << " outlived its cancel after a restart";
}

// A data directory used without isolation (world-readable store, logs) is closed up when
// an isolating daemon starts on it.
TEST_F(IsolationE2E, AnOpenDataDirectoryIsClosedUpAtStart) {
  {
    Server s(data_, {"--isolation", "off"});
    ASSERT_TRUE(s.Start()) << s.log();
    auto admin = s.Client(kAdminToken);
    auto r = Submit(admin, "old", "echo old-output");
    ASSERT_TRUE(r && r->status == 201);
    ASSERT_EQ(WaitEnded(admin, "old").value("state", ""), "succeeded");
  }
  Server s(data_, Isolating());  // (rewrites the token file)
  chmod(data_.c_str(), 0755);
  chmod((data_ + "/tokens").c_str(), 0644);
  chmod((data_ + "/airtime.db").c_str(), 0644);
  chmod((data_ + "/runs/1").c_str(), 0755);
  chmod((data_ + "/runs/1/stdout.log").c_str(), 0644);
  ASSERT_TRUE(s.Start()) << s.log();
  auto mode = [](const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 ? st.st_mode & 0777 : 07777u;
  };
  EXPECT_EQ(mode(data_), 0711u);
  EXPECT_EQ(mode(data_ + "/tokens"), 0600u);
  EXPECT_EQ(mode(data_ + "/airtime.db"), 0600u);
  EXPECT_EQ(mode(data_ + "/runs"), 0711u);
  EXPECT_EQ(mode(data_ + "/runs/1"), 0711u);
  EXPECT_EQ(mode(data_ + "/runs/1/stdout.log"), 0600u);
  auto a = s.Client(kTokenA);
  auto r = Submit(a, "peek", "cat " + data_ + "/runs/1/stdout.log " + data_ + "/tokens");
  ASSERT_TRUE(r && r->status == 201);
  json w = WaitEnded(a, "peek");
  const std::string run = RunDir(w);
  EXPECT_THAT(ReadFile(run + "/stdout.log"), Not(HasSubstr("old-output")));
  EXPECT_THAT(ReadFile(run + "/stderr.log"), HasSubstr("runs/1/stdout.log: Permission denied"));
}

// Where the host cannot isolate (here: a cgroup root without controllers), the daemon says
// so at start, refuses tenant tokens (the admin's still work), accepts them with
// --allow-unisolated-tenants, and --isolation required refuses to start.
TEST(IsolationE2EHost, AHostThatCannotIsolateRefusesTenantTokensUnlessAllowed) {
  fs::path dir = fs::path("/tmp") / ("airtime_iso_" + std::to_string(getpid()) + "_nohost");
  fs::remove_all(dir);
  fs::create_directories(dir / "no-cgroups");
  const std::string data = (dir / "data").string();
  const std::string fake_root = (dir / "no-cgroups").string();
  {
    Server s(data, {"--cgroup-root", fake_root});
    ASSERT_TRUE(s.Start()) << s.log();
    const std::string log = s.log();
    EXPECT_THAT(log, HasSubstr("tenant isolation OFF ("));
    if (geteuid() == 0) {
      EXPECT_THAT(log, HasSubstr("no cgroup v1 'devices' controller at " + fake_root + "/devices"));
    }
    EXPECT_THAT(log, HasSubstr("tenant tokens are refused"));
    auto a = s.Client(kTokenA);
    auto r = a.Get("/v1/workloads");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403);
    EXPECT_THAT(r->body, HasSubstr("--allow-unisolated-tenants"));
    r = Submit(a, "t", "true");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403);
    auto admin = s.Client(kAdminToken);
    r = Submit(admin, "by-admin", "echo ran");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 201) << r->body;
    json w = WaitEnded(admin, "by-admin");
    EXPECT_EQ(w.value("state", ""), "succeeded") << w.dump(2);
  }
  {
    Server s(data, {"--cgroup-root", fake_root, "--allow-unisolated-tenants"});
    ASSERT_TRUE(s.Start()) << s.log();
    EXPECT_THAT(s.log(), HasSubstr("tenant tokens are accepted anyway"));
    auto a = s.Client(kTokenA);
    auto r = a.Get("/v1/workloads");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
  }
  {
    Server s(data, {"--cgroup-root", fake_root, "--isolation", "required"});
    EXPECT_FALSE(s.Start());
    EXPECT_THAT(s.log(), HasSubstr("cannot isolate tenants: "));
  }
  fs::remove_all(dir);
}

// A workdir that does not exist is named: at submission, and at launch when it vanished
// in between (instead of "posix_spawn /proc/self/exe: No such file or directory").
TEST(IsolationE2EHost, AMissingWorkdirIsNamedAtSubmissionAndAtLaunch) {
  fs::path dir = fs::path("/tmp") / ("airtime_iso_" + std::to_string(getpid()) + "_workdir");
  fs::remove_all(dir);
  fs::create_directories(dir / "wd");
  Server s((dir / "data").string(), {"--isolation", "off"});
  ASSERT_TRUE(s.Start()) << s.log();
  auto admin = s.Client(kAdminToken);
  auto r = Submit(admin, "nowhere", "true", 0, "/nope");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_THAT(r->body, HasSubstr("workload 'nowhere': field 'workdir': '/nope' does not exist "
                                 "(or is not a directory)"));
  // Accepted while the workdir exists, launched after it is gone: both GPUs are busy first.
  r = Submit(admin, "blocker", "sleep 1000", 2);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  const std::string wd = (dir / "wd").string();
  r = Submit(admin, "later", "true", 1, wd);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  fs::remove_all(wd);
  r = admin.Delete("/v1/workloads/blocker");
  ASSERT_TRUE(r);
  json w = WaitEnded(admin, "later");
  EXPECT_EQ(w.value("state", ""), "failed") << w.dump(2);
  const std::string reason = w.dump();
  EXPECT_THAT(reason, HasSubstr("workload 'later': workdir '" + wd +
                                "' does not exist (or is not a directory)"));
  EXPECT_THAT(reason, Not(HasSubstr("posix_spawn")));
  fs::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  g_airtime = airtime::e2e::AirtimeFlag(argc, argv, "isolation_e2e_test");
  if (g_airtime.empty()) return 2;
  g_airtime = fs::absolute(g_airtime).string();  // the server starts in another directory
  return RUN_ALL_TESTS();
}
