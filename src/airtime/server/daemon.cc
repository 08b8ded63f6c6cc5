// Daemon: construction, the event loop, and driving the engine (see daemon.h).
#include "airtime/server/daemon.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>

#include "airtime/api/http_api.h"
#include "airtime/base/strings.h"
#include "airtime/config/cluster_yaml.h"
#include "airtime/exec/run_files.h"
#include "airtime/gpu/host_cluster.h"
#include "airtime/policies/registry.h"

namespace airtime {

TimeMs WallNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == 0) return "localhost";
  return buf;
}

// What airtime decided for a run, in words, for the backend to show beside it (a Slurm
// job's comment): "placed by policy airtime on n1 (2 GPUs) after waiting 3s", with the
// replica of a service, "restarted" for a job's later attempt (after a preemption or a
// failure), "resized" for an elastic resize.
std::string StartExplanation(const Cluster& cluster, const Decision& d, bool service, int attempt) {
  std::vector<std::string> nodes;
  for (GpuIndex g : d.placement.gpus) {
    const std::string& node = cluster.node(cluster.gpu(g).node).name;
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
  }
  const size_t n = d.placement.gpus.size();
  // A host-only task holds no GPU: its node is its host's.
  if (nodes.empty() && d.placement.host_node >= 0 &&
      static_cast<size_t>(d.placement.host_node) < cluster.node_count())
    nodes.push_back(cluster.node(d.placement.host_node).name);
  std::string s = service ? "replica " + std::to_string(d.replica + 1) + ", " : "";
  s += d.type == DecisionType::kResize ? "resized"
       : !service && attempt > 1       ? "restarted"
                                       : "placed";
  s += " by policy " + d.reason + " on " + Join(nodes, ", ") + " (" +
       (n == 0 ? std::string("no GPU, host only")
               : std::to_string(n) + (n == 1 ? " GPU" : " GPUs")) +
       ") after waiting " + FormatDuration(d.waited);
  return s;
}

}  // namespace

Daemon::Daemon(DaemonOptions options) : options_(std::move(options)) {}

Daemon::~Daemon() {
  Stop();
  if (lock_fd_ >= 0) close(lock_fd_);
}

StatusOr<std::unique_ptr<Daemon>> Daemon::Open(DaemonOptions options) {
  if (options.data_dir.empty()) return InvalidArgument("--data: a data directory is required");
  if (options.shim_path.empty()) options.shim_path = "/proc/self/exe";
  // Run directories, checkpoints and telemetry files reach processes that run elsewhere.
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(options.data_dir, ec);
  if (ec) return InvalidArgument("--data " + options.data_dir + ": " + ec.message());
  options.data_dir = absolute.lexically_normal().string();
  if (options.hostname.empty()) options.hostname = HostName();
  if (options.backend == Backend::kSlurm) {
    // Slurm's daemons start the workloads on the nodes: the local isolation (cgroups, tenant
    // users) and the local GPUs do not apply.
    if (!options.fake_gpus.empty())
      return InvalidArgument("--fake-gpus: the Slurm backend reads its GPUs from Slurm");
    if (options.isolation == Isolation::kRequired)
      return InvalidArgument(
          "--isolation required: under the Slurm backend Slurm runs the workloads, as the "
          "Slurm token's user; airtime's own isolation applies to local processes only");
    options.isolation = Isolation::kOff;
  }
  std::unique_ptr<Daemon> d(new Daemon(std::move(options)));
  AIRTIME_RETURN_IF_ERROR(d->Init());
  return d;
}

