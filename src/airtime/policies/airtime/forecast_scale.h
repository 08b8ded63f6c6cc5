// ForecastScale: replicas for what a service will need by the time a new one is ready.
//
// Every cycle it records each service's demand into its own DemandForecast (history only)
// and sets the replica target from the forecast peak over [now, now + cold start + lead]:
// a replica started now serves from now + cold start, so that is how far ahead the target
// must look -- headroom as a curve over the day, not a peak reservation all day. It also
// declares to the engine (and so to the ledger) the capacity it expects services to need
// within `hold_horizon` beyond their current replicas; BurstHold keeps that free from work
// that could not give it back in time. Scaling down waits: the target never falls below
// what the highest demand of the last `keep` needs (a scale-down stabilisation window, as
// Kubernetes' HPA has), so a brief lull does not hand back replicas that the next rise
// needs again after a cold start. One instance per engine.
#pragma once

#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "airtime/engine/plugins.h"
#include "airtime/forecast/demand_forecast.h"
#include "airtime/forecast/demand_window.h"
#include "airtime/policies/airtime/cycle_views.h"
#include "airtime/policies/airtime/slo_books.h"
#include "airtime/policies/airtime/variant_mix.h"

namespace airtime {

class ForecastScale : public ScalePlugin, public CyclePlugin, public HeadroomView {
 public:
  struct Options {
    DurationMs lead = 5 * kMinute;        // beyond the cold start
    DurationMs hold_horizon = 2 * kHour;  // how far ahead headroom is kept free
    // Warm spares (opt-in; the airtime policy sets 0.25 under preemption=off): a service
    // keeps round(target x spare) replicas more than its target (halves up) on GPUs that
    // are free, so that a rise in demand meets ready replicas instead of a cold start. By
    // default SLOs are kept by `slo_buffer` instead. Replicas come first in
    // airtime's order, so these firm spares take free GPUs before waiting work does. Loose
    // spares, up to round(target x (spare + spare_loose)) in all, stand aside (are
    // released) as soon as work waits for their GPU type. Waiting work, here and for `keep`
    // below, is what the last allocation pass left waiting (RecordWaiting).
    double spare = 0;
    double spare_loose = 0;
    // The fewest spares a service with demand keeps (when `spare` > 0). The airtime policy
    // sets 1 under preemption=off: a replica cannot then take GPUs back from running work,
    // so a spare is the only capacity a rise in demand can have within a cold start.
    int min_spare = 0;
    // Scale-down stabilisation: a service keeps the replicas that the highest demand of a
    // recent window needs. The window is `keep` while nothing waits for the service's GPU
    // types (waiting out a lull costs nothing then). Otherwise it is as long as a replica
    // given up would cost to get back (ski rental): cold_start x (1 + d_service / d_waiting),
    // d being value per GPU-hour at full load and d_waiting that of the densest waiting work;
    // a replica is kept until what its GPU could have earned for that work matches the cold
    // start's GPU time plus the requests lost meanwhile. SLOs first: if giving up what the
    // `keep` window holds could miss more requests in one cold start (at that window's peak)
    // than the service's error budget has left (requests served within the SLO since it
    // started, minus `slo_target` x its requests), the window stays `keep`.
    DurationMs keep = kHour;
    double slo_target = 0.999;
    // The share of the error budget no deliberate risk may spend: it is kept for the misses
    // nobody chose (a burst beyond any forecast, a replica lost, demand above max_replicas
    // while it lasts). A shorter scale-down window, or a warm spare declined, may risk only
    // the budget beyond that share of the allowance (SpendableBudget).
    double slo_reserve = 0.35;
    // Surges: when demand is beyond what the service's forecast allows for (the forecast
    // times the `surprise_quantile` of its own past errors) and rose to at least
    // `surge_ratio` times its lowest over the last cold start + lead, the rise is expected
    // to go on: the target covers demand now + `surge` x that rise (a launch, an outage
    // elsewhere sending traffic here). Not before a seasonal forecast with a record of its
    // errors exists: until then a rise cannot be told from noise. 0: off.
    double surge = 1.0;
    double surprise_quantile = 0.99;
    double surge_ratio = 1.5;
    // Before a service has a seasonal forecast its daily peak is unknown. Work that cannot
    // give its GPUs back is then held off (BurstHold) the capacity that max_replicas would
    // need, weighted by the odds that the work's run meets the peak: its length as a share
    // of a day (ForecastNeed). A later seasonal forecast replaces the envelope. The airtime
    // policy turns it on under preemption=off, where no replica can take GPUs back.
    bool envelope = false;
    // Beyond the forecast peak, the headroom held from work that cannot give GPUs back
    // (ForecastNeed, BurstHold) covers the forecast's own errors up to this quantile (the
    // ratios of slot peaks to forecasts, DemandForecast::ErrorQuantile), once 8 are known.
    // 0: the forecast peak alone. The airtime policy sets 0.9 under preemption=off.
    double hold_quantile = 0;
    // Priced headroom (the 3 a.m. call; the default, `spare` alone with headroom=spare): a
    // service keeps the k-th warm replica beyond its target while what it is expected to
    // serve within one cold start of a burst is worth more than what its GPUs would earn for
    // the densest waiting work over a forecast slot (PricedExtra). Expected from the
    // service's own forecast errors (its DemandForecast's ratios of slot peaks to forecasts
    // made a cold start and lead ahead); until 8 of them are known, `spare` stands in. While
    // nothing waits (the hold costs nothing) the `spare` count bounds it; while the service
    // is below its SLO target it keeps that count at least (SLOs first).
    bool priced = true;
    // SLOs first, sized from the forecast's errors: while the service has spent the error
    // budget it may risk (SpendableBudget < 0), it keeps at least the replicas that its
    // forecast times this quantile of its own past errors needs (once 8 are known). 0: off.
    double slo_buffer = 0.9;
    // Services with model variants: how their mix is chosen (VariantMix).
    VariantMix::Options variants;
  };
  explicit ForecastScale(Options o)
      : o_(o), mix_(o.variants, [this](const Job& member, const Engine& engine) {
          return WaitingDensityFor(member, engine);
        }) {}
  // The mix VariantMix chose for each service with variants.
  const VariantMix& variant_mix() const { return mix_; }
  std::vector<double> Routing(const Job& member, const Engine& engine) const override;

