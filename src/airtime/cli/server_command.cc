// `airtime server` and `airtime _shim` (see server_command.h).
#include "airtime/cli/server_command.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "airtime/api/http_api.h"
#include "airtime/api/tokens.h"
#include "airtime/base/strings.h"
#include "airtime/exec/shim.h"
#include "airtime/server/daemon.h"
#include "airtime/server/replica_ports.h"
#include "airtime/server/tenant_gate.h"

namespace airtime {
namespace {

struct ServerArgs {
  std::string data_dir;
  std::string listen = "127.0.0.1:8470";
  bool listen_remote = false;
  std::string fake_gpus;
  std::string backend = "local";
  std::string slurm_url, slurm_user, slurm_conf, slurm_partition;
  int64_t slurm_poll_ms = 200;
  int slurm_submitters = 4;
  std::string policy = "airtime";
  std::string tokens_file;  // default DATA/tokens
  size_t max_body_bytes = 1 << 20;
  // Slow and idle connections (connection_guard.h), seconds.
  double header_timeout_s = 10, body_timeout_s = 60, keepalive_timeout_s = 5, write_timeout_s = 10;
  int max_per_address = 64;
  double tenant_rate = TenantRate::Options{}.per_second;
  double tenant_burst = TenantRate::Options{}.burst;
  int max_threads = 1024;
  std::string isolation = "auto";
  bool allow_unisolated_tenants = false;
  std::string cgroup_root = kDefaultCgroupRoot;
  std::string gpu_devices = "/dev";
  bool accept_store_loss = false;
  int64_t min_free_mib = 100;
  int64_t max_log_mib = 1024;
  int64_t max_checkpoint_mib = -1;  // half of DATA's file system
  std::string replica_ports = "20000-20999";
  int64_t ended_kept = 1000;
  int64_t max_active_per_tenant = 50000;
  double restart_backoff_s = 1, restart_backoff_max_s = 300;
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

// Raises the soft limit of open files to the hard one, as servers commonly do: every
// connection in the API's waiting room is a descriptor, and the usual soft limit (1,024)
// would stop accept() long before the hard one (often 524,288 or more). Workloads inherit it.
void RaiseOpenFileLimit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur >= r.rlim_max) return;
  r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
}

int RunServer(const ServerArgs& args) {
  RaiseOpenFileLimit();
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
  options.backend = args.backend == "slurm" ? Backend::kSlurm : Backend::kLocal;
  options.slurm.url = args.slurm_url;
  options.slurm.user = args.slurm_user;
  options.slurm.conf = args.slurm_conf;
  options.slurm.partition = args.slurm_partition;
  options.slurm.poll_interval = args.slurm_poll_ms;
  options.slurm.submitters = args.slurm_submitters;
  options.policy = args.policy;
  options.isolation = args.isolation == "off"        ? Isolation::kOff
                      : args.isolation == "required" ? Isolation::kRequired
                                                     : Isolation::kAuto;
  options.cgroup_root = args.cgroup_root;
  options.gpu_devices = args.gpu_devices;
  options.accept_store_loss = args.accept_store_loss;
  options.min_free_mib = args.min_free_mib;
  options.max_log_mib = args.max_log_mib;
  options.max_checkpoint_mib = args.max_checkpoint_mib;
  auto ports = ParsePortRange(args.replica_ports);
  if (!ports.ok()) return fail(ports.status());
  options.replica_ports = *ports;
  options.ended_kept = static_cast<size_t>(args.ended_kept);
  options.max_active_per_tenant = args.max_active_per_tenant;
  options.restart_backoff = static_cast<DurationMs>(args.restart_backoff_s * 1000);
  options.restart_backoff_max = static_cast<DurationMs>(args.restart_backoff_max_s * 1000);
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
  const auto ms = [](double s) { return static_cast<int64_t>(s * 1000); };
  api_options.header_timeout_ms = ms(args.header_timeout_s);
  api_options.body_timeout_ms = ms(args.body_timeout_s);
  api_options.keepalive_timeout_ms = ms(args.keepalive_timeout_s);
  api_options.write_timeout_ms = ms(args.write_timeout_s);
  api_options.max_connections_per_address = args.max_per_address;
  api_options.tenant_rate = {args.tenant_rate, args.tenant_burst};
  api_options.max_threads = args.max_threads;
  // Without isolation a tenant's workload runs as the daemon's user: tenant tokens are
  // refused unless the operator accepted that.
  const std::string missing = (*daemon)->isolating()    ? ""
                              : args.isolation == "off" ? std::string("--isolation off")
                                                        : (*daemon)->isolation_missing();
  TenantGate gate(**daemon, missing);
  ControlPlane& plane = (*daemon)->isolating() || args.allow_unisolated_tenants
                            ? static_cast<ControlPlane&>(**daemon)
                            : gate;
  HttpApi api(plane, *tokens, api_options);
  if (Status st = api.Listen(listen->first, listen->second); !st.ok()) return fail(st);
  (*daemon)->Start();
  if (Status st = api.Start(); !st.ok()) return fail(st);
  const std::string address = listen->first + ":" + std::to_string(api.port());
  std::string isolation_line;
  if ((*daemon)->isolating()) {
    isolation_line = "tenant isolation on: workloads run as their tenant's user (" + args.data_dir +
                     "/" + kTenantUsersFileName + ") in cgroups under " +
                     (*daemon)->isolation_cgroups();
  } else {
    isolation_line = "tenant isolation OFF (" + missing +
                     "): workloads run as the daemon's user; " +
                     (args.allow_unisolated_tenants
                          ? "tenant tokens are accepted anyway (--allow-unisolated-tenants): "
                            "any tenant can act as the daemon's user"
                          : "tenant tokens are refused (admin tokens work; "
                            "--allow-unisolated-tenants accepts them)");
  }
  std::cout << "airtime server: " << (*daemon)->startup_note() << "\n"
            << "airtime server: " << isolation_line << "\n"
            << "airtime server: listening on http://" << address << " (tokens: " << tokens_path
            << ")\n"
            << std::flush;
  {
    // Written whole, then renamed into place: whoever waits for the file (scripts, tests)
    // never reads it half written. After the lines above are out: who sees the file may read
    // them (an e2e test read the log before "N adopted" was in it, under ASan in CI).
    const std::string path = args.data_dir + "/" + kAddressFileName;
    {
      std::ofstream out(path + ".tmp");
      out << address << "\n";
    }
    std::error_code ec;
    std::filesystem::rename(path + ".tmp", path, ec);
    if (ec) std::cerr << "airtime server: cannot write " << path << ": " << ec.message() << "\n";
  }
  int sig = 0;
  sigwait(&stop, &sig);
  std::cout << "airtime server: stopping on signal " << sig
            << "; workload processes keep running and the next start adopts them\n";
  api.Stop();
  std::error_code ec;
  std::filesystem::remove(args.data_dir + "/" + kAddressFileName, ec);  // while the lock is ours
  (*daemon)->Stop();
  return 0;
}

}  // namespace

