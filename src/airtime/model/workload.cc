#include "airtime/model/workload.h"

#include <algorithm>
#include <cmath>

#include "airtime/base/strings.h"

namespace airtime {

const char* KindName(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::kRealtime:
      return "realtime";
    case WorkloadKind::kBatch:
      return "batch";
    case WorkloadKind::kTraining:
      return "training";
    case WorkloadKind::kFinetune:
      return "finetune";
    case WorkloadKind::kQuantize:
      return "quantize";
    case WorkloadKind::kEmbed:
      return "embed";
    case WorkloadKind::kEval:
      return "eval";
  }
  return "?";
}

StatusOr<WorkloadKind> ParseKind(std::string_view s) {
  std::string k = ToLower(Trim(s));
  for (int i = 0; i < kWorkloadKindCount; ++i) {
    auto kind = static_cast<WorkloadKind>(i);
    if (k == KindName(kind)) return kind;
  }
  if (k == "inference" || k == "serving") return WorkloadKind::kRealtime;
  if (k == "fine-tune" || k == "fine_tune") return WorkloadKind::kFinetune;
  if (k == "quantization") return WorkloadKind::kQuantize;
  if (k == "embedding" || k == "embeddings") return WorkloadKind::kEmbed;
  if (k == "evaluation") return WorkloadKind::kEval;
  return InvalidArgument("unknown workload kind '" + std::string(s) +
                         "' (expected one of realtime, batch, training, finetune, quantize, "
                         "embed, eval)");
}

bool IsInferenceKind(WorkloadKind k) {
  return k == WorkloadKind::kRealtime || k == WorkloadKind::kBatch || k == WorkloadKind::kEmbed ||
         k == WorkloadKind::kEval;
}

const char* ShareModeName(ShareMode m) {
  switch (m) {
    case ShareMode::kWhole:
      return "whole";
    case ShareMode::kMig:
      return "mig";
    case ShareMode::kFraction:
      return "fraction";
  }
  return "?";
}

const char* LocalityName(Locality l) {
  switch (l) {
    case Locality::kAny:
      return "any";
    case Locality::kNode:
      return "node";
    case Locality::kNvlinkDomain:
      return "nvlink";
    case Locality::kRack:
      return "rack";
  }
  return "?";
}

bool Shape::AllowsType(GpuTypeId t) const {
  return allowed_types.empty() ||
         std::find(allowed_types.begin(), allowed_types.end(), t) != allowed_types.end();
}

int64_t Shape::TotalMilli(const GpuCatalog& catalog) const {
  switch (mode) {
    case ShareMode::kWhole:
      return 1000LL * gpu_count;
    case ShareMode::kFraction:
      return static_cast<int64_t>(gpu_milli) * gpu_count;
    case ShareMode::kMig: {
      for (size_t i = 0; i < catalog.size(); ++i) {
        auto t = static_cast<GpuTypeId>(i);
        if (!AllowsType(t)) continue;
        if (const MigProfile* p = catalog.type(t).FindMig(mig_profile))
          return static_cast<int64_t>(p->compute_slices) * 1000 / 7 * gpu_count;
      }
      return 1000LL * gpu_count;
    }
  }
  return 0;
}

std::string Shape::Describe(const GpuCatalog& catalog) const {
  std::string s = std::to_string(gpu_count) + " x ";
  if (allowed_types.empty()) {
    s += "any GPU";
  } else {
    std::vector<std::string> names;
    for (GpuTypeId t : allowed_types) names.push_back(catalog.type(t).name);
    s += Join(names, "|");
  }
  switch (mode) {
    case ShareMode::kWhole:
      s += " (whole)";
      break;
    case ShareMode::kMig:
      s += " (MIG " + mig_profile + ")";
      break;
    case ShareMode::kFraction: {
      char buf[32];
      std::snprintf(buf, sizeof buf, " (%.3g of a GPU)", gpu_milli / 1000.0);
      s += buf;
      break;
    }
  }
  if (memory_gb > 0) s += ", " + std::to_string(static_cast<int>(memory_gb)) + " GB each";
  if (gpu_count > 1 && locality != Locality::kAny)
    s += locality == Locality::kNode
             ? ", on one node"
             : std::string(", in one ") + LocalityName(locality) + " domain";
  return s;
}

