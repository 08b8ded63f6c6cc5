// Executor: watching, stopping and adopting runs. Launching is in executor_launch.cc.
#include "airtime/exec/executor.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <filesystem>

#include "airtime/exec/process_identity.h"
#include "airtime/exec/run_files.h"
#include "airtime/exec/shim.h"

namespace airtime {
namespace {

int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

int PidfdSignal(int pidfd, int sig) {
  return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

bool ClaimNames(const Claim& claim, const RunHandle& handle) {
  return claim.kind == Claim::Kind::kStarted && claim.pid == handle.pid &&
         claim.start_ticks == handle.start_ticks;
}

// How a run that is gone ended, from its run directory. `wait_code` is the shim's own exit
// code when we reaped it; `killed` says we sent it SIGKILL.
Exited ExitFromRunDir(int64_t run_id, const RunHandle& handle, std::optional<int> wait_code,
                      bool killed) {
  Exited out{run_id, -1, "vanished"};
  StatusOr<Claim> claim = ReadClaim(handle.run_dir);
  if (claim.ok() && !ClaimNames(*claim, handle)) {
    out.how = "refused";
    out.exit_code = kShimRefused;
    return out;
  }
  if (claim.ok()) {
    StatusOr<ExitRecord> record = ReadExitFile(handle.run_dir);
    if (record.ok()) {
      out.how = record->signaled ? "signal" : "exit";
      out.exit_code = record->Code();
      return out;
    }
  }
  if (wait_code && *wait_code == kShimNoSpace) {
    out.how = "no space";
    out.exit_code = kShimNoSpace;
  } else if (wait_code) {
    out.exit_code = *wait_code;
  } else if (killed) {
    out.exit_code = 128 + SIGKILL;
  }
  return out;
}

enum class Liveness { kAlive, kZombie, kGone, kOther };

// Opens a pidfd for `handle` and checks, after opening, that it is the same process (so
// the pidfd cannot refer to a later process that reused the pid). *pidfd is set for
// kAlive and kZombie; the caller owns it.
StatusOr<Liveness> OpenVerified(const RunHandle& handle, int* pidfd) {
  *pidfd = -1;
  StatusOr<std::string> boot = CurrentBootId();
  if (!boot.ok()) return boot.status();
  if (handle.pid <= 0 || (!handle.boot_id.empty() && handle.boot_id != *boot)) {
    return Liveness::kGone;
  }
  int fd = PidfdOpen(handle.pid);
  if (fd < 0 && errno == ESRCH) return Liveness::kGone;
  if (fd < 0) return Internal(ErrnoMessage("pidfd_open " + std::to_string(handle.pid), errno));
  StatusOr<ProcStat> stat = ReadProcStat(handle.pid);
  Liveness result = Liveness::kAlive;
  if (!stat.ok()) {
    result = Liveness::kGone;
  } else if (stat->start_ticks != handle.start_ticks) {
    result = Liveness::kOther;
  } else if (stat->state == 'Z') {
    result = Liveness::kZombie;
  }
  if (result == Liveness::kAlive || result == Liveness::kZombie) {
    *pidfd = fd;
  } else {
    close(fd);
  }
  return result;
}

std::optional<int> ReapIfChild(pid_t pid) {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid) return std::nullopt;  // not our child (ECHILD), or somehow still running
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

const char* AdoptStateName(AdoptState state) {
  switch (state) {
    case AdoptState::kRunning:
      return "running";
    case AdoptState::kExited:
      return "exited";
    case AdoptState::kNeverStarted:
      return "never_started";
    case AdoptState::kNotOurs:
      return "not_ours";
  }
  return "unknown";
}

StatusOr<std::unique_ptr<Executor>> Executor::Create() {
  StatusOr<std::string> boot = CurrentBootId();
  if (!boot.ok()) return boot.status();
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return Internal(ErrnoMessage("eventfd", errno));
  return std::unique_ptr<Executor>(new Executor(fd));
}

Executor::~Executor() {
  for (auto& [id, run] : runs_) close(run.pidfd);
  close(wake_fd_);
}

void Executor::KillCgroup(int64_t run_id) const {
  if (cgroups_ && run_id > 0) (void)cgroups_->Kill(run_id);
}

Status Executor::Watch(int64_t run_id, const RunHandle& handle) {
  Forget(run_id);
  int pidfd = -1;
  StatusOr<Liveness> live = OpenVerified(handle, &pidfd);
  if (!live.ok()) return live.status();
  if (pidfd >= 0) {
    runs_[run_id] = Watched{handle, pidfd, false, std::nullopt};
  } else {
    KillCgroup(run_id);
    pending_.push_back(ExitFromRunDir(run_id, handle, std::nullopt, false));
  }
  return OkStatus();
}

void Executor::Forget(int64_t run_id) {
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return;
  close(it->second.pidfd);
  runs_.erase(it);
}

Exited Executor::Collect(int64_t run_id, const Watched& run) const {
  // The shim has ended: whatever the run started and left behind ends with it.
  KillCgroup(run_id);
  std::optional<int> wait_code = ReapIfChild(run.handle.pid);
  return ExitFromRunDir(run_id, run.handle, wait_code, run.killed);
}

void Executor::Wake() {
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

bool Executor::DrainWake() {
  uint64_t count = 0;
  return read(wake_fd_, &count, sizeof(count)) == static_cast<ssize_t>(sizeof(count));
}

int Executor::PollTimeoutMs(std::optional<Clock::time_point> deadline) const {
  for (const auto& [id, run] : runs_) {
    if (run.kill_at && (!deadline || *run.kill_at < *deadline)) deadline = run.kill_at;
  }
  if (!deadline) return -1;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, INT_MAX));
}

void Executor::SendDueKills() {
  Clock::time_point now = Clock::now();
  std::vector<int64_t> due;
  for (const auto& [id, run] : runs_) {
    if (run.kill_at && *run.kill_at <= now) due.push_back(id);
  }
  for (int64_t id : due) (void)StopNow(id);
}

std::vector<Exited> Executor::WaitForExits(int timeout_ms) {
  std::vector<Exited> out = std::move(pending_);
  pending_.clear();
  std::optional<Clock::time_point> deadline;
  if (timeout_ms >= 0) deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (out.empty()) {
    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}};
    std::vector<int64_t> ids;
    for (const auto& [id, run] : runs_) {
      fds.push_back({run.pidfd, POLLIN, 0});
      ids.push_back(id);
    }
    int n = poll(fds.data(), fds.size(), PollTimeoutMs(deadline));
    if (n < 0 && errno != EINTR) break;  // cannot happen with valid fds; do not spin
    bool woken = (fds[0].revents & POLLIN) && DrainWake();
    SendDueKills();
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      int64_t id = ids[i - 1];
      out.push_back(Collect(id, runs_.at(id)));
      Forget(id);
    }
    if (woken || (deadline && Clock::now() >= *deadline)) break;
  }
  return out;
}

