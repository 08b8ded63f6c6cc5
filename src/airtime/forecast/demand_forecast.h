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
//
// It also measures its own errors, so that a caller can size headroom from the forecast's
// uncertainty rather than a fixed margin: whenever a slot closes, it forecasts the slot
// `error_lead` ahead (what a decision made now about a replica that is ready then relies
// on) and, when that slot has closed in turn, records the ratio of the highest rate seen in
// it to that forecast. ErrorQuantile(q) reads the ratios of the last `error_window` slots.
// Pure value type; not thread-safe.
#pragma once

#include <utility>
#include <vector>

#include "airtime/base/time.h"

namespace airtime {

class DemandForecast {
 public:
  struct Options {
    DurationMs slot = 15 * kMinute;
    DurationMs level_window = kHour;
    // How far ahead the forecasts whose errors are measured look (a service's cold start
    // and lead), and how many of the latest errors are kept (a week of 15-minute slots).
    DurationMs error_lead = 15 * kMinute;
    size_t error_window = 7 * 96;
  };

  DemandForecast();
  explicit DemandForecast(Options options);

  // The rate is `rps` from `at` on. Observations must come in time order.
  void Observe(TimeMs at, double rps);
  // Expected rate at `t` (t at or after the last observation; earlier times get the rate
  // observed then).
  double At(TimeMs t) const;
  // What the history expects at `t`, even at the time of the last observation (where At
  // gives the rate observed): the seasonal rate times the level; the current rate before a
  // seasonal forecast exists.
  double Expected(TimeMs t) const;
  // The largest expected rate over [from, to], sampled per slot and at both ends.
  double PeakOver(TimeMs from, TimeMs to) const;
  // Whether enough history exists for a seasonal forecast (a full day).
  bool seasonal() const;
  double current() const { return rate_; }

  // The q-quantile (0..1) of the recorded errors: (highest rate in a slot) / (its forecast
  // made error_lead before), over the last error_window slots. A forecast below
  // `kErrorFloorRps` counts as that floor. -1 while fewer than `kMinErrors` are recorded.
  double ErrorQuantile(double q) const;
  size_t error_count() const { return errors_.size(); }
  // The recorded errors, oldest first.
  const std::vector<double>& errors() const { return errors_; }
  static constexpr double kErrorFloorRps = 0.01;
  static constexpr size_t kMinErrors = 8;

 private:
  void CloseSlotsUntil(TimeMs t);
  // Slot `closed` (absolute index) just closed: its error, if a forecast awaited it.
  void RecordError(int64_t closed);
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

  double slot_peak_ = 0;  // the highest rate seen in the open slot
  // Forecasts awaiting their slot: (absolute slot index, forecast rate), in slot order.
  std::vector<std::pair<int64_t, double>> pending_;
  std::vector<double> errors_;                 // ratios, oldest first, at most error_window
  mutable std::vector<double> sorted_errors_;  // errors_ sorted (ErrorQuantile); empty: stale
};

}  // namespace airtime