// One daemon per data directory: an exclusive lock on DATA/daemon.lock, held for the
// daemon's life (the kernel drops it when the process dies, kill -9 included). A daemon
// killed while it was spawning a workload leaves the lock to the child until the child's
// exec closes it (the descriptor is close-on-exec): while the pid the file names is gone, the
// lock is tried again for up to 5 seconds.
Status Daemon::LockDataDir() {
  std::error_code ec;
  std::filesystem::create_directories(options_.data_dir, ec);
  const std::string path = options_.data_dir + "/" + kLockFileName;
  lock_fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return FailedPrecondition("cannot open " + path + ": " + std::strerror(errno));
  for (int attempt = 0; flock(lock_fd_, LOCK_EX | LOCK_NB) != 0; ++attempt) {
    char buf[32] = {};
    (void)!pread(lock_fd_, buf, sizeof buf - 1, 0);
    const std::string holder(buf, strcspn(buf, "\n"));
    const long pid = std::strtol(holder.c_str(), nullptr, 10);
    const bool holder_gone = pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    if (!holder_gone || attempt >= 100)
      return FailedPrecondition("another airtime server uses " + options_.data_dir + " (pid " +
                                holder + "); stop it or choose another --data");
    usleep(50'000);
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  (void)!ftruncate(lock_fd_, 0);
  (void)!pwrite(lock_fd_, pid.data(), pid.size(), 0);
  // The address an earlier holder left names no listener now; recovery may take a while,
  // and a client must not take the stale one for this daemon's.
  std::filesystem::remove(options_.data_dir + "/" + kAddressFileName, ec);
  return OkStatus();
}

Status Daemon::Init() {
  // Everything the daemon creates from now on (store, lock, run files) is its own alone,
  // isolating or not: the store keeps every submission's env, which other users of the host
  // must not read. (Workloads start with the usual 022: the shim sets it.)
  umask(077);
  AIRTIME_RETURN_IF_ERROR(SetUpIsolation());
  AIRTIME_RETURN_IF_ERROR(LockDataDir());
  AIRTIME_RETURN_IF_ERROR(ResolveCheckpointCap());
  AIRTIME_RETURN_IF_ERROR(OpenStore());
  SecureDataDir();
  std::string note;
  AIRTIME_RETURN_IF_ERROR(options_.backend == Backend::kSlurm ? OpenSlurmBackend(&note)
                                                              : OpenLocalBackend(&note));
  AIRTIME_RETURN_IF_ERROR(CheckUnrecordedRuns());
  auto policy = PolicyRegistry::Builtin().Make(options_.policy, *cluster_);
  if (!policy.ok()) return policy.status();
  // What this start runs, for `airtime sim --from-data` (docs/what-if.md).
  if (Status st = store_->AddDaemonStart(
          {WallNow(), options_.policy, ClusterFileYaml(*cluster_), uuid_of_gpu_});
      !st.ok())
    return Status(st.code(), "recording this start in the store: " + st.message());
  EngineOptions engine_options;
  engine_options.restart_backoff = options_.restart_backoff;
  engine_options.restart_backoff_max =
      std::max(options_.restart_backoff_max, options_.restart_backoff);
  engine_ = std::make_unique<Engine>(*cluster_, std::move(*policy), engine_options);
  engine_->SetPaused(true);  // the engine's clock starts now, and the ledger with it
  engine_->Handle(Event::Timer(WallNow()));
  engine_->SetPaused(false);
  ledger_ = std::make_unique<airtime::Ledger>(*engine_);
  // The 3 a.m. calls are scored once, in holds_ (bounded, saved across restarts).
  // The daemon reads the books' totals only: no per-job samples (they would grow for its
  // whole life), and its own hold book (holds_).
  books_ = std::make_unique<airtime::Metrics>(
      *engine_, MetricsOptions{.score_holds = false, .keep_samples = false});
  holds_.SetMaxClosed(options_.max_hold_calls);
  startup_note_ = std::to_string(uuid_of_gpu_.size()) + " GPU(s)" +
                  (options_.fake_gpus.empty() ? "" : " (simulated: " + options_.fake_gpus + ")") +
                  (note.empty() ? "" : "; " + note) + "; policy " + options_.policy;
  return Recover();
}

// The engine's cluster: this host's devices (gpu/host_cluster.h), GPU indices mapped to UUIDs.
Status Daemon::BuildCluster(std::string* note) {
  auto cluster = ClusterFromDevices(devices_, options_.hostname, note);
  if (!cluster.ok()) return cluster.status();
  cluster_ = std::make_unique<Cluster>(std::move(*cluster));
  uuid_of_gpu_ = ClusterGpuUuids(devices_);
  for (size_t g = 0; g < uuid_of_gpu_.size(); ++g)
    gpu_of_uuid_[uuid_of_gpu_[g]] = static_cast<GpuIndex>(g);
  return OkStatus();
}

void Daemon::Start() {
  if (running_.exchange(true)) return;
  stop_ = false;
  loop_ = std::thread([this] { Loop(); });
  Post([this] { Feed(Event::Timer(WallNow())); });
}

void Daemon::Stop() {
  if (!running_.exchange(false)) return;
  stop_ = true;
  actuator_->Wake();
  if (loop_.joinable()) loop_.join();
  if (scraper_.joinable()) scraper_.join();
  if (disk_checker_.joinable()) disk_checker_.join();
  // The loop has ended: this thread owns them.
  SaveLedger(std::max(WallNow(), engine_->now()));
  SaveHolds(std::max(WallNow(), engine_->now()));
}

// ---------------------------------------------------------------- the loop

void Daemon::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    inbox_.push_back(std::move(task));
  }
  actuator_->Wake();
}

