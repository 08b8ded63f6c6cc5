// Daemon: the live control plane on one machine.
//
// One event-loop thread owns everything that changes: the engine (the same core the
// simulator drives), the ledger, the store and the actuator (exec/actuator.h: the local
// Executor). Other threads (the HTTP API's) never touch them: they post a task to the loop
// and wait for its answer. The loop sleeps in Actuator::WaitForExits, so a process exit, a posted
// task or a timer (the engine's wake time, telemetry, demand scraping) each wakes it at once.
//
// Durability: a submission is committed to the store before its answer goes out; a run row
// ("launching") is committed before its process starts; outcomes are committed as they
// happen. Open() recovers from a crash: it re-submits every accepted workload that had not
// ended to a paused engine, adopts the runs whose processes still live (identity checked:
// pid, start time, boot id), settles the ones that ended while it was down, and only then
// lets the engine decide. Processes run in their own sessions and outlive the daemon.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "airtime/api/control_plane.h"
#include "airtime/api/prom_writer.h"
#include "airtime/config/workload_yaml.h"
#include "airtime/engine/engine.h"
#include "airtime/exec/executor.h"
#include "airtime/exec/log_cap.h"
#include "airtime/gpu/inventory.h"
#include "airtime/ledger/costs.h"
#include "airtime/ledger/hold_book.h"
#include "airtime/ledger/ledger.h"
#include "airtime/ledger/metrics.h"
#include "airtime/server/demand_recorder.h"
#include "airtime/server/demand_scrape.h"
#include "airtime/server/ended_service_specs.h"
#include "airtime/server/gpu_history.h"
#include "airtime/server/latency_log.h"
#include "airtime/server/replica_ports.h"
#include "airtime/server/tenant_users.h"
#include "airtime/store/store.h"
#include "airtime/store/store_marks.h"

