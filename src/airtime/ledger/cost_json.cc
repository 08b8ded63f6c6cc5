#include "airtime/ledger/cost_json.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace airtime {

using nlohmann::json;

namespace {

json BucketsJson(const std::array<double, kBucketCount>& cost) {
  json out = json::object();
  for (int b = 0; b < kBucketCount; ++b) {
    const auto bucket = static_cast<Bucket>(b);
    // Work outside airtime exists only under the Slurm backend: listed when it costs.
    if (bucket == Bucket::kForeign && cost[static_cast<size_t>(b)] == 0) continue;
    out[BucketName(bucket)] = cost[static_cast<size_t>(b)];
  }
  return out;
}

const char* Basis(const TypeCost& t) {
  if (!t.priced) return "unpriced";
  if (t.hourly.direct) return "per_hour";
  return t.hourly.measured_power ? "measured_power" : "catalogue_power";
}

json TypeJson(const TypeCost& t) {
  const bool split = t.priced && !t.hourly.direct;
  return {{"type", t.name},
          {"basis", Basis(t)},
          {"per_hour", t.hourly.total},
          {"depreciation_per_hour", split ? json(t.hourly.depreciation) : json(nullptr)},
          {"power_per_hour", split ? json(t.hourly.power) : json(nullptr)},
          {"power_w", split ? json(t.hourly.power_w) : json(nullptr)},
          {"installed_gpu_hours", t.installed_gpu_hours},
          {"allocated_gpu_hours", t.allocated_gpu_hours},
          {"allocation", t.allocation},
          {"cost", t.cost},
          {"value", t.value},
          {"margin", t.margin},
          {"value_per_allocated_gpu_hour", t.value_per_allocated_gpu_hour},
          {"breakeven_allocation",
           t.breakeven_allocation ? json(*t.breakeven_allocation) : json(nullptr)},
          {"buckets", BucketsJson(t.bucket_cost)}};
}

std::string Num(const json& j, const char* key, const char* fmt) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, j[key].get<double>());
  return buf;
}

std::string Str(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "-";
  return j[key].get<std::string>();
}

}  // namespace

json CostsToJson(const CostSummary& s) {
  json types = json::array();
  for (const TypeCost& t : s.types) types.push_back(TypeJson(t));
  return {{"cost", s.cost},
          {"value", s.value},
          {"margin", s.margin},
          {"cost_per_installed_gpu_hour", s.cost_per_installed_gpu_hour},
          {"unattributed_value", s.unattributed_value},
          {"buckets", BucketsJson(s.bucket_cost)},
          {"types", types},
          {"unpriced", s.unpriced}};
}

std::string CostsTable(const json& costs) {
  if (!costs.is_object() || !costs.contains("types") || !costs["types"].is_array()) return {};
  std::string out;
  char buf[320];
  const char* row = "  %-12s %10s %10s %9s %11s %11s %11s %9s %10s\n";
  std::snprintf(buf, sizeof buf, row, "GPU type", "installed", "rate/GPU-h", "allocated", "cost",
                "value", "margin", "value/GPU-h", "break-even");
  out += buf;
  auto pct = [](const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::string("-");
    char b[32];
    std::snprintf(b, sizeof b, "%.1f%%", 100 * j[key].get<double>());
    return std::string(b);
  };
  for (const json& t : costs["types"]) {
    std::string rate = Num(t, "per_hour", "%.3f");
    if (Str(t, "basis") == "unpriced") rate = "unpriced";
    std::string breakeven = pct(t, "breakeven_allocation");
    if (breakeven == "-") breakeven = "none";  // no value earned on the type
    std::snprintf(buf, sizeof buf, row, Str(t, "type").c_str(),
                  (Num(t, "installed_gpu_hours", "%.1f") + "h").c_str(), rate.c_str(),
                  pct(t, "allocation").c_str(), Num(t, "cost", "%.2f").c_str(),
                  Num(t, "value", "%.2f").c_str(), Num(t, "margin", "%.2f").c_str(),
                  Num(t, "value_per_allocated_gpu_hour", "%.3f").c_str(), breakeven.c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof buf, row, "all", "",
                Num(costs, "cost_per_installed_gpu_hour", "%.3f").c_str(), "",
                Num(costs, "cost", "%.2f").c_str(), Num(costs, "value", "%.2f").c_str(),
                Num(costs, "margin", "%.2f").c_str(), "", "");
  std::string all = buf;
  all.erase(all.find_last_not_of(" \n") + 1);  // no trailing blanks
  out += all + "\n";
  if (costs.contains("buckets") && costs["buckets"].is_object()) {
    const double total =
        costs.contains("cost") && costs["cost"].is_number() ? costs["cost"].get<double>() : 0;
    out += "  cost by bucket:";
    bool first = true;
    for (int b = 0; b < kBucketCount; ++b) {  // in the ledger's order
      const char* name = BucketName(static_cast<Bucket>(b));
      const json& buckets = costs["buckets"];
      if (!buckets.contains(name)) continue;
      const json& v = buckets[name];
      if (!v.is_number() || v.get<double>() == 0) continue;
      std::snprintf(buf, sizeof buf, "%s %s %.2f (%.1f%%)", first ? "" : ",", name, v.get<double>(),
                    total > 0 ? 100 * v.get<double>() / total : 0.0);
      out += buf;
      first = false;
    }
    out += first ? " none\n" : "\n";
  }
  if (costs.contains("unpriced") && costs["unpriced"].is_array() && !costs["unpriced"].empty()) {
    out += "  unpriced (no cost figure, counted at 0; set one under costs: in the cluster file):";
    for (const json& n : costs["unpriced"])
      if (n.is_string()) out += " " + n.get<std::string>();
    out += "\n";
  }
  return out;
}

}  // namespace airtime
