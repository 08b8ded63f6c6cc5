// WorkloadSpec: what a user asks airtime to run, for all seven kinds of GPU work.
//
// A spec is immutable input: its shape (what it needs of each GPU, how many, where), how
// much work it is, its deadline or latency target, how it survives preemption, who owns it
// and what finishing it is worth. Runtime state (where it runs, how far it got) lives in
// the engine, never here. Plain value type.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/base/time.h"
#include "airtime/model/gpu_catalog.h"
#include "airtime/model/host_limits.h"

namespace airtime {

enum class WorkloadKind : uint8_t {
  kRealtime,  // latency-bound service with replicas and a demand curve
  kBatch,     // batch inference: throughput, deadline in hours
  kTraining,  // long, gang, checkpoints
  kFinetune,
  kQuantize,  // much memory, briefly
  kEmbed,     // embedding generation
  kEval,      // model evaluation
};
inline constexpr int kWorkloadKindCount = 7;
const char* KindName(WorkloadKind k);
StatusOr<WorkloadKind> ParseKind(std::string_view s);
// Inference-side kinds (realtime, batch, embed, eval) versus training-side ones.
bool IsInferenceKind(WorkloadKind k);

// How a workload uses each GPU it is given.
enum class ShareMode : uint8_t {
  kWhole,     // the whole GPU
  kMig,       // one MIG instance of a named profile
  kFraction,  // a share of a GPU (gpu_milli of 1000), time-sliced or MPS
};
const char* ShareModeName(ShareMode m);

// Where the GPUs of a multi-GPU workload must sit.
enum class Locality : uint8_t { kAny, kNode, kNvlinkDomain, kRack };
const char* LocalityName(Locality l);

struct Shape {
  int gpu_count = 1;  // 0: a host-only task (CPU and memory on a GPU node, as in openb)
  ShareMode mode = ShareMode::kWhole;
  int gpu_milli = 1000;                    // kFraction: share of one GPU, 1..1000
  std::string mig_profile;                 // kMig: e.g. "3g.40gb"
  double memory_gb = 0;                    // GPU memory needed on each GPU (0: any)
  std::vector<GpuTypeId> allowed_types;    // empty: any type
  std::vector<GpuTypeId> preferred_types;  // tried first when placement has a choice
  bool gang = true;                        // all GPUs start together (always true for now)
  // Elastic gang: > 0 lets the work start on as few as min_gpus GPUs (progress scales
  // with the GPUs it holds) and be resized up to gpu_count later. 0: rigid.
  int min_gpus = 0;
  Locality locality = Locality::kNode;
  int64_t cpu_milli = 0;   // host CPU on the node, per workload (0: none)
  int64_t memory_mib = 0;  // host memory on the node, per workload (0: none)

  bool AllowsType(GpuTypeId t) const;
  // GPU capacity in milli-GPUs: count x milli (a MIG slice counts its compute sevenths).
  int64_t TotalMilli(const GpuCatalog& catalog) const;
  // "4 x A100-80GB whole, one node" / "1 x 0.25 GPU (any type)": for explanations.
  std::string Describe(const GpuCatalog& catalog) const;
};

// What finishing (or serving) the workload is worth, in the owner's value units.
struct ValueModel {
  double per_1k_requests = 0;  // realtime: per 1,000 requests served within the SLO
  double on_completion = 0;    // other kinds: paid when the work completes
  // After the deadline the completion value decays linearly to zero over this span
  // (0: drops to zero at once; kNever: no decay).
  DurationMs decay_after_deadline = kNever;

