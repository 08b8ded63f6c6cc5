// VariantMix: which model variants of a service run, how many replicas of each, and which
// share of each request class goes to each (issue 22).
//
// A service with variants runs as one engine service per variant, its members
// (ExpandVariants). Once a cycle, for each such service, VariantMix plans its mix and the
// scale plug-in (ForecastScale) gives each member the replicas of the plan:
//
//   demand     per class, the highest demand of a scale-down window, as ForecastScale keeps
//              a plain service's replicas: `keep` while nothing waits for its GPUs, else as
//              long as a replica given back would cost to get back (ski rental: the longest
//              cold start x (1 + the best variant's value per GPU-hour / the waiting work's)),
//              at least the longest cold start + lead; or, once a day of the class's demand
//              is known, the peak its seasonal forecast (DemandForecast, one per class)
//              expects over the next longest cold start + lead, if that is higher: a replica
//              started only when the rise arrives misses its cold start;
//   a plan     the share of each class each variant serves. Its replicas per variant are what
//              its load needs at the variant's planning throughput (ModelVariant::
//              PlanningThroughput) plus warm spares, up to the variant's max_replicas:
//              round(replicas x spare), and SLOs first round(replicas x slo_spare) while
//              the service's error budget beyond its reserve is spent (SloBooks), held on
//              the variant where they cost least (PriceSpares);
//   its worth  per hour, the value its requests earn (value per request x the quality of the
//              variant that serves it) less what its GPUs would earn for the densest waiting
//              work (the opportunity value ForecastScale prices spares with);
//   feasible   the mean quality at or above the floor first, then the GPUs within what the
//              service can have (its own, the free ones and those of preemptible jobs), per
//              type: each variant's replicas the load needs (spares left out, they give way
//              first) on the types it has a throughput for (BeyondBudget). When they are
//              scarce the plan moves to cheaper variants before
//              requests are dropped, and when they are plentiful back toward quality, since
//              a plan that serves every request is then worth most with the best variants.
//
// Mode kMix (the airtime policy) searches: every plan that sends each class wholly to one
// variant, then moves of a `step` share of a class between two variants, or of as much as
// the quality floor allows, while one improves the plan. Mode kGeneralist (the
// `fixed-generalist` peer) always runs the best variant for each class; kCheapest
// (`cheapest-meeting-quality`, INFaaS-like) the variant that needs the fewest GPUs per
// request among those whose quality meets the floor, for each class. kStatic
// (`static-split`) is a fixed number of replicas per variant, as an operator would
// provision it: the mix the search chooses at the service's peak demand per class (the
// highest point of each class's declared curve, or of the demand seen so far for a class
// whose demand arrives through the API), with the GPUs and the waiting work of the cycle it
// is sized in, plus spares; its replicas and shares then never change, by day or by night,
// whatever waits. It is sized again only when a class's demand rises above that peak
// (undeclared demand; the counts only grow).
// Every mode plans with the available variants only (Engine::VariantAvailable): one that a
// quantize or finetune job has not produced yet gets no share, and its GPU types count for
// the service's GPUs only once it is produced; from the cycle of the producer's completion
// on it competes like the others.
//
// Several services with variants (kMix): each plans with the same free GPUs in sight, so two
// could count on the same ones while one keeps GPUs the other's requests need more. So the
// plans are made together, once a cycle (PlanAll): each service's plan alone says what its
// load needs per GPU type (spares left out); where those needs exceed a type's GPUs (free,
// preemptible jobs' and those the services hold), the type is split among the services that
// need it, in proportion to their need weighted by what a GPU of that type earns for each
// (the value per GPU-hour of its densest variant there), none above its need (water-filling).
// Each then plans within its split, moving to cheaper variants on other types as it would
// with fewer GPUs, and its warm spares there are cut to fit the split: a spare of one service
// does not give way to another service's replica, so it must not sit on the GPUs that
// replica needs (ShareContended, CapSparesToShare). The peers plan each service alone.
//
// Switching: a new plan replaces the one in force only when the one in force no longer fits
// (floor, GPUs, max replicas) or the gain of the new one over `payback` exceeds the cold
// starts it costs (the GPU-hours of the new replicas' loading, at the higher of the waiting
// work's and the replica's own value per GPU-hour) and `margin` of the plan's worth: demand
// noise does not flap the mix. Make-before-break: while a member has fewer ready replicas
// than its plan wants, no member gives replicas back, so requests keep being served by the
// old variant until the new one is up; only when the new replicas found no room for `lead`
// does an old member give one replica back per cycle (never its last ready one), to make
// room (NextLook: the scale plug-in asks for a cycle at that moment). The freed GPUs go to waiting
// work in the same cycle (the engine releases replicas before its allocation pass). One instance
// per engine; state across cycles.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "airtime/engine/engine.h"
#include "airtime/forecast/demand_forecast.h"
#include "airtime/forecast/demand_window.h"
#include "airtime/policies/airtime/slo_books.h"