  std::string_view name() const override { return "forecast-scale"; }
  // A service's forecast, begun (from the demand seen before the engine met it, a daemon's
  // restart: RealtimeProfile::history) the first time the service is looked at.
  DemandForecast& Start(const Job& service, TimeMs now) const;
  int TargetReplicas(const Job& service, const Engine& engine) const override;
  void BeforeAllocate(Engine& engine) override;
  void AfterAllocate(Engine& engine) override;

  // Replicas `service` is forecast to need at most over [from, to].
  int PeakReplicas(const Job& service, TimeMs from, TimeMs to) const;
  // The highest demand (rps) `service` had over [now - window, now] (its current one
  // included); `window` at most `keep`.
  double RecentPeak(const Job& service, TimeMs now, DurationMs window) const;
  // The lowest demand over the same window (at most `keep` too).
  double RecentLow(const Job& service, TimeMs now, DurationMs window) const;
  // Whether `service`'s demand now is beyond what its forecast allows for: its forecast
  // times the `surprise_quantile` of its past errors. Never without a seasonal forecast and
  // a record of its errors (a rise cannot be told from noise then).
  bool Surprised(const Job& service, TimeMs now) const;
  // The demand a surprise rise is expected to reach by `to` (see Options::surge); 0: none.
  double SurgeRps(const Job& service, TimeMs from, TimeMs to) const;
  // Why the target is above what the current demand needs ("" when it is not).
  std::string WhyTarget(const Job& service, const Engine& engine) const override;

