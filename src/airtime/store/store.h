// Store: the daemon's durable state in an embedded SQLite database (WAL mode).
//
// What survives a crash of the daemon: every accepted submission (its original text, so a
// restart re-parses exactly what was accepted), one row per workload (state, priority,
// last reported demand, outcome), services' demand histories (and, for a service split by
// request class, each class's history and last rate), one row per run (a process the
// executor launched or was about to launch: its GPUs, pid and process identity, run
// directory, outcome), and a few key/value facts (meta). The daemon writes a run row in
// state "launching" and commits BEFORE it starts the process, so a
// restart knows every process that may exist.
//
// Durability: journal_mode=WAL, synchronous=NORMAL (a committed transaction survives a
// crash of the process; a power loss may lose the last ones), busy_timeout set.
// Not thread-safe: one thread (the daemon's event loop) uses a Store.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/base/time.h"

namespace airtime {

struct SubmissionRow {
  int64_t id = 0;  // assigned by AddSubmission
  std::string tenant;
  std::string body;    // the request body as accepted (YAML or JSON)
  std::string origin;  // "request", "demo.yaml", for messages
  TimeMs at = 0;
};

struct WorkloadRow {
  int64_t id = 0;  // assigned by AddWorkload; the workload's id in the API
  int64_t submission_id = 0;
  int32_t index = 0;  // which workload of the submission's body (0-based, in parse order)
  std::string name;   // unique among all workloads ever accepted
  std::string tenant;
  std::string kind;
  std::string state = "queued";  // queued | running | succeeded | failed | cancelled
  int32_t priority = 0;          // current priority (a change overrides the spec's)
  TimeMs submitted_at = 0;
  std::optional<TimeMs> started_at;
  std::optional<TimeMs> finished_at;
  std::optional<int32_t> exit_code;
  std::string message;    // the last outcome in words ("exited with status 1", "cancelled")
  double demand_rps = 0;  // realtime: last reported request rate
  TimeMs demand_at = 0;
  int32_t preemptions = 0;
};

struct RunRow {
  int64_t id = 0;  // assigned by AddRun
  int64_t workload_id = 0;
  int32_t replica = 0;              // realtime replicas: which one; others 0
  int32_t attempt = 1;              // 1 for the first run of a workload, +1 per restart
  std::vector<std::string> gpus;    // GPU (or MIG) UUIDs in CUDA_VISIBLE_DEVICES order
  int32_t share_milli = 1000;       // < 1000: a fraction of one GPU (MPS)
  std::string state = "launching";  // launching | running | exited | abandoned
  int64_t pid = 0;                  // the run's supervisor process (0 until known)
  int64_t start_ticks = 0;          // its start time, /proc/PID/stat field 22
  std::string boot_id;              // /proc/sys/kernel/random/boot_id when it started
  TimeMs started_at = 0;
  std::optional<TimeMs> ended_at;
  std::optional<int32_t> exit_code;  // 128+N for death by signal N
  std::string run_dir;               // logs, exit file, claim file
  std::string stop_reason;           // why airtime stopped it ("preempted: ...", "cancelled")
  int64_t port = 0;                  // realtime replicas: the port given to it (0: none)
  int64_t slurm_job = 0;             // the Slurm backend's job id (0: a local process)
  std::string placed;                // where it went and why, as the daemon started it
};

// The last rate reported for one request class of a service that splits its demand by class
// (RealtimeProfile::classes), kept per member workload.
struct ClassDemandRow {
  std::string request_class;  // the class's name
  double rps = 0;
  TimeMs at = 0;  // when it was reported
};

// One start of a daemon on the store: what it ran, so that `airtime sim --from-data` can
// replay the store on the same cluster and compare with the same policy.
struct DaemonStartRow {
  TimeMs at = 0;
  std::string policy;             // the policy spec it ran ("airtime")
  std::string cluster;            // its cluster as a cluster file (config/cluster_yaml.h)
  std::vector<std::string> gpus;  // GPU UUIDs in the cluster's GPU order
};

// A node that became unusable ("down") or usable again ("up"), by its name in the cluster.
struct NodeEventRow {
  TimeMs at = 0;
  std::string node;
  std::string state;  // down | up
};

// What the store says about its own extent, compared at start with the marks kept outside
// the database (store_marks.h) and with the run directories.
struct StoreExtent {
  std::string store_id;  // random, made when the database was created
  int64_t sequence = 0;  // the number of BumpSequence calls committed
  int64_t max_submission = 0, max_workload = 0, max_run = 0;  // highest ids (0: none)
  std::vector<int64_t> run_ids;                               // every run's id, ascending
  // Ids handed out are above these; run directories up to `run_floor` that the store does
  // not know were accepted as lost (RaiseIdFloors).
  int64_t submission_floor = 0, workload_floor = 0, run_floor = 0;
};

// Which workloads ListWorkloads gives: "" matches any tenant, kind or state; state "active"
// matches queued and running. The page: the `limit` matches (0: all) after the `offset`
// newest.
struct WorkloadQuery {
  std::string tenant, kind, state;
  int64_t offset = 0, limit = 0;
};
struct WorkloadPage {
  std::vector<WorkloadRow> rows;  // newest (highest id) first
  int64_t total = 0;              // every match, not only the page's
};

// A store id: 1 to 64 hex digits.
bool IsStoreId(std::string_view id);

// The store's file in the data directory (with SQLite's -wal and -shm beside it).
inline constexpr char kStoreFileName[] = "airtime.db";

class Store {
 public:
  // Opens (creating if needed) `dir`/airtime.db; creates `dir` when missing. Fails with a
  // message naming the path when the directory or database cannot be used, or when the
  // database was written by a newer schema version.
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& dir);
  // Opens `dir`/airtime.db for reading only, while a daemon may be writing it: it creates
  // nothing, migrates nothing, takes no lock a writer would wait on (Transaction is then a
  // read snapshot) and never writes (writes fail). Fails naming the file when it is
  // missing, empty, not a database, of a newer schema or of one older than version 4.
  static StatusOr<std::unique_ptr<Store>> OpenReadOnly(const std::string& dir);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Runs `body` in one transaction (BEGIN IMMEDIATE .. COMMIT); a non-OK status from
  // `body` or from SQLite rolls everything back and is returned (an exception from `body`
  // also rolls back, then propagates). Nesting is not allowed: kFailedPrecondition.
  Status Transaction(const std::function<Status()>& body);