double ValueModel::CompletionValue(TimeMs t, std::optional<TimeMs> deadline) const {
  if (!deadline || t <= *deadline) return on_completion;
  if (decay_after_deadline == kNever) return on_completion;
  if (decay_after_deadline <= 0) return 0;
  double late = static_cast<double>(t - *deadline) / static_cast<double>(decay_after_deadline);
  return on_completion * std::max(0.0, 1.0 - late);
}

int RealtimeProfile::ReplicasFor(double rps) const {
  const int need = ReplicasForRate(rps, capacity_rps);
  return std::clamp(need, min_replicas, std::max(min_replicas, max_replicas));
}

bool ModelVariant::Serves(int request_class) const {
  return classes.empty() ||
         std::find(classes.begin(), classes.end(), request_class) != classes.end();
}

double ModelVariant::ThroughputOn(GpuTypeId type) const {
  for (const auto& [t, rps] : throughput_rps)
    if (t == type) return rps;
  return 0;
}

double ModelVariant::PlanningThroughput() const {
  double lowest = 0;
  for (const auto& [t, rps] : throughput_rps)
    if (rps > 0 && (lowest == 0 || rps < lowest)) lowest = rps;
  return lowest;
}

int RealtimeProfile::DefaultVariantFor(int c) const {
  int best = -1;
  for (size_t v = 0; v < variants.size(); ++v)
    if (variants[v].Serves(c) && (best < 0 || variants[v].quality > variants[best].quality))
      best = static_cast<int>(v);
  return best;
}

std::string WhyKindCannotProduce(WorkloadKind kind) {
  if (kind == WorkloadKind::kQuantize || kind == WorkloadKind::kFinetune) return "";
  return std::string("only a quantize or finetune job produces a variant (this one is kind ") +
         KindName(kind) + ")";
}

std::string RealtimeProfile::WhyNotProduced(size_t v) const {
  if (variants.size() == 1) return "it is the service's only variant";
  const size_t nc = std::max<size_t>(1, classes.size());
  for (size_t c = 0; c < nc; ++c) {
    if (DefaultVariantFor(static_cast<int>(c)) != static_cast<int>(v)) continue;
    return "it is the best variant for class '" + (classes.empty() ? "all" : classes[c].name) +
           "', which serves that class until a policy chooses otherwise; the best variant of "
           "each class must run from the start";
  }
  return "";
}

double RealtimeProfile::ClassRpsAt(int c, TimeMs t) const {
  double rps = 0;
  for (const DemandPoint& p : classes[static_cast<size_t>(c)].demand) {
    if (p.at > t) break;
    rps = p.rps;
  }
  return rps;
}

double RealtimeProfile::OwnDemand(const std::vector<double>& class_rps) const {
  double sum = 0;
  for (size_t c = 0; c < class_rps.size(); ++c)
    if (DefaultVariantFor(static_cast<int>(c)) == variant) sum += class_rps[c];
  return sum;
}

std::vector<DemandPoint> SumCurves(const std::vector<const std::vector<DemandPoint>*>& curves) {
  std::vector<TimeMs> times;
  for (const auto* c : curves)
    for (const DemandPoint& p : *c) times.push_back(p.at);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<DemandPoint> out;
  std::vector<size_t> next(curves.size(), 0);
  std::vector<double> level(curves.size(), 0);
  for (TimeMs t : times) {
    double sum = 0;
    for (size_t i = 0; i < curves.size(); ++i) {
      const auto& c = *curves[i];
      while (next[i] < c.size() && c[next[i]].at <= t) level[i] = c[next[i]++].rps;
      sum += level[i];
    }
    if (out.empty() || out.back().rps != sum) out.push_back({t, sum});
  }
  return out;
}