namespace airtime {

// A workload state that does not change any more.
inline bool IsFinalState(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled";
}

// How long a service's demand history is kept: what its forecast starts from after a
// restart (a day for the daily pattern, a week of the forecast's errors, and a day more).
inline constexpr DurationMs kDemandHistoryKept = 8 * kDay;

// DATA/address: "HOST:PORT" of the API, written by `airtime server` once it listens. The
// daemon that takes the data directory's lock removes what an earlier daemon left there
// (killed, its address is stale), and a clean stop removes its own: while the file exists,
// it names a daemon that listens or is about to.
inline constexpr char kAddressFileName[] = "address";
// DATA/daemon.lock: one daemon per data directory (Daemon::LockDataDir).
inline constexpr char kLockFileName[] = "daemon.lock";
// DATA/store-loss.log: what a start with --accept-store-loss gave up.
inline constexpr char kStoreLossLog[] = "store-loss.log";

// Ended services whose trimmed specs stay in memory once let go (EndedServiceSpecs): from
// a few hundred bytes to a few KB each (a member of a service with 8 variants and 8 classes
// carries their names and figures), beside the --ended-kept whole records.
inline constexpr size_t kEndedServiceSpecsKept = 20000;

// Whether a run has something running for it: a local process or a Slurm job.
inline bool HasProcess(const RunRow& run) { return run.pid != 0 || run.slurm_job != 0; }

// Whether workloads are isolated from the daemon and from each other (daemon_isolation.cc,
// docs/server.md "Trust model"): each runs as its tenant's user (tenant_users.h), in cgroups
// of its own that confine its devices and kill it whole (run_cgroup.h: cgroup v1's devices
// and freezer controllers, or a cgroup v2 device program).
enum class Isolation {
  kOff,       // workloads run as the daemon's user (tests, single-user hosts)
  kAuto,      // isolate when the host can (root; cgroup v1 devices + freezer, or v2); else say why
  kRequired,  // isolate, or refuse to start
};

// Where workloads run (daemon_backend.cc): chosen once, at Open.
enum class Backend {
  kLocal,  // processes on this machine through the shim (exec/executor.h)
  kSlurm,  // Slurm jobs (slurm/slurm_actuator.h); the cluster is read from Slurm
};

struct SlurmBackendOptions {
  // slurmrestd's URL, the user and token it authenticates, SLURM_CONF for scontrol: each ""
  // takes the environment's (SLURMRESTD_URL, SLURM_REST_USER, SLURM_REST_TOKEN, SLURM_CONF,
  // as scripts/slurm-lab.sh's env.sh sets them).
  std::string url, user, token, conf;
  std::string partition;           // "" : the cluster's default partition
  DurationMs poll_interval = 200;  // how often Slurm's job list is read
  // How many of a cycle's job submissions may be under way at once, each from a thread with
  // a client of its own (the loop thread and submitters - 1 threads); 1: one after another.
  int submitters = 4;
};

struct DaemonOptions {
  std::string data_dir;
  Backend backend = Backend::kLocal;
  SlurmBackendOptions slurm;
  std::string fake_gpus;  // "8xH100": simulated devices; "": this host's GPUs through NVML
  std::string policy = "airtime";
  std::string shim_path;  // the airtime binary that runs `_shim` (default /proc/self/exe)
  DurationMs telemetry_interval = 2 * kSecond;
  DurationMs scrape_interval = 5 * kSecond;
  // The ports of replicas on other hosts (replica_ports.h); on this machine the kernel's.
  PortRange replica_ports;
  // How often the ledger's totals are saved; a kill -9 loses at most this much of them (the
  // next start counts that time as not observed).
  DurationMs ledger_save_interval = 10 * kSecond;
  int max_attempts = 3;  // a job whose process fails this many times has failed
  // A run that fails is not started again before this, doubled with each failure in a row
  // up to restart_backoff_max (EngineOptions::restart_backoff): a service or job whose
  // command fails at once waits out a growing backoff instead of restarting in a tight
  // loop, a new run and run directory each time. 0: restart at once.
  DurationMs restart_backoff = kSecond;
  DurationMs restart_backoff_max = 5 * 60 * kSecond;
  std::string hostname;  // "" : this host's name
  Isolation isolation = Isolation::kOff;
  std::string cgroup_root = kDefaultCgroupRoot;  // cgroup v1 controllers or v2 (run_cgroup.h)
  std::string gpu_devices = "/dev";              // where the GPUs' nvidiaN nodes are
  // Start although the store does not match DATA/store-marks or DATA/runs (it lost its WAL,
  // was emptied or replaced): the loss is recorded in DATA/store-loss.log and the daemon
  // carries on safely (store_marks.h, daemon_store_check.cc). Without it such a start fails.
  bool accept_store_loss = false;
  // Starts pause while DATA's file system has less free space than this (MiB; 0: never).
  int64_t min_free_mib = 100;
  // A run's stdout.log or stderr.log over this (MiB; 0: never) is cut, its tail kept in
  // NAME.1 (log_cap.h); looked at every `disk_check_interval` and when the run ends.
  int64_t max_log_mib = 1024;
  // A workload whose checkpoint directory holds more than this (MiB; 0: no cap on its
  // bytes; -1: half of DATA's file system) is ended as failed, and the directory removed once
  // its runs have stopped (checkpoint_cap.h); looked at every `disk_check_interval` while it
  // has a run.
  int64_t max_checkpoint_mib = -1;
  DurationMs disk_check_interval = kSecond;
  // The 3 a.m. report (GET /v1/holds): the newest closed hold-or-hand-off calls kept (the
  // per-service summaries cover every call), how many of the newest calls are saved in the
  // store for the next daemon, and how often (and at stop). A kill -9 loses at most one
  // interval of scoring; the next start closes the calls that stood at the last save.
  size_t max_hold_calls = 10000;
  size_t saved_hold_calls = 1000;
  DurationMs holds_save_interval = kMinute;
  // Ended workloads whose records stay in memory: the ones that ended last. Older ones are
  // let go and read back from the store when a call names them (daemon_retention.cc), so
  // the daemon's memory grows with its live workloads, not with every workload it ran.
  size_t ended_kept = 1000;
  // The most workloads one tenant may have queued or running at once (0: no limit), as
  // Slurm's MaxSubmitJobs per user: a submission that would pass it is refused whole. It
  // bounds what one tenant's submissions cost everyone else (memory, and the time of every
  // decision cycle, which grows with what waits).
  int64_t max_active_per_tenant = 50000;
  // How long after a reported demand (or a priority change) the cycle that answers it may
  // come (FeedSoon).
  DurationMs soon_cycle_delay = 10;
};

class Daemon final : public ControlPlane {
 public:
  // Opens the store, the GPU inventory and the engine, and recovers what a previous daemon
  // left (see above). The loop does not run until Start().
  static StatusOr<std::unique_ptr<Daemon>> Open(DaemonOptions options);
  ~Daemon() override;

