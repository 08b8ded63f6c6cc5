#include "airtime/policies/airtime_policy.h"

#include <memory>

#include "airtime/base/strings.h"
#include "airtime/policies/fgd.h"
#include "airtime/policies/forecast_scale.h"
#include "airtime/policies/value_plugins.h"

namespace airtime {
namespace {

// ForecastScale is both the scale and a cycle plug-in; the policy owns it once as its
// scaler and reaches it from the cycle list through this forwarder.
class CycleForwarder : public CyclePlugin {
 public:
  explicit CycleForwarder(ForecastScale* target) : target_(target) {}
  std::string_view name() const override { return "forecast-scale"; }
  void BeforeAllocate(Engine& engine) override { target_->BeforeAllocate(engine); }
  void AfterAllocate(Engine& engine) override { target_->AfterAllocate(engine); }

 private:
  ForecastScale* target_;
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

}  // namespace

void RegisterAirtime(PolicyRegistry& registry) {
  registry.Register(
      "airtime",
      "value density order, speed- and fragmentation-aware placement, forecast headroom, "
      "hold-or-hand-off for bursts, preemption only when it pays",
      {"preemption", "lead", "hold_horizon", "margin", "gain_horizon"},
      [](const Cluster&, const PolicyParams& params) -> StatusOr<Policy> {
        const std::string preemption = params.GetString("preemption", "on");
        if (preemption != "on" && preemption != "off")
          return InvalidArgument(
              "policy 'airtime': parameter 'preemption': expected on or off, got '" + preemption +
              "'");
        ForecastScale::Options fo;
        auto lead = GetDuration(params, "lead", fo.lead);
        if (!lead.ok()) return lead.status();
        auto hold = GetDuration(params, "hold_horizon", fo.hold_horizon);
        if (!hold.ok()) return hold.status();
        fo.lead = *lead;
        fo.hold_horizon = *hold;
        ValuePreempt::Options po;
        auto margin = params.GetDouble("margin", po.margin);
        if (!margin.ok()) return margin.status();
        if (*margin < 1)
          return InvalidArgument("policy 'airtime': parameter 'margin' must be >= 1");
        po.margin = *margin;
        auto gain = GetDuration(params, "gain_horizon", po.gain_horizon);
        if (!gain.ok()) return gain.status();
        po.gain_horizon = *gain;

        Policy p;
        p.name = preemption == "on" ? "airtime" : "airtime-nopreempt";
        p.description = "value scheduler";
        p.queue_sort = std::make_unique<ValueOrder>();
        p.scores.emplace_back(std::make_unique<SpeedScore>(), 1000.0);
        p.scores.emplace_back(std::make_unique<FgdScore>(FgdScore::Options{}), 1.0);
        auto scale = std::make_unique<ForecastScale>(fo);
        ForecastScale* raw = scale.get();
        p.cycle.push_back(std::make_unique<CycleForwarder>(raw));
        p.permits.push_back(std::make_unique<BurstHold>(raw));
        p.scale = std::move(scale);
        if (preemption == "on") p.preempt = std::make_unique<ValuePreempt>(po);
        return p;
      });
}

}  // namespace airtime