void Daemon::Loop() {
  while (!stop_) {
    const TimeMs now = WallNow();
    const TimeMs ready = ready_wakes_.empty() ? kNever : *ready_wakes_.begin();
    TimeMs next = std::min({engine_wake_, soon_cycle_at_, ready, next_telemetry_, next_scrape_,
                            next_ledger_save_, next_disk_check_, now + 1000});
    const int timeout = static_cast<int>(std::clamp<TimeMs>(next - now, 0, 1000));
    std::vector<Exited> exits = actuator_->WaitForExits(timeout);
    const TimeMs seen = WallNow();
    exit_seen_ = std::chrono::steady_clock::now();
    // Nodes first: a job that ended with its node is then a stop the engine decided, and
    // the workload is not placed on the down node again.
    if (auto unusable = actuator_->TakeUnusable()) OnUnusable(*unusable, seen);
    for (const Exited& e : exits) OnExit(e, seen);
    RetryPlacements(seen);  // the exits may have freed what they wait for
    for (const Placed& p : actuator_->TakePlaced()) OnPlaced(p, seen, seen);
    if (auto foreign = actuator_->TakeForeign()) OnForeign(std::move(*foreign), seen);
    std::deque<std::function<void()>> tasks;
    std::vector<std::shared_ptr<PendingSubmit>> submits;
    {
      std::lock_guard<std::mutex> lock(inbox_mu_);
      tasks.swap(inbox_);
      submits.swap(submits_);
    }
    if (!submits.empty()) CommitSubmissions(std::move(submits));
    for (auto& t : tasks) t();
    RunTimers(WallNow());
    TrimEnded();
  }
}

void Daemon::RunTimers(TimeMs now) {
  bool replica_ready = false;
  while (!ready_wakes_.empty() && *ready_wakes_.begin() <= now) {
    ready_wakes_.erase(ready_wakes_.begin());
    replica_ready = true;
  }
  const bool soon = soon_cycle_at_ != kNever && now >= soon_cycle_at_;
  if ((engine_wake_ != kNever && now >= engine_wake_) || replica_ready || soon) {
    if (now >= engine_wake_) engine_wake_ = kNever;
    soon_cycle_at_ = kNever;
    Feed(Event::Timer(now));
  }
  if (now >= next_telemetry_) {
    SampleTelemetry(now);
    next_telemetry_ = now + options_.telemetry_interval;
  }
  if (now >= next_scrape_) {
    ScrapeDemand(now);
    next_scrape_ = now + options_.scrape_interval;
  }
  if (now >= next_ledger_save_) {
    SaveLedger(now);
    next_ledger_save_ = now + options_.ledger_save_interval;
  }
  if (now >= next_holds_save_) {
    SaveHolds(now);
    next_holds_save_ = now + options_.holds_save_interval;
  }
  if (now >= next_disk_check_) {
    CheckDiskUse(now);
    next_disk_check_ = now + options_.disk_check_interval;
  }
  // Starts were paused (full disk): a cycle as soon as they may resume.
  if (!start_pause_.empty() && StartsPaused(now).empty()) Feed(Event::Timer(now));
}

// ---------------------------------------------------------------- driving the engine

void Daemon::Feed(const Event& event, SteadyTime seen) { Act(Handle(event), seen); }

const CycleResult& Daemon::Handle(const Event& event) {
  const TimeMs now = std::max(event.at, engine_->now());
  ledger_->Advance(now);
  AccountValue(now);
  engine_->SetPaused(holding_decisions_ || !StartsPaused(now).empty());
  const auto t0 = std::chrono::steady_clock::now();
  const CycleResult& cycle = engine_->Handle(event);
  const double cycle_s = SecondsSince(t0);
  latencies_.cycle.Add(cycle_s);
  cycle_hist_.Observe(cycle_s);
  ledger_->Observe(cycle);
  books_->Observe(cycle);
  for (const HoldDecision& h : cycle.holds) holds_.Record(h);
  if (cycle.wake_at != kNever) engine_wake_ = cycle.wake_at;
  CountAdmissions(cycle);
  return cycle;
}

void Daemon::FeedTogether(const std::vector<Event>& events) {
  for (size_t i = 0; i < events.size(); ++i) {
    holding_decisions_ = i + 1 < events.size();
    Feed(events[i]);
  }
  holding_decisions_ = false;
}

void Daemon::FeedSoon(const std::vector<Event>& events) {
  // Held, the engine decides nothing, and a demand or a priority changes no workload's
  // state: there is nothing to act on until the cycle.
  const bool holding = holding_decisions_;
  holding_decisions_ = true;
  for (const Event& e : events) (void)Handle(e);
  holding_decisions_ = holding;
  // On the wall clock, as RunTimers reads it (the engine's may be ahead of it after the
  // clock stepped back).
  if (!events.empty())
    soon_cycle_at_ = std::min(soon_cycle_at_, WallNow() + options_.soon_cycle_delay);
}

void Daemon::CountAdmissions(const CycleResult& cycle) {
  for (const Decision& d : cycle.decisions)
    if (d.type == DecisionType::kStart) ++admitted_total_;
  for (const auto& [id, wait] : cycle.waiting) {
    switch (wait.reason) {
      case WaitReason::kNoFit:
      case WaitReason::kPolicy:
      case WaitReason::kTooLarge:
      case WaitReason::kNoSuchHardware:
        ++inadmissible_total_;
        break;
      case WaitReason::kNone:
      case WaitReason::kBehindHead:
      case WaitReason::kBackoff:
        break;
    }
  }
}