  void Start();
  // Stops the loop; running processes keep running (the next daemon adopts them).
  void Stop();
  // One paragraph on what was found at start (GPUs, recovered workloads, adopted runs).
  const std::string& startup_note() const { return startup_note_; }
  // Whether workloads run isolated; when not, isolation_missing() says why ("" when it was
  // turned off on purpose).
  bool isolating() const { return cgroups_ != nullptr; }
  const std::string& isolation_missing() const { return isolation_missing_; }
  // Where the runs' cgroups go (RunCgroups::Describe), when isolating.
  std::string isolation_cgroups() const { return cgroups_ ? cgroups_->Describe() : ""; }

  // ControlPlane.
  StatusOr<nlohmann::json> Submit(const Caller& caller, std::string_view body,
                                  std::string_view origin) override;
  StatusOr<nlohmann::json> List(const Caller& caller, const ListFilter& filter) override;
  StatusOr<nlohmann::json> Get(const Caller& caller, std::string_view id_or_name) override;
  Status Cancel(const Caller& caller, std::string_view id_or_name) override;
  Status SetPriority(const Caller& caller, std::string_view id_or_name, int priority) override;
  Status ReportDemand(const Caller& caller, std::string_view id_or_name, double rps,
                      std::string_view request_class) override;
  StatusOr<nlohmann::json> Gpus(const Caller& caller) override;
  StatusOr<nlohmann::json> Ledger(const Caller& caller) override;
  StatusOr<nlohmann::json> GpuHistory(const Caller& caller, const HistoryFilter& filter) override;
  StatusOr<nlohmann::json> Holds(const Caller& caller, const HoldsFilter& filter) override;
  StatusOr<nlohmann::json> Events(const Caller& caller, std::string_view id_or_name) override;
  StatusOr<LogChunk> Logs(const Caller& caller, std::string_view id_or_name,
                          const LogQuery& query) override;
  std::string Metrics() override;
  bool Healthy(std::string* why) override;

  // Latencies measured by the loop (benchmarks): event seen -> decision, -> process started.
  LatencyLog latencies();
  // How many workload records the daemon holds in memory (tests, benchmarks): its live
  // workloads and at most DaemonOptions::ended_kept ended ones (beyond that, while a run
  // of one is still being stopped).
  size_t held_workloads();

 private:
  struct WorkloadRec {
    WorkloadRow row;
    std::shared_ptr<const WorkloadSpec> spec;
    WorkloadId eid = kNoWorkload;  // the engine's id
    int32_t attempts = 0;          // runs started (from the store across restarts)
    int32_t failures = 0;          // runs that failed on their own (this daemon's life)
    bool ended_noted = false;      // listed in ended_
    bool counted_active = false;   // in active_of_tenant_ (queued or running)
    // Which demand reports become stored steps (a service's own, and each class's).
    DemandRecorder demand_steps;
    std::map<std::string, DemandRecorder> class_steps;
  };
  struct RunRec {
    RunRow row;
    AllocationId allocation = kNoAllocation;
    bool stopping = false;   // airtime stopped it: its exit is not news for the engine
    bool placed = false;     // the backend confirmed its GPUs (OnPlaced)
    bool launching = false;  // recorded, in pending_launches_, not launched yet
  };
  // A start recorded (its run row and directory committed) and waiting to be launched with
  // the others of its cycle (LaunchPending).
  struct PendingLaunch {
    int64_t run_id = 0;
    LaunchRequest request;
    std::chrono::steady_clock::time_point decided;
  };
  struct PendingSubmit;

