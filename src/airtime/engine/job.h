// Job and Allocation: the engine's runtime view of a workload and of what it holds.
//
// A Job wraps an immutable WorkloadSpec with everything that changes: phase, queue
// position, current priority, saved progress, live allocations (one for a job, one per
// replica for a service), preemption history and why it waits. An Allocation is one
// placement with its start time and the run segment that drives progress. Owned by the
// engine; plugins read them through the engine.
#pragma once

#include <memory>
#include <vector>

#include "airtime/engine/ids.h"
#include "airtime/engine/placement.h"
#include "airtime/engine/progress.h"
#include "airtime/model/workload.h"

namespace airtime {

enum class JobPhase : uint8_t { kPending, kRunning, kDone, kCancelled };
const char* JobPhaseName(JobPhase p);

// Why a workload waits after a cycle.
enum class WaitReason : uint8_t {
  kNone,            // not waiting
  kNoFit,           // no place has room for its shape now
  kBehindHead,      // the policy's order holds it behind another waiting workload
  kNoSuchHardware,  // no installed GPU type can ever take its shape
  kTooLarge,        // needs more GPUs in one place than any node or domain has
  kPolicy,          // a policy plug-in held it (quota, reservation); see its note
  kBackoff,         // its last run failed: not started again before Job::restart_at
};
const char* WaitReasonName(WaitReason r);

// A waiting workload's place in the queue, ascending: `group`, then `rank` within it, then
// `tie` among equal ranks; arrival order last.
struct QueueKey {
  double group = 0, rank = 0, tie = 0;
  bool operator==(const QueueKey&) const = default;
  auto operator<=>(const QueueKey&) const = default;
};

struct WaitInfo {
  WaitReason reason = WaitReason::kNone;
  WorkloadId blocker = kNoWorkload;  // kBehindHead: the workload at the head
  // kBehindHead, and kNoFit under a policy with filters: it would fit now if the policy's
  // order and filters allowed it (the hardware has room; the policy keeps it waiting).
  bool fits_now = false;
  bool fits_in_policy = false;        // kBehindHead: it would fit even within its filters
  int free_compatible = 0;            // free whole GPUs of allowed types
  int64_t free_compatible_milli = 0;  // free capacity of allowed types (milli-GPU)
};

struct Allocation {
  AllocationId id = kNoAllocation;
  WorkloadId workload = kNoWorkload;
  int replica = 0;
  Placement placement;
  TimeMs started = 0;
  TimeMs ready_at = 0;  // cold start or restart overhead ends
  RunSegment segment;   // jobs: drives progress
  TimeMs expected_end = kNever;
  // Speed (jobs) or capacity (replicas) factor from work sharing its GPU by fractions
  // (EngineOptions::interference); 1: none.
  double interference = 1.0;
};

// What the shape of a fit class (Job::fit_class) amounts to: equal classes have equal
// shapes, so walks of a long queue read this, computed once when the class is interned,
// instead of each waiting job's spec.
struct FitClassShape {
  int64_t milli = 0;             // Shape::TotalMilli
  int whole_gpus = 0;            // ShareMode::kWhole: its GPU count; 0: a share
  std::vector<GpuTypeId> types;  // the catalogue's types the shape allows, ascending
};

struct alignas(64) Job {
  // What the engine's walk of the queue reads and writes for every waiting workload in every
  // cycle comes first, in one cache line (the struct is aligned to one): a long queue then
  // costs one line per workload, not four.
  WorkloadId id = kNoWorkload;
  int fit_class = 0;  // interned (shape, policy filter class): equal classes fit alike
  JobPhase phase = JobPhase::kPending;
  bool never_fits = false;  // computed at arrival: kNoSuchHardware / kTooLarge
  bool elastic = false;     // shape.min_gpus > 0 (kept here: the queue walk stays in Job)
  bool service = false;     // a realtime service (its spec's kind, kept here for the same)
  bool queued = false;
  bool rekey = false;        // listed in Engine::rekey_ (its key may change while it waits)
  bool backing_off = false;  // restart_at is in force (EngineOptions::restart_backoff)
  TimeMs queued_since = 0;
  // Room made for it by preemption went unused (a permit refused it): not asked for again
  // before this (PreemptPlugin::RetryAfterRefusal).
  TimeMs preempt_retry_at = 0;
  WaitInfo wait;
  int priority = 0;

  std::shared_ptr<const WorkloadSpec> spec;
  double value_density = 0;  // value per GPU-hour of its shape

  // Queue order.
  int64_t seq = 0;  // arrival order into the queue
  QueueKey key;     // policy sort key

  // Timing.
  TimeMs submitted = 0;
  TimeMs first_start = kNever;
  TimeMs finished = kNever;
  DurationMs waited = 0;  // total time spent waiting in the queue

  // Progress (jobs).
  double work_saved = 0;  // reference-seconds kept across stops
  int preemptions = 0;
  int failures = 0;
  int failed_in_a_row = 0;  // failures since its last completion (or a long run)
  TimeMs restart_at = 0;    // backing_off: not started again before
  TimeMs last_stopped = kNever;
  double lost_gpu_ms = 0;  // GPU-milliseconds of work thrown away

  // Services.
  double demand_rps = 0;
  // Members of a service with variants (RealtimeProfile::is_member): the demand of each of
  // the service's request classes, and the share of each class's requests the policy routes
  // to this member (ScalePlugin::Routing; empty: the policy routes none, and a request goes
  // to the best ready variant that serves its class).
  std::vector<double> class_rps;
  std::vector<double> route_share;
  int target_replicas = 0;
  bool scaled = false;  // a decision cycle has set target_replicas
  int next_replica = 0;

  std::vector<AllocationId> allocations;  // live, in start order

  const WorkloadSpec& s() const { return *spec; }
  bool is_service() const { return service; }
  int live_replicas() const { return static_cast<int>(allocations.size()); }
};

// When `job` (not a service: kNever) would finish if it started at `now` on GPUs of
// relative `speed`, paying its restart cost when it resumes saved progress.
TimeMs EndIfStartedAt(const Job& job, TimeMs now, double speed);

// Value per GPU-hour of the workload's shape at reference speed (services at full load).
double ValueDensity(const WorkloadSpec& spec, const GpuCatalog& catalog);

}  // namespace airtime
