// DemandWindow: the rates one service (or one request class of it) had over its recent
// past, for a scale-down window: the highest and lowest rate in force over the last W.
//
// The demand is a step function: rate r from time t on, until the next step. Steps that
// begin within `resolution` of the one that opened the newest entry join that entry, so a
// window holds at most one entry per `resolution` however often the rate changes (a tenant
// reporting in a loop cannot grow it, or the time to read it, with each report). A joined
// entry remembers its lowest and highest rate, in force from its first step to its last
// one, and the last rate, in force from then until the next entry: a rate is counted at
// most `resolution` longer than it lasted, and the rate in force now exactly as long as it
// has been. A resolution of 0 keeps every step apart.
// Pure value type; not thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <utility>

#include "airtime/base/time.h"

namespace airtime {

class DemandWindow {
 public:
  static constexpr DurationMs kDefaultResolution = 10 * kSecond;

  explicit DemandWindow(DurationMs resolution = kDefaultResolution) : resolution_(resolution) {}

  // The rate became `rps` at `at` (no earlier than the last step).
  void Add(TimeMs at, double rps);
  // Forgets what ended at or before `t` (the entry in force at `t` stays).
  void DropEndedBy(TimeMs t);
  // The lowest and highest of `current` and the rates in force over (now - window, now].
  std::pair<double, double> Range(TimeMs now, DurationMs window, double current) const;
  // When the next rate other than `current` leaves (now - window, now] (the newest entry's
  // last rate, if it is `current`, is still in force and never leaves); kNever if none will.
  TimeMs NextLeave(TimeMs now, DurationMs window, double current) const;

  bool empty() const { return entries_.empty(); }
  // The rate of the newest step (0 when empty).
  double last() const { return entries_.empty() ? 0 : entries_.back().last; }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    TimeMs from = 0;     // its first step
    TimeMs last_at = 0;  // its last step
    double low = 0;      // over its steps, the last one included
    double high = 0;
    double last = 0;  // the rate from last_at until the next entry (or now)
  };
  DurationMs resolution_;
  std::deque<Entry> entries_;
};

}  // namespace airtime
