// A running `airtime server` child process for the end-to-end tests: started with its
// arguments, its output appended to DATA.server.log, its address and admin token read once
// it listens; SIGKILLed on destruction unless stopped.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e_util.h"

namespace airtime::e2e {

// An API client of the server at `address` ("HOST:PORT") that authenticates with `token`.
inline httplib::Client ApiClient(const std::string& address, const std::string& token) {
  const size_t colon = address.rfind(':');
  httplib::Client c(address.substr(0, colon), std::stoi(address.substr(colon + 1)));
  c.set_bearer_token_auth(token);
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(30, 0);
  return c;
}

// Starts `args` (args[0]: the program) in a child with `env` added to its environment and
// its output in `log` (appended, or truncated first); returns the child's pid.
inline pid_t SpawnLogged(std::vector<std::string> args,
                         const std::map<std::string, std::string>& env, const std::string& log,
                         bool append) {
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* f = fopen(log.c_str(), append ? "a" : "w");
    if (f) {
      dup2(fileno(f), 1);
      dup2(fileno(f), 2);
    }
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Runs `args` (args[0]: the program) expecting it to exit by itself within `limit` (a
// server that refuses to start): its exit status and its output (in `log`, written anew).
// -1: it was still running at `limit`, or `started` (checked as it runs) said it had started
// after all; it is then killed.
inline std::pair<int, std::string> RunUntilExit(std::vector<std::string> args,
                                                const std::map<std::string, std::string>& env,
                                                const std::string& log,
                                                std::chrono::milliseconds limit,
                                                const std::function<bool()>& started = {}) {
  std::filesystem::remove(log);
  const pid_t pid = SpawnLogged(std::move(args), env, log, /*append=*/false);
  int status = 0;
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (waitpid(pid, &status, WNOHANG) == pid) return {WEXITSTATUS(status), ReadFile(log)};
    if (started && started()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return {-1, ReadFile(log)};
}

class ServerProcess {
 public:
  explicit ServerProcess(std::string data) : data_(std::move(data)) {}
  ~ServerProcess() { Kill(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Runs `args` (args[0]: the airtime binary) with `env` added to the environment, and
  // waits up to a minute for DATA/address; a server that exits first is reported at once.
  // Use under ASSERT_NO_FATAL_FAILURE.
  void Start(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
    std::filesystem::remove(data_ + "/address");
    pid_ = SpawnLogged(std::move(args), env, LogPath(), /*append=*/true);
    bool exited = false;
    for (int i = 0; i < 2400 && !std::filesystem::exists(data_ + "/address"); ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        exited = true;
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    std::string addr = ReadFile(data_ + "/address");
    ASSERT_FALSE(addr.empty()) << "server did not start (" << (exited ? "it exited" : "no address")
                               << "): " << Log();
    addr.erase(addr.find_last_not_of('\n') + 1);
    address_ = addr;
    std::istringstream tokens(ReadFile(data_ + "/tokens"));
    std::string name, token;
    while (tokens >> name >> token)
      if (name == "admin") token_ = token;
  }
  void Kill() { Signal(SIGKILL); }
  void Terminate() { Signal(SIGTERM); }

  httplib::Client Client() const { return ApiClient(address_, token_); }
  const std::string& address() const { return address_; }
  const std::string& token() const { return token_; }
  pid_t pid() const { return pid_; }
  std::string Log() const { return ReadFile(LogPath()); }

 private:
  std::string LogPath() const { return data_ + ".server.log"; }
  void Signal(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  std::string data_;
  std::string address_, token_;
  pid_t pid_ = -1;
};

}  // namespace airtime::e2e
