// SuiteFile: see suite_file.h.
#include "airtime/sim/suite_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>

namespace airtime {

StatusOr<std::vector<SuiteScenario>> LoadSuite(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<SuiteScenario> out;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return NotFound("cannot read suite file " + path);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  const fs::path base = fs::path(path).parent_path();
  auto rel = [&](const std::string& p) { return (base / p).lexically_normal().string(); };
  const YAML::Node list = root["suite"];
  if (!list || !list.IsSequence())
    return InvalidArgument(path + ": expected a top-level 'suite:' list of scenarios");
  for (const YAML::Node& n : list) {
    SuiteScenario s;
    s.source = path + ":" + std::to_string(n.Mark().line + 1);
    auto field = [&](const char* key) { return n[key] ? n[key].as<std::string>() : std::string(); };
    try {
      for (const auto& kv : n) {
        const std::string k = kv.first.as<std::string>();
        static const char* kKnown[] = {"name",     "cluster", "workloads", "horizon",
                                       "protocol", "nodes",   "pods"};
        if (std::find(std::begin(kKnown), std::end(kKnown), k) == std::end(kKnown))
          return InvalidArgument(
              s.source + ": unknown field '" + k +
              "' (known: name, cluster, workloads, horizon, protocol, nodes, pods)");
      }
      s.name = field("name");
      s.horizon = field("horizon");
      s.protocol = field("protocol");
      if (!s.protocol.empty()) {
        s.nodes = rel(field("nodes"));
        s.pods = rel(field("pods"));
      } else {
        s.cluster = rel(field("cluster"));
        if (n["workloads"])
          for (const auto& w : n["workloads"]) s.workloads.push_back(rel(w.as<std::string>()));
      }
    } catch (const YAML::Exception& e) {
      return InvalidArgument(s.source + ": " + e.msg);
    }
    if (s.name.empty()) return InvalidArgument(s.source + ": a scenario needs a name");
    if (s.protocol.empty() && (field("cluster").empty() || s.workloads.empty()))
      return InvalidArgument(s.source + ": scenario '" + s.name +
                             "' needs cluster and workloads (or protocol)");
    if (!s.protocol.empty() && s.protocol != "fgd")
      return InvalidArgument(s.source + ": unknown protocol '" + s.protocol + "' (known: fgd)");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace airtime
