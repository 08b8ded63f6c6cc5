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
  int need = capacity_rps > 0 ? static_cast<int>(std::ceil(rps / capacity_rps - 1e-9)) : 0;
  return std::clamp(need, min_replicas, std::max(min_replicas, max_replicas));
}

double WorkloadSpec::SpeedOn(GpuTypeId t, const GpuCatalog& catalog) const {
  for (const auto& [type, speed] : speed_overrides)
    if (type == t) return speed;
  return catalog.type(t).relative_speed;
}

DurationMs WorkloadSpec::RunTimeOn(GpuTypeId t, double work, const GpuCatalog& catalog) const {
  double speed = SpeedOn(t, catalog);
  if (speed <= 0) return kNever;
  return std::max<DurationMs>(1, static_cast<DurationMs>(std::llround(work / speed * kSecond)));
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
    if (r.capacity_rps <= 0) return err("capacity_rps", "a realtime service needs capacity > 0");
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
  if (s.deadline && *s.deadline < s.submit_at) return err("deadline", "is before submission");
  if (s.checkpoint_interval < 0 || s.restart_cost < 0)
    return err("checkpoint", "intervals must not be negative");
  if (s.value.per_1k_requests < 0 || s.value.on_completion < 0)
    return err("value", "must not be negative");
  return OkStatus();
}

}  // namespace airtime
