// Daemon: the GPU-hour ledger in the API, and kept across restarts (ledger_record.h).
#include <cmath>
#include <iostream>

#include "airtime/ledger/cost_json.h"
#include "airtime/model/gpu_cost.h"
#include "airtime/server/daemon.h"
#include "airtime/server/ledger_record.h"

namespace airtime {

using nlohmann::json;

TimeMs WallNow();

namespace {
constexpr const char* kLedgerKey = "ledger";
}

std::string Daemon::CarryLedger(TimeMs now) {
  ledger_since_ = ledger_->last();
  const std::optional<std::string> text = store_->GetMeta(kLedgerKey);
  if (!text) return "ledger: counting from now";
  StatusOr<LedgerRecord> saved = DecodeLedgerRecord(*text);
  if (!saved.ok()) return "ledger: " + saved.status().message() + "; counting anew from now";
  // The time between the last save and this start: nobody saw where it went.
  const DurationMs gap = std::max<DurationMs>(0, ledger_->last() - saved->saved_at);
  ledger_->Carry(saved->totals);
  value_carried_ += saved->value;
  value_by_type_carried_ = saved->value_by_type;
  ledger_since_ = saved->since;
  unobserved_ = saved->unobserved + gap;
  next_ledger_save_ = now + options_.ledger_save_interval;
  return "ledger: carried on over " + FormatDuration(ledger_->last() - ledger_since_) + ", " +
         FormatDuration(unobserved_) + " of it not observed";
}

void Daemon::SaveLedger(TimeMs now) {
  ledger_->Advance(now);
  AccountValue(now);
  LedgerRecord r;
  r.since = ledger_since_;
  r.saved_at = ledger_->last();
  r.unobserved = unobserved_;
  r.totals = ledger_->totals();
  r.value = ValueEarned();
  r.value_by_type = ValueByType();
  if (Status st = store_->SetMeta(kLedgerKey, EncodeLedgerRecord(r)); !st.ok())
    std::cerr << "airtime server: saving the ledger: " << st.message() << "\n";
}

StatusOr<json> Daemon::Ledger(const Caller&) {
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    const TimeMs now = std::max(WallNow(), engine_->now());
    ledger_->Advance(now);
    AccountValue(now);
    const LedgerTotals& t = ledger_->totals();
    json buckets = json::object();
    for (int b = 0; b < kBucketCount; ++b)
      buckets[BucketName(static_cast<Bucket>(b))] =
          static_cast<double>(t.milli_ms[static_cast<size_t>(b)]) / 1e6;
    const double installed_h = t.installed_gpu_hours();
    return json{{"since", ledger_since_},
                {"now", now},
                {"daemon_started", started_at_},
                {"unobserved_seconds", static_cast<double>(unobserved_) / 1000},
                {"installed_gpu_seconds", static_cast<double>(t.installed_milli_ms) / 1e6},
                {"buckets", buckets},
                {"value", ValueEarned()},
                {"return_per_gpu_hour", installed_h > 0 ? ValueEarned() / installed_h : 0.0},
                {"costs", CostsToJson(Costs())},
                {"backend", BackendView()}};
  });
}

std::vector<double> Daemon::ValueByType() const {
  std::vector<double> v = books_->summary().value_by_type;
  if (v.size() < value_by_type_carried_.size()) v.resize(value_by_type_carried_.size(), 0.0);
  for (size_t t = 0; t < value_by_type_carried_.size(); ++t) v[t] += value_by_type_carried_[t];
  return v;
}

void Daemon::CountPower(const GpuSample& sample) {
  if (!sample.power_w || !std::isfinite(*sample.power_w) || *sample.power_w < 0) return;
  auto g = gpu_of_uuid_.find(sample.uuid);
  if (g == gpu_of_uuid_.end()) return;
  const auto type = static_cast<size_t>(engine_->cluster().gpu_type(g->second));
  if (power_by_type_.size() <= type) power_by_type_.resize(type + 1, {0.0, 0});
  power_by_type_[type].first += *sample.power_w;
  ++power_by_type_[type].second;
}

CostSummary Daemon::Costs() const {
  const GpuCatalog& catalog = engine_->cluster().catalog();
  std::vector<std::optional<double>> measured(catalog.size());
  for (size_t t = 0; t < power_by_type_.size() && t < measured.size(); ++t)
    if (power_by_type_[t].second > 0)
      measured[t] = power_by_type_[t].first / static_cast<double>(power_by_type_[t].second);
  const std::vector<GpuCost> costs = DefaultGpuCosts(catalog);
  return ComputeCosts(ledger_->totals(), ValueEarned(), ValueByType(), HourlyRates(costs, measured),
                      PricedTypes(costs), catalog);
}

}  // namespace airtime
