#include "airtime/config/cluster_yaml.h"

#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "airtime/config/yaml_reader.h"
#include "airtime/model/host_limits.h"

namespace airtime {
namespace {

using yaml_internal::MapReader;
using yaml_internal::YamlFile;

constexpr int kMaxNodesPerEntry = 100000;
constexpr size_t kMaxNodes = 100000;  // nodes in the whole cluster, after count: expands
constexpr int kMaxGpusPerNode = 1024;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Parses one entry of `nodes:` and appends the node(s) it describes, with the line that
// produced each (for duplicate-name messages).
Status ParseNodeEntry(const YamlFile& file, const YAML::Node& item, size_t index, int list_line,
                      const GpuCatalog& catalog, std::vector<Node>* nodes,
                      std::vector<int>* lines) {
  auto opened = MapReader::Open(
      file, item, yaml_internal::NamedSubject(item, "node", index), "",
      {"name", "count", "gpu", "gpus", "cpu", "memory_gib", "nvlink_domain", "rack", "pool", "mig"},
      list_line);
  if (!opened.ok()) return opened.status();
  MapReader& r = *opened;

  std::string name;
  AIRTIME_RETURN_IF_ERROR(r.Require("name"));
  AIRTIME_RETURN_IF_ERROR(r.String("name", &name));

  Node node;
  node.name = name;
  int count = 1;
  AIRTIME_RETURN_IF_ERROR(r.Int("count", &count, 1, kMaxNodesPerEntry));
  AIRTIME_RETURN_IF_ERROR(r.Require("gpus", " (GPUs per node; 0 for a CPU-only node)"));
  AIRTIME_RETURN_IF_ERROR(r.Int("gpus", &node.gpu_count, 0, kMaxGpusPerNode));
  if (r.Has("gpu")) {
    std::string type;
    AIRTIME_RETURN_IF_ERROR(r.String("gpu", &type));
    auto id = yaml_internal::FindGpuType(catalog, type);
    if (!id.ok()) return r.FieldError("gpu", id.status().message());
    node.gpu_type = *id;
  } else if (node.gpu_count > 0) {
    return r.Missing("gpu", " (the GPU type, one of " + catalog.NamesForError() + ")");
  }

  double cores = 0;
  AIRTIME_RETURN_IF_ERROR(r.Number("cpu", &cores, 0, kMaxCpuCores));
  node.cpu_milli = std::llround(cores * 1000);
  double gib = 0;
  AIRTIME_RETURN_IF_ERROR(r.Number("memory_gib", &gib, 0, kMaxMemoryGib));
  node.memory_mib = std::llround(gib * 1024);
  AIRTIME_RETURN_IF_ERROR(r.String("nvlink_domain", &node.nvlink_domain));
  AIRTIME_RETURN_IF_ERROR(r.String("rack", &node.rack));
  AIRTIME_RETURN_IF_ERROR(r.String("pool", &node.pool));
  AIRTIME_RETURN_IF_ERROR(r.Bool("mig", &node.mig_enabled));
  if (node.mig_enabled) {
    if (node.gpu_count == 0) return r.FieldError("mig", "MIG needs GPUs, but the node has gpus: 0");
    if (catalog.type(node.gpu_type).mig_profiles.empty())
      return r.FieldError("mig", "GPU type " + catalog.type(node.gpu_type).name +
                                     " does not support MIG (A100, H100 and H200 do)");
  }

  // Each entry is within its own bounds; together they must be too (many entries of
  // count: 100000 would otherwise expand to billions of nodes).
  if (nodes->size() + static_cast<size_t>(r.Has("count") ? count : 1) > kMaxNodes)
    return r.FieldError(r.Has("count") ? "count" : "name",
                        "the cluster would have more than " + std::to_string(kMaxNodes) +
                            " nodes (the limit of a cluster file)");
  if (!r.Has("count")) {
    nodes->push_back(std::move(node));
    lines->push_back(r.line());
    return OkStatus();
  }
  for (int i = 0; i < count; ++i) {
    Node copy = node;
    copy.name = name + "-" + std::to_string(i);
    nodes->push_back(std::move(copy));
    lines->push_back(r.line());
  }
  return OkStatus();
}

constexpr double kMaxPrice = 1e7;  // per GPU: more is a typo (or a whole cluster)
constexpr double kMaxLifeYears = 100;
constexpr double kMaxPowerW = 10000;  // per GPU; today's largest draw about 1.5 kW
constexpr double kMaxPerKwh = 100;    // far above any retail electricity price
constexpr double kMaxPue = 10;
constexpr double kMaxPerHour = 1e5;

// One entry of `costs:`: the overrides of one GPU type's cost inputs, onto `cost`.
Status ParseCostEntry(const MapReader& costs, const std::string& key, GpuCost* cost) {
  if (!costs.Get(key).IsMap())
    return costs.Expected(key, "a mapping of cost fields",
                          " (e.g. {price: 30000} or {per_hour: 2})");
  auto opened =
      costs.Sub(key, {"price", "life_years", "power_w", "electricity_per_kwh", "pue", "per_hour"});
  if (!opened.ok()) return opened.status();
  const MapReader& r = *opened;
  if (r.Has("per_hour")) {
    for (const char* other : {"price", "life_years", "power_w", "electricity_per_kwh", "pue"})
      if (r.Has(other))
        return r.FieldError(other,
                            "per_hour replaces price, life_years, power_w, "
                            "electricity_per_kwh and pue: give per_hour or those, not both");
    double per_hour = 0;
    AIRTIME_RETURN_IF_ERROR(r.Number("per_hour", &per_hour, 0, kMaxPerHour));
    *cost = GpuCost{};
    cost->priced = true;
    cost->per_hour = per_hour;
    return OkStatus();
  }
  if (!cost->priced) {  // a type without defaults starts from the shared ones
    cost->life_years = kDefaultLifeYears;
    cost->electricity_per_kwh = kDefaultElectricityPerKwh;
    cost->pue = kDefaultPue;
  }
  cost->priced = true;
  cost->per_hour.reset();
  AIRTIME_RETURN_IF_ERROR(r.Number("price", &cost->price, 0, kMaxPrice));
  AIRTIME_RETURN_IF_ERROR(r.Number("life_years", &cost->life_years, 0, kMaxLifeYears, true));
  AIRTIME_RETURN_IF_ERROR(r.Number("power_w", &cost->power_w, 0, kMaxPowerW));
  AIRTIME_RETURN_IF_ERROR(
      r.Number("electricity_per_kwh", &cost->electricity_per_kwh, 0, kMaxPerKwh));
  AIRTIME_RETURN_IF_ERROR(r.Number("pue", &cost->pue, 1, kMaxPue));
  return OkStatus();
}

// `costs:` of the cluster mapping: a mapping from GPU type to cost fields.
Status ParseCosts(const MapReader& c, const GpuCatalog& catalog, std::vector<GpuCost>* costs) {
  *costs = DefaultGpuCosts(catalog);
  if (!c.Has("costs")) return OkStatus();
  if (!c.Get("costs").IsMap())
    return c.Expected("costs", "a mapping from GPU type to its costs",
                      " (e.g. costs: {H100: {price: 30000}})");
  auto opened = c.SubAnyKeys("costs");
  if (!opened.ok()) return opened.status();
  const MapReader& r = *opened;
  std::map<GpuTypeId, std::string> seen;
  for (const auto& e : r.entries()) {
    auto id = yaml_internal::FindGpuType(catalog, e.key);
    if (!id.ok()) return r.FieldError(e.key, id.status().message());
    auto [it, inserted] = seen.emplace(*id, e.key);
    if (!inserted)
      return r.FieldError(e.key, "GPU type " + catalog.type(*id).name + " already has costs (as '" +
                                     it->second + "')");
    AIRTIME_RETURN_IF_ERROR(ParseCostEntry(r, e.key, &(*costs)[static_cast<size_t>(*id)]));
  }
  return OkStatus();
}

StatusOr<ClusterFile> ParseClusterDocuments(const YamlFile& file,
                                            const std::vector<YAML::Node>& docs,
                                            const GpuCatalog& catalog) {
  std::vector<YAML::Node> present;
  for (const auto& d : docs)
    if (!d.IsNull()) present.push_back(d);
  if (present.empty()) return file.ErrorAt(1, "empty cluster file: expected a 'cluster:' mapping");
  if (present.size() > 1)
    return file.ErrorAt(file.Line(present[1], 1),
                        "a cluster file holds one YAML document, found a second one");

  // `anchors` is not read: it holds YAML anchors that nodes merge (`<<: *name`).
  auto root = MapReader::Open(file, present[0], "cluster file", "", {"cluster", "anchors"}, 1);
  if (!root.ok()) return root.status();
  AIRTIME_RETURN_IF_ERROR(root->Require("cluster"));
  auto cluster = MapReader::Open(file, root->Get("cluster"), "cluster", "",
                                 {"name", "nodes", "costs"}, root->LineOf("cluster"));
  if (!cluster.ok()) return cluster.status();
  MapReader& c = *cluster;

  std::string name;
  AIRTIME_RETURN_IF_ERROR(c.Require("name"));
  AIRTIME_RETURN_IF_ERROR(c.String("name", &name));
  c.set_subject("cluster '" + name + "'");
  AIRTIME_RETURN_IF_ERROR(c.Require("nodes"));
  YAML::Node list = c.Get("nodes");
  if (!list.IsSequence() || list.size() == 0)
    return c.Expected("nodes", "a non-empty list of nodes");

  std::vector<Node> nodes;
  std::vector<int> lines;
  size_t index = 0;
  for (const auto& item : list)
    AIRTIME_RETURN_IF_ERROR(
        ParseNodeEntry(file, item, index++, c.LineOf("nodes"), catalog, &nodes, &lines));

  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto [it, inserted] = seen.emplace(nodes[i].name, i);
    if (!inserted)
      return file.ErrorAt(lines[i], "node '" + nodes[i].name + "': duplicate node name (also at " +
                                        file.Where(lines[it->second]) + ")");
  }

