#include "airtime/server/ledger_record.h"

#include <nlohmann/json.hpp>

namespace airtime {

using nlohmann::json;

namespace {

json BucketsJson(const BucketTotals& t) {
  json buckets = json::object();
  for (int b = 0; b < kBucketCount; ++b)
    buckets[BucketName(static_cast<Bucket>(b))] = t.milli_ms[static_cast<size_t>(b)];
  return buckets;
}

}  // namespace

std::string EncodeLedgerRecord(const LedgerRecord& r, const GpuCatalog& catalog) {
  json by_type = json::object();
  for (size_t t = 0; t < r.totals.by_type.size() && t < catalog.size(); ++t) {
    const BucketTotals& bt = r.totals.by_type[t];
    if (bt.installed_milli_ms == 0) continue;
    by_type[catalog.type(static_cast<GpuTypeId>(t)).name] = {
        {"installed_milli_ms", bt.installed_milli_ms},
        {"reserved_held_milli_ms", bt.reserved_held_milli_ms},
        {"buckets", BucketsJson(bt)}};
  }
  json value_by_type = json::object();
  for (size_t t = 0; t < r.value_by_type.size() && t < catalog.size(); ++t)
    if (r.value_by_type[t] != 0)
      value_by_type[catalog.type(static_cast<GpuTypeId>(t)).name] = r.value_by_type[t];
  return json{{"since", r.since},
              {"saved_at", r.saved_at},
              {"unobserved_ms", r.unobserved},
              {"installed_milli_ms", r.totals.installed_milli_ms},
              {"reserved_held_milli_ms", r.totals.reserved_held_milli_ms},
              {"buckets", BucketsJson(r.totals)},
              {"value", r.value},
              {"by_type", by_type},
              {"value_by_type", value_by_type}}
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

// The buckets, installed_milli_ms and reserved_held_milli_ms of `obj` into `t`; `prefix`
// ("" or "by_type.H100.") names the fields in errors.
Status DecodeBuckets(const json& obj, const std::string& prefix, BucketTotals* t) {
  auto installed = Int(obj, "installed_milli_ms", prefix + "installed_milli_ms");
  if (!installed.ok()) return installed.status();
  t->installed_milli_ms = *installed;
  auto buckets = obj.find("buckets");
  if (buckets == obj.end() || !buckets->is_object())
    return Bad(prefix + "buckets", "is not an object");
  for (const auto& item : buckets->items()) {
    const std::string& name = item.key();
    int b = 0;
    while (b < kBucketCount && name != BucketName(static_cast<Bucket>(b))) ++b;
    if (b == kBucketCount)
      return Bad(prefix + "buckets." + name, "is not a bucket of this airtime");
    auto n = Int(*buckets, name, prefix + "buckets." + name);
    if (!n.ok()) return n.status();
    t->milli_ms[static_cast<size_t>(b)] = *n;
  }
  if (t->sum() != t->installed_milli_ms)
    return Bad(prefix + "buckets", "add up to " + std::to_string(t->sum()) + ", not to '" + prefix +
                                       "installed_milli_ms' " +
                                       std::to_string(t->installed_milli_ms));
  // Absent in records saved before replicas held on purpose were counted: none then.
  if (obj.contains("reserved_held_milli_ms")) {
    auto held = Int(obj, "reserved_held_milli_ms", prefix + "reserved_held_milli_ms");
    if (!held.ok()) return held.status();
    if (*held > t->milli_ms[static_cast<size_t>(Bucket::kReservedHeadroom)])
      return Bad(prefix + "reserved_held_milli_ms", "is more than the reserved_headroom bucket");
    t->reserved_held_milli_ms = *held;
  }
  return OkStatus();
}

}  // namespace

StatusOr<LedgerRecord> DecodeLedgerRecord(std::string_view text, const GpuCatalog& catalog) {
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
  r.since = *since;
  r.saved_at = *saved_at;
  r.unobserved = *unobserved;
  if (r.saved_at < r.since) return Bad("saved_at", "is before 'since'");
  if (r.unobserved > r.saved_at - r.since)
    return Bad("unobserved_ms", "is longer than the window since 'since'");
  AIRTIME_RETURN_IF_ERROR(DecodeBuckets(j, "", &r.totals));
  r.totals.by_type.assign(catalog.size(), BucketTotals{});
  r.value_by_type.assign(catalog.size(), 0.0);
  // Absent in records saved before costs were counted per GPU type.
  if (auto by_type = j.find("by_type"); by_type != j.end()) {
    if (!by_type->is_object()) return Bad("by_type", "is not an object");
    for (const auto& item : by_type->items()) {
      auto id = catalog.Find(item.key());
      if (!id.ok()) return Bad("by_type." + item.key(), "is not a GPU type of this airtime");
      if (!item.value().is_object()) return Bad("by_type." + item.key(), "is not an object");
      AIRTIME_RETURN_IF_ERROR(DecodeBuckets(item.value(), "by_type." + item.key() + ".",
                                            &r.totals.by_type[static_cast<size_t>(*id)]));
    }
  }
  if (auto vt = j.find("value_by_type"); vt != j.end()) {
    if (!vt->is_object()) return Bad("value_by_type", "is not an object");
    for (const auto& item : vt->items()) {
      auto id = catalog.Find(item.key());
      if (!id.ok()) return Bad("value_by_type." + item.key(), "is not a GPU type of this airtime");
      if (!item.value().is_number()) return Bad("value_by_type." + item.key(), "is not a number");
      r.value_by_type[static_cast<size_t>(*id)] = item.value().get<double>();
    }
  }
  auto value = j.find("value");
  if (value == j.end() || !value->is_number()) return Bad("value", "is missing or not a number");
  r.value = value->get<double>();
  return r;
}

}  // namespace airtime
