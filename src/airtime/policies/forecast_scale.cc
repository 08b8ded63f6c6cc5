#include "airtime/policies/forecast_scale.h"

#include <algorithm>

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
  return PeakReplicas(service, now, now + service.s().realtime.cold_start + o_.lead);
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
