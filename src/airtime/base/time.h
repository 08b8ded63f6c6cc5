// Time in airtime: integer milliseconds on a clock the caller owns.
//
// The core never reads a wall clock: every event carries its own `now`. In the simulator
// the clock is virtual (milliseconds since the start of the trace); in the daemon it is
// milliseconds since the Unix epoch. Integer arithmetic keeps replays exact.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace airtime {

using TimeMs = int64_t;      // a point on the caller's clock
using DurationMs = int64_t;  // a span of time

inline constexpr TimeMs kNever = std::numeric_limits<TimeMs>::max();
inline constexpr DurationMs kSecond = 1000;
inline constexpr DurationMs kMinute = 60 * kSecond;
inline constexpr DurationMs kHour = 60 * kMinute;
inline constexpr DurationMs kDay = 24 * kHour;

inline constexpr double ToHours(DurationMs d) { return static_cast<double>(d) / kHour; }
inline constexpr double ToSeconds(DurationMs d) { return static_cast<double>(d) / kSecond; }
// A count of milliseconds held as a double, as a duration: kNever (or -kNever) for what no
// TimeMs holds, 0 for NaN. A cast of such a double is undefined: a job of 1e17 s of work, or
// at a speed of 1e-12, once ended 1 ms after it started, with its whole value.
inline constexpr DurationMs SaturatedMs(double ms) {
  if (ms != ms) return 0;
  if (ms >= 9.2e18) return kNever;
  if (ms <= -9.2e18) return -kNever;
  return static_cast<DurationMs>(ms);
}
inline constexpr DurationMs FromSeconds(double s) {
  return SaturatedMs(s * kSecond + (s >= 0 ? 0.5 : -0.5));
}

// Times from here on are read as the daemon's wall clock (ms since the epoch, 2001 on);
// below it, as scenario time. No simulation runs for 31 years.
inline constexpr TimeMs kWallClockFrom = 978307200000;
// "1d02:03:04" / "02:03:04" / "never": a short human form for explanations and tables;
// "2026-11-30 05:41:47 UTC" for wall-clock times.
std::string FormatTime(TimeMs t);
// "3h12m", "45s", "2d4h": a short human duration.
std::string FormatDuration(DurationMs d);

}  // namespace airtime