  // How long `service` keeps replicas its demand no longer needs (see Options::keep), and why.
  struct Keep {
    DurationMs window = 0;
    enum Why { kNothingWaits, kRental, kBudgetSpent } why = kNothingWaits;
    double waiting_density = 0;  // the densest waiting work's value per GPU-hour
    double budget = 0;           // SpendableBudget, where it was consulted
    double at_risk = 0;          // requests one cold start could miss, where consulted
  };
  Keep KeepWindow(const Job& service, const Engine& engine) const;
  // Requests `service` may still miss and meet `slo_target`, over what it served until
  // `now` as this plug-in saw it (demand, up to what max_replicas serve, against the
  // replicas ready at each cycle); < 0: below target.
  double ErrorBudget(WorkloadId service, TimeMs now) const;
  // What deliberate risk may still spend of it: ErrorBudget less `slo_reserve` of the
  // allowance ((1 - slo_target) x the requests so far); < 0: no more gambles.
  double SpendableBudget(WorkloadId service, TimeMs now) const;
  // `rps`, at most what `service`'s max_replicas serve.
  static double Servable(const Job& service, double rps);
  // GPUs (milli) of each type that services are forecast to need beyond their live replicas
  // over [now, until], spread over the types their shapes allow (first allowed type).
  std::map<GpuTypeId, int64_t> ForecastNeed(const Engine& engine, TimeMs until) const override;
  Shortfall ShortOnItsNodes(const Engine& engine, const Placement& placement,
                            TimeMs until) const override;
  bool ServiceHome(NodeIndex n, const Engine& engine) const override;
  // SLOs first (BurstHold): with `short_milli` GPUs of `type` missing, a service charged to
  // that type (as ForecastNeed charges it) holds its forecast peak over [now, until] less that
  // many replicas; the requests its forecast demand (up to what max_replicas serve) would
  // then miss, slot by slot, against what it may spend of its error budget by `until`: the
  // SpendableBudget now plus the spendable allowance on the requests forecast until then.
  const Job* SloAtRisk(const Engine& engine, GpuTypeId type, int64_t short_milli,
                       TimeMs until) const override;
  const std::vector<SloClaim>& SloClaims() const override { return claims_; }
  bool BelowSlo(const Job& service, const Engine& engine) const override {
    return !service.s().realtime.is_member() && ErrorBudget(service.id, engine.now()) < 0;
  }
  // The claim for `service` in this cycle (nullptr: none).
  const SloClaim* ClaimOf(WorkloadId service) const;
  const DemandForecast* forecast(WorkloadId id) const;

  // The priced hold for `service` above `target` replicas: the extra replicas whose expected
  // value within one cold start of a burst exceeds what their GPUs earn for waiting work over
  // a forecast slot, at most `room`; -1 while its forecast has too few errors to price.
  struct Priced {
    int extra = -1;
    double benefit = 0, cost = 0;            // of the last replica held (or the first one declined)
    double burst_odds = 0;                   // share of past slots whose peak would have needed it
    double held_benefit = 0, held_cost = 0;  // of the last replica held (extra > 0)
  };
  Priced PricedExtra(const Job& service, const Engine& engine, int target, int room) const;

  // The expected values of `service`'s replica number `below` + 1, over a forecast slot: the
  // requests it would serve within a cold start of a burst (benefit; known once the forecast
  // has enough errors), and what its GPUs would earn for the densest waiting work instead,
  // less that work's loss giving them back if the burst came (cost).
  struct ReplicaPrice {
    double benefit = 0, cost = 0, burst_odds = 0;
    bool known = false;
  };
  ReplicaPrice PriceReplica(const Job& service, const Engine& engine, int below) const;
  // The demand a target is set for: the forecast peak over the next cold start and lead (the
  // current demand until the forecast is seasonal).
  double ForecastRps(const Job& service, TimeMs now) const;
  // The replicas beyond `target` (at most `room`) that Options::slo_buffer asks for, and the
  // figures that decided it.
  struct Buffer {
    int extra = 0;
    double rps = 0;      // the forecast times the slo_buffer quantile of its errors
    double at_risk = 0;  // the requests one cold start at that demand would miss
  };
  Buffer SloBuffer(const Job& service, TimeMs now, int target, int room, double budget) const;

 private:
  // The lowest and highest demand `service` had over [now - window, now].
  std::pair<double, double> RecentRange(const Job& service, TimeMs now, DurationMs window) const;
  // Requests `service` may still miss and keep at least `target` of them within the SLO.
  double BudgetOver(WorkloadId service, TimeMs now, double target) const;
  // The replicas `service` (whose forecast is `f`) is expected to need at most over [now,
  // until]: its forecast peak, or before a seasonal forecast, with the envelope on, that much
  // more of max_replicas as the window is a share of a day.
  double ExpectedReplicas(const Job& service, const DemandForecast& f, TimeMs now,
                          TimeMs until) const;
  // Whether `service`'s replicas can go on node `n` at all (its GPU type allowed; MIG-enabled
  // for a MIG profile).
  static bool Hosts(const Job& service, NodeIndex n, const Engine& engine);
  // The GPU type ForecastNeed charges `service`'s headroom to.
  static GpuTypeId ChargedType(const Job& service, const Engine& engine);
  // Records each service's hold-or-hand-off call when it changes (Engine::RecordHold).
  void RecordHolds(Engine& engine);
  // Sets claims_ from the buffer replicas the free GPUs could not take (PriceNote::unplaced).
  void Claim(const Engine& engine);
  // The work left waiting by the last allocation pass, per GPU type it could use: what
  // arrives and starts at once never waits, and so never makes a spare give way for nothing.
  void RecordWaiting(const Engine& engine);
  // The smallest waiting work that could use `type` (milli-GPUs; kNoneWaiting: none).
  static constexpr int64_t kNoneWaiting = std::numeric_limits<int64_t>::max();
  int64_t SmallestWaiting(GpuTypeId type) const;
  // Whether a pass within `keep` left room for a replica of `unit` milli-GPUs free on `type`
  // while work waited for it: the waiting work would not take a spare's GPUs either.
  bool WaitsInVain(GpuTypeId type, int64_t unit, TimeMs now) const;
  // Milli-GPU the waiting work could use on `type`.
  int64_t WaitingMilli(GpuTypeId type) const;
  // The densest waiting work's value per GPU-hour on `type` (0: none waits).
  double WaitingDensity(GpuTypeId type) const;
  // The same over every GPU type `service`'s shape allows; with `fits_milli` > 0, of the work
  // no larger than that (by size class: what could take that many of its GPUs), and 0 where
  // the last pass left that much of those types free all the same; `loss_h`:
  // where given, what that work would lose giving GPUs back (hours of its work).
  double WaitingDensityFor(const Job& service, const Engine& engine, double* loss_h = nullptr,
                           int64_t fits_milli = 0) const;

