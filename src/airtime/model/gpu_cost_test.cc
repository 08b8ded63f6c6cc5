#include "airtime/model/gpu_cost.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

// Worked by hand: the default H100 is $30,000 over 5 years of 8,760 h, and 700 W at
// $0.10/kWh x PUE 1.58.
TEST(GpuCostTest, DefaultH100ByHand) {
  const GpuCost c = DefaultGpuCost("H100");
  ASSERT_TRUE(c.priced);
  const HourlyCost h = ComputeHourlyCost(c);
  EXPECT_NEAR(h.depreciation, 30000.0 / 43800.0, 1e-12);  // 0.6849 per hour
  EXPECT_NEAR(h.power, 0.7 * 0.10 * 1.58, 1e-12);         // 0.1106 per hour
  EXPECT_NEAR(h.total, 0.795531506849315, 1e-12);
  EXPECT_EQ(h.power_w, 700);
  EXPECT_FALSE(h.measured_power);
  EXPECT_FALSE(h.direct);
}

TEST(GpuCostTest, OwnFiguresByHand) {
  GpuCost c;
  c.priced = true;
  c.price = 30000;
  c.life_years = 4;  // 35,040 h
  c.power_w = 700;
  c.electricity_per_kwh = 0.12;
  c.pue = 1.3;
  const HourlyCost h = ComputeHourlyCost(c);
  EXPECT_NEAR(h.depreciation, 0.856164383561644, 1e-12);
  EXPECT_NEAR(h.power, 0.1092, 1e-12);  // 0.7 kW x 0.12 x 1.3
  EXPECT_NEAR(h.total, 0.965364383561644, 1e-12);
}

TEST(GpuCostTest, MeasuredPowerReplacesTheCatalogueFigure) {
  const HourlyCost h = ComputeHourlyCost(DefaultGpuCost("H100"), 350.0);
  EXPECT_TRUE(h.measured_power);
  EXPECT_EQ(h.power_w, 350);
  EXPECT_NEAR(h.power, 0.35 * 0.10 * 1.58, 1e-12);  // 0.0553
  EXPECT_NEAR(h.depreciation, 30000.0 / 43800.0, 1e-12);
}

TEST(GpuCostTest, DirectPerHourReplacesTheModel) {
  GpuCost c = DefaultGpuCost("L4");
  c.per_hour = 0.35;
  const HourlyCost h = ComputeHourlyCost(c, 50.0);  // measured draw does not apply
  EXPECT_TRUE(h.direct);
  EXPECT_EQ(h.total, 0.35);
  EXPECT_EQ(h.depreciation, 0);
  EXPECT_EQ(h.power, 0);
}

TEST(GpuCostTest, EveryKnownTypeIsPricedButTheAnonymisedOnes) {
  const GpuCatalog& cat = GpuCatalog::Builtin();
  const std::vector<GpuCost> costs = DefaultGpuCosts(cat);
  ASSERT_EQ(costs.size(), cat.size());
  for (size_t t = 0; t < cat.size(); ++t) {
    const std::string& name = cat.type(static_cast<GpuTypeId>(t)).name;
    const bool anonymised = name == "G2" || name == "G3" || name == "MISC";
    EXPECT_EQ(costs[t].priced, !anonymised) << name;
    EXPECT_EQ(ComputeHourlyCost(costs[t]).total > 0, !anonymised) << name;
  }
  // Depreciated types cost their power only.
  const HourlyCost v100 = ComputeHourlyCost(DefaultGpuCost("V100"));
  EXPECT_EQ(v100.depreciation, 0);
  EXPECT_NEAR(v100.total, 0.3 * 0.10 * 1.58, 1e-12);
}

}  // namespace
}  // namespace airtime