  std::vector<GpuCost> costs;
  AIRTIME_RETURN_IF_ERROR(ParseCosts(c, catalog, &costs));

  auto built = Cluster::Build(name, std::move(nodes), catalog);
  if (!built.ok()) return file.ErrorAt(c.line(), built.status().message());
  return ClusterFile{std::move(*built), std::move(costs)};
}

}  // namespace

StatusOr<ClusterFile> ParseClusterFile(std::string_view text, std::string_view filename,
                                       const GpuCatalog& catalog) {
  YamlFile file{std::string(filename)};
  auto docs = file.LoadAll(text);
  if (!docs.ok()) return docs.status();
  try {
    return ParseClusterDocuments(file, *docs, catalog);
  } catch (const YAML::Exception& e) {  // not expected: the readers avoid throwing calls
    return file.ErrorAt(e.mark.is_null() ? 1 : e.mark.line + 1, "YAML error: " + e.msg);
  }
}

StatusOr<ClusterFile> LoadClusterFile(const std::string& path, const GpuCatalog& catalog) {
  auto text = yaml_internal::ReadFileToString(path, "cluster file");
  if (!text.ok()) return text.status();
  return ParseClusterFile(*text, path, catalog);
}

StatusOr<Cluster> ParseClusterYaml(std::string_view text, std::string_view filename,
                                   const GpuCatalog& catalog) {
  auto parsed = ParseClusterFile(text, filename, catalog);
  if (!parsed.ok()) return parsed.status();
  return std::move(parsed->cluster);
}

