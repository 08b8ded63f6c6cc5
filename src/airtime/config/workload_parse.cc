// ParseWorkload: one workload mapping into a validated WorkloadSpec (see scenario_parts.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "airtime/base/strings.h"
#include "airtime/config/scenario_parts.h"
#include "airtime/model/gavel_speed.h"
#include "airtime/model/interference.h"

namespace airtime::yaml_internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<std::string>& WorkloadFields() {
  static const std::vector<std::string> fields = {"name",          "kind",         "tenant",
                                                  "priority",      "gpus",         "gpu_type",
                                                  "prefer",        "gpu_fraction", "mig",
                                                  "memory_gb",     "locality",     "cpu",
                                                  "memory_gib",    "work",         "duration",
                                                  "speed",         "utilization",  "submit_at",
                                                  "arrival",       "deadline",     "deadline_after",
                                                  "checkpoint",    "preemptible",  "preempt_grace",
                                                  "slo",           "demand",       "demand_trace",
                                                  "value",         "elastic",      "command",
                                                  "env",           "workdir",      "metrics",
                                                  "family",        "variants",     "classes",
                                                  "quality_floor", "produces"};
  return fields;
}

// gpu_type / prefer: a name or a list of names, each resolved in the catalogue.
Status ReadTypes(const MapReader& r, std::string_view key, const GpuCatalog& catalog,
                 std::vector<GpuTypeId>* out, std::vector<int>* lines) {
  std::vector<std::pair<std::string, int>> names;
  AIRTIME_RETURN_IF_ERROR(r.StringList(key, &names));
  for (const auto& [name, line] : names) {
    auto id = FindGpuType(catalog, name);
    if (!id.ok()) return r.file().ErrorAt(line, r.FieldName(key) + ": " + id.status().message());
    if (std::find(out->begin(), out->end(), *id) != out->end()) continue;
    out->push_back(*id);
    lines->push_back(line);
  }
  return OkStatus();
}

// command (argv list) and env (mapping): a workload's, or one model variant's.
Status ReadCommand(const MapReader& r, std::vector<std::string>* argv,
                   std::vector<std::pair<std::string, std::string>>* env) {
  if (r.Has("command")) {
    const YAML::Node cmd = r.Get("command");
    if (!cmd.IsSequence())
      return r.Expected("command",
                        "a list: the program and its arguments (airtime runs no shell; write "
                        "[python, train.py, --lr, '0.1'])");
    if (cmd.size() == 0) return r.Expected("command", "a non-empty list");
    std::vector<std::pair<std::string, int>> args;
    AIRTIME_RETURN_IF_ERROR(r.StringList("command", &args));
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].first.size() > kMaxExecString)
        return r.file().ErrorAt(args[i].second,
                                r.FieldName("command") + ": argument " + std::to_string(i + 1) +
                                    " is " + std::to_string(args[i].first.size()) +
                                    " bytes long, over the " + std::to_string(kMaxExecString) +
                                    " Linux passes to a program");
      argv->push_back(args[i].first);
    }
  }
  if (r.Has("env")) {
    auto vars = r.SubAnyKeys("env");
    if (!vars.ok()) return vars.status();
    if (vars->entries().size() > kMaxEnvVars)
      return r.FieldError("env", "sets " + std::to_string(vars->entries().size()) +
                                     " variables, more than the " + std::to_string(kMaxEnvVars) +
                                     " a workload may set");
    for (const auto& e : vars->entries()) {
      if (e.key.empty() || e.key.find('=') != std::string::npos)
        return vars->FieldError(e.key, "expected a variable name without '='");
      if (!e.value.IsScalar()) return vars->Expected(e.key, "a text value");
      if (e.key.size() + 1 + e.value.Scalar().size() > kMaxExecString)
        return vars->FieldError(
            e.key, "is " + std::to_string(e.key.size() + 1 + e.value.Scalar().size()) +
                       " bytes as NAME=VALUE, over the " + std::to_string(kMaxExecString) +
                       " Linux passes to a program");
      env->push_back({e.key, e.value.Scalar()});
    }
  }
  size_t total = 0;
  for (const std::string& arg : *argv) total += arg.size() + 1;
  for (const auto& [name, value] : *env) total += name.size() + value.size() + 2;
  if (total > kMaxExecTotal)
    return r.FieldError(r.Has("env") ? "env" : "command",
                        "the command's arguments and env take " + std::to_string(total) +
                            " bytes, over the " + std::to_string(kMaxExecTotal) +
                            " a program may be given");
  return OkStatus();
}

