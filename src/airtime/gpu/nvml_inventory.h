// NvmlInventory: this host's real GPUs, read through NVML (nvml.h).
//
// The device list is read once, at Open: each device's UUID, name, memory and MIG mode,
// with its catalogue type from model_names.h ("" for a model airtime does not know).
// A device whose handle or UUID cannot be read is left out and named in the note. Sample
// reads utilization, memory used, power and compute PIDs of every listed device; a field
// NVML cannot give for a device stays empty, and a device lost since Open gives a sample
// with only its UUID and time. Thread-safe (NVML is; the device list is immutable).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "airtime/gpu/inventory.h"
#include "airtime/gpu/nvml.h"

namespace airtime {

class NvmlInventory : public GpuInventory {
 public:
  // Fails only when NVML cannot count its devices. `note` (may be null) receives a
  // summary ("NVML driver 550.54.15: 8 GPUs") and any devices left out.
  static StatusOr<std::unique_ptr<NvmlInventory>> Open(std::unique_ptr<Nvml> nvml,
                                                       std::string* note);

  std::vector<GpuDevice> Devices() const override { return devices_; }
  std::vector<GpuSample> Sample(TimeMs now) const override;
  const Nvml& nvml() const { return *nvml_; }

 private:
  NvmlInventory(std::unique_ptr<Nvml> nvml, std::vector<GpuDevice> devices)
      : nvml_(std::move(nvml)), devices_(std::move(devices)) {}

  std::unique_ptr<Nvml> nvml_;
  std::vector<GpuDevice> devices_;
};

}  // namespace airtime