void Daemon::Act(const CycleResult& cycle, SteadyTime seen) {
  const CycleResult copy = cycle;  // starting a run may feed no events, but keep it stable
  bool started = false;
  const double to_decision = SecondsSince(seen);
  const SteadyTime decided = std::chrono::steady_clock::now();
  for (const Decision& d : copy.decisions) {
    if ((d.type == DecisionType::kStart || d.type == DecisionType::kResize) && d.ready_at > copy.at)
      ready_wakes_.insert(d.ready_at);
    switch (d.type) {
      case DecisionType::kStart:
        queue_wait_hist_.Observe(static_cast<double>(d.waited) / 1000.0);
        StartRun(d, decided);
        started = true;
        break;
      case DecisionType::kResize:
        StopRun(d.resized_from, "resized to " + std::to_string(d.placement.gpus.size()) + " GPUs",
                decided);
        StartRun(d, decided);
        started = true;
        break;
      case DecisionType::kPreempt:
        ++preemptions_total_;
        StopRun(d.allocation, "preempted: " + d.reason, decided);
        break;
      case DecisionType::kRelease:
        StopRun(d.allocation, "released: " + d.reason, decided);
        break;
      default:
        break;
    }
  }
  LaunchPending();
  if (started) {
    latencies_.event_to_decision.Add(to_decision);
    latencies_.event_to_start.Add(SecondsSince(seen));
  }
  SyncWorkloadStates();
}

