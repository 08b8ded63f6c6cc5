#include "airtime/sim/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace airtime {
namespace {

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string Pad(const std::string& s, size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}

}  // namespace

nlohmann::json HoldsToJson(const MetricsSummary& m) {
  return HoldsToJson(m.hold_summaries, m.holds);
}

std::string HoldsReport(const SimResult& r) {
  const auto& sums = r.metrics.hold_summaries;
  if (sums.empty()) return {};
  return "3 a.m. report for " + r.policy +
         ": replicas held beyond what the current demand needs, each call scored "
         "against the demand that came (requests: served within the SLO by the held "
         "replicas while new ones would have been loading)\n" +
         HoldsTable(sums);
}

std::string CostsReport(const SimResult& r) {
  return "costs for " + r.policy +
         ": every installed GPU-hour at its type's hourly cost (depreciation + power x PUE; "
         "docs/costs.md), against the value earned on it\n" +
         CostsTable(CostsToJson(r.costs));
}

nlohmann::json PercentilesToJson(const Percentiles& p) {
  return {{"count", p.count}, {"p50", p.p50}, {"p99", p.p99}, {"mean", p.mean}, {"max", p.max}};
}

nlohmann::json TimelineToJson(const SimResult& r) {
  nlohmann::json start = nlohmann::json::array(), covered = nlohmann::json::array(),
                 allocation = nlohmann::json::array(), waiting = nlohmann::json::array();
  for (const TimelinePoint& p : r.timeline) {
    start.push_back(ToSeconds(p.start));
    covered.push_back(ToSeconds(p.covered));
    allocation.push_back(p.allocation);
    waiting.push_back(p.waiting);
  }
  return {{"step_s", ToSeconds(r.timeline_step)},
          {"start_s", start},
          {"covered_s", covered},
          {"allocation", allocation},
          {"waiting", waiting}};
}

nlohmann::json ResultToJson(const SimResult& r) {
  nlohmann::json ledger = nlohmann::json::object();
  for (int b = 0; b < kBucketCount; ++b) {
    const auto bucket = static_cast<Bucket>(b);
    // Work outside airtime exists only under the Slurm backend, never in a simulation.
    if (bucket == Bucket::kForeign && r.ledger.gpu_hours(bucket) == 0) continue;
    ledger[BucketName(bucket)] = r.ledger.gpu_hours(bucket);
  }
  ledger["installed_gpu_hours"] = r.ledger.installed_gpu_hours();
  const MetricsSummary& m = r.metrics;
  nlohmann::json kinds = nlohmann::json::object();
  for (int k = 0; k < kWorkloadKindCount; ++k) {
    const KindMetrics& km = m.kinds[static_cast<size_t>(k)];
    kinds[KindName(static_cast<WorkloadKind>(k))] = {
        {"submitted", km.submitted},
        {"started", km.started},
        {"completed", km.completed},
        {"with_deadline", km.with_deadline},
        {"deadline_met", km.deadline_met},
        {"value", km.value},
        {"queueing_delay_s", PercentilesToJson(ComputePercentiles(km.queue_delay_s))},
        {"jct_s", PercentilesToJson(ComputePercentiles(km.jct_s))},
    };
  }
  double tenant_total = 0;
  for (const auto& [t, v] : m.tenant_gpu_ms) tenant_total += v;
  nlohmann::json tenants = nlohmann::json::object();
  for (const auto& [t, v] : m.tenant_gpu_ms)
    tenants[t] = {{"gpu_hours", v / 3.6e6}, {"share", tenant_total > 0 ? v / tenant_total : 0}};
  nlohmann::json services = nlohmann::json::object();
  for (const auto& [name, sm] : m.services) {
    services[name] = {{"requests", sm.requests},
                      {"requests_in_slo", sm.requests_in_slo},
                      {"slo_attainment", sm.slo_attainment()},
                      {"missed_at_start", sm.missed_at_start},
                      {"replica_starts", sm.replica_starts},
                      {"value", sm.value},
                      {"gpu_hours", sm.gpu_ms / 3.6e6}};
    if (sm.variants) {
      services[name]["mean_quality"] = sm.mean_quality();
      services[name]["quality_floor"] = sm.quality_floor;
      services[name]["gpu_hours_freed_by_variants"] = sm.gpu_ms_freed / 3.6e6;
    }
  }
  bool variants = false;
  for (const auto& [name, sm] : m.services) variants |= sm.variants;
  nlohmann::json freed_use;
  if (variants) {
    const VariantFreedUse& f = m.freed_use;
    nlohmann::json taken = nlohmann::json::object();
    for (size_t k = 0; k < kWorkloadKindCount; ++k)
      if (f.taken_ms[k] > 0) taken[KindName(static_cast<WorkloadKind>(k))] = f.taken_ms[k] / 3.6e6;
    freed_use = {{"gpu_hours", f.freed_ms / 3.6e6},
                 {"taken_by", taken},
                 {"left_free_gpu_hours", f.left_free_ms / 3.6e6},
                 {"beyond_cluster_gpu_hours", f.beyond_ms / 3.6e6}};
  }
  nlohmann::json blocked = nlohmann::json::object();
  for (const auto& [shape, v] : r.shape_blocked) blocked[shape] = static_cast<double>(v) / 3.6e9;
  return {
      {"holds", HoldsToJson(m)},
      {"policy", r.policy},
      {"description", r.policy_description},
      {"ledger", ledger},
      {"value", m.value},
      {"return_per_gpu_hour", r.return_per_gpu_hour()},
      {"allocation_rate", r.allocation_rate()},
      {"slo_attainment", m.slo_attainment},
      {"requests", m.requests},
      {"requests_in_slo", m.requests_in_slo},
      {"deadline_hit_rate", m.deadline_hit_rate},
      {"kinds", kinds},
      {"services", services},
      {"variant_freed", freed_use},
      {"tenants", tenants},
      {"shape_blocked_gpu_hours", blocked},
      {"timeline", TimelineToJson(r)},
      {"preemptions", m.preemptions},
      {"failures", m.failures},
      {"in_progress", {{"jobs", m.in_progress_jobs}, {"value", m.in_progress_value}}},
      {"events", r.events},
      {"end_s", ToSeconds(r.end)},
      {"wall_seconds", r.wall_seconds},
      {"event_errors", r.event_errors},
      {"waiting_at_end", {{"count", r.waiting_at_end_count}, {"first", r.waiting_at_end}}},
      {"costs", CostsToJson(r.costs)},
  };
}

