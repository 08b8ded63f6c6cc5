// ClusterFromDevices: this host's GPUs as the airtime::Cluster the engine schedules onto.
//
// A Node holds GPUs of one type with one MIG setting (model/cluster.h), so the devices are
// grouped by (type, MIG): one group gives one node named after the host; several (a host
// with, say, H200s and L4s) give one node per group, "<host>-<type>" (lower case, "-mig"
// appended for the MIG-enabled group of a type that has both), all in one rack named after
// the host. Groups keep the order of their first device; devices within a group keep their
// order. Devices with an unknown type are left out and named in the note. No devices at
// all gives one node with no GPUs. The Cluster refers to `catalog`, which must outlive it.
// Stateless: safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/gpu/device.h"
#include "airtime/model/cluster.h"
#include "airtime/model/gpu_catalog.h"

namespace airtime {

// InvalidArgument for an empty host name. `note` (may be null) names devices left out.
StatusOr<Cluster> ClusterFromDevices(const std::vector<GpuDevice>& devices,
                                     const std::string& hostname, std::string* note = nullptr,
                                     const GpuCatalog& catalog = GpuCatalog::Builtin());

// The UUIDs of the devices ClusterFromDevices keeps, in the Cluster's GpuIndex order, so
// that the daemon can map engine GPU indices to devices.
std::vector<std::string> ClusterGpuUuids(const std::vector<GpuDevice>& devices,
                                         const GpuCatalog& catalog = GpuCatalog::Builtin());

}  // namespace airtime