// A port for a replica: one the kernel has free now (bound to 127.0.0.1:0, then closed).
int Daemon::FreePort() const {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

int Daemon::PortFor(const std::string& host) {
  std::set<int> used;
  for (const auto& [id, r] : runs_)
    if (r.row.port > 0) used.insert(static_cast<int>(r.row.port));
  for (int p : actuator_->KeptPorts()) used.insert(p);
  if (!IsLoopbackHost(host)) {
    const int p = PickPort(options_.replica_ports, used, next_replica_port_);
    if (p > 0) next_replica_port_ = p + 1;
    return p;
  }
  for (int tries = 0; tries < 16; ++tries) {
    const int p = FreePort();
    if (p > 0 && !used.count(p)) return p;
  }
  return 0;
}

// A process stopped with a grace period may still hold its GPUs (memory, MPS clients): a
// start on any of them waits until it has exited.
bool Daemon::GpusStillBusy(const Placement& placement) const {
  for (const auto& [id, r] : runs_) {
    if (!r.stopping || !HasProcess(r.row)) continue;
    for (GpuIndex g : placement.gpus)
      if (std::find(r.row.gpus.begin(), r.row.gpus.end(), uuid_of_gpu_[static_cast<size_t>(g)]) !=
          r.row.gpus.end())
        return true;
  }
  return false;
}

// A job runs once at a time: moved or preempted, its next run waits until the one being
// stopped has exited (within its grace it may still checkpoint, and on Slurm it is still a
// job), even on other GPUs. A service's replicas are many by design and do not wait.
bool Daemon::PreviousRunStopping(const WorkloadRec& w) const {
  if (w.spec->is_service()) return false;
  for (const auto& [id, r] : runs_)
    if (r.row.workload_id == w.row.id && r.stopping && HasProcess(r.row)) return true;
  return false;
}

void Daemon::LaunchDeferred() {
  std::vector<Decision> waiting;
  waiting.swap(deferred_);
  const SteadyTime now = std::chrono::steady_clock::now();  // the GPUs may be free now
  for (Decision& d : waiting) {
    if (!engine_->allocation(d.allocation)) continue;  // stopped or cancelled meanwhile
    StartRun(d, now);
  }
  LaunchPending();
}

void Daemon::StartRun(const Decision& d, SteadyTime decided) {
  auto wit = by_engine_id_.find(d.workload);
  if (wit == by_engine_id_.end()) return;
  if (GpusStillBusy(d.placement)) {
    deferred_.push_back(d);
    return;
  }
  WorkloadRec& w = workloads_.at(wit->second);
  if (PreviousRunStopping(w)) {
    deferred_.push_back(d);
    return;
  }
  RunRec run;
  run.allocation = d.allocation;
  run.row.workload_id = w.row.id;
  run.row.replica = d.replica;
  run.row.attempt = ++w.attempts;
  for (GpuIndex g : d.placement.gpus) run.row.gpus.push_back(uuid_of_gpu_[static_cast<size_t>(g)]);
  run.row.share_milli = d.placement.mode == ShareMode::kFraction ? d.placement.milli : 1000;
  run.row.started_at = WallNow();
  run.row.placed = StartExplanation(*cluster_, d, w.spec->is_service(), run.row.attempt);
  if (d.expected_end != kNever)
    run.row.placed += ", expected to finish at " + FormatTime(d.expected_end);
  // Where the replica will listen: its backend's address for its GPUs, a port free there.
  if (w.spec->exec.wants_port) {
    const std::string host = actuator_->ServiceAddress(run.row.gpus);
    run.row.port = PortFor(host);
    if (run.row.port == 0)
      std::cerr << "airtime server: no free port at " << host << " for a replica of '" << w.row.name
                << "' (--replica-ports on other hosts): it starts without PORT\n";
  }
  StatusOr<int64_t> id = Internal("not added");
  int64_t sequence = 0;  // 0: the run's id was reserved already
  Status added = store_->Transaction([&]() -> Status {
    id = store_->AddRun(run.row);
    if (!id.ok()) return id.status();
    if (*id <= marks_.run_reserved) return OkStatus();
    auto seq = store_->BumpSequence();
    if (!seq.ok()) return seq.status();
    sequence = *seq;
    return OkStatus();
  });
  if (!added.ok()) {
    // Without the row a restart could not know the process: do not start it (a full disk,
    // most likely). The workload goes back to the queue; starts pause a while.
    NotStarted(std::move(run), w, "the store could not record the run: " + added.message(),
               WallNow());
    return;
  }
  if (sequence > 0) {
    // Beyond the reserved ids: the marks reserve the next block before anything can know of
    // this run (store_marks.h). Runs within the block write nothing more than their rows.
    marks_.sequence = sequence;
    marks_.run = *id;
    marks_.run_reserved = *id + kRunIdBlock - 1;
    if (!SaveMarks()) marks_.run_reserved = *id;  // the next run tries again
  }
  run.row.id = *id;
  run.row.run_dir = options_.data_dir + "/runs/" + std::to_string(*id);
  if (w.spec->exec.empty()) {
    // Nothing to execute: a planning-only workload (as in the simulator). It holds its GPUs
    // until cancelled; a job is marked running without a process.
    run.row.state = "running";
    (void)store_->UpdateRun(run.row);
    run_of_allocation_[d.allocation] = run.row.id;
    runs_.emplace(run.row.id, std::move(run));
    return;
  }
  LaunchRequest req;
  req.run_dir = run.row.run_dir;
  req.argv = w.spec->exec.argv;
  req.shim_path = options_.shim_path;
  req.workdir = w.spec->exec.workdir;
  req.run_id = run.row.id;
  req.gpus = run.row.gpus;
  req.share_milli = run.row.share_milli;
  req.workload = w.row.name;
  req.comment = KindName(w.spec->kind) + std::string(" '") + w.row.name + "' of " + w.row.tenant +
                ", run " + std::to_string(*id) + ": " + run.row.placed;
  req.env =
      GpuEnv(run.row.gpus, run.row.share_milli, static_cast<int64_t>(d.placement.memory_gb * 1024),
             CheckpointDir(w.row.id), static_cast<int>(run.row.port));
  req.env.push_back({"AIRTIME_WORKLOAD", w.row.name});
  req.env.push_back({"AIRTIME_RUN_ID", std::to_string(run.row.id)});
  req.env.push_back({"AIRTIME_TELEMETRY_FILE", run.row.run_dir + "/telemetry"});
  if (run.row.share_milli < 1000 && actuator_->FractionsUseLocalMps()) {
    // A fraction of a GPU: an MPS client of this daemon's own MPS server.
    req.env.push_back({"CUDA_MPS_PIPE_DIRECTORY", options_.data_dir + "/mps/pipe"});
    req.env.push_back({"CUDA_MPS_LOG_DIRECTORY", options_.data_dir + "/mps/log"});
    if (Status st = EnsureMps(); !st.ok() && !mps_warned_) {
      std::cerr << "airtime server: " << st.message() << "\n";
      mps_warned_ = true;
    }
  }
  for (const auto& kv : w.spec->exec.env) req.env.push_back(kv);
  {
    // Whose run it is, for a store that loses the row (store_marks.h). Best effort.
    std::error_code ec;
    std::filesystem::create_directories(run.row.run_dir, ec);
    std::ofstream owner(RunPath(run.row.run_dir, kRunOwnerFile));
    owner << FormatRunOwner(RunOwner{w.row.id, w.row.name});
    // Its checkpoint directory, there before its first run (under isolation
    // PrepareIsolatedLaunch makes it the run user's).
    const std::string ckpt = CheckpointDir(w.row.id);
    if (!isolating() && std::filesystem::create_directories(ckpt, ec))
      std::filesystem::permissions(ckpt, std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::replace, ec);
  }
  // The run directory is durable before the process can exist (recovery relies on it).
  Status recorded = store_->UpdateRun(run.row);
  if (recorded.ok()) recorded = PrepareIsolatedLaunch(w, run.row, &req);
  const int64_t run_id = run.row.id;
  run.launching = recorded.ok();
  run_of_allocation_[d.allocation] = run_id;
  runs_.emplace(run_id, std::move(run));
  if (!recorded.ok()) {
    LaunchRefused(runs_.at(run_id), recorded);
    exit_seen_ = std::chrono::steady_clock::now();
    OnExit(Exited{run_id, 127, "launch failed"}, WallNow());
    return;
  }
  // Launched with the cycle's other starts (LaunchPending), before Act returns.
  pending_launches_.push_back(PendingLaunch{run_id, std::move(req), decided});
}

// The starts recorded since the last call, launched as one batch: the actuator may make
// them concurrently (Slurm: several submissions under way at once), so a start does not wait
// for the others of its cycle. Every outcome is recorded before any failure is handed to the
// engine (OnExit feeds it, and that cycle may stop a run of this batch: it must be known).
void Daemon::LaunchPending() {
  std::vector<PendingLaunch> batch;
  batch.swap(pending_launches_);
  if (batch.empty()) return;
  std::vector<LaunchRequest> requests;
  requests.reserve(batch.size());
  for (PendingLaunch& p : batch) requests.push_back(std::move(p.request));
  std::vector<LaunchResult> results = actuator_->LaunchAll(requests);
  std::vector<int64_t> refused;
  for (size_t i = 0; i < batch.size(); ++i) {
    // Still here: nothing ends a run while it is launching (StopRun launches it first).
    RunRec& run = runs_.at(batch[i].run_id);
    run.launching = false;
    const LaunchResult& r = results[i];
    if (!r.handle.ok()) {
      LaunchRefused(run, r.handle.status());
      refused.push_back(run.row.id);
      continue;
    }
    const double accepted = std::chrono::duration<double>(r.done - batch[i].decided).count();
    start_action_hist_.Observe(accepted);
    latencies_.decision_to_accepted.Add(accepted);
    run.row.pid = r.handle->pid;
    run.row.start_ticks = r.handle->start_ticks;
    run.row.boot_id = r.handle->boot_id;
    run.row.slurm_job = r.handle->slurm_job;
    // A parked Slurm job runs with the port it was first given: that is where it listens.
    if (r.handle->port > 0) run.row.port = r.handle->port;
    run.row.state = "running";
    (void)store_->UpdateRun(run.row);
    if (Status st = actuator_->Watch(run.row.id, *r.handle); !st.ok())
      run.row.stop_reason = "not watched: " + st.message();
    ++starts_total_;
  }
  for (int64_t id : refused) {
    exit_seen_ = std::chrono::steady_clock::now();
    OnExit(Exited{id, 127, "launch failed"}, WallNow());
  }
}

// A start that produced nothing (the backend refused it, or the run could not be prepared):
// the run ends with 127 and the reason; OnExit tells the engine next.
void Daemon::LaunchRefused(RunRec& run, const Status& why) {
  run.launching = false;
  run.row.state = "exited";
  run.row.ended_at = WallNow();
  run.row.exit_code = 127;
  run.row.stop_reason =
      "workload '" + workloads_.at(run.row.workload_id).row.name + "': " + why.message();
  (void)store_->UpdateRun(run.row);
  ++failures_total_;
}

// Starts the MPS control daemon once (real GPUs only) with a private pipe directory, so
// fractional runs get their thread percentage and pinned memory limit enforced.
Status Daemon::EnsureMps() {
  if (mps_started_ || options_.fake_gpus.size() > 0) return OkStatus();
  const std::string pipe = options_.data_dir + "/mps/pipe", log = options_.data_dir + "/mps/log";
  std::error_code ec;
  std::filesystem::create_directories(pipe, ec);
  std::filesystem::create_directories(log, ec);
  // Isolated clients run as their tenants' users: they must reach the pipes (umask is 077).
  for (const std::string& dir : {options_.data_dir + "/mps", pipe, log}) chmod(dir.c_str(), 0755);
  std::vector<std::string> env_text = {"CUDA_MPS_PIPE_DIRECTORY=" + pipe,
                                       "CUDA_MPS_LOG_DIRECTORY=" + log};
  for (char** e = environ; *e; ++e) env_text.push_back(*e);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  char prog[] = "nvidia-cuda-mps-control", flag[] = "-d";
  char* argv[] = {prog, flag, nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, prog, nullptr, nullptr, argv, envp.data()) != 0)
    return FailedPrecondition(
        "nvidia-cuda-mps-control not found: the fraction runs time-sliced, without MPS limits");
  int status = 0;
  waitpid(pid, &status, 0);  // -d: it forks its daemon and returns
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return FailedPrecondition("nvidia-cuda-mps-control -d failed (status " +
                              std::to_string(status) + "); see " + log);
  mps_started_ = true;
  return OkStatus();
}