namespace airtime {

class VariantMix {
 public:
  enum class Mode { kMix, kGeneralist, kCheapest, kStatic };
  struct Options {
    Mode mode = Mode::kMix;
    double spare = 0;  // warm spares at all times, as ForecastScale's `spare` (opt-in)
    // SLOs first: while the service's error budget beyond its reserve is spent (its requests
    // served within the SLO, as its members' ready replicas served them routed by the plan,
    // are fewer than slo_target + slo_reserve x (1 - slo_target) of all its requests), each
    // variant of its plan keeps round(replicas x slo_spare) warm spares (at least `spare`).
    // slo_target 0: off.
    double slo_target = 0.999;
    double slo_reserve = 0.35;
    double slo_spare = 0.25;
    DurationMs lead = 5 * kMinute;  // beyond the cold start, for the demand window
    DurationMs keep = kHour;        // the longest demand window (ForecastScale's `keep`)
    DurationMs payback = kHour;     // a switch must repay its cold starts within this
    double margin = 0.05;           // ... and gain this share of the plan's worth more
    double step = 0.1;              // the share of a class one move of the search shifts
  };
  // The densest waiting work's value per GPU-hour that a member's replicas would keep from
  // running (ForecastScale::WaitingDensityFor).
  using Density = std::function<double(const Job& member, const Engine& engine)>;

  VariantMix(Options o, Density density) : o_(o), density_(std::move(density)) {}

  // The replicas `member` should run now, and the shares of its service's classes it serves.
  int Target(const Job& member, const Engine& engine);
  std::vector<double> Routing(const Job& member, const Engine& engine);

  // What the GPUs of a service's replicas would earn for the densest waiting work that could
  // take them, per GPU-hour (Density): one figure per variant, since variants run on other
  // GPU types and the work waiting for each type differs.
  struct Prices {
    double density = 0;            // the highest of them (the service's demand window)
    std::vector<double> variants;  // per variant; empty or short: `density`
    double of(size_t v) const { return v < variants.size() ? variants[v] : density; }
  };

  // Warm spares PriceSpares moved: where round(replicas x spare) had put them, per variant,
  // and what holding them cost an hour there and where they went.
  struct SpareMove {
    std::vector<int> from;
    double cost_from = 0, cost_to = 0;
  };

  // A plan's figures (Evaluate).
  struct Figures {
    std::vector<int> replicas;  // per variant
    int64_t milli = 0;          // GPUs the replicas hold
    double quality = 1;         // mean quality of the planned requests
    double worth = 0;           // value per hour less the opportunity value of its GPUs
    double held = 0;            // that opportunity value per hour (at Prices::density)
    double unserved_rps = 0;    // beyond max_replicas
    bool floor_ok = true;
    int64_t over_milli = 0;  // beyond the GPUs the service can have (per type)
    std::vector<int> firm;   // per variant: the replicas the load needs, spares left out
    std::optional<SpareMove> spares_moved;  // none: the spares stayed where they were
  };
  using Shares = std::vector<std::vector<double>>;  // [variant][class]

  // What the service's state was at its last plan, for `describe`-like explanations and tests.
  struct State {
    Shares shares;  // the plan in force
    Figures figures;
    std::vector<double> demand;  // the planning demand per class
    double density = 0;          // the waiting work's value per GPU-hour (the highest)
    int64_t budget_milli = 0;    // GPUs the service could have
    int switches = 0;            // plans replaced
    TimeMs last_switch = kNever;
    std::string why;              // why the plan in force replaced the one before ("first plan")
    std::string mix;              // the plan in force in words: shares per class, replicas, figures
    std::vector<bool> available;  // per variant, at the last plan (Engine::VariantAvailable)
    std::string shared;  // the GPU types split with other services at the last plan, in words
    // Per class: the forecast's peak over the next cold start + lead where it raised the
    // planning demand above the window's; 0 elsewhere.
    std::vector<double> forecast;
  };
  const State* state(const std::string& service) const;
  // Whether a service's plan saw another opportunity value than its members' waiting work
  // has now (after the allocation pass), or held back replicas below its quality floor for
  // want of better ones that have since been placed: worth a second look at once.
  bool Stale(const Engine& engine) const;
  // When the next of this cycle's plans will have had replicas unplaced for `lead`, so that
  // an old member starts giving replicas back to make room (make-before-break): that needs
  // a cycle even if no event comes. kNever: none.
  TimeMs NextLook(const Engine& engine) const;
  // Each service's hold-or-hand-off call (the 3 a.m. report, HoldDecision), recorded when
  // what it keeps changes, as ForecastScale records a plain service's. A group's replicas
  // differ by variant, so the call counts them as the plan's mean replica: its requests/s
  // (the replicas' planning throughputs over their number) and its GPUs. It holds the
  // replicas its plan keeps beyond what the demand now needs at that mean (the scale-down
  // window's peak, or the forecast's), and hands off when waiting work shortened the window
  // below `keep` and the whole `keep`'s peak would have kept more. Recorded under the first
  // member's id and the service's name, scored against the service's whole demand.
  void RecordHolds(Engine& engine);

