#include "airtime/policies/airtime/variant_mix.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "airtime/engine/variant_load.h"

namespace airtime {
namespace {

// Shares equal within a rounding error: the same plan.
bool SameShares(const VariantMix::Shares& a, const VariantMix::Shares& b) {
  if (a.size() != b.size()) return false;
  for (size_t v = 0; v < a.size(); ++v) {
    if (a[v].size() != b[v].size()) return false;
    for (size_t c = 0; c < a[v].size(); ++c)
      if (std::abs(a[v][c] - b[v][c]) > 1e-9) return false;
  }
  return true;
}

// Whether variant `v` may take a share of class `c`: it is available (produced, if work
// makes it) and serves the class.
bool Usable(const RealtimeProfile& rt, const std::vector<bool>& available, size_t v, size_t c) {
  return v < available.size() && available[v] && rt.variants[v].Serves(static_cast<int>(c));
}

// What a GPU of a replica of `mv` earns per hour serving `rps` requests/s: the value per
// request x the variant's quality x requests per hour, over the replica's GPUs (0 without).
double EarnsPerGpuHour(const WorkloadSpec& spec, const ModelVariant& mv, double rps,
                       const GpuCatalog& catalog) {
  const double gpus = static_cast<double>(mv.shape.TotalMilli(catalog)) / 1000.0;
  return gpus > 0 ? spec.value.per_1k_requests / 1000.0 * 3600 * rps * mv.quality / gpus : 0.0;
}

}  // namespace

const VariantMix::State* VariantMix::state(const std::string& service) const {
  auto it = groups_.find(service);
  return it == groups_.end() ? nullptr : &it->second.st;
}

VariantMix::Group& VariantMix::GroupOf(const Job& member, const Engine& engine) {
  const RealtimeProfile& rt = member.s().realtime;
  Group& g = groups_[rt.group];
  const size_t nv = rt.variants.size();
  if (g.members.size() != nv) {
    g.members.assign(nv, kNoWorkload);
    g.short_since.assign(nv, kNever);
    g.targets.assign(nv, 0);
  }
  // Members arrive one by one: find them all whenever one is missing.
  if (std::find(g.members.begin(), g.members.end(), kNoWorkload) != g.members.end()) {
    for (WorkloadId id : engine.services()) {
      const RealtimeProfile& o = engine.job(id).s().realtime;
      if (o.is_member() && o.group == rt.group && static_cast<size_t>(o.variant) < nv)
        g.members[static_cast<size_t>(o.variant)] = id;
    }
  }
  return g;
}

bool VariantMix::Stale(const Engine& engine) const {
  for (const auto& [name, g] : groups_) {
    if (g.cycle != engine.cycles()) continue;  // not planned in this cycle
    for (size_t v = 0; v < g.members.size(); ++v) {
      const WorkloadId id = g.members[v];
      if (id == kNoWorkload || engine.job(id).phase == JobPhase::kCancelled) continue;
      const double density = density_(engine.job(id), engine);
      if (std::abs(density - g.in.price.of(v)) > 1e-9 * std::max(1.0, density)) return true;
    }
    if (g.floor_paired >= 0 && AtFloorLive(g, engine) > g.floor_paired) return true;
  }
  return false;
}

int VariantMix::AtFloorLive(const Group& g, const Engine& engine) {
  int n = 0;
  for (WorkloadId id : g.members) {
    if (id == kNoWorkload) continue;
    const Job& m = engine.job(id);
    const RealtimeProfile& rt = m.s().realtime;
    if (rt.variants[static_cast<size_t>(rt.variant)].quality >= rt.quality_floor)
      n += m.live_replicas();
  }
  return n;
}

void VariantMix::PairWithFloor(Group& g, const RealtimeProfile& rt, const Engine& engine,
                               std::vector<int>& plan) const {
  g.floor_paired = -1;
  const double floor = rt.quality_floor;
  if (floor <= 0) return;
  // Quality to spare: what the placed replicas at or above the floor serve beyond it; what
  // the plan's replicas below it would take from that.
  double spare = 0, need = 0;
  for (size_t v = 0; v < g.members.size() && v < plan.size(); ++v) {
    if (g.members[v] == kNoWorkload) continue;
    const ModelVariant& mv = rt.variants[v];
    const double t = mv.PlanningThroughput();
    if (mv.quality >= floor)
      spare += engine.job(g.members[v]).live_replicas() * t * (mv.quality - floor);
    else
      need += plan[v] * t * (floor - mv.quality);
  }
  if (need <= spare + 1e-9) return;
  const double k = spare / need;
  for (size_t v = 0; v < g.members.size() && v < plan.size(); ++v)
    if (g.members[v] != kNoWorkload && rt.variants[v].quality < floor)
      plan[v] = std::min(plan[v], static_cast<int>(std::ceil(plan[v] * k - 1e-9)));
  g.floor_paired = AtFloorLive(g, engine);
}

TimeMs VariantMix::NextLook(const Engine& engine) const {
  TimeMs next = kNever;
  for (const auto& [name, g] : groups_) {
    if (g.cycle != engine.cycles()) continue;  // not planned in this cycle
    for (TimeMs since : g.short_since)
      if (since != kNever && since + o_.lead > engine.now()) next = std::min(next, since + o_.lead);
  }
  return next;
}

int VariantMix::Target(const Job& member, const Engine& engine) {
  Group& g = GroupOf(member, engine);
  if (g.cycle != engine.cycles()) PlanAll(engine);
  return g.targets[static_cast<size_t>(member.s().realtime.variant)];
}

const Job* VariantMix::FirstLive(const Group& g, const Engine& engine) {
  for (WorkloadId id : g.members)
    if (id != kNoWorkload && engine.job(id).phase != JobPhase::kCancelled) return &engine.job(id);
  return nullptr;
}

VariantMix::Rates VariantMix::ServedNow(const Group& g, const Engine& engine) const {
  Rates r;
  const Job* first = FirstLive(g, engine);
  if (first == nullptr) return r;
  const RealtimeProfile& rt = first->s().realtime;
  const size_t nv = rt.variants.size();
  // As the serving model counts it (RouteRequests, what the ledger's SLO attainment reads):
  // the routing the members get (Routing), within their ready replicas, the rest to any
  // variant with room, the quality floor kept.
  std::vector<double> capacity(nv, 0.0);
  double most = 0;  // what the available variants' max_replicas could serve at all
  for (size_t v = 0; v < nv && v < g.members.size(); ++v) {
    if (g.members[v] == kNoWorkload) continue;
    const Job& m = engine.job(g.members[v]);
    if (m.phase == JobPhase::kCancelled) continue;
    capacity[v] = ReadyCapacity(engine, m);
    if (engine.VariantAvailable(rt, v))
      most += rt.variants[v].max_replicas * rt.variants[v].PlanningThroughput();
  }
  std::vector<double> demand(rt.classes.size(), 0.0);
  for (size_t c = 0; c < demand.size() && c < first->class_rps.size(); ++c)
    demand[c] = std::max(0.0, first->class_rps[c]);
  const Shares share = o_.mode == Mode::kMix ? RouteNow(g, engine) : g.st.shares;
  const VariantRoute route = RouteRequests(rt, capacity, demand, share);
  // Demand beyond what max_replicas serve is missed whatever the plan keeps: it would hold
  // the budget spent for good (as ForecastScale's books leave it out).
  r.demand_rps = std::min(route.demand_rps, most);
  r.served_rps = std::min(route.served_rps, r.demand_rps);
  return r;
}

void VariantMix::PlanAll(const Engine& engine) {
  // Every service is planned on the same state of the cluster, before any scales.
  std::vector<Group*> live;
  const TimeMs now = engine.now();
  for (auto& [name, g] : groups_) {
    if (g.cycle == engine.cycles()) continue;
    g.cycle = engine.cycles();
    g.books.Advance(now);  // the error budget up to now, at the rates of the last cycle
    if (Prepare(g, engine)) live.push_back(&g);
  }
  if (o_.mode == Mode::kMix && live.size() >= 2) ShareContended(live, engine);
  for (Group* g : live) {
    Decide(*g, engine);
    // The rates until the next cycle: the demand now, and what the replicas ready now serve
    // of it under the plan in force.
    const Rates r = ServedNow(*g, engine);
    g->books.demand_rps = r.demand_rps;
    g->books.served_rps = r.served_rps;
  }
}

VariantMix::TypeMilli VariantMix::PerType(const RealtimeProfile& rt,
                                          const std::vector<int64_t>& milli,
                                          const TypeMilli& budget) {
  TypeMilli out(budget.size(), 0);
  for (size_t v = 0; v < milli.size() && v < rt.variants.size(); ++v) {
    if (milli[v] <= 0) continue;
    int64_t room = 0;
    size_t any = budget.size();
    for (const auto& [t, rps] : rt.variants[v].throughput_rps) {
      const auto ti = static_cast<size_t>(t);
      if (rps <= 0 || ti >= budget.size()) continue;
      room += std::max<int64_t>(budget[ti], 0);
      any = ti;
    }
    if (any == budget.size()) continue;  // runs on no type of the cluster
    int64_t left = milli[v];
    for (const auto& [t, rps] : rt.variants[v].throughput_rps) {
      const auto ti = static_cast<size_t>(t);
      if (rps <= 0 || ti >= budget.size() || ti == any) continue;
      const int64_t part =
          room > 0 ? milli[v] * std::max<int64_t>(budget[ti], 0) / room : 0;  // none: all on `any`
      out[ti] += part;
      left -= part;
    }
    out[any] += left;
  }
  return out;
}

void VariantMix::ShareContended(const std::vector<Group*>& groups, const Engine& engine) const {
  const GpuCatalog& catalog = engine.catalog();
  const size_t nt = catalog.size(), n = groups.size();
  // A type's GPUs: free, preemptible jobs', and those the services hold.
  TypeMilli pool(nt, 0);
  for (size_t t = 0; t < nt; ++t)
    pool[t] = engine.state().free_milli_of_type(static_cast<GpuTypeId>(t));
  for (const auto& [id, a] : engine.allocations()) {
    const Job& j = engine.job(a.workload);
    if (j.is_service() || !j.s().preemptible || a.placement.gpus.empty()) continue;
    pool[static_cast<size_t>(engine.cluster().gpu_type(a.placement.gpus.front()))] +=
        a.placement.total_milli();
  }
  for (const Group* g : groups)
    for (size_t t = 0; t < nt && t < g->in.own.size(); ++t) pool[t] += g->in.own[t];
  // What each service's plan would need per type if it had all of them (not only what it
  // holds and what is free: that would favour the service that came first), what a GPU of
  // each type earns for it, and the size of its largest replica there (shares are cut in
  // whole replicas of it).
  std::vector<TypeMilli> need(n), unit(n, TypeMilli(nt, 1));
  std::vector<std::vector<double>> earns(n, std::vector<double>(nt, 0.0));
  for (size_t i = 0; i < n; ++i) {
    const Inputs& in = groups[i]->in;
    const RealtimeProfile& rt = in.spec->realtime;
    const Figures f = Evaluate(
        *in.spec, Search(*in.spec, in.demand, in.price, in.spare, pool, in.available, catalog),
        in.demand, in.price, in.spare, pool, in.available, catalog);
    std::vector<int64_t> firm(rt.variants.size(), 0);
    for (size_t v = 0; v < firm.size() && v < f.firm.size(); ++v)
      firm[v] = f.firm[v] * rt.variants[v].shape.TotalMilli(catalog);
    need[i] = PerType(rt, firm, pool);
    for (size_t v = 0; v < firm.size(); ++v)
      if (firm[v] > 0)
        for (const auto& [t, rps] : rt.variants[v].throughput_rps)
          if (rps > 0 && static_cast<size_t>(t) < nt)
            unit[i][static_cast<size_t>(t)] =
                std::max(unit[i][static_cast<size_t>(t)], rt.variants[v].shape.TotalMilli(catalog));
    for (size_t v = 0; v < rt.variants.size(); ++v) {
      if (!in.available[v]) continue;
      for (const auto& [t, rps] : rt.variants[v].throughput_rps)
        if (static_cast<size_t>(t) < nt)
          earns[i][static_cast<size_t>(t)] =
              std::max(earns[i][static_cast<size_t>(t)],
                       EarnsPerGpuHour(*in.spec, rt.variants[v], rps, catalog));
    }
  }
  for (size_t t = 0; t < nt; ++t) {
    int64_t total = 0;
    int wanting = 0;
    for (size_t i = 0; i < n; ++i) {
      total += need[i][t];
      wanting += need[i][t] > 0;
    }
    if (wanting < 2 || total <= pool[t]) continue;
    // Each keeps what it holds there, up to its need: moving GPUs from one service to another
    // costs cold starts, so only ImproveSplit below moves them, for a gain that repays that.
    // The rest is water-filled: in proportion to what each needs more x what a GPU earns for
    // it, none above its need; then in whole replicas of its unit (down, and what that leaves
    // to the largest remainders while it lasts).
    std::vector<int64_t> share(n, 0), more(n, 0);
    int64_t left = pool[t];
    for (size_t i = 0; i < n; ++i) {
      share[i] = std::min(groups[i]->in.own[t], need[i][t]);
      more[i] = need[i][t] - share[i];
      left -= share[i];
    }
    std::vector<int64_t> fill(n, 0);
    std::vector<bool> open(n, false);
    for (size_t i = 0; i < n; ++i) open[i] = more[i] > 0;
    int64_t to_fill = left;
    for (bool capped = true; capped;) {
      capped = false;
      double weight = 0;
      for (size_t i = 0; i < n; ++i)
        if (open[i]) weight += static_cast<double>(more[i]) * std::max(earns[i][t], 1e-9);
      for (size_t i = 0; i < n && weight > 0; ++i) {
        if (!open[i]) continue;
        const double w = static_cast<double>(more[i]) * std::max(earns[i][t], 1e-9);
        if (static_cast<double>(to_fill) * w / weight >= static_cast<double>(more[i])) {
          fill[i] = more[i];
          to_fill -= more[i];
          open[i] = false;
          capped = true;
        }
      }
      if (capped) continue;
      for (size_t i = 0; i < n && weight > 0; ++i)
        if (open[i])
          fill[i] =
              static_cast<int64_t>(static_cast<double>(to_fill) * static_cast<double>(more[i]) *
                                   std::max(earns[i][t], 1e-9) / weight);
    }
    std::vector<size_t> order;
    std::vector<double> rest(n, 0.0);
    for (size_t i = 0; i < n; ++i) {
      const int64_t whole = (share[i] + fill[i]) / unit[i][t] * unit[i][t];
      const int64_t add = std::max(whole, share[i]) - share[i];
      rest[i] = static_cast<double>(fill[i] - add) / static_cast<double>(unit[i][t]);
      if (fill[i] > add) order.push_back(i);
      share[i] += add;
      left -= add;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return rest[a] > rest[b]; });
    for (size_t i : order)
      if (left >= unit[i][t] && share[i] + unit[i][t] <= need[i][t]) {
        share[i] += unit[i][t];
        left -= unit[i][t];
      }
    // Then whole replicas move between services (or from what rounding left) while that
    // raises the sum of their plans' worth: the split by need is blind to which service can
    // move its requests to other variants at little cost and which would drop them. Each
    // move costs a search per service, so only among a few (a tenant could submit many).
    if (wanting <= kSplitServices) ImproveSplit(groups, t, need, unit, earns, share, left, catalog);
    char buf[200];
    for (size_t i = 0; i < n; ++i) {
      Inputs& in = groups[i]->in;
      if (in.cap.size() != nt) in.cap.assign(nt, -1);
      // A service that needs none of the type keeps what it holds there and takes no more.
      in.cap[t] = need[i][t] > 0 ? share[i] : in.own[t];
      in.budget[t] = in.cap[t];
      std::snprintf(buf, sizeof buf,
                    "%s%s: %.1f of the %.1f GPUs there (%d services' plans alone would need "
                    "%.1f)",
                    groups[i]->st.shared.empty() ? "" : "; ",
                    catalog.type(static_cast<GpuTypeId>(t)).name.c_str(),
                    static_cast<double>(in.cap[t]) / 1000.0, static_cast<double>(pool[t]) / 1000.0,
                    wanting, static_cast<double>(total) / 1000.0);
      groups[i]->st.shared += buf;
    }
  }
}

