#include "airtime/server/ledger_record.h"

#include <nlohmann/json.hpp>

namespace airtime {

using nlohmann::json;

std::string EncodeLedgerRecord(const LedgerRecord& r) {
  json buckets = json::object();
  for (int b = 0; b < kBucketCount; ++b)
    buckets[BucketName(static_cast<Bucket>(b))] = r.totals.milli_ms[static_cast<size_t>(b)];
  return json{{"since", r.since},
              {"saved_at", r.saved_at},
              {"unobserved_ms", r.unobserved},
              {"installed_milli_ms", r.totals.installed_milli_ms},
              {"reserved_held_milli_ms", r.totals.reserved_held_milli_ms},
              {"buckets", buckets},
              {"value", r.value}}
      .dump();
}

namespace {

Status Bad(const std::string& field, const std::string& what) {
  return InvalidArgument("saved ledger: '" + field + "' " + what);
}

// obj[key], a non-negative integer; `field` names it in errors (default: the key).
StatusOr<int64_t> Int(const json& obj, const std::string& key, std::string field = "") {
  if (field.empty()) field = key;
  auto it = obj.find(key);
  if (it == obj.end()) return Bad(field, "is missing");
  if (!it->is_number_integer()) return Bad(field, "is not an integer: " + it->dump());
  const int64_t v = it->get<int64_t>();
  if (v < 0) return Bad(field, "is negative: " + it->dump());
  return v;
}

}  // namespace

StatusOr<LedgerRecord> DecodeLedgerRecord(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("saved ledger: not JSON");
  if (!j.is_object()) return InvalidArgument("saved ledger: not a JSON object");
  LedgerRecord r;
  auto since = Int(j, "since");
  if (!since.ok()) return since.status();
  auto saved_at = Int(j, "saved_at");
  if (!saved_at.ok()) return saved_at.status();
  auto unobserved = Int(j, "unobserved_ms");
  if (!unobserved.ok()) return unobserved.status();
  auto installed = Int(j, "installed_milli_ms");
  if (!installed.ok()) return installed.status();
  r.since = *since;
  r.saved_at = *saved_at;
  r.unobserved = *unobserved;
  r.totals.installed_milli_ms = *installed;
  if (r.saved_at < r.since) return Bad("saved_at", "is before 'since'");
  if (r.unobserved > r.saved_at - r.since)
    return Bad("unobserved_ms", "is longer than the window since 'since'");
  auto buckets = j.find("buckets");
  if (buckets == j.end() || !buckets->is_object()) return Bad("buckets", "is not an object");
  for (const auto& item : buckets->items()) {
    const std::string& name = item.key();
    int b = 0;
    while (b < kBucketCount && name != BucketName(static_cast<Bucket>(b))) ++b;
    if (b == kBucketCount) return Bad("buckets." + name, "is not a bucket of this airtime");
    auto n = Int(*buckets, name, "buckets." + name);
    if (!n.ok()) return n.status();
    r.totals.milli_ms[static_cast<size_t>(b)] = *n;
  }
  if (r.totals.sum() != r.totals.installed_milli_ms)
    return Bad("buckets", "add up to " + std::to_string(r.totals.sum()) + ", not to '" +
                              "installed_milli_ms' " + std::to_string(r.totals.installed_milli_ms));
  // Absent in records saved before replicas held on purpose were counted: none then.
  if (j.contains("reserved_held_milli_ms")) {
    auto held = Int(j, "reserved_held_milli_ms");
    if (!held.ok()) return held.status();
    if (*held > r.totals.milli_ms[static_cast<size_t>(Bucket::kReservedHeadroom)])
      return Bad("reserved_held_milli_ms", "is more than the reserved_headroom bucket");
    r.totals.reserved_held_milli_ms = *held;
  }
  auto value = j.find("value");
  if (value == j.end() || !value->is_number()) return Bad("value", "is missing or not a number");
  r.value = value->get<double>();
  return r;
}

}  // namespace airtime
