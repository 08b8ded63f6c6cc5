// Watching workloads from the client: what changed between two listings (`ls --watch`), and
// whether a workload reached the state `airtime wait` waits for.
//
// Both are pure functions of the API's workload views (control_plane.h), so they are tested
// without a daemon; the commands poll the API and print.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"

namespace airtime {

class WorkloadWatch {
 public:
  struct Changes {
    nlohmann::json changed = nlohmann::json::array();  // views, in the listing's order
    std::vector<std::string> gone;                     // ids the listing no longer has
  };
  // The views of `list` ({"workloads": [...]}) that are new since the last call, or whose
  // state, reason, GPUs, replicas, priority or preemptions changed; and the ids of the last
  // call that this one lacks (they left the filter: a finished workload under --state
  // active), which are then forgotten.
  Changes Next(const nlohmann::json& list);

 private:
  std::map<std::string, std::string> seen_;  // id -> what a change is told by
};

// The states `airtime wait --for` takes: a workload state, or "finished" (succeeded, failed
// or cancelled).
inline constexpr const char* kWaitStates[] = {"queued", "running",   "succeeded",
                                              "failed", "cancelled", "finished"};
Status CheckWaitState(std::string_view state);

struct WaitCheck {
  enum Verdict { kWait, kReached, kNever } verdict = kWait;
  std::string why;  // for kNever: which final state it ended in, and that it cannot change
};
// Whether workload view `w` is in state `want` (CheckWaitState'd), cannot reach it any more
// (it ended in another final state), or may still reach it.
WaitCheck CheckWait(const nlohmann::json& w, std::string_view want);

}  // namespace airtime