void Daemon::StopRun(AllocationId allocation, const std::string& reason, SteadyTime decided) {
  std::erase_if(deferred_, [&](const Decision& d) { return d.allocation == allocation; });
  auto it = run_of_allocation_.find(allocation);
  if (it == run_of_allocation_.end()) return;
  if (runs_.at(it->second).launching) {
    // Started in this cycle, not launched yet: launched first, so that it can be stopped
    // (a refused launch ends it instead).
    LaunchPending();
    it = run_of_allocation_.find(allocation);
    if (it == run_of_allocation_.end()) return;
  }
  RunRec& run = runs_.at(it->second);
  run.stopping = true;
  run.row.stop_reason = reason;
  (void)store_->UpdateRun(run.row);
  const WorkloadRec& w = workloads_.at(run.row.workload_id);
  if (!HasProcess(run.row)) {  // no process (planning-only or failed launch)
    exit_seen_ = std::chrono::steady_clock::now();
    OnExit(Exited{run.row.id, 0, "no process"}, WallNow());
    return;
  }
  if (Status st = actuator_->Stop(run.row.id, static_cast<int>(w.spec->preempt_grace)); !st.ok())
    run.row.stop_reason += " (signal failed: " + st.message() + ")";
  else
    stop_action_hist_.Observe(SecondsSince(decided));
}