  Options o_;
  // Target and Routing are const for the engine; the mix keeps its plans across cycles.
  mutable VariantMix mix_;
  // What the last TargetReplicas of each service priced, and the budget it saw: WhyTarget
  // explains the target with the figures that set it (the waiting work changes after the
  // allocation pass, and with it a price computed then).
  struct PriceNote {
    int base = 0;  // the replicas before warm ones
    Priced priced;
    int by_price = 0;   // the warm replicas the price held
    double budget = 0;  // SpendableBudget
    Buffer buffer;      // and those the SLO buffer held
    int unplaced = 0;   // of the buffer's, those the free GPUs could not take (claimed)
  };
  mutable std::map<WorkloadId, PriceNote> price_notes_;
  std::vector<SloClaim> claims_;
  std::vector<TimeMs> gpu_free_, scratch_;  // Claim's working space
  // A service's forecast and recent steps begin at the first look at it (Start), which may
  // be the setting of its target, before BeforeAllocate: hence mutable.
  mutable std::map<WorkloadId, DemandForecast> forecasts_;
  std::map<WorkloadId, double> last_seen_;
  // Per service, its demand over the `keep` window.
  mutable std::map<WorkloadId, DemandWindow> recent_;
  std::map<WorkloadId, SloBooks> served_;  // each plain service's error budget
  mutable TimeMs next_wake_ = kNever;      // when a kept step leaves its window (this cycle)
  std::vector<int64_t> waiting_milli_;     // per type; [type count]: any type
  // The densest waiting work per type (as waiting_milli_) and size class (SizeClass; [type x
  // kSizeClasses + class]), and what it would lose giving GPUs back (hours of its work).
  std::vector<double> waiting_density_;
  std::vector<double> waiting_loss_h_;
  std::vector<int64_t> free_after_pass_;  // per type: free milli-GPUs the last pass left
  // Per type: the most of it a pass left free while work that needed no more than that waited
  // for it all the same (for a place, a permit), within `keep` (when, and milli-GPUs). Where
  // that was room for a replica, spares do not give way to the waiting work: giving way would
  // free GPUs nobody takes, and the spares would come back a pass later, a cold start each
  // time (flapping).
  struct IdleWhileWaiting {
    TimeMs at = kNever;
    int64_t milli = 0;
  };
  std::vector<IdleWhileWaiting> idle_while_waiting_;
  // ServiceHome's nodes, computed once a cycle (the cycle they are of).
  mutable std::vector<bool> homes_;
  mutable uint64_t homes_cycle_ = ~uint64_t{0};
  std::vector<int64_t> smallest_waiting_;  // per type ([type count]: any type), milli-GPUs
  // Sizes up to 1, 2, 4, 8 GPUs and larger: what waits for the GPUs of a replica is the work
  // that fits in them.
  static constexpr size_t kSizeClasses = 5;
  static size_t SizeClass(int64_t milli);
  // Per service, the last call recorded: replicas kept (the target), needed and held beyond
  // that, and whether a replica worth holding was declined.
  struct Call {
    int target = -1, needed = -1, held = -1;
    bool declined = false;
  };
  std::map<WorkloadId, Call> calls_;
};

}  // namespace airtime