  // Writes outside Transaction are committed one by one. Foreign keys are enforced: a
  // workload's submission_id and a run's workload_id must name existing rows (else
  // kInvalidArgument). Updates of an id that does not exist give kNotFound.
  StatusOr<int64_t> AddSubmission(const SubmissionRow& row);
  // kAlreadyExists naming the name when a workload of that name exists.
  StatusOr<int64_t> AddWorkload(const WorkloadRow& row);
  Status UpdateWorkload(const WorkloadRow& row);  // by id; every column but id
  StatusOr<int64_t> AddRun(const RunRow& row);
  Status UpdateRun(const RunRow& row);  // by id

  StatusOr<SubmissionRow> GetSubmission(int64_t id);
  // All workloads (by id); `active_only`: state queued or running.
  StatusOr<std::vector<WorkloadRow>> LoadWorkloads(bool active_only);
  // All runs (by id); `active_only`: state launching or running.
  StatusOr<std::vector<RunRow>> LoadRuns(bool active_only);
  StatusOr<std::vector<RunRow>> RunsOf(int64_t workload_id);
  bool NameTaken(const std::string& name);
  // What a daemon keeps no record of in memory (an ended workload beyond its retention) is
  // read back by these. One workload by id or by name (nullopt: none).
  StatusOr<std::optional<WorkloadRow>> GetWorkload(int64_t id);
  StatusOr<std::optional<WorkloadRow>> GetWorkloadNamed(const std::string& name);
  // The workloads whose names begin with `prefix` (by id): "chat/" finds the members of the
  // service chat with model variants. The name's index answers it.
  StatusOr<std::vector<WorkloadRow>> WorkloadsNamedFrom(const std::string& prefix);
  // The `limit` ended workloads (succeeded, failed, cancelled) that ended last, by id.
  StatusOr<std::vector<WorkloadRow>> LoadEndedWorkloads(int64_t limit);
  // Every workload of one kind ("quantize"), by id.
  StatusOr<std::vector<WorkloadRow>> LoadWorkloadsOfKind(const std::string& kind);
  StatusOr<WorkloadPage> ListWorkloads(const WorkloadQuery& query);
  // How many workloads there are of each (state, kind).
  StatusOr<std::map<std::pair<std::string, std::string>, int64_t>> CountWorkloads();
  // A service's demand history: steps of its request rate (ms since the epoch, requests/s:
  // from `at` on, until the next step), read back by time from `since` on. AddDemand adds a
  // step; RaiseDemand sets the rate of the step that began at `at` (the daemon joins reports
  // that come close together into one step at their highest rate, demand_recorder.h).
  // PruneDemand drops what is older than `before` for every workload, the classes'
  // histories with it.
  Status AddDemand(int64_t workload_id, int64_t at, double rps);
  Status RaiseDemand(int64_t workload_id, int64_t at, double rps);
  StatusOr<std::vector<std::pair<int64_t, double>>> DemandOf(int64_t workload_id, int64_t since);
  Status PruneDemand(int64_t before);
  // A request class's rate reported at `at` (ClassDemandRow): SetClassDemand makes it the
  // class's last rate, one per workload and class (a new one replaces the old). Each class
  // has a history of steps as a service has (AddClassDemandStep, RaiseClassDemandStep), which
  // PruneDemand prunes with the rest. ClassDemandOf reads a workload's last rates, by class
  // name; ClassDemandHistoryOf its history from `since` on, by time. A read-only store of an
  // older schema has neither (version 5 or older) or no history (version 6): empty.
  Status SetClassDemand(int64_t workload_id, const std::string& request_class, double rps,
                        int64_t at);
  Status AddClassDemandStep(int64_t workload_id, const std::string& request_class, int64_t at,
                            double rps);
  Status RaiseClassDemandStep(int64_t workload_id, const std::string& request_class, int64_t at,
                              double rps);
  StatusOr<std::vector<ClassDemandRow>> ClassDemandOf(int64_t workload_id);
  StatusOr<std::vector<ClassDemandRow>> ClassDemandHistoryOf(int64_t workload_id, int64_t since);

