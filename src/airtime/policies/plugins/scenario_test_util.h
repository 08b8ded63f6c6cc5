// A small discrete-event driver for declarative policy scenario tests: feeds arrivals,
// completions (at each start's expected end) and requested wake-ups to an engine in time
// order, as the simulator does, and records when each workload started, was preempted and
// finished. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "airtime/engine/engine.h"
#include "airtime/policies/registry.h"

namespace airtime::testing {

// An engine running the registry policy `spec` (a test fails if the spec is refused).
inline Engine MakeEngine(const Cluster& c, const std::string& spec) {
  auto p = PolicyRegistry::Builtin().Make(spec, c);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return Engine(c, std::move(*p));
}

struct ScenarioLog {
  std::map<std::string, std::vector<TimeMs>> starts;
  std::map<std::string, std::vector<TimeMs>> preempted;
  std::map<std::string, TimeMs> finished;
  std::vector<std::string> reasons;  // preemption reasons, in order

  TimeMs start(const std::string& name, size_t i = 0) const {
    auto it = starts.find(name);
    return it == starts.end() || it->second.size() <= i ? kNever : it->second[i];
  }
};

// Runs `jobs` through `engine` until no event is left or `until` passes.
inline ScenarioLog Drive(Engine& engine, const std::vector<WorkloadSpec>& jobs,
                         TimeMs until = kNever) {
  // (time, class, sequence, payload): completions before wake-ups before arrivals.
  using Item = std::tuple<TimeMs, int, int64_t, int64_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> q;
  int64_t seq = 0;
  for (size_t i = 0; i < jobs.size(); ++i)
    q.push({jobs[i].submit_at, 2, seq++, static_cast<int64_t>(i)});
  std::set<AllocationId> live;
  ScenarioLog log;
  while (!q.empty()) {
    auto [at, cls, s, payload] = q.top();
    q.pop();
    if (at > until) break;
    Event ev;
    if (cls == 0) {
      if (!live.erase(payload)) continue;  // preempted meanwhile
      ev = Event::Completion(at, payload);
    } else if (cls == 1) {
      ev = Event::Timer(at);
    } else {
      ev = Event::Arrival(at, jobs[static_cast<size_t>(payload)]);
    }
    const CycleResult& r = engine.Handle(ev);
    for (const Stopped& st : r.stopped)
      if (st.completed) log.finished[engine.job(st.workload).s().name] = at;
    for (const Decision& d : r.decisions) {
      const std::string& name = engine.job(d.workload).s().name;
      if (d.type == DecisionType::kStart) {
        log.starts[name].push_back(at);
        if (d.expected_end != kNever) {
          live.insert(d.allocation);
          q.push({d.expected_end, 0, seq++, d.allocation});
        }
      } else if (d.type == DecisionType::kPreempt) {
        live.erase(d.allocation);
        log.preempted[name].push_back(at);
        log.reasons.push_back(d.reason);
      }
    }
    if (r.wake_at != kNever) q.push({r.wake_at, 1, seq++, 0});
  }
  return log;
}

}  // namespace airtime::testing
