#include "airtime/api/tenant_rate.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

using std::chrono::milliseconds;

struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  TenantRate::Clock fn() {
    return [this] { return now; };
  }
};

TEST(TenantRate, ABurstPassesThenTheRateAndEachTenantHasItsOwn) {
  FakeClock clock;
  TenantRate rate({10, 3}, clock.fn());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rate.Take("a"), 0) << i;
  EXPECT_EQ(rate.Take("a"), 100);  // one call a tenth of a second
  EXPECT_EQ(rate.Take("b"), 0);    // another tenant's bucket is full
  clock.now += milliseconds(40);
  EXPECT_EQ(rate.Take("a"), 60);  // refused calls cost nothing
  clock.now += milliseconds(60);
  EXPECT_EQ(rate.Take("a"), 0);
  EXPECT_GT(rate.Take("a"), 0);
  clock.now += std::chrono::hours(1);  // never more than the burst saved up
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rate.Take("a"), 0) << i;
  EXPECT_GT(rate.Take("a"), 0);
}

TEST(TenantRate, ZeroMeansNoLimit) {
  FakeClock clock;
  TenantRate rate({0, 1}, clock.fn());
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(rate.Take("a"), 0);
}

}  // namespace
}  // namespace airtime
