// GpuCatalog: the GPU types airtime knows, with memory, relative speed and MIG profiles.
//
// A GpuType is identified in the rest of the code by a dense GpuTypeId (its index in the
// catalogue), so that per-type tables are plain vectors. The built-in catalogue covers the
// data-centre GPUs in common use plus the anonymised types of the Alibaba traces (G2, G3,
// MISC). relative_speed is throughput relative to an A100-80GB on a typical training step
// (an approximation; workloads may override it per type). Immutable after construction:
// safe to share between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"

namespace airtime {

using GpuTypeId = int16_t;
inline constexpr GpuTypeId kNoGpuType = -1;

// One MIG instance profile, e.g. "3g.40gb": 3 of 7 compute slices and 40 GB.
struct MigProfile {
  std::string name;
  int compute_slices = 0;  // out of 7
  double memory_gb = 0;
  int max_instances = 0;  // how many fit on one GPU alone
};

struct GpuType {
  std::string name;  // canonical name, e.g. "A100-80GB"
  std::vector<std::string> aliases;
  double memory_gb = 0;
  double relative_speed = 1.0;
  std::vector<MigProfile> mig_profiles;  // empty: no MIG

  const MigProfile* FindMig(std::string_view profile) const;
};

class GpuCatalog {
 public:
  // The catalogue compiled into airtime.
  static const GpuCatalog& Builtin();

  explicit GpuCatalog(std::vector<GpuType> types);

  // Case-insensitive lookup by name or alias; NotFound names the known types.
  StatusOr<GpuTypeId> Find(std::string_view name) const;
  const GpuType& type(GpuTypeId id) const { return types_[static_cast<size_t>(id)]; }
  size_t size() const { return types_.size(); }
  // "H200, H100, ..." for error messages.
  std::string NamesForError() const;

 private:
  std::vector<GpuType> types_;
};

}  // namespace airtime