// command, env, workdir, metrics: what the daemon runs. A service with variants may give
// the command per variant instead (ReadVariants checks that each one has one to scrape).
Status ReadExec(const MapReader& r, ExecSpec* exec) {
  AIRTIME_RETURN_IF_ERROR(ReadCommand(r, &exec->argv, &exec->env));
  AIRTIME_RETURN_IF_ERROR(r.String("workdir", &exec->workdir));
  auto metrics = r.Sub("metrics", {"path", "demand", "type", "class_label"});
  if (!metrics.ok()) return metrics.status();
  if (!metrics->empty()) {
    if (exec->argv.empty() && !r.Has("variants"))
      return r.FieldError("metrics", "needs a command to scrape");
    exec->metrics_path = "/metrics";
    AIRTIME_RETURN_IF_ERROR(metrics->String("path", &exec->metrics_path));
    if (exec->metrics_path.empty() || exec->metrics_path[0] != '/')
      return metrics->Expected("path", "a URL path starting with '/'");
    std::vector<std::pair<std::string, int>> names;
    AIRTIME_RETURN_IF_ERROR(metrics->Require("demand", " (the metric names to sum)"));
    AIRTIME_RETURN_IF_ERROR(metrics->StringList("demand", &names));
    for (auto& [name, line] : names) exec->demand_metrics.push_back(name);
    std::string type = "gauge";
    AIRTIME_RETURN_IF_ERROR(metrics->String("type", &type));
    if (type != "gauge" && type != "counter")
      return metrics->Expected("type", "gauge (requests in flight) or counter (requests served)",
                               DidYouMean(type, {"gauge", "counter"}));
    exec->demand_is_counter = type == "counter";
    // Checked against the service's classes once they are read (ReadRealtime).
    AIRTIME_RETURN_IF_ERROR(metrics->String("class_label", &exec->demand_class_label));
    if (metrics->Has("class_label") && !IsDemandLabelName(exec->demand_class_label))
      return metrics->Expected("class_label",
                               "a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting "
                               "with __)");
    exec->wants_port = true;
  }
  if (r.Has("metrics") && metrics->empty()) return r.Expected("metrics", "a mapping");
  return OkStatus();
}

std::string TypeNames(const std::vector<GpuTypeId>& ids, const GpuCatalog& catalog) {
  std::vector<std::string> names;
  for (GpuTypeId t : ids) names.push_back(catalog.type(t).name);
  return Join(names, ", ");
}

