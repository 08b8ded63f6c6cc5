#include "airtime/ledger/hold_json.h"

#include <cmath>
#include <cstdio>

namespace airtime {

using nlohmann::json;

json HoldSummaryToJson(const HoldSummary& h) {
  return {{"holds", h.holds},
          {"holds_burst_came", h.holds_came},
          {"handoffs", h.handoffs},
          {"handoffs_burst_came", h.handoffs_came},
          {"held_gpu_hours", h.held_gpu_hours},
          {"requests_protected", h.protected_requests},
          {"value_protected", h.protected_value},
          {"value_forgone", h.forgone_value},
          {"value_earned", h.earned_value},
          {"value_lost", h.lost_value},
          {"regret", h.regret},
          {"holds_paid", h.holds_paid()}};
}

json HoldToJson(const ScoredHold& s) {
  const HoldDecision& d = s.decision;
  return {{"t_s", ToSeconds(d.at)},
          {"until_s", s.until == kNever ? json(nullptr) : json(ToSeconds(s.until))},
          {"service", d.name},
          {"choice", d.hold() ? "hold" : "hand-off"},
          {"demand_rps", d.demand_rps},
          {"forecast_rps", d.forecast_rps},
          {"forecast_error_p90", d.error_p90 > 0 ? json(d.error_p90) : json(nullptr)},
          {"replicas_needed", d.needed},
          {"replicas_held", d.held},
          {"hold_value", d.hold_value},
          {"handoff_value", d.handoff_value},
          {"waiting_density", d.waiting_density},
          {"why", d.why},
          {"held_replica_hours", s.held_replica_hours},
          {"burst_came", s.came},
          {"requests_protected", s.protected_requests},
          {"value_protected", s.protected_value},
          {"value_forgone", s.forgone_value},
          {"value_earned", s.earned_value},
          {"value_lost", s.lost_value},
          {"regret", s.regret}};
}

json HoldsToJson(const std::map<std::string, HoldSummary>& summaries,
                 const std::vector<ScoredHold>& calls) {
  json services = json::object();
  for (const auto& [name, h] : summaries) services[name] = HoldSummaryToJson(h);
  json list = json::array();
  for (const ScoredHold& s : calls) list.push_back(HoldToJson(s));
  return {{"services", services}, {"decisions", list}};
}

namespace {

// Reads fields of one JSON object, remembering the first error (which names the field).
class Reader {
 public:
  Reader(const json& j, std::string what) : j_(j), what_(std::move(what)) {
    if (!j_.is_object()) Fail("", "is not a JSON object");
  }
  double Number(const char* key, bool nullable = false) {
    const json* v = Find(key);
    if (v == nullptr) return 0;
    if (nullable && v->is_null()) return 0;
    if (!v->is_number() || !std::isfinite(v->get<double>())) {
      Fail(key, "is not a number");
      return 0;
    }
    return v->get<double>();
  }
  int Int(const char* key) {
    const json* v = Find(key);
    if (v == nullptr) return 0;
    if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > (1 << 30)) {
      Fail(key, "is not a count");
      return 0;
    }
    return v->get<int>();
  }
  bool Bool(const char* key) {
    const json* v = Find(key);
    if (v == nullptr) return false;
    if (!v->is_boolean()) {
      Fail(key, "is not true or false");
      return false;
    }
    return v->get<bool>();
  }
  std::string String(const char* key) {
    const json* v = Find(key);
    if (v == nullptr) return "";
    if (!v->is_string()) {
      Fail(key, "is not a string");
      return "";
    }
    return v->get<std::string>();
  }
  // Seconds -> ms; null -> kNever when `nullable`.
  TimeMs Time(const char* key, bool nullable) {
    const json* v = Find(key);
    if (v == nullptr) return 0;
    if (nullable && v->is_null()) return kNever;
    const double s = Number(key);
    if (std::fabs(s) > 1e13) {
      Fail(key, "is out of range");
      return 0;
    }
    return FromSeconds(s);
  }
  Status status() const { return status_; }

