// WorkloadWatch and CheckWait: the client's view of workloads changing over time.
#include "airtime/cli/workload_watch.h"

#include <set>

namespace airtime {
namespace {

using nlohmann::json;

std::string IdOf(const json& w) {
  auto it = w.find("id");
  if (it == w.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// The fields whose change a watcher is told of (ages and waits tick on their own).
std::string Signature(const json& w) {
  json s = json::object();
  for (const char* key : {"state", "reason", "gpus", "replicas", "priority", "preemptions"}) {
    if (auto it = w.find(key); it != w.end()) s[key] = *it;
  }
  return s.dump();
}

bool Final(std::string_view state) {
  return state == "succeeded" || state == "failed" || state == "cancelled";
}

}  // namespace

WorkloadWatch::Changes WorkloadWatch::Next(const json& list) {
  Changes out;
  std::set<std::string> present;
  if (list.is_object() && list.contains("workloads") && list["workloads"].is_array()) {
    for (const json& w : list["workloads"]) {
      if (!w.is_object()) continue;
      const std::string id = IdOf(w);
      if (id.empty()) continue;
      present.insert(id);
      std::string sig = Signature(w);
      auto [it, inserted] = seen_.try_emplace(id, sig);
      if (inserted || it->second != sig) {
        it->second = std::move(sig);
        out.changed.push_back(w);
      }
    }
  }
  for (auto it = seen_.begin(); it != seen_.end();) {
    if (present.count(it->first) == 0) {
      out.gone.push_back(it->first);
      it = seen_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

Status CheckWaitState(std::string_view state) {
  std::string choices;
  for (const char* s : kWaitStates) {
    if (state == s) return Status();
    choices += (choices.empty() ? "" : ", ") + std::string(s);
  }
  return InvalidArgument("--for: expected one of " + choices + ", got '" + std::string(state) +
                         "'");
}

WaitCheck CheckWait(const json& w, std::string_view want) {
  const std::string state = w.is_object() ? w.value("state", "") : "";
  if (state == want || (want == "finished" && Final(state))) return {WaitCheck::kReached, ""};
  if (Final(state)) {
    std::string why = "it ended " + state;
    if (auto it = w.find("exit_code"); it != w.end() && it->is_number()) {
      why += " (exit code " + it->dump() + ")";
    }
    return {WaitCheck::kNever, why + " and will not be " + std::string(want)};
  }
  return {WaitCheck::kWait, ""};
}

}  // namespace airtime