std::vector<WorkloadSpec> ExpandVariants(const WorkloadSpec& service) {
  const RealtimeProfile& rt = service.realtime;
  if (!service.is_service() || rt.variants.empty() || rt.is_member()) return {service};
  WorkloadSpec base = service;
  if (base.realtime.classes.empty()) base.realtime.classes.push_back({"all", base.realtime.demand});
  const RealtimeProfile& brt = base.realtime;
  // The member that serves the most classes by default keeps the service's min_replicas.
  std::vector<std::vector<const std::vector<DemandPoint>*>> by_default(rt.variants.size());
  for (size_t c = 0; c < brt.classes.size(); ++c) {
    const int v = brt.DefaultVariantFor(static_cast<int>(c));
    if (v >= 0) by_default[static_cast<size_t>(v)].push_back(&brt.classes[c].demand);
  }
  size_t keeps_min = 0;
  for (size_t v = 1; v < by_default.size(); ++v)
    if (by_default[v].size() > by_default[keeps_min].size()) keeps_min = v;
  std::vector<WorkloadSpec> members;
  for (size_t v = 0; v < rt.variants.size(); ++v) {
    const ModelVariant& mv = rt.variants[v];
    WorkloadSpec m = base;
    m.name = service.name + "/" + mv.name;
    m.shape = mv.shape;
    m.realtime.variant = static_cast<int>(v);
    m.realtime.group = service.name;
    m.realtime.capacity_rps = mv.PlanningThroughput();
    m.realtime.cold_start = mv.cold_start;
    m.realtime.min_replicas = v == keeps_min ? rt.min_replicas : 0;
    m.realtime.max_replicas = std::max(m.realtime.min_replicas, mv.max_replicas);
    m.realtime.demand = SumCurves(by_default[v]);
    if (!mv.command.empty()) m.exec.argv = mv.command;
    for (const auto& variable : mv.env) {
      // (Not a structured binding: clang 14, the fuzz build's, cannot capture one.)
      auto same = std::find_if(m.exec.env.begin(), m.exec.env.end(),
                               [&](const auto& e) { return e.first == variable.first; });
      if (same != m.exec.env.end())
        same->second = variable.second;
      else
        m.exec.env.push_back(variable);
    }
    // A replica that runs a command serves on a port (as a plain service's does).
    if (!m.exec.argv.empty()) m.exec.wants_port = true;
    members.push_back(std::move(m));
  }
  return members;
}

std::vector<WorkloadSpec> ExpandAllVariants(std::vector<WorkloadSpec> workloads) {
  std::vector<WorkloadSpec> expanded;
  expanded.reserve(workloads.size());
  for (WorkloadSpec& w : workloads) {
    if (w.realtime.variants.empty() || w.realtime.is_member()) {
      expanded.push_back(std::move(w));
      continue;
    }
    for (WorkloadSpec& m : ExpandVariants(w)) expanded.push_back(std::move(m));
  }
  return expanded;
}

std::string WorkloadSpec::SourceOf(std::string_view field) const {
  const std::string_view top = field.substr(0, field.find_first_of(".["));
  const size_t colon = source.rfind(':');
  if (colon == std::string::npos) return source;
  for (const auto& [name, line] : field_lines)
    if (name == top) return source.substr(0, colon + 1) + std::to_string(line);
  return source;
}

double WorkloadSpec::SpeedOn(GpuTypeId t, const GpuCatalog& catalog) const {
  for (const auto& [type, speed] : speed_overrides)
    if (type == t) return speed;
  return catalog.type(t).relative_speed;
}

DurationMs WorkloadSpec::RunTimeOn(GpuTypeId t, double work, const GpuCatalog& catalog) const {
  double speed = SpeedOn(t, catalog);
  if (speed <= 0) return kNever;
  return std::max<DurationMs>(1, SaturatedMs(std::round(work / speed * kSecond)));
}

