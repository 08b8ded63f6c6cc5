#include "airtime/config/workload_yaml.h"

#include <algorithm>
#include <map>
#include <utility>

#include "airtime/base/strings.h"
#include "airtime/config/scenario_parts.h"
#include "airtime/config/yaml_reader.h"

namespace airtime {
namespace {

using yaml_internal::MapReader;
using yaml_internal::YamlFile;

// `anchors` is not read: it holds YAML anchors that workloads merge (`<<: *name`).
const std::vector<std::string> kTopLevelKeys = {"workloads", "events", "traces", "anchors"};

void SortEvents(std::vector<ScenarioEvent>* events) {
  std::stable_sort(events->begin(), events->end(),
                   [](const ScenarioEvent& a, const ScenarioEvent& b) { return a.at < b.at; });
}

// Accumulates one file's scenario, checking that workload names are unique.
class ScenarioBuilder {
 public:
  ScenarioBuilder(const YamlFile& file, const GpuCatalog& catalog,
                  const InterferenceModel& families)
      : file_(file), catalog_(catalog), families_(families) {}

  Status AddWorkload(const YAML::Node& node, size_t index, int line_hint) {
    auto spec = yaml_internal::ParseWorkload(file_, node, index, line_hint, catalog_, families_,
                                             &scenario_.traces);
    if (!spec.ok()) return spec.status();
    auto [it, inserted] = sources_.emplace(spec->name, spec->source);
    if (!inserted)
      return InvalidArgument(spec->source + ": workload '" + spec->name +
                             "': duplicate name (first defined at " + it->second + ")");
    scenario_.workloads.push_back(std::move(*spec));
    return OkStatus();
  }

  Status AddWorkloadList(const YAML::Node& list, int line) {
    size_t i = 0;
    for (const auto& item : list) AIRTIME_RETURN_IF_ERROR(AddWorkload(item, i++, line));
    return OkStatus();
  }

  // A mapping with workloads:, events: and traces: keys.
  Status AddSections(const YAML::Node& doc) {
    auto opened = MapReader::Open(file_, doc, "scenario", "", kTopLevelKeys, 1);
    if (!opened.ok()) return opened.status();
    const MapReader& r = *opened;
    if (r.Has("workloads")) {
      YAML::Node list = r.Get("workloads");
      if (!list.IsSequence()) return r.Expected("workloads", "a list of workloads");
      AIRTIME_RETURN_IF_ERROR(AddWorkloadList(list, r.LineOf("workloads")));
    }
    if (r.Has("events")) {
      YAML::Node list = r.Get("events");
      if (!list.IsSequence()) return r.Expected("events", "a list of events");
      size_t i = 0;
      for (const auto& item : list) {
        auto ev = yaml_internal::ParseEvent(file_, item, i++, r.LineOf("events"));
        if (!ev.ok()) return ev.status();
        scenario_.events.push_back(std::move(*ev));
      }
    }
    if (r.Has("traces")) {
      YAML::Node list = r.Get("traces");
      if (!list.IsSequence()) return r.Expected("traces", "a list of trace sources");
      size_t i = 0;
      for (const auto& item : list) {
        auto t = yaml_internal::ParseTrace(file_, item, "trace #" + std::to_string(++i), "",
                                           r.LineOf("traces"));
        if (!t.ok()) return t.status();
        scenario_.traces.push_back(std::move(*t));
      }
    }
    return OkStatus();
  }

  Status AddDocument(const YAML::Node& doc) {
    if (doc.IsNull()) return OkStatus();  // an empty document
    if (doc.IsSequence()) return AddWorkloadList(doc, file_.Line(doc, 1));
    if (!doc.IsMap())
      return file_.ErrorAt(file_.Line(doc, 1),
                           "expected a workload, a list of workloads or a mapping with "
                           "workloads:, events:, traces:, found " +
                               yaml_internal::DescribeFound(doc));
    bool sections = false;
    for (const auto& key : kTopLevelKeys) sections = sections || doc[key].IsDefined();
    if (sections) return AddSections(doc);
    // A single workload; a key that looks like a misspelt section name is reported as such.
    if (!doc["name"].IsDefined()) {
      for (const auto& kv : doc) {
        if (!kv.first.IsScalar()) continue;
        std::string hint = yaml_internal::DidYouMean(kv.first.Scalar(), kTopLevelKeys);
        if (!hint.empty())
          return file_.ErrorAt(file_.Line(kv.first, 1),
                               "unknown top-level key '" + kv.first.Scalar() + "'" + hint);
      }
    }
    return AddWorkload(doc, 0, 1);
  }