  explicit Daemon(DaemonOptions options);
  Status Init();
  Status LockDataDir();
  // Isolation (daemon_isolation.cc).
  Status SetUpIsolation();
  void SecureDataDir();
  Status CheckRunnable(const WorkloadSpec& spec) const;
  Status PrepareIsolatedLaunch(const WorkloadRec& w, const RunRow& run, LaunchRequest* req);
  // The backend (daemon_backend.cc): the GPU inventory, the engine's cluster, the GPU ids
  // and the actuator, chosen once.
  Status OpenLocalBackend(std::string* note);
  Status OpenSlurmBackend(std::string* note);
  // What the backend reported after a wait: the GPUs a run really holds (moved onto in the
  // engine when they differ), the GPUs others' work holds. A placement the engine cannot
  // take yet, because as far as it knows its GPUs are still held (by a run whose end
  // airtime has not seen yet, while Slurm already gave them away), waits, from `since`, for
  // RetryPlacements.
  void OnPlaced(const Placed& placed, TimeMs now, TimeMs since);
  // The waiting placements tried again (after a wait's exits); one that has waited
  // kPlacementPatience is counted not movable.
  void RetryPlacements(TimeMs now);
  // A run that ended while its placement waited: its row records Slurm's GPUs.
  void EndedBeforeItsPlacementMoved(RunRow& row);
  // Counts a run that ended before its placement moved as not movable, and says why.
  void CountEndedUnmoved(int64_t run_id);
  void OnForeign(std::vector<ForeignUse> foreign, TimeMs now);
  // The engine's nodes with a GPU the backend will not start work on go down; the others
  // that were, up.
  void OnUnusable(const std::vector<std::string>& gpus, TimeMs now);
  nlohmann::json BackendView() const;
  Status BuildCluster(std::string* note);
  // The store and its start-up check (daemon_store_check.cc).
  Status OpenStore();
  Status AcceptStoreLoss(const StoreCheck& check, std::string* note);
  // Writes DATA/store-marks from marks_ (after a commit that raised them).
  bool SaveMarks();  // false: not written (said once on stderr)
  // At start, after the backend opened: see daemon_store_check.cc.
  Status CheckUnrecordedRuns();
  // Why starts are paused now ("" : they are not): too little free space in DATA, or a run
  // that could not write its files or its row a moment ago. Pauses or resumes the engine.
  std::string StartsPaused(TimeMs now);
  // A start decision that produced no process through no fault of the workload (no space,
  // store write failed): the engine gets the allocation back, no failure is counted, and
  // starts pause for a while with `why`.
  void NotStarted(RunRec run, WorkloadRec& w, const std::string& why, TimeMs now);
  Status Recover();
  Status RecoverRun(RunRow run, TimeMs now);

  // Runs `task` on the loop thread and waits for it.
  template <typename T>
  T OnLoop(std::function<T()> task);
  void Post(std::function<void()> task);
  void Loop();
  void RunTimers(TimeMs now);

