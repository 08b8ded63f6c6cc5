#include "airtime/model/variant_route.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

// A generalist (quality 1) serving both classes, and a small model (quality 0.7) serving
// class 1 only.
RealtimeProfile TwoVariants(double floor) {
  RealtimeProfile rt;
  rt.classes = {RequestClass{"code", {}}, RequestClass{"conv", {}}};
  ModelVariant big;
  big.name = "big";
  big.quality = 1.0;
  ModelVariant small;
  small.name = "small";
  small.quality = 0.7;
  small.classes = {1};
  rt.variants = {big, small};
  rt.quality_floor = floor;
  return rt;
}

TEST(RouteRequests, TheBestQualityServesFirstAndTheRestIsMissed) {
  const VariantRoute r = RouteRequests(TwoVariants(0), {4, 10}, {3, 8}, {});
  // The generalist takes code first (fewest servers), then 1 of conv; the small model 7.
  EXPECT_DOUBLE_EQ(r.served[0][0], 3);
  EXPECT_DOUBLE_EQ(r.served[0][1], 1);
  EXPECT_DOUBLE_EQ(r.served[1][1], 7);
  EXPECT_DOUBLE_EQ(r.served_rps, 11);
  EXPECT_DOUBLE_EQ(r.demand_rps, 11);
}

TEST(RouteRequests, AMixAtTheFloorIsLeftAsItIs) {
  // 10 at quality 1 and 10 at 0.7: a mean of exactly 0.85.
  const VariantRoute r = RouteRequests(TwoVariants(0.85), {10, 10}, {0, 20}, {{0, 0.5}, {0, 0.5}});
  EXPECT_DOUBLE_EQ(r.served_rps, 20);
  EXPECT_NEAR(r.MeanQuality(), 0.85, 1e-12);
}

TEST(RouteRequests, BelowTheFloorTheLowQualityVariantServesLess) {
  // The generalist has room for 5 requests/s only: 5 + 10 x 0.7 would be a mean of 0.8.
  // Serving 5 fewer with the small model brings it to 0.85: (5 + 5 x 0.7) / 10.
  const VariantRoute r = RouteRequests(TwoVariants(0.85), {5, 10}, {0, 15}, {});
  EXPECT_NEAR(r.served_rps, 10, 1e-9);
  EXPECT_NEAR(r.served[1][1], 5, 1e-9);
  EXPECT_NEAR(r.MeanQuality(), 0.85, 1e-9);
  // Without a floor, the small model serves all it can.
  const VariantRoute free = RouteRequests(TwoVariants(0), {5, 10}, {0, 15}, {});
  EXPECT_DOUBLE_EQ(free.served_rps, 15);
}

TEST(RouteRequests, OnlyVariantsBelowTheFloorAreMissed) {
  // No generalist ready: everything the small model would serve is below the floor.
  const VariantRoute r = RouteRequests(TwoVariants(0.85), {0, 10}, {2, 8}, {});
  EXPECT_DOUBLE_EQ(r.served_rps, 0);
  EXPECT_DOUBLE_EQ(r.served[1][1], 0);
  // A floor the small model meets keeps it serving.
  const VariantRoute low = RouteRequests(TwoVariants(0.7), {0, 10}, {2, 8}, {});
  EXPECT_DOUBLE_EQ(low.served_rps, 8);
}

TEST(RouteRequests, TheLowestQualityIsMissedFirst) {
  RealtimeProfile rt = TwoVariants(0.9);
  ModelVariant tiny;
  tiny.name = "tiny";
  tiny.quality = 0.5;
  tiny.classes = {1};
  rt.variants.push_back(tiny);
  // 8 at 1, 4 at 0.7, 4 at 0.5: mean 0.8375. The tiny model goes first: without it
  // (8 + 2.8) / 12 = 0.9; so all 4 of its requests are missed and the small model keeps 4.
  const VariantRoute r = RouteRequests(rt, {8, 4, 4}, {0, 16}, {});
  EXPECT_NEAR(r.served[2][1], 0, 1e-9);
  EXPECT_NEAR(r.served[1][1], 4, 1e-9);
  EXPECT_NEAR(r.MeanQuality(), 0.9, 1e-9);
}

}  // namespace
}  // namespace airtime
