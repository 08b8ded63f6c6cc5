// Executor::Launch: spawning the shim in its own session. See executor.h and shim.h.
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <map>

#include "airtime/exec/executor.h"
#include "airtime/exec/process_identity.h"
#include "airtime/exec/run_files.h"
#include "airtime/exec/shim.h"

extern char** environ;

namespace airtime {
namespace {

Status ValidateRequest(const LaunchRequest& r) {
  if (r.run_dir.empty()) return InvalidArgument("Launch: empty run_dir");
  if (r.argv.empty() || r.argv[0].empty()) return InvalidArgument("Launch: empty argv");
  if (r.shim_path.empty()) return InvalidArgument("Launch: empty shim_path");
  for (const auto& [name, value] : r.env) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return InvalidArgument("Launch: bad environment variable name '" + name + "'");
    }
  }
  return OkStatus();
}

StatusOr<std::string> Absolute(const std::string& path) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  if (ec) return Internal("absolute path of " + path + ": " + ec.message());
  return abs.lexically_normal().string();
}

// The daemon's environment with `overrides` added or replacing variables of the same name.
std::vector<std::string> MergedEnv(const EnvVars& overrides) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [name, value] : overrides) vars[name] = value;
  std::vector<std::string> out;
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Owns the posix_spawn attribute objects.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions_);
    posix_spawnattr_init(&attr_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  // stdin /dev/null, stdout+stderr to `log`, optional chdir, no other inherited fds; a new
  // session (so the shim leads its own process group), no blocked signals, default
  // dispositions for the signals the shim and workloads care about.
  int Configure(const std::string& log, const std::string& workdir) {
    int rc = posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) {
      rc = posix_spawn_file_actions_addopen(&actions_, 1, log.c_str(),
                                            O_WRONLY | O_CREAT | O_APPEND, 0644);
    }
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions_, 1, 2);
    if (rc == 0 && !workdir.empty()) {
      rc = posix_spawn_file_actions_addchdir_np(&actions_, workdir.c_str());
    }
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions_, 3);
    if (rc == 0) rc = ConfigureAttr();
    return rc;
  }

  const posix_spawn_file_actions_t* actions() const { return &actions_; }
  const posix_spawnattr_t* attr() const { return &attr_; }

 private:
  int ConfigureAttr() {
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int sig :
         {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM}) {
      sigaddset(&defaults, sig);
    }
    int rc = posix_spawnattr_setflags(
        &attr_, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attr_, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr_, &defaults);
    return rc;
  }

  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

StatusOr<pid_t> SpawnShim(const std::string& shim, const std::vector<std::string>& argv,
                          const std::vector<std::string>& env, const std::string& log,
                          const std::string& workdir) {
  SpawnSetup setup;
  int rc = setup.Configure(log, workdir);
  if (rc != 0) return Internal(ErrnoMessage("posix_spawn setup for " + shim, rc));
  std::vector<char*> c_argv = CStrings(argv);
  std::vector<char*> c_env = CStrings(env);
  pid_t pid = 0;
  rc = posix_spawn(&pid, shim.c_str(), setup.actions(), setup.attr(), c_argv.data(), c_env.data());
  if (rc != 0) return Internal(ErrnoMessage("posix_spawn " + shim, rc));
  return pid;
}

// The workdir must be a directory (posix_spawn's chdir would otherwise fail with a message
// that names the shim, not the workdir).
Status CheckWorkdir(const std::string& workdir) {
  if (workdir.empty()) return OkStatus();
  std::error_code ec;
  if (!std::filesystem::is_directory(workdir, ec))
    return FailedPrecondition("workdir '" + workdir + "' does not exist (or is not a directory)");
  return OkStatus();
}

}  // namespace

StatusOr<RunHandle> Executor::Launch(const LaunchRequest& request) {
  AIRTIME_RETURN_IF_ERROR(ValidateRequest(request));
  AIRTIME_RETURN_IF_ERROR(CheckWorkdir(request.workdir));
  if (request.user) {
    if (request.user->uid == 0 || request.user->uid == geteuid())
      return FailedPrecondition("refusing to run a workload as uid " +
                                std::to_string(request.user->uid) +
                                " (root or the daemon's own user)");
    // Without a workdir the process starts in the daemon's working directory.
    std::error_code ec;
    const std::string dir =
        request.workdir.empty() ? std::filesystem::current_path(ec).string() : request.workdir;
    Status st = CheckSearchableBy(dir, *request.user);
    if (!st.ok())
      return FailedPrecondition(
          "workdir '" + dir + "'" +
          (request.workdir.empty() ? " (the daemon's working directory)" : "") +
          " is not accessible: " + st.message());
  }
  StatusOr<std::string> dir = Absolute(request.run_dir);
  if (!dir.ok()) return dir.status();
  StatusOr<std::string> shim = Absolute(request.shim_path);
  if (!shim.ok()) return shim.status();
  std::error_code ec;
  std::filesystem::create_directories(*dir, ec);
  if (ec) return Internal("mkdir -p " + *dir + ": " + ec.message());

  ShimArgs shim_args{*dir, request.argv, request.user, {}};
  const bool cgroups = cgroups_ && request.run_id > 0;
  if (cgroups) {
    std::vector<std::string> rules = BasicDeviceRules();
    rules.insert(rules.end(), request.device_rules.begin(), request.device_rules.end());
    if (Status st = cgroups_->Create(request.run_id, rules); !st.ok()) {
      (void)cgroups_->Kill(request.run_id);
      return Status(st.code(), "run cgroup: " + st.message());
    }
    shim_args.cgroups = cgroups_->Paths(request.run_id);
  }
  std::vector<std::string> argv{*shim, "_shim"};
  for (std::string& a : ShimArgv(shim_args)) argv.push_back(std::move(a));
  StatusOr<pid_t> pid =
      SpawnShim(*shim, argv, MergedEnv(request.env), RunPath(*dir, kShimLog), request.workdir);
  if (!pid.ok()) {
    if (cgroups) (void)cgroups_->Kill(request.run_id);
    return pid.status();
  }
  // Our unreaped child: its /proc entry exists even if it has already exited.
  StatusOr<ProcStat> stat = ReadProcStat(*pid);
  if (!stat.ok()) return stat.status();
  StatusOr<std::string> boot = CurrentBootId();
  if (!boot.ok()) return boot.status();
  return RunHandle{*pid, stat->start_ticks, *boot, *dir};
}

}  // namespace airtime
