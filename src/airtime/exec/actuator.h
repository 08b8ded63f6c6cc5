// Actuator: how the daemon acts on the world, and the values it passes. It starts a run,
// watches it, learns when it ends, stops it (with a grace period, for a checkpoint), and
// after a daemon restart finds out what became of a run it had started. The daemon
// (server/daemon.h) holds one Actuator and calls nothing else to start or stop workloads.
//
// Implementations: Executor (executor.h), which runs processes on this machine through the
// shim, and SlurmActuator (slurm/slurm_actuator.h), which runs each as a Slurm job. A
// RunHandle names either (a shim's pid, start time and boot id, or a Slurm job id).
//
// Threading: one thread (the daemon's event loop) calls everything except Wake(), which any
// thread may call to interrupt WaitForExits. An implementation may use threads of its own
// inside a call (SlurmActuator's LaunchAll submits a batch concurrently), but each call
// returns only when its work is done.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/exec/gpu_env.h"
#include "airtime/exec/run_user.h"

namespace airtime {

struct LaunchRequest {
  std::string run_dir;            // created (mkdir -p) if missing; made absolute
  std::vector<std::string> argv;  // executed directly (execvp), never through a shell
  EnvVars env;                    // added to / overriding the daemon's environment
  std::string shim_path;          // the airtime binary (e.g. from /proc/self/exe)
  std::string workdir;            // empty: the daemon's working directory; else must exist
  // Isolation (see UseCgroups): the user the workload runs as (none: the daemon's user),
  // and, with cgroups in use, the run id that names its cgroups and the device rules
  // (run_cgroup.h) it is allowed besides "a" denied.
  std::optional<RunUser> user;
  int64_t run_id = 0;
  std::vector<std::string> device_rules;
  // Where the engine placed it: the daemon's GPU ids (UUIDs locally; "slurm:NODE:INDEX" under
  // Slurm) and the share of each (1000: whole). The local executor passes the GPUs through
  // `env` (CUDA_VISIBLE_DEVICES); a backend that places by itself (Slurm) steers by them.
  std::vector<std::string> gpus;
  int share_milli = 1000;
  // The workload's name and airtime's explanation (Slurm shows them in squeue).
  std::string workload;
  std::string comment;
};

// A run's identity: a local process (pid, start_ticks, boot_id) or a Slurm job (slurm_job).
struct RunHandle {
  pid_t pid = 0;  // the shim; also the run's process group id
  int64_t start_ticks = 0;
  std::string boot_id;
  std::string run_dir;
  int64_t slurm_job = 0;  // the Slurm job id (SlurmActuator); 0 for a local process
  // The port the run's replica is given (PORT), where the backend fixed it otherwise than
  // the request asked: a parked Slurm job runs again with its first submission's
  // environment. 0: the request's. On Adopt, the port recorded for the run.
  int port = 0;
};

// A run the backend still has under this daemon's name that the store has no row for.
struct UnrecordedRun {
  int64_t run_id = 0;
  std::string workload;
  RunHandle handle;
  std::string what;  // for the refusal and the log: "slurm job 42 'airtime.x.r7' (RUNNING)"
};

// The GPUs a run turned out to hold, from a backend that chooses them itself (Slurm picks a
// job's GPU indices): the daemon's GPU ids, as in LaunchRequest::gpus.
struct Placed {
  int64_t run_id = 0;
  std::vector<std::string> gpus;
};

// A GPU held by work the backend runs for others than airtime (a job submitted to Slurm
// directly): capacity airtime cannot move.
struct ForeignUse {
  std::string gpu;    // the daemon's GPU id
  std::string owner;  // who holds it ("slurm job 42 (alice)")
  int milli = 1000;   // how much of it, in thousandths (< 1000: a share, Slurm's gres/shard)
};

// One start of a batch (Actuator::LaunchAll): the run's identity or why it did not start,
// and when the backend accepted it or refused it (for airtime_backend_action_seconds).
struct LaunchResult {
  StatusOr<RunHandle> handle;
  std::chrono::steady_clock::time_point done;
};

struct Exited {
  int64_t run_id = 0;
  // The workload's exit code, 128+N for signal N, or -1 when unknown.
  int exit_code = -1;
  // "exit", "signal": from DIR/exit.
  // "vanished": the shim ended without writing DIR/exit (e.g. SIGKILLed); exit_code is the
  //   shim's wait status when it was our child, 137 when we sent it SIGKILL, else -1.
  // "refused": the shim found the run claimed by someone else and ran nothing (code 125).
  // "no space": the shim could not write the run's files, the file system or quota being
  //   full (code 124, kShimNoSpace); nothing ran.
  std::string how;
};

enum class AdoptState {
  kRunning,       // same identity, alive: now watched (its exit comes from WaitForExits)
  kExited,        // gone: AdoptResult::exit says how
  kNeverStarted,  // no shim claimed the run: it is now claimed "abandoned", nothing will run
  kNotOurs,       // the pid is alive but is another process (pid reuse): treat the run as gone
};
const char* AdoptStateName(AdoptState state);

struct AdoptResult {
  AdoptState state = AdoptState::kNeverStarted;
  RunHandle handle;            // the identity used (read from DIR/claim when pid was 0)
  std::optional<Exited> exit;  // for kExited and kNotOurs
};

class Actuator {
 public:
  virtual ~Actuator() = default;