nlohmann::json ReportToJson(const SimInput& input, const std::vector<SimResult>& results,
                            uint64_t seed, const LpBound* bound) {
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& r : results) {
    policies.push_back(ResultToJson(r));
    if (bound != nullptr) policies.back()["return_of_bound"] = ReturnOfBound(r, *bound);
  }
  nlohmann::json report = {{"cluster",
                            {{"name", input.cluster.name()},
                             {"nodes", input.cluster.node_count()},
                             {"gpus", input.cluster.gpu_count()}}},
                           {"workloads", input.workloads.size()},
                           {"seed", seed},
                           {"notes", input.notes},
                           {"policies", policies}};
  if (bound != nullptr) report["bound"] = LpBoundToJson(*bound);
  return report;
}

namespace {

// The bound at an SLO target, or null when none was asked or there is no service.
nlohmann::json AtSloToJson(const LpBound& b) {
  if (b.slo <= 0) return nullptr;
  return {
      {"slo", b.slo},
      {"status", b.slo_status},
      {"value", b.slo_ok() ? nlohmann::json(b.slo_value) : nlohmann::json(nullptr)},
      {"per_gpu_hour", b.slo_ok() ? nlohmann::json(b.slo_per_gpu_hour()) : nlohmann::json(nullptr)},
      {"most_attainment", b.slo_most}};
}

}  // namespace

nlohmann::json LpBoundToJson(const LpBound& b) {
  return {{"status", b.status},
          {"value", b.ok() ? nlohmann::json(b.value) : nlohmann::json(nullptr)},
          {"per_gpu_hour", b.ok() ? nlohmann::json(b.per_gpu_hour()) : nlohmann::json(nullptr)},
          {"installed_gpu_hours", b.installed_gpu_hours},
          {"slot_s", ToSeconds(b.slot)},
          {"slots", b.slots},
          {"rows", b.rows},
          {"columns", b.columns},
          {"nonzeros", b.nonzeros},
          {"jobs", b.jobs},
          {"jobs_in_lp", b.jobs_in_lp},
          {"services", b.services},
          {"wall_seconds", b.solve_seconds},
          {"at_slo", AtSloToJson(b)}};
}

nlohmann::json ReturnOfBound(const SimResult& r, const LpBound& b) {
  if (!b.ok() || b.per_gpu_hour() <= 0) return nullptr;
  return r.return_per_gpu_hour() / b.per_gpu_hour();
}

std::string PercentOfBound(double value, double bound) {
  // Rounded down: 99.96% is not printed as 100.0%.
  return Fmt("%.1f%%", std::floor(1000 * value / bound + 1e-9) / 10);
}