// gpus, gpu_type, prefer, gpu_fraction, mig, memory_gb, locality, cpu, memory_gib.
Status ReadShape(const MapReader& r, const GpuCatalog& catalog, Shape* shape) {
  AIRTIME_RETURN_IF_ERROR(r.Int("gpus", &shape->gpu_count, 0));
  std::vector<int> lines;
  AIRTIME_RETURN_IF_ERROR(ReadTypes(r, "gpu_type", catalog, &shape->allowed_types, &lines));
  lines.clear();
  AIRTIME_RETURN_IF_ERROR(ReadTypes(r, "prefer", catalog, &shape->preferred_types, &lines));
  for (size_t i = 0; i < shape->preferred_types.size(); ++i) {
    GpuTypeId t = shape->preferred_types[i];
    if (!shape->AllowsType(t))
      return r.file().ErrorAt(lines[i], r.FieldName("prefer") +
                                            ": expected one of the allowed "
                                            "types (gpu_type: " +
                                            TypeNames(shape->allowed_types, catalog) +
                                            "), found '" + catalog.type(t).name + "'");
  }

  AIRTIME_RETURN_IF_ERROR(r.OneOf("gpu_fraction", "mig"));
  if (r.Has("gpu_fraction")) {
    double f = 0;
    AIRTIME_RETURN_IF_ERROR(r.Number("gpu_fraction", &f, 0, 1, /*lo_open=*/true));
    shape->mode = ShareMode::kFraction;
    shape->gpu_milli = static_cast<int>(std::llround(f * 1000));
    if (shape->gpu_milli < 1) return r.Expected("gpu_fraction", "a share of at least 0.001");
  }
  if (r.Has("mig")) {
    AIRTIME_RETURN_IF_ERROR(r.String("mig", &shape->mig_profile));
    shape->mode = ShareMode::kMig;
    std::vector<std::string> profiles;
    bool found = false;
    for (size_t i = 0; i < catalog.size(); ++i) {
      auto t = static_cast<GpuTypeId>(i);
      if (!shape->AllowsType(t)) continue;
      for (const auto& p : catalog.type(t).mig_profiles) {
        if (p.name == shape->mig_profile) found = true;
        if (std::find(profiles.begin(), profiles.end(), p.name) == profiles.end())
          profiles.push_back(p.name);
      }
    }
    if (profiles.empty())
      return r.FieldError("mig", "none of the allowed GPU types (" +
                                     TypeNames(shape->allowed_types, catalog) + ") supports MIG");
    if (!found)
      return r.FieldError("mig", "expected a MIG profile of the allowed GPU types (" +
                                     Join(profiles, ", ") + "), found '" + shape->mig_profile +
                                     "'" + DidYouMean(shape->mig_profile, profiles));
  }

  if (r.Has("elastic")) {
    auto e = r.Sub("elastic", {"min_gpus"});
    if (!e.ok()) return e.status();
    AIRTIME_RETURN_IF_ERROR(e->Require("min_gpus"));
    AIRTIME_RETURN_IF_ERROR(e->Int("min_gpus", &shape->min_gpus, 1, shape->gpu_count));
  }
  AIRTIME_RETURN_IF_ERROR(r.Number("memory_gb", &shape->memory_gb, 0, kInf));
  if (shape->memory_gb > 0) {
    double largest = 0;
    std::string largest_name;
    for (size_t i = 0; i < catalog.size(); ++i) {
      auto t = static_cast<GpuTypeId>(i);
      if (shape->AllowsType(t) && catalog.type(t).memory_gb > largest) {
        largest = catalog.type(t).memory_gb;
        largest_name = catalog.type(t).name;
      }
    }
    if (shape->memory_gb > largest)
      return r.FieldError("memory_gb", "no allowed GPU type has that much memory (the largest is " +
                                           largest_name + " with " +
                                           std::to_string(static_cast<int>(largest)) + " GB)");
  }

  if (r.Has("locality")) {
    std::string loc;
    AIRTIME_RETURN_IF_ERROR(r.String("locality", &loc));
    loc = ToLower(loc);
    if (loc == "node") {
      shape->locality = Locality::kNode;
    } else if (loc == "nvlink" || loc == "nvlink_domain") {
      shape->locality = Locality::kNvlinkDomain;
    } else if (loc == "rack") {
      shape->locality = Locality::kRack;
    } else if (loc == "any") {
      shape->locality = Locality::kAny;
    } else {
      return r.Expected("locality", "one of node, nvlink, rack, any");
    }
  }

  double cores = 0, gib = 0;
  AIRTIME_RETURN_IF_ERROR(r.Number("cpu", &cores, 0, kMaxCpuCores));
  AIRTIME_RETURN_IF_ERROR(r.Number("memory_gib", &gib, 0, kMaxMemoryGib));
  shape->cpu_milli = std::llround(cores * 1000);
  shape->memory_mib = std::llround(gib * 1024);
  return OkStatus();
}

// A list of {at, rps} points in time order, under `key` of `r` ("demand"); `path` is the
// field's path in messages ("demand", "classes[0].demand").
Status ReadCurve(const MapReader& r, std::string_view key, const std::string& path,
                 std::vector<DemandPoint>* out) {
  YAML::Node list = r.Get(key);
  if (!list.IsSequence()) return r.Expected(key, "a list of {at: <time>, rps: <rate>}");
  size_t i = 0;
  for (const auto& item : list) {
    auto p = MapReader::Open(r.file(), item, r.subject(), path + "[" + std::to_string(i++) + "]",
                             {"at", "rps"}, r.LineOf(key));
    if (!p.ok()) return p.status();
    DemandPoint point;
    AIRTIME_RETURN_IF_ERROR(p->Require("at"));
    AIRTIME_RETURN_IF_ERROR(p->Duration("at", &point.at));
    AIRTIME_RETURN_IF_ERROR(p->Require("rps"));
    AIRTIME_RETURN_IF_ERROR(p->Number("rps", &point.rps, 0, kMaxRps));
    if (!out->empty() && point.at < out->back().at)
      return p->FieldError("at", "expected points in time order, found " +
                                     FormatDuration(point.at) + " after " +
                                     FormatDuration(out->back().at));
    out->push_back(point);
  }
  return OkStatus();
}