  // Engine driving (loop thread).
  // `seen`: when the daemon learnt of what the event reports (latency figures start there).
  using SteadyTime = std::chrono::steady_clock::time_point;
  void Feed(const Event& event, SteadyTime seen);
  void Feed(const Event& event) { Feed(event, std::chrono::steady_clock::now()); }
  // Feed without acting on the cycle: the engine handles the event, the books and the
  // ledger follow it.
  const CycleResult& Handle(const Event& event);
  // Events of one call that concern several workloads (a service's members): the engine
  // applies each and decides once, after the last, so that it never acts on half of them.
  void FeedTogether(const std::vector<Event>& events);
  // Events of what a tenant may send in a loop, demand reports and priority changes:
  // applied at once, decided on by one cycle at most options_.soon_cycle_delay later, for
  // every such call of that span, so that a loop causes one cycle per delay, not per call.
  void FeedSoon(const std::vector<Event>& events);
  void Act(const CycleResult& cycle, SteadyTime seen);
  // `decided`: when the engine decided it (the cycle's end; for a start deferred until a
  // stopping run left its GPUs, when they were free), for airtime_backend_action_seconds.
  // StartRun records the run and queues its launch; LaunchPending launches what is queued,
  // as one batch (Act and LaunchDeferred call it before they return).
  void StartRun(const Decision& d, SteadyTime decided);
  void LaunchPending();
  void LaunchRefused(RunRec& run, const Status& why);
  bool GpusStillBusy(const Placement& placement) const;
  int FreePort() const;
  // A port for a replica that will be reached at `host` (replica_ports.h): unique among the
  // daemon's replicas and the ports the backend keeps; 0 when none is left.
  int PortFor(const std::string& host);
  // Whether a run of job `w` is being stopped and its process has not exited yet.
  bool PreviousRunStopping(const WorkloadRec& w) const;
  void LaunchDeferred();
  void StopRun(AllocationId allocation, const std::string& reason, SteadyTime decided);
  Status EnsureMps();
  void OnExit(const Exited& exited, TimeMs now);
  void SyncWorkloadStates();
  void AccountValue(TimeMs now);
  // Writes `w`'s row after LetGoIfEnded: a workload that has ended is retired from the
  // backend, joins ended_ and stops counting against its tenant (NoteEnded).
  Status Persist(WorkloadRec& w);
  void LetGoIfEnded(WorkloadRec& w);
  // Retention (daemon_retention.cc): ended workloads beyond options_.ended_kept are let go.
  void NoteEnded(WorkloadRec& w);
  // A workload that has not ended counts towards its tenant's --max-active-per-tenant, from
  // its acceptance (or a restart) until NoteEnded.
  void CountActive(WorkloadRec& w);
  // Lets go of the oldest ended records beyond the retention (a service with variants's
  // members together, once all have ended; none that a live run refers to), and of what
  // the last call read back. Called where no call holds a record: each loop turn, and as
  // each OnLoop task begins.
  void TrimEnded();
  void Evict(int64_t id);
  // A workload's record by id or name: held in memory, or else read back from the store
  // for the call under way (stored_, valid until the next TrimEnded). Null: none.
  WorkloadRec* Lookup(std::string_view id_or_name) const;
  WorkloadRec* Stored(WorkloadRow row) const;
  // The members of the service with model variants named `service`, in variant order
  // (empty: no such service), held or read back.
  std::vector<WorkloadRec*> MembersOf(const std::string& service) const;
  // Whether a new workload may not take `name`: a workload's, or a service's with variants,
  // now or ever (names are unique over the store's life).
  bool NameInUse(const std::string& name) const;
  // A service's new request rate, stored: its row and its demand history (what its
  // forecast starts from after a restart, kept for kDemandHistoryKept; by steps, not by
  // reports: DemandRecorder) in one commit. The caller feeds the engine its Event::Demand.
  // A member of a service split by request class (`classes`: the classes whose rates
  // changed, by name): `rps` is its own demand, and each class's rate becomes its last
  // (Store::SetClassDemand) and joins its history the same way, in the same commit; a
  // restart feeds them back.
  Status RecordDemand(WorkloadRec& w, double rps, TimeMs now,
                      const std::vector<std::pair<std::string, double>>& classes = {});
  // The ledger across restarts (daemon_ledger.cc, ledger_record.h): CarryLedger takes on
  // what the store saved and returns a phrase for the startup note; SaveLedger writes it.
  std::string CarryLedger(TimeMs now);
  void SaveLedger(TimeMs now);
  // The 3 a.m. report across restarts (daemon_holds.cc, hold_record.h), the same way.
  std::string CarryHolds();
  void SaveHolds(TimeMs now);
  // The data directory's file system kept from filling (daemon_disk_caps.cc). Run logs over
  // --max-log-mib are cut (log_cap.h): a run's as it ends, on the loop, and every live run's
  // in a round off the loop (on disk_checker_, every disk_check_interval; its results come
  // back through Post). The same round measures the checkpoint directory of each workload
  // that has a run (checkpoint_cap.h): one over its cap ends its workload as failed, and is
  // removed by a later round once the workload's runs have stopped.
  struct LogCheck {
    int64_t run = 0, workload = 0;
    std::string run_dir;
  };
  void CapLogsOf(const RunRow& run, TimeMs now);
  void CheckDiskUse(TimeMs now);
  StatusOr<std::optional<LogCut>> CutLog(const std::string& run_dir, const char* name,
                                         TimeMs now);  // any thread
  void NoteLogCut(const LogCheck& check, const char* name,
                  const StatusOr<std::optional<LogCut>>& cut);  // on the loop: counts, says
  std::string CheckpointDir(int64_t workload) const;
  Status ResolveCheckpointCap();  // sets checkpoint_cap_bytes_ from the option, at Init
  // On the loop: a workload whose checkpoint directory was found over its cap ends (with its
  // service's other members), unless it has ended meanwhile.
  void EndOverCheckpointCap(int64_t workload, const std::string& why);
  // Ends the workloads `live` (none ended yet) as `state` with `message`: durable first (a
  // crash right after cannot undo it), then the engine hears of it and stops their runs.
  Status EndWorkloads(const std::vector<WorkloadRec*>& live, const std::string& state,
                      const std::string& message, TimeMs now);

