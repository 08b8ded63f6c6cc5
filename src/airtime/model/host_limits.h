// Host limits: the most host CPU and memory a node may have or a workload may ask for.
//
// Beyond any host, and kept in integer milli-cores and MiB: more would overflow once summed
// (a job asking for 1e16 cores once fit anywhere, its request wrapped negative).
#pragma once

namespace airtime {

inline constexpr double kMaxCpuCores = 1e6;
inline constexpr double kMaxMemoryGib = 1e9;

}  // namespace airtime