  Scenario Finish() && {
    SortEvents(&scenario_.events);
    return std::move(scenario_);
  }

 private:
  const YamlFile& file_;
  const GpuCatalog& catalog_;
  const InterferenceModel& families_;
  Scenario scenario_;
  std::map<std::string, std::string> sources_;  // workload name -> "file:line"
};

// One text's scenario, its produced variants not yet linked to their services.
StatusOr<Scenario> ParseUnlinked(std::string_view text, std::string_view filename,
                                 const GpuCatalog& catalog, const InterferenceModel* families) {
  YamlFile file{std::string(filename)};
  auto docs = file.LoadAll(text);
  if (!docs.ok()) return docs.status();
  ScenarioBuilder builder(file, catalog, families ? *families : InterferenceModel::Gavel());
  try {
    for (const auto& doc : *docs) AIRTIME_RETURN_IF_ERROR(builder.AddDocument(doc));
  } catch (const YAML::Exception& e) {  // not expected: the readers avoid throwing calls
    return file.ErrorAt(e.mark.is_null() ? 1 : e.mark.line + 1, "YAML error: " + e.msg);
  }
  return std::move(builder).Finish();
}

StatusOr<Scenario> LoadUnlinked(const std::string& path, const GpuCatalog& catalog,
                                const InterferenceModel* families) {
  auto text = yaml_internal::ReadFileToString(path, "workload file");
  if (!text.ok()) return text.status();
  return ParseUnlinked(*text, path, catalog, families);
}

// "FILE:LINE: workload 'job': field 'produces.<field>': <message>".
Status ProducesError(const WorkloadSpec& job, const std::string& field,
                     const std::string& message) {
  const std::string& where =
      field == "service" ? job.produces.service_source : job.produces.variant_source;
  return InvalidArgument((where.empty() ? job.source : where) + ": workload '" + job.name +
                         "': field 'produces." + field + "': " + message);
}

}  // namespace

const char* ScenarioEventTypeName(ScenarioEvent::Type t) {
  switch (t) {
    case ScenarioEvent::kNodeDown:
      return "node_down";
    case ScenarioEvent::kNodeUp:
      return "node_up";
    case ScenarioEvent::kPriority:
      return "priority";
    case ScenarioEvent::kCancel:
      return "cancel";
  }
  return "?";
}

StatusOr<Scenario> ParseWorkloadYaml(std::string_view text, std::string_view filename,
                                     const GpuCatalog& catalog, const InterferenceModel* families) {
  auto scenario = ParseUnlinked(text, filename, catalog, families);
  if (!scenario.ok()) return scenario.status();
  AIRTIME_RETURN_IF_ERROR(LinkProducedVariants(&scenario->workloads));
  return scenario;
}

StatusOr<Scenario> ParseSubmissionYaml(std::string_view text, std::string_view filename,
                                       const GpuCatalog& catalog,
                                       const InterferenceModel* families) {
  auto scenario = ParseUnlinked(text, filename, catalog, families);
  if (!scenario.ok()) return scenario.status();
  AIRTIME_RETURN_IF_ERROR(LinkProducedVariants(&scenario->workloads, /*services_elsewhere=*/true));
  return scenario;
}

StatusOr<Scenario> LoadWorkloadYaml(const std::string& path, const GpuCatalog& catalog,
                                    const InterferenceModel* families) {
  auto scenario = LoadUnlinked(path, catalog, families);
  if (!scenario.ok()) return scenario.status();
  AIRTIME_RETURN_IF_ERROR(LinkProducedVariants(&scenario->workloads));
  return scenario;
}

StatusOr<size_t> FindProducedVariant(const RealtimeProfile& rt, const ProducedVariant& p) {
  std::vector<std::string> names;
  for (const ModelVariant& v : rt.variants) names.push_back(v.name);
  const auto at = std::find(names.begin(), names.end(), p.variant);
  if (at == names.end())
    return InvalidArgument("expected one of the variants of '" + p.service + "' (" +
                           Join(names, ", ") + "), found '" + p.variant + "'" +
                           yaml_internal::DidYouMean(p.variant, names));
  return static_cast<size_t>(at - names.begin());
}

Status LinkProducedVariants(std::vector<WorkloadSpec>* workloads, bool services_elsewhere) {
  std::map<std::string, WorkloadSpec*> services;  // realtime services with variants, by name
  std::vector<std::string> service_names;
  for (WorkloadSpec& w : *workloads) {
    if (!w.is_service() || w.realtime.variants.empty() || w.realtime.is_member()) continue;
    services.emplace(w.name, &w);
    service_names.push_back(w.name);
  }
  for (const WorkloadSpec& job : *workloads) {
    const ProducedVariant& p = job.produces;
    if (p.empty()) continue;
    auto it = services.find(p.service);
    if (it == services.end()) {
      auto named = std::find_if(workloads->begin(), workloads->end(),
                                [&](const WorkloadSpec& w) { return w.name == p.service; });
      if (named == workloads->end() && services_elsewhere) continue;
      const std::string found = named == workloads->end() ? "'" + p.service + "'"
                                : named->is_service()
                                    ? "'" + p.service + "', a realtime service without variants"
                                    : "'" + p.service + "', a " + KindName(named->kind) + " job";
      return ProducesError(
          job, "service",
          "expected a realtime service with variants (" +
              (service_names.empty() ? std::string("none loaded") : Join(service_names, ", ")) +
              "), found " + found + yaml_internal::DidYouMean(p.service, service_names));
    }
    RealtimeProfile& rt = it->second->realtime;
    const StatusOr<size_t> found = FindProducedVariant(rt, p);
    if (!found.ok()) return ProducesError(job, "variant", found.status().message());
    const size_t v = *found;
    ModelVariant& mv = rt.variants[v];
    if (!mv.produced_by.empty() && mv.produced_by != job.name) {
      std::string other_at;
      for (const WorkloadSpec& o : *workloads)
        if (o.name == mv.produced_by) other_at = " (at " + o.produces.variant_source + ")";
      return ProducesError(job, "variant",
                           "variant '" + p.service + "/" + p.variant +
                               "' is already produced by job '" + mv.produced_by + "'" + other_at +
                               "; one job makes each variant");
    }
    if (std::string why = rt.WhyNotProduced(v); !why.empty())
      return ProducesError(
          job, "variant",
          "variant '" + p.service + "/" + p.variant + "' cannot wait for this job: " + why);
    mv.produced_by = job.name;
  }
  return OkStatus();
}

Status MergeScenario(Scenario* into, Scenario more) {
  std::map<std::string, const WorkloadSpec*> names;
  for (const auto& w : into->workloads) names.emplace(w.name, &w);
  for (const auto& w : more.workloads) {
    auto it = names.find(w.name);
    if (it != names.end())
      return InvalidArgument(w.source + ": workload '" + w.name +
                             "': duplicate name (first defined at " + it->second->source + ")");
  }
  for (auto& w : more.workloads) into->workloads.push_back(std::move(w));
  for (auto& e : more.events) into->events.push_back(std::move(e));
  for (auto& t : more.traces) into->traces.push_back(std::move(t));
  SortEvents(&into->events);
  return OkStatus();
}

StatusOr<Scenario> LoadWorkloadYamlFiles(const std::vector<std::string>& paths,
                                         const GpuCatalog& catalog,
                                         const InterferenceModel* families) {
  Scenario all;
  for (const auto& path : paths) {
    auto one = LoadUnlinked(path, catalog, families);
    if (!one.ok()) return one.status();
    AIRTIME_RETURN_IF_ERROR(MergeScenario(&all, std::move(*one)));
  }
  AIRTIME_RETURN_IF_ERROR(LinkProducedVariants(&all.workloads));
  return all;
}

Status CheckEventTargets(const Scenario& scenario, const Cluster& cluster) {
  std::vector<std::string> nodes, workloads;
  for (const auto& n : cluster.nodes()) nodes.push_back(n.name);
  for (const auto& w : scenario.workloads) workloads.push_back(w.name);
  for (const auto& e : scenario.events) {
    const bool on_node = e.type == ScenarioEvent::kNodeDown || e.type == ScenarioEvent::kNodeUp;
    const auto& names = on_node ? nodes : workloads;
    if (std::find(names.begin(), names.end(), e.target) != names.end()) continue;
    std::string what = on_node ? "a node of cluster '" + cluster.name() + "'" : "a workload";
    return InvalidArgument(e.source + ": event " + ScenarioEventTypeName(e.type) + ": expected " +
                           what + ", found '" + e.target + "'" +
                           yaml_internal::DidYouMean(e.target, names));
  }
  return OkStatus();
}

}  // namespace airtime
