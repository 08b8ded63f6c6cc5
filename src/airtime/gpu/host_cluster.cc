// ClusterFromDevices and ClusterGpuUuids (see host_cluster.h).
#include "airtime/gpu/host_cluster.h"

#include <algorithm>

#include "airtime/base/strings.h"

namespace airtime {
namespace {

struct Group {
  GpuTypeId type = kNoGpuType;
  bool mig = false;
  std::vector<const GpuDevice*> devices;
};

// Known devices grouped by (type, MIG) in order of first appearance; the others listed in
// `unknown`.
std::vector<Group> GroupDevices(const std::vector<GpuDevice>& devices, const GpuCatalog& catalog,
                                std::vector<std::string>* unknown) {
  std::vector<Group> groups;
  for (const auto& d : devices) {
    auto id = d.type.empty() ? StatusOr<GpuTypeId>(NotFound("")) : catalog.Find(d.type);
    if (!id.ok()) {
      unknown->push_back(d.uuid + " ('" + d.model + "')");
      continue;
    }
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& g) { return g.type == *id && g.mig == d.mig_enabled; });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{*id, d.mig_enabled, {}});
    it->devices.push_back(&d);
  }
  return groups;
}

bool TypeHasBothMigModes(const std::vector<Group>& groups, GpuTypeId type) {
  int n = 0;
  for (const auto& g : groups) n += g.type == type;
  return n > 1;
}

Node MakeNode(const std::vector<Group>& groups, const Group& g, const std::string& host,
              const GpuCatalog& catalog) {
  Node n;
  n.gpu_type = g.type;
  n.gpu_count = static_cast<int>(g.devices.size());
  n.mig_enabled = g.mig && !catalog.type(g.type).mig_profiles.empty();
  n.name = host;
  if (groups.size() > 1) {
    n.name += "-" + ToLower(catalog.type(g.type).name);
    if (g.mig && TypeHasBothMigModes(groups, g.type)) n.name += "-mig";
    n.rack = host;
  }
  return n;
}

}  // namespace

StatusOr<Cluster> ClusterFromDevices(const std::vector<GpuDevice>& devices,
                                     const std::string& hostname, std::string* note,
                                     const GpuCatalog& catalog) {
  if (Trim(hostname).empty()) return InvalidArgument("ClusterFromDevices: empty host name");
  std::vector<std::string> unknown;
  std::vector<Group> groups = GroupDevices(devices, catalog, &unknown);
  std::vector<Node> nodes;
  for (const auto& g : groups) nodes.push_back(MakeNode(groups, g, hostname, catalog));
  if (nodes.empty()) {
    nodes.emplace_back();
    nodes.back().name = hostname;
  }
  if (note != nullptr) {
    note->clear();
    if (!unknown.empty())
      *note = "left out GPUs of a type airtime does not know: " + Join(unknown, ", ");
  }
  return Cluster::Build(hostname, std::move(nodes), catalog);
}

std::vector<std::string> ClusterGpuUuids(const std::vector<GpuDevice>& devices,
                                         const GpuCatalog& catalog) {
  std::vector<std::string> unknown, uuids;
  for (const auto& g : GroupDevices(devices, catalog, &unknown))
    for (const GpuDevice* d : g.devices) uuids.push_back(d->uuid);
  return uuids;
}

}  // namespace airtime