 private:
  const json* Find(const char* key) {
    if (!status_.ok() || !j_.is_object()) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end()) {
      Fail(key, "is missing");
      return nullptr;
    }
    return &*it;
  }
  void Fail(const std::string& key, const std::string& what) {
    if (!status_.ok()) return;
    status_ = InvalidArgument(what_ + (key.empty() ? "" : ": '" + key + "'") + " " + what);
  }
  const json& j_;
  std::string what_;
  Status status_ = OkStatus();
};

}  // namespace

StatusOr<HoldSummary> HoldSummaryFromJson(const json& j) {
  Reader r(j, "hold summary");
  HoldSummary h;
  h.holds = r.Int("holds");
  h.holds_came = r.Int("holds_burst_came");
  h.handoffs = r.Int("handoffs");
  h.handoffs_came = r.Int("handoffs_burst_came");
  h.held_gpu_hours = r.Number("held_gpu_hours");
  h.protected_requests = r.Number("requests_protected");
  h.protected_value = r.Number("value_protected");
  h.forgone_value = r.Number("value_forgone");
  h.earned_value = r.Number("value_earned");
  h.lost_value = r.Number("value_lost");
  h.regret = r.Number("regret");
  if (!r.status().ok()) return r.status();
  return h;
}

StatusOr<ScoredHold> HoldFromJson(const json& j) {
  Reader r(j, "hold call");
  ScoredHold s;
  HoldDecision& d = s.decision;
  d.at = r.Time("t_s", false);
  s.until = r.Time("until_s", true);
  d.name = r.String("service");
  const std::string choice = r.String("choice");
  d.demand_rps = r.Number("demand_rps");
  d.forecast_rps = r.Number("forecast_rps");
  d.error_p90 = r.Number("forecast_error_p90", true);
  d.needed = r.Int("replicas_needed");
  d.held = r.Int("replicas_held");
  d.hold_value = r.Number("hold_value");
  d.handoff_value = r.Number("handoff_value");
  d.waiting_density = r.Number("waiting_density");
  d.why = r.String("why");
  // Absent from calls saved before it was measured (hold_record.cc fills it in).
  if (j.is_object() && j.contains("held_replica_hours"))
    s.held_replica_hours = r.Number("held_replica_hours");
  s.came = r.Bool("burst_came");
  s.protected_requests = r.Number("requests_protected");
  s.protected_value = r.Number("value_protected");
  s.forgone_value = r.Number("value_forgone");
  s.earned_value = r.Number("value_earned");
  s.lost_value = r.Number("value_lost");
  s.regret = r.Number("regret");
  if (!r.status().ok()) return r.status();
  if (choice != (d.hold() ? "hold" : "hand-off"))
    return InvalidArgument("hold call: 'choice' " + json(choice).dump() + " does not match " +
                           "'replicas_held' " + std::to_string(d.held));
  return s;
}

std::string HoldsTable(const std::map<std::string, HoldSummary>& sums) {
  if (sums.empty()) return {};
  std::string out;
  char buf[320];
  std::snprintf(buf, sizeof buf, "  %-20s %14s %16s %10s %10s %10s %9s %9s %9s %9s\n", "service",
                "holds (came)", "hand-offs (came)", "held GPU-h", "requests", "protected",
                "forgone", "earned", "lost", "regret");
  out += buf;
  auto count = [](int n, int came) {
    return std::to_string(n) + " (" + std::to_string(came) + ")";
  };
  auto line = [&](const std::string& name, const HoldSummary& h) {
    std::snprintf(buf, sizeof buf,
                  "  %-20s %14s %16s %10.1f %10.0f %10.2f %9.2f %9.2f %9.2f %9.2f\n", name.c_str(),
                  count(h.holds, h.holds_came).c_str(), count(h.handoffs, h.handoffs_came).c_str(),
                  h.held_gpu_hours, h.protected_requests, h.protected_value, h.forgone_value,
                  h.earned_value, h.lost_value, h.regret);
    out += buf;
  };
  HoldSummary total;
  for (const auto& [name, h] : sums) {
    line(name, h);
    total.Add(h);
  }
  if (sums.size() > 1) line("all services", total);
  out += std::string("  the holds protected ") + (total.holds_paid() ? "more" : "less") +
         " value than their GPUs would have earned for waiting work\n";
  return out;
}

}  // namespace airtime
