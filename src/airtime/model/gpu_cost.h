// GPU costs: what one installed GPU of a type costs per calendar hour.
//
// A GPU costs every hour it is installed, whether it works or not, like an aircraft on the
// ground. The hourly cost is
//
//   depreciation  price / (life_years x 8,760 h)                 straight line, no residual
//   power         power_w / 1,000 x electricity_per_kwh x pue    energy at the wall, cooling
//                                                                and distribution included
//
// or a direct `per_hour` figure that replaces both (a rental price, an internal transfer
// price). Money is in one currency throughout (the defaults are US dollars); it is compared
// with workloads' value, so value and costs must be counted in the same unit.
//
// The built-in catalogue's defaults (DefaultGpuCost) are estimates from public list and
// street prices and NVIDIA's board powers; docs/costs.md gives each figure's source and
// date. Pure functions and immutable tables: safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/model/gpu_catalog.h"

namespace airtime {

inline constexpr double kHoursPerYear = 8760;

// The inputs of one type's hourly cost. A type with no figure at all is `priced == false`:
// it costs nothing, and reports say it is unpriced.
struct GpuCost {
  bool priced = false;
  double price = 0;                // purchase price of one GPU (its share of the server)
  double life_years = 5;           // straight-line depreciation period
  double power_w = 0;              // average draw of one GPU, W (a catalogue figure)
  double electricity_per_kwh = 0;  // price of a kWh at the meter
  double pue = 1;                  // power usage effectiveness: facility / IT power (>= 1)
  std::optional<double> per_hour;  // a direct hourly cost, replacing the model above
};

// One type's hourly cost, split into its parts.
struct HourlyCost {
  double depreciation = 0;  // per hour
  double power = 0;         // per hour, cooling included
  double total = 0;         // depreciation + power, or the direct per_hour
  double power_w = 0;       // the draw the power part uses
  bool measured_power = false;
  bool direct = false;  // per_hour given: depreciation and power are not split out
};

// The hourly cost of `c`. `measured_power_w` (the mean draw NVML measured), when present,
// replaces c.power_w; it does not apply to a direct per_hour. Expects validated inputs
// (life_years > 0); an unpriced type costs 0.
HourlyCost ComputeHourlyCost(const GpuCost& c, std::optional<double> measured_power_w = {});

// The default of the built-in type named `type_name` (its catalogue name): priced or not.
GpuCost DefaultGpuCost(std::string_view type_name);

// The defaults for every type of `catalog`, indexed by GpuTypeId.
std::vector<GpuCost> DefaultGpuCosts(const GpuCatalog& catalog);

// The defaults shared by every priced built-in type: electricity price, PUE and life.
inline constexpr double kDefaultElectricityPerKwh = 0.10;
inline constexpr double kDefaultPue = 1.58;
inline constexpr double kDefaultLifeYears = 5;

}  // namespace airtime