namespace {

template <typename Err>
Status ValidateVariants(const WorkloadSpec& s, const GpuCatalog& catalog, const Err& err) {
  const RealtimeProfile& r = s.realtime;
  if (!(r.quality_floor >= 0 && r.quality_floor <= 1))
    return err("quality_floor", "expected a mean quality in [0, 1]");
  if (r.variants.size() > kMaxVariants)
    return err("variants", "expected at most " + std::to_string(kMaxVariants) +
                               " variants, found " + std::to_string(r.variants.size()));
  if (r.classes.size() > kMaxClasses)
    return err("classes", "expected at most " + std::to_string(kMaxClasses) + " classes, found " +
                              std::to_string(r.classes.size()));
  const size_t classes = std::max<size_t>(1, r.classes.size());
  for (size_t c = 0; c < r.classes.size(); ++c) {
    for (size_t d = 0; d < c; ++d)
      if (r.classes[d].name == r.classes[c].name)
        return err("classes[" + std::to_string(c) + "].name",
                   "class '" + r.classes[c].name + "' is listed twice");
    const auto& curve = r.classes[c].demand;
    for (size_t i = 0; i < curve.size(); ++i)
      if (curve[i].rps < 0 || (i > 0 && curve[i].at < curve[i - 1].at))
        return err("classes[" + std::to_string(c) + "].demand",
                   "expected points in time order with rates >= 0");
  }
  double best = 0;
  for (size_t v = 0; v < r.variants.size(); ++v) {
    const ModelVariant& mv = r.variants[v];
    const std::string at = "variants[" + std::to_string(v) + "]";
    if (mv.name.empty()) return err(at + ".name", "must not be empty");
    for (size_t u = 0; u < v; ++u)
      if (r.variants[u].name == mv.name)
        return err(at + ".name", "variant '" + mv.name + "' is listed twice");
    if (!(mv.quality > 0 && mv.quality <= 1))
      return err(at + ".quality", "expected a quality in (0, 1]");
    best = std::max(best, mv.quality);
    if (mv.throughput_rps.empty())
      return err(at + ".throughput", "expected requests/s per replica for at least one GPU type");
    for (const auto& [t, rps] : mv.throughput_rps)
      if (!(rps > 0) || !std::isfinite(rps))
        return err(at + ".throughput",
                   "the throughput on " + catalog.type(t).name + " must be a number > 0");
    if (mv.cold_start < 0) return err(at + ".cold_start", "must not be negative");
    if (mv.max_replicas < 1) return err(at + ".max_replicas", "expected at least 1");
    if (mv.shape.gpu_count < 1) return err(at + ".gpus", "a variant's replica needs a GPU");
    for (int c : mv.classes)
      if (c < 0 || static_cast<size_t>(c) >= classes)
        return err(at + ".classes", "names a class the service does not have");
    if (!mv.produced_by.empty())
      if (std::string why = r.WhyNotProduced(v); !why.empty())
        return err(at, "job '" + mv.produced_by + "' cannot produce it: " + why);
    if (mv.awaits_producer)
      if (std::string why = r.WhyNotProduced(v); !why.empty())
        return err(at + ".awaits_producer", "it cannot wait for a producer: " + why);
  }
  for (size_t c = 0; c < classes; ++c)
    if (r.DefaultVariantFor(static_cast<int>(c)) < 0)
      return err("classes", "no variant serves class '" +
                                (r.classes.empty() ? std::string("all") : r.classes[c].name) + "'");
  if (best < 1)
    return err("variants",
               "the best variant's quality must be 1 (qualities are "
               "relative to the service's best variant)");
  return OkStatus();
}

}  // namespace

