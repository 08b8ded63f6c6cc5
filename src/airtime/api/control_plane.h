// ControlPlane: what the HTTP API asks of the daemon.
//
// The API layer (http_api.h) authenticates a request, turns it into a call on this
// interface and the answer into an HTTP response; the daemon (airtime/server) implements
// it. Answers are JSON documents in the shapes below (docs/api.md documents them for
// users); errors are Status codes, mapped to HTTP by the API layer:
//   kInvalidArgument -> 400, kUnauthenticated -> 401, kPermissionDenied -> 403,
//   kNotFound -> 404, kAlreadyExists / kFailedPrecondition -> 409,
//   kResourceExhausted -> 413, kUnavailable -> 503, anything else -> 500.
//
// Workload view (List: without "explanation" and "runs"; Get: with them):
//   {"id": 12, "name": "chat", "tenant": "team-a", "kind": "realtime",
//    "state": "queued|running|succeeded|failed|cancelled",
//    "priority": 0, "submitted_at": <ms since epoch>, "started_at": ms|null,
//    "finished_at": ms|null, "exit_code": int|null, "gpus": ["GPU-uuid", ...],
//    "replicas": {"running": 2, "target": 3} (realtime only), "demand_rps": 12.5,
//    "preemptions": 0, "reason": "one line: why it waits / what it does",
//    "explanation": "the engine's full explanation",
//    "runs": [{"id": 3, "replica": 0, "attempt": 1, "state": "running|exited|...",
//              "pid": 1234, "gpus": [...], "started_at": ms, "ended_at": ms|null,
//              "exit_code": int|null, "log_dir": "/data/runs/3", "stop_reason": "..."}]}
// GPUs: {"gpus": [{"index": 0, "uuid": "GPU-...", "model": "NVIDIA H100 80GB HBM3",
//   "type": "H100", "memory_mib": 81559, "mig_mode": false, "fake": true,
//   "utilization": 0.42, "memory_used_mib": 1234, "power_w": 312.5,
//   "processes": [1234], "allocations": [{"workload": 12, "name": "chat",
//   "milli": 1000}]}]}
// Ledger: {"since": ms, "now": ms, "installed_gpu_seconds": 1234.5,
//   "buckets": {"useful": gpu_seconds, "idle_held": ..., ... all nine ...},
//   "value": 12.3, "return_per_gpu_hour": 0.5}
// GpuHistory: see the method below.
// Holds (the 3 a.m. report, ledger/hold_json.h): {"now": ms, "services": {name: summary},
//   "decisions": [call, ...] (the newest `limit`, oldest first; times `t_s` / `until_s` in
//   seconds since the epoch), "decisions_kept": calls kept that match the filter}
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "airtime/base/status.h"

namespace airtime {

// Who is calling, as the API's authentication resolved it.
struct Caller {
  std::string tenant;  // the tenant whose token was presented ("" for the admin)
  bool admin = false;  // the admin token: sees and changes every tenant's workloads
};

struct ListFilter {
  std::string state;   // "" for all; else one state name, or "active" (queued + running)
  std::string kind;    // "" for all
  std::string tenant;  // admin only: "" for all
  int limit = 0;       // 0: no limit; else the most recent `limit`
  int offset = 0;      // skip the `offset` most recent matches first (a page of `limit`)
};

// GET /v1/holds?service=&limit=.
inline constexpr int kDefaultHoldsLimit = 100;
inline constexpr int kMaxHoldsLimit = 10000;
struct HoldsFilter {
  std::string service;             // "" for all (that the caller may see)
  int limit = kDefaultHoldsLimit;  // the newest `limit` calls, 1 to kMaxHoldsLimit
};

// GET /v1/workloads/{id}/logs?run=&stream=&offset=&limit=: a run's output, stdout or stderr.
inline constexpr int64_t kDefaultLogLimit = int64_t{1} << 20;
inline constexpr int64_t kMaxLogLimit = int64_t{16} << 20;
struct LogQuery {
  int64_t run = 0;     // a run of the workload (describe lists them); 0: its latest run
  int64_t offset = 0;  // the first byte; -1: the last `limit` bytes
  int64_t limit = kDefaultLogLimit;  // at most this many bytes, 1 to kMaxLogLimit
  bool stderr_log = false;           // stream=stderr (a local run's stderr.log)
};
struct LogChunk {
  int64_t run = 0;         // 0: the workload has not run yet
  int64_t offset = 0;      // of data's first byte
  int64_t size = 0;        // of the whole log now; offset + data.size() <= size
  bool run_ended = false;  // the run is over: the log will not grow
  std::string data;        // bytes as the workload wrote them (not necessarily UTF-8)
  std::string cut;         // changes each time the daemon cuts the log ("": never cut)
};

// GET /v1/gpus/history?gpu=&minutes=.
inline constexpr int kMaxHistoryMinutes = 1440;
struct HistoryFilter {
  std::string gpu;                   // "" for the cluster only; else a GPU's UUID or index
  int minutes = kMaxHistoryMinutes;  // the last `minutes` one-minute slots, 1 to 1440
};

class ControlPlane {
 public:
  virtual ~ControlPlane() = default;

