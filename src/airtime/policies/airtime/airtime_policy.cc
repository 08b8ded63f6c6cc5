#include "airtime/policies/airtime/airtime_policy.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "airtime/base/strings.h"
#include "airtime/policies/airtime/faster_later.h"
#include "airtime/policies/airtime/forecast_scale.h"
#include "airtime/policies/airtime/gang_plugins.h"
#include "airtime/policies/airtime/interference_score.h"
#include "airtime/policies/airtime/move_up.h"
#include "airtime/policies/airtime/type_trade.h"
#include "airtime/policies/airtime/value_plugins.h"
#include "airtime/policies/fgd/fgd.h"
#include "airtime/policies/plugins/kai_queues.h"

namespace airtime {
namespace {

// The placement score's tiers (ScoreTerm), the first deciding first.
constexpr int kReservationTier = 0;
constexpr int kMoveUpTier = 1;
constexpr int kServiceHomeTier = 2;
constexpr int kValueRateTier = 3;
constexpr int kFragmentationTier = 4;

// Some plug-ins serve two extension points: ForecastScale is the scaler, GangReserve a
// permit, MoveUp a scorer, and each is also a cycle plug-in. The policy owns each once,
// under its other role, and reaches its cycle steps through this forwarder. (Plug-ins that
// read what another computes find it in the engine's CycleState: cycle_views.h.)
class CycleOf : public CyclePlugin {
 public:
  explicit CycleOf(CyclePlugin* target) : target_(target) {}
  std::string_view name() const override { return target_->name(); }
  void BeforeAllocate(Engine& engine) override { target_->BeforeAllocate(engine); }
  void AfterAllocate(Engine& engine) override { target_->AfterAllocate(engine); }

 private:
  CyclePlugin* target_;
};

StatusOr<DurationMs> GetDuration(const PolicyParams& p, const std::string& key,
                                 DurationMs fallback) {
  auto it = p.values.find(key);
  if (it == p.values.end()) return fallback;
  auto d = ParseDurationMs(it->second);
  if (!d)
    return InvalidArgument("policy 'airtime': parameter '" + key +
                           "': expected a duration such as 30m, got '" + it->second + "'");
  return *d;
}

// A parameter that takes one of a few words: "expected on or off" (or "on, deadlines or
// off"), naming the parameter and what it got.
StatusOr<std::string> GetChoice(const PolicyParams& p, const std::string& key,
                                const std::string& fallback,
                                const std::vector<std::string>& choices) {
  std::string v = p.GetString(key, fallback);
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return v;
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i)
    list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return InvalidArgument("policy 'airtime': parameter '" + key + "': expected " + list + ", got '" +
                         v + "'");
}

// Recomputes deserved quotas and usage per tenant at the start of every cycle.
class QuotaCycle : public CyclePlugin {
 public:
  explicit QuotaCycle(std::shared_ptr<KaiQueues> q) : q_(std::move(q)) {}
  std::string_view name() const override { return "tenant-quota"; }
  void BeforeAllocate(Engine& engine) override { q_->Refresh(engine); }