bool IsDemandLabelName(std::string_view name) {
  auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (name.empty() || !start(name[0]) || name.substr(0, 2) == "__") return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

std::string WhyNotClassLabel(const WorkloadSpec& s) {
  const std::string& label = s.exec.demand_class_label;
  if (label.empty()) return "";
  if (!IsDemandLabelName(label))
    return "expected a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __), "
           "found '" +
           label + "'";
  if (!s.is_service() || s.realtime.classes.size() < 2)
    return "only a service whose demand is split by request classes (two or more) scrapes "
           "its demand per class; without classes, leave class_label out";
  return "";
}

Status ValidateSpec(const WorkloadSpec& s, const GpuCatalog& catalog) {
  auto err = [&](const std::string& field, const std::string& what) {
    return InvalidArgument((s.source.empty() ? "" : s.source + ": ") + "workload '" + s.name +
                           "': field '" + field + "': " + what);
  };
  if (s.name.empty()) return err("name", "must not be empty");
  if (s.shape.gpu_count < 0) return err("gpus", "expected a GPU count >= 0");
  if (s.shape.gpu_count == 0 && s.shape.cpu_milli <= 0 && s.shape.memory_mib <= 0)
    return err("gpus", "a workload with no GPUs must ask for CPU or memory");
  if (s.shape.mode == ShareMode::kFraction) {
    if (s.shape.gpu_milli < 1 || s.shape.gpu_milli > 1000)
      return err("gpu_fraction", "expected a share in (0, 1]");
    if (s.shape.gpu_count > 1 && s.shape.gpu_milli < 1000)
      return err("gpu_fraction", "a fraction below 1 is allowed only with gpus: 1");
  }
  if (s.shape.min_gpus != 0) {
    if (s.shape.min_gpus < 1 || s.shape.min_gpus > s.shape.gpu_count)
      return err("elastic.min_gpus", "expected 1 <= min_gpus <= gpus");
    if (s.shape.mode != ShareMode::kWhole || s.is_service())
      return err("elastic.min_gpus", "only whole-GPU work that is not a service can be elastic");
  }
  if (s.shape.mode == ShareMode::kMig) {
    bool found = false;
    for (size_t i = 0; i < catalog.size(); ++i) {
      auto t = static_cast<GpuTypeId>(i);
      if (s.shape.AllowsType(t) && catalog.type(t).FindMig(s.shape.mig_profile)) found = true;
    }
    if (!found)
      return err("mig", "profile '" + s.shape.mig_profile +
                            "' exists on none of the allowed GPU types (e.g. 1g.10gb, 3g.40gb on "
                            "H100/A100-80GB)");
  }
  if (s.shape.memory_gb < 0) return err("memory_gb", "must not be negative");
  if (s.shape.memory_gb > 0) {
    bool fits = false;
    for (size_t i = 0; i < catalog.size(); ++i) {
      auto t = static_cast<GpuTypeId>(i);
      if (s.shape.AllowsType(t) && catalog.type(t).memory_gb >= s.shape.memory_gb) fits = true;
    }
    if (!fits) return err("memory_gb", "no allowed GPU type has that much memory");
  }
  if (s.utilization <= 0 || s.utilization > 1) return err("utilization", "expected (0, 1]");
  for (const auto& [t, speed] : s.speed_overrides)
    if (speed <= 0) return err("speed", "speed for " + catalog.type(t).name + " must be > 0");
  if (s.is_service()) {
    const auto& r = s.realtime;
    if (!r.variants.empty()) {
      AIRTIME_RETURN_IF_ERROR(ValidateVariants(s, catalog, err));
    } else if (r.capacity_rps <= 0) {
      return err("capacity_rps", "a realtime service needs capacity > 0");
    }
    if (r.latency_slo_ms <= 0) return err("latency_slo", "a realtime service needs an SLO > 0");
    if (r.min_replicas < 0 || r.max_replicas < r.min_replicas)
      return err("replicas", "expected 0 <= min <= max");
    for (size_t i = 1; i < r.demand.size(); ++i)
      if (r.demand[i].at < r.demand[i - 1].at) return err("demand", "points must be in time order");
    for (const auto& p : r.demand)
      if (p.rps < 0) return err("demand", "request rate must not be negative");
  } else {
    if (!(s.work_seconds > 0)) return err("work", "expected a positive amount of work (duration)");
  }
  if (std::string why = WhyNotClassLabel(s); !why.empty()) return err("metrics.class_label", why);
  if (!s.produces.empty())
    if (std::string why = WhyKindCannotProduce(s.kind); !why.empty()) return err("produces", why);
  if (s.deadline && *s.deadline < s.submit_at) return err("deadline", "is before submission");
  if (s.checkpoint_interval < 0 || s.restart_cost < 0)
    return err("checkpoint", "intervals must not be negative");
  if (s.value.per_1k_requests < 0 || s.value.on_completion < 0)
    return err("value", "must not be negative");
  return OkStatus();
}

}  // namespace airtime
