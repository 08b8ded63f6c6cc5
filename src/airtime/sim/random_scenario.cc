#include "airtime/sim/random_scenario.h"

#include "airtime/base/rng.h"

namespace airtime {

SimInput RandomScenario(uint64_t seed, const RandomScenarioOptions& o) {
  Rng rng(seed);
  const GpuCatalog& cat = GpuCatalog::Builtin();
  const char* types[] = {"H100", "A100-80GB", "L40S", "T4", "A100-40GB"};
  std::vector<Node> nodes;
  for (int i = 0; i < o.nodes; ++i) {
    Node n;
    n.name = "n" + std::to_string(i);
    n.gpu_type = *cat.Find(types[rng.Below(5)]);
    n.gpu_count = static_cast<int>(1 + rng.Below(8));
    n.cpu_milli = rng.Below(2) ? 64000 : 0;
    n.memory_mib = n.cpu_milli ? 512 * 1024 : 0;
    n.nvlink_domain = "d" + std::to_string(i / 2);
    n.mig_enabled = !cat.type(n.gpu_type).mig_profiles.empty() && rng.Below(2);
    n.pool = rng.Below(2) ? "inference" : "training";
    nodes.push_back(n);
  }
  Cluster cluster = *Cluster::Build("random-" + std::to_string(seed), nodes);
  std::vector<WorkloadSpec> ws;
  for (int i = 0; i < o.workloads; ++i) {
    WorkloadSpec s;
    s.name = "w" + std::to_string(i);
    s.kind = static_cast<WorkloadKind>(rng.Below(kWorkloadKindCount));
    s.tenant = "t" + std::to_string(rng.Below(3));
    s.priority = static_cast<int>(rng.Below(5));
    s.submit_at = static_cast<TimeMs>(rng.Below(static_cast<uint64_t>(o.span)));
    s.shape.gpu_count = static_cast<int>(1 + rng.Below(4));
    const uint64_t form = rng.Below(10);
    if (form == 0) {
      s.shape.gpu_count = 1;
      s.shape.mode = ShareMode::kFraction;
      s.shape.gpu_milli = static_cast<int>(100 + rng.Below(900));
    } else if (form == 1) {
      s.shape.gpu_count = 1;
      s.shape.mode = ShareMode::kMig;
      s.shape.mig_profile = rng.Below(2) ? "1g.10gb" : "3g.40gb";
      s.shape.allowed_types = {*cat.Find("H100"), *cat.Find("A100-80GB")};
    } else if (form == 2) {
      s.shape.gpu_count = static_cast<int>(4 + rng.Below(9));
      s.shape.locality = rng.Below(2) ? Locality::kNvlinkDomain : Locality::kAny;
    } else if (form == 3) {
      s.shape.allowed_types = {*cat.Find(types[rng.Below(5)])};
    } else if (form == 4) {
      s.shape.gpu_count = 0;
      s.shape.cpu_milli = 4000;
    }
    if (rng.Below(4) == 0) s.shape.cpu_milli += 8000;
    s.utilization = 0.3 + 0.7 * rng.Uniform();
    if (s.kind == WorkloadKind::kRealtime) {
      if (s.shape.gpu_count == 0) s.shape.gpu_count = 1;
      s.realtime.capacity_rps = 5 + 20 * rng.Uniform();
      s.realtime.latency_slo_ms = 300;
      s.realtime.min_replicas = static_cast<int>(rng.Below(2));
      s.realtime.max_replicas = 8;
      s.realtime.cold_start = static_cast<DurationMs>(rng.Below(5 * kMinute));
      s.value.per_1k_requests = rng.Uniform();
      TimeMs t = s.submit_at;
      for (int k = 0; k < 6; ++k) {
        s.realtime.demand.push_back({t, 100 * rng.Uniform()});
        t += static_cast<TimeMs>(rng.Below(3 * kHour));
      }
    } else {
      s.work_seconds = 60.0 + static_cast<double>(rng.Below(8 * 3600));
      s.value.on_completion = 100 * rng.Uniform();
      if (rng.Below(2)) s.deadline = s.submit_at + static_cast<TimeMs>(rng.Below(12 * kHour));
      s.value.decay_after_deadline = static_cast<DurationMs>(rng.Below(4 * kHour));
      s.preemptible = rng.Below(2);
      if (rng.Below(2)) {
        s.checkpoint_interval = static_cast<DurationMs>(5 * kMinute + rng.Below(kHour));
        s.restart_cost = static_cast<DurationMs>(rng.Below(10 * kMinute));
      }
    }
    s.source = "random:" + std::to_string(i);
    ws.push_back(std::move(s));
  }
  std::vector<ScenarioEvent> events;
  if (o.node_events) {
    for (int k = 0; k < 3; ++k) {
      const std::string node = "n" + std::to_string(rng.Below(static_cast<uint64_t>(o.nodes)));
      const TimeMs at = static_cast<TimeMs>(rng.Below(static_cast<uint64_t>(o.span)));
      events.push_back({at, ScenarioEvent::kNodeDown, node, 0, "random"});
      events.push_back({at + static_cast<TimeMs>(rng.Below(2 * kHour)), ScenarioEvent::kNodeUp,
                        node, 0, "random"});
    }
  }
  if (o.cancels) {
    for (int k = 0; k < 4; ++k) {
      const std::string w = "w" + std::to_string(rng.Below(static_cast<uint64_t>(o.workloads)));
      const TimeMs at = static_cast<TimeMs>(rng.Below(static_cast<uint64_t>(o.span)));
      events.push_back({at, rng.Below(2) ? ScenarioEvent::kCancel : ScenarioEvent::kPriority, w,
                        static_cast<int>(rng.Below(9)), "random"});
    }
  }
  return MakeSimInput(std::move(cluster), std::move(ws), std::move(events));
}

}  // namespace airtime
