// Costs: what the installed GPUs cost over a ledger's span, per bucket and per GPU type,
// against the value they earned.
//
// Every installed GPU-hour costs its type's hourly rate (model/gpu_cost.h), whatever bucket
// it lands in: an idle GPU depreciates and draws power too. So a bucket's cost is its
// GPU-hours of each type x that type's rate, summed over types, and the buckets add up to
// the total cost. The rate is flat: idle and busy hours cost the same (the power part uses
// one average draw per type).
//
// Break-even allocation of a type: the share of its installed hours that must be allocated
// (as the allocation rate counts it: useful, idle_held, low_value_busy, lost, and
// reserved_headroom held by replicas) for its value to cover its cost, at the value it
// earned per allocated GPU-hour over the span:
//
//   value per allocated GPU-hour  v = value of the type / allocated GPU-hours of the type
//   break-even allocation          = hourly rate / v
//
// since at allocation a the type earns a x installed hours x v and costs installed hours x
// rate. Above 1 the type cannot pay for itself at that value even fully allocated; with no
// value (or nothing allocated) there is none. Pure and deterministic.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "airtime/ledger/ledger.h"
#include "airtime/model/gpu_cost.h"

namespace airtime {

struct TypeCost {
  GpuTypeId type = kNoGpuType;
  std::string name;
  bool priced = false;
  HourlyCost hourly;  // per installed GPU-hour
  double installed_gpu_hours = 0, allocated_gpu_hours = 0;
  double allocation = 0;  // allocated / installed
  std::array<double, kBucketCount> bucket_cost{};
  double cost = 0, value = 0, margin = 0;
  double value_per_allocated_gpu_hour = 0;
  std::optional<double> breakeven_allocation;  // none: no value earned on this type
};

struct CostSummary {
  std::vector<TypeCost> types;  // every type with installed hours, in catalogue order
  std::array<double, kBucketCount> bucket_cost{};
  double cost = 0;
  double value = 0;   // all value earned
  double margin = 0;  // value - cost
  double cost_per_installed_gpu_hour = 0;
  // Value earned by no GPU type (work that held none): in value and margin, in no type.
  double unattributed_value = 0;
  std::vector<std::string> unpriced;  // installed types without a cost figure (cost 0)
};

// `rates` and `value_by_type` are indexed by GpuTypeId of `catalog` (missing entries count
// as 0); `ledger.by_type` gives each type's hours. `value` is the whole value earned.
CostSummary ComputeCosts(const LedgerTotals& ledger, double value,
                         const std::vector<double>& value_by_type,
                         const std::vector<HourlyCost>& rates, const std::vector<bool>& priced,
                         const GpuCatalog& catalog);

// The hourly rates of `costs` (by GpuTypeId), with measured draw per type where given
// (`measured_power_w` by GpuTypeId; missing or empty entries use the catalogue figure).
std::vector<HourlyCost> HourlyRates(
    const std::vector<GpuCost>& costs,
    const std::vector<std::optional<double>>& measured_power_w = {});
// Which of `costs` are priced, by GpuTypeId.
std::vector<bool> PricedTypes(const std::vector<GpuCost>& costs);

}  // namespace airtime
