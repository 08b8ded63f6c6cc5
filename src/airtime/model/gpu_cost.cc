#include "airtime/model/gpu_cost.h"

namespace airtime {
namespace {

struct CostDefault {
  const char* type;
  double price;    // USD per GPU; 0: fully depreciated (launched over 5 years ago)
  double power_w;  // NVIDIA's board power (TDP) for the data-centre form factor
};

// Round estimates, not quotes: docs/costs.md gives the source and date of each. Board power
// is the maximum, so the power part is an upper bound where NVML measures no lower draw.
constexpr CostDefault kDefaults[] = {
    {"H200", 40000, 700},                         // about 1.3-1.4 x an H100
    {"H100", 30000, 700},                         // $25,000-40,000 (SXM), 2023-2025
    {"A100-80GB", 12000, 400},                    // $8,000-15,000 street
    {"A100-40GB", 8000, 400},                     // the low end of the A100 street range
    {"L40S", 9000, 350},                          // MSRP about $9,000
    {"L4", 2500, 72},                             // $2,500 retail (MSRP about $2,345)
    {"A10", 2500, 150},                           // A10G MSRP about $2,500
    {"T4", 1900, 70},                             // MSRP about $1,880
    {"V100", 0, 300},                             // 2017-2018: depreciated over a 5-year life
    {"V100-16GB", 0, 300},     {"P100", 0, 300},  // 2016
    {"K80", 0, 300},                              // 2014
    // G2, G3 and MISC (the Alibaba traces' anonymised types) are unknown hardware: unpriced.
};

}  // namespace

HourlyCost ComputeHourlyCost(const GpuCost& c, std::optional<double> measured_power_w) {
  HourlyCost h;
  if (!c.priced) return h;
  if (c.per_hour) {
    h.total = *c.per_hour;
    h.direct = true;
    return h;
  }
  h.depreciation = c.life_years > 0 ? c.price / (c.life_years * kHoursPerYear) : 0;
  h.measured_power = measured_power_w.has_value();
  h.power_w = measured_power_w.value_or(c.power_w);
  h.power = h.power_w / 1000 * c.electricity_per_kwh * c.pue;
  h.total = h.depreciation + h.power;
  return h;
}

GpuCost DefaultGpuCost(std::string_view type_name) {
  GpuCost c;
  for (const CostDefault& d : kDefaults) {
    if (type_name != d.type) continue;
    c.priced = true;
    c.price = d.price;
    c.power_w = d.power_w;
    c.life_years = kDefaultLifeYears;
    c.electricity_per_kwh = kDefaultElectricityPerKwh;
    c.pue = kDefaultPue;
  }
  return c;
}

std::vector<GpuCost> DefaultGpuCosts(const GpuCatalog& catalog) {
  std::vector<GpuCost> out;
  out.reserve(catalog.size());
  for (size_t t = 0; t < catalog.size(); ++t)
    out.push_back(DefaultGpuCost(catalog.type(static_cast<GpuTypeId>(t)).name));
  return out;
}

}  // namespace airtime