// classes: [{name, demand | demand_trace}], each with its own demand curve.
Status ReadClasses(const MapReader& r, WorkloadSpec* s, std::vector<TraceSource>* traces) {
  YAML::Node list = r.Get("classes");
  if (!list.IsSequence() || list.size() == 0)
    return r.Expected("classes", "a non-empty list of {name: <class>, demand: [...]}");
  if (list.size() > kMaxClasses)
    return r.FieldError("classes", "expected at most " + std::to_string(kMaxClasses) +
                                       " classes, found " + std::to_string(list.size()));
  size_t i = 0;
  for (const auto& item : list) {
    const std::string field = "classes[" + std::to_string(i++) + "]";
    auto c = MapReader::Open(r.file(), item, r.subject(), field, {"name", "demand", "demand_trace"},
                             r.LineOf("classes"));
    if (!c.ok()) return c.status();
    RequestClass rc;
    AIRTIME_RETURN_IF_ERROR(c->Require("name"));
    AIRTIME_RETURN_IF_ERROR(c->String("name", &rc.name));
    for (const RequestClass& other : s->realtime.classes)
      if (other.name == rc.name)
        return c->FieldError("name", "class '" + rc.name + "' is listed twice");
    AIRTIME_RETURN_IF_ERROR(c->OneOf("demand", "demand_trace"));
    if (c->Has("demand"))
      AIRTIME_RETURN_IF_ERROR(ReadCurve(*c, "demand", field + ".demand", &rc.demand));
    if (c->Has("demand_trace")) {
      auto trace = ParseTrace(r.file(), c->Get("demand_trace"), r.subject(),
                              field + ".demand_trace", c->LineOf("demand_trace"));
      if (!trace.ok()) return trace.status();
      trace->options["target"] = s->name;
      trace->options["class"] = rc.name;
      traces->push_back(std::move(*trace));
    }
    s->realtime.classes.push_back(std::move(rc));
  }
  return OkStatus();
}