std::optional<int> MaybeRunShim(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "_shim") return std::nullopt;
  auto parsed = ParseShimArgs(std::vector<std::string>(argv + 2, argv + argc));
  if (!parsed.ok()) {
    std::cerr << "airtime _shim: " << parsed.status().message() << "\n";
    return kShimSetupFailed;
  }
  return RunShim(*parsed);
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
  cmd->add_option("--backend", args->backend,
                  "Where workloads run: local (processes on this machine) or slurm (Slurm jobs "
                  "through slurmrestd; the nodes and GPUs are read from Slurm; docs/slurm.md)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  cmd->add_option("--slurm-url", args->slurm_url,
                  "slurmrestd's URL (default $SLURMRESTD_URL); the token is read from "
                  "$SLURM_REST_TOKEN only, never a flag (ps would show it)");
  cmd->add_option("--slurm-user", args->slurm_user,
                  "The user the token authenticates (default $SLURM_REST_USER, else yours)");
  cmd->add_option("--slurm-conf", args->slurm_conf,
                  "slurm.conf for scontrol (default $SLURM_CONF)");
  cmd->add_option("--slurm-partition", args->slurm_partition,
                  "Partition of airtime's jobs (default: the cluster's default partition)");
  cmd->add_option("--slurm-poll-ms", args->slurm_poll_ms,
                  "How often Slurm's job list is read (ends, requeues, GPUs, foreign jobs)")
      ->check(CLI::Range(int64_t{10}, int64_t{60000}))
      ->capture_default_str();
  cmd->add_option("--slurm-submitters", args->slurm_submitters,
                  "How many of a cycle's job submissions go to slurmrestd at once, each from a "
                  "thread with a client of its own (1: one after another)")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  cmd->add_option("--policy", args->policy, "Scheduling policy (see airtime sim)")
      ->capture_default_str();
  cmd->add_option("--tokens", args->tokens_file,
                  "Token file (NAME TOKEN per line; default DATA/tokens, created with an admin "
                  "token)");
  cmd->add_option("--max-body", args->max_body_bytes, "Largest request body in bytes")
      ->capture_default_str();
  const auto seconds = CLI::Range(0.01, 86400.0);
  cmd->add_option("--http-header-timeout", args->header_timeout_s,
                  "Seconds a client has for its request line and headers, in total")
      ->check(seconds)
      ->capture_default_str();
  cmd->add_option("--http-body-timeout", args->body_timeout_s,
                  "Seconds a client has for a request body, in total, after its headers")
      ->check(seconds)
      ->capture_default_str();
  cmd->add_option("--http-keepalive-timeout", args->keepalive_timeout_s,
                  "Seconds an idle connection is kept between two requests")
      ->check(seconds)
      ->capture_default_str();
  cmd->add_option("--http-write-timeout", args->write_timeout_s,
                  "Seconds to write one answer to a client, in total")
      ->check(seconds)
      ->capture_default_str();
  cmd->add_option("--http-max-per-address", args->max_per_address,
                  "Connections at once from one client address (more are answered 429; 0: no "
                  "cap)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--tenant-rate", args->tenant_rate,
                  "A tenant's API calls a second, on average (more are answered 429 with "
                  "Retry-After; the admin is not limited; 0: no limit)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_option("--tenant-burst", args->tenant_burst,
                  "A tenant's API calls at once, beyond the average (--tenant-rate)")
      ->check(CLI::Range(1.0, 1e7))
      ->capture_default_str();
  cmd->add_option("--http-max-threads", args->max_threads,
                  "Most requests served at once (a worker thread each; connections waiting "
                  "for their headers or idle hold none)")
      ->check(CLI::Range(16, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--isolation", args->isolation,
                  "Run workloads as their tenant's user in per-run cgroups: auto (when the host "
                  "can), required (or refuse to start), off (as the daemon's user)")
      ->check(CLI::IsMember({"auto", "required", "off"}))
      ->capture_default_str();
  cmd->add_flag("--allow-unisolated-tenants", args->allow_unisolated_tenants,
                "Accept tenant tokens without isolation (a tenant can then act as the daemon)");
  cmd->add_option("--cgroup-root", args->cgroup_root,
                  "Where cgroups are mounted: the v1 devices and freezer controllers "
                  "(DIR/devices, DIR/freezer), else a cgroup2 hierarchy (DIR or DIR/unified)")
      ->capture_default_str();
  cmd->add_option("--gpu-devices", args->gpu_devices,
                  "Directory of the GPUs' device nodes (nvidiaN, nvidiactl, ...)")
      ->capture_default_str();
  cmd->add_flag("--accept-store-loss", args->accept_store_loss,
                "Start although the store lost commits or was replaced (the loss is recorded "
                "in DATA/store-loss.log)");
  cmd->add_option("--min-free-mib", args->min_free_mib,
                  "Pause starts while DATA's file system has less free space (MiB; 0: never)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--max-log-mib", args->max_log_mib,
                  "Cut a run's stdout.log or stderr.log once over this, keeping its tail in "
                  "NAME.1 (MiB; 0: never)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--max-checkpoint-mib", args->max_checkpoint_mib,
                  "End a workload whose checkpoint directory holds more than this, and remove "
                  "the directory (MiB; 0: no cap on its size; default: half of DATA's file "
                  "system; 100,000 entries and 64 levels at most in any case)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--replica-ports", args->replica_ports,
                  "FIRST-LAST: the ports given to service replicas on other hosts (Slurm "
                  "nodes), kept free of other services there; on this machine the kernel "
                  "picks free ones")
      ->capture_default_str();
  cmd->add_option("--max-active-per-tenant", args->max_active_per_tenant,
                  "The most workloads one tenant may have queued or running at once; a "
                  "submission that would pass it is refused whole (0: no limit)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--ended-kept", args->ended_kept,
                  "Ended workloads kept in memory, the last to end; older ones are read from "
                  "the store when asked for")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--restart-backoff", args->restart_backoff_s,
                  "Seconds before a failed run's workload starts again, doubled with each "
                  "failure in a row (a command that fails at once is not restarted in a tight "
                  "loop; 0: at once)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--restart-backoff-max", args->restart_backoff_max_s,
                  "Longest backoff between a failed run and the next, in seconds")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->callback([args, exit_code] { *exit_code = RunServer(*args); });
}

}  // namespace airtime
