// GpuHistory: what the dashboard plots as "allocation against measured utilization per GPU
// over the last day" (GET /v1/gpus/history). The daemon records every telemetry sample
// (every 2 s) of each GPU's allocated share and measured busy fraction; this keeps their
// mean per time slot (a minute) in a ring per GPU of a day's slots, so its memory is fixed:
// 16 bytes x slots per GPU (1,440 slots: 23 KiB a GPU). Nothing is stored on disk: a restarted
// daemon starts an empty history.
// Not thread-safe: the daemon's loop owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "airtime/base/time.h"

namespace airtime {

class GpuHistory {
 public:
  // `gpus` GPUs (indices 0..gpus-1), slots of `step` each, the last `slots` of them kept.
  explicit GpuHistory(size_t gpus, DurationMs step = kMinute, int slots = 1440);

  // One sample of GPU `gpu` at `now`: its allocated share (0..1) and measured busy fraction
  // (0..1; nullopt when telemetry does not know). Samples out of range are ignored.
  void Record(size_t gpu, TimeMs now, double allocated, std::optional<double> utilization);

  // The last `slots` slots up to the one holding `now` (1..capacity), as
  //   {"step_s": 60, "start": ms of the first slot, "now": ms,
  //    "cluster": {"allocated": [...], "utilization": [...]},
  //    "gpus": [{"index": i, "uuid": u, "allocated": [...], "utilization": [...]}]}
  // where each array has one entry per slot, the slot's mean or null without a sample;
  // "cluster" is the mean over the GPUs with a sample in that slot, and "gpus" lists the
  // GPUs of `gpus` (indices; `uuids` names them).
  nlohmann::json Json(TimeMs now, int slots, const std::vector<size_t>& gpus,
                      const std::vector<std::string>& uuids) const;

  size_t gpus() const { return gpus_; }
  int capacity() const { return slots_; }
  DurationMs step() const { return step_; }

 private:
  struct Slot {
    int64_t key = -1;  // which step of time it holds (now / step); -1: none
    float allocated_sum = 0;
    float utilization_sum = 0;
    uint16_t allocated_n = 0;
    uint16_t utilization_n = 0;
  };
  const Slot* SlotAt(size_t gpu, int64_t key) const;

  DurationMs step_;
  int slots_;
  size_t gpus_;
  std::vector<Slot> ring_;  // gpu * slots_ + key % slots_
};

}  // namespace airtime