  // Starts `request` and returns its identity. Call Watch() next.
  virtual StatusOr<RunHandle> Launch(const LaunchRequest& request) = 0;
  // Starts every request, as many Launch calls would, and returns their results in the
  // same order; call Watch() for each that started. A backend whose starts wait on a
  // remote service (Slurm) makes them concurrently; this one makes them one after another.
  virtual std::vector<LaunchResult> LaunchAll(const std::vector<LaunchRequest>& requests) {
    std::vector<LaunchResult> out;
    out.reserve(requests.size());
    for (const LaunchRequest& r : requests)
      out.push_back(LaunchResult{Launch(r), std::chrono::steady_clock::now()});
    return out;
  }
  // Watches `handle` as `run_id`; its end comes from WaitForExits, exactly once.
  virtual Status Watch(int64_t run_id, const RunHandle& handle) = 0;
  // Blocks until at least one watched run ended, Wake() was called, or timeout_ms passed
  // (negative: no timeout).
  virtual std::vector<Exited> WaitForExits(int timeout_ms) = 0;
  // Makes a concurrent or the next WaitForExits return. Any thread.
  virtual void Wake() = 0;
  // Asks the run to end now (SIGTERM, a checkpoint signal) and ends it for good after
  // grace_ms. Never blocks.
  virtual Status Stop(int64_t run_id, int grace_ms) = 0;
  // Ends the run now.
  virtual Status StopNow(int64_t run_id) = 0;
  // After a daemon restart: what became of a run recorded with this identity (pid and
  // slurm_job 0: the daemon died before recording it). See AdoptState.
  virtual StatusOr<AdoptResult> Adopt(int64_t run_id, const RunHandle& recorded) = 0;

  // At start: the backend's live runs under this daemon's name whose ids are not in
  // `recorded` (the store's run ids, ascending). A crash of the machine took their rows
  // (store_marks.h: ids are reserved a block at a time). A local process dies with the
  // machine, and its run directory tells the start-up check: none here.
  virtual StatusOr<std::vector<UnrecordedRun>> Unrecorded(const std::vector<int64_t>& recorded) {
    (void)recorded;
    return std::vector<UnrecordedRun>{};
  }
  // Ends one of them for good (the user accepted the store's loss).
  virtual Status EndUnrecorded(const UnrecordedRun& run) {
    (void)run;
    return OkStatus();
  }

  // Runs whose GPUs the backend chose itself, each reported once, when known (after a
  // WaitForExits). The local executor runs where it is told: none.
  virtual std::vector<Placed> TakePlaced() { return {}; }
  // The GPUs others' work holds now, when that changed since the last call (nullopt: no
  // change). The local executor knows of none.
  virtual std::optional<std::vector<ForeignUse>> TakeForeign() { return std::nullopt; }
  // The GPUs the backend will not start work on now (their Slurm node is down, drained or
  // not responding), when that changed since the last call (nullopt: no change). Local
  // GPUs: never.
  virtual std::optional<std::vector<std::string>> TakeUnusable() { return std::nullopt; }
  // Whether a fraction of a GPU runs as a client of this daemon's own MPS server (local
  // processes). A backend whose fractions run on other machines, shared its own way (Slurm's
  // gres/shard), says no: the daemon then starts no MPS server for them.
  virtual bool FractionsUseLocalMps() const { return true; }
  // `workload` will not run again: what the backend kept for it (a requeued Slurm job) goes.
  virtual void Retire(const std::string& workload) { (void)workload; }
  // Where the daemon reaches a replica placed on `gpus` (the daemon's GPU ids) at its port
  // (PORT, AIRTIME_PORT): an address or host name. Local processes: 127.0.0.1; a Slurm job:
  // its node's address (Slurm's NodeAddr).
  virtual std::string ServiceAddress(const std::vector<std::string>& gpus) const {
    (void)gpus;
    return "127.0.0.1";
  }
  // Ports the backend keeps for runs that will start again with them (a parked Slurm job
  // keeps its environment, PORT in it): not to be given to another replica.
  virtual std::vector<int> KeptPorts() const { return {}; }
  // One line on the backend's state for `airtime status` and /metrics ("" when nothing).
  virtual std::string Describe() const { return ""; }
};

}  // namespace airtime
