// The shim: see shim.h.
#include "airtime/exec/shim.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>

#include "airtime/exec/process_identity.h"
#include "airtime/exec/run_cgroup.h"
#include "airtime/exec/run_files.h"

namespace airtime {
namespace {

constexpr int kForwardedSignals[] = {SIGTERM, SIGINT, SIGHUP};

void Log(const std::string& run_dir, const std::string& message) {
  std::fprintf(stderr, "airtime shim [%s]: %s\n", run_dir.c_str(), message.c_str());
}

// SIG_DFL for the signals the shim handles: an inherited SIG_IGN would survive exec and
// would discard them even while blocked.
void DefaultDispositions() {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : kForwardedSignals) sigaction(sig, &dfl, nullptr);
  sigaction(SIGCHLD, &dfl, nullptr);
}

sigset_t ShimSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kForwardedSignals) sigaddset(&set, sig);
  sigaddset(&set, SIGCHLD);
  return set;
}

// The file descriptors the workload gets as 0, 1 and 2.
struct ChildFds {
  int in = -1, out = -1, err = -1;
  void Close() {
    for (int fd : {in, out, err}) {
      if (fd >= 0) close(fd);
    }
  }
};

// Hands `fd` (a run file the shim opened as root) to the run's user, mode 0600.
bool GiveTo(const std::string& run_dir, int fd, const std::string& path, const RunUser& user) {
  if (fchown(fd, user.uid, user.gid) == 0 && fchmod(fd, 0600) == 0) return true;
  Log(run_dir, ErrnoMessage("chown " + path, errno));
  return false;
}

// `*no_space`: an open failed because the file system or quota is full.
std::optional<ChildFds> OpenChildFds(const std::string& run_dir, const std::optional<RunUser>& user,
                                     bool* no_space) {
  ChildFds fds;
  auto failed = [&](const std::string& what) {
    *no_space = *no_space || NoSpaceErrno(errno);
    Log(run_dir, ErrnoMessage(what, errno));
  };
  fds.in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fds.in < 0) failed("open /dev/null");
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  std::string out = RunPath(run_dir, kStdoutLog);
  std::string err = RunPath(run_dir, kStderrLog);
  fds.out = open(out.c_str(), flags, 0644);
  if (fds.out < 0) failed("open " + out);
  fds.err = open(err.c_str(), flags, 0644);
  if (fds.err < 0) failed("open " + err);
  bool given = true;
  if (user && fds.out >= 0 && fds.err >= 0) {
    given = GiveTo(run_dir, fds.out, out, *user) && GiveTo(run_dir, fds.err, err, *user);
    // The telemetry file, for the workload to append to (the directory is not its own).
    std::string tel = RunPath(run_dir, kTelemetryFile);
    int fd = open(tel.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) failed("open " + tel);
    given = given && fd >= 0 && GiveTo(run_dir, fd, tel, *user);
    if (fd >= 0) close(fd);
  }
  if (fds.in < 0 || fds.out < 0 || fds.err < 0 || !given) {
    fds.Close();
    return std::nullopt;
  }
  return fds;
}

Status ClaimRun(const std::string& run_dir) {
  Claim claim;
  claim.kind = Claim::Kind::kStarted;
  claim.pid = getpid();
  StatusOr<ProcStat> self = ReadProcStat(claim.pid);
  if (!self.ok()) return self.status();
  claim.start_ticks = self->start_ticks;
  StatusOr<std::string> boot = CurrentBootId();
  if (boot.ok()) claim.boot_id = *boot;
  return WriteClaim(run_dir, claim);
}

void WriteLine(const std::string& text) { (void)!write(2, text.data(), text.size()); }

// In the forked child: becomes the workload (as `user` when given) or exits 127 (126 when
// it cannot become the user). Only async-signal-safe calls after fork would be required in
// a multithreaded parent; the shim is single-threaded.
[[noreturn]] void ExecWorkload(const ChildFds& fds, char* const* argv,
                               const std::optional<RunUser>& user) {
  if (dup2(fds.in, 0) < 0 || dup2(fds.out, 1) < 0 || dup2(fds.err, 2) < 0) _exit(kShimExecFailed);
  DefaultDispositions();
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  umask(022);  // not the daemon's 077: what a workload writes is as it would be from a shell
  if (user) {
    std::string failed = DropPrivileges(*user);
    if (!failed.empty()) {
      WriteLine("airtime shim: cannot switch to uid " + std::to_string(user->uid) + ": " + failed +
                "\n");
      _exit(kShimSetupFailed);
    }
    if (access(".", X_OK) != 0) {
      WriteLine("airtime shim: the workdir is not accessible to uid " + std::to_string(user->uid) +
                ": " + std::strerror(errno) + "\n");
      _exit(kShimSetupFailed);
    }
  }
  execvp(argv[0], argv);
  int err = errno;
  char line[512];
  int n = std::snprintf(line, sizeof(line), "airtime shim: cannot execute '%s': %s\n", argv[0],
                        std::strerror(err));
  if (n > 0) (void)!write(2, line, static_cast<size_t>(std::min(n, int{sizeof(line) - 1})));
  _exit(kShimExecFailed);
}