// A run's process ended (or a run without process was stopped).
void Daemon::OnExit(const Exited& exited, TimeMs now) {
  auto it = runs_.find(exited.run_id);
  if (it == runs_.end()) return;
  if (exited.how == "no space" && !it->second.stopping) {
    // The shim could not write the run's files: nothing ran, the workload did not fail.
    WorkloadRec& w = workloads_.at(it->second.row.workload_id);
    const std::string why = "run " + std::to_string(exited.run_id) +
                            " could not write its files in " + it->second.row.run_dir +
                            " (no space left on the file system or quota)";
    NotStarted(std::move(it->second), w, why, now);
    return;
  }
  RunRec run = std::move(it->second);
  runs_.erase(it);
  run_of_allocation_.erase(run.allocation);
  CapLogsOf(run.row, now);  // what it wrote since the last look
  for (const char* name : {kStdoutLog, kStderrLog})
    log_cap_warned_.erase(run.row.run_dir + "/" + name);
  EndedBeforeItsPlacementMoved(run.row);
  run.row.state = "exited";
  run.row.ended_at = now;
  run.row.exit_code = exited.exit_code;
  if (run.row.stop_reason.empty() && exited.exit_code != 0)
    run.row.stop_reason = "exited with status " + std::to_string(exited.exit_code) +
                          (exited.how.empty() ? "" : " (" + exited.how + ")");
  WorkloadRec& w = workloads_.at(run.row.workload_id);
  if (!w.spec->is_service()) w.row.exit_code = exited.exit_code;  // a replica is not the service
  if (run.stopping) {
    (void)store_->Transaction([&]() -> Status {
      AIRTIME_RETURN_IF_ERROR(store_->UpdateRun(run.row));
      return Persist(w);  // its exit code, which `describe` shows after a restart too
    });
    LaunchDeferred();
    SyncWorkloadStates();
    return;  // the engine already knows: it decided the stop
  }
  const bool failed = exited.exit_code != 0;
  if (failed) {
    ++failures_total_;
    ++w.failures;
    w.row.message = run.row.stop_reason;
  }
  // A job's final outcome is written with its run's, in one transaction: a crash right
  // after cannot leave a finished job looking unfinished (and run it again).
  const bool done = !w.spec->is_service() && (!failed || w.failures >= options_.max_attempts);
  if (done) {
    w.row.state = failed ? "failed" : "succeeded";
    w.row.finished_at = now;
    w.row.message =
        failed ? "failed " + std::to_string(w.failures) + " times; last: " + run.row.stop_reason
               : "completed";
    (void)store_->Transaction([&]() -> Status {
      AIRTIME_RETURN_IF_ERROR(store_->UpdateRun(run.row));
      return Persist(w);
    });
  } else {
    (void)store_->UpdateRun(run.row);
  }
  if (!failed) {
    Feed(Event::Completion(now, run.allocation), exit_seen_);
  } else if (done) {
    Feed(Event::Cancel(now, w.eid), exit_seen_);  // given up: released without a restart
  } else {
    Feed(Event::Failure(now, run.allocation), exit_seen_);
  }
}