  void CommitSubmissions(std::vector<std::shared_ptr<PendingSubmit>> batch);
  // A quantize or finetune job of a later submission that produces a variant of a service
  // accepted earlier (ParseSubmissionYaml left it unlinked): the service's name, its
  // variant's index, and the job's index in its submission.
  struct VariantClaim {
    std::string service;
    size_t variant = 0;
    size_t job = 0;
  };
  // Checks each such job of `specs` against the daemon's services (daemon_produced.cc):
  // the service exists, is the caller's, has variants and has not ended; the variant is
  // one of its own, awaits a producer, and no job has produced it or is producing it (one
  // that failed or was cancelled may be replaced). `claimed`: variants ("service/variant")
  // claimed by jobs this batch accepted before, with the job's name. Errors are 400s naming
  // the job's `produces` field and its value.
  StatusOr<std::vector<VariantClaim>> CheckClaims(
      const Caller& caller, const std::vector<WorkloadSpec>& specs,
      std::map<std::string, std::string>* claimed) const;
  // Names job `job` as the producer of the claimed variant in every member's spec (the
  // engine's too, Engine::SetVariantProducer).
  void ApplyClaim(const VariantClaim& claim, const std::string& job);
  // The variants of services with variants whose producer completed before this daemon
  // started ("service/variant" -> the job): recovery makes them plain variants.
  std::map<std::string, std::string> produced_variants_;
  // by_name_, and members_of_ for a member of a service with model variants.
  void IndexName(const WorkloadRec& w);
  StatusOr<WorkloadRec*> Find(const Caller& caller, std::string_view id_or_name);
  // A service with model variants runs as its members, "<service>/<variant>", one workload
  // each (ExpandVariants); its own name reaches them all. What a call acts on: the workload
  // of that id or name, or the members of the service of that name, in variant order.
  struct Target {
    std::string name;
    bool service = false;  // the members of a service with variants
    std::vector<WorkloadRec*> recs;
    // For a refusal: "'chat' is a service with model variants, run as its members chat/fp16,
    // chat/int8: <what>".
    std::string ServiceNote(const std::string& what) const;
  };
  StatusOr<Target> Resolve(const Caller& caller, std::string_view id_or_name);
  nlohmann::json View(const WorkloadRec& w, bool full) const;
  // A live member's service's mix in words: which variants serve each class, as the
  // policy's explanation gives it ("code: 100% coder; conv: 70% big 30% coder (...)"); for a
  // policy that chooses no mix, the best variant of each class. "": not a live member.
  std::string MixOf(const WorkloadRec& member) const;
  // A service with variants: its members' views summed up (state, replicas, GPUs, runs).
  nlohmann::json ServiceView(const Target& t, bool full) const;
  StatusOr<nlohmann::json> EventsOf(const WorkloadRec& w) const;
  // The engine events that tell service `w` of a request rate: its own demand; for a member
  // of a service with variants, class `c`'s and the member's own demand that follows from
  // it (RealtimeProfile::OwnDemand), as the simulator feeds a member its classes' curves and
  // its own (c < 0: the member's own demand alone).
  std::vector<Event> DemandEvents(const WorkloadRec& w, int c, double rps, TimeMs now) const;
  void SampleTelemetry(TimeMs now);
  void RecordHistory(TimeMs now);  // history_: this sample of every device
  void ScrapeDemand(TimeMs now);
  void ApplyScrape(const std::map<int64_t, ScrapeReading>& readings);
  // A scraped two-or-more-class service's samples that counted for no class: kept for its
  // events (Events), per service name.
  void NoteSkippedSamples(const std::string& service, const ClassSums& skipped,
                          const std::string& label, TimeMs now);
  std::string RenderMetrics();
  // `allocated`: GPUs held, by tenant (RenderMetrics' sums).
  void RenderTenantMetrics(PromWriter& w, std::map<std::string, double> allocated) const;

  DaemonOptions options_;
  std::string startup_note_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<GpuInventory> inventory_;
  std::vector<GpuDevice> devices_;
  std::unique_ptr<Cluster> cluster_;
  std::vector<std::string> uuid_of_gpu_;  // engine GpuIndex -> device UUID
  std::unordered_map<std::string, GpuIndex> gpu_of_uuid_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<airtime::Ledger> ledger_;
  std::unique_ptr<Actuator> actuator_;  // the local Executor

