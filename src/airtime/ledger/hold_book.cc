#include "airtime/ledger/hold_book.h"

#include <algorithm>

namespace airtime {

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
  if (standing) o.held_ms += static_cast<double>(to - from);
  const double excess = demand_rps - static_cast<double>(d.needed) * d.capacity_rps;
  if (excess <= 1e-9) {
    o.rise_at = kNever;
    return;
  }
  o.s.came = true;
  if (o.rise_at == kNever) o.rise_at = from;
  // The part of [from, to) within the rise's first cold start.
  const TimeMs window_end = o.rise_at + d.cold_start;
  const double within_s =
      static_cast<double>(std::max<TimeMs>(0, std::min(to, window_end) - from)) / 1000.0;
  if (within_s <= 0) return;
  if (d.hold()) {
    const double served = std::min(excess, static_cast<double>(d.held) * d.capacity_rps) * within_s;
    o.s.protected_requests += served;
    o.s.protected_value += served * d.per_request;
  } else {
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
    s.forgone_value = static_cast<double>(d.held) * d.replica_gpus * d.waiting_density * hours;
    s.regret = std::max(0.0, s.forgone_value - s.protected_value);
  } else {
    s.earned_value = d.replica_gpus * d.waiting_density * hours;
    s.regret = std::max(0.0, s.lost_value - s.earned_value);
  }
}

void HoldBook::Retire(Open& o) {
  Rescore(o.s, o.held_ms);
  closed_.emplace_back(o.order, o.s);
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

std::vector<ScoredHold> HoldBook::Calls() const {
  std::vector<std::pair<size_t, ScoredHold>> all = closed_;
  for (const auto& [id, list] : replaced_)
    for (const Open& o : list) {
      ScoredHold s = o.s;
      Rescore(s, o.held_ms);
      all.emplace_back(o.order, std::move(s));
    }
  for (const auto& [id, o] : open_) {
    ScoredHold s = o.s;
    Rescore(s, o.held_ms);
    all.emplace_back(o.order, std::move(s));
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<ScoredHold> out;
  out.reserve(all.size());
  for (auto& [order, s] : all) out.push_back(std::move(s));
  return out;
}

std::map<std::string, HoldSummary> HoldBook::Summaries() const {
  std::map<std::string, HoldSummary> out;
  auto add = [&](const ScoredHold& s) {
    HoldSummary& h = out[s.decision.name];
    const HoldDecision& d = s.decision;
    if (d.hold()) {
      ++h.holds;
      h.holds_came += s.came ? 1 : 0;
      h.held_gpu_hours += static_cast<double>(d.held) * d.replica_gpus * s.hours;
    } else {
      ++h.handoffs;
      h.handoffs_came += s.came ? 1 : 0;
    }
    h.protected_requests += s.protected_requests;
    h.protected_value += s.protected_value;
    h.forgone_value += s.forgone_value;
    h.earned_value += s.earned_value;
    h.lost_value += s.lost_value;
    h.regret += s.regret;
  };
  for (const auto& [order, s] : closed_) add(s);
  for (const auto& [id, list] : replaced_)
    for (const Open& o : list) {
      ScoredHold s = o.s;
      Rescore(s, o.held_ms);
      add(s);
    }
  for (const auto& [id, o] : open_) {
    ScoredHold s = o.s;
    Rescore(s, o.held_ms);
    add(s);
  }
  return out;
}

}  // namespace airtime
