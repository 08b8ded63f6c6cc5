// GpuHistory: see gpu_history.h.
#include "airtime/server/gpu_history.h"

#include <algorithm>
#include <limits>

namespace airtime {

using nlohmann::json;

GpuHistory::GpuHistory(size_t gpus, DurationMs step, int slots)
    : step_(std::max<DurationMs>(step, 1)),
      slots_(std::max(slots, 1)),
      gpus_(gpus),
      ring_(gpus * static_cast<size_t>(slots_)) {}

void GpuHistory::Record(size_t gpu, TimeMs now, double allocated,
                        std::optional<double> utilization) {
  if (gpu >= gpus_ || now < 0) return;
  const int64_t key = now / step_;
  Slot& s = ring_[gpu * static_cast<size_t>(slots_) + static_cast<size_t>(key % slots_)];
  if (s.key != key) s = Slot{key};
  if (s.allocated_n == std::numeric_limits<uint16_t>::max()) return;  // a slot is full
  s.allocated_sum += static_cast<float>(std::clamp(allocated, 0.0, 1.0));
  ++s.allocated_n;
  if (utilization) {
    s.utilization_sum += static_cast<float>(std::clamp(*utilization, 0.0, 1.0));
    ++s.utilization_n;
  }
}

const GpuHistory::Slot* GpuHistory::SlotAt(size_t gpu, int64_t key) const {
  if (key < 0) return nullptr;
  const Slot& s = ring_[gpu * static_cast<size_t>(slots_) + static_cast<size_t>(key % slots_)];
  return s.key == key ? &s : nullptr;
}

json GpuHistory::Json(TimeMs now, int slots, const std::vector<size_t>& gpus,
                      const std::vector<std::string>& uuids) const {
  slots = std::clamp(slots, 1, slots_);
  const int64_t last = std::max<TimeMs>(now, 0) / step_;
  const int64_t first = last - slots + 1;
  // Means rounded to 4 decimals: a day of 1,000 GPUs' slots stays a few MB of JSON.
  auto mean = [](double sum, int n) -> json {
    if (n == 0) return nullptr;
    return static_cast<double>(static_cast<int64_t>(sum / n * 10000 + 0.5)) / 10000;
  };
  json cluster_alloc = json::array(), cluster_util = json::array();
  for (int64_t k = first; k <= last; ++k) {
    double a = 0, u = 0;
    int na = 0, nu = 0;
    for (size_t g = 0; g < gpus_; ++g) {
      const Slot* s = SlotAt(g, k);
      if (s == nullptr) continue;
      if (s->allocated_n > 0) {
        a += s->allocated_sum / s->allocated_n;
        ++na;
      }
      if (s->utilization_n > 0) {
        u += s->utilization_sum / s->utilization_n;
        ++nu;
      }
    }
    cluster_alloc.push_back(mean(a, na));
    cluster_util.push_back(mean(u, nu));
  }
  json per_gpu = json::array();
  for (size_t g : gpus) {
    if (g >= gpus_) continue;
    json alloc = json::array(), util = json::array();
    for (int64_t k = first; k <= last; ++k) {
      const Slot* s = SlotAt(g, k);
      alloc.push_back(s ? mean(s->allocated_sum, s->allocated_n) : json(nullptr));
      util.push_back(s ? mean(s->utilization_sum, s->utilization_n) : json(nullptr));
    }
    per_gpu.push_back({{"index", g},
                       {"uuid", g < uuids.size() ? uuids[g] : ""},
                       {"allocated", std::move(alloc)},
                       {"utilization", std::move(util)}});
  }
  return json{{"step_s", step_ / 1000.0},
              {"start", first * step_},
              {"now", now},
              {"cluster",
               {{"allocated", std::move(cluster_alloc)}, {"utilization", std::move(cluster_util)}}},
              {"gpus", std::move(per_gpu)}};
}

}  // namespace airtime
