#include "airtime/server/hold_record.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "airtime/ledger/hold_json.h"

namespace airtime {

using nlohmann::json;

std::string EncodeHoldRecord(const HoldRecord& r) {
  json calls = json::array();
  for (const ScoredHold& s : r.state.calls) {
    json c = HoldToJson(s);
    c["hours"] = s.hours;
    c["replica_gpus"] = s.decision.replica_gpus;
    c["capacity_rps"] = s.decision.capacity_rps;
    c["per_request"] = s.decision.per_request;
    c["cold_start_ms"] = s.decision.cold_start;
    calls.push_back(std::move(c));
  }
  json services = json::object();
  for (const auto& [name, h] : r.state.base) services[name] = HoldSummaryToJson(h);
  // A name accepted by an older airtime may not be UTF-8: written with U+FFFD, not thrown.
  return json{{"saved_at", r.saved_at}, {"services", services}, {"decisions", calls}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

namespace {

Status Bad(const std::string& field, const std::string& what) {
  return InvalidArgument("saved holds: " + field + " " + what);
}

// obj[key]: a finite number >= 0.
StatusOr<double> NonNegative(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) return Bad(where + "'" + key + "'", "is missing");
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
    return Bad(where + "'" + key + "'", "is not a number >= 0: " + it->dump());
  return it->get<double>();
}

}  // namespace

StatusOr<HoldRecord> DecodeHoldRecord(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("saved holds: not JSON");
  if (!j.is_object()) return InvalidArgument("saved holds: not a JSON object");
  HoldRecord r;
  auto saved_at = j.find("saved_at");
  if (saved_at == j.end() || !saved_at->is_number_integer() || saved_at->get<int64_t>() < 0)
    return Bad("'saved_at'", "is missing or not a time");
  r.saved_at = saved_at->get<int64_t>();
  auto services = j.find("services");
  if (services == j.end() || !services->is_object()) return Bad("'services'", "is not an object");
  for (const auto& item : services->items()) {
    auto h = HoldSummaryFromJson(item.value());
    if (!h.ok()) return Bad("'services." + item.key() + "':", h.status().message());
    r.state.base[item.key()] = *h;
  }
  auto calls = j.find("decisions");
  if (calls == j.end() || !calls->is_array()) return Bad("'decisions'", "is not an array");
  for (size_t i = 0; i < calls->size(); ++i) {
    const json& c = (*calls)[i];
    const std::string where = "'decisions[" + std::to_string(i) + "]'";
    auto s = HoldFromJson(c);
    if (!s.ok()) return Bad(where + ":", s.status().message());
    const std::string in = where + ".";
    auto hours = NonNegative(c, "hours", in);
    auto gpus = NonNegative(c, "replica_gpus", in);
    auto capacity = NonNegative(c, "capacity_rps", in);
    auto per_request = NonNegative(c, "per_request", in);
    auto cold_start = NonNegative(c, "cold_start_ms", in);
    for (const StatusOr<double>* v : {&hours, &gpus, &capacity, &per_request, &cold_start})
      if (!v->ok()) return v->status();
    s->hours = *hours;
    // Older records have no held replica-hours: the call's own count for its hours.
    if (!c.contains("held_replica_hours")) s->held_replica_hours = s->decision.held * *hours;
    s->decision.replica_gpus = *gpus;
    s->decision.capacity_rps = *capacity;
    s->decision.per_request = *per_request;
    s->decision.cold_start = static_cast<DurationMs>(*cold_start);
    r.state.calls.push_back(std::move(*s));
  }
  return r;
}

}  // namespace airtime