StatusOr<Cluster> LoadClusterYaml(const std::string& path, const GpuCatalog& catalog) {
  auto parsed = LoadClusterFile(path, catalog);
  if (!parsed.ok()) return parsed.status();
  return std::move(parsed->cluster);
}

std::string ClusterFileYaml(const Cluster& cluster) {
  YAML::Emitter out;
  out.SetDoublePrecision(15);
  out << YAML::BeginMap << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << cluster.name();
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (const Node& n : cluster.nodes()) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << n.name;
    if (n.gpu_type != kNoGpuType)
      out << YAML::Key << "gpu" << YAML::Value << cluster.catalog().type(n.gpu_type).name;
    out << YAML::Key << "gpus" << YAML::Value << n.gpu_count;
    if (n.cpu_milli > 0)
      out << YAML::Key << "cpu" << YAML::Value << static_cast<double>(n.cpu_milli) / 1000;
    if (n.memory_mib > 0)
      out << YAML::Key << "memory_gib" << YAML::Value << static_cast<double>(n.memory_mib) / 1024;
    for (const auto& [key, value] :
         {std::pair<const char*, const std::string*>{"nvlink_domain", &n.nvlink_domain},
          {"rack", &n.rack},
          {"pool", &n.pool}})
      if (!value->empty()) out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << *value;
    if (n.mig_enabled) out << YAML::Key << "mig" << YAML::Value << true;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace airtime