double VariantMix::WorthWithin(const Inputs& in, size_t t, int64_t milli,
                               const GpuCatalog& catalog) const {
  TypeMilli budget = in.budget;
  budget[t] = milli;
  const Shares s = Search(*in.spec, in.demand, in.price, in.spare, budget, in.available, catalog);
  const Figures f =
      Evaluate(*in.spec, s, in.demand, in.price, in.spare, budget, in.available, catalog);
  // Replicas beyond the budget would not be placed: their share of the value is not earned.
  const double value = f.worth + f.held;
  const double lost =
      f.milli > 0 ? value * static_cast<double>(f.over_milli) / static_cast<double>(f.milli) : 0.0;
  return f.worth - lost - (f.floor_ok ? 0.0 : std::abs(value));
}

void VariantMix::ImproveSplit(const std::vector<Group*>& groups, size_t t,
                              const std::vector<TypeMilli>& need,
                              const std::vector<TypeMilli>& unit,
                              const std::vector<std::vector<double>>& earns,
                              std::vector<int64_t>& share, int64_t& left,
                              const GpuCatalog& catalog) const {
  const size_t n = groups.size();
  std::map<std::pair<size_t, int64_t>, double> memo;
  auto worth = [&](size_t i, int64_t milli) {
    const auto key = std::make_pair(i, milli);
    auto it = memo.find(key);
    if (it == memo.end())
      it = memo.emplace(key, WorthWithin(groups[i]->in, t, milli, catalog)).first;
    return it->second;
  };
  for (int round = 0; round < kSplitMoves; ++round) {
    double best = 1e-6;
    size_t from = n, to = n;
    for (size_t j = 0; j < n; ++j) {
      const int64_t u = unit[j][t];
      if (need[j][t] <= 0 || share[j] + u > need[j][t]) continue;
      const double gain = worth(j, share[j] + u) - worth(j, share[j]);
      if (gain <= best) continue;
      if (left >= u) {  // from what rounding left: no one loses
        best = gain;
        from = n;
        to = j;
      }
      // A move between services must repay, over `payback`, the cold start of the replica it
      // starts, at the higher of the two services' value per GPU-hour there.
      DurationMs cold = 0;
      for (const ModelVariant& mv : groups[j]->in.spec->realtime.variants)
        for (const auto& [type, rps] : mv.throughput_rps)
          if (static_cast<size_t>(type) == t && rps > 0) cold = std::max(cold, mv.cold_start);
      for (size_t i = 0; i < n; ++i) {
        if (i == j || share[i] < u) continue;
        const double cost = static_cast<double>(u) / 1000.0 * ToHours(cold) *
                            std::max(earns[i][t], earns[j][t]) / ToHours(o_.payback);
        const double net = gain - (worth(i, share[i]) - worth(i, share[i] - u)) - cost;
        if (net > best) {
          best = net;
          from = i;
          to = j;
        }
      }
    }
    if (to == n) return;
    const int64_t u = unit[to][t];
    share[to] += u;
    if (from == n)
      left -= u;
    else
      share[from] -= u;
  }
}

