// TenantRate: how many API calls each tenant may make, so that one tenant's flood of calls
// cannot take the daemon's time from the others. A token bucket per tenant: `per_second`
// calls a second on average, up to `burst` at once; a call beyond is refused with how long
// until the next would pass (HttpApi answers 429 with Retry-After). The admin is not
// limited, nor are the routes without a token (/metrics, /healthz, the dashboard's files).
// Memory: one bucket per tenant that called (tenants come from the token file). Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace airtime {

class TenantRate {
 public:
  struct Options {
    double per_second = 200;  // 0: no limit
    double burst = 2000;      // calls at once; at least 1
  };
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  explicit TenantRate(
      Options options, Clock clock = [] { return std::chrono::steady_clock::now(); })
      : o_(options), clock_(std::move(clock)) {}

  // 0 when `tenant` may make a call now (it is counted); else the milliseconds until it may.
  int64_t Take(const std::string& tenant);
  const Options& options() const { return o_; }

 private:
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point at;
  };
  Options o_;
  Clock clock_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace airtime
