// GPU environment: the variables that confine a workload to the GPUs (and GPU share) the
// scheduler gave it, and tell it where to checkpoint and which port to serve on.
//
//   CUDA_VISIBLE_DEVICES=uuid,uuid          always (empty: no GPU visible)
//   CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=P      when 0 < share_milli < 1000: P = ceil(share/10)
//   CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=uuid=NMB,uuid=NMB
//                                            additionally when pinned_mem_mib > 0. NVIDIA's
//                                            MPS documentation: "comma-separated device
//                                            ordinals and/or device UUIDs with per device
//                                            memory limit separated by an equals", example
//                                            "0=1G,1=512MB"; we name devices by UUID so the
//                                            value does not depend on enumeration order.
//   AIRTIME_CHECKPOINT_DIR=dir               when checkpoint_dir is not empty
//   PORT=p, AIRTIME_PORT=p                   when port > 0
// The MPS variables only take effect when the workload runs as a client of an MPS server.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace airtime {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

EnvVars GpuEnv(const std::vector<std::string>& uuids, int share_milli, int64_t pinned_mem_mib,
               const std::string& checkpoint_dir, int port);

}  // namespace airtime