void VariantMix::CapSparesToShare(const Group& g, const RealtimeProfile& rt,
                                  const GpuCatalog& catalog, std::vector<int>& plan) {
  if (g.in.cap.empty()) return;
  const Figures& f = g.st.figures;
  std::vector<int64_t> milli(plan.size(), 0);
  for (;;) {
    for (size_t v = 0; v < plan.size(); ++v)
      milli[v] = plan[v] * rt.variants[v].shape.TotalMilli(catalog);
    const TypeMilli used = PerType(rt, milli, g.in.budget);
    // The most spares on a type beyond its split give one back.
    size_t cut = plan.size();
    for (size_t t = 0; t < used.size() && t < g.in.cap.size(); ++t) {
      if (g.in.cap[t] < 0 || used[t] <= g.in.cap[t]) continue;
      for (size_t v = 0; v < plan.size(); ++v) {
        bool runs_there = false;
        for (const auto& [type, rps] : rt.variants[v].throughput_rps)
          runs_there = runs_there || (static_cast<size_t>(type) == t && rps > 0);
        const int spares = plan[v] - (v < f.firm.size() ? f.firm[v] : 0);
        if (!runs_there || spares <= 0) continue;
        if (cut == plan.size() || spares > plan[cut] - f.firm[cut]) cut = v;
      }
    }
    if (cut == plan.size()) return;
    --plan[cut];
  }
}

std::vector<double> VariantMix::Routing(const Job& member, const Engine& engine) {
  Group& g = GroupOf(member, engine);
  const auto v = static_cast<size_t>(member.s().realtime.variant);
  if (o_.mode != Mode::kMix) return v < g.st.shares.size() ? g.st.shares[v] : std::vector<double>{};
  if (g.routed != engine.cycles()) {
    g.route = RouteNow(g, engine);
    g.routed = engine.cycles();
  }
  return v < g.route.size() ? g.route[v] : std::vector<double>{};
}

VariantMix::Shares VariantMix::RouteNow(const Group& g, const Engine& engine) const {
  const Shares& plan = g.st.shares;
  const Job* first = FirstLive(g, engine);
  if (first == nullptr || plan.empty()) return plan;
  const RealtimeProfile& rt = first->s().realtime;
  const size_t nv = rt.variants.size(), nc = rt.classes.size();
  // What each variant's ready replicas serve now (as the serving model counts them).
  std::vector<double> spare(nv, 0.0);
  for (size_t v = 0; v < nv && v < g.members.size(); ++v)
    if (g.members[v] != kNoWorkload) spare[v] = ReadyCapacity(engine, engine.job(g.members[v]));
  std::vector<double> demand(nc, 0.0);
  for (size_t c = 0; c < nc && c < first->class_rps.size(); ++c)
    demand[c] = std::max(0.0, first->class_rps[c]);
  // The plan's shares of the demand now, each variant up to what it serves.
  std::vector<std::vector<double>> served(nv, std::vector<double>(nc, 0.0));
  for (size_t v = 0; v < nv && v < plan.size(); ++v) {
    double want = 0;
    for (size_t c = 0; c < nc && c < plan[v].size(); ++c) want += plan[v][c] * demand[c];
    const double scale = want > spare[v] && want > 0 ? spare[v] / want : 1.0;
    for (size_t c = 0; c < nc && c < plan[v].size(); ++c) {
      served[v][c] = plan[v][c] * demand[c] * scale;
      spare[v] -= served[v][c];
    }
    spare[v] = std::max(0.0, spare[v]);
  }
  // Variants by quality, the best first.
  std::vector<size_t> by_quality(nv);
  for (size_t v = 0; v < nv; ++v) by_quality[v] = v;
  std::stable_sort(by_quality.begin(), by_quality.end(), [&](size_t a, size_t b) {
    return rt.variants[a].quality > rt.variants[b].quality;
  });
  // What is left of a class goes to the variants that serve it and have room, the best first
  // (as the serving model routes it); where those are full, another class that such a variant
  // serves moves to a variant with room (a code burst on a full generalist: conversation
  // requests move to the small model's warm spares, and the generalist serves the code). One
  // exchange deep: a service has few variants and classes.
  for (size_t c = 0; c < nc; ++c) {
    double left = demand[c];
    for (size_t v = 0; v < nv; ++v) left -= served[v][c];
    for (const size_t b : by_quality) {
      if (left <= 1e-9 || !rt.variants[b].Serves(static_cast<int>(c))) continue;
      const double move = std::min(left, spare[b]);
      served[b][c] += move;
      spare[b] -= move;
      left -= move;
    }
    for (size_t a = 0; a < nv && left > 1e-9; ++a) {
      if (!rt.variants[a].Serves(static_cast<int>(c))) continue;
      for (size_t k = 0; k < nc && left > 1e-9; ++k) {
        for (size_t b = 0; b < nv && left > 1e-9 && k != c; ++b) {
          if (b == a || !rt.variants[b].Serves(static_cast<int>(k))) continue;
          const double move = std::min({left, served[a][k], spare[b]});
          if (move <= 1e-12) continue;
          served[a][k] -= move;
          served[b][k] += move;
          spare[b] -= move;
          served[a][c] += move;
          left -= move;
        }
      }
    }
  }
  // The plan is sized for the peak of its window; below it, the better variants have room.
  // Requests move up into it, from the lowest quality first: as many served, of more worth.
  for (size_t hi = 0; hi < nv; ++hi) {
    const size_t b = by_quality[hi];
    if (!g.st.available.empty() && !g.st.available[b]) continue;
    for (size_t lo = nv; lo-- > hi + 1 && spare[b] > 1e-9;) {
      const size_t a = by_quality[lo];
      if (rt.variants[a].quality >= rt.variants[b].quality) break;
      for (size_t c = 0; c < nc && spare[b] > 1e-9; ++c) {
        if (!rt.variants[b].Serves(static_cast<int>(c))) continue;
        const double move = std::min(served[a][c], spare[b]);
        served[a][c] -= move;
        served[b][c] += move;
        spare[b] -= move;
        spare[a] += move;
      }
    }
  }
  Shares route(nv, std::vector<double>(nc, 0.0));
  for (size_t v = 0; v < nv; ++v)
    for (size_t c = 0; c < nc; ++c)
      route[v][c] = demand[c] > 0 ? served[v][c] / demand[c]
                                  : (v < plan.size() && c < plan[v].size() ? plan[v][c] : 0.0);
  return route;
}

