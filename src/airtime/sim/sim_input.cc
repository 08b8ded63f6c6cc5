#include "airtime/sim/sim_input.h"

#include <algorithm>

#include "airtime/base/strings.h"
#include "airtime/config/cluster_yaml.h"
#include "airtime/traces/azure.h"
#include "airtime/traces/trace_source.h"

namespace airtime {
namespace {

StatusOr<AzureOptions> ParseAzureOptions(const TraceSource& t, bool skip_bad_rows) {
  AzureOptions o;
  o.skip_bad_rows = skip_bad_rows;
  auto bad = [&](const std::string& key, const std::string& expected) {
    return InvalidArgument(t.source + ": trace option '" + key + "': expected " + expected +
                           ", got '" + t.options.at(key) + "'");
  };
  for (const auto& [key, value] : t.options) {
    if (key == "target" || key == "class") continue;
    if (key == "bucket") {
      auto d = ParseDurationMs(value);
      if (!d || *d <= 0) return bad(key, "a duration such as 60s");
      o.bucket = *d;
    } else if (key == "diurnal_day") {
      std::string v = ToLower(value);
      if (v != "true" && v != "false") return bad(key, "true or false");
      o.diurnal_day = v == "true";
    } else if (key == "peak_rps" || key == "weekend_factor") {
      auto d = ParseDouble(value);
      if (!d || *d < 0) return bad(key, "a number >= 0");
      (key == "peak_rps" ? o.peak_rps : o.weekend_factor) = *d;
    } else if (key == "days") {
      auto d = ParseInt(value);
      if (!d || *d < 1 || *d > 36500) return bad(key, "an integer in [1, 36500]");
      o.days = static_cast<int>(*d);
    } else if (key == "skip_bad_rows") {
      o.skip_bad_rows = ToLower(value) == "true";
    } else {
      return InvalidArgument(t.source + ": unknown azure trace option '" + key +
                             "' (known: bucket, diurnal_day, peak_rps, days, weekend_factor, "
                             "skip_bad_rows, target)");
    }
  }
  return o;
}

std::string StatsNote(const TraceSource& t, const ImportStats& s) {
  std::string n =
      t.format + " trace " + t.path + ": " + std::to_string(s.rows_imported) + " rows imported";
  if (s.rows_skipped) n += ", " + std::to_string(s.rows_skipped) + " broken rows skipped";
  if (!s.first_errors.empty()) n += " (first: " + s.first_errors.front() + ")";
  return n;
}

}  // namespace

SimInput MakeSimInput(Cluster cluster, std::vector<WorkloadSpec> workloads,
                      std::vector<ScenarioEvent> events) {
  std::vector<GpuCost> costs = DefaultGpuCosts(cluster.catalog());
  // A service with variants runs as one member per variant (ExpandVariants).
  SimInput in{std::move(cluster),
              ExpandAllVariants(std::move(workloads)),
              std::move(events),
              {},
              std::move(costs)};
  std::stable_sort(
      in.workloads.begin(), in.workloads.end(),
      [](const WorkloadSpec& a, const WorkloadSpec& b) { return a.submit_at < b.submit_at; });
  std::stable_sort(in.events.begin(), in.events.end(),
                   [](const ScenarioEvent& a, const ScenarioEvent& b) { return a.at < b.at; });
  return in;
}

StatusOr<SimInput> LoadSimInput(const std::string& cluster_path,
                                const std::vector<std::string>& workload_paths,
                                const LoadOptions& options) {
  auto file = LoadClusterFile(cluster_path);
  if (!file.ok()) return file.status();
  Cluster* cluster = &file->cluster;
  auto scenario = LoadWorkloadYamlFiles(workload_paths, cluster->catalog(), options.families);
  if (!scenario.ok()) return scenario.status();
  std::vector<std::string> notes;
  for (const TraceSource& t : scenario->traces) {
    auto target = t.options.find("target");
    if (t.format == "azure") {
      if (target == t.options.end())
        return InvalidArgument(t.source +
                               ": an azure trace gives a demand curve and needs "
                               "target: <realtime workload>");
      auto it = std::find_if(scenario->workloads.begin(), scenario->workloads.end(),
                             [&](const WorkloadSpec& w) { return w.name == target->second; });
      if (it == scenario->workloads.end() || !it->is_service())
        return InvalidArgument(t.source + ": target '" + target->second +
                               "' is not a realtime workload of this scenario");
      auto opts = ParseAzureOptions(t, options.skip_bad_rows);
      if (!opts.ok()) return opts.status();
      ImportStats stats;
      auto curve = ImportAzureDemand(t.path, *opts, &stats);
      if (!curve.ok())
        return Status(curve.status().code(), t.source + ": " + curve.status().message());
      // The curve starts at the workload's submission.
      for (DemandPoint& p : *curve) p.at += it->submit_at;
      if (auto cls = t.options.find("class"); cls != t.options.end()) {
        auto& classes = it->realtime.classes;
        auto c = std::find_if(classes.begin(), classes.end(),
                              [&](const RequestClass& rc) { return rc.name == cls->second; });
        if (c == classes.end())
          return InvalidArgument(t.source + ": workload '" + it->name + "' has no class '" +
                                 cls->second + "'");
        c->demand = std::move(*curve);
        notes.push_back(StatsNote(t, stats) + " -> demand of '" + it->name + "', class '" +
                        cls->second + "'");
        continue;
      }
      it->realtime.demand = std::move(*curve);
      notes.push_back(StatsNote(t, stats) + " -> demand of '" + it->name + "'");
      continue;
    }
    if (target != t.options.end())
      return InvalidArgument(t.source + ": option 'target' applies to azure demand traces only");
    std::map<std::string, std::string> opts = t.options;
    if (options.skip_bad_rows) opts["skip_bad_rows"] = "true";
    ImportStats stats;
    auto imported = ImportWorkloadTrace(t.format, t.path, opts, &stats);
    if (!imported.ok())
      return Status(imported.status().code(), t.source + ": " + imported.status().message());
    for (WorkloadSpec& w : *imported) scenario->workloads.push_back(std::move(w));
    notes.push_back(StatsNote(t, stats));
  }
  Status names = CheckEventTargets(*scenario, *cluster);
  if (!names.ok()) return names;
  // Workload names must stay unique once traces are in.
  std::map<std::string, std::string> seen;
  for (const auto& w : scenario->workloads) {
    auto [it, fresh] = seen.emplace(w.name, w.source);
    if (!fresh)
      return InvalidArgument(w.source + ": workload name '" + w.name + "' is also used at " +
                             it->second);
  }
  SimInput in = MakeSimInput(std::move(*cluster), std::move(scenario->workloads),
                             std::move(scenario->events));
  in.notes = std::move(notes);
  in.costs = std::move(file->costs);
  return in;
}

}  // namespace airtime