  std::map<int64_t, WorkloadRec> workloads_;       // live, and the ended_kept that ended last
  std::deque<int64_t> ended_;                      // ended ones held, in the order they ended
  mutable std::map<int64_t, WorkloadRec> stored_;  // let go, read back for the call under way
  // What calls read of the services let go, kept across calls (ended_service_specs.h).
  mutable EndedServiceSpecs ended_specs_{kEndedServiceSpecsKept};
  mutable std::set<int64_t> unreadable_;  // submissions that did not parse back, this call
  // Workloads let go, by (state, kind): /metrics counts them with the held ones.
  std::map<std::pair<std::string, std::string>, int64_t> evicted_counts_;
  bool holding_decisions_ = false;  // FeedTogether: the engine applies events, decides nothing
  std::unordered_map<std::string, int64_t> by_name_;
  // Services with model variants: their members' ids by variant, by the service's name.
  std::unordered_map<std::string, std::vector<int64_t>> members_of_;
  std::unordered_map<WorkloadId, int64_t> by_engine_id_;
  std::map<int64_t, RunRec> runs_;  // live runs (launching / running / stopping)
  std::vector<Decision> deferred_;  // starts waiting for a stopping process to free GPUs
  std::vector<PendingLaunch> pending_launches_;  // recorded starts not launched yet
  std::unordered_map<AllocationId, int64_t> run_of_allocation_;
  std::map<std::string, GpuSample> telemetry_;  // by UUID
  // Each telemetry sample's allocated share and busy fraction per device (devices_ order),
  // as minute means over the last day, for GET /v1/gpus/history.
  std::unique_ptr<airtime::GpuHistory> history_;
  // Demand counters' last readings, by workload and request class (-1: the whole sum).
  std::map<std::pair<int64_t, int>, CounterReading> counters_;
  // Scraped samples that counted for no class, by service name (not kept across restarts).
  struct SkippedSamples {
    TimeMs first = 0, last = 0;
    int64_t samples = 0;  // since `first`
    int scrapes = 0;      // scrapes that skipped some
    std::string last_text;
  };
  std::map<std::string, SkippedSamples> skipped_samples_;