  // Value of completing at `t` given an optional deadline.
  double CompletionValue(TimeMs t, std::optional<TimeMs> deadline) const;
};

// A point of a realtime demand curve: from `at` on, requests arrive at `rps`.
struct DemandPoint {
  TimeMs at = 0;
  double rps = 0;
};

// RealtimeProfile::max_replicas when the service declares none.
inline constexpr int kUnboundedReplicas = 1 << 20;

// The longest single argument or NAME=VALUE of the environment Linux passes to a program
// (MAX_ARG_STRLEN, 128 KiB with its NUL): a longer one would fail every start with E2BIG,
// so a submission with one is refused. And the most variables a workload's `env` may set.
inline constexpr size_t kMaxExecString = 128 * 1024 - 1;
inline constexpr size_t kMaxEnvVars = 4096;
// The most a command's arguments and env may take in all (each with its NUL): Linux's limit
// for both together is about 2 MiB, and airtime adds variables of its own.
inline constexpr size_t kMaxExecTotal = 1 << 20;

// The most a workload may be worth: on completion, or per 1,000 requests served (sums of
// such values over any replay stay finite; 1e308 once made the return inf and the bound
// NaN).
inline constexpr double kMaxValue = 1e12;

// The highest request rate a service's demand may be given (a billion a second, beyond any
// service): it keeps every count of requests built from it finite.
inline constexpr double kMaxRps = 1e9;

// Replicas of `per_replica` requests/s each that serve `rps`: ceil(rps / per_replica), in
// [0, kUnboundedReplicas]. Counted in double and bounded before it becomes an int, so that a
// tenant's demand of any size (or a tiny throughput) cannot overflow it (0 for no demand or
// a throughput <= 0).
inline int ReplicasForRate(double rps, double per_replica) {
  if (!(per_replica > 0) || !(rps > 0)) return 0;
  const double n = std::ceil(rps / per_replica - 1e-9);
  return n >= kUnboundedReplicas ? kUnboundedReplicas : static_cast<int>(std::max(0.0, n));
}
// The most model variants and request classes one service may declare. The policy plans a
// service's mix every cycle with a search whose work grows with variants squared times
// classes (VariantMix), so a file or a tenant must not be able to ask for thousands.
inline constexpr size_t kMaxVariants = 8;
inline constexpr size_t kMaxClasses = 8;

// One class of a realtime service's requests (code completion, conversation): its own demand
// curve. Only services with variants split their demand by class.
struct RequestClass {
  std::string name;
  std::vector<DemandPoint> demand;  // sorted by time
  // Its rates seen before the engine met the service (a daemon's restart carries them over
  // from its store), sorted by time, all before the service's arrival, as
  // RealtimeProfile::history is for the whole service. Not part of a workload file.
  std::vector<DemandPoint> history = {};
};

// One model that can serve a realtime service: a large generalist, a quantized copy, a small
// specialist for one class of requests. Each variant has its own replica shape, throughput
// per GPU type, cold start and quality; the policy chooses how many replicas of each run.
struct ModelVariant {
  std::string name;
  Shape shape;  // one replica; allowed types: those it has a throughput for
  // Requests/s one replica serves within the SLO, per GPU type it may run on.
  std::vector<std::pair<GpuTypeId, double>> throughput_rps;
  DurationMs cold_start = 0;
  double quality = 1.0;      // (0, 1], relative to the service's best variant
  std::vector<int> classes;  // indices into RealtimeProfile::classes; empty: every class
  int max_replicas = kUnboundedReplicas;
  // The job that makes this variant (a quantize or finetune job's WorkloadSpec::produces;
  // the loader links the two): the variant cannot run until that job has completed. "":
  // available from the start (unless awaits_producer).
  std::string produced_by;
  // Declared as made by a quantize or finetune job that may come later (a later submission
  // to the daemon): with no produced_by yet, the variant waits for one (it cannot run).
  bool awaits_producer = false;
  // What the daemon runs for one replica of this variant (its model's server): the
  // program and its arguments, and variables added to the service's environment (a name
  // the service sets too takes the variant's value). No command: the service's command.
  std::vector<std::string> command;
  std::vector<std::pair<std::string, std::string>> env;

