// The shim: a tiny supervisor between the daemon and every workload process.
//
// The executor starts `airtime _shim --run-dir DIR -- ARGV...` in its own session, so the
// daemon's death does not reach it. The shim:
//   1. claims the run (DIR/claim, see run_files.h); if the run is already claimed (by an
//      earlier shim, or by a restarted daemon that declared it abandoned) it exits
//      kShimRefused at once without running anything;
//   2. forks the workload: execvp(ARGV) directly (never a shell), stdin /dev/null, stdout and
//      stderr appended to DIR/stdout.log and DIR/stderr.log; an exec failure exits 127 with
//      a line in stderr.log naming the program and the errno text;
//   3. forwards SIGTERM, SIGINT and SIGHUP it receives to its whole process group (the
//      workload and anything it started stay in the shim's group; the shim ignores the echo
//      of its own forwarding), reaps the workload, writes DIR/exit atomically ("exit <code>"
//      or "signal <N>") and exits with the code (128+N for a signal).
// With --user UID:GID:GROUPS (run_user.h) the shim first writes its pid into each
// --cgroup DIR given (run_cgroup.h), so the workload and all it starts stay in the run's
// cgroups; hands DIR/stdout.log, DIR/stderr.log and DIR/telemetry to the user (mode 0600),
// and the forked workload drops to the user (umask 022) before exec; a failure there exits
// kShimSetupFailed with a line in stderr.log. The shim itself stays root (it must write
// DIR/exit, which the workload cannot touch).
// A stop signal that arrives before the workload is forked cancels it: the shim records
// "signal <N>" and runs nothing. The shim's own diagnostics go to its stderr (the executor
// points it at DIR/shim.log).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/exec/run_user.h"

namespace airtime {

inline constexpr int kShimRefused = 125;  // the run was already claimed: nothing ran
// Could not claim the run for another reason (no claim is then left), or claimed it but
// could not set up the workload (the exit file then says "exit 126").
inline constexpr int kShimSetupFailed = 126;
inline constexpr int kShimExecFailed = 127;  // execvp of ARGV[0] failed
// The run's files (claim, logs) could not be written because the file system or the quota
// is full (ENOSPC, EDQUOT): nothing ran and no exit file is written. Not the workload's
// failure: the daemon starts it again once there is space.
inline constexpr int kShimNoSpace = 124;

inline constexpr char kTelemetryFile[] = "telemetry";

struct ShimArgs {
  std::string run_dir;
  std::vector<std::string> argv;
  std::optional<RunUser> user;       // --user UID:GID:G1,G2 (none: stay the daemon's user)
  std::vector<std::string> cgroups;  // --cgroup DIR, repeated
};

// Parses what follows `_shim`: --run-dir DIR [--user U] [--cgroup DIR]... -- PROGRAM ARGS...
StatusOr<ShimArgs> ParseShimArgs(const std::vector<std::string>& args);
// The arguments that ParseShimArgs reads back (without the leading "_shim").
std::vector<std::string> ShimArgv(const ShimArgs& args);
inline constexpr char kShimUsage[] =
    "usage: _shim --run-dir DIR [--user UID:GID:GROUPS] [--cgroup DIR]... -- PROGRAM [ARGS...]";

// Runs the shim in the calling process (which should be single-threaded, as the `_shim`
// subcommand is) and returns the process exit code.
int RunShim(const ShimArgs& args);
inline int RunShim(const std::string& run_dir, const std::vector<std::string>& argv) {
  return RunShim(ShimArgs{run_dir, argv, std::nullopt, {}});
}

}  // namespace airtime
