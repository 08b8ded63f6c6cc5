#include "airtime/slurm/scontrol.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "airtime/base/strings.h"

extern char** environ;

namespace airtime::slurm {
namespace {

constexpr size_t kMaxOutput = 1 << 20;         // scontrol: kept for the error message
constexpr size_t kMaxSqueueOutput = 64 << 20;  // squeue: a line per job

}  // namespace

StatusOr<std::string> Scontrol::Run(const std::vector<std::string>& args) const {
  return RunCommand(options_.binary, args, kMaxOutput, options_.timeout);
}

StatusOr<std::string> Scontrol::Squeue(const std::vector<std::string>& args) const {
  auto out = RunCommand(options_.squeue, args, kMaxSqueueOutput + 1, options_.squeue_timeout);
  if (out.ok() && out->size() > kMaxSqueueOutput)
    return Status(StatusCode::kResourceExhausted,
                  options_.squeue + " printed more than " + std::to_string(kMaxSqueueOutput >> 20) +
                      " MiB: the job list is not read (a list cut short would lose jobs)");
  return out;
}

StatusOr<std::string> Scontrol::RunCommand(const std::string& binary,
                                           const std::vector<std::string>& args, size_t max_output,
                                           std::chrono::milliseconds timeout) const {
  std::vector<std::string> argv_s = {binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  const std::string shown = Join(argv_s, " ");
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  // The environment: ours, less SLURM_JWT and SLURM_CONF, plus the options'.
  std::vector<std::string> env_s;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (kv.rfind("SLURM_JWT=", 0) == 0) continue;
    if (!options_.slurm_conf.empty() && kv.rfind("SLURM_CONF=", 0) == 0) continue;
    env_s.emplace_back(kv);
  }
  if (!options_.jwt.empty()) env_s.push_back("SLURM_JWT=" + options_.jwt);
  if (!options_.slurm_conf.empty()) env_s.push_back("SLURM_CONF=" + options_.slurm_conf);
  std::vector<char*> envp;
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Internal(shown + ": pipe: " + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return Status(StatusCode::kUnavailable, shown + ": cannot start: " + std::strerror(rc));
  }
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      timed_out = n == 0;
      break;
    }
    char buf[4096];
    const ssize_t got = read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (out.size() < max_output)
      out.append(buf, std::min(static_cast<size_t>(got), max_output - out.size()));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  const std::string said(Trim(out.substr(0, 500)));
  if (timed_out)
    return Status(StatusCode::kUnavailable,
                  shown + ": no answer within " + std::to_string(timeout.count()) + " ms");
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
    return FailedPrecondition(shown + ": failed" + (said.empty() ? "" : ": " + said));
  return out;
}

}  // namespace airtime::slurm