  bool Serves(int request_class) const;
  // 0 on a type it has no throughput for.
  double ThroughputOn(GpuTypeId type) const;
  // The lowest throughput over its types: what one replica serves wherever it lands.
  double PlanningThroughput() const;
};

struct RealtimeProfile {
  double latency_slo_ms = 0;
  double capacity_rps = 0;  // requests/s one replica serves within the SLO
  int min_replicas = 0;
  int max_replicas = kUnboundedReplicas;  // kUnboundedReplicas: none declared
  DurationMs cold_start = 0;              // model load before a new replica serves
  std::vector<DemandPoint> demand;        // sorted by time
  // Demand seen before the engine met the service (a daemon's restart carries it over from
  // its store), sorted by time, all before the service's arrival: its forecast and its
  // scale-down window start from it. Not part of a workload file.
  std::vector<DemandPoint> history;

  // Model variants (issue 22). A service that declares them is expanded before the engine
  // sees it (ExpandVariants) into one realtime workload per variant, its members, named
  // "<service>/<variant>"; each member carries the whole list, the classes and the floor.
  std::vector<ModelVariant> variants;
  // The service's request classes, each with its own demand curve; a service with variants
  // and no classes has one class, "all", whose curve is `demand`.
  std::vector<RequestClass> classes;
  // The mean quality of the requests served must not fall below this (0: no floor).
  double quality_floor = 0;
  // A member: the index of its variant in `variants`, and the service's name. -1: not one.
  int variant = -1;
  std::string group;

  bool is_member() const { return variant >= 0; }
  // The variant a policy that knows nothing of variants serves class `c` with: the one of
  // highest quality that serves it (the first among equals; -1: none).
  int DefaultVariantFor(int c) const;
  // Class `c`'s demand at time `t` (0 before its first point).
  double ClassRpsAt(int c, TimeMs t) const;
  // A member's own demand when its service's classes see `class_rps` (one rate per class):
  // the sum over the classes it serves by default, as ExpandVariants sums their curves into
  // its `demand` (what a policy that knows nothing of variants scales it by).
  double OwnDemand(const std::vector<double>& class_rps) const;

  // Replicas needed to serve `rps` within the SLO, clamped to [min, max].
  int ReplicasFor(double rps) const;
  // Why variant `v` may not wait for a job to produce it: it is the variant a policy that
  // knows nothing of variants serves some class with (DefaultVariantFor), so the service
  // would have nothing to serve that class with until then. "": it may.
  std::string WhyNotProduced(size_t v) const;
};

// A variant that work makes (issue 22): a `quantize` job names the quantized copy it
// produces, a `finetune` job the specialist. Once the job completes, the service's variant
// of that name may run (ModelVariant::produced_by names the job).
struct ProducedVariant {
  std::string service;  // a realtime service with variants
  std::string variant;  // the name of one of its variants
  // "FILE:LINE" of the `produces.service` and `produces.variant` fields, for messages.
  std::string service_source, variant_source;

  bool empty() const { return service.empty(); }
};

// Why a workload of `kind` cannot produce a variant: "" for quantize and finetune jobs.
std::string WhyKindCannotProduce(WorkloadKind kind);

// How the daemon runs a workload on this host; the simulator ignores it.
struct ExecSpec {
  std::vector<std::string> argv;  // program and arguments, executed directly (never a shell)
  std::vector<std::pair<std::string, std::string>> env;  // added to the process environment
  std::string workdir;                                   // "" : the run's own directory
  // Realtime services: where each replica publishes its load, scraped by the daemon from
  // http://127.0.0.1:<replica port><metrics_path>. The named metrics are summed over the
  // replicas. A "counter" of requests gives the request rate by its increase per second; a
  // "gauge" of requests in flight (vLLM's num_requests_running + waiting) gives it by
  // Little's law: rate = in flight / latency SLO. A service of several request classes may
  // name the label that carries the class (`class_label`): the samples are then summed per
  // value of that label, one rate per class ("": the old sum, each member its own).
  std::string metrics_path;
  std::vector<std::string> demand_metrics;
  std::string demand_class_label;
  bool demand_is_counter = false;
  bool wants_port = false;  // realtime: each replica gets a port in PORT / AIRTIME_PORT

