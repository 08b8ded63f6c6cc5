// A Slurm lab of a test's own (scripts/slurm-lab.sh: its directory and ports from the test's
// pid), for the Slurm end-to-end tests: started in SetUp, stopped (--purge) whatever
// happened, with what Slurm saw dumped on failure.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "e2e_util.h"

namespace airtime::e2e {

inline const std::string kLabScript = std::string(AIRTIME_SOURCE_DIR) + "/scripts/slurm-lab.sh";

// Why the lab cannot start here ("" when it can).
inline std::string CannotStartLab() {
  if (geteuid() != 0) return "needs root (slurmd runs jobs as their users)";
  if (std::system("command -v scontrol >/dev/null 2>&1 && command -v slurmrestd >/dev/null 2>&1") !=
          0 &&
      std::system("command -v apt-get >/dev/null 2>&1") != 0)
    return "Slurm is not installed and there is no apt-get to install it";
  return "";
}

// Runs a shell command; its exit status (-1 when it could not run).
inline int Shell(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// A shell command's standard output.
inline std::string ShellOutput(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// KEY=VALUE pairs of the lab's env.sh ("export KEY=VALUE" lines).
inline std::map<std::string, std::string> ReadEnvFile(const std::string& path) {
  std::map<std::string, std::string> env;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("export ", 0) != 0) continue;
    line = line.substr(7);
    const size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

// Milliseconds since `t0`.
inline int64_t MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               t0)
      .count();
}

// Polls `done` every 100 ms for up to `limit`; whether it came true.
inline bool WaitFor(const std::function<bool()>& done,
                    std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

// Stops the labs of earlier runs of these tests whose process is gone (killed by ctest's
// timeout before its TearDown could stop the lab).
inline void StopLabsOfDeadTests() {
  const std::string prefix = "airtime_slurm_e2e_";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/tmp", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoll(pid) == getpid() || std::filesystem::exists("/proc/" + pid)) continue;
    std::cerr << "stopping the lab of a test that is gone: " << entry.path() << "\n";
    Shell("AIRTIME_SLURM_DIR=" + entry.path().string() + " " + kLabScript + " stop --purge");
  }
}

// The TCP ports some process listens on (`ss -ltnH`).
inline std::set<int> ListeningPorts() {
  std::set<int> ports;
  std::istringstream in(ShellOutput("ss -ltnH 2>/dev/null"));
  for (std::string line; std::getline(in, line);) {
    // State Recv-Q Send-Q Local-Address:Port Peer-Address:Port ...
    std::istringstream fields(line);
    std::string state, recv, send, local;
    if (!(fields >> state >> recv >> send >> local)) continue;
    const size_t colon = local.rfind(':');
    if (colon == std::string::npos) continue;
    const std::string port = local.substr(colon + 1);
    if (!port.empty() && port.find_first_not_of("0123456789") == std::string::npos)
      ports.insert(std::stoi(port));
  }
  return ports;
}

// slurmctld's port for a lab of `nodes` nodes (scripts/slurm-lab.sh takes slurmrestd's as
// PORT+3 and node nI's slurmd's as PORT+1000+I): the first base from this test's pid on
// whose ports no process listens. Ports of their own, away from a developer's lab on the
// default 6817 and below Linux's ephemeral ports (32768 up), which outgoing connections
// take: 10000-30994. Two tests whose pids are equal modulo 2,000 (pids wrap at 32,768), or a
// lab some other run left behind, would otherwise meet on one port and the second fail
// ("port(s) ... already in use").
inline int ChooseLabPort(int nodes) {
  const std::set<int> listening = ListeningPorts();
  for (int k = 0; k < 2000; ++k) {
    const int port = 10000 + ((getpid() + k) % 2000) * 10;
    bool free = !listening.count(port) && !listening.count(port + 3);
    for (int i = 1; free && i <= nodes; ++i) free = !listening.count(port + 1000 + i);
    if (free) return port;
  }
  return 10000 + (getpid() % 2000) * 10;  // all taken: the script will say which
}

// The lab of one test: 4 emulated nodes by default (n1-n2 with fake h100, n3-n4 a100).
class SlurmLab {
 public:
  // Starts it; false (with a gtest failure) when it did not.
  bool Start(int nodes = 4, int gpus = 8) {
    dir_ = "/tmp/airtime_slurm_e2e_" + std::to_string(getpid());
    StopLabsOfDeadTests();
    port_ = ChooseLabPort(nodes);
    env_prefix_ = "AIRTIME_SLURM_DIR=" + dir_ + " AIRTIME_SLURM_PORT=" + std::to_string(port_) +
                  " AIRTIME_SLURM_NODES=" + std::to_string(nodes) +
                  " AIRTIME_SLURM_GPUS=" + std::to_string(gpus) + " ";
    started_ = true;
    const auto t0 = std::chrono::steady_clock::now();
    if (Shell(env_prefix_ + kLabScript + " start") != 0) {
      ADD_FAILURE() << "scripts/slurm-lab.sh start failed";
      return false;
    }
    std::cerr << "lab started in " << MsSince(t0) << " ms\n";
    env_ = ReadEnvFile(dir_ + "/env.sh");
    if (env_["SLURMRESTD_URL"].empty()) {
      ADD_FAILURE() << dir_ << "/env.sh has no SLURMRESTD_URL";
      return false;
    }
    return true;
  }

