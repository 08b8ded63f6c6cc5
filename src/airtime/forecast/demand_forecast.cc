#include "airtime/forecast/demand_forecast.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

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
    slot_peak_ = std::max(0.0, rps);
  }
  if (at < last_) at = last_;
  CloseSlotsUntil(at);
  slot_area_ += rate_ * static_cast<double>(at - last_);
  last_ = at;
  rate_ = std::max(0.0, rps);
  slot_peak_ = std::max(slot_peak_, rate_);
}

void DemandForecast::CloseSlotsUntil(TimeMs t) {
  while (t >= slot_begin_ + o_.slot) {
    const TimeMs end = slot_begin_ + o_.slot;
    slot_area_ += rate_ * static_cast<double>(end - last_);
    slots_.push_back(slot_area_ / static_cast<double>(o_.slot));
    slot_area_ = 0;
    last_ = end;
    slot_begin_ = end;
    RecordError(end / o_.slot - 1);
    slot_peak_ = rate_;  // the rate carried into the new slot
    // A decision made now relies on the rate error_lead ahead: forecast that slot's rate
    // from what is known now, to compare once it has closed.
    const TimeMs ahead = end + std::max<DurationMs>(0, o_.error_lead);
    const int64_t slot = ahead / o_.slot;
    if (pending_.empty() || pending_.back().first < slot) pending_.emplace_back(slot, At(ahead));
  }
}

void DemandForecast::RecordError(int64_t closed) {
  // Forecasts for slots that closed without one recorded are dropped.
  size_t used = 0;
  while (used < pending_.size() && pending_[used].first < closed) ++used;
  if (used < pending_.size() && pending_[used].first == closed) {
    errors_.push_back(slot_peak_ / std::max(pending_[used].second, kErrorFloorRps));
    sorted_errors_.clear();  // sorted again when next asked
    if (errors_.size() > o_.error_window)
      errors_.erase(errors_.begin(), errors_.begin() + static_cast<std::ptrdiff_t>(
                                                           errors_.size() - o_.error_window));
    ++used;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(used));
}

double DemandForecast::ErrorQuantile(double q) const {
  if (errors_.size() < kMinErrors) return -1;
  // Asked many times a cycle (every job a hold is priced for); the errors change once a slot.
  if (sorted_errors_.empty()) {
    sorted_errors_ = errors_;
    std::sort(sorted_errors_.begin(), sorted_errors_.end());
  }
  const std::vector<double>& sorted = sorted_errors_;
  // The nearest-rank quantile: the smallest recorded error that at least q of them reach.
  const double rank = std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size()));
  const size_t i = static_cast<size_t>(std::max(1.0, rank)) - 1;
  return sorted[std::min(i, sorted.size() - 1)];
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
  return t <= last_ ? rate_ : Expected(t);
}

double DemandForecast::Expected(TimeMs t) const {
  if (start_ < 0) return 0;
  if (!seasonal()) return rate_;
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
