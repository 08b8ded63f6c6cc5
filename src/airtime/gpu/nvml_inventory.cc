// NvmlInventory: NVML readings turned into GpuDevice and GpuSample (see nvml_inventory.h).
#include "airtime/gpu/nvml_inventory.h"

#include "airtime/gpu/model_names.h"

namespace airtime {
namespace {

GpuDevice ToDevice(const NvmlDeviceInfo& info) {
  GpuDevice d;
  d.index = info.index;
  d.uuid = info.uuid;
  d.model = info.name;
  d.memory_mib = info.memory_total_mib.value_or(0);
  d.type = CatalogTypeForModel(info.name, d.memory_mib);
  d.mig_enabled = info.mig_enabled.value_or(false);
  d.minor = info.minor.value_or(info.index);
  return d;
}

GpuSample ToSample(const GpuDevice& d, TimeMs now, const StatusOr<NvmlTelemetry>& t) {
  GpuSample s;
  s.uuid = d.uuid;
  s.at = now;
  if (!t.ok()) return s;
  s.utilization = t->utilization;
  s.memory_used_mib = t->memory_used_mib;
  s.power_w = t->power_w;
  s.pids = t->pids.value_or(std::vector<int64_t>{});
  return s;
}

}  // namespace

StatusOr<std::unique_ptr<NvmlInventory>> NvmlInventory::Open(std::unique_ptr<Nvml> nvml,
                                                             std::string* note) {
  auto count = nvml->DeviceCount();
  if (!count.ok()) return count.status();
  std::vector<GpuDevice> devices;
  std::string skipped;
  for (int i = 0; i < *count; ++i) {
    auto info = nvml->Device(i);
    if (info.ok()) {
      devices.push_back(ToDevice(*info));
    } else {
      skipped += "; left out " + info.status().message();
    }
  }
  if (note != nullptr) {
    const std::string& v = nvml->driver_version();
    *note = "NVML" + (v.empty() ? "" : " driver " + v) + ": " + std::to_string(devices.size()) +
            " GPUs" + skipped;
  }
  return std::unique_ptr<NvmlInventory>(new NvmlInventory(std::move(nvml), std::move(devices)));
}

std::vector<GpuSample> NvmlInventory::Sample(TimeMs now) const {
  std::vector<GpuSample> out;
  out.reserve(devices_.size());
  for (const auto& d : devices_) out.push_back(ToSample(d, now, nvml_->Telemetry(d.index)));
  return out;
}

}  // namespace airtime