// variants: [{name, gpus, gpu_type, gpu_fraction | mig, memory_gb, throughput: {TYPE: rps},
// cold_start, quality, classes, max_replicas, command, env}].
Status ReadVariants(const MapReader& r, const GpuCatalog& catalog, WorkloadSpec* s) {
  YAML::Node list = r.Get("variants");
  if (!list.IsSequence() || list.size() == 0)
    return r.Expected("variants", "a non-empty list of {name, gpus, throughput: {TYPE: rps}, ...}");
  if (list.size() > kMaxVariants)
    return r.FieldError("variants", "expected at most " + std::to_string(kMaxVariants) +
                                        " variants, found " + std::to_string(list.size()));
  RealtimeProfile& rt = s->realtime;
  size_t i = 0;
  std::vector<std::pair<int, std::string>> awaits;  // each variant's field: line, name
  for (const auto& item : list) {
    const std::string field = "variants[" + std::to_string(i++) + "]";
    auto v =
        MapReader::Open(r.file(), item, r.subject(), field,
                        {"name", "gpus", "gpu_type", "prefer", "gpu_fraction", "mig", "memory_gb",
                         "locality", "cpu", "memory_gib", "throughput", "cold_start", "quality",
                         "classes", "max_replicas", "command", "env", "awaits_producer"},
                        r.LineOf("variants"));
    if (!v.ok()) return v.status();
    ModelVariant mv;
    AIRTIME_RETURN_IF_ERROR(v->Require("name"));
    AIRTIME_RETURN_IF_ERROR(v->String("name", &mv.name));
    if (mv.name.find('/') != std::string::npos)
      return v->FieldError("name",
                           "a variant's name may not hold '/' (its replicas run as "
                           "<service>/<variant>)");
    for (const ModelVariant& other : rt.variants)
      if (other.name == mv.name)
        return v->FieldError("name", "variant '" + mv.name + "' is listed twice");
    AIRTIME_RETURN_IF_ERROR(ReadShape(*v, catalog, &mv.shape));
    if (mv.shape.gpu_count < 1) return v->Expected("gpus", "at least 1 (a replica needs a GPU)");
    AIRTIME_RETURN_IF_ERROR(v->Require("throughput",
                                       " (requests/s one replica serves per GPU type, e.g. "
                                       "{H100: 2.5, L40S: 0.4})"));
    auto tp = v->SubAnyKeys("throughput");
    if (!tp.ok()) return tp.status();
    if (tp->empty()) return v->Expected("throughput", "a mapping {GPU type: requests/s}");
    for (const auto& e : tp->entries()) {
      auto id = FindGpuType(catalog, e.key);
      if (!id.ok())
        return r.file().ErrorAt(r.file().Line(e.key_node, v->LineOf("throughput")),
                                v->FieldName("throughput") + ": " + id.status().message());
      if (!mv.shape.allowed_types.empty() && !mv.shape.AllowsType(*id))
        return tp->FieldError(
            e.key, "GPU type '" + catalog.type(*id).name + "' is not among the variant's gpu_type");
      double rps = 0;
      AIRTIME_RETURN_IF_ERROR(tp->Number(e.key, &rps, 0, kMaxRps, /*lo_open=*/true));
      mv.throughput_rps.push_back({*id, rps});
    }
    // A replica runs only where the variant has a throughput; the faster types first.
    mv.shape.allowed_types.clear();
    std::vector<std::pair<GpuTypeId, double>> by_speed = mv.throughput_rps;
    std::stable_sort(by_speed.begin(), by_speed.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [t, rps] : by_speed) mv.shape.allowed_types.push_back(t);
    if (mv.shape.preferred_types.empty()) mv.shape.preferred_types = mv.shape.allowed_types;
    mv.cold_start = rt.cold_start;
    AIRTIME_RETURN_IF_ERROR(v->Duration("cold_start", &mv.cold_start));
    AIRTIME_RETURN_IF_ERROR(v->Number("quality", &mv.quality, 0, 1, /*lo_open=*/true));
    mv.max_replicas = rt.max_replicas;
    AIRTIME_RETURN_IF_ERROR(v->Int("max_replicas", &mv.max_replicas, 1, kUnboundedReplicas));
    if (v->Has("classes")) {
      std::vector<std::pair<std::string, int>> names;
      AIRTIME_RETURN_IF_ERROR(v->StringList("classes", &names));
      std::vector<std::string> known;
      for (const RequestClass& c : rt.classes) known.push_back(c.name);
      for (const auto& [name, line] : names) {
        auto it = std::find(known.begin(), known.end(), name);
        if (it == known.end())
          return r.file().ErrorAt(
              line, v->FieldName("classes") +
                        ": expected one of the "
                        "service's classes (" +
                        (known.empty() ? std::string("none declared") : Join(known, ", ")) +
                        "), found '" + name + "'" + DidYouMean(name, known));
        mv.classes.push_back(static_cast<int>(it - known.begin()));
      }
    }
    AIRTIME_RETURN_IF_ERROR(v->Bool("awaits_producer", &mv.awaits_producer));
    AIRTIME_RETURN_IF_ERROR(ReadCommand(*v, &mv.command, &mv.env));
    if (mv.command.empty() && s->exec.argv.empty()) {
      if (!mv.env.empty())
        return v->FieldError("env",
                             "sets the environment of a command, and neither the "
                             "variant nor the service has one");
      if (!s->exec.metrics_path.empty())
        return v->Require("command",
                          " (the service's metrics are scraped from its replicas, "
                          "and neither the variant nor the service has a command)");
    }
    rt.variants.push_back(std::move(mv));
    awaits.emplace_back(v->LineOf("awaits_producer"), v->FieldName("awaits_producer"));
  }
  // A variant that waits for its producer must not be one the service needs from the start.
  for (size_t k = 0; k < rt.variants.size(); ++k)
    if (rt.variants[k].awaits_producer)
      if (std::string why = rt.WhyNotProduced(k); !why.empty())
        return r.file().ErrorAt(awaits[k].first, awaits[k].second + ": variant '" +
                                                     rt.variants[k].name + "' cannot wait: " + why);
  return OkStatus();
}

