#include "airtime/forecast/demand_window.h"

#include <algorithm>

namespace airtime {

void DemandWindow::Add(TimeMs at, double rps) {
  if (!entries_.empty() && at - entries_.back().from < resolution_) {
    Entry& e = entries_.back();
    e.last_at = std::max(e.last_at, at);
    e.low = std::min(e.low, rps);
    e.high = std::max(e.high, rps);
    e.last = rps;
    return;
  }
  entries_.push_back(Entry{at, at, rps, rps, rps});
}

void DemandWindow::DropEndedBy(TimeMs t) {
  while (entries_.size() >= 2 && entries_[1].from <= t) entries_.pop_front();
}

std::pair<double, double> DemandWindow::Range(TimeMs now, DurationMs window, double current) const {
  std::pair<double, double> range{current, current};
  const TimeMs start = now - window;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    const TimeMs until = i + 1 < entries_.size() ? entries_[i + 1].from : now;
    // The steps before its last were in force up to last_at at the latest; its last
    // rate until the next entry.
    if (e.last_at > start) {
      range.first = std::min(range.first, e.low);
      range.second = std::max(range.second, e.high);
    } else if (until > start) {
      range.first = std::min(range.first, e.last);
      range.second = std::max(range.second, e.last);
    }
  }
  return range;
}

TimeMs DemandWindow::NextLeave(TimeMs now, DurationMs window, double current) const {
  TimeMs next = kNever;
  auto consider = [&](TimeMs ended) {
    if (ended + window > now) next = std::min(next, ended + window);
  };
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    const bool newest = i + 1 == entries_.size();
    // Rates other than its last one ended by last_at.
    if (e.low != e.last || e.high != e.last) consider(e.last_at);
    if (!newest) {
      consider(entries_[i + 1].from);
    } else if (e.last != current) {
      consider(now);
    }
  }
  return next;
}

}  // namespace airtime
