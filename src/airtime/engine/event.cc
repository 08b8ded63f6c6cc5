#include "airtime/engine/event.h"

namespace airtime {

const char* EventTypeName(EventType t) {
  switch (t) {
    case EventType::kArrival:
      return "arrival";
    case EventType::kCompletion:
      return "completion";
    case EventType::kFailure:
      return "failure";
    case EventType::kDemandChange:
      return "demand";
    case EventType::kPriorityChange:
      return "priority";
    case EventType::kCancel:
      return "cancel";
    case EventType::kNodeDown:
      return "node-down";
    case EventType::kNodeUp:
      return "node-up";
    case EventType::kTimer:
      return "timer";
  }
  return "?";
}

namespace {
Event Make(EventType t, TimeMs at) {
  Event e;
  e.type = t;
  e.at = at;
  return e;
}
}  // namespace

Event Event::Arrival(TimeMs at, WorkloadSpec spec) {
  Event e = Make(EventType::kArrival, at);
  e.spec = std::make_shared<const WorkloadSpec>(std::move(spec));
  return e;
}
Event Event::Arrival(TimeMs at, std::shared_ptr<const WorkloadSpec> spec) {
  Event e = Make(EventType::kArrival, at);
  e.spec = std::move(spec);
  return e;
}
Event Event::Completion(TimeMs at, AllocationId a) {
  Event e = Make(EventType::kCompletion, at);
  e.allocation = a;
  return e;
}
Event Event::Failure(TimeMs at, AllocationId a) {
  Event e = Make(EventType::kFailure, at);
  e.allocation = a;
  return e;
}
Event Event::Demand(TimeMs at, WorkloadId w, double rps) {
  Event e = Make(EventType::kDemandChange, at);
  e.workload = w;
  e.rps = rps;
  return e;
}
Event Event::ClassDemand(TimeMs at, WorkloadId w, int request_class, double rps) {
  Event e = Demand(at, w, rps);
  e.request_class = request_class;
  return e;
}
Event Event::Priority(TimeMs at, WorkloadId w, int priority) {
  Event e = Make(EventType::kPriorityChange, at);
  e.workload = w;
  e.priority = priority;
  return e;
}
Event Event::Cancel(TimeMs at, WorkloadId w) {
  Event e = Make(EventType::kCancel, at);
  e.workload = w;
  return e;
}
Event Event::NodeDown(TimeMs at, NodeIndex n) {
  Event e = Make(EventType::kNodeDown, at);
  e.node = n;
  return e;
}
Event Event::NodeUp(TimeMs at, NodeIndex n) {
  Event e = Make(EventType::kNodeUp, at);
  e.node = n;
  return e;
}
Event Event::Timer(TimeMs at) { return Make(EventType::kTimer, at); }

}  // namespace airtime