std::string BoundLine(const LpBound& b) {
  char line[320];
  if (!b.ok()) {
    std::snprintf(line, sizeof line, "bound per installed GPU-h: none (LP: %s)\n",
                  b.status.c_str());
  } else {
    std::snprintf(line, sizeof line,
                  "bound per installed GPU-h: %.3f (LP relaxation over %d slots of %s: %d rows, "
                  "%d columns, %.2f s; %d of %d jobs could complete)\n",
                  b.per_gpu_hour(), b.slots, FormatDuration(b.slot).c_str(), b.rows, b.columns,
                  b.solve_seconds, b.jobs_in_lp, b.jobs);
  }
  std::string out = line;
  if (b.ok() && b.slo > 0) {
    // As many digits as the target was given with (%g's six made 0.9999999 read 100%).
    const std::string target = Fmt("%.12g%%", 100 * b.slo);
    if (b.slo_ok()) {
      std::snprintf(line, sizeof line,
                    "bound at %s realtime SLO: %.3f (on the schedules that serve %s of the "
                    "requests within the SLO)\n",
                    target.c_str(), b.slo_per_gpu_hour(), target.c_str());
    } else if (b.slo_status == "unreachable" && b.slo_most >= b.slo) {
      std::snprintf(line, sizeof line,
                    "bound at %s realtime SLO: none (no schedule serves %s of the requests: the "
                    "GPUs cannot hold the replicas it needs)\n",
                    target.c_str(), target.c_str());
    } else if (b.slo_status == "unreachable") {
      std::snprintf(line, sizeof line,
                    "bound at %s realtime SLO: none (no schedule serves %s of the requests: at "
                    "most %.2f%% arrive after the first cold starts, within max_replicas)\n",
                    target.c_str(), target.c_str(), 100 * b.slo_most);
    } else {
      std::snprintf(line, sizeof line, "bound at %s realtime SLO: none (LP: %s)\n", target.c_str(),
                    b.slo_status.c_str());
    }
    out += line;
  }
  return out;
}

