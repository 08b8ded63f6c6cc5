#include "airtime/policies/forecast_scale.h"

#include <algorithm>
#include <cmath>

#include "airtime/engine/engine.h"

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
  return service.s().realtime.ReplicasFor(peak);
}

int ForecastScale::TargetReplicas(const Job& service, const Engine& engine) const {
  const TimeMs now = engine.now();
  const int target = PeakReplicas(service, now, now + service.s().realtime.cold_start + o_.lead);
  if (target == 0 && service.demand_rps <= 0) return target;
  auto count = [&](double fraction) {
    return fraction <= 0 ? 0 : std::max(1, static_cast<int>(std::ceil(target * fraction)));
  };
  const int room = service.s().realtime.max_replicas - target;
  const int firm = std::min(count(o_.spare), room);
  const int loose = std::min(count(o_.spare + o_.spare_loose), room) - firm;
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
    if (WaitingMilli(engine, type) > 0) {
      waiting = true;
      outbid = outbid || WaitingDensity(engine, type) > service.value_density;
    }
    avail += engine.state().free_milli_of_type(type);
  }
  // Firm spares give way only to work that earns more per GPU-hour than the service does at
  // full load; loose ones to any waiting work.
  const int wanted = (outbid ? 0 : firm) + (waiting ? 0 : loose);
  return target + static_cast<int>(std::clamp<int64_t>(avail / unit, 0, wanted));
}

int64_t ForecastScale::WaitingMilli(const Engine& engine, GpuTypeId type) const {
  const size_t types = engine.nodes_of_type().size();
  if (waiting_cycle_ != engine.cycles()) {
    waiting_cycle_ = engine.cycles();
    waiting_milli_.assign(types + 1, 0);
    waiting_density_.assign(types + 1, 0.0);
    for (WorkloadId id : engine.queue()) {
      const Job& j = engine.job(id);
      if (j.never_fits || j.is_service()) continue;
      const Shape& s = j.s().shape;
      const int64_t milli = s.TotalMilli(engine.catalog());
      auto add = [&](size_t k) {
        waiting_milli_[k] += milli;
        waiting_density_[k] = std::max(waiting_density_[k], j.value_density);
      };
      if (s.allowed_types.empty()) {
        add(types);
      } else {
        for (GpuTypeId t : s.allowed_types) add(static_cast<size_t>(t));
      }
    }
  }
  return waiting_milli_[static_cast<size_t>(type)] + waiting_milli_[types];
}

double ForecastScale::WaitingDensity(const Engine& engine, GpuTypeId type) const {
  WaitingMilli(engine, type);  // fills the per-cycle cache
  const size_t types = engine.nodes_of_type().size();
  return std::max(waiting_density_[static_cast<size_t>(type)], waiting_density_[types]);
}

void ForecastScale::BeforeAllocate(Engine& engine) {
  for (WorkloadId id : engine.services()) {
    const Job& j = engine.job(id);
    if (j.phase == JobPhase::kCancelled) continue;
    auto seen = last_seen_.find(j.id);
    if (seen != last_seen_.end() && seen->second == j.demand_rps) continue;
    forecasts_[j.id].Observe(engine.now(), j.demand_rps);
    last_seen_[j.id] = j.demand_rps;
  }
}

std::map<GpuTypeId, int64_t> ForecastScale::ForecastNeed(const Engine& engine, TimeMs until) const {
  std::map<GpuTypeId, int64_t> need;
  for (const auto& [id, f] : forecasts_) {
    const Job& j = engine.job(id);
    if (j.phase == JobPhase::kCancelled) continue;
    const int more = PeakReplicas(j, engine.now(), until) - j.live_replicas();
    if (more <= 0) continue;
    const Shape& shape = j.s().shape;
    GpuTypeId type = shape.allowed_types.empty() ? kNoGpuType : shape.allowed_types.front();
    if (type == kNoGpuType) {
      // Any type: charge the type with the most GPUs installed.
      const auto& per = engine.cluster().gpus_per_type();
      type = static_cast<GpuTypeId>(std::max_element(per.begin(), per.end()) - per.begin());
    }
    need[type] += static_cast<int64_t>(more) * shape.TotalMilli(engine.catalog());
  }
  return need;
}

void ForecastScale::AfterAllocate(Engine& engine) {
  for (const auto& [type, milli] : ForecastNeed(engine, engine.now() + o_.hold_horizon))
    engine.DeclareHeadroom(type, milli);
  // Look again when the next slot begins, so that targets follow the forecast curve.
  // (Only a seasonal forecast moves between demand events.)
  bool seasonal = false;
  for (const auto& [id, f] : forecasts_) seasonal |= f.seasonal();
  if (seasonal) engine.WakeAt((engine.now() / (15 * kMinute) + 1) * (15 * kMinute));
}

}  // namespace airtime