VariantMix::TypeMilli VariantMix::Budget(const Group& g, const std::vector<bool>& available,
                                         const Engine& engine, TypeMilli& own) const {
  TypeMilli budget(engine.catalog().size(), 0);
  const Job* any = nullptr;
  for (WorkloadId id : g.members) {
    if (id == kNoWorkload) continue;
    any = &engine.job(id);
    for (AllocationId a : any->allocations) {
      const Placement& p = engine.allocation(a)->placement;
      if (!p.gpus.empty())
        budget[static_cast<size_t>(engine.cluster().gpu_type(p.gpus.front()))] += p.total_milli();
    }
  }
  own = budget;
  if (any == nullptr) return budget;
  std::vector<bool> types(engine.catalog().size(), false), shares(types.size(), false);
  const auto& variants = any->s().realtime.variants;
  for (size_t v = 0; v < variants.size(); ++v)
    if (v < available.size() && available[v])
      for (const auto& [t, rps] : variants[v].throughput_rps) {
        types[static_cast<size_t>(t)] = true;
        if (variants[v].shape.mode != ShareMode::kWhole) shares[static_cast<size_t>(t)] = true;
      }
  // What is free: whole GPUs for variants that run on whole GPUs (the rest of a GPU that
  // fractions or others' work share is no room for them), capacity where one runs on less.
  for (size_t t = 0; t < types.size(); ++t) {
    if (!types[t]) continue;
    const auto type = static_cast<GpuTypeId>(t);
    budget[t] += shares[t] ? engine.state().free_milli_of_type(type)
                           : int64_t{1000} * engine.state().free_whole_of_type(type);
  }
  // Preemptible jobs on those types give their GPUs back to a service.
  for (const auto& [id, a] : engine.allocations()) {
    const Job& j = engine.job(a.workload);
    if (j.is_service() || !j.s().preemptible || a.placement.gpus.empty()) continue;
    const auto t = static_cast<size_t>(engine.cluster().gpu_type(a.placement.gpus.front()));
    if (types[t]) budget[t] += a.placement.total_milli();
  }
  return budget;
}

int64_t VariantMix::BeyondBudget(const RealtimeProfile& rt, const std::vector<int64_t>& need,
                                 const TypeMilli& budget) {
  // Each variant's replicas fit only on the types it has a throughput for. What cannot fit
  // is the largest deficiency of Hall's theorem over the sets S of variants: what S needs
  // beyond the budget of the types S can use (max-flow min-cut on a tiny bipartite graph).
  // Variants on the same types count as one (their needs summed): a service has few
  // distinct type sets, so the sets to try stay few.
  std::vector<std::vector<bool>> type_sets;
  std::vector<int64_t> wants;
  for (size_t v = 0; v < need.size(); ++v) {
    if (need[v] <= 0) continue;
    std::vector<bool> types(budget.size(), false);
    for (const auto& [t, rps] : rt.variants[v].throughput_rps)
      if (rps > 0 && static_cast<size_t>(t) < types.size()) types[static_cast<size_t>(t)] = true;
    const auto it = std::find(type_sets.begin(), type_sets.end(), types);
    if (it == type_sets.end()) {
      type_sets.push_back(std::move(types));
      wants.push_back(need[v]);
    } else {
      wants[static_cast<size_t>(it - type_sets.begin())] += need[v];
    }
  }
  // 2^n sets; n <= kMaxVariants (the parser's limit), else all of them at once alone (a
  // lower estimate).
  const size_t n = type_sets.size();
  const bool each = n <= kMaxVariants;
  int64_t worst = 0;
  std::vector<bool> types(budget.size());
  const uint32_t last = each ? (1u << n) - 1 : 1u;
  for (uint32_t mask = 1; mask <= last && n > 0; ++mask) {
    std::fill(types.begin(), types.end(), false);
    int64_t want = 0, have = 0;
    for (size_t i = 0; i < n; ++i) {
      if (each && !(mask >> i & 1)) continue;
      want += wants[i];
      for (size_t t = 0; t < types.size(); ++t) types[t] = types[t] || type_sets[i][t];
    }
    for (size_t t = 0; t < types.size(); ++t)
      if (types[t]) have += budget[t];
    worst = std::max(worst, want - have);
  }
  return worst;
}

VariantMix::Figures VariantMix::Evaluate(const WorkloadSpec& spec, const Shares& s,
                                         const std::vector<double>& demand, const Prices& price,
                                         double spare, const TypeMilli& budget,
                                         const std::vector<bool>& available,
                                         const GpuCatalog& catalog,
                                         const std::vector<int>* fixed) const {
  const RealtimeProfile& rt = spec.realtime;
  const size_t nv = rt.variants.size();
  const double per_request = spec.value.per_1k_requests / 1000.0;
  Figures f;
  f.replicas.assign(nv, 0);
  f.firm.assign(nv, 0);
  // Milli-GPUs per variant of the replicas the load needs, spares left out: spares give way
  // first, so only these must fit the budget.
  std::vector<int64_t> firm(nv, 0);
  std::vector<int> spares(nv, 0);
  double load_all = 0, quality_load = 0, value = 0;
  for (size_t v = 0; v < nv; ++v) {
    const ModelVariant& mv = rt.variants[v];
    double load = 0;
    for (size_t c = 0; c < demand.size() && v < s.size() && c < s[v].size(); ++c)
      if (mv.Serves(static_cast<int>(c))) load += s[v][c] * demand[c];
    if (v >= available.size() || !available[v]) {  // not produced yet: serves nothing
      f.unserved_rps += load;
      continue;
    }
    const double t = mv.PlanningThroughput();
    int n = 0;
    if (fixed != nullptr && v < fixed->size()) {
      n = (*fixed)[v];
      f.unserved_rps += load - std::min(load, n * t);
    } else {
      if (load <= 0) continue;
      // In double first: a huge demand must not overflow the replica count.
      const double need_d = t > 0 ? std::ceil(load / t - 1e-9) : kUnboundedReplicas;
      n = static_cast<int>(std::min(need_d, static_cast<double>(kUnboundedReplicas)));
      if (n > mv.max_replicas) {
        f.unserved_rps += load - mv.max_replicas * t;
        n = mv.max_replicas;
      }
      if (spare > 0) spares[v] = static_cast<int>(std::floor(n * spare + 0.5));
    }
    f.firm[v] = n;
    firm[v] = n * mv.shape.TotalMilli(catalog);
    value += per_request * 3600 * mv.quality * std::min(load, n * t);
    load_all += load;
    quality_load += load * mv.quality;
  }
  // The peers keep each variant's spares with it: a fixed generalist runs the generalist.
  if (fixed == nullptr && o_.mode == Mode::kMix)
    f.spares_moved =
        PriceSpares(spec, s, available, demand, f.firm, price, budget, catalog, spares);
  for (size_t v = 0; v < nv; ++v) {
    const int64_t milli = rt.variants[v].shape.TotalMilli(catalog);
    f.replicas[v] =
        std::min(f.firm[v] + spares[v], std::max(f.firm[v], rt.variants[v].max_replicas));
    f.milli += f.replicas[v] * milli;
  }
  // A plan's GPUs are priced at the service's highest density, whatever their type: priced per
  // type, a mix on a type nothing waits for looked cheap at low demand, and the plan flipped
  // between it and the generalist (each flip a cold start; measured on variants-mix and the
  // MILP bench's instances). Only where the spares sit is priced per type (PriceSpares).
  f.held = price.density * static_cast<double>(f.milli) / 1000.0;
  f.quality = load_all > 0 ? quality_load / load_all : 1.0;
  f.floor_ok = f.quality >= rt.quality_floor - 1e-9;
  f.worth = value - f.held;
  f.over_milli = BeyondBudget(rt, firm, budget);
  return f;
}

