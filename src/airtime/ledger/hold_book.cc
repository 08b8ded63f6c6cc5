#include "airtime/ledger/hold_book.h"

#include <algorithm>
#include <cmath>

#include "airtime/model/workload.h"

namespace airtime {

void HoldSummary::Add(const HoldSummary& o) {
  holds += o.holds;
  handoffs += o.handoffs;
  holds_came += o.holds_came;
  handoffs_came += o.handoffs_came;
  held_gpu_hours += o.held_gpu_hours;
  protected_requests += o.protected_requests;
  protected_value += o.protected_value;
  forgone_value += o.forgone_value;
  earned_value += o.earned_value;
  lost_value += o.lost_value;
  regret += o.regret;
}

void HoldSummary::Add(const ScoredHold& s) {
  const HoldDecision& d = s.decision;
  if (d.hold()) {
    ++holds;
    holds_came += s.came ? 1 : 0;
    held_gpu_hours += s.held_replica_hours * d.replica_gpus;
  } else {
    ++handoffs;
    handoffs_came += s.came ? 1 : 0;
  }
  protected_requests += s.protected_requests;
  protected_value += s.protected_value;
  forgone_value += s.forgone_value;
  earned_value += s.earned_value;
  lost_value += s.lost_value;
  regret += s.regret;
}

void HoldBook::SetMaxClosed(size_t n) {
  max_closed_ = n;
  while (closed_.size() > max_closed_) {
    auto oldest = closed_.begin();
    dropped_[oldest->second.decision.name].Add(oldest->second);
    closed_.erase(oldest);
  }
}

void HoldBook::Close(size_t order, ScoredHold s) {
  closed_.emplace(order, std::move(s));
  SetMaxClosed(max_closed_);
}

void HoldBook::Record(const HoldDecision& d) {
  auto it = open_.find(d.service);
  if (it != open_.end()) {
    it->second.s.until = d.at;
    replaced_[d.service].push_back(std::move(it->second));
    open_.erase(it);
  }
  Open o;
  o.s.decision = d;
  o.order = next_order_++;
  open_.emplace(d.service, std::move(o));
}

void HoldBook::Accrue(Open& o, TimeMs from, TimeMs to, double demand_rps, bool standing) {
  const HoldDecision& d = o.s.decision;
  from = std::max(from, d.at);
  if (!standing) to = std::min(to, o.s.until + d.cold_start);
  if (to <= from) return;
  // The replicas this moment's demand needs: at least the service's minimum (what the needed
  // count when made shows above the demand's own).
  const double cap = std::max(d.capacity_rps, 1e-9);
  const int at_decision = ReplicasForRate(d.demand_rps, cap);
  const int floor = d.needed > at_decision ? d.needed : 0;
  const int need = std::max(floor, ReplicasForRate(demand_rps, cap));
  const int kept = d.needed + d.held;
  if (standing) {
    o.held_ms += static_cast<double>(to - from);
    if (kept > need) o.s.held_replica_hours += (kept - need) * ToHours(to - from);
  }
  if (o.last_need < 0) o.last_need = d.needed;
  // A rise: the demand needs more replicas than a moment ago. A scaler that kept only what
  // the demand needed would have had the earlier count ready for the rise's first cold start.
  if (o.rise_at != kNever && from >= o.rise_at + d.cold_start) o.rise_at = kNever;
  if (o.rise_at == kNever && need > o.last_need) {
    o.rise_at = from;
    o.rise_base = o.last_need;
  }
  o.last_need = need;
  if (o.rise_at == kNever) return;
  const double within_s =
      static_cast<double>(std::max<TimeMs>(0, std::min(to, o.rise_at + d.cold_start) - from)) /
      1000.0;
  if (within_s <= 0) return;
  if (d.hold()) {
    // What the kept replicas above the earlier count served of the rise.
    const double excess = demand_rps - static_cast<double>(o.rise_base) * d.capacity_rps;
    const double room = static_cast<double>(kept - o.rise_base) * d.capacity_rps;
    if (excess <= 1e-9 || room <= 0) return;
    o.s.came = true;
    const double served = std::min(excess, room) * within_s;
    o.s.protected_requests += served;
    o.s.protected_value += served * d.per_request;
  } else {
    // What one more warm replica would have served of the demand above those kept.
    const double excess = demand_rps - static_cast<double>(kept) * d.capacity_rps;
    if (excess <= 1e-9) return;
    o.s.came = true;
    o.s.lost_value += std::min(excess, d.capacity_rps) * within_s * d.per_request;
  }
}

void HoldBook::Advance(WorkloadId service, TimeMs from, TimeMs to, double demand_rps) {
  if (auto r = replaced_.find(service); r != replaced_.end()) {
    std::vector<Open>& list = r->second;
    for (Open& o : list) Accrue(o, from, to, demand_rps, false);
    // Retire those whose cold start after replacement is over.
    auto done = [&](const Open& o) { return o.s.until + o.s.decision.cold_start <= to; };
    for (Open& o : list)
      if (done(o)) Retire(o);
    list.erase(std::remove_if(list.begin(), list.end(), done), list.end());
    if (list.empty()) replaced_.erase(r);
  }
  if (auto it = open_.find(service); it != open_.end())
    Accrue(it->second, from, to, demand_rps, true);
}

void HoldBook::Rescore(ScoredHold& s, double held_ms) {
  const HoldDecision& d = s.decision;
  const double hours = held_ms / 3.6e6;
  s.hours = hours;
  if (d.hold()) {
    s.forgone_value = s.held_replica_hours * d.replica_gpus * d.waiting_density;
    s.regret = std::max(0.0, s.forgone_value - s.protected_value);
  } else {
    s.earned_value = d.replica_gpus * d.waiting_density * hours;
    s.regret = std::max(0.0, s.lost_value - s.earned_value);
  }
}

void HoldBook::Retire(Open& o) {
  Rescore(o.s, o.held_ms);
  Close(o.order, o.s);
}

void HoldBook::Finish(TimeMs end) {
  for (auto& [id, list] : replaced_)
    for (Open& o : list) Retire(o);
  replaced_.clear();
  for (auto& [id, o] : open_) {
    o.s.until = end;
    Retire(o);
  }
  open_.clear();
}

void HoldBook::End(WorkloadId service, TimeMs end) {
  if (auto r = replaced_.find(service); r != replaced_.end()) {
    for (Open& o : r->second) Retire(o);
    replaced_.erase(r);
  }
  if (auto it = open_.find(service); it != open_.end()) {
    it->second.s.until = std::max(end, it->second.s.decision.at);
    Retire(it->second);
    open_.erase(it);
  }
}

std::vector<std::pair<size_t, ScoredHold>> HoldBook::All() const {
  std::vector<std::pair<size_t, ScoredHold>> all(closed_.begin(), closed_.end());
  auto standing = [&](const Open& o) {
    ScoredHold s = o.s;
    Rescore(s, o.held_ms);
    all.emplace_back(o.order, std::move(s));
  };
  for (const auto& [id, list] : replaced_)
    for (const Open& o : list) standing(o);
  for (const auto& [id, o] : open_) standing(o);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return all;
}

std::vector<ScoredHold> HoldBook::Calls() const {
  std::vector<ScoredHold> out;
  for (auto& [order, s] : All()) out.push_back(std::move(s));
  return out;
}

std::map<std::string, HoldSummary> HoldBook::Summaries() const {
  std::map<std::string, HoldSummary> out = dropped_;
  for (const auto& [order, s] : All()) out[s.decision.name].Add(s);
  return out;
}

size_t HoldBook::size() const {
  size_t n = closed_.size() + open_.size();
  for (const auto& [id, list] : replaced_) n += list.size();
  return n;
}

HoldBookState HoldBook::Save(size_t max_calls) const {
  HoldBookState state;
  state.base = dropped_;
  std::vector<std::pair<size_t, ScoredHold>> all = All();
  const size_t skip = all.size() > max_calls ? all.size() - max_calls : 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i < skip) {
      state.base[all[i].second.decision.name].Add(all[i].second);
    } else {
      state.calls.push_back(std::move(all[i].second));
    }
  }
  return state;
}

void HoldBook::Carry(HoldBookState state, TimeMs closed_at) {
  for (auto& [name, h] : state.base) dropped_[name].Add(h);
  // Before every call of this book: shift this book's orders up (none yet, normally).
  const size_t n = state.calls.size();
  if (n > 0 && next_order_ > 0) {
    std::map<size_t, ScoredHold> closed;
    for (auto& [order, s] : closed_) closed.emplace(order + n, std::move(s));
    closed_ = std::move(closed);
    for (auto& [id, o] : open_) o.order += n;
    for (auto& [id, list] : replaced_)
      for (Open& o : list) o.order += n;
  }
  for (size_t i = 0; i < n; ++i) {
    ScoredHold& s = state.calls[i];
    if (s.until == kNever) s.until = closed_at;
    closed_.emplace(i, std::move(s));
  }
  next_order_ += n;
  SetMaxClosed(max_closed_);
}

}  // namespace airtime
