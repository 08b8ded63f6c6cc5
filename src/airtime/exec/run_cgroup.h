// RunCgroups: one cgroup per run, so a run sees only its own GPUs' device nodes (as Slurm's
// ConstrainDevices does) and can be killed whole, whatever it started (a `setsid` child
// included). Two layouts, found under ROOT (normally /sys/fs/cgroup) at construction:
//
// cgroup v1 (ROOT/devices and ROOT/freezer are the v1 controllers; preferred when present):
// ROOT/devices/PARENT/run-N and ROOT/freezer/PARENT/run-N. Create() writes "a" to the run's
// devices.deny, then each rule to devices.allow. Kill() freezes the run, SIGKILLs every pid
// in it, thaws it, and repeats until it is empty, then removes both.
//
// cgroup v2 (ROOT is a cgroup2 mount, or ROOT/unified is one on a hybrid host):
// V2ROOT/PARENT/run-N. Create() attaches a device program built from the rules
// (device_program.h). Kill() writes 1 to cgroup.kill (Linux 5.14), or, on older kernels,
// freezes (cgroup.freeze), SIGKILLs and thaws until it is empty, then removes it.
//
// PARENT is "airtime/<16 hex digits of a hash of the data directory>", so two daemons on
// two data directories never share cgroups, and a restarted daemon finds its runs' cgroups
// again from the run id alone. The daemon creates a run's cgroups before it starts the shim;
// the shim writes its own pid into each cgroup.procs before it forks the workload.
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

enum class CgroupLayout { kNone, kV1, kV2 };

class RunCgroups {
 public:
  // Finds the layout under `root` (see above).
  RunCgroups(std::string root, std::string parent);

  // OkStatus when this process can create and fill run cgroups; otherwise
  // FailedPrecondition saying what is missing (not root; neither v1 controllers nor a
  // cgroup2 hierarchy under ROOT; cannot create PARENT; cgroup v2: cannot load or attach a
  // device program). Under v2 it tries a device program on a cgroup of its own.
  Status Check() const;

  CgroupLayout layout() const { return layout_; }
  // Where run cgroups go, for messages: "/sys/fs/cgroup/{devices,freezer}/airtime/HASH
  // (cgroup v1)" or "/sys/fs/cgroup/airtime/HASH (cgroup v2)".
  std::string Describe() const;

  // The run's cgroup directories: v1 its devices and freezer ones, v2 its one.
  std::vector<std::string> Paths(int64_t run_id) const;
  // Creates them (v1: an existing one is reused; v2: an empty leftover is made anew) and
  // restricts the run's devices to `rules` ("c MAJOR:MINOR rwm", device_program.h).
  Status Create(int64_t run_id, const std::vector<std::string>& rules) const;
  // Kills every process in the run's cgroups and removes them. OkStatus when they did not
  // exist. Blocks at most about a second.
  Status Kill(int64_t run_id) const;
  // The pids in the run's cgroup (empty when it does not exist).
  std::vector<int> Pids(int64_t run_id) const;

  const std::string& root() const { return root_; }
  const std::string& parent() const { return parent_; }

 private:
  std::string Dir(const char* controller, int64_t run_id) const;  // v1
  std::string V2Dir(int64_t run_id) const;
  Status CheckV2() const;
  Status CreateV2(int64_t run_id, const std::vector<std::string>& rules) const;
  void KillV2(int64_t run_id) const;
  void KillV1(int64_t run_id) const;

  std::string root_;
  std::string parent_;
  CgroupLayout layout_ = CgroupLayout::kNone;
  std::string v2_root_;  // the cgroup2 mount (v2)
};

// Where a cgroup2 hierarchy is mounted under `root`: `root` itself, or ROOT/unified on a
// hybrid host; "" when neither is.
std::string CgroupV2Root(const std::string& root);

// In the shim: moves the calling process into each cgroup directory in `paths` (writes its
// pid to PATH/cgroup.procs).
Status JoinCgroups(const std::vector<std::string>& paths);

}  // namespace airtime