Status Executor::Stop(int64_t run_id, int grace_ms) {
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return NotFound("run " + std::to_string(run_id) + " is not watched");
  if (grace_ms <= 0) return StopNow(run_id);
  Watched& run = it->second;
  // The shim forwards SIGTERM to its whole group exactly once. If the shim itself is gone,
  // what is left of its group gets the signal directly.
  if (PidfdSignal(run.pidfd, SIGTERM) != 0 && killpg(run.handle.pid, SIGTERM) != 0 &&
      errno != ESRCH) {
    return Internal(ErrnoMessage("killpg " + std::to_string(run.handle.pid), errno));
  }
  Clock::time_point at = Clock::now() + std::chrono::milliseconds(grace_ms);
  if (!run.kill_at || at < *run.kill_at) run.kill_at = at;
  return OkStatus();
}

Status Executor::StopNow(int64_t run_id) {
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return NotFound("run " + std::to_string(run_id) + " is not watched");
  Watched& run = it->second;
  run.killed = true;
  run.kill_at.reset();
  int group_rc = killpg(run.handle.pid, SIGKILL);
  int group_err = errno;
  // In case the shim is not (or no longer) its group's leader.
  int shim_rc = PidfdSignal(run.pidfd, SIGKILL);
  // And everything that left the group (setsid): the run's cgroup holds it.
  KillCgroup(run_id);
  if (group_rc != 0 && shim_rc != 0 && group_err != ESRCH) {
    return Internal(ErrnoMessage("killpg " + std::to_string(run.handle.pid), group_err));
  }
  return OkStatus();
}

StatusOr<AdoptResult> Executor::Adopt(int64_t run_id, const std::string& run_dir, pid_t pid,
                                      int64_t start_ticks, const std::string& boot_id) {
  if (run_dir.empty()) return InvalidArgument("Adopt: empty run_dir");
  std::error_code ec;
  std::string dir = std::filesystem::absolute(run_dir, ec).string();
  std::filesystem::create_directories(dir, ec);
  if (ec) return Internal("mkdir -p " + dir + ": " + ec.message());
  AdoptResult result;
  result.handle = RunHandle{pid, start_ticks, boot_id, dir};
  StatusOr<Claim> claim = ReadClaim(dir);
  if (claim.status().code() == StatusCode::kNotFound) {
    // Nothing has run. Claim the run so that a shim still on its way refuses.
    Status st = WriteClaim(dir, Claim{});
    if (st.ok()) {
      KillCgroup(run_id);
      result.state = AdoptState::kNeverStarted;
      return result;
    }
    if (st.code() != StatusCode::kAlreadyExists) return st;
    claim = ReadClaim(dir);  // a shim won the race after all
  }
  if (!claim.ok()) return claim.status();
  if (claim->kind == Claim::Kind::kAbandoned) {
    result.state = AdoptState::kNeverStarted;
    return result;
  }
  if (pid == 0) {
    result.handle = RunHandle{claim->pid, claim->start_ticks, claim->boot_id, dir};
  }
  return AdoptClaimed(run_id, std::move(result));
}

StatusOr<AdoptResult> Executor::AdoptClaimed(int64_t run_id, AdoptResult result) {
  int pidfd = -1;
  StatusOr<Liveness> live = OpenVerified(result.handle, &pidfd);
  if (!live.ok()) return live.status();
  if (*live == Liveness::kAlive) {
    Forget(run_id);
    runs_[run_id] = Watched{result.handle, pidfd, false, std::nullopt};
    result.state = AdoptState::kRunning;
    return result;
  }
  if (pidfd >= 0) close(pidfd);
  KillCgroup(run_id);
  std::optional<int> wait_code;
  if (*live == Liveness::kZombie) wait_code = ReapIfChild(result.handle.pid);
  result.state = *live == Liveness::kOther ? AdoptState::kNotOurs : AdoptState::kExited;
  result.exit = ExitFromRunDir(run_id, result.handle, wait_code, false);
  return result;
}

}  // namespace airtime
