// Identifiers the engine hands out: dense workload ids and unique allocation ids.
#pragma once

#include <cstdint>

namespace airtime {

using WorkloadId = int32_t;    // index of a workload in the engine, in arrival order
using AllocationId = int64_t;  // one placement of a workload (a run, or a service replica)
inline constexpr WorkloadId kNoWorkload = -1;
inline constexpr AllocationId kNoAllocation = -1;

}  // namespace airtime
