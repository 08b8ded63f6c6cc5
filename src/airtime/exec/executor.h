// Executor: launches workload processes crash-safely on this machine, watches them, stops
// them, and adopts them again after the daemon restarts: the local Actuator (actuator.h).
//
// Every run is started through the shim (shim.h) in its own session, so it outlives the
// daemon; its run directory (run_files.h) records who claimed it and how it ended. A run is
// identified by RunHandle: the shim's pid + start ticks + boot id (process_identity.h), which
// the daemon stores durably. The shim is also the leader of the run's process group.
//
// Watching uses one pidfd per run, which works for our children and for adopted processes
// (no longer our children) alike. Every watched run yields exactly one Exited from
// WaitForExits. Stop() never blocks: the SIGKILL after the grace period is sent by
// WaitForExits, which wakes up in time for it, so the daemon must keep calling it.
//
// Requirements: the daemon must not set SIGCHLD to SIG_IGN (its children would be reaped
// by the kernel and their exit codes lost), and must call Adopt only for runs it did not
// launch in this process life (an Adopt racing a fresh Launch may abandon it, correctly but
// uselessly).
//
// Threading: one thread (the daemon's event loop) calls everything except Wake(), which any
// thread may call to interrupt WaitForExits. Processes are not stopped when an Executor is
// destroyed: that is the point of the design.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/exec/actuator.h"
#include "airtime/exec/gpu_env.h"
#include "airtime/exec/run_cgroup.h"
#include "airtime/exec/run_user.h"

namespace airtime {

class Executor final : public Actuator {
 public:
  static StatusOr<std::unique_ptr<Executor>> Create();
  ~Executor() override;

  // From now on every launched run (LaunchRequest::run_id > 0) gets its own cgroups, its
  // shim joins them, and a run's cgroups are killed whole and removed when it is stopped
  // with StopNow (or its Stop grace ends) and when its end is reported, so nothing it
  // started outlives it. Runs adopted or watched later are found by their run id.
  void UseCgroups(std::shared_ptr<const RunCgroups> cgroups) { cgroups_ = std::move(cgroups); }
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Starts the shim for `request` and returns its identity. Call Watch() next.
  StatusOr<RunHandle> Launch(const LaunchRequest& request) override;

  // Watches `handle` as `run_id` (replacing an earlier watch of that id). A process that is
  // already gone, or whose identity no longer matches, is reported by the next WaitForExits.
  Status Watch(int64_t run_id, const RunHandle& handle) override;
  bool IsWatched(int64_t run_id) const { return runs_.count(run_id) != 0; }

  // Blocks until at least one watched run ended, Wake() was called, or timeout_ms passed
  // (negative: no timeout); sends due SIGKILLs of Stop() meanwhile. Reaps our children.
  std::vector<Exited> WaitForExits(int timeout_ms) override;
  // Makes a concurrent or the next WaitForExits return. Any thread.
  void Wake() override;

  // SIGTERM to the run's process group now, SIGKILL after grace_ms if it has not ended.
  Status Stop(int64_t run_id, int grace_ms) override;
  // SIGKILL to the run's process group now.
  Status StopNow(int64_t run_id) override;

  // After a daemon restart: decides what became of a run recorded with this identity
  // (pid 0: the daemon died before recording it; DIR/claim tells). See AdoptState.
  StatusOr<AdoptResult> Adopt(int64_t run_id, const std::string& run_dir, pid_t pid,
                              int64_t start_ticks, const std::string& boot_id);
  StatusOr<AdoptResult> Adopt(int64_t run_id, const RunHandle& recorded) override {
    return Adopt(run_id, recorded.run_dir, recorded.pid, recorded.start_ticks, recorded.boot_id);
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Watched {
    RunHandle handle;
    int pidfd = -1;
    bool killed = false;  // we sent SIGKILL
    std::optional<Clock::time_point> kill_at;
  };

  explicit Executor(int wake_fd) : wake_fd_(wake_fd) {}
  StatusOr<AdoptResult> AdoptClaimed(int64_t run_id, AdoptResult result);
  Exited Collect(int64_t run_id, const Watched& run) const;
  void Forget(int64_t run_id);
  int PollTimeoutMs(std::optional<Clock::time_point> deadline) const;
  void SendDueKills();
  bool DrainWake();
  void KillCgroup(int64_t run_id) const;

  int wake_fd_ = -1;
  std::shared_ptr<const RunCgroups> cgroups_;
  std::map<int64_t, Watched> runs_;
  std::vector<Exited> pending_;  // ends found outside WaitForExits (by Watch)
};

}  // namespace airtime
