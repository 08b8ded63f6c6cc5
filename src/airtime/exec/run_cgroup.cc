// RunCgroups: see run_cgroup.h.
#include "airtime/exec/run_cgroup.h"

#include <fcntl.h>
#include <sys/stat.h>
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

Status RunCgroups::Check() const {
  if (geteuid() != 0)
    return FailedPrecondition("not running as root (needed to switch users and make cgroups)");
  for (const char* controller : {"devices", "freezer"}) {
    const std::string dir = root_ + "/" + controller;
    const std::string probe =
        dir + (std::string(controller) == "devices" ? "/devices.deny" : "/cgroup.procs");
    if (access(probe.c_str(), F_OK) != 0)
      return FailedPrecondition("no cgroup v1 '" + std::string(controller) + "' controller at " +
                                dir + " (cgroup v2 device programs are not supported)");
    std::error_code ec;
    std::filesystem::create_directories(dir + "/" + parent_, ec);
    if (ec) return FailedPrecondition("cannot create " + dir + "/" + parent_ + ": " + ec.message());
  }
  return OkStatus();
}

std::string RunCgroups::Dir(const char* controller, int64_t run_id) const {
  return root_ + "/" + controller + "/" + parent_ + "/run-" + std::to_string(run_id);
}

std::vector<std::string> RunCgroups::Paths(int64_t run_id) const {
  return {Dir("devices", run_id), Dir("freezer", run_id)};
}

Status RunCgroups::Create(int64_t run_id, const std::vector<std::string>& rules) const {
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

std::vector<int> RunCgroups::Pids(int64_t run_id) const {
  std::vector<int> pids;
  std::istringstream in(ReadControl(Dir("freezer", run_id) + "/cgroup.procs"));
  int pid = 0;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

Status RunCgroups::Kill(int64_t run_id) const {
  const std::string freezer = Dir("freezer", run_id);
  const std::string devices = Dir("devices", run_id);
  if (access(freezer.c_str(), F_OK) == 0) {
    // Frozen, nothing in the cgroup can fork while we collect its pids; the SIGKILLs take
    // effect when it thaws. Repeat: a process may have been between fork and joining.
    for (int round = 0; round < 100; ++round) {
      std::vector<int> pids = Pids(run_id);
      if (pids.empty()) break;
      (void)WriteControl(freezer + "/freezer.state", "FROZEN");
      for (int i = 0; i < 50 && ReadControl(freezer + "/freezer.state").rfind("FROZEN", 0) != 0;
           ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      for (int pid : Pids(run_id)) kill(pid, SIGKILL);
      (void)WriteControl(freezer + "/freezer.state", "THAWED");
      std::this_thread::sleep_for(std::chrono::milliseconds(round < 10 ? 1 : 10));
    }
  }
  Status result = OkStatus();
  for (const std::string& dir : {freezer, devices}) {
    if (rmdir(dir.c_str()) != 0 && errno != ENOENT && result.ok())
      result = Internal(ErrnoMessage("rmdir " + dir, errno));
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
