#include "airtime/policies/faster_later.h"

#include <algorithm>
#include <cstdio>

#include "airtime/engine/engine.h"
#include "airtime/policies/value_plugins.h"
#include "airtime/policies/victims.h"

namespace airtime {

std::vector<TimeMs>& FasterLater::GpuFree(const Engine& engine) {
  if (free_cycle_ == engine.cycles()) return gpu_free_;
  free_cycle_ = engine.cycles();
  ExpectedGpuFree(engine, &gpu_free_);
  return gpu_free_;
}

bool FasterLater::Permit(const Job& job, const Placement& placement, const Engine& engine) {
  if (why_cycle_ != engine.cycles()) {
    why_cycle_ = engine.cycles();
    why_.clear();
  }
  const Shape& shape = job.s().shape;
  if (job.is_service() || shape.mode != ShareMode::kWhole || placement.gpus.empty()) return true;
  const bool by_value = mode_ == Mode::kMoreValue;
  if (by_value && !HasCostOfDelay(job)) return true;
  auto worth = [&](TimeMs end) { return job.s().value.CompletionValue(end, job.s().deadline); };
  const Cluster& c = engine.cluster();
  const GpuCatalog& cat = engine.catalog();
  double here = 1e18;
  for (GpuIndex g : placement.gpus) here = std::min(here, job.s().SpeedOn(c.gpu_type(g), cat));
  const TimeMs end_now = EndIfStartedAt(job, engine.now(), here);
  if (end_now == kNever) return true;

  std::vector<TimeMs>& free = GpuFree(engine);
  const auto k = static_cast<size_t>(shape.gpu_count);
  const double worth_now = worth(end_now);
  NodeIndex best = -1;
  TimeMs best_end = end_now, best_at = kNever;
  double best_speed = 0, best_worth = worth_now;
  std::vector<TimeMs> times;
  for (size_t t = 0; t < engine.nodes_of_type().size(); ++t) {
    const auto type = static_cast<GpuTypeId>(t);
    const double speed = job.s().SpeedOn(type, cat);
    if (speed <= here || !shape.AllowsType(type)) continue;
    for (NodeIndex n : engine.nodes_of_type()[t]) {
      if (static_cast<size_t>(c.node(n).gpu_count) < k || !NodeCouldHost(engine, shape, n))
        continue;
      const TimeMs at = NodeFreesFor(engine, free, n, shape.gpu_count, &times);
      // Free now but not chosen: something else keeps the job off it; do not wait for it.
      if (at == kNever || at <= engine.now()) continue;
      const TimeMs end = EndIfStartedAt(job, at, speed);
      const double w = by_value ? worth(end) : 0;
      if (by_value ? w > best_worth : end < best_end) {
        best = n;
        best_end = end;
        best_at = at;
        best_speed = speed;
        best_worth = w;
      }
    }
  }
  // (No wake-up needed: the end of the work that holds the node is itself an event.)
  if (best < 0) return true;
  // Count the node as taken by this job until it would end there, so that the jobs after
  // it in the queue do not all wait for the same GPUs.
  for (GpuIndex g : FirstToFree(engine, free, best, shape.gpu_count))
    free[static_cast<size_t>(g)] = best_end;
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "waits for a faster GPU: started now on %s (speed %.2f) it would finish at %s; "
                "on %s (speed %.2f), whose GPUs are expected free at %s, at %s",
                cat.type(c.gpu_type(placement.gpus[0])).name.c_str(), here,
                FormatTime(end_now).c_str(), c.node(best).name.c_str(), best_speed,
                FormatTime(best_at).c_str(), FormatTime(best_end).c_str());
  std::string why = buf;
  if (by_value) {
    std::snprintf(buf, sizeof buf, " (due at %s: worth %.2f there, %.2f here)",
                  FormatTime(*job.s().deadline).c_str(), best_worth, worth_now);
    why += buf;
  }
  why_[job.id] = std::move(why);
  return false;
}

std::string FasterLater::WhyHeld(const Job& job, const Engine& engine) const {
  (void)engine;
  auto it = why_.find(job.id);
  return it == why_.end() ? std::string() : it->second;
}

}  // namespace airtime
