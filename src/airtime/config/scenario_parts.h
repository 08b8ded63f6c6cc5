// The parts of a scenario file: one workload, one event, one trace source.
//
// Internal to airtime_config; workload_yaml.h is the public entry point. Workload fields
// (times are durations from the scenario start):
//   name (required), kind (default batch), tenant (default "default"), priority,
//   gpus (default 1), gpu_type (name or list: allowed types), prefer (preferred types),
//   gpu_fraction (0, 1] | mig: <profile>, memory_gb (GPU memory per GPU),
//   locality: node|nvlink|rack|any, cpu (cores), memory_gib (host memory),
//   work | duration (reference work at speed 1.0; not for realtime), speed: {TYPE: s},
//   utilization (0, 1], submit_at | arrival, deadline (absolute) | deadline_after (relative
//   to submission), checkpoint: {interval, restart_cost}, preemptible, preempt_grace,
//   slo: {latency_ms, capacity_rps, min_replicas, max_replicas, cold_start} (realtime),
//   demand: [{at, rps}] (realtime), demand_trace: {format, file, ...} (realtime),
//   value: {per_1k_requests} (realtime) or {on_completion, decay_after_deadline},
//   variants, classes, quality_floor (realtime), produces: {service, variant} (quantize,
//   finetune; linked to its service by LinkProducedVariants).
// Stateless functions.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/config/workload_yaml.h"
#include "airtime/config/yaml_reader.h"
#include "airtime/model/gpu_catalog.h"
#include "airtime/model/interference.h"
#include "airtime/model/workload.h"

namespace airtime::yaml_internal {

// Parses one workload mapping (the `index`-th of its document, for messages when it has no
// name); a demand_trace is appended to `traces` with option target=<name>. The spec has
// passed ValidateSpec, with source "FILE:LINE". `family` must be one of `families`.
StatusOr<WorkloadSpec> ParseWorkload(const YamlFile& file, const YAML::Node& node, size_t index,
                                     int line_hint, const GpuCatalog& catalog,
                                     const InterferenceModel& families,
                                     std::vector<TraceSource>* traces);

// Parses one entry of `events:`.
StatusOr<ScenarioEvent> ParseEvent(const YamlFile& file, const YAML::Node& node, size_t index,
                                   int line_hint);

// Parses one trace mapping {format, file (or path), other scalar options}; `subject` and
// `field` name it in messages ("trace #2", "" or "workload 'x'", "demand_trace").
StatusOr<TraceSource> ParseTrace(const YamlFile& file, const YAML::Node& node,
                                 const std::string& subject, const std::string& field,
                                 int line_hint);

}  // namespace airtime::yaml_internal
