// GpuInventory: the daemon's view of this host's GPUs, real or simulated.
//
// Devices() is the fixed list read at start-up; Sample(now) one telemetry reading per
// device, in the same order. Implementations: NvmlInventory (nvml_inventory.h, real GPUs
// through NVML) and FakeInventory (fake_inventory.h, simulated GPUs whose telemetry the
// workload processes report themselves through Report). OpenInventory picks one for the
// daemon's flags. Implementations are thread-safe: Sample and Report may race.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/base/time.h"
#include "airtime/gpu/device.h"
#include "airtime/gpu/nvml.h"

namespace airtime {

class GpuInventory {
 public:
  virtual ~GpuInventory() = default;

  virtual std::vector<GpuDevice> Devices() const = 0;
  virtual std::vector<GpuSample> Sample(TimeMs now) const = 0;
  // Telemetry a process reports about the GPU it runs on. Only fake GPUs take it (their
  // samples are made of it); the default answers FailedPrecondition.
  virtual Status Report(const std::string& uuid, std::optional<double> utilization,
                        std::optional<int64_t> memory_used_mib, std::vector<int64_t> pids);
};

// The daemon's inventory: `fake_spec` non-empty ("8xH100", "2xH200,4xL4") gives fake GPUs
// (InvalidArgument for a bad spec); otherwise NVML from `nvml_library`. When NVML is absent
// or unusable the result is an empty inventory, not an error, and `*note` (when not null)
// says why, e.g. "NVML not found (libnvidia-ml.so.1): no GPUs; use --fake-gpus 8xH100 to
// simulate". On success `*note` describes what was found.
StatusOr<std::unique_ptr<GpuInventory>> OpenInventory(
    const std::string& fake_spec, std::string* note,
    const std::string& nvml_library = kNvmlLibrary);

}  // namespace airtime