std::optional<VariantMix::SpareMove> VariantMix::PriceSpares(
    const WorkloadSpec& spec, const Shares& s, const std::vector<bool>& available,
    const std::vector<double>& demand, const std::vector<int>& firm, const Prices& price,
    const TypeMilli& budget, const GpuCatalog& catalog, std::vector<int>& spares) {
  const RealtimeProfile& rt = spec.realtime;
  const size_t nv = rt.variants.size();
  const double per_request_hour = spec.value.per_1k_requests / 1000.0 * 3600;
  double spare_rps = 0;
  for (size_t v = 0; v < nv; ++v) spare_rps += spares[v] * rt.variants[v].PlanningThroughput();
  if (spare_rps <= 0) return std::nullopt;
  // The requests/s of the classes `v` serves that the plan gives worse variants, worst first:
  // below the peak a spare of `v` takes them (RouteNow moves them up).
  auto upgrade = [&](size_t v, double rps) {
    const ModelVariant& mv = rt.variants[v];
    std::vector<std::pair<double, double>> worse;  // quality, requests/s
    for (size_t u = 0; u < nv && u < s.size(); ++u)
      for (size_t c = 0; c < demand.size() && c < s[u].size(); ++c)
        if (rt.variants[u].quality < mv.quality && mv.Serves(static_cast<int>(c)) &&
            s[u][c] * demand[c] > 0)
          worse.emplace_back(rt.variants[u].quality, s[u][c] * demand[c]);
    std::sort(worse.begin(), worse.end());
    double gain = 0;
    for (const auto& [q, load] : worse) {
      const double take = std::min(rps, load);
      gain += take * (mv.quality - q) * per_request_hour;
      rps -= take;
    }
    return gain;
  };
  // What holding `sp` costs per hour: its GPUs at their prices, less what its replicas earn
  // by taking requests from worse variants.
  auto cost = [&](const std::vector<int>& sp) {
    double c = 0;
    for (size_t v = 0; v < nv; ++v) {
      if (sp[v] == 0) continue;
      const ModelVariant& mv = rt.variants[v];
      c += sp[v] * price.of(v) * static_cast<double>(mv.shape.TotalMilli(catalog)) / 1000.0 -
           upgrade(v, sp[v] * mv.PlanningThroughput());
    }
    return c;
  };
  // Whether the firm replicas and `sp` fit the GPUs the service can have (spares beyond them
  // would not be placed: no protection at all).
  auto fits = [&](const std::vector<int>& sp) {
    std::vector<int64_t> milli(nv, 0);
    for (size_t v = 0; v < nv; ++v)
      milli[v] = (firm[v] + sp[v]) * rt.variants[v].shape.TotalMilli(catalog);
    return BeyondBudget(rt, milli, budget) == 0;
  };
  std::vector<int> best = spares;
  const double first_cost = cost(spares);
  double best_cost = first_cost;
  for (size_t b = 0; b < nv; ++b) {
    const ModelVariant& mb = rt.variants[b];
    const double t = mb.PlanningThroughput();
    if (b >= available.size() || !available[b] || t <= 0) continue;
    // Its spares protect the service as far as the classes it serves can move to it.
    double reach = 0;
    for (size_t c = 0; c < demand.size(); ++c)
      if (mb.Serves(static_cast<int>(c))) reach += std::max(0.0, demand[c]);
    // In double first: a tiny throughput must not overflow the replica count.
    const double n = std::ceil(spare_rps / t - 1e-9);
    if (reach < spare_rps - 1e-9 || n > mb.max_replicas - firm[b]) continue;
    std::vector<int> all(nv, 0);
    all[b] = static_cast<int>(n);
    if (const double c = cost(all); c < best_cost - 1e-9 * (1 + std::abs(best_cost)) && fits(all)) {
      best = std::move(all);
      best_cost = c;
    }
  }
  if (best == spares) return std::nullopt;
  SpareMove moved{spares, first_cost, best_cost};
  spares = std::move(best);
  return moved;
}

bool VariantMix::Better(const Figures& a, const Figures& b) {
  if (a.floor_ok != b.floor_ok) return a.floor_ok;
  if (a.over_milli != b.over_milli) return a.over_milli < b.over_milli;
  if (std::abs(a.unserved_rps - b.unserved_rps) > 1e-9) return a.unserved_rps < b.unserved_rps;
  return a.worth > b.worth + 1e-9;
}

VariantMix::Shares VariantMix::Fixed(const RealtimeProfile& rt, Mode mode,
                                     const std::vector<bool>& available,
                                     const GpuCatalog& catalog) const {
  const size_t nc = rt.classes.size();
  Shares s(rt.variants.size(), std::vector<double>(nc, 0.0));
  for (size_t c = 0; c < nc; ++c) {
    // The highest quality that serves the class: always available, since the loader and
    // ValidateSpec refuse a producer for it (RealtimeProfile::WhyNotProduced).
    int pick = rt.DefaultVariantFor(static_cast<int>(c));
    if (mode == Mode::kCheapest) {
      // The fewest GPUs per request among the variants that meet the floor for this class.
      double best = 0;
      for (size_t v = 0; v < rt.variants.size(); ++v) {
        const ModelVariant& mv = rt.variants[v];
        if (!Usable(rt, available, v, c) || mv.quality < rt.quality_floor - 1e-9) continue;
        const double per_rps =
            static_cast<double>(mv.shape.TotalMilli(catalog)) / mv.PlanningThroughput();
        const bool cheaper = per_rps < best - 1e-9;
        const bool tie_better = std::abs(per_rps - best) <= 1e-9 && pick >= 0 &&
                                mv.quality > rt.variants[static_cast<size_t>(pick)].quality;
        if (best == 0 || cheaper || tie_better) {
          best = per_rps;
          pick = static_cast<int>(v);
        }
      }
    }
    if (pick >= 0) s[static_cast<size_t>(pick)][c] = 1.0;
  }
  return s;
}

void VariantMix::SizeStatic(Group& g, const WorkloadSpec& spec, const std::vector<double>& demand,
                            const Prices& price, const TypeMilli& budget,
                            const std::vector<bool>& available, const GpuCatalog& catalog) const {
  const RealtimeProfile& rt = spec.realtime;
  const size_t nc = rt.classes.size();
  // The peak per class: of its declared curve, or of the demand seen (through the API).
  std::vector<double> peak(nc, 0.0);
  for (size_t c = 0; c < nc; ++c) {
    peak[c] = c < demand.size() ? demand[c] : 0.0;
    for (const DemandPoint& p : rt.classes[c].demand) peak[c] = std::max(peak[c], p.rps);
  }
  bool grew = g.static_peak.size() != nc;
  for (size_t c = 0; c < nc && !grew; ++c) grew = peak[c] > g.static_peak[c] + 1e-9;
  if (!grew) return;
  State& st = g.st;
  const bool first = st.shares.empty();
  g.static_peak = peak;
  Shares next = Search(spec, peak, price, g.in.spare, budget, available, catalog);
  if (!first && !SameShares(next, st.shares)) ++st.switches;  // another mix, not just more
  st.shares = std::move(next);
  g.static_replicas =
      Evaluate(spec, st.shares, peak, price, g.in.spare, budget, available, catalog).replicas;
  st.why = first ? "static split: sized once for the peak demand per class"
                 : "static split: sized again, demand rose above the peak it was sized for";
}

