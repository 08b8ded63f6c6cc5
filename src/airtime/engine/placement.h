// Placement: the GPUs (or slices, or shares) one allocation holds, plus host resources.
#pragma once

#include <cstdint>
#include <vector>

#include "airtime/model/cluster.h"
#include "airtime/model/workload.h"

namespace airtime {

struct Placement {
  std::vector<GpuIndex> gpus;  // one entry per GPU used
  ShareMode mode = ShareMode::kWhole;
  int milli = 1000;          // share held on each GPU (1000 whole; a MIG slice counts sevenths)
  int mig_slices = 0;        // > 0: a MIG instance of that many compute slices on each GPU
  double memory_gb = 0;      // GPU memory charged on each GPU (fractions and MIG)
  NodeIndex host_node = -1;  // node charged for host CPU and memory (-1: none)
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;

  int64_t total_milli() const {
    return static_cast<int64_t>(milli) * static_cast<int64_t>(gpus.size());
  }
};

}  // namespace airtime
