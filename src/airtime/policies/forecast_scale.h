// ForecastScale: replicas for what a service will need by the time a new one is ready.
//
// Every cycle it records each service's demand into its own DemandForecast (history only)
// and sets the replica target from the forecast peak over [now, now + cold start + lead]:
// a replica started now serves from now + cold start, so that is how far ahead the target
// must look -- headroom as a curve over the day, not a peak reservation all day. It also
// declares to the engine (and so to the ledger) the capacity it expects services to need
// within `hold_horizon` beyond their current replicas; BurstHold keeps that free from work
// that could not give it back in time. One instance per engine.
#pragma once

#include <map>
#include <string_view>
#include <vector>

#include "airtime/engine/plugins.h"
#include "airtime/forecast/demand_forecast.h"

namespace airtime {

class ForecastScale : public ScalePlugin, public CyclePlugin {
 public:
  struct Options {
    DurationMs lead = 5 * kMinute;        // beyond the cold start
    DurationMs hold_horizon = 2 * kHour;  // how far ahead headroom is kept free
    // Warm spares: a service keeps ceil(target x spare) replicas more than its target (at
    // least one while it has demand) on GPUs that are free, so that a rise in demand meets
    // ready replicas instead of a cold start. Replicas come first in airtime's order, so
    // these firm spares take free GPUs before waiting work does. Loose spares, up to
    // ceil(target x (spare + spare_loose)) in all, stand aside (are released) as soon as
    // work waits for their GPU type.
    double spare = 0.5;
    double spare_loose = 0;
  };
  explicit ForecastScale(Options o) : o_(o) {}

  std::string_view name() const override { return "forecast-scale"; }
  int TargetReplicas(const Job& service, const Engine& engine) const override;
  void BeforeAllocate(Engine& engine) override;
  void AfterAllocate(Engine& engine) override;

  // Replicas `service` is forecast to need at most over [from, to].
  int PeakReplicas(const Job& service, TimeMs from, TimeMs to) const;
  // GPUs (milli) of each type that services are forecast to need beyond their live replicas
  // over [now, until], spread over the types their shapes allow (first allowed type).
  std::map<GpuTypeId, int64_t> ForecastNeed(const Engine& engine, TimeMs until) const;
  const DemandForecast* forecast(WorkloadId id) const;

 private:
  // Milli-GPU the waiting work could use on `type` (summed once a cycle).
  int64_t WaitingMilli(const Engine& engine, GpuTypeId type) const;
  // The densest waiting work's value per GPU-hour on `type` (0: none waits).
  double WaitingDensity(const Engine& engine, GpuTypeId type) const;

  Options o_;
  std::map<WorkloadId, DemandForecast> forecasts_;
  std::map<WorkloadId, double> last_seen_;
  mutable uint64_t waiting_cycle_ = ~uint64_t{0};
  mutable std::vector<int64_t> waiting_milli_;   // per type; [type count]: any type
  mutable std::vector<double> waiting_density_;  // the same, densest waiting work
};

}  // namespace airtime