// slo, demand, demand_trace, value.per_1k_requests.
Status ReadRealtime(const MapReader& r, WorkloadSpec* s, std::vector<TraceSource>* traces) {
  AIRTIME_RETURN_IF_ERROR(
      r.Require("slo", " (a realtime service needs slo: {latency_ms: ..., capacity_rps: ...})"));
  auto slo =
      r.Sub("slo", {"latency_ms", "capacity_rps", "min_replicas", "max_replicas", "cold_start"});
  if (!slo.ok()) return slo.status();
  RealtimeProfile& rt = s->realtime;
  const bool variants = r.Has("variants");
  AIRTIME_RETURN_IF_ERROR(slo->Require("latency_ms"));
  AIRTIME_RETURN_IF_ERROR(slo->Number("latency_ms", &rt.latency_slo_ms, 0, kInf, true));
  if (variants && slo->Has("capacity_rps"))
    return slo->FieldError("capacity_rps",
                           "a service with variants gives each variant's throughput instead");
  if (!variants) {
    AIRTIME_RETURN_IF_ERROR(
        slo->Require("capacity_rps", " (requests/s one replica serves within the SLO)"));
    AIRTIME_RETURN_IF_ERROR(slo->Number("capacity_rps", &rt.capacity_rps, 0, kMaxRps, true));
  }
  // A service without max_replicas may grow to kUnboundedReplicas; neither bound may be more.
  AIRTIME_RETURN_IF_ERROR(slo->Int("min_replicas", &rt.min_replicas, 0, kUnboundedReplicas));
  AIRTIME_RETURN_IF_ERROR(slo->Int("max_replicas", &rt.max_replicas, 1, kUnboundedReplicas));
  if (rt.max_replicas < rt.min_replicas)
    return slo->FieldError("max_replicas", "expected at least min_replicas (" +
                                               std::to_string(rt.min_replicas) + "), found " +
                                               std::to_string(rt.max_replicas));
  AIRTIME_RETURN_IF_ERROR(slo->Duration("cold_start", &rt.cold_start));

  if (r.Has("demand")) AIRTIME_RETURN_IF_ERROR(ReadCurve(r, "demand", "demand", &rt.demand));
  if (r.Has("demand_trace")) {
    auto trace = ParseTrace(r.file(), r.Get("demand_trace"), r.subject(), "demand_trace",
                            r.LineOf("demand_trace"));
    if (!trace.ok()) return trace.status();
    trace->options["target"] = s->name;
    traces->push_back(std::move(*trace));
  }

  if (r.Has("classes")) {
    if (!variants)
      return r.FieldError("classes", "only a service with variants splits its demand by class");
    for (const char* f : {"demand", "demand_trace"})
      if (r.Has(f))
        return r.FieldError(f, "a service with classes gives each class its own demand");
    AIRTIME_RETURN_IF_ERROR(ReadClasses(r, s, traces));
  }
  if (r.Has("quality_floor")) {
    if (!variants) return r.FieldError("quality_floor", "only a service with variants has one");
    AIRTIME_RETURN_IF_ERROR(r.Number("quality_floor", &rt.quality_floor, 0, 1));
  }
  return OkStatus();
}

// Fields that only one side (service or finite job) may give.
Status CheckKindFields(const MapReader& r, const WorkloadSpec& s) {
  const std::string kind = KindName(s.kind);
  if (s.is_service()) {
    for (const char* f : {"work", "duration", "deadline", "deadline_after"})
      if (r.Has(f))
        return r.FieldError(f, "a realtime service runs until cancelled and has no '" +
                                   std::string(f) + "'; remove it or change the kind");
  } else {
    for (const char* f : {"slo", "demand", "demand_trace", "variants", "classes", "quality_floor"})
      if (r.Has(f))
        return r.FieldError(f, "only a realtime workload has '" + std::string(f) +
                                   "' (this one is kind " + kind + ")");
  }
  return OkStatus();
}

// produces: {service, variant}: the variant a quantize or finetune job makes. Whether the
// service and its variant exist is checked once every workload is loaded
// (LinkProducedVariants): they may come later, or from another file.
Status ReadProduces(const MapReader& r, WorkloadSpec* s) {
  if (!r.Has("produces")) return OkStatus();
  if (std::string why = WhyKindCannotProduce(s->kind); !why.empty())
    return r.FieldError("produces", why);
  auto p = r.Sub("produces", {"service", "variant"});
  if (!p.ok()) return p.status();
  if (p->empty()) return r.Expected("produces", "a mapping {service: <service>, variant: <name>}");
  for (const char* f : {"service", "variant"})
    AIRTIME_RETURN_IF_ERROR(p->Require(f, " (produces: {service: <service>, variant: <name>})"));
  ProducedVariant& out = s->produces;
  AIRTIME_RETURN_IF_ERROR(p->String("service", &out.service));
  AIRTIME_RETURN_IF_ERROR(p->String("variant", &out.variant));
  out.service_source = r.file().Where(p->LineOf("service"));
  out.variant_source = r.file().Where(p->LineOf("variant"));
  return OkStatus();
}

}  // namespace

