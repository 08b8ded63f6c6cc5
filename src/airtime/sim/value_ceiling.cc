// ValueCeiling: see value_ceiling.h.
#include "airtime/sim/value_ceiling.h"

#include <algorithm>

namespace airtime {
namespace {

// Requests of a service's demand curve over [submission, horizon), and the part that some
// schedule could serve: none before its first replica can be ready, at most what its
// max_replicas serve after. Valued per request.
void AddService(const WorkloadSpec& s, TimeMs horizon, ValueCeiling* c) {
  const auto& d = s.realtime.demand;
  const double most_rps = s.realtime.max_replicas * s.realtime.capacity_rps;
  const double per_request = s.value.per_1k_requests / 1000.0;
  const TimeMs ready = s.submit_at + s.realtime.cold_start;
  for (size_t i = 0; i < d.size(); ++i) {
    const TimeMs from = std::max<TimeMs>(d[i].at, s.submit_at);
    const TimeMs to = std::min(i + 1 < d.size() ? d[i + 1].at : horizon, horizon);
    if (to <= from) continue;
    const double requests = d[i].rps * ToSeconds(to - from);
    const double early = d[i].rps * ToSeconds(std::max<TimeMs>(0, std::min(to, ready) - from));
    const double served =
        std::min(d[i].rps, most_rps) * ToSeconds(to - std::clamp(ready, from, to));
    c->requests += requests;
    c->missed_at_start += early;
    c->reachable_requests += served;
    c->offered_value += requests * per_request;
    c->reachable_value += served * per_request;
  }
}

void AddJob(const WorkloadSpec& s, const Cluster& cluster, TimeMs horizon, ValueCeiling* c) {
  ++c->jobs;
  c->offered_value += s.value.on_completion;
  double best = 0;
  const auto& per_type = cluster.gpus_per_type();
  for (size_t t = 0; t < per_type.size(); ++t) {
    const auto type = static_cast<GpuTypeId>(t);
    if (per_type[t] > 0 && s.shape.AllowsType(type))
      best = std::max(best, s.SpeedOn(type, cluster.catalog()));
  }
  if (best <= 0 && s.shape.gpu_count > 0) return;  // no installed type takes it
  const TimeMs end = s.submit_at + FromSeconds(s.work_seconds / (best > 0 ? best : 1.0));
  if (end > horizon) return;
  ++c->reachable_jobs;
  c->reachable_value += s.value.CompletionValue(end, s.deadline);
}

}  // namespace

ValueCeiling ComputeValueCeiling(const SimInput& input, TimeMs horizon) {
  ValueCeiling c;
  c.installed_gpu_hours = static_cast<double>(input.cluster.gpu_count()) * ToHours(horizon);
  for (const WorkloadSpec& s : input.workloads) {
    if (s.submit_at >= horizon) continue;
    if (s.is_service()) {
      AddService(s, horizon, &c);
    } else {
      AddJob(s, input.cluster, horizon, &c);
    }
  }
  return c;
}

}  // namespace airtime