ExitRecord RecordOf(int wait_status) {
  if (WIFSIGNALED(wait_status)) return ExitRecord{true, WTERMSIG(wait_status)};
  return ExitRecord{false, WEXITSTATUS(wait_status)};
}

// Forwards stop signals to the process group until `child` ends; returns its wait status.
int SuperviseChild(pid_t child) {
  sigset_t waitset = ShimSignals();
  while (true) {
    siginfo_t info = {};
    int sig = sigwaitinfo(&waitset, &info);
    if (sig < 0) continue;  // EINTR
    if (sig != SIGCHLD) {
      // Our own killpg(0, sig) also reaches us; skip that echo.
      bool echo = info.si_code == SI_USER && info.si_pid == getpid();
      if (!echo) killpg(0, sig);
      continue;
    }
    int status = 0;
    pid_t r = waitpid(child, &status, WNOHANG);
    if (r == child) return status;
  }
}

// A stop signal already pending before the workload starts (nullopt when none).
std::optional<int> PendingStopSignal() {
  sigset_t pending;
  sigpending(&pending);
  for (int sig : kForwardedSignals) {
    if (sigismember(&pending, sig)) return sig;
  }
  return std::nullopt;
}

int Finish(const std::string& run_dir, const ExitRecord& record) {
  Status st = WriteExitFile(run_dir, record);
  if (!st.ok()) Log(run_dir, st.message());
  return record.Code();
}

std::vector<char*> CArgv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

StatusOr<ShimArgs> ParseShimArgs(const std::vector<std::string>& args) {
  ShimArgs out;
  size_t i = 0;
  for (; i < args.size() && args[i] != "--"; i += 2) {
    if (i + 1 >= args.size() || args[i + 1] == "--")
      return InvalidArgument(args[i] + " needs a value; " + kShimUsage);
    const std::string& value = args[i + 1];
    if (args[i] == "--run-dir") {
      out.run_dir = value;
    } else if (args[i] == "--user") {
      StatusOr<RunUser> user = ParseRunUserArg(value);
      if (!user.ok()) return user.status();
      out.user = *user;
    } else if (args[i] == "--cgroup") {
      out.cgroups.push_back(value);
    } else {
      return InvalidArgument("unknown option '" + args[i] + "'; " + kShimUsage);
    }
  }
  if (i < args.size()) out.argv.assign(args.begin() + static_cast<long>(i) + 1, args.end());
  if (out.run_dir.empty() || out.argv.empty() || out.argv[0].empty())
    return InvalidArgument(kShimUsage);
  return out;
}

std::vector<std::string> ShimArgv(const ShimArgs& args) {
  std::vector<std::string> out{"--run-dir", args.run_dir};
  if (args.user) {
    out.push_back("--user");
    out.push_back(FormatRunUserArg(*args.user));
  }
  for (const std::string& dir : args.cgroups) {
    out.push_back("--cgroup");
    out.push_back(dir);
  }
  out.push_back("--");
  out.insert(out.end(), args.argv.begin(), args.argv.end());
  return out;
}

int RunShim(const ShimArgs& args) {
  const std::string& run_dir = args.run_dir;
  const std::vector<std::string>& argv = args.argv;
  if (run_dir.empty() || argv.empty()) {
    Log(run_dir, kShimUsage);
    return kShimSetupFailed;
  }
  // Blocked from the start: a stop signal before the fork is kept pending, not fatal.
  DefaultDispositions();
  sigset_t set = ShimSignals();
  sigprocmask(SIG_BLOCK, &set, nullptr);
  Status claimed = ClaimRun(run_dir);
  if (!claimed.ok()) {
    Log(run_dir, "not starting " + argv[0] + ": " + claimed.message());
    if (claimed.code() == StatusCode::kAlreadyExists) return kShimRefused;
    return claimed.code() == StatusCode::kResourceExhausted ? kShimNoSpace : kShimSetupFailed;
  }
  // Before anything runs: the workload and all it starts stay in the run's cgroups.
  if (Status joined = JoinCgroups(args.cgroups); !joined.ok()) {
    Log(run_dir, "not starting " + argv[0] + ": " + joined.message());
    return Finish(run_dir, ExitRecord{false, kShimSetupFailed});
  }
  bool no_space = false;
  std::optional<ChildFds> fds = OpenChildFds(run_dir, args.user, &no_space);
  if (!fds && no_space) return kShimNoSpace;  // no exit file: nothing ran, nothing failed
  if (!fds) return Finish(run_dir, ExitRecord{false, kShimSetupFailed});
  if (std::optional<int> sig = PendingStopSignal()) {
    fds->Close();
    Log(run_dir, "stopped before " + argv[0] + " started");
    return Finish(run_dir, ExitRecord{true, *sig});
  }
  std::vector<char*> c_argv = CArgv(argv);
  pid_t child = fork();
  if (child < 0) {
    Log(run_dir, ErrnoMessage("fork for " + argv[0], errno));
    fds->Close();
    return Finish(run_dir, ExitRecord{false, kShimSetupFailed});
  }
  if (child == 0) ExecWorkload(*fds, c_argv.data(), args.user);
  fds->Close();
  return Finish(run_dir, RecordOf(SuperviseChild(child)));
}

}  // namespace airtime
