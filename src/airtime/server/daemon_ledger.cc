// Daemon: the GPU-hour ledger in the API, and kept across restarts (ledger_record.h).
#include <iostream>

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
                {"backend", BackendView()}};
  });
}

}  // namespace airtime
