#include "airtime/api/tenant_rate.h"

#include <algorithm>
#include <cmath>

namespace airtime {

int64_t TenantRate::Take(const std::string& tenant) {
  if (o_.per_second <= 0) return 0;
  const double burst = std::max(1.0, o_.burst);
  const auto now = clock_();
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, fresh] = buckets_.try_emplace(tenant, Bucket{burst, now});
  Bucket& b = it->second;
  if (!fresh) {
    const double seconds = std::chrono::duration<double>(now - b.at).count();
    b.tokens = std::min(burst, b.tokens + std::max(0.0, seconds) * o_.per_second);
    b.at = now;
  }
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return 0;
  }
  return std::max<int64_t>(1,
                           static_cast<int64_t>(std::ceil((1 - b.tokens) / o_.per_second * 1000)));
}

}  // namespace airtime
