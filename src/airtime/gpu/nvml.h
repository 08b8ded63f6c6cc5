// Nvml: NVIDIA's management library, loaded at run time with dlopen.
//
// No build-time dependency on NVIDIA: the library is opened by name (libnvidia-ml.so.1, or a
// path, which the tests use to load a fake) and its functions are looked up with dlsym.
// Open() fails with kUnavailable when the library cannot be loaded (a host without NVIDIA
// drivers, the normal case off GPU machines) and with kFailedPrecondition when it loads but
// cannot be used (a required symbol missing, nvmlInit_v2 failing: driver not loaded, no
// permission). Neither is meant to stop the daemon. After Open, a call that fails on one
// device (NOT_SUPPORTED on a MIG-enabled GPU, a missing optional symbol, ...) leaves that
// field empty; only losing the device handle fails a whole read. NVML is thread-safe and
// this class is immutable after Open, so one instance may be shared between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "airtime/base/status.h"

namespace airtime {

inline constexpr char kNvmlLibrary[] = "libnvidia-ml.so.1";

// The static description of one device.
struct NvmlDeviceInfo {
  int index = 0;
  std::string name;  // "NVIDIA H200"; "" when unknown
  std::string uuid;
  std::optional<int64_t> memory_total_mib;
  std::optional<bool> mig_enabled;
  std::optional<int> minor;  // N of /dev/nvidiaN (nvmlDeviceGetMinorNumber)
};

// One telemetry reading of one device.
struct NvmlTelemetry {
  std::optional<double> utilization;  // 0..1
  std::optional<int64_t> memory_used_mib;
  std::optional<double> power_w;
  std::optional<std::vector<int64_t>> pids;  // sorted, without duplicates
};

class Nvml {
 public:
  struct Symbols;  // the dlsym'd function pointers (nvml.cc)

  // Loads `library` (a soname or a path) and calls nvmlInit_v2.
  static StatusOr<std::unique_ptr<Nvml>> Open(const std::string& library = kNvmlLibrary);
  ~Nvml();  // nvmlShutdown, dlclose
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const std::string& library() const { return library_; }
  const std::string& driver_version() const { return driver_version_; }  // "" when unknown
  // Which process-list call was found: "v3", "v2", "v1" or "" (none; pids stay unknown).
  const char* process_api() const;

  StatusOr<int> DeviceCount() const;
  // Fails only when the device's handle or UUID cannot be read.
  StatusOr<NvmlDeviceInfo> Device(int index) const;
  // Fails only when the device's handle cannot be had (e.g. the GPU fell off the bus).
  StatusOr<NvmlTelemetry> Telemetry(int index) const;
  // "Not Supported (3)": NVML's text for a return code, with the code.
  std::string ErrorText(int code) const;

 private:
  Nvml(void* handle, std::string library, std::unique_ptr<Symbols> sym);
  Status Init();

  void* handle_ = nullptr;
  std::string library_;
  std::unique_ptr<Symbols> sym_;
  std::string driver_version_;
  bool initialised_ = false;
};

}  // namespace airtime