StatusOr<WorkloadSpec> ParseWorkload(const YamlFile& file, const YAML::Node& node, size_t index,
                                     int line_hint, const GpuCatalog& catalog,
                                     const InterferenceModel& families,
                                     std::vector<TraceSource>* traces) {
  auto opened = MapReader::Open(file, node, NamedSubject(node, "workload", index), "",
                                WorkloadFields(), line_hint);
  if (!opened.ok()) return opened.status();
  MapReader& r = *opened;
  WorkloadSpec s;
  AIRTIME_RETURN_IF_ERROR(r.Require("name"));
  AIRTIME_RETURN_IF_ERROR(r.String("name", &s.name));
  s.source = file.Where(r.line());
  for (const MapReader::Entry& e : r.entries())
    s.field_lines.emplace_back(e.key, file.Line(e.key_node, r.line()));

  if (r.Has("kind")) {
    std::string kind;
    AIRTIME_RETURN_IF_ERROR(r.String("kind", &kind));
    auto k = ParseKind(kind);
    if (!k.ok()) {
      std::vector<std::string> kinds;
      for (int i = 0; i < kWorkloadKindCount; ++i)
        kinds.push_back(KindName(static_cast<WorkloadKind>(i)));
      return r.Expected("kind", "one of " + Join(kinds, ", "), DidYouMean(kind, kinds));
    }
    s.kind = *k;
  }
  AIRTIME_RETURN_IF_ERROR(CheckKindFields(r, s));
  AIRTIME_RETURN_IF_ERROR(ReadProduces(r, &s));
  AIRTIME_RETURN_IF_ERROR(r.String("tenant", &s.tenant));
  AIRTIME_RETURN_IF_ERROR(r.Int("priority", &s.priority, std::numeric_limits<int>::min()));
  AIRTIME_RETURN_IF_ERROR(ReadShape(r, catalog, &s.shape));

  AIRTIME_RETURN_IF_ERROR(ReadExec(r, &s.exec));
  if (s.is_service() && !s.exec.empty()) s.exec.wants_port = true;  // replicas serve on a port

  // Work and speed.
  AIRTIME_RETURN_IF_ERROR(r.OneOf("work", "duration"));
  if (!s.is_service() && !s.exec.empty() && !r.Has("work") && !r.Has("duration")) {
    s.work_seconds = kDefaultCommandWorkSeconds;  // runs until its process exits
    s.work_estimated = true;
  } else if (!s.is_service()) {
    const char* key = r.Has("duration") ? "duration" : "work";
    AIRTIME_RETURN_IF_ERROR(
        r.Require(key, " (reference work at speed 1.0, e.g. work: 4h; 'duration' is a synonym)"));
    DurationMs work = 0;
    AIRTIME_RETURN_IF_ERROR(r.Duration(key, &work));
    if (work <= 0) return r.Expected(key, "a positive duration");
    s.work_seconds = ToSeconds(work);
  }
  if (r.Has("speed")) {
    auto speed = r.SubAnyKeys("speed");
    if (!speed.ok()) return speed.status();
    for (const auto& e : speed->entries()) {
      auto id = FindGpuType(catalog, e.key);
      if (!id.ok())
        return file.ErrorAt(file.Line(e.key_node, r.LineOf("speed")),
                            r.FieldName("speed") + ": " + id.status().message());
      double v = 0;
      // Relative to an A100-80GB: a thousandth to a thousand times, so that work / speed
      // stays a time the engine can count.
      AIRTIME_RETURN_IF_ERROR(speed->Number(e.key, &v, 1e-3, 1e3));
      s.speed_overrides.push_back({*id, v});
    }
  }
  AIRTIME_RETURN_IF_ERROR(r.Number("utilization", &s.utilization, 0, 1, /*lo_open=*/true));
  if (r.Has("family")) {
    std::string family;
    AIRTIME_RETURN_IF_ERROR(r.String("family", &family));
    s.family = families.Canonical(family);
    if (s.family.empty()) {
      std::string known;
      for (const std::string& f : families.families()) known += (known.empty() ? "" : ", ") + f;
      return r.FieldError("family", "unknown model family '" + family + "' (known: " + known +
                                        "; leave it out for work of another kind)");
    }
  }
  // Gavel's per-family speeds on the types it measured, where no `speed` is given for them:
  // relative to the workload's V100 speed.
  if (!s.family.empty()) {
    auto v100 = catalog.Find("V100");
    for (const char* type : {"P100", "K80"}) {
      auto id = catalog.Find(type);
      auto ratio = GavelSpeedVsV100(s.family, type);
      if (!id.ok() || !v100.ok() || !ratio) continue;
      const bool given = std::any_of(s.speed_overrides.begin(), s.speed_overrides.end(),
                                     [&](const auto& o) { return o.first == *id; });
      if (!given) s.speed_overrides.push_back({*id, s.SpeedOn(*v100, catalog) * *ratio});
    }
  }

  // Time.
  AIRTIME_RETURN_IF_ERROR(r.OneOf("submit_at", "arrival"));
  AIRTIME_RETURN_IF_ERROR(r.Duration(r.Has("arrival") ? "arrival" : "submit_at", &s.submit_at));
  AIRTIME_RETURN_IF_ERROR(r.OneOf("deadline", "deadline_after"));
  if (r.Has("deadline")) {
    DurationMs d = 0;
    AIRTIME_RETURN_IF_ERROR(r.Duration("deadline", &d));
    if (d < s.submit_at)
      return r.FieldError("deadline", "expected a time at or after submission (" +
                                          FormatDuration(s.submit_at) + "), found " +
                                          FormatDuration(d) +
                                          " (use deadline_after for a relative deadline)");
    s.deadline = d;
  }
  if (r.Has("deadline_after")) {
    DurationMs d = 0;
    AIRTIME_RETURN_IF_ERROR(r.Duration("deadline_after", &d));
    s.deadline = s.submit_at + d;
  }

  // Preemption.
  auto ckpt = r.Sub("checkpoint", {"interval", "restart_cost"});
  if (!ckpt.ok()) return ckpt.status();
  AIRTIME_RETURN_IF_ERROR(ckpt->Duration("interval", &s.checkpoint_interval));
  AIRTIME_RETURN_IF_ERROR(ckpt->Duration("restart_cost", &s.restart_cost));
  AIRTIME_RETURN_IF_ERROR(r.Bool("preemptible", &s.preemptible));
  AIRTIME_RETURN_IF_ERROR(r.Duration("preempt_grace", &s.preempt_grace));

  if (s.is_service()) AIRTIME_RETURN_IF_ERROR(ReadRealtime(r, &s, traces));
  if (std::string why = WhyNotClassLabel(s); !why.empty()) {
    // Read again only to name the field by its line.
    auto metrics = r.Sub("metrics", {"path", "demand", "type", "class_label"});
    if (!metrics.ok()) return metrics.status();
    return metrics->FieldError("class_label", why);
  }
  if (s.is_service() && r.Has("variants")) {
    // Each variant has its own replica shape: the service has none of its own.
    for (const char* f : {"gpus", "gpu_type", "prefer", "gpu_fraction", "mig", "memory_gb"})
      if (r.Has(f))
        return r.FieldError(f, "a service with variants gives the replica shape per variant");
    AIRTIME_RETURN_IF_ERROR(ReadVariants(r, catalog, &s));
  }

  // Value.
  auto value = r.Sub("value", {"per_1k_requests", "on_completion", "decay_after_deadline"});
  if (!value.ok()) return value.status();
  if (s.is_service()) {
    for (const char* f : {"on_completion", "decay_after_deadline"})
      if (value->Has(f))
        return value->FieldError(f,
                                 "a realtime service earns per_1k_requests, not " + std::string(f));
    AIRTIME_RETURN_IF_ERROR(
        value->Number("per_1k_requests", &s.value.per_1k_requests, 0, kMaxValue));
  } else {
    if (value->Has("per_1k_requests"))
      return value->FieldError("per_1k_requests",
                               "only a realtime service earns per request; use on_completion");
    AIRTIME_RETURN_IF_ERROR(value->Number("on_completion", &s.value.on_completion, 0, kMaxValue));
    AIRTIME_RETURN_IF_ERROR(value->Duration("decay_after_deadline", &s.value.decay_after_deadline));
  }

  AIRTIME_RETURN_IF_ERROR(ValidateSpec(s, catalog));
  return s;
}

}  // namespace airtime::yaml_internal