 private:
  std::shared_ptr<KaiQueues> q_;
};

// Quotas in kai's format (plugins/kai_queues.h), so that one configuration serves both policies.
StatusOr<std::shared_ptr<KaiQueues>> ParseQuotas(const Cluster& cluster,
                                                 const PolicyParams& params) {
  if (params.GetString("quota", "").empty() && params.GetString("limit", "").empty())
    return std::shared_ptr<KaiQueues>();
  auto config = ParseKaiConfig(params, cluster.catalog());
  if (!config.ok()) {
    std::string m = config.status().message();
    if (m.rfind("policy 'kai'", 0) == 0) m = "policy 'airtime'" + m.substr(12);
    return InvalidArgument(m);
  }
  return std::make_shared<KaiQueues>(cluster, std::move(*config));
}

// The airtime policy; `variants` is the default of its `variants` parameter (how a service
// with model variants chooses its mix: VariantMix), which the peers fixed-generalist,
// cheapest-meeting-quality and static-split set.
StatusOr<Policy> MakeAirtimePolicy(const Cluster& cluster, const PolicyParams& params,
                                   const std::string& variants) {
  auto preempt_choice = GetChoice(params, "preemption", "on", {"on", "off"});
  if (!preempt_choice.ok()) return preempt_choice.status();
  const std::string preemption = *preempt_choice;
  ForecastScale::Options fo;
  auto lead = GetDuration(params, "lead", fo.lead);
  if (!lead.ok()) return lead.status();
  auto hold = GetDuration(params, "hold_horizon", fo.hold_horizon);
  if (!hold.ok()) return hold.status();
  fo.lead = *lead;
  fo.hold_horizon = *hold;
  auto keep = GetDuration(params, "keep", fo.keep);
  if (!keep.ok()) return keep.status();
  fo.keep = *keep;
  auto slo_target = params.GetDouble("slo_target", fo.slo_target);
  if (!slo_target.ok()) return slo_target.status();
  if (*slo_target < 0 || *slo_target > 1)
    return InvalidArgument("policy 'airtime': parameter 'slo_target' must be in [0, 1]");
  fo.slo_target = *slo_target;
  // The defaults: SLOs are bought with the forecast's own errors (slo_buffer), not with a
  // fixed share of spare replicas; warm spares are opt-in (`spare`), except under
  // preemption=off, where a replica cannot take GPUs back from running work and a spare is
  // the only capacity a rise in demand can have within a cold start. There the buffer is
  // off and the reserve 0.25, as before: with either changed launch-burst (seed 1) falls
  // from 99.95% to 99.76-99.80% SLO attainment.
  if (preemption == "off") {
    fo.spare = 0.25;
    fo.slo_buffer = 0;
    fo.slo_reserve = 0.25;
  }
  auto slo_reserve = params.GetDouble("slo_reserve", fo.slo_reserve);
  if (!slo_reserve.ok()) return slo_reserve.status();
  if (*slo_reserve < 0 || *slo_reserve > 1)
    return InvalidArgument("policy 'airtime': parameter 'slo_reserve' must be in [0, 1]");
  fo.slo_reserve = *slo_reserve;
  auto surge = params.GetDouble("surge", fo.surge);
  if (!surge.ok()) return surge.status();
  if (!(*surge >= 0)) return InvalidArgument("policy 'airtime': parameter 'surge' must be >= 0");
  fo.surge = *surge;
  auto surge_ratio = params.GetDouble("surge_ratio", fo.surge_ratio);
  if (!surge_ratio.ok()) return surge_ratio.status();
  if (!(*surge_ratio >= 1))
    return InvalidArgument("policy 'airtime': parameter 'surge_ratio' must be >= 1");
  fo.surge_ratio = *surge_ratio;
  auto slo_buffer = params.GetDouble("slo_buffer", fo.slo_buffer);
  if (!slo_buffer.ok()) return slo_buffer.status();
  if (*slo_buffer < 0 || *slo_buffer >= 1)
    return InvalidArgument("policy 'airtime': parameter 'slo_buffer' must be in [0, 1)");
  fo.slo_buffer = *slo_buffer;
  auto spare = params.GetDouble("spare", fo.spare);
  if (!spare.ok()) return spare.status();
  if (*spare < 0) return InvalidArgument("policy 'airtime': parameter 'spare' must be >= 0");
  fo.spare = *spare;
  auto loose = params.GetDouble("spare_loose", fo.spare_loose);
  if (!loose.ok()) return loose.status();
  if (*loose < 0) return InvalidArgument("policy 'airtime': parameter 'spare_loose' must be >= 0");
  fo.spare_loose = *loose;
  // headroom=priced: warm replicas by expected value (ForecastScale::PricedExtra);
  // spare: the fixed `spare` fraction.
  auto headroom = GetChoice(params, "headroom", "priced", {"priced", "spare"});
  if (!headroom.ok()) return headroom.status();
  fo.priced = *headroom == "priced";
  // Without preemption a service gets GPUs back only as work ends: keep a spare.
  if (preemption == "off") fo.min_spare = 1;
  auto envelope = GetChoice(params, "envelope", preemption == "off" ? "on" : "off", {"on", "off"});
  if (!envelope.ok()) return envelope.status();
  fo.envelope = *envelope == "on";
  // Without preemption work that takes a service's GPUs keeps them to its end: hold
  // for the forecast's 90th-percentile error, not its mean.
  auto hold_q = params.GetDouble("hold_quantile", preemption == "off" ? 0.9 : 0);
  if (!hold_q.ok()) return hold_q.status();
  if (!(*hold_q >= 0 && *hold_q < 1))
    return InvalidArgument("policy 'airtime': parameter 'hold_quantile' must be in [0, 1)");
  fo.hold_quantile = *hold_q;
  // How a service with model variants chooses its mix (VariantMix): `mix` searches the
  // best one each cycle; `generalist` runs the best variant; `cheapest` the cheapest that
  // meets the quality floor, per class.
  // `static` a fixed number of replicas per variant, sized once for the peak.
  auto variants_choice =
      GetChoice(params, "variants", variants, {"mix", "generalist", "cheapest", "static"});
  if (!variants_choice.ok()) return variants_choice.status();
  fo.variants.mode = *variants_choice == "mix"          ? VariantMix::Mode::kMix
                     : *variants_choice == "generalist" ? VariantMix::Mode::kGeneralist
                     : *variants_choice == "cheapest"   ? VariantMix::Mode::kCheapest
                                                        : VariantMix::Mode::kStatic;
  // Services with variants: warm spares at all times are opt-in (`variant_spare`; 0.25
  // under preemption=off, as `spare`). SLOs first: while such a service's error budget
  // beyond the reserve is spent, its plan keeps a quarter of each variant's replicas warm
  // (VariantMix::Options::slo_spare); the priced hold and the SLO buffer read one service's
  // forecast, and a variant group has none of its own.
  auto variant_spare = params.GetDouble("variant_spare", preemption == "off" ? 0.25 : 0);
  if (!variant_spare.ok()) return variant_spare.status();
  if (*variant_spare < 0)
    return InvalidArgument("policy 'airtime': parameter 'variant_spare' must be >= 0");
  fo.variants.spare = *variant_spare;
  fo.variants.slo_target = fo.slo_target;
  fo.variants.slo_reserve = fo.slo_reserve;
  fo.variants.lead = fo.lead;
  fo.variants.keep = fo.keep;
  ValuePreempt::Options po;
  auto margin = params.GetDouble("margin", po.margin);
  if (!margin.ok()) return margin.status();
  if (*margin < 1) return InvalidArgument("policy 'airtime': parameter 'margin' must be >= 1");
  po.margin = *margin;
  auto gain = GetDuration(params, "gain_horizon", po.gain_horizon);
  if (!gain.ok()) return gain.status();
  po.gain_horizon = *gain;

  auto fl_choice = GetChoice(params, "faster_later", "deadlines", {"on", "deadlines", "off"});
  if (!fl_choice.ok()) return fl_choice.status();
  const std::string fl = *fl_choice;
  auto mu_choice = GetChoice(params, "move_up", "on", {"on", "off"});
  if (!mu_choice.ok()) return mu_choice.status();
  const std::string mu = *mu_choice;
  auto trade_choice = GetChoice(params, "trade", "on", {"on", "off"});
  if (!trade_choice.ok()) return trade_choice.status();
  auto pack = params.GetDouble("pack", 2.0);
  if (!pack.ok()) return pack.status();
  if (*pack < 0) return InvalidArgument("policy 'airtime': parameter 'pack' must be >= 0");
  const bool reserve = params.GetString("gang_wait", "") != "off";
  DurationMs gang_wait = kNever;  // kNever: no reservations
  if (reserve) {
    auto w = GetDuration(params, "gang_wait", 4 * kHour);
    if (!w.ok()) return w.status();
    gang_wait = *w;
  }

  // Gangs wider than any node (locality any) get reservations too (GangReserve).
  auto wide_choice = GetChoice(params, "wide_gangs", "off", {"reserve", "off"});
  if (!wide_choice.ok()) return wide_choice.status();
  const bool wide_gangs = *wide_choice == "reserve";

  // The cost of delay of work with a decaying deadline (UrgentDensity): 0 leaves the
  // queue in plain value-density order.
  auto urgency = GetDuration(params, "urgency", kHour);
  if (!urgency.ok()) return urgency.status();
  // Priority points that double a workload's rank in the queue (PriorityWeight);
  // 0: value order alone.
  auto doubling = params.GetDouble("priority_doubling", 50.0);
  if (!doubling.ok()) return doubling.status();
  if (*doubling < 0)
    return InvalidArgument("airtime: priority_doubling must be 0 (off) or positive, not " +
                           params.GetString("priority_doubling", ""));

  auto quotas = ParseQuotas(cluster, params);
  if (!quotas.ok()) return quotas.status();

  Policy p;
  p.name = preemption == "on" ? "airtime" : "airtime-nopreempt";
  if (variants == "generalist") p.name = "fixed-generalist";
  if (variants == "cheapest") p.name = "cheapest-meeting-quality";
  if (variants == "static") p.name = "static-split";
  p.description = "value scheduler";
  if (*quotas) {
    p.queue_sort = std::make_unique<QuotaValueOrder>(*quotas, *urgency, *doubling);
    p.filters.push_back(std::make_unique<QuotaFilter>(*quotas));
    p.cycle.push_back(std::make_unique<QuotaCycle>(*quotas));
    p.tenants = std::make_unique<KaiTenantReport>(*quotas);
  } else {
    p.queue_sort = std::make_unique<ValueOrder>(*urgency, *doubling);
  }
  // Placement scores, in tiers (ScoreTerm: a later tier only breaks the ties of the
  // ones before it): (0) the gang reservation overrides all but feasibility; (1)
  // MoveUp's score sends a moved job to the node it was moved for; (2) work that could
  // not give GPUs back in time keeps off the nodes that alone can host a service
  // (ServiceHomeScore), where BurstHold would hold it back; (3) value rate:
  // one unit of relative speed (an A100-80GB is 1, an H100 1.8) weighs 1, a node
  // filled from empty to full `pack` of that, so a much faster empty node still beats
  // a slow full one, and interference weighs like speed (a loss of value rate, as a
  // share of the newcomer's) and picks the GPU for shared work where the GPUs differ
  // in it; (4) FGD's fragmentation breaks the remaining ties (and picks the GPU where
  // they do not), its own ties going to the node with the fewest wholly free GPUs
  // (keep_whole). `pack` is 2 by default: small preemptible work fills partly used
  // nodes, so whole nodes stay free for gangs, and MoveUp brings running work to
  // faster GPUs that nothing waits for (docs/policies.md: without MoveUp packing
  // lowered the return); non-preemptible work is not packed (PackScore).
  // With preemption a replica keeps off the reserved node while it can make room
  // elsewhere; without, it could not, so it may land there as before.
  const bool keep_off = reserve && preemption == "on";
  auto gang = std::make_unique<GangReserve>(gang_wait, keep_off, wide_gangs);
  GangReserve* gang_raw = gang.get();
  // Scarce fast GPUs go to the work that gains most from them (TypeTrade).
  auto trade = *trade_choice == "on" ? std::make_unique<TypeTrade>() : nullptr;
  p.scores.emplace_back(std::make_unique<SpeedScore>(), 1.0, kValueRateTier);
  if (*pack > 0) p.scores.emplace_back(std::make_unique<PackScore>(), *pack, kValueRateTier);
  p.scores.emplace_back(std::make_unique<InterferenceScore>(), 1.0, kValueRateTier);
  p.scores.emplace_back(std::make_unique<FgdScore>(FgdScore::Options{.keep_whole = true}), 1.0,
                        kFragmentationTier);
  if (reserve) p.scores.emplace_back(std::make_unique<ReservationScore>(), 1.0, kReservationTier);
  auto scale = std::make_unique<ForecastScale>(fo);
  ForecastScale* raw = scale.get();
  p.cycle.push_back(std::make_unique<CycleOf>(raw));
  // Trades count the GPUs left free after the cycle plug-ins before it.
  if (trade) p.cycle.push_back(std::move(trade));
  const DurationMs reclaim_budget = preemption == "on" ? fo.lead : DurationMs{-1};
  p.scores.emplace_back(std::make_unique<ServiceHomeScore>(reclaim_budget), 1.0, kServiceHomeTier);
  p.permits.push_back(std::make_unique<BurstHold>(reclaim_budget));
  // The GPUs of one node freeing for a replica the SLO buffer asks for are kept for it.
  p.filters.push_back(std::make_unique<SloClaimFilter>());
  // A job waits for a faster type that frees soon: any job (`on`), or only work that
  // would then meet its deadline, or miss it by less (`deadlines`, the default).
  if (fl != "off")
    p.permits.push_back(std::make_unique<FasterLater>(fl == "on" ? FasterLater::Mode::kSooner
                                                                 : FasterLater::Mode::kMoreValue));
  // Moving a job is a stop and a restart: under preemption=off nothing moves.
  if (mu == "on" && preemption == "on") {
    auto move_up = std::make_unique<MoveUp>();
    p.cycle.push_back(std::make_unique<CycleOf>(move_up.get()));
    // Below the gang reservation, above everything else: a moved job lands where it
    // was moved for.
    p.scores.emplace_back(std::move(move_up), 1.0, kMoveUpTier);
  }
  // With reservations the gang plug-in computes the reservation each cycle and vets
  // starts against it.
  if (reserve) {
    if (keep_off) p.filters.push_back(std::make_unique<ReservedNodeFilter>());
    p.cycle.push_back(std::make_unique<CycleOf>(gang_raw));
    p.permits.push_back(std::move(gang));
  }
  p.scale = std::move(scale);
  po.urgency = *urgency;
  if (preemption == "on") p.preempt = std::make_unique<ValuePreempt>(po, *quotas);
  return p;
}

const std::vector<std::string>& AirtimeKeys() {
  static const std::vector<std::string> keys = {
      "preemption",    "lead",         "hold_horizon",
      "margin",        "gain_horizon", "pack",
      "gang_wait",     "wide_gangs",   "quota",
      "limit",         "spare",        "spare_loose",
      "headroom",      "keep",         "slo_target",
      "slo_reserve",   "slo_buffer",   "variant_spare",
      "surge",         "surge_ratio",  "envelope",
      "hold_quantile", "faster_later", "move_up",
      "trade",         "urgency",      "priority_doubling",
      "variants"};
  return keys;
}

}  // namespace

