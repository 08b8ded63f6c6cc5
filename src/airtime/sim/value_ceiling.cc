// ValueCeiling: see value_ceiling.h.
#include "airtime/sim/value_ceiling.h"

#include <algorithm>

#include "airtime/sim/reachable.h"

namespace airtime {
namespace {

// Requests of a service's demand curve over [submission, horizon), and the part that some
// schedule could serve: none before its first replica can be ready, at most what its
// max_replicas serve after. Valued per request.
void AddService(const WorkloadSpec& s, TimeMs horizon, ValueCeiling* c) {
  const double most_rps = s.realtime.max_replicas * s.realtime.capacity_rps;
  const double per_request = s.value.per_1k_requests / 1000.0;
  const TimeMs ready = FirstReady(s);
  ForEachDemandPiece(s, s.submit_at, horizon, [&](TimeMs from, TimeMs to, double rps) {
    const double requests = rps * ToSeconds(to - from);
    const double early = rps * ToSeconds(std::max<TimeMs>(0, std::min(to, ready) - from));
    const double served = std::min(rps, most_rps) * ToSeconds(to - std::clamp(ready, from, to));
    c->requests += requests;
    c->missed_at_start += early;
    c->reachable_requests += served;
    c->offered_value += requests * per_request;
    c->reachable_value += served * per_request;
  });
}

void AddJob(const WorkloadSpec& s, const Cluster& cluster, TimeMs horizon, ValueCeiling* c) {
  ++c->jobs;
  c->offered_value += s.value.on_completion;
  const double best = BestInstalledSpeed(s, cluster);
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
