#include "airtime/sim/timeline.h"

#include <algorithm>

namespace airtime {

Timeline::Timeline(size_t max_points, DurationMs first_step)
    : max_points_(std::max<size_t>(max_points, 2)), step_(std::max<DurationMs>(first_step, 1)) {}

void Timeline::Add(TimeMs from, TimeMs to, int64_t held_milli, int64_t installed_milli,
                   int64_t waiting) {
  TimeMs t = std::max<TimeMs>(from, 0);  // the replay's clock starts at 0
  while (t < to) {
    while (static_cast<size_t>(t / step_) >= max_points_) Coarsen();
    const auto index = static_cast<size_t>(t / step_);
    if (bins_.size() <= index) bins_.resize(index + 1);
    // The bin's end, unless it is past any time (a hostile store's timestamps): then `to`.
    const auto next = static_cast<TimeMs>(index + 1);
    const TimeMs end = next > kNever / step_ ? to : std::min<TimeMs>(to, next * step_);
    const int64_t dt = end - t;
    Bin& b = bins_[index];
    b.held += held_milli * dt;
    b.installed += installed_milli * dt;
    b.waiting += waiting * dt;
    b.covered += dt;
    t = end;
  }
}

void Timeline::Coarsen() {
  std::vector<Bin> merged((bins_.size() + 1) / 2);
  for (size_t i = 0; i < bins_.size(); ++i) {
    Bin& m = merged[i / 2];
    m.held += bins_[i].held;
    m.installed += bins_[i].installed;
    m.waiting += bins_[i].waiting;
    m.covered += bins_[i].covered;
  }
  bins_ = std::move(merged);
  step_ *= 2;
}

std::vector<TimelinePoint> Timeline::Points() const {
  std::vector<TimelinePoint> out;
  out.reserve(bins_.size());
  for (size_t i = 0; i < bins_.size(); ++i) {
    const Bin& b = bins_[i];
    if (b.covered == 0) continue;
    TimelinePoint p;
    p.start = static_cast<TimeMs>(i) * step_;
    p.covered = b.covered;
    p.allocation =
        b.installed > 0 ? static_cast<double>(b.held) / static_cast<double>(b.installed) : 0;
    p.waiting = static_cast<double>(b.waiting) / static_cast<double>(b.covered);
    out.push_back(p);
  }
  return out;
}

}  // namespace airtime
