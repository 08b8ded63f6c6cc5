// ValueCeiling: see value_ceiling.h.
#include "airtime/sim/value_ceiling.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "airtime/sim/reachable.h"

namespace airtime {
namespace {

// When a service's first replica could be ready, and the most its replicas serve at once.
struct Reach {
  TimeMs ready = kNever;
  double most_rps = 0;
};

Reach ReachOf(const WorkloadSpec& s) {
  return {FirstReady(s), s.realtime.max_replicas * s.realtime.capacity_rps};
}

// Requests of a service's demand curve over [submission, horizon), and the part that some
// schedule could serve: none before its first replica can be ready, at most what its
// max_replicas serve after (`reach`). Valued per request (a variant's quality is at most 1).
void AddService(const WorkloadSpec& s, Reach reach, TimeMs horizon, ValueCeiling* c) {
  const double most_rps = reach.most_rps;
  const double per_request = s.value.per_1k_requests / 1000.0;
  const TimeMs ready = reach.ready;
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
  // A member of a service with variants carries the demand of the classes it serves by
  // default, but any of its service's variants may serve them: from the first one ready, up
  // to what all of them serve at once (the highest throughput of each, its max_replicas).
  std::unordered_map<std::string, Reach> groups;
  for (const WorkloadSpec& s : input.workloads) {
    if (!s.is_service() || !s.realtime.is_member()) continue;
    const ModelVariant& v = s.realtime.variants[static_cast<size_t>(s.realtime.variant)];
    double rate = 0;
    for (const auto& [type, rps] : v.throughput_rps) rate = std::max(rate, rps);
    Reach& g = groups[s.realtime.group];
    g.ready = std::min(g.ready, FirstReady(s));
    g.most_rps += std::max(s.realtime.min_replicas, s.realtime.max_replicas) * rate;
  }
  for (const WorkloadSpec& s : input.workloads) {
    if (s.submit_at >= horizon) continue;
    if (s.is_service()) {
      AddService(s, s.realtime.is_member() ? groups.at(s.realtime.group) : ReachOf(s), horizon, &c);
    } else {
      AddJob(s, input.cluster, horizon, &c);
    }
  }
  return c;
}

}  // namespace airtime