  // What Slurm saw, for a failure's report.
  void DumpLogs() const {
    std::cerr << "---- slurmctld.log (end)\n";
    Shell("tail -n 40 " + dir_ + "/log/slurmctld.log >&2");
    std::cerr << "---- jobcomp.txt\n";
    Shell("cat " + dir_ + "/log/jobcomp.txt >&2");
    std::cerr << "---- job output\n";
    Shell("tail -n 5 " + dir_ + "/out/*.out >&2");
    std::cerr << "---- slurmd logs (end)\n";
    Shell("tail -n 8 " + dir_ + "/log/slurmd-n*.log >&2");
  }

  // Stops it and checks that nothing of it is left running.
  void Stop(bool failed) {
    if (!started_) return;
    if (failed) DumpLogs();
    if (std::getenv("AIRTIME_SLURM_E2E_KEEP") != nullptr) {
      std::cerr << "AIRTIME_SLURM_E2E_KEEP: the lab stays up in " << dir_ << "\n";
      return;
    }
    EXPECT_EQ(Shell(env_prefix_ + kLabScript + " stop --purge"), 0);
    // No daemon of this lab is left (its directory was in each one's arguments or config).
    EXPECT_NE(Shell("pgrep -f 'slurmd -N n[0-9]' | xargs -r -I{} grep -l " + dir_ +
                    " /proc/{}/environ 2>/dev/null | grep -q ."),
              0);
    EXPECT_NE(Shell("ss -ltn | grep -q ':" + std::to_string(port_) + " '"), 0)
        << "slurmctld still listens on " << port_;
    started_ = false;
  }

  // `scontrol ARGS` (or `squeue`, `sbatch`...: `tool`) against this lab; its output.
  std::string Run(const std::string& tool, const std::string& args) const {
    return ShellOutput("SLURM_CONF=" + env_.at("SLURM_CONF") + " " + tool + " " + args + " 2>&1");
  }

  const std::string& dir() const { return dir_; }
  int port() const { return port_; }
  const std::map<std::string, std::string>& env() const { return env_; }
  std::string env(const std::string& key) const {
    auto it = env_.find(key);
    return it == env_.end() ? "" : it->second;
  }
  // "AIRTIME_SLURM_DIR=... AIRTIME_SLURM_PORT=... " for scripts/slurm-lab.sh.
  const std::string& env_prefix() const { return env_prefix_; }

 private:
  std::string dir_;
  int port_ = 0;
  std::string env_prefix_;
  bool started_ = false;
  std::map<std::string, std::string> env_;
};

}  // namespace airtime::e2e