VariantMix::Shares VariantMix::Search(const WorkloadSpec& spec, const std::vector<double>& demand,
                                      const Prices& price, double spare, const TypeMilli& budget,
                                      const std::vector<bool>& available,
                                      const GpuCatalog& catalog) const {
  const RealtimeProfile& rt = spec.realtime;
  const size_t nv = rt.variants.size(), nc = rt.classes.size();
  auto eval = [&](const Shares& s) {
    return Evaluate(spec, s, demand, price, spare, budget, available, catalog);
  };
  auto usable = [&](size_t v, size_t c) { return Usable(rt, available, v, c); };
  Shares best = Fixed(rt, Mode::kGeneralist, available, catalog);
  Figures best_f = eval(best);
  // Every plan that sends each class wholly to one variant, while there are few (512: 8
  // variants and 3 classes, 3 and 5; the search runs every cycle); beyond, the cheapest
  // meeting the floor as a second start, and the moves below.
  double combos = std::pow(static_cast<double>(nv), static_cast<double>(nc));
  if (combos <= 512) {
    std::vector<size_t> pick(nc, 0);
    for (bool more = nc > 0; more;) {
      bool valid = true;
      Shares s(nv, std::vector<double>(nc, 0.0));
      for (size_t c = 0; c < nc; ++c) {
        if (!usable(pick[c], c)) valid = false;
        s[pick[c]][c] = 1.0;
      }
      if (valid) {
        const Figures f = eval(s);
        if (Better(f, best_f)) {
          best = s;
          best_f = f;
        }
      }
      more = false;
      for (size_t c = 0; c < nc; ++c) {
        if (++pick[c] < nv) {
          more = true;
          break;
        }
        pick[c] = 0;
      }
    }
  } else {
    const Shares cheap = Fixed(rt, Mode::kCheapest, available, catalog);
    if (const Figures f = eval(cheap); Better(f, best_f)) {
      best = cheap;
      best_f = f;
    }
  }
  // Then shift a class's requests from one variant to another while that improves the plan:
  // `step` of the class, or as much as the quality floor allows (all of it toward a variant
  // as good). Steps alone can stall: with a generalist of 4 req/s per replica, moving a tenth
  // of 8 req/s to a smaller model frees no generalist replica, so no step improves the plan
  // even where half would fit the GPUs; the move to the floor takes that half at once.
  double demand_all = 0;
  for (double d : demand) demand_all += std::max(0.0, d);
  for (int round = 0; round < 200; ++round) {
    Shares move_s;
    Figures move_f = best_f;
    for (size_t c = 0; c < nc; ++c) {
      for (size_t a = 0; a < nv; ++a) {
        if (best[a][c] <= 0) continue;
        for (size_t b = 0; b < nv; ++b) {
          if (b == a || !usable(b, c)) continue;
          const double qa = rt.variants[a].quality, qb = rt.variants[b].quality;
          double to_floor = best[a][c];
          if (qb < qa && c < demand.size() && demand[c] > 0)
            to_floor = std::min(to_floor, (best_f.quality - rt.quality_floor) * demand_all /
                                              (demand[c] * (qa - qb)));
          const double step = std::min(best[a][c], o_.step);
          // Or just enough of it that `a` needs one replica fewer: a shortage of one replica
          // then costs that much quality, not all the floor allows.
          double one = 0;
          if (c < demand.size() && demand[c] > 0 && a < best_f.firm.size() && best_f.firm[a] > 0) {
            double load = 0;
            for (size_t k = 0; k < nc && k < demand.size(); ++k)
              if (rt.variants[a].Serves(static_cast<int>(k))) load += best[a][k] * demand[k];
            const double excess = load - (best_f.firm[a] - 1) * rt.variants[a].PlanningThroughput();
            one = std::min(best[a][c], excess / demand[c] + 1e-9);
          }
          for (const double d : {step, to_floor, one}) {
            if (d <= 1e-9 || (d != step && d <= step + 1e-9)) continue;
            Shares s = best;
            s[a][c] -= d;
            s[b][c] += d;
            if (s[a][c] < 1e-9) s[a][c] = 0;
            const Figures f = eval(s);
            if (Better(f, move_f)) {
              move_s = std::move(s);
              move_f = f;
            }
          }
        }
      }
    }
    if (move_s.empty()) break;
    best = std::move(move_s);
    best_f = move_f;
  }
  return best;
}

