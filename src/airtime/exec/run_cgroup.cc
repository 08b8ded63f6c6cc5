// RunCgroups: see run_cgroup.h.
#include "airtime/exec/run_cgroup.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "airtime/exec/device_program.h"
#include "airtime/exec/run_files.h"

namespace airtime {
namespace {

Status WriteControl(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Internal(ErrnoMessage("open " + path, errno));
  ssize_t n = write(fd, value.data(), value.size());
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size()))
    return Internal(ErrnoMessage("write '" + value + "' to " + path, err));
  return OkStatus();
}

std::string ReadControl(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool IsCgroup2(const std::string& dir) {
  struct statfs fs {};
  return statfs(dir.c_str(), &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// rmdir that waits (up to about a second) while the last killed processes leave.
Status RemoveCgroup(const std::string& dir) {
  for (int i = 0;; ++i) {
    if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return OkStatus();
    if (errno != EBUSY || i >= 100) return Internal(ErrnoMessage("rmdir " + dir, errno));
    SleepMs(10);
  }
}

std::string Rule(const struct stat& st) {
  return "c " + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev)) +
         " rwm";
}

}  // namespace

std::vector<std::string> BasicDeviceRules() {
  return {
      "c 1:3 rwm",    // null
      "c 1:5 rwm",    // zero
      "c 1:7 rwm",    // full
      "c 1:8 rwm",    // random
      "c 1:9 rwm",    // urandom
      "c 5:0 rwm",    // tty
      "c 5:2 rwm",    // ptmx
      "c 136:* rwm",  // pts
  };
}

std::vector<std::string> DeviceRulesFor(const std::vector<std::string>& nodes) {
  std::vector<std::string> rules;
  for (const std::string& node : nodes) {
    struct stat st {};
    if (stat(node.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) rules.push_back(Rule(st));
  }
  return rules;
}

std::string CgroupParentFor(const std::string& data_dir) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a: stable across builds and restarts
  for (unsigned char c : data_dir) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("airtime/") + hex;
}

std::string CgroupV2Root(const std::string& root) {
  if (IsCgroup2(root)) return root;
  if (IsCgroup2(root + "/unified")) return root + "/unified";
  return "";
}

RunCgroups::RunCgroups(std::string root, std::string parent)
    : root_(std::move(root)), parent_(std::move(parent)) {
  if (Exists(root_ + "/devices/devices.deny") && Exists(root_ + "/freezer/cgroup.procs")) {
    layout_ = CgroupLayout::kV1;
  } else if (v2_root_ = CgroupV2Root(root_); !v2_root_.empty()) {
    layout_ = CgroupLayout::kV2;
  }
}

std::string RunCgroups::Describe() const {
  if (layout_ == CgroupLayout::kV2) return v2_root_ + "/" + parent_ + " (cgroup v2)";
  return root_ + "/{devices,freezer}/" + parent_ + " (cgroup v1)";
}

Status RunCgroups::Check() const {
  if (geteuid() != 0)
    return FailedPrecondition("not running as root (needed to switch users and make cgroups)");
  if (layout_ == CgroupLayout::kNone) {
    const std::string missing = Exists(root_ + "/devices/devices.deny") ? "freezer" : "devices";
    return FailedPrecondition("no cgroup v1 '" + missing + "' controller at " + root_ + "/" +
                              missing + " and no cgroup v2 hierarchy at " + root_ + " or " + root_ +
                              "/unified");
  }
  if (layout_ == CgroupLayout::kV2) return CheckV2();
  for (const char* controller : {"devices", "freezer"}) {
    const std::string dir = root_ + "/" + controller + "/" + parent_;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return FailedPrecondition("cannot create " + dir + ": " + ec.message());
  }
  return OkStatus();
}

Status RunCgroups::CheckV2() const {
  const std::string parent = v2_root_ + "/" + parent_;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) return FailedPrecondition("cannot create " + parent + ": " + ec.message());
  // A cgroup of its own to try what a run needs: a device program, and a way to kill whole.
  const std::string probe = parent + "/probe-" + std::to_string(getpid());
  (void)rmdir(probe.c_str());
  if (mkdir(probe.c_str(), 0755) != 0)
    return FailedPrecondition(ErrnoMessage("cannot create " + probe, errno));
  Status result = OkStatus();
  const int fd = open(probe.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    result = FailedPrecondition(ErrnoMessage("open " + probe, errno));
  } else {
    if (Status st = AttachDeviceProgram(fd, BasicDeviceRules()); !st.ok())
      result = FailedPrecondition("cgroup v2 at " + v2_root_ + ": " + st.message());
    close(fd);
  }
  if (result.ok() && !Exists(probe + "/cgroup.kill") && !Exists(probe + "/cgroup.freeze"))
    result = FailedPrecondition("cgroup v2 at " + v2_root_ +
                                ": neither cgroup.kill nor cgroup.freeze (Linux 5.2 or later)");
  (void)rmdir(probe.c_str());
  return result;
}

