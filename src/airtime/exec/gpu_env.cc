// GPU environment: see gpu_env.h.
#include "airtime/exec/gpu_env.h"

#include <algorithm>

#include "airtime/base/strings.h"

namespace airtime {

EnvVars GpuEnv(const std::vector<std::string>& uuids, int share_milli, int64_t pinned_mem_mib,
               const std::string& checkpoint_dir, int port) {
  EnvVars env;
  env.emplace_back("CUDA_VISIBLE_DEVICES", Join(uuids, ","));
  if (share_milli > 0 && share_milli < 1000) {
    int percent = std::clamp((share_milli + 9) / 10, 1, 100);
    env.emplace_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", std::to_string(percent));
    if (pinned_mem_mib > 0 && !uuids.empty()) {
      std::vector<std::string> limits;
      for (const std::string& uuid : uuids) {
        limits.push_back(uuid + "=" + std::to_string(pinned_mem_mib) + "MB");
      }
      env.emplace_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", Join(limits, ","));
    }
  }
  if (!checkpoint_dir.empty()) env.emplace_back("AIRTIME_CHECKPOINT_DIR", checkpoint_dir);
  if (port > 0) {
    env.emplace_back("PORT", std::to_string(port));
    env.emplace_back("AIRTIME_PORT", std::to_string(port));
  }
  return env;
}

}  // namespace airtime