  // Each daemon start (by time), and each node event (by time). A read-only store of schema
  // version 4 has neither: empty.
  Status AddDaemonStart(const DaemonStartRow& row);
  StatusOr<std::vector<DaemonStartRow>> DaemonStarts();
  Status AddNodeEvent(const NodeEventRow& row);
  StatusOr<std::vector<NodeEventRow>> NodeEvents();

  Status SetMeta(const std::string& key, const std::string& value);
  std::optional<std::string> GetMeta(const std::string& key);

  StatusOr<StoreExtent> Extent();
  // Adds one to the store's sequence and returns the new value; call it inside the
  // Transaction whose commit the daemon then records in DATA/store-marks.
  StatusOr<int64_t> BumpSequence();
  // From now on (and in every later Store on this file) new submission, workload and run
  // ids are above these, whatever the tables hold. Lowering a floor does nothing.
  Status RaiseIdFloors(int64_t submission, int64_t workload, int64_t run);

  const std::string& path() const { return path_; }
  bool read_only() const;
  int64_t schema_version() const;
  // Whether the database file was missing or empty (0 bytes) when Open found it: a new
  // store, or one that was deleted or emptied.
  bool created() const { return created_; }

 private:
  Store() = default;
  Status LoadIdFloors();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  bool created_ = false;
};

}  // namespace airtime
