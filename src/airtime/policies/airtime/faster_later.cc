#include "airtime/policies/airtime/faster_later.h"

#include <algorithm>
#include <cstdio>

#include "airtime/engine/engine.h"
#include "airtime/policies/airtime/value_plugins.h"
#include "airtime/policies/plugins/victims.h"

namespace airtime {

std::vector<TimeMs>& FasterLater::GpuFree(const Engine& engine) const {
  if (free_cycle_ == engine.cycles()) return gpu_free_;
  free_cycle_ = engine.cycles();
  ExpectedGpuFree(engine, &gpu_free_);
  return gpu_free_;
}

bool FasterLater::Considers(const Job& job) const {
  if (job.is_service() || job.s().shape.mode != ShareMode::kWhole) return false;
  return mode_ != Mode::kMoreValue || HasCostOfDelay(job);
}

FasterLater::Later FasterLater::FindLater(const Job& job, double here, const Engine& engine) const {
  Later best;
  best.end_now = EndIfStartedAt(job, engine.now(), here);
  if (best.end_now == kNever) return best;
  const Shape& shape = job.s().shape;
  const bool by_value = mode_ == Mode::kMoreValue;
  auto worth = [&](TimeMs end) { return job.s().value.CompletionValue(end, job.s().deadline); };
  const Cluster& c = engine.cluster();
  const GpuCatalog& cat = engine.catalog();
  const std::vector<TimeMs>& free = GpuFree(engine);
  const auto k = static_cast<size_t>(shape.gpu_count);
  best.worth_now = worth(best.end_now);
  best.end = best.end_now;
  best.worth = best.worth_now;
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
      if (by_value ? w > best.worth : end < best.end) {
        best.node = n;
        best.end = end;
        best.at = at;
        best.speed = speed;
        best.worth = w;
      }
    }
  }
  return best;
}

bool FasterLater::RefusesNode(const Job& job, NodeIndex node, const Engine& engine) const {
  if (!Considers(job)) return false;
  // The answer depends on the node's type only: one search per type (a preemption asks
  // for every node), until the state or a hold changes.
  if (memo_job_ != job.id || memo_cycle_ != engine.cycles()) {
    memo_job_ = job.id;
    memo_cycle_ = engine.cycles();
    memo_.assign(engine.nodes_of_type().size(), -1);
  }
  const GpuTypeId type = engine.cluster().node(node).gpu_type;
  int8_t& known = memo_[static_cast<size_t>(type)];
  if (known < 0)
    known = FindLater(job, job.s().SpeedOn(type, engine.catalog()), engine).node >= 0 ? 1 : 0;
  return known == 1;
}

bool FasterLater::Permit(const Job& job, const Placement& placement, const Engine& engine) {
  if (why_cycle_ != engine.cycles()) {
    why_cycle_ = engine.cycles();
    why_.clear();
  }
  if (placement.gpus.empty() || !Considers(job)) return true;
  const Cluster& c = engine.cluster();
  const GpuCatalog& cat = engine.catalog();
  double here = 1e18;
  for (GpuIndex g : placement.gpus) here = std::min(here, job.s().SpeedOn(c.gpu_type(g), cat));
  const Later best = FindLater(job, here, engine);
  // (No wake-up needed: the end of the work that holds the node is itself an event.)
  if (best.node < 0) return true;
  // Count the node as taken by this job until it would end there, so that the jobs after
  // it in the queue do not all wait for the same GPUs.
  std::vector<TimeMs>& free = GpuFree(engine);
  for (GpuIndex g : FirstToFree(engine, free, best.node, job.s().shape.gpu_count))
    free[static_cast<size_t>(g)] = best.end;
  memo_job_ = kNoWorkload;  // the expected ends changed
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "waits for a faster GPU: started now on %s (speed %.2f) it would finish at %s; "
                "on %s (speed %.2f), whose GPUs are expected free at %s, at %s",
                cat.type(c.gpu_type(placement.gpus[0])).name.c_str(), here,
                FormatTime(best.end_now).c_str(), c.node(best.node).name.c_str(), best.speed,
                FormatTime(best.at).c_str(), FormatTime(best.end).c_str());
  std::string why = buf;
  if (mode_ == Mode::kMoreValue) {
    std::snprintf(buf, sizeof buf, " (due at %s: worth %.2f there, %.2f here)",
                  FormatTime(*job.s().deadline).c_str(), best.worth, best.worth_now);
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