  bool empty() const { return argv.empty(); }
};

// Whether `name` is a Prometheus label name a service may split its scraped demand by:
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved for Prometheus's own).
bool IsDemandLabelName(std::string_view name);

// Work assumed for a workload that runs a command but states no duration: the daemon runs it
// until its process exits, and the engine plans with this estimate.
inline constexpr double kDefaultCommandWorkSeconds = 3600;

struct WorkloadSpec {
  std::string name;
  WorkloadKind kind = WorkloadKind::kBatch;
  std::string tenant = "default";
  int priority = 0;  // larger runs first where a policy uses priority
  Shape shape;

  // Work, in seconds of execution at relative speed 1.0 (an A100-80GB); a GPU type of
  // speed s takes work/s. Realtime services run until cancelled and have no work amount.
  double work_seconds = 0;
  std::vector<std::pair<GpuTypeId, double>> speed_overrides;  // per-type speed for this job
  double utilization = 1.0;  // fraction of held GPU time the work actually computes
  // Model family for the interference model (model/interference.h), as the table spells
  // it; "" : unknown.
  std::string family;

  TimeMs submit_at = 0;
  std::optional<TimeMs> deadline;
  DurationMs checkpoint_interval = 0;  // 0: no checkpoints, preemption loses everything
  DurationMs restart_cost = 0;         // time to resume from a checkpoint
  DurationMs preempt_grace = 30 * kSecond;
  bool preemptible = false;

  RealtimeProfile realtime;  // kind == kRealtime only
  ProducedVariant produces;  // kind == kQuantize or kFinetune only; empty: none
  ValueModel value;
  ExecSpec exec;                // the daemon: what to run (empty in simulations)
  bool work_estimated = false;  // work_seconds is kDefaultCommandWorkSeconds, not stated

  std::string source;  // "file.yaml:12" or "philly.csv:88", for messages
  // From a YAML file: the line each top-level field is written on (merged ones included).
  std::vector<std::pair<std::string, int>> field_lines;

  // "file.yaml:15", where `field` ("workdir", "env.PATH", "classes[0].name") is written:
  // its top-level field's line when known, else the workload's `source`.
  std::string SourceOf(std::string_view field) const;

  double SpeedOn(GpuTypeId t, const GpuCatalog& catalog) const;
  // Wall time to finish `work` seconds of reference work on type `t`.
  DurationMs RunTimeOn(GpuTypeId t, double work, const GpuCatalog& catalog) const;
  bool is_service() const { return kind == WorkloadKind::kRealtime; }
};

// The members of a service with variants (RealtimeProfile::variants), one realtime workload
// per variant, in the variants' order: named "<service>/<variant>", with the variant's shape,
// cold start and planning throughput as capacity_rps, `group` the service's name and
// `variant` its index. A member's own `demand` is the demand of the classes it serves by
// default (DefaultVariantFor), so that a policy that knows nothing of variants runs the best
// one for every class; the service's min_replicas go to the member that serves the most
// classes by default, the others have none. A member runs its variant's command where the
// variant has one (ModelVariant::command, env), else the service's. A service without
// variants comes back as it is.
std::vector<WorkloadSpec> ExpandVariants(const WorkloadSpec& service);

// Why `s` may not split its scraped demand by the label exec.demand_class_label: it is no
// label name (IsDemandLabelName), or `s` is not a service of several request classes. "":
// it may, or it names no label.
std::string WhyNotClassLabel(const WorkloadSpec& s);
// Every workload of `workloads` in order, each service with variants replaced by its members:
// what the simulator and the daemon run (the daemon's store indexes workloads in this order).
std::vector<WorkloadSpec> ExpandAllVariants(std::vector<WorkloadSpec> workloads);

// The sum of several step curves (each sorted by time), as one sorted step curve.
std::vector<DemandPoint> SumCurves(const std::vector<const std::vector<DemandPoint>*>& curves);

// Checks the cross-field rules a loader cannot see field by field (fraction within 1..1000,
// MIG profile known on at least one allowed type, realtime capacity > 0, ...). The message
// names the field.
Status ValidateSpec(const WorkloadSpec& spec, const GpuCatalog& catalog);

}  // namespace airtime