std::string RunCgroups::Dir(const char* controller, int64_t run_id) const {
  return root_ + "/" + controller + "/" + parent_ + "/run-" + std::to_string(run_id);
}

std::string RunCgroups::V2Dir(int64_t run_id) const {
  return v2_root_ + "/" + parent_ + "/run-" + std::to_string(run_id);
}

std::vector<std::string> RunCgroups::Paths(int64_t run_id) const {
  if (layout_ == CgroupLayout::kV2) return {V2Dir(run_id)};
  return {Dir("devices", run_id), Dir("freezer", run_id)};
}

Status RunCgroups::Create(int64_t run_id, const std::vector<std::string>& rules) const {
  if (layout_ == CgroupLayout::kV2) return CreateV2(run_id, rules);
  for (const std::string& dir : Paths(run_id)) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Internal("mkdir -p " + dir + ": " + ec.message());
  }
  const std::string devices = Dir("devices", run_id);
  AIRTIME_RETURN_IF_ERROR(WriteControl(devices + "/devices.deny", "a"));
  for (const std::string& rule : rules)
    AIRTIME_RETURN_IF_ERROR(WriteControl(devices + "/devices.allow", rule));
  return OkStatus();
}

Status RunCgroups::CreateV2(int64_t run_id, const std::vector<std::string>& rules) const {
  const std::string dir = V2Dir(run_id);
  // A leftover of a launch that never started keeps its old program: make it anew.
  if (rmdir(dir.c_str()) != 0 && errno != ENOENT)
    return Internal(ErrnoMessage("remove the leftover cgroup " + dir, errno));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Internal("mkdir -p " + dir + ": " + ec.message());
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Internal(ErrnoMessage("open " + dir, errno));
  Status st = AttachDeviceProgram(fd, rules);
  close(fd);
  return st;
}

std::vector<int> RunCgroups::Pids(int64_t run_id) const {
  std::vector<int> pids;
  const std::string dir = layout_ == CgroupLayout::kV2 ? V2Dir(run_id) : Dir("freezer", run_id);
  std::istringstream in(ReadControl(dir + "/cgroup.procs"));
  int pid = 0;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

void RunCgroups::KillV1(int64_t run_id) const {
  const std::string freezer = Dir("freezer", run_id);
  if (!Exists(freezer)) return;
  // Frozen, nothing in the cgroup can fork while we collect its pids; the SIGKILLs take
  // effect when it thaws. Repeat: a process may have been between fork and joining.
  for (int round = 0; round < 100; ++round) {
    if (Pids(run_id).empty()) break;
    (void)WriteControl(freezer + "/freezer.state", "FROZEN");
    for (int i = 0; i < 50 && ReadControl(freezer + "/freezer.state").rfind("FROZEN", 0) != 0; ++i)
      SleepMs(1);
    for (int pid : Pids(run_id)) kill(pid, SIGKILL);
    (void)WriteControl(freezer + "/freezer.state", "THAWED");
    SleepMs(round < 10 ? 1 : 10);
  }
}

void RunCgroups::KillV2(int64_t run_id) const {
  const std::string dir = V2Dir(run_id);
  if (!Exists(dir)) return;
  const bool can_kill = Exists(dir + "/cgroup.kill");
  for (int round = 0; round < 100; ++round) {
    if (Pids(run_id).empty()) break;
    if (can_kill) {
      // The kernel kills every process in the cgroup, forks in flight included.
      (void)WriteControl(dir + "/cgroup.kill", "1");
    } else {
      (void)WriteControl(dir + "/cgroup.freeze", "1");
      for (int i = 0;
           i < 50 && ReadControl(dir + "/cgroup.events").find("frozen 1") == std::string::npos; ++i)
        SleepMs(1);
      for (int pid : Pids(run_id)) kill(pid, SIGKILL);
      (void)WriteControl(dir + "/cgroup.freeze", "0");
    }
    SleepMs(round < 10 ? 1 : 10);
  }
}

Status RunCgroups::Kill(int64_t run_id) const {
  if (layout_ == CgroupLayout::kV2) {
    KillV2(run_id);
  } else {
    KillV1(run_id);
  }
  Status result = OkStatus();
  for (const std::string& dir : Paths(run_id)) {
    if (Status st = RemoveCgroup(dir); !st.ok() && result.ok()) result = st;
  }
  return result;
}

Status JoinCgroups(const std::vector<std::string>& paths) {
  const std::string pid = std::to_string(getpid());
  for (const std::string& dir : paths)
    AIRTIME_RETURN_IF_ERROR(WriteControl(dir + "/cgroup.procs", pid));
  return OkStatus();
}

}  // namespace airtime