  // Timers and counters (loop thread).
  TimeMs engine_wake_ = kNever;
  TimeMs soon_cycle_at_ = kNever;  // FeedSoon's cycle
  // When started replicas finish their cold start: a cycle then, as the simulator has, so
  // that the policy and the SLO books count each replica as serving from that moment, not
  // from whatever event comes next.
  std::set<TimeMs> ready_wakes_;
  TimeMs next_telemetry_ = 0;
  TimeMs next_scrape_ = 0;
  TimeMs next_ledger_save_ = 0;
  TimeMs next_holds_save_ = 0;
  TimeMs next_disk_check_ = 0;
  int64_t log_cuts_ = 0;                     // logs cut over --max-log-mib (CheckDiskUse)
  int64_t log_bytes_dropped_ = 0;            // what those cuts dropped (beyond the tails they kept)
  std::set<std::string> log_cap_warned_;     // logs that could not be cut, said once each
  uint64_t checkpoint_cap_bytes_ = 0;        // --max-checkpoint-mib as resolved at Open (0: none)
  std::set<int64_t> checkpoint_purges_;      // ended over the cap: directories still to remove
  std::set<std::string> checkpoint_warned_;  // could not be measured or removed, said once
  int64_t checkpoint_cap_ends_ = 0;          // workloads ended over the cap
  std::unordered_map<std::string, int64_t> active_of_tenant_;  // CountActive
  // Every hold-or-hand-off call the policy made on services' headroom (CycleResult::holds),
  // scored against the demand that came (AccountValue advances it).
  HoldBook holds_;
  TimeMs value_at_ = 0;
  // Value and service levels, counted by the simulator's one implementation
  // (ledger/metrics.h), fed the same cycles: services earn per request their ready replicas
  // cover, jobs their completion value. Per service since this daemon started: requests
  // that arrived and those served within the SLO.
  std::unique_ptr<airtime::Metrics> books_;
  double value_carried_ = 0;  // value earned under earlier daemons (the saved ledger)
  double ValueEarned() const { return value_carried_ + books_->summary().value; }
  // Of it, by GPU type (GpuTypeId), the same way: the saved ledger's and this daemon's.
  std::vector<double> value_by_type_carried_;
  std::vector<double> ValueByType() const;
  // NVML's power readings per GPU type since this daemon started: sum of watts, count; their
  // mean replaces the catalogue's draw in the type's hourly cost (ledger/costs.h).
  std::vector<std::pair<double, int64_t>> power_by_type_;
  void CountPower(const GpuSample& sample);
  // The ledger's costs so far (call ledger_->Advance and AccountValue first): catalogue
  // rates, with measured power where NVML gave some.
  CostSummary Costs() const;
  uint64_t submissions_total_ = 0, starts_total_ = 0, preemptions_total_ = 0;
  uint64_t failures_total_ = 0;
  // Admission attempts, as Kueue counts them: a workload the cycle started (success), or one
  // it tried to place and left waiting (inadmissible: no room, a policy's refusal such as a
  // quota, no hardware that could ever take it). Work held behind the queue's head or in
  // its restart backoff was not tried.
  uint64_t admitted_total_ = 0, inadmissible_total_ = 0;
  void CountAdmissions(const CycleResult& cycle);
  // The backend's own choice of GPUs (OnPlaced): as the engine decided, moved onto in the
  // engine, or not movable (the engine's state refused; the reason kept).
  uint64_t placements_as_decided_ = 0, placements_moved_ = 0, placements_unmoved_ = 0;
  std::string placement_unmoved_why_;
  struct WaitingPlacement {
    Placed placed;
    TimeMs since = 0;  // when it was first reported
  };
  std::vector<WaitingPlacement> placements_waiting_;
  static constexpr DurationMs kPlacementPatience = 10 * kSecond;
  // GPUs that others' work holds (the backend's TakeForeign), reserved in the engine, and
  // the GPU-seconds they held since this daemon started.
  std::vector<ForeignUse> foreign_;
  std::vector<GpuIndex> foreign_reserved_;
  std::set<NodeIndex> nodes_down_;  // by OnUnusable
  LatencyLog latencies_;
  SteadyTime exit_seen_{};  // when the exits being handled were noticed
  PromHistogram queue_wait_hist_{{1, 5, 15, 60, 300, 900, 3600, 4 * 3600., 24 * 3600.}};
  PromHistogram cycle_hist_{{1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 0.01, 0.05, 0.1}};
  // From the engine's decision to the backend accepting the action (airtime_backend_action_
  // seconds): a start (for Slurm: the job submitted to its nodes), a stop (signalled).
  static std::vector<double> ActionBuckets() {
    return {0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5};
  }
  PromHistogram start_action_hist_{ActionBuckets()};
  PromHistogram stop_action_hist_{ActionBuckets()};
  std::thread scraper_;  // one scrape round at a time, off the loop
  bool scrape_busy_ = false;
  std::thread disk_checker_;  // one round of log and checkpoint checks at a time, off the loop
  bool disk_check_busy_ = false;
  std::mutex log_cut_mu_;  // one cut at a time (CutLog)
  bool mps_started_ = false, mps_warned_ = false;
  int next_replica_port_ = 0;  // where PortFor's next turn through --replica-ports begins
  StoreMarks marks_;           // what DATA/store-marks says (kept in step with the store)
  bool marks_warned_ = false;
  TimeMs demand_pruned_at_ = 0;  // when the demand history was last pruned
  std::string store_loss_note_;  // for the start-up line, after an accepted store loss
  std::string start_pause_;      // why starts are paused now ("" : not paused)
  TimeMs no_space_until_ = 0;    // a run failed for lack of space: paused until then
  std::string no_space_why_;

  // Posting (any thread).
  std::mutex inbox_mu_;
  std::deque<std::function<void()>> inbox_;
  std::vector<std::shared_ptr<PendingSubmit>> submits_;
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_{false};
  std::thread loop_;
  TimeMs started_at_ = 0;      // this daemon's start
  TimeMs ledger_since_ = 0;    // when the ledger began counting (the first daemon's start)
  DurationMs unobserved_ = 0;  // time since then that no daemon counted
  int lock_fd_ = -1;
  std::shared_ptr<const RunCgroups> cgroups_;  // set when isolating
  std::string isolation_missing_;
  TenantUsers tenant_users_;
};

template <typename T>
T Daemon::OnLoop(std::function<T()> task) {
  if (!running_) {  // not started (tests, recovery): the caller is the loop
    TrimEnded();
    return task();
  }
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  Post([this, promise, task = std::move(task)] {
    TrimEnded();
    promise->set_value(task());
  });
  return future.get();
}

}  // namespace airtime