// Workload rows follow the engine's phases; changed rows are written.
void Daemon::SyncWorkloadStates() {
  for (auto& [id, w] : workloads_) {
    if (w.eid == kNoWorkload) continue;
    const std::string& old = w.row.state;
    if (IsFinalState(old)) continue;
    const Job& job = engine_->job(w.eid);
    std::string state = old;
    switch (job.phase) {
      case JobPhase::kPending:
        state = "queued";
        break;
      case JobPhase::kRunning:
        state = "running";
        break;
      case JobPhase::kDone:
        state = "succeeded";
        break;
      case JobPhase::kCancelled:
        state = w.row.message.rfind("failed", 0) == 0 ? "failed" : "cancelled";
        break;
    }
    const bool changed = state != old || job.preemptions != w.row.preemptions;
    if (!changed) continue;
    if (state == "running" && !w.row.started_at) w.row.started_at = engine_->now();
    if (IsFinalState(state)) {
      w.row.finished_at = engine_->now();
      if (state == "succeeded") w.row.message = "completed";  // planning-only work
      if (state == "cancelled" && w.row.message.empty()) w.row.message = "cancelled";
    }
    w.row.state = state;
    w.row.preemptions = job.preemptions;
    (void)Persist(w);
  }
}

Status Daemon::Persist(WorkloadRec& w) {
  LetGoIfEnded(w);
  return store_->UpdateWorkload(w.row);
}

void Daemon::LetGoIfEnded(WorkloadRec& w) {
  // A workload that ended will not run again: what the backend kept for it goes, and the
  // daemon's record of it joins those it lets go beyond its retention (TrimEnded).
  if (IsFinalState(w.row.state) && actuator_) actuator_->Retire(w.row.name);
  NoteEnded(w);
}

Status Daemon::RecordDemand(WorkloadRec& w, double rps, TimeMs now,
                            const std::vector<std::pair<std::string, double>>& classes) {
  w.row.demand_rps = rps;
  w.row.demand_at = now;
  // The histories grow by steps, not by reports (DemandRecorder); the recorders move on
  // only once the rows are stored.
  DemandRecorder steps = w.demand_steps;
  std::map<std::string, DemandRecorder> class_steps;
  for (const auto& [request_class, class_rps] : classes)
    class_steps.emplace(request_class, w.class_steps[request_class]);
  Status st = store_->Transaction([&]() -> Status {
    AIRTIME_RETURN_IF_ERROR(Persist(w));
    for (const DemandWrite& d : steps.Report(now, rps))
      AIRTIME_RETURN_IF_ERROR(d.kind == DemandWrite::kAdd
                                  ? store_->AddDemand(w.row.id, d.at, d.rps)
                                  : store_->RaiseDemand(w.row.id, d.at, d.rps));
    for (const auto& [request_class, class_rps] : classes) {
      AIRTIME_RETURN_IF_ERROR(store_->SetClassDemand(w.row.id, request_class, class_rps, now));
      for (const DemandWrite& d : class_steps.at(request_class).Report(now, class_rps))
        AIRTIME_RETURN_IF_ERROR(
            d.kind == DemandWrite::kAdd
                ? store_->AddClassDemandStep(w.row.id, request_class, d.at, d.rps)
                : store_->RaiseClassDemandStep(w.row.id, request_class, d.at, d.rps));
    }
    // Hourly, what no forecast reads any more goes.
    if (now - demand_pruned_at_ < kHour) return OkStatus();
    demand_pruned_at_ = now;
    return store_->PruneDemand(now - kDemandHistoryKept);
  });
  if (!st.ok()) return Status(st.code(), "the demand could not be stored: " + st.message());
  w.demand_steps = steps;
  for (auto& [request_class, recorder] : class_steps) w.class_steps[request_class] = recorder;
  return OkStatus();
}

// Value and service levels up to `now` (books_: services earn per request served within the
// capacity of the replicas ready as the interval began; a cycle comes when a started
// replica becomes ready, ready_wakes_, so within an interval it does not change). The same
// demand scores the services' hold-or-hand-off calls (holds_, the 3 a.m. report the daemon
// keeps across restarts); an ended service's calls close.
void Daemon::AccountValue(TimeMs now) {
  books_->Advance(now);
  if (value_at_ == 0) value_at_ = now;
  const TimeMs from = value_at_;
  value_at_ = now;
  if (now <= from) return;
  for (WorkloadId sid : engine_->services()) {
    const Job& job = engine_->job(sid);
    if (job.phase != JobPhase::kRunning && job.phase != JobPhase::kPending) {
      holds_.End(sid, from);
      continue;
    }
    // A service with variants has its calls under its first member, against its whole
    // demand (every member hears each class's rate).
    double rps = job.demand_rps;
    if (job.s().realtime.is_member()) {
      rps = 0;
      for (double c : job.class_rps) rps += c;
    }
    holds_.Advance(sid, from, now, rps);
  }
}

LatencyLog Daemon::latencies() {
  return OnLoop<LatencyLog>([this] { return latencies_; });
}

size_t Daemon::held_workloads() {
  return OnLoop<size_t>([this] { return workloads_.size(); });
}

}  // namespace airtime
