#include "airtime/model/variant_route.h"

#include <algorithm>
#include <numeric>

namespace airtime {

VariantRoute RouteRequests(const RealtimeProfile& rt, const std::vector<double>& capacity,
                           const std::vector<double>& demand,
                           const std::vector<std::vector<double>>& share) {
  const size_t nv = rt.variants.size();
  const size_t nc = demand.size();
  VariantRoute r;
  r.served.assign(nv, std::vector<double>(nc, 0.0));
  std::vector<double> left(demand.begin(), demand.end());
  for (double& d : left) d = std::max(0.0, d);
  r.demand_rps = std::accumulate(left.begin(), left.end(), 0.0);
  std::vector<double> spare(nv, 0.0);
  for (size_t v = 0; v < nv && v < capacity.size(); ++v) spare[v] = std::max(0.0, capacity[v]);
  // The policy's routing first: each variant takes its share of each class it serves, at most
  // its capacity (in proportion when the shares ask for more).
  for (size_t v = 0; v < nv && v < share.size(); ++v) {
    if (share[v].empty()) continue;
    std::vector<double> want(nc, 0.0);
    double total = 0;
    for (size_t c = 0; c < nc && c < share[v].size(); ++c) {
      if (!rt.variants[v].Serves(static_cast<int>(c))) continue;
      want[c] = std::clamp(share[v][c], 0.0, 1.0) * std::max(0.0, demand[c]);
      total += want[c];
    }
    const double scale = total > spare[v] && total > 0 ? spare[v] / total : 1.0;
    for (size_t c = 0; c < nc; ++c) {
      const double take = std::min(left[c], want[c] * scale);
      r.served[v][c] += take;
      left[c] -= take;
      spare[v] -= take;
    }
    spare[v] = std::max(0.0, spare[v]);
  }
  // The rest: to the variants with capacity to spare, the best quality first; within one
  // variant, the classes fewest variants serve first (a specialist's class has no other).
  std::vector<size_t> order(nv);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return rt.variants[a].quality > rt.variants[b].quality;
  });
  std::vector<int> servers(nc, 0);
  for (size_t c = 0; c < nc; ++c)
    for (size_t v = 0; v < nv; ++v) servers[c] += rt.variants[v].Serves(static_cast<int>(c));
  std::vector<size_t> classes(nc);
  std::iota(classes.begin(), classes.end(), size_t{0});
  std::stable_sort(classes.begin(), classes.end(),
                   [&](size_t a, size_t b) { return servers[a] < servers[b]; });
  for (size_t v : order) {
    for (size_t c : classes) {
      if (spare[v] <= 0) break;
      if (left[c] <= 0 || !rt.variants[v].Serves(static_cast<int>(c))) continue;
      const double take = std::min(left[c], spare[v]);
      r.served[v][c] += take;
      left[c] -= take;
      spare[v] -= take;
    }
  }
  for (size_t v = 0; v < nv; ++v)
    for (size_t c = 0; c < nc; ++c) {
      r.served_rps += r.served[v][c];
      r.quality_rps += r.served[v][c] * rt.variants[v].quality;
    }
  KeepQualityFloor(rt, r);
  return r;
}

void KeepQualityFloor(const RealtimeProfile& rt, VariantRoute& r) {
  const double floor = rt.quality_floor;
  if (floor <= 0 || r.served_rps <= 0 || r.MeanQuality() >= floor - 1e-12) return;
  // The variants below the floor, the lowest quality first: taking x requests/s from a
  // variant of quality q < floor raises the mean to the floor when
  // (quality_rps - q x) / (served_rps - x) = floor, i.e. x = (floor served - quality) / (floor -
  // q).
  std::vector<size_t> below;
  for (size_t v = 0; v < rt.variants.size() && v < r.served.size(); ++v)
    if (rt.variants[v].quality < floor) below.push_back(v);
  std::stable_sort(below.begin(), below.end(), [&](size_t a, size_t b) {
    return rt.variants[a].quality < rt.variants[b].quality;
  });
  for (size_t v : below) {
    const double short_by = floor * r.served_rps - r.quality_rps;
    if (short_by <= 1e-12) break;
    const double q = rt.variants[v].quality;
    const double has = std::accumulate(r.served[v].begin(), r.served[v].end(), 0.0);
    if (has <= 0) continue;
    const double shed = std::min(has, short_by / (floor - q));
    // From each class it serves, in proportion.
    for (double& x : r.served[v]) x -= x * (shed / has);
    r.served_rps -= shed;
    r.quality_rps -= shed * q;
  }
  r.served_rps = std::max(0.0, r.served_rps);
  r.quality_rps = std::max(0.0, r.quality_rps);
}

}  // namespace airtime
