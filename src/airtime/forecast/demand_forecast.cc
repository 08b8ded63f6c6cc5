#include "airtime/forecast/demand_forecast.h"

#include <algorithm>

namespace airtime {

DemandForecast::DemandForecast() : DemandForecast(Options{}) {}
DemandForecast::DemandForecast(Options options) : o_(options) {}

void DemandForecast::Observe(TimeMs at, double rps) {
  if (start_ < 0) {
    start_ = at;
    first_slot_ = at / o_.slot;
    slot_begin_ = first_slot_ * o_.slot;
    // The part of the first slot before the first observation counts at this rate.
    slot_area_ = 0;
    last_ = slot_begin_;
    rate_ = rps;
  }
  if (at < last_) at = last_;
  CloseSlotsUntil(at);
  slot_area_ += rate_ * static_cast<double>(at - last_);
  last_ = at;
  rate_ = std::max(0.0, rps);
}

void DemandForecast::CloseSlotsUntil(TimeMs t) {
  while (t >= slot_begin_ + o_.slot) {
    const TimeMs end = slot_begin_ + o_.slot;
    slot_area_ += rate_ * static_cast<double>(end - last_);
    slots_.push_back(slot_area_ / static_cast<double>(o_.slot));
    slot_area_ = 0;
    last_ = end;
    slot_begin_ = end;
  }
}

bool DemandForecast::seasonal() const {
  return static_cast<int64_t>(slots_.size()) * o_.slot >= kDay;
}

double DemandForecast::Seasonal(TimeMs t, int64_t n) const {
  const int64_t per_day = kDay / o_.slot, per_week = 7 * per_day;
  const int64_t target = t / o_.slot;
  const int64_t period = n >= per_week ? per_week : (n >= per_day ? per_day : 0);
  if (period == 0) return -1;
  // Same slot of the period, going back from the most recent closed one.
  double sum = 0;
  int count = 0;
  int64_t k = target - first_slot_;
  k -= ((k - (n - 1)) + period - 1) / period * period;  // the latest index <= n-1 in phase
  while (k >= 0 && count < 4) {
    if (k < n) {
      sum += slots_[static_cast<size_t>(k)];
      ++count;
    }
    k -= period;
  }
  return count > 0 ? sum / count : -1;
}

double DemandForecast::Level() const {
  const int64_t window = std::max<int64_t>(1, o_.level_window / o_.slot);
  const int64_t n = static_cast<int64_t>(slots_.size());
  double seen = 0, usual = 0;
  for (int64_t i = std::max<int64_t>(0, n - window); i < n; ++i) {
    // The usual rate of that slot, from the days (weeks) before it.
    const double s = Seasonal((first_slot_ + i) * o_.slot, i);
    if (s < 0) continue;
    seen += slots_[static_cast<size_t>(i)];
    usual += s;
  }
  if (usual <= 1e-9) return 1.0;
  return std::clamp(seen / usual, 0.25, 4.0);
}

double DemandForecast::At(TimeMs t) const {
  if (start_ < 0) return 0;
  if (t <= last_ || !seasonal()) return rate_;
  const double s = Seasonal(t, static_cast<int64_t>(slots_.size()));
  if (s < 0) return rate_;
  return s * Level();
}

double DemandForecast::PeakOver(TimeMs from, TimeMs to) const {
  double peak = std::max(At(from), At(to));
  for (TimeMs t = (from / o_.slot + 1) * o_.slot; t < to; t += o_.slot)
    peak = std::max(peak, At(t));
  return peak;
}

}  // namespace airtime
