// `airtime server` and `airtime _shim` (see server_command.h).
#include "airtime/cli/server_command.h"

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "airtime/api/http_api.h"
#include "airtime/api/tokens.h"
#include "airtime/base/strings.h"
#include "airtime/exec/shim.h"
#include "airtime/server/daemon.h"

namespace airtime {
namespace {

struct ServerArgs {
  std::string data_dir;
  std::string listen = "127.0.0.1:8470";
  bool listen_remote = false;
  std::string fake_gpus;
  std::string policy = "airtime";
  std::string tokens_file;  // default DATA/tokens
  size_t max_body_bytes = 1 << 20;
  bool accept_store_loss = false;
  int64_t min_free_mib = 100;
};

StatusOr<std::pair<std::string, int>> SplitListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return InvalidArgument("--listen: expected HOST:PORT (e.g. 127.0.0.1:8470), found '" + listen +
                           "'");
  const std::string port = listen.substr(colon + 1);
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != 0 || p < 0 || p > 65535)
    return InvalidArgument("--listen: the port must be 0..65535 (0: any free port), found '" +
                           port + "'");
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return std::make_pair(host, static_cast<int>(p));
}

// Blocks the signals that stop the server in every thread; the main thread waits for them.
sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

int RunServer(const ServerArgs& args) {
  sigset_t stop = StopSignals();
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before any thread starts
  signal(SIGPIPE, SIG_IGN);
  auto fail = [](const Status& st) {
    std::cerr << "airtime server: " << st.message() << "\n";
    return 1;
  };
  auto listen = SplitListen(args.listen);
  if (!listen.ok()) return fail(listen.status());
  if (!args.listen_remote && !IsLoopbackHost(listen->first))
    return fail(InvalidArgument("--listen " + args.listen +
                                ": listening beyond this machine needs --listen-remote (and "
                                "tokens you trust)"));
  DaemonOptions options;
  options.data_dir = args.data_dir;
  options.fake_gpus = args.fake_gpus;
  options.policy = args.policy;
  options.accept_store_loss = args.accept_store_loss;
  options.min_free_mib = args.min_free_mib;
  auto daemon = Daemon::Open(options);
  if (!daemon.ok()) return fail(daemon.status());
  const std::string tokens_path =
      args.tokens_file.empty() ? args.data_dir + "/" + kTokensFileName : args.tokens_file;
  auto tokens =
      args.tokens_file.empty() ? Tokens::GenerateDefault(tokens_path) : Tokens::Load(tokens_path);
  if (!tokens.ok()) return fail(tokens.status());
  HttpApiOptions api_options;
  api_options.allow_remote = args.listen_remote;
  api_options.max_body_bytes = args.max_body_bytes;
  HttpApi api(**daemon, *tokens, api_options);
  if (Status st = api.Listen(listen->first, listen->second); !st.ok()) return fail(st);
  (*daemon)->Start();
  if (Status st = api.Start(); !st.ok()) return fail(st);
  const std::string address = listen->first + ":" + std::to_string(api.port());
  {
    std::ofstream out(args.data_dir + "/address");
    out << address << "\n";
  }
  std::cout << "airtime server: " << (*daemon)->startup_note() << "\n"
            << "airtime server: listening on http://" << address << " (tokens: " << tokens_path
            << ")\n"
            << std::flush;
  int sig = 0;
  sigwait(&stop, &sig);
  std::cout << "airtime server: stopping on signal " << sig
            << "; workload processes keep running and the next start adopts them\n";
  api.Stop();
  (*daemon)->Stop();
  return 0;
}

}  // namespace

std::optional<int> MaybeRunShim(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "_shim") return std::nullopt;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 5 || args[1] != "--run-dir" || args[3] != "--") {
    std::cerr << "usage: airtime _shim --run-dir DIR -- PROGRAM [ARGS...]\n";
    return kShimSetupFailed;
  }
  return RunShim(args[2], std::vector<std::string>(args.begin() + 4, args.end()));
}

void AddServerCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ServerArgs>();
  CLI::App* cmd = app.add_subcommand(
      "server", "Run the control plane on this machine: engine, store, executor, HTTP API");
  cmd->add_option("--data", args->data_dir, "Data directory (store, run logs, tokens)")->required();
  cmd->add_option("--listen", args->listen, "HOST:PORT to serve the API on (port 0: any)")
      ->capture_default_str();
  cmd->add_flag("--listen-remote", args->listen_remote, "Allow a --listen address beyond loopback");
  cmd->add_option("--fake-gpus", args->fake_gpus,
                  "Simulated GPUs instead of NVML, e.g. 8xH100 or 2xH200,4xL4");
  cmd->add_option("--policy", args->policy, "Scheduling policy (see airtime sim)")
      ->capture_default_str();
  cmd->add_option("--tokens", args->tokens_file,
                  "Token file (NAME TOKEN per line; default DATA/tokens, created with an admin "
                  "token)");
  cmd->add_option("--max-body", args->max_body_bytes, "Largest request body in bytes")
      ->capture_default_str();
  cmd->add_flag("--accept-store-loss", args->accept_store_loss,
                "Start although the store lost commits or was replaced (the loss is recorded "
                "in DATA/store-loss.log)");
  cmd->add_option("--min-free-mib", args->min_free_mib,
                  "Pause starts while DATA's file system has less free space (MiB; 0: never)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->callback([args, exit_code] { *exit_code = RunServer(*args); });
}

}  // namespace airtime
