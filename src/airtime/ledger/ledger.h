// Ledger: where every installed GPU-second went.
//
// Between two events the engine's state is constant, so the ledger classifies capacity
// once per decision cycle (Observe) and integrates it over the interval that follows
// (Advance). Every installed milli-GPU-millisecond lands in exactly one bucket:
//
//   useful            held by running work that computes (utilisation share)
//   idle_held         held but not computing, for no decided reason: cold start, restart
//                     overhead, the unused share of a replica (beyond the replicas held on
//                     purpose, below) or of a job with utilisation < 1, and the share lost
//                     to work sharing its GPU (interference)
//   low_value_busy    the computing share of work whose value density is below that of a
//                     waiting workload that could use the same GPU type
//   lost              work thrown away by preemption or failure (moved here from the
//                     buckets it was counted in when the stop happens)
//   stranded          free, while work that could use this GPU type waits but fits nowhere
//                     (fragmentation), up to that waiting demand
//   reserved_headroom held or free on purpose: GPUs a policy holds (Engine::Hold) or
//                     declares it keeps free (Engine::DeclareHeadroom) for a forecast peak,
//                     and the idle capacity of the replicas a service's target keeps beyond
//                     what its current demand needs (a forecast peak, warm spares, a
//                     scale-down window), up to those replicas' size
//   free_no_demand    free and nothing waiting could use it
//   blocked           free, and a waiting workload would fit now, but the policy keeps it
//                     waiting: its order holds it behind another (head-of-line blocking) or
//                     its filters keep it off the free nodes (a static pool split), up to
//                     that waiting demand -- an addition to the seven buckets of the brief,
//                     so that this time is not hidden as "stranded"
//   down              capacity of nodes that are down
//   foreign           capacity that work airtime does not run holds: jobs submitted to
//                     Slurm directly, under the Slurm backend (Engine::SetForeignShares): on a
//                     GPU held whole, what airtime's allocations do not hold; of a share
//                     (Slurm's gres/shard), the share. Capacity airtime cannot move. Always 0
//                     in the simulator and the local daemon.
//
// The buckets add up to installed capacity x time exactly (integer milli-GPU-ms).
// Not thread-safe; driven by one loop alongside the engine.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "airtime/engine/engine.h"

namespace airtime {

enum class Bucket : uint8_t {
  kUseful,
  kIdleHeld,
  kLowValueBusy,
  kLost,
  kStranded,
  kReservedHeadroom,
  kFreeNoDemand,
  kBlocked,
  kDown,
  kForeign,
};
inline constexpr int kBucketCount = 10;
const char* BucketName(Bucket b);

// The buckets of one GPU type (or of all of them): milli-GPU-milliseconds per bucket; divide
// by 3.6e9 for GPU-hours.
struct BucketTotals {
  std::array<int64_t, kBucketCount> milli_ms{};
  int64_t installed_milli_ms = 0;
  // Of reserved_headroom, the part that running replicas held (allocated, kept warm on
  // purpose), as against capacity kept free: an allocation rate counts it.
  int64_t reserved_held_milli_ms = 0;

  int64_t sum() const;
  double gpu_hours(Bucket b) const;
  double installed_gpu_hours() const;
  // What the allocation rate counts as allocated: useful, idle_held, low_value_busy, lost
  // and the reserved_headroom that replicas held.
  int64_t allocated_milli_ms() const;
  void Add(const BucketTotals& other);
};

// One GPU's capacity now, by bucket, in milli-GPUs: how the ledger is counting it at this
// moment (Ledger::GpuBucketsNow).
struct GpuBuckets {
  std::array<int64_t, kBucketCount> milli{};
  // The bucket holding most of it (the first in bucket order on a tie): what a map of the
  // GPUs colours it by.
  Bucket main() const;
};

struct LedgerTotals : BucketTotals {
  // The same buckets per GPU type, indexed by GpuTypeId (the cluster's catalogue); each type
  // adds up to its own installed capacity x time, and the types to the totals above. Empty
  // in totals carried from an airtime that did not count per type.
  std::vector<BucketTotals> by_type;

  void Add(const LedgerTotals& other);
};

class Ledger {
 public:
  explicit Ledger(const Engine& engine);

  // Accounts [last time, to) with the state the engine had after the last cycle.
  void Advance(TimeMs to);
  // Takes in a finished cycle: moves lost work, recomputes the classification.
  void Observe(const CycleResult& cycle);