  // `body` is YAML or JSON (JSON is YAML) in the simulator's workload schema: one workload
  // mapping, a list of them, or {workloads: [...]}; `origin` names it in error messages
  // ("request"). A tenant caller's workloads belong to its tenant (a spec that names another
  // tenant is kPermissionDenied); the admin may name any. All or nothing: on an error no
  // workload of the body is accepted. Once this returns OK the workloads are durable.
  // Answer: {"accepted": [{"id": 12, "name": "chat"}, ...]}.
  virtual StatusOr<nlohmann::json> Submit(const Caller& caller, std::string_view body,
                                          std::string_view origin) = 0;
  // {"workloads": [view, ...], "total": matches before offset and limit} (a tenant sees
  // only its own), in id order.
  virtual StatusOr<nlohmann::json> List(const Caller& caller, const ListFilter& filter) = 0;
  // One workload by id ("12") or name, with explanation and runs.
  virtual StatusOr<nlohmann::json> Get(const Caller& caller, std::string_view id_or_name) = 0;
  virtual Status Cancel(const Caller& caller, std::string_view id_or_name) = 0;
  virtual Status SetPriority(const Caller& caller, std::string_view id_or_name, int priority) = 0;
  // A realtime service's current request rate (requests per second). `request_class`: for a
  // service with model variants whose demand is split by class, the class it is for ("" : the
  // service's one class); an unknown class, or a class for a service without classes, is
  // kInvalidArgument naming it.
  virtual Status ReportDemand(const Caller& caller, std::string_view id_or_name, double rps,
                              std::string_view request_class) = 0;
  virtual StatusOr<nlohmann::json> Gpus(const Caller& caller) = 0;
  virtual StatusOr<nlohmann::json> Ledger(const Caller& caller) = 0;
  // Allocation against measured utilization per minute over the last day (the dashboard):
  // {"step_s", "start", "now", "cluster": {"allocated": [...], "utilization": [...]},
  //  "gpus": [{"index", "uuid", "allocated", "utilization"}]} (server/gpu_history.h); the
  // whole machine for every caller, like Gpus. An unknown GPU is kNotFound.
  virtual StatusOr<nlohmann::json> GpuHistory(const Caller& caller,
                                              const HistoryFilter& filter) = 0;
  // The 3 a.m. report: every hold-or-hand-off call on services' headroom, scored against
  // the demand that came. A tenant sees only its own services' calls and summaries; a
  // service it cannot see (or that made no call) gives an empty answer, not an error.
  virtual StatusOr<nlohmann::json> Holds(const Caller& caller, const HoldsFilter& filter) = 0;
  // The history of one workload, oldest first: {"events": [{"at": ms, "kind":
  // "submitted|started|preempted|stopped|exited|succeeded|failed|cancelled|waiting|running",
  // "run": id|null, "message": "..."}]}: its submission, each run's placement (where, by
  // which policy, after how long a wait) and end (why it stopped: the preemption's reason,
  // or its exit), its final state, and for a live workload its state now.
  virtual StatusOr<nlohmann::json> Events(const Caller& caller, std::string_view id_or_name) = 0;
  // Bytes of one run's log (the workload's stdout, or its stderr: under Slurm both are in
  // the stdout log). A tenant reads only its
  // own workloads'. A workload that has not run yet has an empty log of run 0; a run not of
  // this workload is kNotFound;
  // an offset past the end gives no bytes. The log is opened without following links
  // and must be a regular file: a workload cannot make the daemon read another file.
  virtual StatusOr<LogChunk> Logs(const Caller& caller, std::string_view id_or_name,
                                  const LogQuery& query) = 0;
  // Prometheus text exposition format (version 0.0.4).
  virtual std::string Metrics() = 0;
  // Whether the daemon is serving; `why` says what is wrong when not.
  virtual bool Healthy(std::string* why) = 0;
};

}  // namespace airtime