std::string VariantMix::Describe(const RealtimeProfile& rt, const Shares& s, const Figures& f,
                                 const State& st) const {
  std::string out;
  char buf[160];
  for (size_t c = 0; c < rt.classes.size(); ++c) {
    out += (c ? "; " : "") + rt.classes[c].name + ":";
    for (size_t v = 0; v < rt.variants.size(); ++v) {
      if (s[v][c] <= 0) continue;
      std::snprintf(buf, sizeof buf, " %.0f%% %s", 100 * s[v][c], rt.variants[v].name.c_str());
      out += buf;
    }
  }
  out += " (";
  for (size_t v = 0; v < rt.variants.size(); ++v) {
    std::snprintf(buf, sizeof buf, "%s%d x %s", v ? ", " : "", f.replicas[v],
                  rt.variants[v].name.c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof buf,
                "); %.1f of %.1f GPUs it could have; mean quality %.3f (floor %.2f); worth %.2f "
                "per hour after %.2f per GPU-hour for waiting work",
                static_cast<double>(f.milli) / 1000.0,
                static_cast<double>(st.budget_milli) / 1000.0, f.quality, rt.quality_floor, f.worth,
                st.density);
  out += buf;
  if (f.spares_moved) {
    // Where round(replicas x spare) had put the spares, and where they are.
    auto list = [&](const std::vector<int>& n) {
      std::string l;
      for (size_t v = 0; v < rt.variants.size() && v < n.size(); ++v)
        if (n[v] > 0)
          l += (l.empty() ? "" : ", ") + std::to_string(n[v]) + " x " + rt.variants[v].name;
      return l;
    };
    std::vector<int> now(rt.variants.size(), 0);
    for (size_t v = 0; v < now.size(); ++v) now[v] = f.replicas[v] - f.firm[v];
    std::snprintf(buf, sizeof buf,
                  " cost %.2f an hour to hold there against %.2f (their GPUs' worth to waiting "
                  "work, less what serving requests of a worse variant earns)",
                  f.spares_moved->cost_to, f.spares_moved->cost_from);
    out +=
        "; warm spares as " + list(now) + " rather than " + list(f.spares_moved->from) + ":" + buf;
  }
  if (!st.shared.empty()) out += "; shared with other services, " + st.shared;
  for (size_t c = 0; c < st.forecast.size() && c < rt.classes.size(); ++c)
    if (st.forecast[c] > 0) {
      std::snprintf(buf, sizeof buf, "; %s planned for the %.1f req/s its forecast expects",
                    rt.classes[c].name.c_str(), st.forecast[c]);
      out += buf;
    }
  for (size_t v = 0; v < rt.variants.size(); ++v)
    if (v < st.available.size() && !st.available[v])
      out += "; " + rt.variants[v].name + " not yet produced (job '" + rt.variants[v].produced_by +
             "')";
  return out;
}

bool VariantMix::Prepare(Group& g, const Engine& engine) {
  const Job* first = FirstLive(g, engine);
  if (first == nullptr) return false;
  const WorkloadSpec& spec = first->s();
  const RealtimeProfile& rt = spec.realtime;
  const size_t nv = rt.variants.size(), nc = rt.classes.size();
  const TimeMs now = engine.now();
  // Only the variants that may run now (not waiting for a job to produce them).
  std::vector<bool> available(nv);
  for (size_t v = 0; v < nv; ++v) available[v] = engine.VariantAvailable(rt, v);
  // What each variant's GPUs would earn for waiting work; the highest sets the window.
  Prices price;
  price.variants.assign(nv, 0.0);
  for (size_t v = 0; v < nv && v < g.members.size(); ++v)
    if (g.members[v] != kNoWorkload) price.variants[v] = density_(engine.job(g.members[v]), engine);
  for (double d : price.variants) price.density = std::max(price.density, d);
  const double density = price.density;
  // Demand per class: the highest of a scale-down window, as ForecastScale keeps a plain
  // service's replicas: `keep` while nothing waits; else as long as a replica given back
  // would cost to get back (cold start x (1 + the best variant's value per GPU-hour / the
  // waiting work's)), within [the longest cold start + lead, keep].
  DurationMs cold = 0;
  for (size_t v = 0; v < nv; ++v)
    if (available[v]) cold = std::max(cold, rt.variants[v].cold_start);
  DurationMs window = o_.keep;
  if (density > 0) {
    double best_density = 0;
    for (size_t i = 0; i < nv; ++i)
      if (available[i])
        best_density = std::max(
            best_density, EarnsPerGpuHour(spec, rt.variants[i], rt.variants[i].PlanningThroughput(),
                                          engine.catalog()));
    const double rental = static_cast<double>(cold) * (1 + best_density / density);
    window = std::clamp(static_cast<DurationMs>(rental), cold + o_.lead,
                        std::max(o_.keep, cold + o_.lead));
  }
  // ... and over `payback`: a switch by choice must hold for the peak of that long.
  const DurationMs long_window = std::max(window, o_.payback);
  if (g.recent.empty()) {
    // What was seen before the engine met the service (a daemon's restart): the windows and
    // the forecasts go on from there. One class's rates are the service's own. Each
    // forecast's errors are measured a cold start and lead ahead, as a plain service's.
    DemandForecast::Options fo;
    fo.error_lead = cold + o_.lead;
    g.recent.resize(nc);
    g.last_seen.resize(nc, -1);
    g.forecasts.assign(nc, DemandForecast(fo));
    for (size_t c = 0; c < nc; ++c)
      for (const DemandPoint& p : nc == 1 ? rt.history : rt.classes[c].history) {
        if (p.at >= now) break;
        if (g.last_seen[c] == p.rps) continue;
        g.recent[c].Add(p.at, p.rps);
        g.forecasts[c].Observe(p.at, p.rps);
        g.last_seen[c] = p.rps;
      }
  }
  g.st.forecast.assign(nc, 0.0);
  std::vector<double> demand(nc, 0.0), demand_long(nc, 0.0), demand_keep(nc, 0.0);
  for (size_t c = 0; c < nc; ++c) {
    const double rps = c < first->class_rps.size() ? first->class_rps[c] : 0.0;
    DemandWindow& steps = g.recent[c];
    if (g.last_seen[c] != rps) {
      steps.Add(now, rps);
      g.last_seen[c] = rps;
    }
    g.forecasts[c].Observe(now, rps);  // each cycle: its slots close as time passes
    steps.DropEndedBy(now - long_window);
    demand_long[c] = steps.Range(now, long_window, steps.last()).second;
    demand[c] = steps.Range(now, window, steps.last()).second;
    demand_keep[c] = steps.Range(now, o_.keep, steps.last()).second;
    // A rise the class's seasonal forecast expects within a cold start: replicas started
    // when it arrives would miss it. (Not for a static split: sized once, at the peak.)
    const DemandForecast& f = g.forecasts[c];
    if (o_.mode != Mode::kStatic && f.seasonal()) {
      const double peak = f.PeakOver(now, now + cold + o_.lead);
      if (peak > demand[c]) {
        demand[c] = peak;
        g.st.forecast[c] = peak;
      }
      demand_long[c] = std::max(demand_long[c], demand[c]);
    }
  }
  Inputs& in = g.in;
  in.spec = &spec;
  // SLOs first: warm spares while the error budget beyond the reserve is spent. Not for a
  // static split, whose replicas are sized once (with `spare` alone).
  const double keep_to = o_.slo_target + o_.slo_reserve * (1 - o_.slo_target);
  const bool spent =
      o_.mode != Mode::kStatic && o_.slo_target > 0 && g.books.Over(now, keep_to) < 0;
  in.spare = spent ? std::max(o_.spare, o_.slo_spare) : o_.spare;
  in.budget = Budget(g, available, engine, in.own);
  in.cap.clear();
  in.available = std::move(available);
  in.price = std::move(price);
  in.demand = std::move(demand);
  in.demand_long = std::move(demand_long);
  in.demand_keep = std::move(demand_keep);
  g.st.shared.clear();
  return true;
}

void VariantMix::Decide(Group& g, const Engine& engine) {
  const WorkloadSpec& spec = *g.in.spec;
  const RealtimeProfile& rt = spec.realtime;
  const size_t nv = rt.variants.size();
  const TimeMs now = engine.now();
  const std::vector<bool>& available = g.in.available;
  const std::vector<double>& demand = g.in.demand;
  const std::vector<double>& demand_long = g.in.demand_long;
  const Prices& price = g.in.price;
  const double density = price.density;
  const TypeMilli& budget = g.in.budget;
  State& st = g.st;
  st.available = available;
  st.demand = demand;
  st.density = density;
  st.budget_milli = 0;
  for (int64_t m : budget) st.budget_milli += m;
  const GpuCatalog& catalog = engine.catalog();
  auto plan_for = [&](const std::vector<double>& d) {
    return o_.mode == Mode::kMix ? Search(spec, d, price, g.in.spare, budget, available, catalog)
                                 : Fixed(rt, o_.mode, available, catalog);
  };
  auto broken = [](const Figures& f) {
    return !f.floor_ok || f.over_milli > 0 || f.unserved_rps > 0;
  };
  Shares next = o_.mode == Mode::kStatic ? Shares{} : plan_for(demand);
  if (o_.mode == Mode::kStatic) {
    SizeStatic(g, spec, demand_long, price, budget, available, catalog);
  } else if (st.shares.empty()) {
    st.shares = next;
    st.why = "first plan";
  } else if (o_.mode != Mode::kMix) {
    // A peer's plan is its rule applied to the variants there are: it changes only when a
    // variant is produced, and the peer then follows its rule at once.
    if (!SameShares(next, st.shares)) {
      st.shares = next;
      ++st.switches;
      st.last_switch = now;
      st.why = "switched: a variant was produced";
    }
  } else if (const Figures fc =
                 Evaluate(spec, st.shares, demand, price, g.in.spare, budget, available, catalog);
             broken(fc) && !SameShares(next, st.shares)) {
    // The plan in force no longer fits: the best for the demand now, at once.
    const Figures fn = Evaluate(spec, next, demand, price, g.in.spare, budget, available, catalog);
    char buf[200];
    {
      const bool take = Better(fn, fc);
      std::snprintf(buf, sizeof buf, "switched: the plan before %s",
                    !fc.floor_ok        ? "fell below the quality floor"
                    : fc.over_milli > 0 ? "needed more GPUs than the service could have"
                                        : "could not serve the demand within max_replicas");
      if (take) {
        st.shares = next;
        ++st.switches;
        st.last_switch = now;
        st.why = buf;
      }
    }
  } else if (next = plan_for(demand_long); !SameShares(next, st.shares)) {
    // By choice: the best plan for the peak of the last `payback`, if it fits that peak and
    // its gain there repays its cold starts.
    const Figures fn =
        Evaluate(spec, next, demand_long, price, g.in.spare, budget, available, catalog);
    const Figures fl =
        Evaluate(spec, st.shares, demand_long, price, g.in.spare, budget, available, catalog);
    char buf[200];
    bool take = false;
    if (!broken(fn)) {
      // The cold starts the new replicas cost, at the higher of the waiting work's value per
      // GPU-hour and the replica's own at full load.
      double cost = 0;
      for (size_t v = 0; v < nv; ++v) {
        const int more = fn.replicas[v] - fl.replicas[v];
        if (more <= 0) continue;
        const ModelVariant& mv = rt.variants[v];
        const double gpus = static_cast<double>(mv.shape.TotalMilli(catalog)) / 1000.0;
        const double own = EarnsPerGpuHour(spec, mv, mv.PlanningThroughput(), catalog);
        cost += more * gpus * ToHours(mv.cold_start) * std::max(price.of(v), own);
      }
      const double hours = ToHours(o_.payback);
      const double gain = (fn.worth - fl.worth) * hours;
      take = (broken(fl) || gain > cost + o_.margin * std::abs(fl.worth) * hours) && Better(fn, fl);
      std::snprintf(buf, sizeof buf,
                    "switched: %.2f more worth over %s than the plan before, beyond its cold "
                    "starts' %.2f",
                    gain, FormatDuration(o_.payback).c_str(), cost);
    }
    if (take) {
      st.shares = next;
      ++st.switches;
      st.last_switch = now;
      st.why = buf;
    }
  }
  const bool fixed = o_.mode == Mode::kStatic;
  st.figures = Evaluate(spec, st.shares, demand, price, g.in.spare, budget, available, catalog,
                        fixed ? &g.static_replicas : nullptr);
  st.mix = Describe(rt, st.shares, st.figures, st);
  if (g.in.spare > o_.spare) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "; warm spares, %.0f%% of each variant's replicas: SLOs first, its error budget "
                  "for the %.2f%% target is spent",
                  100 * g.in.spare, 100 * o_.slo_target);
    st.mix += buf;
  }

  // Targets: the plan's replicas, its spares within its split of a shared type, the
  // service's min_replicas in all (on its busiest variant).
  std::vector<int> plan = st.figures.replicas;
  CapSparesToShare(g, rt, catalog, plan);
  int min_total = 0, total = 0;
  for (WorkloadId id : g.members)
    if (id != kNoWorkload) min_total += engine.job(id).s().realtime.min_replicas;
  for (int n : plan) total += n;
  g.min_total = min_total;
  if (total < min_total) {
    size_t busiest = 0;
    for (size_t v = 0; v < nv; ++v) {
      if (plan[v] > plan[busiest]) busiest = v;
      if (g.members[v] != kNoWorkload && engine.job(g.members[v]).s().realtime.min_replicas > 0 &&
          plan[busiest] == 0)
        busiest = v;
    }
    plan[busiest] += min_total - total;
  }
  // A replica of a variant below the quality floor serves only beside better ones: the
  // requests that would pull the mean below the floor are missed (KeepQualityFloor). So the
  // plan's replicas below the floor start only as far as the placed replicas at or above it
  // let them serve; the rest would hold GPUs and serve nothing, and could take the room the
  // better variant's replicas wait for (a 1-GPU small model on the node a 2-GPU generalist
  // needs). Once those are placed, Stale asks for the next cycle at once.
  g.kept = plan;
  PairWithFloor(g, rt, engine, plan);
  // Make-before-break: while some member has fewer ready replicas than its plan, none gives
  // replicas back; once new replicas found no room for `lead`, an old member gives back one
  // a cycle (not the group's last ready one) to make room.
  std::vector<int> live(nv, 0), ready(nv, 0);
  int ready_all = 0;
  for (size_t v = 0; v < nv; ++v) {
    if (g.members[v] == kNoWorkload) continue;
    const Job& m = engine.job(g.members[v]);
    live[v] = m.live_replicas();
    for (AllocationId a : m.allocations) ready[v] += engine.allocation(a)->ready_at <= now;
    ready_all += ready[v];
  }
  bool pending = false, stuck = false;
  for (size_t v = 0; v < nv; ++v) {
    pending = pending || ready[v] < plan[v];
    if (live[v] < plan[v]) {
      g.short_since[v] = std::min(g.short_since[v], now);
      stuck = stuck || now - g.short_since[v] >= o_.lead;
    } else {
      g.short_since[v] = kNever;
    }
  }
  for (size_t v = 0; v < nv; ++v) {
    int t = plan[v];
    if (pending && live[v] > plan[v]) {
      t = live[v];
      // One back, to make room, but never the group's last ready replica.
      if (stuck && ready_all - std::min(ready[v], 1) > 0) {
        t = live[v] - 1;
        ready_all -= std::min(ready[v], 1);
        stuck = false;  // one a cycle
      }
    }
    g.targets[v] = std::max(t, 0);
  }
}