std::string ResultsTable(const std::vector<SimResult>& results, double bound_per_gpu_hour) {
  std::string out;
  size_t w = 11;
  for (const auto& r : results) w = std::max(w, r.policy.size() + 2);
  auto row = [&](const std::string& label, auto cell) {
    out += label + std::string(label.size() < 26 ? 26 - label.size() : 0, ' ');
    for (const auto& r : results) out += Pad(cell(r), w);
    out += "\n";
  };
  row("policy", [](const SimResult& r) { return r.policy; });
  row("return / installed GPU-h",
      [](const SimResult& r) { return Fmt("%.3f", r.return_per_gpu_hour()); });
  if (bound_per_gpu_hour > 0)
    row("  % of bound", [&](const SimResult& r) {
      return PercentOfBound(r.return_per_gpu_hour(), bound_per_gpu_hour);
    });
  row("value", [](const SimResult& r) { return Fmt("%.1f", r.metrics.value); });
  row("allocation rate",
      [](const SimResult& r) { return Fmt("%.1f%%", 100 * r.allocation_rate()); });
  row("realtime SLO attainment",
      [](const SimResult& r) { return Fmt("%.2f%%", 100 * r.metrics.slo_attainment); });
  std::set<std::string> services;
  for (const auto& r : results)
    for (const auto& [name, sm] : r.metrics.services) services.insert(name);
  if (services.size() > 1) {
    for (const std::string& name : services)
      row("  " + name, [&](const SimResult& r) {
        auto it = r.metrics.services.find(name);
        return it == r.metrics.services.end() ? std::string("-")
                                              : Fmt("%.2f%%", 100 * it->second.slo_attainment());
      });
  }
  // Services with model variants: the mean quality served (floor) and the GPU-hours variant
  // choice freed against the best variant serving the same requests.
  for (const std::string& name : services) {
    bool variants = false;
    for (const auto& r : results) {
      auto it = r.metrics.services.find(name);
      variants |= it != r.metrics.services.end() && it->second.variants;
    }
    if (!variants) continue;
    auto cell = [&](const SimResult& r, auto f) {
      auto it = r.metrics.services.find(name);
      return it == r.metrics.services.end() ? std::string("-") : f(it->second);
    };
    row("  " + name + " mean quality", [&](const SimResult& r) {
      return cell(r, [](const ServiceMetrics& sm) {
        return Fmt("%.3f", sm.mean_quality()) +
               (sm.mean_quality() < sm.quality_floor - 1e-9 ? " <floor" : "");
      });
    });
    row("  " + name + " GPU-h freed", [&](const SimResult& r) {
      return cell(r, [](const ServiceMetrics& sm) { return Fmt("%.1f", sm.gpu_ms_freed / 3.6e6); });
    });
  }
  // Where the GPU-hours freed by variant choice went (VariantFreedUse), all services together.
  bool freed = false;
  for (const auto& r : results) freed |= r.metrics.freed_use.freed_ms > 0;
  if (freed) {
    auto hours = [](double ms) { return Fmt("%.1f", ms / 3.6e6); };
    row("variants' freed GPU-h",
        [&](const SimResult& r) { return hours(r.metrics.freed_use.freed_ms); });
    for (size_t k = 0; k < kWorkloadKindCount; ++k) {
      bool any = false;
      for (const auto& r : results) any |= r.metrics.freed_use.taken_ms[k] > 0;
      if (any)
        row(std::string("  taken by ") + KindName(static_cast<WorkloadKind>(k)),
            [&](const SimResult& r) { return hours(r.metrics.freed_use.taken_ms[k]); });
    }
    row("  left free", [&](const SimResult& r) { return hours(r.metrics.freed_use.left_free_ms); });
    bool beyond = false;
    for (const auto& r : results) beyond |= r.metrics.freed_use.beyond_ms > 0;
    if (beyond)
      row("  beyond the cluster",
          [&](const SimResult& r) { return hours(r.metrics.freed_use.beyond_ms); });
  }
  row("batch deadlines met",
      [](const SimResult& r) { return Fmt("%.1f%%", 100 * r.metrics.deadline_hit_rate); });
  row("preemptions", [](const SimResult& r) { return std::to_string(r.metrics.preemptions); });
  // Saved progress of jobs the end cut short: not in the return (MetricsSummary::in_progress_*).
  if (std::any_of(results.begin(), results.end(),
                  [](const SimResult& r) { return r.metrics.in_progress_jobs > 0; }))
    row("in progress at end: value",
        [](const SimResult& r) { return Fmt("%.1f", r.metrics.in_progress_value); });
  bool holds = false;
  for (const auto& r : results) holds |= !r.metrics.hold_summaries.empty();
  if (holds) {
    // The 3 a.m. summary, all services together (HoldsReport has them one by one).
    auto total = [](const SimResult& r, double HoldSummary::*field) {
      double v = 0;
      for (const auto& [name, h] : r.metrics.hold_summaries) v += h.*field;
      return v;
    };
    auto cell = [&](double HoldSummary::*a, double HoldSummary::*b) {
      return [=](const SimResult& r) {
        if (r.metrics.hold_summaries.empty()) return std::string("-");
        return Fmt("%.0f", total(r, a)) + " / " + Fmt("%.0f", total(r, b));
      };
    };
    row("3 a.m. holds: protected / forgone",
        cell(&HoldSummary::protected_value, &HoldSummary::forgone_value));
    row("  hand-offs: earned / lost", cell(&HoldSummary::earned_value, &HoldSummary::lost_value));
    row("  regret", [&](const SimResult& r) {
      return r.metrics.hold_summaries.empty() ? std::string("-")
                                              : Fmt("%.0f", total(r, &HoldSummary::regret));
    });
  }
  out += "ledger (% of installed GPU-hours)\n";
  for (int b = 0; b < kBucketCount; ++b) {
    const auto bucket = static_cast<Bucket>(b);
    if (bucket == Bucket::kForeign &&
        std::all_of(results.begin(), results.end(),
                    [&](const SimResult& r) { return r.ledger.gpu_hours(bucket) == 0; }))
      continue;  // as above
    row(std::string("  ") + BucketName(bucket), [&](const SimResult& r) {
      const double inst = r.ledger.installed_gpu_hours();
      return Fmt("%.1f%%", inst > 0 ? 100 * r.ledger.gpu_hours(bucket) / inst : 0);
    });
  }
  row("  installed GPU-hours",
      [](const SimResult& r) { return Fmt("%.0f", r.ledger.installed_gpu_hours()); });
  out += "queueing delay p50 / p99 (minutes; unstarted work counted to the end)\n";
  for (int k = 0; k < kWorkloadKindCount; ++k) {
    bool any = false;
    for (const auto& r : results) any |= r.metrics.kinds[static_cast<size_t>(k)].submitted > 0;
    if (!any) continue;
    row(std::string("  ") + KindName(static_cast<WorkloadKind>(k)), [&](const SimResult& r) {
      auto p = ComputePercentiles(r.metrics.kinds[static_cast<size_t>(k)].queue_delay_s);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f/%.0f", p.p50 / 60, p.p99 / 60);
      return std::string(buf);
    });
  }
  return out;
}

}  // namespace airtime
