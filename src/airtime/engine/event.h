// Event: what happened, fed to the engine, which answers with one decision cycle.
//
// The vocabulary is the same for every driver: the simulator makes events from traces on a
// virtual clock, the daemon from API calls and process exits on the wall clock. An event
// carries its own time; the engine never reads a clock.
#pragma once

#include <memory>
#include <string>

#include "airtime/base/time.h"
#include "airtime/engine/ids.h"
#include "airtime/model/cluster.h"
#include "airtime/model/workload.h"

namespace airtime {

enum class EventType : uint8_t {
  kArrival,         // spec: a new workload
  kCompletion,      // allocation finished its work (or a replica exited cleanly)
  kFailure,         // allocation died (process crash, lost node): its work since checkpoint is lost
  kDemandChange,    // workload (a service) now sees `rps` requests per second
  kPriorityChange,  // workload's priority is now `priority`
  kCancel,          // workload is withdrawn
  kNodeDown,        // node fails: its allocations fail
  kNodeUp,          // node returns
  kTimer,           // nothing happened but time passed (cold starts end, forecasts move)
};
const char* EventTypeName(EventType t);

struct Event {
  EventType type = EventType::kTimer;
  TimeMs at = 0;
  WorkloadId workload = kNoWorkload;
  AllocationId allocation = kNoAllocation;
  NodeIndex node = -1;
  double rps = 0;
  // kDemandChange for a member of a service with variants: the request class whose demand is
  // now `rps` (an index into its RealtimeProfile::classes); -1: the workload's own demand.
  int request_class = -1;
  int priority = 0;
  std::shared_ptr<const WorkloadSpec> spec;  // kArrival only

  static Event Arrival(TimeMs at, WorkloadSpec spec);
  // The same, sharing a spec the caller keeps too (the daemon's record of the workload), so
  // that a live workload's spec is held once.
  static Event Arrival(TimeMs at, std::shared_ptr<const WorkloadSpec> spec);
  static Event Completion(TimeMs at, AllocationId a);
  static Event Failure(TimeMs at, AllocationId a);
  static Event Demand(TimeMs at, WorkloadId w, double rps);
  static Event ClassDemand(TimeMs at, WorkloadId w, int request_class, double rps);
  static Event Priority(TimeMs at, WorkloadId w, int priority);
  static Event Cancel(TimeMs at, WorkloadId w);
  static Event NodeDown(TimeMs at, NodeIndex n);
  static Event NodeUp(TimeMs at, NodeIndex n);
  static Event Timer(TimeMs at);
};

}  // namespace airtime
