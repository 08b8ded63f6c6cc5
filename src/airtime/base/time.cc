#include "airtime/base/time.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace airtime {

std::string FormatTime(TimeMs t) {
  if (t == kNever) return "never";
  char buf[48];
  if (t >= kWallClockFrom) {  // the daemon's clock: a UTC date
    const time_t secs = static_cast<time_t>(t / kSecond);
    struct tm tm {};
    gmtime_r(&secs, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
  }
  const char* sign = t < 0 ? "-" : "";
  int64_t a = std::llabs(t) / kSecond;
  int64_t days = a / 86400, h = (a / 3600) % 24, m = (a / 60) % 60, s = a % 60;
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%s%lldd%02lld:%02lld:%02lld", sign, (long long)days,
                  (long long)h, (long long)m, (long long)s);
  } else {
    std::snprintf(buf, sizeof buf, "%s%02lld:%02lld:%02lld", sign, (long long)h, (long long)m,
                  (long long)s);
  }
  return buf;
}

std::string FormatDuration(DurationMs d) {
  if (d == kNever) return "never";
  char buf[48];
  int64_t a = std::llabs(d) / kSecond;
  const char* sign = d < 0 ? "-" : "";
  if (a >= 86400) {
    std::snprintf(buf, sizeof buf, "%s%lldd%lldh", sign, (long long)(a / 86400),
                  (long long)(a % 86400 / 3600));
  } else if (a >= 3600) {
    std::snprintf(buf, sizeof buf, "%s%lldh%02lldm", sign, (long long)(a / 3600),
                  (long long)(a % 3600 / 60));
  } else if (a >= 60) {
    std::snprintf(buf, sizeof buf, "%s%lldm%02llds", sign, (long long)(a / 60),
                  (long long)(a % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%s%llds", sign, (long long)a);
  }
  return buf;
}

}  // namespace airtime