  // Telemetry (the daemon): the measured busy fraction of live allocations replaces the
  // spec's utilisation (and a service's demand / capacity) from now on. Call Advance(now)
  // first; allocations missing from `measured` keep the modelled figure.
  void SetMeasuredUtilization(std::unordered_map<AllocationId, double> measured);

  // Adds totals counted before this ledger existed (the daemon's earlier runs on the same
  // store), so that totals() covers them too.
  void Carry(const LedgerTotals& earlier);
  const LedgerTotals& totals() const { return totals_; }
  // Milli-GPUs held by work now, as the allocation rate counts them (useful, idle_held,
  // low_value_busy, and the reserved_headroom that running replicas hold), and installed.
  int64_t held_milli() const;
  int64_t installed_milli() const { return installed_milli_; }
  TimeMs last() const { return last_; }
  // Shape-blocked waiting: milli-GPU-ms of demand that waited while enough capacity of an
  // allowed type was free by count but not by shape, per shape description.
  const std::unordered_map<std::string, int64_t>& shape_blocked() const { return shape_blocked_; }

  // Milli-GPUs in each bucket now: what Advance adds per millisecond, for all GPUs and for
  // the GPUs of type `t`.
  const std::array<int64_t, kBucketCount>& rates_now() const { return rate_; }
  std::array<int64_t, kBucketCount> type_rates_now(GpuTypeId t) const;
  // The same, per GPU (indexed by GpuIndex), from the classification of the last Observe
  // (or SetMeasuredUtilization): each allocation's buckets spread over its GPUs by the share
  // it holds on each; each type's free capacity that the classification split by amount
  // (reserved_headroom a policy declared, blocked, stranded, free_no_demand, in that order)
  // handed to the type's free capacity in GPU order; a down node's, a reserved GPU's and a
  // foreign GPU's capacity to down, reserved_headroom and foreign. The GPUs of each type add
  // up to type_rates_now bucket by bucket. O(GPUs + allocations); call it between cycles.
  std::vector<GpuBuckets> GpuBucketsNow() const;

 private:
  // An allocation's milli-GPUs per GPU type (a gang can span nodes of several types).
  using TypeSplit = std::vector<std::pair<GpuTypeId, int64_t>>;
  struct AllocRates {
    AllocationId id;
    int64_t useful, idle, low;  // milli-GPU per ms of each bucket
    int64_t reserved;           // of reserved_headroom (replicas held on purpose)
    GpuTypeId type;             // its GPUs' type; kNoGpuType: several (multi_split_)
  };
  struct AllocAcc {
    TypeSplit split;
    int64_t useful = 0, idle = 0, low = 0;
  };
  struct TypeRates {
    GpuTypeId type;
    std::array<int64_t, kBucketCount> rate{};
    int64_t installed = 0, reserved_held = 0;
    // How Classify split the type's free capacity by amount (the rest: free_no_demand).
    int64_t free_declared = 0, free_blocked = 0, free_stranded = 0;
  };
  // Adds `milli` of bucket `b` on type `t` to the rates now.
  void AddRate(GpuTypeId t, Bucket b, int64_t milli);
  static TypeSplit SplitOf(const Cluster& c, const Placement& p);
  static std::vector<int64_t> WeightsOf(const TypeSplit& split);
  // The one type of `p`'s GPUs, or kNoGpuType when they are of several.
  static GpuTypeId OneTypeOf(const Cluster& c, const Placement& p);
  void Classify();
  void FlushAllocations();

  const Engine* engine_;
  TimeMs last_ = 0;
  LedgerTotals totals_;
  std::array<int64_t, kBucketCount> rate_{};  // milli-GPU in each bucket now
  int64_t installed_milli_ = 0;
  std::vector<TypeRates> type_rates_;  // the same per installed type
  std::vector<int> type_slot_;         // GpuTypeId -> index in type_rates_ (-1: none installed)
  std::vector<AllocRates> alloc_rates_;
  // The split of each live allocation whose GPUs are of several types (rare: gangs).
  std::unordered_map<AllocationId, TypeSplit> multi_split_;
  int64_t reserved_held_rate_ = 0;  // milli-GPU of reserved_headroom held by replicas
  std::unordered_map<AllocationId, AllocAcc> acc_;     // per live allocation, since it started
  std::unordered_map<AllocationId, double> measured_;  // telemetry, when the daemon has it
  TimeMs acc_since_ = 0;
  std::vector<std::pair<std::string, int64_t>> shape_blocked_rate_;
  std::unordered_map<std::string, int64_t> shape_blocked_;
  std::vector<std::string> class_descriptions_;  // Shape::Describe by Job::fit_class, once needed
};

}  // namespace airtime
