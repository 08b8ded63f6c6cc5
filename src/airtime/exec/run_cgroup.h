// RunCgroups: one cgroup per run under the v1 `devices` and `freezer` controllers, so a
// run sees only its own GPUs' device nodes (as Slurm's ConstrainDevices does) and can be
// killed whole, whatever it started (a `setsid` child included).
//
// Layout: ROOT/devices/PARENT/run-N and ROOT/freezer/PARENT/run-N, ROOT normally
// /sys/fs/cgroup and PARENT "airtime/<16 hex digits of a hash of the data directory>", so
// two daemons on two data directories never share cgroups, and a restarted daemon finds its
// runs' cgroups again from the run id alone. The daemon creates a run's cgroups before it
// starts the shim (devices: "a" denied, then DeviceRules allowed); the shim writes its own
// pid into both cgroup.procs files before it forks the workload; Kill() freezes the run,
// SIGKILLs every pid in it, thaws it, and repeats until it is empty, then removes both.
//
// cgroup v2's device programs (BPF) are not supported: a host with only cgroup v2 fails
// Check(), and the daemon runs without isolation (and says so).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "airtime/base/status.h"

namespace airtime {

inline constexpr char kDefaultCgroupRoot[] = "/sys/fs/cgroup";

// The devices every run may use: null, zero, full, random, urandom, tty, ptmx and the pts
// (as container runtimes allow), as "c MAJOR:MINOR rwm" rules.
std::vector<std::string> BasicDeviceRules();
// One "c MAJOR:MINOR rwm" rule per path that exists and is a character device; the others
// are skipped (a fake GPU has no node).
std::vector<std::string> DeviceRulesFor(const std::vector<std::string>& nodes);

// "airtime/<hash>": the parent of every run cgroup of the daemon of `data_dir`.
std::string CgroupParentFor(const std::string& data_dir);

class RunCgroups {
 public:
  RunCgroups(std::string root, std::string parent)
      : root_(std::move(root)), parent_(std::move(parent)) {}

  // OkStatus when this process can create and fill run cgroups under `root`; otherwise
  // FailedPrecondition saying what is missing (not root; no v1 devices or freezer
  // controller at ROOT/devices, ROOT/freezer; cannot create PARENT there).
  Status Check() const;

  // ROOT/devices/PARENT/run-N and ROOT/freezer/PARENT/run-N.
  std::vector<std::string> Paths(int64_t run_id) const;
  // Creates both (an existing one is reused), denies every device and allows `rules`.
  Status Create(int64_t run_id, const std::vector<std::string>& rules) const;
  // Kills every process in the run's freezer cgroup and removes both cgroups. OkStatus when
  // they did not exist. Blocks at most about a second.
  Status Kill(int64_t run_id) const;
  // The pids in the run's freezer cgroup (empty when it does not exist).
  std::vector<int> Pids(int64_t run_id) const;

  const std::string& root() const { return root_; }
  const std::string& parent() const { return parent_; }

 private:
  std::string Dir(const char* controller, int64_t run_id) const;

  std::string root_;
  std::string parent_;
};

// In the shim: moves the calling process into each cgroup directory in `paths` (writes its
// pid to PATH/cgroup.procs).
Status JoinCgroups(const std::vector<std::string>& paths);

}  // namespace airtime
