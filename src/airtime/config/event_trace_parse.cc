// ParseEvent and ParseTrace: one scenario event, one trace source (see scenario_parts.h).
#include <limits>
#include <string>
#include <vector>

#include "airtime/base/strings.h"
#include "airtime/config/scenario_parts.h"

namespace airtime::yaml_internal {

namespace {
const char* const kEventTypeKeys[] = {"node_down", "node_up", "priority", "cancel"};
}  // namespace

StatusOr<ScenarioEvent> ParseEvent(const YamlFile& file, const YAML::Node& node, size_t index,
                                   int line_hint) {
  auto opened = MapReader::Open(file, node, "event #" + std::to_string(index + 1), "",
                                {"at", "node_down", "node_up", "priority", "cancel"}, line_hint);
  if (!opened.ok()) return opened.status();
  const MapReader& r = *opened;
  ScenarioEvent ev;
  ev.source = file.Where(r.line());
  AIRTIME_RETURN_IF_ERROR(r.Require("at", " (when the event happens, e.g. at: 6h)"));
  AIRTIME_RETURN_IF_ERROR(r.Duration("at", &ev.at));

  std::vector<std::string> given;
  for (const char* k : kEventTypeKeys)
    if (r.Has(k)) given.push_back(k);
  if (given.size() != 1)
    return file.ErrorAt(r.line(), r.subject() +
                                      ": expected exactly one of node_down, node_up, "
                                      "priority, cancel, found " +
                                      (given.empty() ? "none" : Join(given, " and ")));
  const std::string& key = given[0];
  if (key == "node_down" || key == "node_up" || key == "cancel") {
    ev.type = key == "node_down" ? ScenarioEvent::kNodeDown
              : key == "node_up" ? ScenarioEvent::kNodeUp
                                 : ScenarioEvent::kCancel;
    AIRTIME_RETURN_IF_ERROR(r.String(key, &ev.target));
    return ev;
  }
  ev.type = ScenarioEvent::kPriority;
  auto p = r.Sub("priority", {"workload", "value"});
  if (!p.ok()) return p.status();
  AIRTIME_RETURN_IF_ERROR(p->Require("workload"));
  AIRTIME_RETURN_IF_ERROR(p->String("workload", &ev.target));
  AIRTIME_RETURN_IF_ERROR(p->Require("value", " (the new priority)"));
  AIRTIME_RETURN_IF_ERROR(p->Int("value", &ev.priority, std::numeric_limits<int>::min()));
  return ev;
}

StatusOr<TraceSource> ParseTrace(const YamlFile& file, const YAML::Node& node,
                                 const std::string& subject, const std::string& field,
                                 int line_hint) {
  auto opened = MapReader::OpenAnyKeys(file, node, subject, field, line_hint);
  if (!opened.ok()) return opened.status();
  const MapReader& r = *opened;
  TraceSource t;
  t.source = file.Where(r.line());
  AIRTIME_RETURN_IF_ERROR(r.Require("format", " (the trace format, e.g. format: azure)"));
  AIRTIME_RETURN_IF_ERROR(r.String("format", &t.format));
  AIRTIME_RETURN_IF_ERROR(r.OneOf("file", "path"));
  const char* key = r.Has("path") ? "path" : "file";
  AIRTIME_RETURN_IF_ERROR(r.Require(key, " (the trace file, relative to this YAML file)"));
  std::string path;
  AIRTIME_RETURN_IF_ERROR(r.String(key, &path));
  t.path = file.ResolvePath(path);
  for (const auto& e : r.entries()) {
    if (e.key == "format" || e.key == key) continue;
    if (!e.value.IsScalar()) return r.Expected(e.key, "a single value (a trace option)");
    t.options[e.key] = e.value.Scalar();
  }
  return t;
}

}  // namespace airtime::yaml_internal
