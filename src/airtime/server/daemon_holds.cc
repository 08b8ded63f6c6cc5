// Daemon: the 3 a.m. report in the API (GET /v1/holds), and kept across restarts
// (hold_record.h).
#include <iostream>
#include <unordered_map>
#include <unordered_set>

#include "airtime/ledger/hold_json.h"
#include "airtime/server/daemon.h"
#include "airtime/server/hold_record.h"

namespace airtime {

using nlohmann::json;

TimeMs WallNow();

namespace {
constexpr const char* kHoldsKey = "holds";
}

std::string Daemon::CarryHolds() {
  const std::optional<std::string> text = store_->GetMeta(kHoldsKey);
  if (!text) return "";
  StatusOr<HoldRecord> saved = DecodeHoldRecord(*text);
  if (!saved.ok()) return "holds: " + saved.status().message() + "; starting anew";
  const size_t calls = saved->state.calls.size();
  holds_.Carry(std::move(saved->state), saved->saved_at);
  return "holds: " + std::to_string(calls) + " call(s) carried on";
}

void Daemon::SaveHolds(TimeMs now) {
  AccountValue(now);                                             // scores up to now
  if (holds_.size() == 0 && holds_.Summaries().empty()) return;  // no call yet: nothing to say
  HoldRecord r;
  r.saved_at = value_at_;
  r.state = holds_.Save(options_.saved_hold_calls);
  if (Status st = store_->SetMeta(kHoldsKey, EncodeHoldRecord(r)); !st.ok())
    std::cerr << "airtime server: saving the 3 a.m. report: " << st.message() << "\n";
}

StatusOr<json> Daemon::Holds(const Caller& caller, const HoldsFilter& filter) {
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    const TimeMs now = std::max(WallNow(), engine_->now());
    ledger_->Advance(now);
    AccountValue(now);
    // `service`: a realtime service, or one with model variants, whose calls name the service
    // (VariantMix::RecordHolds). A name the caller cannot see is as unknown as one that does
    // not exist: the same 404 (Resolve), so a tenant cannot tell them apart.
    std::unordered_set<std::string> named;
    if (!filter.service.empty()) {
      auto t = Resolve(caller, filter.service);
      if (!t.ok()) return t.status();
      const WorkloadRec& first = *t->recs.front();
      if (!first.spec->is_service())
        return InvalidArgument("query 'service': workload '" + t->name + "' is " + first.row.kind +
                               ", not a realtime service: it makes no hold-or-hand-off call");
      named.insert(t->name);
      for (const WorkloadRec* w : t->recs) {
        named.insert(w->row.name);
        if (w->spec->realtime.is_member()) named.insert(w->spec->realtime.group);
      }
    }
    // A tenant sees its own services' calls: names are unique over the data directory's
    // life, so a call's service name finds its workload (and tenant) after a restart too.
    // Once per name: one service makes many calls, and a let-go one is read from the store.
    std::unordered_map<std::string, bool> seen;
    auto visible = [&](const std::string& name) {
      if (!filter.service.empty() && !named.count(name)) return false;
      if (caller.admin) return true;
      if (auto it = seen.find(name); it != seen.end()) return it->second;
      const WorkloadRec* w = Lookup(name);
      if (w == nullptr) {  // a service with variants: its members'
        const std::vector<WorkloadRec*> members = MembersOf(name);
        w = members.empty() ? nullptr : members.front();
      }
      return seen[name] = w && w->row.tenant == caller.tenant;
    };
    std::map<std::string, HoldSummary> summaries;
    for (const auto& [name, h] : holds_.Summaries())
      if (visible(name)) summaries.emplace(name, h);
    std::vector<ScoredHold> calls;
    for (ScoredHold& s : holds_.Calls())
      if (visible(s.decision.name)) calls.push_back(std::move(s));
    const size_t kept = calls.size();
    const size_t limit = static_cast<size_t>(std::clamp(filter.limit, 1, kMaxHoldsLimit));
    if (calls.size() > limit)
      calls.erase(calls.begin(), calls.begin() + static_cast<std::ptrdiff_t>(calls.size() - limit));
    json out = HoldsToJson(summaries, calls);
    out["now"] = now;
    out["decisions_kept"] = kept;
    return out;
  });
}

}  // namespace airtime
