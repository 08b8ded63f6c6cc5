// TypeTrade: scarce fast GPUs go to the work that gains most from them (Gavel's point).
//
// Jobs do not speed up alike on a faster type: a convolutional network may run ten times
// faster on an H100 than on a T4 where a host-bound recommendation model gains 10%. In
// value order the denser job takes the fast type first, even where it would lose little on
// a slower one and the job behind it loses most of its value rate there. Before each
// allocation pass, TypeTrade looks at the waiting jobs on whole GPUs (the first `scan` of
// the queue) and, for each, at its fastest GPU type t1 and the next fastest t2 it may use
// (its per-type speed, and GPU memory that holds it). Its claim on t1 is the value per
// GPU-hour it gains there over t2: ValueDensity x (speed on t1 - speed on t2), or its whole
// value rate when it has no other type. Where the jobs that prefer t1 and could start on it
// now ask for more GPUs than t1 has free, the largest claims get them (greedily, in claim
// order, a job too big for what is left skipped). Every other one is traded off t1 for the
// cycle: SpeedScore ranks t1, for it, just under t2, so it goes to t2 where t2 has room
// and leaves t1 to the larger claims behind it. Where t2 has no room it still takes t1:
// nothing waits for a trade. With one GPU type, with work that speeds up alike everywhere,
// or with enough fast GPUs for everyone, nothing changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "airtime/engine/plugins.h"

namespace airtime {

class TypeTrade : public CyclePlugin {
 public:
  explicit TypeTrade(size_t scan = 512) : scan_(scan) {}
  std::string_view name() const override { return "type-trade"; }
  void BeforeAllocate(Engine& engine) override;

  // The speed SpeedScore ranks `job` on GPU type `type` by: its own, or, where the job was
  // traded off `type` this cycle, just under its speed on the next type it may use.
  double RankSpeed(const Job& job, GpuTypeId type, const Engine& engine) const;

  // A job traded off its fastest type in this cycle.
  struct Trade {
    GpuTypeId from = 0, to = 0;
    double to_speed = 0;
    double gain = 0;  // its claim on `from`, value per GPU-hour
  };
  const std::unordered_map<WorkloadId, Trade>& trades() const { return trades_; }

 private:
  size_t scan_;
  std::unordered_map<WorkloadId, Trade> trades_;
  std::unordered_map<WorkloadId, Trade> held_;         // kept waiting by Permit in this cycle
  std::unordered_map<WorkloadId, TimeMs> held_since_;  // first kept waiting, while it waits
  std::vector<char> no_hold_;                          // per type: the last holds left GPUs idle
  struct Claim {
    double gain = 0;
    int gpus = 0;
    WorkloadId id = 0;
    Trade trade;
  };
  std::vector<std::vector<Claim>> by_type_;  // scratch: claims per fastest type
  std::vector<NodeIndex> open_;              // scratch: nodes of one type with a free GPU
  std::vector<GpuTypeId> present_;           // scratch: the types the cluster has
  // RankSpeed's lookup of the job it was last asked about, in this cycle.
  mutable WorkloadId last_job_ = kNoWorkload;
  mutable uint64_t last_cycle_ = 0;
  mutable const Trade* last_trade_ = nullptr;
};

}  // namespace airtime