 private:
  // Milli-GPUs per GPU type (indexed by GpuTypeId).
  using TypeMilli = std::vector<int64_t>;
  // A cycle's inputs to a service's plan (Prepare).
  struct Inputs {
    const WorkloadSpec* spec = nullptr;
    std::vector<bool> available;
    Prices price;
    std::vector<double> demand, demand_long;  // per class: the scale-down window's, payback's
    std::vector<double> demand_keep;          // per class: the peak of the whole `keep`
    TypeMilli budget;                         // the GPUs it may plan with, per type
    TypeMilli own;                            // those its members hold, per type
    TypeMilli cap;     // per type: its split of a type shared with other services; -1: none
    double spare = 0;  // the warm spares its plan keeps, as a share of each variant's replicas
  };
  struct Group {
    State st;
    Inputs in;
    std::vector<WorkloadId> members;        // by variant index (kNoWorkload: none)
    std::vector<DemandWindow> recent;       // per class
    std::vector<DemandForecast> forecasts;  // per class
    SloBooks books;                         // its error budget (SLOs first)
    std::vector<double> last_seen;
    std::vector<int> targets;  // this cycle's, per variant
    std::vector<int> kept;     // the plan's replicas per variant, min_replicas in
    int min_total = 0;         // its members' min_replicas, summed (the plan's least)
    // The last hold-or-hand-off call recorded (RecordHolds): replicas kept, and whether the
    // window handed replicas to waiting work.
    int call_kept = -1;
    int call_held = 0;
    bool call_declined = false;
    std::vector<TimeMs> short_since;  // per variant: since when replicas of the plan are unplaced
    // When this cycle's targets held back replicas of variants below the quality floor
    // (PairWithFloor): the replicas of variants at or above it placed then; -1: none held.
    int floor_paired = -1;
    // kStatic: the peak per class the split was sized for, and its replicas per variant.
    std::vector<double> static_peak;
    std::vector<int> static_replicas;
    uint64_t cycle = ~uint64_t{0};
    Shares route;  // the routing of `routed`'s cycle (RouteNow)
    uint64_t routed = ~uint64_t{0};
  };
  // The shares each variant serves now (kMix): the plan's, of the demand now and within each
  // variant's ready replicas, then moved up to better variants with room, the lowest quality
  // first. The plan is sized for the peak of its window; below that peak the better
  // variants' replicas have room, and a request they serve is worth more.
  Shares RouteNow(const Group& g, const Engine& engine) const;
  // The plans of every service not yet planned this cycle, made together (see above).
  void PlanAll(const Engine& engine);
  // This cycle's inputs of a service's plan; false when none of its members is live.
  bool Prepare(Group& g, const Engine& engine);
  // Splits the GPU types that the services' plans alone would need more of than there are.
  void ShareContended(const std::vector<Group*>& groups, const Engine& engine) const;
  // The plan in force, kept or replaced, and the members' targets.
  void Decide(Group& g, const Engine& engine);
  // The worth of a service's best plan with `milli` of type `t` (the rest of its budget as
  // it is), less the value of the replicas that would not fit.
  double WorthWithin(const Inputs& in, size_t t, int64_t milli, const GpuCatalog& catalog) const;
  // Moves whole replicas of type `t` between the services' shares (or from `left`, what
  // rounding left) while that raises the sum of their worth, at most kSplitMoves a cycle.
  // ... and only where at most kSplitServices services need the type (each move searches a
  // plan per service); beyond, the split by need stands.
  static constexpr int kSplitMoves = 8;
  static constexpr int kSplitServices = 4;
  void ImproveSplit(const std::vector<Group*>& groups, size_t t, const std::vector<TypeMilli>& need,
                    const std::vector<TypeMilli>& unit,
                    const std::vector<std::vector<double>>& earns, std::vector<int64_t>& share,
                    int64_t& left, const GpuCatalog& catalog) const;
  // Removes warm spares from `plan` until its replicas fit each split type (g.in.cap).
  static void CapSparesToShare(const Group& g, const RealtimeProfile& rt, const GpuCatalog& catalog,
                               std::vector<int>& plan);
  // Milli-GPUs per variant spread over the types each may run on, in proportion to `budget`.
  static TypeMilli PerType(const RealtimeProfile& rt, const std::vector<int64_t>& milli,
                           const TypeMilli& budget);
  // `available`: per variant; a share on one that is not serves nothing (unserved_rps).
  // `fixed`: the replicas per variant are these (kStatic), not what the load needs.
  // `spare`: the warm spares, as a share of each variant's replicas (Inputs::spare), held
  // where they cost least (PriceSpares).
  Figures Evaluate(const WorkloadSpec& spec, const Shares& s, const std::vector<double>& demand,
                   const Prices& price, double spare, const TypeMilli& budget,
                   const std::vector<bool>& available, const GpuCatalog& catalog,
                   const std::vector<int>* fixed = nullptr) const;
  // Warm spares serve what the planned replicas cannot: a burst beyond the demand the plan is
  // sized for. Their requests/s protect the service whichever variant holds them, as far as
  // the classes that variant serves can move to it (RouteNow shifts them). So they are held
  // where they cost least: `spares` (per variant, round(replicas x spare) to start with) moves
  // wholly to one variant, as many replicas as carry the same requests/s, where that costs
  // less per hour: its GPUs at its price (Prices::of), less what a spare of a better variant
  // earns below the peak by taking requests the plan gives a worse one (RouteNow moves them
  // up; the quality it adds to each). They move only where they fit the GPUs the service can
  // have (`budget`, beside the `firm` replicas). At equal costs nothing moves.
  static std::optional<SpareMove> PriceSpares(const WorkloadSpec& spec, const Shares& s,
                                              const std::vector<bool>& available,
                                              const std::vector<double>& demand,
                                              const std::vector<int>& firm, const Prices& price,
                                              const TypeMilli& budget, const GpuCatalog& catalog,
                                              std::vector<int>& spares);
  static bool Better(const Figures& a, const Figures& b);
  Shares Fixed(const RealtimeProfile& rt, Mode mode, const std::vector<bool>& available,
               const GpuCatalog& catalog) const;
  // kStatic: sizes the split again if a class's peak rose above the one it was sized for.
  void SizeStatic(Group& g, const WorkloadSpec& spec, const std::vector<double>& demand,
                  const Prices& price, const TypeMilli& budget, const std::vector<bool>& available,
                  const GpuCatalog& catalog) const;
  Shares Search(const WorkloadSpec& spec, const std::vector<double>& demand, const Prices& price,
                double spare, const TypeMilli& budget, const std::vector<bool>& available,
                const GpuCatalog& catalog) const;
  // `g`'s demand now (up to what its variants' max_replicas serve) and what its ready
  // replicas serve of it, as the serving model routes it (RouteRequests).
  struct Rates {
    double demand_rps = 0, served_rps = 0;
  };
  Rates ServedNow(const Group& g, const Engine& engine) const;
  // The first of `g`'s members not cancelled (they share the service's spec); null: none.
  static const Job* FirstLive(const Group& g, const Engine& engine);
  std::string Describe(const RealtimeProfile& rt, const Shares& s, const Figures& f,
                       const State& st) const;
  // The GPUs per type the service can have: its own, the free ones and those of preemptible
  // jobs, on the types its available variants run on.
  // `own`: set to the GPUs per type its members hold.
  TypeMilli Budget(const Group& g, const std::vector<bool>& available, const Engine& engine,
                   TypeMilli& own) const;
  // Of the milli-GPUs `need` per variant, how many fit on no type of the budget: each variant
  // goes only on the types it has a throughput for.
  static int64_t BeyondBudget(const RealtimeProfile& rt, const std::vector<int64_t>& need,
                              const TypeMilli& budget);
  // Caps `plan`'s replicas of variants below the floor at what the placed replicas of the
  // others let them serve (see Plan); sets g.floor_paired.
  void PairWithFloor(Group& g, const RealtimeProfile& rt, const Engine& engine,
                     std::vector<int>& plan) const;
  // Replicas placed of the group's variants at or above its quality floor.
  static int AtFloorLive(const Group& g, const Engine& engine);
  Group& GroupOf(const Job& member, const Engine& engine);

  Options o_;
  Density density_;
  std::map<std::string, Group> groups_;
};

}  // namespace airtime
