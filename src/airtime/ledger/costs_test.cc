#include "airtime/ledger/costs.h"

#include <gtest/gtest.h>

#include "airtime/ledger/cost_json.h"

namespace airtime {
namespace {

constexpr int64_t kMilliHour = 3'600'000'000;  // one GPU-hour in milli-GPU-ms

void Put(BucketTotals* t, Bucket b, double gpu_hours) {
  const auto v = static_cast<int64_t>(gpu_hours * static_cast<double>(kMilliHour));
  t->milli_ms[static_cast<size_t>(b)] += v;
  t->installed_milli_ms += v;
}

// A tiny case worked by hand: 10 H100-hours at $1.00/h (direct) and 10 L4-hours at $0.20/h.
//   H100: useful 6, idle_held 1, free_no_demand 3 -> allocated 7 h, cost 10.00, value 14
//         value per allocated GPU-hour 14 / 7 = 2.00; break-even 1.00 / 2.00 = 50%
//   L4:   useful 2, free_no_demand 8 -> allocated 2 h, cost 2.00, value 1
//         value per allocated GPU-hour 0.50; break-even 0.20 / 0.50 = 40%
// Buckets: useful 6 x 1 + 2 x 0.2 = 6.40, idle_held 1.00, free_no_demand 3 + 1.6 = 4.60;
// total 12.00; value 15 (+ 0.5 earned without a GPU); margin 15.5 - 12 = 3.50.
TEST(CostsTest, TinyCaseByHand) {
  const GpuCatalog& cat = GpuCatalog::Builtin();
  const auto h100 = static_cast<size_t>(*cat.Find("H100"));
  const auto l4 = static_cast<size_t>(*cat.Find("L4"));
  LedgerTotals t;
  t.by_type.resize(cat.size());
  Put(&t.by_type[h100], Bucket::kUseful, 6);
  Put(&t.by_type[h100], Bucket::kIdleHeld, 1);
  Put(&t.by_type[h100], Bucket::kFreeNoDemand, 3);
  Put(&t.by_type[l4], Bucket::kUseful, 2);
  Put(&t.by_type[l4], Bucket::kFreeNoDemand, 8);
  for (const BucketTotals& b : t.by_type) static_cast<BucketTotals&>(t).Add(b);

  std::vector<GpuCost> costs = DefaultGpuCosts(cat);
  costs[h100].per_hour = 1.0;
  costs[l4].per_hour = 0.2;
  std::vector<double> value_by_type(cat.size(), 0.0);
  value_by_type[h100] = 14;
  value_by_type[l4] = 1;
  const CostSummary s =
      ComputeCosts(t, 15.5, value_by_type, HourlyRates(costs), PricedTypes(costs), cat);

  ASSERT_EQ(s.types.size(), 2u);  // only installed types, in catalogue order
  const TypeCost& h = s.types[0];
  EXPECT_EQ(h.name, "H100");
  EXPECT_DOUBLE_EQ(h.installed_gpu_hours, 10);
  EXPECT_DOUBLE_EQ(h.allocated_gpu_hours, 7);
  EXPECT_DOUBLE_EQ(h.allocation, 0.7);
  EXPECT_DOUBLE_EQ(h.cost, 10);
  EXPECT_DOUBLE_EQ(h.margin, 4);
  EXPECT_DOUBLE_EQ(h.value_per_allocated_gpu_hour, 2);
  ASSERT_TRUE(h.breakeven_allocation.has_value());
  EXPECT_DOUBLE_EQ(*h.breakeven_allocation, 0.5);
  const TypeCost& l = s.types[1];
  EXPECT_EQ(l.name, "L4");
  EXPECT_DOUBLE_EQ(l.cost, 2);
  EXPECT_DOUBLE_EQ(l.value_per_allocated_gpu_hour, 0.5);
  EXPECT_DOUBLE_EQ(*l.breakeven_allocation, 0.4);

  EXPECT_DOUBLE_EQ(s.bucket_cost[static_cast<size_t>(Bucket::kUseful)], 6.4);
  EXPECT_DOUBLE_EQ(s.bucket_cost[static_cast<size_t>(Bucket::kIdleHeld)], 1.0);
  EXPECT_DOUBLE_EQ(s.bucket_cost[static_cast<size_t>(Bucket::kFreeNoDemand)], 4.6);
  EXPECT_DOUBLE_EQ(s.cost, 12);
  double sum = 0;
  for (double c : s.bucket_cost) sum += c;
  EXPECT_NEAR(sum, s.cost, 1e-12);
  EXPECT_DOUBLE_EQ(s.margin, 3.5);
  EXPECT_DOUBLE_EQ(s.unattributed_value, 0.5);
  EXPECT_DOUBLE_EQ(s.cost_per_installed_gpu_hour, 0.6);  // 12 / 20 h
  EXPECT_TRUE(s.unpriced.empty());

  const nlohmann::json j = CostsToJson(s);
  EXPECT_DOUBLE_EQ(j["margin"].get<double>(), 3.5);
  EXPECT_EQ(j["types"][0]["basis"], "per_hour");
  EXPECT_TRUE(j["types"][0]["depreciation_per_hour"].is_null());
  EXPECT_DOUBLE_EQ(j["types"][1]["breakeven_allocation"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(j["buckets"]["idle_held"].get<double>(), 1.0);
  const std::string table = CostsTable(j);
  EXPECT_NE(table.find("H100"), std::string::npos) << table;
  EXPECT_NE(table.find("50.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("useful 6.40 (53.3%)"), std::string::npos) << table;
}

// No value on a type: no break-even; an unpriced type costs 0 and is named.
TEST(CostsTest, NoValueMeansNoBreakEvenAndUnpricedIsNamed) {
  const GpuCatalog& cat = GpuCatalog::Builtin();
  const auto g2 = static_cast<size_t>(*cat.Find("G2"));
  LedgerTotals t;
  t.by_type.resize(cat.size());
  Put(&t.by_type[g2], Bucket::kUseful, 4);
  static_cast<BucketTotals&>(t).Add(t.by_type[g2]);
  const std::vector<GpuCost> costs = DefaultGpuCosts(cat);
  const CostSummary s = ComputeCosts(t, 0, {}, HourlyRates(costs), PricedTypes(costs), cat);
  ASSERT_EQ(s.types.size(), 1u);
  EXPECT_FALSE(s.types[0].breakeven_allocation.has_value());
  EXPECT_EQ(s.cost, 0);
  ASSERT_EQ(s.unpriced.size(), 1u);
  EXPECT_EQ(s.unpriced[0], "G2");
  const nlohmann::json j = CostsToJson(s);
  EXPECT_TRUE(j["types"][0]["breakeven_allocation"].is_null());
  EXPECT_EQ(j["types"][0]["basis"], "unpriced");
  const std::string table = CostsTable(j);
  EXPECT_NE(table.find("unpriced (no cost figure"), std::string::npos) << table;
  EXPECT_NE(table.find("none"), std::string::npos) << table;
}

}  // namespace
}  // namespace airtime
