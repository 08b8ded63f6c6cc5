// Workload YAML: loading a scenario (workloads, timed events, trace sources) from YAML.
//
// A file holds one or more YAML documents (separated by `---`), merged in order. Each
// document is one workload mapping, a list of workloads, or a mapping with any of the keys
// `workloads:` (a list), `events:` (a list) and `traces:` (a list). Times are durations from
// the start of the scenario ("90s", "15m", "2h", "1d" or a bare number of seconds).
//
//   - name: chat-svc          # required, unique across the files loaded
//     kind: realtime          # realtime|batch|training|finetune|quantize|embed|eval (default
//     batch) gpus: 1                 # GPUs (default 1); gpu_type: H100 or [H100, A100-80GB] slo:
//     {latency_ms: 200, capacity_rps: 50, min_replicas: 1, max_replicas: 8} demand: [{at: 0, rps:
//     10}, {at: 1h, rps: 50}]
//   events:
//     - {at: 6h, node_down: h100-2}
//     - {at: 3h, priority: {workload: x, value: 5}}
//     - {at: 4h, cancel: x}
//   traces:
//     - {format: azure, file: data/azure_code.csv, scale: 2}
//
// The full list of workload fields is in scenario_parts.h. Every error is an
// InvalidArgument "FILE:LINE: workload 'x': field 'f': expected ..., found ...", and every
// spec passes ValidateSpec with spec.source = "FILE:LINE". Stateless functions: safe to
// call from any thread.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/base/time.h"
#include "airtime/model/cluster.h"
#include "airtime/model/gpu_catalog.h"
#include "airtime/model/interference.h"
#include "airtime/model/workload.h"

namespace airtime {

// A change at a point of scenario time that is not a workload arrival.
struct ScenarioEvent {
  enum Type { kNodeDown, kNodeUp, kPriority, kCancel };

  TimeMs at = 0;
  Type type = kNodeDown;
  std::string target;  // node name (kNodeDown, kNodeUp) or workload name
  int priority = 0;    // kPriority: the new priority
  std::string source;  // "file.yaml:12"
};
const char* ScenarioEventTypeName(ScenarioEvent::Type t);  // "node_down", ...

// A trace file that adds workloads (or, with option target=<workload>, the demand curve of
// one realtime workload). The trace importers interpret format and options.
struct TraceSource {
  std::string format;                          // "azure", "philly", ...
  std::string path;                            // resolved relative to the YAML file's folder
  std::map<std::string, std::string> options;  // the other scalar keys, as text
  std::string source;                          // "file.yaml:12"
};

struct Scenario {
  std::vector<WorkloadSpec> workloads;  // in file order
  std::vector<ScenarioEvent> events;    // sorted by time, file order among equal times
  std::vector<TraceSource> traces;      // in file order
};

// Parses workload YAML `text`; `filename` names the file in messages and is the base for
// relative trace paths. A workload's `family` must be one `families` knows (null: the
// built-in Gavel table, InterferenceModel::Gavel()).
StatusOr<Scenario> ParseWorkloadYaml(std::string_view text, std::string_view filename,
                                     const GpuCatalog& catalog = GpuCatalog::Builtin(),
                                     const InterferenceModel* families = nullptr);

// As ParseWorkloadYaml, for one submission to the daemon: a quantize or finetune job whose
// `produces.service` names no workload of `text` stays unlinked (its ProducedVariant kept,
// no variant's produced_by set), for the daemon to link to a service it accepted in an
// earlier submission (Daemon::CheckClaims). Everything else is checked alike.
// `sim --from-data` reads a daemon's stored submissions back with it (another `families`
// table may be given there).
StatusOr<Scenario> ParseSubmissionYaml(std::string_view text, std::string_view filename,
                                       const GpuCatalog& catalog = GpuCatalog::Builtin(),
                                       const InterferenceModel* families = nullptr);

// Reads and parses the file at `path` (NotFound when it cannot be read).
StatusOr<Scenario> LoadWorkloadYaml(const std::string& path,
                                    const GpuCatalog& catalog = GpuCatalog::Builtin(),
                                    const InterferenceModel* families = nullptr);

// Appends `more` to `into`; a workload name present in both is an error naming both
// sources. Events stay sorted by time.
Status MergeScenario(Scenario* into, Scenario more);

// Loads several files into one scenario (names unique across all of them).
StatusOr<Scenario> LoadWorkloadYamlFiles(const std::vector<std::string>& paths,
                                         const GpuCatalog& catalog = GpuCatalog::Builtin(),
                                         const InterferenceModel* families = nullptr);

// Links each quantize or finetune job that `produces` a variant to that variant of its
// service (ModelVariant::produced_by = the job's name), checking what a parser cannot see
// alone: the service is a realtime service with variants among `workloads`, the variant is
// one of its own, no other job produces it, and it is not a variant the service needs from
// the start (RealtimeProfile::WhyNotProduced). Errors carry the "FILE:LINE" of the job's
// `produces.service` or `produces.variant`. ParseWorkloadYaml, LoadWorkloadYaml and
// LoadWorkloadYamlFiles call it (the last once every file is in: a job may produce a variant
// of a service in another file).
// The index of the variant job's `p` names among `rt`'s variants, or the reason to refuse
// its `produces.variant` (no location): "expected one of the variants of 'chat' (fp16,
// int8), found 'int4' (did you mean 'int8'?)".
StatusOr<size_t> FindProducedVariant(const RealtimeProfile& rt, const ProducedVariant& p);
// `services_elsewhere`: a job whose service names no workload of `workloads` stays unlinked
// (ParseSubmissionYaml) instead of being refused.
Status LinkProducedVariants(std::vector<WorkloadSpec>* workloads, bool services_elsewhere = false);

// Checks what a parser cannot see alone: node events name nodes of `cluster`, and priority
// and cancel events name workloads of the scenario. Call it once trace workloads have been
// added to scenario.workloads. Errors carry the event's "FILE:LINE".
Status CheckEventTargets(const Scenario& scenario, const Cluster& cluster);

}  // namespace airtime
