// GpuDevice and GpuSample: what the daemon knows about one of this host's GPUs.
//
// A GpuDevice is the static description (read once at start-up); a GpuSample is one
// telemetry reading of it. Devices are identified by UUID everywhere (NVML's "GPU-..." or a
// fake "GPU-fake-..."), which is stable across restarts, unlike the index. Telemetry fields
// that could not be read are empty rather than zero. Plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "airtime/base/time.h"

namespace airtime {

struct GpuDevice {
  int index = 0;           // NVML index (or position in the fake spec)
  std::string uuid;        // "GPU-5f3c..." or "GPU-fake-0000-h100-00"
  std::string model;       // NVML name, e.g. "NVIDIA H200"
  std::string type;        // catalogue type name, e.g. "H200"; "" when not recognised
  int64_t memory_mib = 0;  // 0: unknown
  bool mig_enabled = false;
  bool fake = false;
  // N of the device node /dev/nvidiaN (NVML's minor number; a fake GPU's is its index):
  // what the run's device cgroup allows.
  int minor = 0;
};

struct GpuSample {
  std::string uuid;
  TimeMs at = 0;
  std::optional<double> utilization;  // 0..1
  std::optional<int64_t> memory_used_mib;
  std::optional<double> power_w;
  std::vector<int64_t> pids;  // compute processes; empty when none or unknown
};

}  // namespace airtime