void RegisterAirtime(PolicyRegistry& registry) {
  registry.Register(
      "airtime",
      "value density order, speed- and fragmentation-aware placement, forecast headroom, "
      "hold-or-hand-off for bursts, preemption only when it pays, model variants chosen with "
      "the allocation",
      AirtimeKeys(), [](const Cluster& cluster, const PolicyParams& params) {
        return MakeAirtimePolicy(cluster, params, "mix");
      });
  // Peers for services with model variants (not compared by default: without variants they
  // are airtime itself).
  registry.Register(
      "fixed-generalist",
      "airtime, but a service with model variants always runs its best-quality variant "
      "(what most clusters run)",
      AirtimeKeys(),
      [](const Cluster& cluster, const PolicyParams& params) {
        return MakeAirtimePolicy(cluster, params, "generalist");
      },
      /*compared=*/false);
  registry.Register(
      "cheapest-meeting-quality",
      "airtime, but a service with model variants serves each request class with the variant "
      "that needs the fewest GPUs per request among those meeting its quality floor "
      "(INFaaS-like)",
      AirtimeKeys(),
      [](const Cluster& cluster, const PolicyParams& params) {
        return MakeAirtimePolicy(cluster, params, "cheapest");
      },
      /*compared=*/false);
  registry.Register(
      "static-split",
      "airtime, but a service with model variants runs a fixed number of replicas per "
      "variant: the mix airtime would choose at the service's peak demand per class, held "
      "all day whatever the demand or the queue",
      AirtimeKeys(),
      [](const Cluster& cluster, const PolicyParams& params) {
        return MakeAirtimePolicy(cluster, params, "static");
      },
      /*compared=*/false);
}

}  // namespace airtime
