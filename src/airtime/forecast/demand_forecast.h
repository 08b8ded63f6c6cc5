// DemandForecast: one realtime service's request rate, forecast from its own past.
//
// The service's demand is observed as a step function (rate r from time t on). The
// forecaster keeps the time-weighted mean rate of every completed slot (default 15 min) and
// forecasts a future time t as
//   seasonal(t) x level
// where seasonal(t) is the mean of the same slot of the week over past weeks when at least
// one full week is known, else the mean of the same slot of the day over past days, and
// level is the ratio of the recent observed rate to the seasonal rate over the last
// `level_window` (how busy today is compared with the usual day), clamped to [0.25, 4].
// Before a full day of history it falls back to persistence (the current rate). It never
// looks at anything but the observations it was given: no peeking at the future.
// Pure value type; not thread-safe.
#pragma once

#include <vector>

#include "airtime/base/time.h"

namespace airtime {

class DemandForecast {
 public:
  struct Options {
    DurationMs slot = 15 * kMinute;
    DurationMs level_window = kHour;
  };

  DemandForecast();
  explicit DemandForecast(Options options);

  // The rate is `rps` from `at` on. Observations must come in time order.
  void Observe(TimeMs at, double rps);
  // Expected rate at `t` (t at or after the last observation; earlier times get the rate
  // observed then).
  double At(TimeMs t) const;
  // The largest expected rate over [from, to], sampled per slot and at both ends.
  double PeakOver(TimeMs from, TimeMs to) const;
  // Whether enough history exists for a seasonal forecast (a full day).
  bool seasonal() const;
  double current() const { return rate_; }

 private:
  void CloseSlotsUntil(TimeMs t);
  // Mean of t's slot of the day (week) over the closed slots before index `n`; < 0: unknown.
  double Seasonal(TimeMs t, int64_t n) const;
  double Level() const;

  Options o_;
  TimeMs start_ = -1;  // first observation
  TimeMs last_ = -1;   // last observation
  double rate_ = 0;    // current rate
  TimeMs slot_begin_ = 0;
  double slot_area_ = 0;       // rps x ms accumulated in the open slot
  std::vector<double> slots_;  // mean rate of each closed slot since start_ (aligned)
  int64_t first_slot_ = 0;     // absolute slot index of slots_[0]
};

}  // namespace airtime
