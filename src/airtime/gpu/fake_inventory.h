// FakeInventory: simulated GPUs for hosts without any (development, CI, demos).
//
// Built from a spec such as "8xH100" or "2xH200,4xL4": comma-separated COUNTxTYPE items
// (a bare TYPE means one), types checked against the catalogue (aliases accepted, the
// canonical name kept). Devices get deterministic UUIDs "GPU-fake-<index>-<type>-<n>", e.g.
// "GPU-fake-0000-h100-00" (index over the whole spec, n within the type, both zero-padded),
// so that the same spec gives the same UUIDs after a restart; model "airtime fake H100";
// memory from the catalogue. Telemetry is whatever the workload processes last reported
// with Report (utilization and memory unknown until then; power always unknown).
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/gpu/inventory.h"
#include "airtime/model/gpu_catalog.h"

namespace airtime {

// The devices a spec describes; InvalidArgument names the bad item (and, for an unknown
// type, the nearest catalogue type when one is close).
StatusOr<std::vector<GpuDevice>> ParseFakeGpuSpec(
    std::string_view spec, const GpuCatalog& catalog = GpuCatalog::Builtin());

class FakeInventory : public GpuInventory {
 public:
  static StatusOr<std::unique_ptr<FakeInventory>> Create(
      std::string_view spec, const GpuCatalog& catalog = GpuCatalog::Builtin());

  std::vector<GpuDevice> Devices() const override { return devices_; }
  std::vector<GpuSample> Sample(TimeMs now) const override;
  // Replaces the last report for `uuid`: NotFound for a UUID not in Devices(),
  // InvalidArgument for utilization outside 0..1 or memory outside 0..the device's memory.
  Status Report(const std::string& uuid, std::optional<double> utilization,
                std::optional<int64_t> memory_used_mib, std::vector<int64_t> pids) override;

 private:
  struct LastReport {
    std::optional<double> utilization;
    std::optional<int64_t> memory_used_mib;
    std::vector<int64_t> pids;
  };

  explicit FakeInventory(std::vector<GpuDevice> devices) : devices_(std::move(devices)) {}
  const GpuDevice* Find(const std::string& uuid) const;

  const std::vector<GpuDevice> devices_;
  mutable std::mutex mu_;
  std::map<std::string, LastReport> reports_;  // by UUID; guarded by mu_
};

}  // namespace airtime
