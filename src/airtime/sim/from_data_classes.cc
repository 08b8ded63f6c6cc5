#include "airtime/sim/from_data_classes.h"

#include <algorithm>
#include <iterator>
#include <optional>

namespace airtime {
namespace {

// Appends (t, rps) unless the curve is at that rate already; a later point at the same time
// replaces the earlier one.
void Append(WallCurve& curve, TimeMs t, double rps) {
  if (!curve.empty() && curve.back().first == t) {
    curve.back().second = rps;
    if (curve.size() >= 2 && curve[curve.size() - 2].second == rps) curve.pop_back();
    return;
  }
  if (!curve.empty() && curve.back().second == rps) return;
  curve.emplace_back(t, rps);
}

// A class's recorded rate at `t`: its last step at or before `t`; none before its first.
std::optional<double> RecordedAt(const std::map<int, WallCurve>& steps, int c, TimeMs t) {
  auto s = steps.find(c);
  if (s == steps.end()) return std::nullopt;
  auto after = std::upper_bound(s->second.begin(), s->second.end(), t,
                                [](TimeMs x, const auto& p) { return x < p.first; });
  if (after == s->second.begin()) return std::nullopt;
  return std::prev(after)->second;
}

}  // namespace

ClassCurves RebuildClassCurves(const RealtimeProfile& rt, TimeMs submitted_at,
                               const std::map<int, WallCurve>& history,
                               const std::map<int, std::pair<TimeMs, double>>& last,
                               const std::map<int, WallCurve>& steps) {
  const int n = static_cast<int>(rt.classes.size());
  ClassCurves out;
  out.classes.resize(rt.classes.size());
  std::vector<double> initial(rt.classes.size());
  for (int c = 0; c < n; ++c) {
    initial[static_cast<size_t>(c)] = rt.ClassRpsAt(c, 0);
    Append(out.classes[static_cast<size_t>(c)], submitted_at, initial[static_cast<size_t>(c)]);
  }
  // The classes each variant serves by default.
  std::map<int, std::vector<int>> served;
  for (int c = 0; c < n; ++c)
    if (int v = rt.DefaultVariantFor(c); v >= 0) served[v].push_back(c);
  for (const auto& [v, classes] : served) {
    auto h = history.find(v);
    // One class: every member stores that class's rate; take any member's history.
    if (h == history.end() && n == 1 && !history.empty()) h = history.begin();
    if (h == history.end() || h->second.empty()) {
      // No history (the member was not replayed, or it was pruned): each class's recorded
      // steps, or else its last rate alone.
      for (int c : classes) {
        if (auto st = steps.find(c); st != steps.end()) {
          for (const auto& [t, rps] : st->second)
            Append(out.classes[static_cast<size_t>(c)], t, rps);
        } else if (auto l = last.find(c); l != last.end()) {
          Append(out.classes[static_cast<size_t>(c)], l->second.first, l->second.second);
        }
      }
      continue;
    }
    for (const auto& [t, sum] : h->second) {
      if (classes.size() == 1) {
        Append(out.classes[static_cast<size_t>(classes[0])], t, sum);
        continue;
      }
      // Known: a class's recorded step at or before t, a class at its last rate (reported
      // last at or before t), or one never reported (at its submitted rate throughout). The
      // others share the rest.
      double known = 0, weights = 0;
      std::vector<int> unknown;
      for (int c : classes) {
        auto l = last.find(c);
        if (std::optional<double> r = RecordedAt(steps, c, t)) {
          known += *r;
          Append(out.classes[static_cast<size_t>(c)], t, *r);
        } else if (l == last.end()) {
          known += initial[static_cast<size_t>(c)];
          Append(out.classes[static_cast<size_t>(c)], t, initial[static_cast<size_t>(c)]);
        } else if (l->second.first <= t) {
          known += l->second.second;
          Append(out.classes[static_cast<size_t>(c)], t, l->second.second);
        } else {
          unknown.push_back(c);
          weights += l->second.second;
        }
      }
      const double rest = std::max(0.0, sum - known);
      for (int c : unknown) {
        const double share = weights > 0 ? rest * last.at(c).second / weights
                                         : rest / static_cast<double>(unknown.size());
        Append(out.classes[static_cast<size_t>(c)], t, share);
      }
      if (unknown.size() >= 2) {
        out.estimated_until = std::max(out.estimated_until, t);
        for (int c : unknown)
          if (std::find(out.estimated.begin(), out.estimated.end(), c) == out.estimated.end())
            out.estimated.push_back(c);
      }
    }
  }
  for (WallCurve& curve : out.classes)
    std::stable_sort(curve.begin(), curve.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  std::sort(out.estimated.begin(), out.estimated.end());
  return out;
}

}  // namespace airtime
