// Decision: what one decision cycle tells the actuator to do.
//
// Start runs a workload (or one replica of a service) on the named GPUs; Preempt stops an
// allocation that will run again later; Release stops one for good (a cancelled workload, a
// replica no longer needed); Scale records a service's new replica target; Hold and Unhold
// keep GPUs free on purpose. Every decision carries a reason a person can read.
#pragma once

#include <string>

#include "airtime/base/time.h"
#include "airtime/engine/ids.h"
#include "airtime/engine/placement.h"

namespace airtime {

enum class DecisionType : uint8_t {
  kStart,
  kPreempt,
  kRelease,
  kScale,
  kHold,
  kUnhold,
  kResize,
  // A running job's speed changed (work sharing its GPU came or went: interference), so its
  // expected end moved to `expected_end`.
  kRetime
};
const char* DecisionTypeName(DecisionType t);

struct Decision {
  DecisionType type = DecisionType::kStart;
  WorkloadId workload = kNoWorkload;
  AllocationId allocation = kNoAllocation;
  int replica = 0;               // services: which replica
  Placement placement;           // kStart: where; kHold/kUnhold: the GPUs
  TimeMs ready_at = 0;           // kStart: when it does useful work (after cold start / restart)
  TimeMs expected_end = kNever;  // kStart, kResize, kRetime: when the work would finish
  DurationMs waited = 0;         // kStart: how long it waited in the queue before this start
  // kResize: the allocation this one replaces (an elastic job restarted from its saved
  // progress on more GPUs; `allocation` and `placement` are the new ones).
  AllocationId resized_from = kNoAllocation;
  int replicas = 0;       // kScale: the new target
  TimeMs until = kNever;  // kHold: how long
  std::string reason;
};

}  // namespace airtime
