#include "airtime/ledger/costs.h"

#include <algorithm>
#include <cmath>

namespace airtime {
namespace {

template <typename T>
T At(const std::vector<T>& v, size_t i) {
  return i < v.size() ? v[i] : T{};
}

}  // namespace

std::vector<HourlyCost> HourlyRates(const std::vector<GpuCost>& costs,
                                    const std::vector<std::optional<double>>& measured_power_w) {
  std::vector<HourlyCost> out;
  out.reserve(costs.size());
  for (size_t t = 0; t < costs.size(); ++t)
    out.push_back(ComputeHourlyCost(costs[t], At(measured_power_w, t)));
  return out;
}

std::vector<bool> PricedTypes(const std::vector<GpuCost>& costs) {
  std::vector<bool> out;
  out.reserve(costs.size());
  for (const GpuCost& c : costs) out.push_back(c.priced);
  return out;
}

CostSummary ComputeCosts(const LedgerTotals& ledger, double value,
                         const std::vector<double>& value_by_type,
                         const std::vector<HourlyCost>& rates, const std::vector<bool>& priced,
                         const GpuCatalog& catalog) {
  CostSummary s;
  s.value = value;
  double attributed = 0;
  for (size_t t = 0; t < ledger.by_type.size() && t < catalog.size(); ++t) {
    const BucketTotals& b = ledger.by_type[t];
    if (b.installed_milli_ms <= 0) continue;
    TypeCost c;
    c.type = static_cast<GpuTypeId>(t);
    c.name = catalog.type(c.type).name;
    c.priced = At(priced, t);
    c.hourly = At(rates, t);
    c.installed_gpu_hours = b.installed_gpu_hours();
    c.allocated_gpu_hours = static_cast<double>(b.allocated_milli_ms()) / 3.6e9;
    c.allocation = c.allocated_gpu_hours / c.installed_gpu_hours;
    for (int k = 0; k < kBucketCount; ++k) {
      const double cost = b.gpu_hours(static_cast<Bucket>(k)) * c.hourly.total;
      c.bucket_cost[static_cast<size_t>(k)] = cost;
      s.bucket_cost[static_cast<size_t>(k)] += cost;
    }
    c.cost = c.installed_gpu_hours * c.hourly.total;
    c.value = At(value_by_type, t);
    c.margin = c.value - c.cost;
    if (c.allocated_gpu_hours > 0) c.value_per_allocated_gpu_hour = c.value / c.allocated_gpu_hours;
    if (c.value_per_allocated_gpu_hour > 0)
      c.breakeven_allocation = c.hourly.total / c.value_per_allocated_gpu_hour;
    if (!c.priced) s.unpriced.push_back(c.name);
    s.cost += c.cost;
    attributed += c.value;
    s.types.push_back(std::move(c));
  }
  s.margin = s.value - s.cost;
  s.unattributed_value = s.value - attributed;
  // Splitting value over types leaves rounding behind: that is not value earned off GPUs.
  if (std::abs(s.unattributed_value) <= 1e-9 * std::max(1.0, std::abs(s.value)))
    s.unattributed_value = 0;
  const double installed = ledger.installed_gpu_hours();
  s.cost_per_installed_gpu_hour = installed > 0 ? s.cost / installed : 0;
  return s;
}

}  // namespace airtime