void VariantMix::RecordHolds(Engine& engine) {
  const TimeMs now = engine.now();
  for (auto& [name, g] : groups_) {
    const Job* first = FirstLive(g, engine);
    if (first == nullptr || g.in.spec == nullptr || g.kept.empty()) continue;
    // Scored as the metrics and the daemon count the service: under its first member's id.
    WorkloadId key = kNoWorkload;
    for (WorkloadId id : g.members)
      if (id != kNoWorkload && key == kNoWorkload) key = id;
    const RealtimeProfile& rt = first->s().realtime;
    const size_t nv = std::min(rt.variants.size(), g.kept.size());
    // The plan's mean replica.
    int kept = 0;
    double capacity = 0;
    int64_t milli = 0;
    DurationMs cold = 0;
    for (size_t v = 0; v < nv; ++v) {
      if (g.kept[v] <= 0) continue;
      kept += g.kept[v];
      capacity += g.kept[v] * rt.variants[v].PlanningThroughput();
      milli += g.kept[v] * rt.variants[v].shape.TotalMilli(engine.catalog());
      cold = std::max(cold, rt.variants[v].cold_start);
    }
    if (kept <= 0 || capacity <= 0) continue;
    const double per_replica = capacity / kept;
    double now_rps = 0, planned = 0, keep_peak = 0;
    for (size_t c = 0; c < rt.classes.size(); ++c) {
      now_rps += c < first->class_rps.size() ? first->class_rps[c] : 0.0;
      planned += c < g.in.demand.size() ? g.in.demand[c] : 0.0;
      keep_peak += c < g.in.demand_keep.size() ? g.in.demand_keep[c] : 0.0;
    }
    const auto replicas_for = [&](double rps) {
      return static_cast<int>(std::ceil(rps / per_replica - 1e-9));
    };
    const int needed = std::min(kept, std::max(g.min_total, replicas_for(now_rps)));
    const int held = kept - needed;
    const double density = g.in.price.density;
    const bool declined = held == 0 && density > 0 && replicas_for(keep_peak) > kept;
    // A new call when the replicas kept change, when a hold begins (the demand fell below
    // what they serve), or when the window begins or stops handing replicas off; demand
    // rising into the held replicas is the burst the standing call is scored on.
    const bool hold_begins = held > 0 && g.call_held <= 0;
    if (kept == g.call_kept && !hold_begins && declined == g.call_declined) continue;
    const bool record = held > 0 || declined || g.call_held > 0;
    g.call_kept = kept;
    g.call_held = held;
    g.call_declined = declined;
    if (!record) continue;
    HoldDecision d;
    d.at = now;
    d.service = key;
    d.name = name;
    d.demand_rps = now_rps;
    d.forecast_rps = planned;
    d.needed = needed;
    d.held = held;
    d.capacity_rps = per_replica;
    d.per_request = first->s().value.per_1k_requests / 1000.0 * std::max(g.st.figures.quality, 0.0);
    d.cold_start = cold;
    d.replica_gpus = static_cast<double>(milli) / 1000.0 / kept;
    d.waiting_density = density;
    // The marginal replica, priced as a plain service's over one 15-minute forecast slot:
    // what it serves of the demand it is kept for (or, handed off, of the whole `keep`'s
    // peak) within a cold start if that demand comes back, against what its GPUs earn for
    // the waiting work.
    const double cold_s = static_cast<double>(cold) / 1000.0;
    const double gap = held > 0 ? planned - now_rps : keep_peak - planned;
    d.hold_value = std::clamp(gap, 0.0, per_replica) * cold_s * d.per_request;
    d.handoff_value = d.replica_gpus * density * 0.25;
    char buf[320];
    if (held > 0) {
      std::snprintf(buf, sizeof buf,
                    "%d replicas kept (%d needed now) for the %.1f req/s the mix plans for, "
                    "%.1f now: ",
                    kept, needed, planned, now_rps);
      d.why = buf + g.st.mix;
    } else if (declined) {
      std::snprintf(buf, sizeof buf,
                    "handed off: the %.1f req/s peak of the last %s would keep %d replicas; "
                    "the mix keeps %d for the %.1f req/s of its shorter window, as waiting "
                    "work earns %.2f per GPU-hour",
                    keep_peak, FormatDuration(o_.keep).c_str(), replicas_for(keep_peak), kept,
                    planned, density);
      d.why = buf;
    } else {
      d.why = "released: the current demand needs every replica kept";
    }
    engine.RecordHold(std::move(d));
  }
}

}  // namespace airtime
