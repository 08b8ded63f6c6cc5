#include "airtime/policies/airtime/forecast_scale.h"

#include <algorithm>
#include <cmath>

#include "airtime/engine/engine.h"
#include "airtime/policies/plugins/victims.h"

namespace airtime {

const DemandForecast* ForecastScale::forecast(WorkloadId id) const {
  auto it = forecasts_.find(id);
  return it == forecasts_.end() ? nullptr : &it->second;
}

int ForecastScale::PeakReplicas(const Job& service, TimeMs from, TimeMs to) const {
  const DemandForecast* f = forecast(service.id);
  const double now_rps = service.demand_rps;
  // Before a seasonal forecast exists the current demand is the forecast (the forecaster
  // learns this cycle's demand only after the targets are set).
  const double peak = f && f->seasonal() ? std::max(now_rps, f->PeakOver(from, to)) : now_rps;
  return service.s().realtime.ReplicasFor(std::max(peak, SurgeRps(service, from, to)));
}

double ForecastScale::SurgeRps(const Job& service, TimeMs from, TimeMs to) const {
  if (o_.surge <= 0 || !Surprised(service, from)) return 0;
  // A rise the forecast did not expect goes on: demand that rose over the last span as long
  // as the look-ahead is expected to rise as much again by its end.
  const double now_rps = service.demand_rps;
  const double low = RecentLow(service, from, to - from);
  return now_rps >= o_.surge_ratio * low ? now_rps + o_.surge * (now_rps - low) : 0;
}

ForecastScale::Keep ForecastScale::KeepWindow(const Job& service, const Engine& engine) const {
  Keep k;
  k.waiting_density = WaitingDensityFor(service, engine);
  k.window = o_.keep;
  if (k.waiting_density <= 0) return k;  // kNothingWaits
  const double cold = static_cast<double>(service.s().realtime.cold_start);
  const double rental = cold * (1 + service.value_density / k.waiting_density);
  k.why = Keep::kRental;
  if (rental >= static_cast<double>(o_.keep)) return k;
  // The error budget: requests the service may still miss and meet `slo_target`. Giving up
  // what the full window keeps would, if demand came back to its peak, miss the difference
  // for one cold start.
  const TimeMs now = engine.now();
  const auto short_window = static_cast<DurationMs>(rental);
  // Demand beyond what max_replicas serve is missed however many replicas are kept.
  const double most = Servable(service, RecentPeak(service, now, o_.keep));
  k.at_risk = (most - Servable(service, RecentPeak(service, now, short_window))) * cold / 1000.0;
  k.budget = SpendableBudget(service.id, now);
  if (k.at_risk > k.budget) {
    k.why = Keep::kBudgetSpent;
  } else {
    k.window = short_window;
  }
  return k;
}

double ForecastScale::Servable(const Job& service, double rps) {
  const RealtimeProfile& rt = service.s().realtime;
  return std::min(
      rps, static_cast<double>(std::max(rt.max_replicas, rt.min_replicas)) * rt.capacity_rps);
}

double ForecastScale::ErrorBudget(WorkloadId service, TimeMs now) const {
  return BudgetOver(service, now, o_.slo_target);
}

double ForecastScale::SpendableBudget(WorkloadId service, TimeMs now) const {
  return BudgetOver(service, now, o_.slo_target + o_.slo_reserve * (1 - o_.slo_target));
}

double ForecastScale::BudgetOver(WorkloadId service, TimeMs now, double target) const {
  auto it = served_.find(service);
  // Up to now: the targets are set before BeforeAllocate brings the books up to date.
  return it == served_.end() ? 0 : it->second.Over(now, target);
}

bool ForecastScale::Surprised(const Job& service, TimeMs now) const {
  const DemandForecast* f = forecast(service.id);
  // Without a forecast and a record of its errors, a rise cannot be told from the noise.
  if (f == nullptr || !f->seasonal()) return false;
  const double worst = f->ErrorQuantile(o_.surprise_quantile);
  if (worst < 0) return false;
  return service.demand_rps > std::max(f->Expected(now), DemandForecast::kErrorFloorRps) * worst;
}

std::pair<double, double> ForecastScale::RecentRange(const Job& service, TimeMs now,
                                                     DurationMs window) const {
  auto it = recent_.find(service.id);
  if (it == recent_.end()) return {service.demand_rps, service.demand_rps};
  return it->second.Range(now, window, service.demand_rps);
}

double ForecastScale::RecentLow(const Job& service, TimeMs now, DurationMs window) const {
  return RecentRange(service, now, window).first;
}

double ForecastScale::RecentPeak(const Job& service, TimeMs now, DurationMs window) const {
  return RecentRange(service, now, window).second;
}

DemandForecast& ForecastScale::Start(const Job& service, TimeMs now) const {
  auto fit = forecasts_.find(service.id);
  if (fit != forecasts_.end()) return fit->second;
  // Its errors are measured a cold start and lead ahead: what a replica started now could
  // serve from (PricedExtra).
  DemandForecast::Options fo;
  fo.error_lead = service.s().realtime.cold_start + o_.lead;
  fit = forecasts_.emplace(service.id, DemandForecast(fo)).first;
  // What was seen of it before this engine met it (a daemon's restart): the forecast and
  // the scale-down window go on from there.
  DemandWindow& steps = recent_[service.id];
  for (const DemandPoint& p : service.s().realtime.history) {
    if (p.at >= now) break;
    fit->second.Observe(p.at, p.rps);
    steps.Add(p.at, p.rps);
  }
  return fit->second;
}

int ForecastScale::TargetReplicas(const Job& service, const Engine& engine) const {
  if (service.s().realtime.is_member()) return mix_.Target(service, engine);
  const TimeMs now = engine.now();
  if (!service.s().realtime.history.empty()) Start(service, now);
  const RealtimeProfile& rt = service.s().realtime;
  const DurationMs window = KeepWindow(service, engine).window;
  const int target = std::max(PeakReplicas(service, now, now + rt.cold_start + o_.lead),
                              rt.ReplicasFor(RecentPeak(service, now, window)));
  // Look again when the oldest step still in the window leaves it. (The targets are set
  // before this cycle's demand is recorded: a last step at another rate ended now.)
  if (auto it = recent_.find(service.id); it != recent_.end())
    next_wake_ = std::min(next_wake_, it->second.NextLeave(now, window, service.demand_rps));
  if (target == 0 && service.demand_rps <= 0) return target;
  // Rounded to the nearest replica, halves up: a single replica gets no spare (one would
  // double what the service holds), targets of 2-5 get one at the default 0.25; at least
  // `min_spare`.
  auto count = [&](double fraction) {
    return fraction <= 0
               ? 0
               : std::max(o_.min_spare, static_cast<int>(std::floor(target * fraction + 0.5)));
  };
  const int room = rt.max_replicas - target;
  int firm = std::min(count(o_.spare), room);
  price_notes_.erase(service.id);
  if (o_.priced) {
    if (const Priced p = PricedExtra(service, engine, target, room); p.extra >= 0) {
      // While nothing waits the hold costs nothing and the price cannot bound it: the
      // `spare` count does. SLOs first: while the service is below its SLO target it keeps
      // the spares as well.
      const int priced = p.cost > 0 ? p.extra : std::min(p.extra, firm);
      const double budget = SpendableBudget(service.id, now);
      const Buffer buffer = SloBuffer(service, now, target, room, budget);
      firm = std::max(budget < 0 ? std::max(firm, priced) : priced, buffer.extra);
      price_notes_[service.id] = PriceNote{target, p, priced, budget, buffer};
    }
  }
  const int loose = std::max(0, std::min(count(o_.spare + o_.spare_loose), room) - firm);
  if (firm + loose <= 0) return target;
  // Spares go on GPUs free now or held by its replicas beyond the target; loose ones only
  // while nothing waits for the service's GPU types.
  const Shape& shape = service.s().shape;
  const int64_t unit = shape.TotalMilli(engine.catalog());
  if (unit <= 0) return target;
  int64_t avail = static_cast<int64_t>(std::max(0, service.live_replicas() - target)) * unit;
  bool waiting = false;  // work waits for the service's GPU types
  bool outbid = false;   // and some of it is worth more per GPU-hour than a replica
  for (size_t t = 0; t < engine.nodes_of_type().size(); ++t) {
    const auto type = static_cast<GpuTypeId>(t);
    if (!shape.AllowsType(type)) continue;
    // Spares give way only to work their GPUs (with what is free) would make room for, and
    // not where room was left free while that work waited all the same.
    const int64_t room = engine.state().free_milli_of_type(type) + (firm + loose) * unit;
    if (WaitingMilli(type) > 0 && SmallestWaiting(type) <= room &&
        !WaitsInVain(type, unit, engine.now())) {
      waiting = true;
      outbid = outbid || WaitingDensity(type) > service.value_density;
    }
    avail += engine.state().free_milli_of_type(type);
  }
  // Firm spares give way only to work that earns more per GPU-hour than the service does at
  // full load, whether priced or not; loose ones to any waiting work.
  const int wanted = (outbid ? 0 : firm) + (waiting ? 0 : loose);
  const int granted = static_cast<int>(std::clamp<int64_t>(avail / unit, 0, wanted));
  // SLOs first: buffer replicas no free GPUs could take claim the GPUs that free next (Claim).
  if (auto note = price_notes_.find(service.id); note != price_notes_.end() && !outbid)
    note->second.unplaced = std::max(0, note->second.buffer.extra - granted);
  return target + granted;
}

ForecastScale::Buffer ForecastScale::SloBuffer(const Job& service, TimeMs now, int target, int room,
                                               double budget) const {
  Buffer b;
  if (o_.slo_buffer <= 0) return b;
  const DemandForecast* f = forecast(service.id);
  if (f == nullptr) return b;
  const double err = f->ErrorQuantile(o_.slo_buffer);
  if (err <= 1) return b;
  const RealtimeProfile& rt = service.s().realtime;
  b.rps = Servable(service, ForecastRps(service, now) * err);
  // The requests one cold start at that demand would miss with `target` replicas: while the
  // budget could absorb them, the miss is a risk worth taking.
  b.at_risk =
      std::max(0.0, b.rps - target * rt.capacity_rps) * static_cast<double>(rt.cold_start) / 1000.0;
  if (b.at_risk <= 0 || budget >= b.at_risk) return b;
  b.extra = std::clamp(rt.ReplicasFor(b.rps) - target, 0, room);
  return b;
}

double ForecastScale::ForecastRps(const Job& service, TimeMs now) const {
  const DemandForecast* f = forecast(service.id);
  const DurationMs ahead = service.s().realtime.cold_start + o_.lead;
  return f && f->seasonal() ? std::max(service.demand_rps, f->PeakOver(now, now + ahead))
                            : service.demand_rps;
}

ForecastScale::ReplicaPrice ForecastScale::PriceReplica(const Job& service, const Engine& engine,
                                                        int below) const {
  ReplicaPrice p;
  const RealtimeProfile& rt = service.s().realtime;
  // What the replica's GPUs would earn for the densest waiting work over a slot, less what
  // that work would lose giving them back if the burst came (reclaimed by preemption).
  double loss_h = 0;
  const int64_t replica_milli = service.s().shape.TotalMilli(engine.catalog());
  const double waiting_density = WaitingDensityFor(service, engine, &loss_h, replica_milli);
  const double gpus = static_cast<double>(replica_milli) / 1000.0;
  const double slot_h = ToHours(DemandForecast::Options{}.slot);
  p.cost = gpus * waiting_density * slot_h;
  const DemandForecast* f = forecast(service.id);
  if (f == nullptr || f->error_count() < DemandForecast::kMinErrors) return p;
  p.known = true;
  // The requests the replica would serve if the slot's peak missed the forecast (the demand
  // the target was set for) as the past ones did, each past miss as likely; without it they
  // would wait for a cold start.
  const double forecast_rps = ForecastRps(service, engine.now());
  const double floor_rps = static_cast<double>(below) * rt.capacity_rps;
  const std::vector<double>& errors = f->errors();
  double served = 0, bursts = 0;
  for (double r : errors) {
    served += std::clamp(forecast_rps * r - floor_rps, 0.0, rt.capacity_rps);
    bursts += forecast_rps * r > floor_rps ? 1 : 0;
  }
  served /= static_cast<double>(errors.size());
  p.benefit = served * static_cast<double>(rt.cold_start) / 1000.0 *
              service.s().value.per_1k_requests / 1000.0;
  p.burst_odds = bursts / static_cast<double>(errors.size());
  p.cost = gpus * waiting_density * std::max(0.0, slot_h - p.burst_odds * loss_h);
  return p;
}

ForecastScale::Priced ForecastScale::PricedExtra(const Job& service, const Engine& engine,
                                                 int target, int room) const {
  Priced p;
  const DemandForecast* f = forecast(service.id);
  if (f == nullptr || f->error_count() < DemandForecast::kMinErrors) return p;
  p.extra = 0;
  for (int k = 1; k <= room; ++k) {
    const ReplicaPrice r = PriceReplica(service, engine, target + k - 1);
    p.benefit = r.benefit;
    p.cost = r.cost;
    p.burst_odds = r.burst_odds;
    if (p.benefit <= p.cost || p.benefit <= 0) break;
    p.extra = k;
    p.held_benefit = p.benefit;
    p.held_cost = p.cost;
  }
  return p;
}

std::vector<double> ForecastScale::Routing(const Job& member, const Engine& engine) const {
  return mix_.Routing(member, engine);
}

std::string ForecastScale::WhyTarget(const Job& service, const Engine& engine) const {
  if (service.s().realtime.is_member()) {
    const VariantMix::State* st = mix_.state(service.s().realtime.group);
    return st ? "the mix of '" + service.s().realtime.group + "': " + st->mix + " (" + st->why + ")"
              : "";
  }
  const TimeMs now = engine.now();
  const RealtimeProfile& rt = service.s().realtime;
  const int need = rt.ReplicasFor(service.demand_rps);
  // A buffer replica no free GPUs could take, and the node claimed for it.
  std::string claim;
  if (const SloClaim* c = ClaimOf(service.id)) {
    claim = "a replica the SLO buffer asks for waits for " + std::to_string(c->gpus) +
            " GPUs of one node: other work keeps off what frees of " +
            engine.cluster().node(c->node).name + " until the replica fits there (" +
            std::to_string(engine.state().node(c->node).free_whole) + " free now, all " +
            std::to_string(c->gpus) + " expected by " + FormatTime(c->at) + ")";
  }
  if (service.target_replicas <= need) return claim;
  const Keep k = KeepWindow(service, engine);
  const double kept_rps = RecentPeak(service, now, k.window);
  const int kept = rt.ReplicasFor(kept_rps);
  char buf[320];
  std::string out;
  const double surge = SurgeRps(service, now, now + rt.cold_start + o_.lead);
  const int forecast = PeakReplicas(service, now, now + rt.cold_start + o_.lead);
  if (forecast > need && forecast >= kept && rt.ReplicasFor(surge) == forecast) {
    std::snprintf(buf, sizeof buf,
                  "%d for %.1f req/s: demand rose from %.1f req/s within a cold start + lead, "
                  "beyond what its forecast allows for, and is expected to rise as much again",
                  forecast, surge, RecentLow(service, now, rt.cold_start + o_.lead));
    out = buf;
  } else if (forecast > need && forecast >= kept) {
    std::snprintf(buf, sizeof buf, "%d for the forecast peak within cold start + lead", forecast);
    out = buf;
  } else if (kept > need) {
    std::snprintf(buf, sizeof buf, "%d kept for the %.1f req/s of the last %s", kept, kept_rps,
                  FormatDuration(k.window).c_str());
    out = buf;
    switch (k.why) {
      case Keep::kNothingWaits:
        out += " (nothing waits for its GPUs)";
        break;
      case Keep::kRental:
        std::snprintf(buf, sizeof buf,
                      " (a replica given back would cost a cold start of %s plus its lost "
                      "requests; the waiting work earns %.2f per GPU-hour)",
                      FormatDuration(rt.cold_start).c_str(), k.waiting_density);
        out += buf;
        break;
      case Keep::kBudgetSpent:
        if (const double left = ErrorBudget(service.id, engine.now()); left < 0) {
          std::snprintf(buf, sizeof buf,
                        " (SLO first: %.0f requests short of the %.2f%% target so far)", -left,
                        100 * o_.slo_target);
        } else {
          std::snprintf(buf, sizeof buf,
                        " (SLO first: the error budget of the %.2f%% target has %.0f requests "
                        "left, %.0f of them to risk; a cold start at that peak could miss %.0f)",
                        100 * o_.slo_target, left, std::max(0.0, k.budget), k.at_risk);
        }
        out += buf;
        break;
    }
  }
  const int base = std::max({need, forecast, kept});
  if (service.target_replicas > base) {
    const int extra = service.target_replicas - base;
    // The figures TargetReplicas set the target with (price_notes_), not prices of now.
    auto note = price_notes_.find(service.id);
    if (note != price_notes_.end()) {
      // The replicas the price held, then those kept beyond it (SLOs first; or the spare
      // count while nothing waits or loose spares), each with the figures that decided it.
      const Priced& p = note->second.priced;
      const int lifted = std::max(0, base - note->second.base);  // by the window or forecast
      const int by_price = std::clamp(note->second.by_price - lifted, 0, extra);
      const Buffer& buffer = note->second.buffer;
      const int by_buffer = std::clamp(buffer.extra - lifted - by_price, 0, extra - by_price);
      buf[0] = '\0';
      if (by_price > 0) {
        std::snprintf(buf, sizeof buf,
                      "%s%d warm replica(s) held for a burst beyond the forecast: the last one "
                      "is expected to serve %.2f of value within a cold start, more than the "
                      "%.2f its GPUs would earn for waiting work over 15 minutes (less what "
                      "that work would lose giving them back)",
                      out.empty() ? "" : "; ", by_price, p.held_benefit, p.held_cost);
        out += buf;
        buf[0] = '\0';
      }
      if (by_buffer > 0) {
        std::snprintf(buf, sizeof buf,
                      "%s%d replica(s) held for the SLO: at %.1f req/s (the forecast times the "
                      "%.0fth percentile of its past errors) one cold start could miss %.0f "
                      "requests, more than the %.0f the error budget may still risk",
                      out.empty() ? "" : "; ", by_buffer, buffer.rps, 100 * o_.slo_buffer,
                      buffer.at_risk, std::max(0.0, note->second.budget));
        out += buf;
        buf[0] = '\0';
      }
      if (extra > by_price + by_buffer) {
        std::string why;
        if (note->second.budget < 0) {
          std::snprintf(buf, sizeof buf,
                        "SLO first: it has no error budget left to risk (%.0f requests below "
                        "the %.2f%% target with the reserve kept for misses nobody chose)",
                        -note->second.budget, 100 * o_.slo_target);
          why = buf;
        } else {
          why = "the spare count (`spare`, `spare_loose`)";
        }
        std::snprintf(buf, sizeof buf,
                      "%s%d warm spare(s) kept though the next one was expected to serve %.2f "
                      "of value within a cold start against the %.2f its GPUs would earn for "
                      "waiting work: ",
                      out.empty() ? "" : "; ", extra - by_price - by_buffer, p.benefit, p.cost);
        out += buf + why;
        buf[0] = '\0';
      }
    } else {
      std::snprintf(buf, sizeof buf, "%s%d warm spare(s) on free GPUs", out.empty() ? "" : "; ",
                    extra);
    }
    out += buf;
  }
  if (!claim.empty()) out += (out.empty() ? "" : "; ") + claim;
  return out;
}

void ForecastScale::RecordWaiting(const Engine& engine) {
  waiting_milli_.clear();
  waiting_density_.clear();
  smallest_waiting_.clear();
  if (engine.services().empty()) return;  // no one to ask
  const size_t types = engine.nodes_of_type().size();
  waiting_milli_.assign(types + 1, 0);
  waiting_density_.assign((types + 1) * kSizeClasses, 0.0);
  waiting_loss_h_.assign((types + 1) * kSizeClasses, 0.0);
  free_after_pass_.assign(types, 0);
  for (size_t t = 0; t < types; ++t)
    free_after_pass_[t] = engine.state().free_milli_of_type(static_cast<GpuTypeId>(t));
  idle_while_waiting_.resize(types);
  smallest_waiting_.assign(types + 1, kNoneWaiting);
  for (WorkloadId id : engine.queue()) {
    const Job& j = engine.job(id);
    if (j.never_fits || j.is_service()) continue;
    const Shape& s = j.s().shape;
    const int64_t milli = s.TotalMilli(engine.catalog());
    // What giving the GPUs back would cost it, in hours of its work: the work since its last
    // checkpoint (half an interval on average; all of it without checkpoints, at most a
    // forecast slot) and its restart.
    const WorkloadSpec& spec = j.s();
    const double since_checkpoint_h = spec.checkpoint_interval > 0
                                          ? ToHours(spec.checkpoint_interval) / 2
                                          : ToHours(DemandForecast::Options{}.slot);
    const double loss_h = since_checkpoint_h + ToHours(spec.restart_cost);
    const size_t size_class = SizeClass(milli);
    auto add = [&](size_t k) {
      waiting_milli_[k] += milli;
      smallest_waiting_[k] = std::min(smallest_waiting_[k], milli);
      const size_t c = k * kSizeClasses + size_class;
      if (j.value_density > waiting_density_[c]) {
        waiting_density_[c] = j.value_density;
        waiting_loss_h_[c] = loss_h;
      }
    };
    if (s.allowed_types.empty()) {
      add(types);
    } else {
      for (GpuTypeId t : s.allowed_types) add(static_cast<size_t>(t));
    }
  }
  // The most of each type a pass left free while work that needs no more than that waited for
  // it (for a place, a permit), within `keep`.
  const TimeMs now = engine.now();
  for (size_t t = 0; t < types; ++t) {
    const int64_t smallest = SmallestWaiting(static_cast<GpuTypeId>(t));
    if (smallest == kNoneWaiting || free_after_pass_[t] < smallest) continue;
    IdleWhileWaiting& rec = idle_while_waiting_[t];
    if (rec.at == kNever || now - rec.at >= o_.keep || free_after_pass_[t] >= rec.milli)
      rec = {now, free_after_pass_[t]};
  }
}

int64_t ForecastScale::SmallestWaiting(GpuTypeId type) const {
  const auto t = static_cast<size_t>(type);
  if (t + 1 >= smallest_waiting_.size()) return kNoneWaiting;
  return std::min(smallest_waiting_[t], smallest_waiting_.back());
}

bool ForecastScale::WaitsInVain(GpuTypeId type, int64_t unit, TimeMs now) const {
  const auto t = static_cast<size_t>(type);
  if (t >= idle_while_waiting_.size()) return false;
  const IdleWhileWaiting& rec = idle_while_waiting_[t];
  return rec.at != kNever && now - rec.at < o_.keep && rec.milli >= unit;
}

int64_t ForecastScale::WaitingMilli(GpuTypeId type) const {
  if (waiting_milli_.empty()) return 0;  // before the first allocation pass
  return waiting_milli_[static_cast<size_t>(type)] + waiting_milli_.back();
}

size_t ForecastScale::SizeClass(int64_t milli) {
  size_t c = 0;
  while (c + 1 < kSizeClasses && milli > (int64_t{1000} << c)) ++c;
  return c;
}

double ForecastScale::WaitingDensityFor(const Job& service, const Engine& engine, double* loss_h,
                                        int64_t fits_milli) const {
  double density = 0;
  if (loss_h) *loss_h = 0;
  if (waiting_density_.empty()) return 0;
  // Work no larger than `fits_milli` (by size class) could take the GPUs; none would, though,
  // where the pass left that much of the service's types free and the work waited all the
  // same (for a shape, a place, a permit): the GPUs held would have stayed idle too.
  const size_t fits = fits_milli > 0 ? SizeClass(fits_milli) : kSizeClasses - 1;
  if (fits_milli > 0) {
    int64_t free = 0;
    for (size_t t = 0; t < free_after_pass_.size(); ++t)
      if (service.s().shape.AllowsType(static_cast<GpuTypeId>(t))) free += free_after_pass_[t];
    if (free >= fits_milli) return 0;
  }
  auto consider = [&](size_t k) {
    for (size_t c = 0; c <= fits; ++c) {
      const size_t i = k * kSizeClasses + c;
      if (waiting_density_[i] > density) {
        density = waiting_density_[i];
        if (loss_h) *loss_h = waiting_loss_h_[i];
      }
    }
  };
  const size_t types = engine.nodes_of_type().size();
  consider(types);  // work that takes any type
  for (size_t t = 0; t < types; ++t)
    if (service.s().shape.AllowsType(static_cast<GpuTypeId>(t))) consider(t);
  return density;
}

double ForecastScale::WaitingDensity(GpuTypeId type) const {
  if (waiting_density_.empty()) return 0;
  double density = 0;
  const size_t any = waiting_density_.size() / kSizeClasses - 1;
  for (size_t k : {static_cast<size_t>(type), any})
    for (size_t c = 0; c < kSizeClasses; ++c)
      density = std::max(density, waiting_density_[k * kSizeClasses + c]);
  return density;
}

void ForecastScale::BeforeAllocate(Engine& engine) {
  engine.cycle_state().Publish<HeadroomView>(this);
  Claim(engine);
  const TimeMs now = engine.now();
  for (WorkloadId id : engine.services()) {
    const Job& j = engine.job(id);
    // A member of a service with variants follows its service's plan (VariantMix).
    if (j.phase == JobPhase::kCancelled || j.s().realtime.is_member()) continue;
    // Requests since the last cycle, against the replicas that were ready then (a replica
    // that became ready in between counts from this cycle on).
    SloBooks& sv = served_[j.id];
    sv.Advance(now);
    int ready = 0;
    for (AllocationId a : j.allocations) ready += engine.allocation(a)->ready_at <= now ? 1 : 0;
    // The error budget counts what the service could serve at all: requests beyond what
    // max_replicas serve are missed whatever the policy keeps, and would hold the budget
    // spent for good.
    sv.demand_rps = Servable(j, j.demand_rps);
    sv.served_rps = std::min(sv.demand_rps, ready * j.s().realtime.capacity_rps);
    auto seen = last_seen_.find(j.id);
    if (seen != last_seen_.end() && seen->second == j.demand_rps) continue;
    Start(j, engine.now()).Observe(engine.now(), j.demand_rps);
    last_seen_[j.id] = j.demand_rps;
    DemandWindow& steps = recent_[j.id];
    steps.Add(engine.now(), j.demand_rps);
    steps.DropEndedBy(engine.now() - o_.keep);
  }
}

void ForecastScale::Claim(const Engine& engine) {
  claims_.clear();
  gpu_free_.clear();
  for (const auto& [id, note] : price_notes_) {
    if (note.unplaced <= 0) continue;
    const Job& j = engine.job(id);
    const Shape& shape = j.s().shape;
    // A replica on one GPU takes the first that frees (replicas go first), and one that may
    // spread takes what frees anywhere: only one that needs several GPUs together can lose
    // each of them, as it frees, to smaller work.
    if (j.phase == JobPhase::kCancelled || shape.mode != ShareMode::kWhole || shape.gpu_count < 2 ||
        shape.locality == Locality::kAny)
      continue;
    // GPUs a claim gathers earn nothing until the replica starts: only for a service already
    // below its SLO target (while the buffer guards a budget not yet spent, free GPUs do).
    if (!BelowSlo(j, engine)) continue;
    if (gpu_free_.empty()) ExpectedGpuFree(engine, &gpu_free_);
    SloClaim best{id, 0, shape.gpu_count, kNever};
    int best_free = -1;
    for (size_t n = 0; n < engine.cluster().node_count(); ++n) {
      const auto node = static_cast<NodeIndex>(n);
      if (engine.cluster().node(node).gpu_count < shape.gpu_count ||
          !NodeCouldHost(engine, shape, node))
        continue;
      const TimeMs at = NodeFreesFor(engine, gpu_free_, node, shape.gpu_count, &scratch_);
      if (at == kNever) continue;
      const int free = engine.state().node(node).free_whole;
      if (best.at == kNever || free > best_free || (free == best_free && at < best.at)) {
        best.node = node;
        best.at = at;
        best_free = free;
      }
    }
    if (best.at != kNever) claims_.push_back(best);
  }
}

const HeadroomView::SloClaim* ForecastScale::ClaimOf(WorkloadId service) const {
  for (const SloClaim& c : claims_)
    if (c.service == service) return &c;
  return nullptr;
}

std::map<GpuTypeId, int64_t> ForecastScale::ForecastNeed(const Engine& engine, TimeMs until) const {
  std::map<GpuTypeId, int64_t> need;
  for (const auto& [id, f] : forecasts_) {
    const Job& j = engine.job(id);
    if (j.phase == JobPhase::kCancelled) continue;
    const double more = ExpectedReplicas(j, f, engine.now(), until) - j.live_replicas();
    if (more <= 0) continue;
    need[ChargedType(j, engine)] += static_cast<int64_t>(
        std::ceil(more * static_cast<double>(j.s().shape.TotalMilli(engine.catalog())) - 1e-6));
  }
  return need;
}

double ForecastScale::ExpectedReplicas(const Job& service, const DemandForecast& f, TimeMs now,
                                       TimeMs until) const {
  int peak = PeakReplicas(service, now, until);
  if (o_.hold_quantile > 0 && f.seasonal()) {
    // The forecast errs: hold for its errors' quantile beyond the forecast peak.
    const double err = f.ErrorQuantile(o_.hold_quantile);
    if (err > 1)
      peak = std::max(peak, service.s().realtime.ReplicasFor(f.PeakOver(now, until) * err));
  }
  // Before a service has a seasonal forecast its daily peak is unknown; work that would
  // hold GPUs for a share of a day meets that peak with about that share's odds. What the
  // service declared it may grow to (max_replicas) stands in for the peak, weighted so:
  // the expected replicas, fractions of a replica's GPUs included.
  const RealtimeProfile& rt = service.s().realtime;
  double expected = peak;
  if (o_.envelope && !f.seasonal() && rt.max_replicas < kUnboundedReplicas &&
      rt.max_replicas > peak) {
    const double odds = std::min(1.0, static_cast<double>(until - now) / static_cast<double>(kDay));
    expected += odds * (rt.max_replicas - peak);
  }
  return expected;
}

GpuTypeId ForecastScale::ChargedType(const Job& service, const Engine& engine) {
  const Shape& shape = service.s().shape;
  if (!shape.allowed_types.empty() && shape.allowed_types.front() != kNoGpuType)
    return shape.allowed_types.front();
  // Any type: charge the type with the most GPUs installed.
  const auto& per = engine.cluster().gpus_per_type();
  return static_cast<GpuTypeId>(std::max_element(per.begin(), per.end()) - per.begin());
}

bool ForecastScale::Hosts(const Job& service, NodeIndex n, const Engine& engine) {
  const Node& node = engine.cluster().node(n);
  const Shape& shape = service.s().shape;
  return shape.AllowsType(node.gpu_type) && (shape.mode != ShareMode::kMig || node.mig_enabled);
}

bool ForecastScale::ServiceHome(NodeIndex n, const Engine& engine) const {
  if (homes_cycle_ != engine.cycles()) {
    homes_cycle_ = engine.cycles();
    homes_.assign(engine.cluster().node_count(), false);
    for (const auto& [id, f] : forecasts_) {
      const Job& j = engine.job(id);
      if (j.phase == JobPhase::kCancelled) continue;
      const auto& nodes = engine.nodes_of_type()[static_cast<size_t>(ChargedType(j, engine))];
      const bool restricted = std::any_of(nodes.begin(), nodes.end(),
                                          [&](NodeIndex m) { return !Hosts(j, m, engine); });
      if (!restricted) continue;
      for (NodeIndex m : nodes)
        if (Hosts(j, m, engine)) homes_[static_cast<size_t>(m)] = true;
    }
  }
  return homes_[static_cast<size_t>(n)];
}

HeadroomView::Shortfall ForecastScale::ShortOnItsNodes(const Engine& engine,
                                                       const Placement& placement,
                                                       TimeMs until) const {
  if (placement.gpus.empty()) return {};
  const NodeIndex at = engine.cluster().gpu(placement.gpus.front()).node;
  for (const auto& [id, f] : forecasts_) {
    const Job& j = engine.job(id);
    if (j.phase == JobPhase::kCancelled || !Hosts(j, at, engine)) continue;
    const GpuTypeId type = engine.cluster().node(at).gpu_type;
    // Only where the service cannot use every node of the type does this differ from
    // ForecastNeed's count per type.
    int64_t usable = 0;
    bool restricted = false;
    for (NodeIndex n : engine.nodes_of_type()[static_cast<size_t>(type)]) {
      if (!Hosts(j, n, engine)) {
        restricted = true;
      } else if (engine.state().node(n).up) {
        usable += engine.state().node(n).free_milli;
      }
    }
    if (!restricted) continue;
    const double more = ExpectedReplicas(j, f, engine.now(), until) - j.live_replicas();
    if (more <= 0) continue;
    const auto need = static_cast<int64_t>(
        std::ceil(more * static_cast<double>(j.s().shape.TotalMilli(engine.catalog())) - 1e-6));
    const int64_t free_after = usable - placement.total_milli();
    if (free_after >= need) continue;
    return {&j, need, std::min(need - free_after, placement.total_milli())};
  }
  return {};
}

const Job* ForecastScale::SloAtRisk(const Engine& engine, GpuTypeId type, int64_t short_milli,
                                    TimeMs until) const {
  const TimeMs now = engine.now();
  for (const auto& [id, f] : forecasts_) {
    const Job& j = engine.job(id);
    if (j.phase == JobPhase::kCancelled || ChargedType(j, engine) != type) continue;
    const RealtimeProfile& rt = j.s().realtime;
    const int64_t unit = j.s().shape.TotalMilli(engine.catalog());
    if (unit <= 0 || rt.capacity_rps <= 0) continue;
    const int short_replicas = static_cast<int>((short_milli + unit - 1) / unit);
    // The demand the shortfall is measured against: the forecast, slot by slot (as PeakOver
    // samples it); before a seasonal forecast, the replicas ForecastNeed expects (the
    // envelope's, where on) all along.
    const double expected = ExpectedReplicas(j, f, now, until);
    const double held = std::max(0.0, expected - short_replicas) * rt.capacity_rps;
    const DurationMs slot = 15 * kMinute;
    double missed = 0, requests = 0;
    for (TimeMs t = now; t < until; t += slot) {
      const double seconds = static_cast<double>(std::min(slot, until - t)) / 1000.0;
      const double rps = Servable(j, f.seasonal() ? f.At(t) : expected * rt.capacity_rps);
      requests += rps * seconds;
      missed += std::max(0.0, rps - held) * seconds;
    }
    const double allowance = (1 - o_.slo_target) * (1 - o_.slo_reserve) * requests;
    if (missed > SpendableBudget(id, now) + allowance) return &j;
  }
  return nullptr;
}

void ForecastScale::RecordHolds(Engine& engine) {
  for (WorkloadId id : engine.services()) {
    const Job& j = engine.job(id);
    if (j.phase == JobPhase::kCancelled || j.s().realtime.is_member()) continue;
    const RealtimeProfile& rt = j.s().realtime;
    Call call;
    call.needed = rt.ReplicasFor(j.demand_rps);
    call.held = std::max(0, j.target_replicas - call.needed);
    // A new call when the replicas kept change, or a priced hand-off begins while none are
    // held; demand rising into the held replicas is the burst the call is scored on, not a
    // new call, and a hand-off stands until what is kept changes. Only then is the next
    // replica priced (every cycle, for every service, otherwise).
    Call& last = calls_[id];
    const bool same = j.target_replicas == last.target;
    if (same && (call.held > 0 || last.declined)) continue;
    // The replica after those: a hand-off when it would serve something in a burst, and
    // waiting work would take its GPUs instead.
    const ReplicaPrice next = call.needed + call.held < rt.max_replicas
                                  ? PriceReplica(j, engine, call.needed + call.held)
                                  : ReplicaPrice{};
    call.declined = next.known && next.benefit > 0 && next.cost > 0;
    if (same && !call.declined) continue;
    call.target = j.target_replicas;
    const bool record = call.held > 0 || call.declined || last.held > 0;
    last = call;
    if (!record) continue;
    HoldDecision d;
    d.at = engine.now();
    d.service = id;
    d.name = j.s().name;
    d.demand_rps = j.demand_rps;
    d.forecast_rps = ForecastRps(j, engine.now());
    if (const DemandForecast* f = forecast(id); f && f->error_count() >= DemandForecast::kMinErrors)
      d.error_p90 = f->ErrorQuantile(0.9);
    d.needed = call.needed;
    d.held = call.held;
    const ReplicaPrice marginal =
        call.held > 0 ? PriceReplica(j, engine, call.needed + call.held - 1) : next;
    d.hold_value = marginal.benefit;
    d.handoff_value = marginal.cost;
    d.capacity_rps = rt.capacity_rps;
    d.per_request = j.s().value.per_1k_requests / 1000.0;
    d.cold_start = rt.cold_start;
    d.replica_gpus = static_cast<double>(j.s().shape.TotalMilli(engine.catalog())) / 1000.0;
    d.waiting_density = WaitingDensityFor(
        j, engine, nullptr, std::max(1, call.held) * j.s().shape.TotalMilli(engine.catalog()));
    if (call.held > 0) {
      d.why = WhyTarget(j, engine);
    } else if (call.declined) {
      char buf[240];
      std::snprintf(buf, sizeof buf,
                    "handed off: one more warm replica is expected to serve %.2f of value within "
                    "a cold start, no more than the %.2f its GPUs earn for waiting work over 15 "
                    "minutes",
                    next.benefit, next.cost);
      d.why = buf;
    } else {
      d.why = "released: the current demand needs every replica kept";
    }
    engine.RecordHold(std::move(d));
  }
  mix_.RecordHolds(engine);  // the services with variants
}

void ForecastScale::AfterAllocate(Engine& engine) {
  // Work that arrived and found a place never counts as waiting; what still waits now does,
  // from the next cycle on. If that lowers a service's target (a spare gives way, a shorter
  // window), look again at once, so that the work does not wait for the next event.
  RecordWaiting(engine);
  RecordHolds(engine);
  for (WorkloadId id : engine.services()) {
    const Job& j = engine.job(id);
    if (j.phase != JobPhase::kCancelled && TargetReplicas(j, engine) < j.target_replicas) {
      engine.WakeAt(engine.now() + 1);
      break;
    }
  }
  // A service with variants planned its mix against the waiting work before this pass.
  if (mix_.Stale(engine)) engine.WakeAt(engine.now() + 1);
  // ... and a switch whose new replicas found no room goes on after `lead` without an event.
  if (const TimeMs look = mix_.NextLook(engine); look != kNever) engine.WakeAt(look);
  // (The engine sets the targets before BeforeAllocate: next_wake_ holds this cycle's.)
  if (next_wake_ != kNever) engine.WakeAt(next_wake_);
  next_wake_ = kNever;
  for (const auto& [type, milli] : ForecastNeed(engine, engine.now() + o_.hold_horizon))
    engine.DeclareHeadroom(type, milli);
  // Look again when the next slot begins, so that targets follow the forecast curve.
  // (Only a seasonal forecast moves between demand events.)
  bool seasonal = false;
  for (const auto& [id, f] : forecasts_) seasonal |= f.seasonal();
  if (seasonal) engine.WakeAt((engine.now() / (15 * kMinute) + 1) * (15 * kMinute));
}

}  // namespace airtime
