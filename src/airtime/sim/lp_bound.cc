// LpBound: see lp_bound.h. Units inside the LP: hours of time (GPU-hours of capacity, hours
// of reference work) and thousands of requests, so that coefficients stay near 1.
#include "airtime/sim/lp_bound.h"

#include <ClpSimplex.hpp>
#include <ClpSolve.hpp>
#include <CoinFinite.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "airtime/sim/reachable.h"

namespace airtime {
namespace {

// A GPU type a workload's shape can run on: its speed there and the GPUs (fractions of a
// GPU) its whole gang or one replica occupies there.
struct Usable {
  GpuTypeId type;
  double speed;
  double gpus;
  bool mig;
};

// The installed types where `s` could ever be placed: allowed, the memory (or MIG profile)
// fits one GPU, and the gang (its min_gpus when elastic) fits on one node of the type, or,
// when its locality lets it span nodes, in one NVLink domain, rack or the cluster of GPUs
// that take it (the engine then runs it at its slowest GPU's speed: the LP credits the
// GPU-weighted mean, no less). A type left out has no variables.
std::vector<Usable> UsableTypes(const WorkloadSpec& s, const Cluster& cluster) {
  const Shape& sh = s.shape;
  const GpuCatalog& cat = cluster.catalog();
  const int need = sh.min_gpus > 0 ? sh.min_gpus : sh.gpu_count;
  auto takes = [&](const Node& n) {
    if (!sh.AllowsType(n.gpu_type)) return false;
    const GpuType& t = cat.type(n.gpu_type);
    if (sh.mode != ShareMode::kMig) return sh.memory_gb <= t.memory_gb + 1e-6;
    const MigProfile* p = t.FindMig(sh.mig_profile);
    return n.mig_enabled && p != nullptr && p->compute_slices <= 7;
  };
  std::vector<char> type_ok(cat.size(), 0);
  std::map<int32_t, int> group_gpus;  // GPUs that take it per domain / rack / cluster
  auto group_of = [&](NodeIndex n) {
    return sh.locality == Locality::kNvlinkDomain ? cluster.domain_of(n)
           : sh.locality == Locality::kRack       ? cluster.rack_of(n)
                                                  : 0;
  };
  const bool spans = need > 1 && sh.locality != Locality::kNode;
  for (size_t i = 0; i < cluster.node_count(); ++i) {
    const Node& n = cluster.node(static_cast<NodeIndex>(i));
    if (!takes(n)) continue;
    const bool host = (n.cpu_milli <= 0 || sh.cpu_milli <= n.cpu_milli) &&
                      (n.memory_mib <= 0 || sh.memory_mib <= n.memory_mib);
    if (host && n.gpu_count >= need) type_ok[static_cast<size_t>(n.gpu_type)] = 1;
    if (spans) group_gpus[group_of(static_cast<NodeIndex>(i))] += n.gpu_count;
  }
  if (spans) {
    for (size_t i = 0; i < cluster.node_count(); ++i) {
      const Node& n = cluster.node(static_cast<NodeIndex>(i));
      if (takes(n) && group_gpus[group_of(static_cast<NodeIndex>(i))] >= need)
        type_ok[static_cast<size_t>(n.gpu_type)] = 1;
    }
  }
  std::vector<Usable> out;
  for (size_t t = 0; t < type_ok.size(); ++t) {
    if (!type_ok[t]) continue;
    const auto type = static_cast<GpuTypeId>(t);
    const double speed = s.SpeedOn(type, cat);
    if (speed <= 0) continue;
    double per_gpu = 1.0;
    if (sh.mode == ShareMode::kFraction) per_gpu = sh.gpu_milli / 1000.0;
    if (sh.mode == ShareMode::kMig)
      per_gpu = cat.type(type).FindMig(sh.mig_profile)->compute_slices / 7.0;
    out.push_back({type, speed, per_gpu * sh.gpu_count, sh.mode == ShareMode::kMig});
  }
  return out;
}

// One row's entries, as CLP's addRow takes them.
struct SparseRow {
  std::vector<int> columns;
  std::vector<double> values;
};

// The LP, built column by column (CLP's column-major form).
class LpBuilder {
 public:
  int AddRow(double lo, double hi) {
    row_lo_.push_back(lo);
    row_hi_.push_back(hi);
    return static_cast<int>(row_lo_.size()) - 1;
  }
  void AddColumn(double obj, double hi, const std::vector<std::pair<int, double>>& entries) {
    for (const auto& [row, v] : entries) {
      index_.push_back(row);
      value_.push_back(v);
    }
    start_.push_back(static_cast<CoinBigIndex>(index_.size()));
    obj_.push_back(obj);
    col_lo_.push_back(0);
    col_hi_.push_back(hi);
  }
  int rows() const { return static_cast<int>(row_lo_.size()); }
  int columns() const { return static_cast<int>(obj_.size()); }
  int64_t nonzeros() const { return static_cast<int64_t>(index_.size()); }

  // A second solve after the first, with one more row: sum of entries >= lo. `status` and
  // `objective` are its results; status -1: not solved (the first solve was not optimal).
  // The row is added only then: as a free row in the first LP it made CLP's primal simplex
  // 4x slower on launch-burst.
  struct Then {
    const SparseRow* row = nullptr;
    double lo = 0;
    int status = -1;
    double objective = 0;
  };

  // Maximises; returns CLP's status (0 optimal) and the objective in *objective; then, when
  // `then` is given and the first solve was optimal, the second solve it describes.
  int Solve(double max_seconds, double* objective, Then* then = nullptr) const {
    ClpSimplex model;
    model.setLogLevel(0);
    model.loadProblem(columns(), rows(), start_.data(), index_.data(), value_.data(),
                      col_lo_.data(), col_hi_.data(), obj_.data(), row_lo_.data(), row_hi_.data());
    model.setOptimizationDirection(-1);
    if (max_seconds > 0) model.setMaximumSeconds(max_seconds);
    // Primal simplex after presolve: from the all-idle start it solved the suite's days 2-4x
    // faster than dual simplex and 15x faster than the barrier (bench/lp_bound_bench.cc). No
    // SIGINT handler: several bounds may be solved at once on different threads.
    ClpSolve how;
    how.setSolveType(ClpSolve::usePrimal);
    how.setSpecialOption(2, 1);
    model.initialSolve(how);
    *objective = model.objectiveValue();
    const int status = model.status();
    if (then != nullptr && status == 0) {
      // The first optimum may meet the row already: then it is the second's too.
      const double* x = model.getColSolution();
      double sum = 0;
      const SparseRow& row = *then->row;
      for (size_t i = 0; i < row.columns.size(); ++i) sum += row.values[i] * x[row.columns[i]];
      if (sum >= then->lo) {
        then->status = 0;
        then->objective = *objective;
        return status;
      }
      model.addRow(static_cast<int>(row.columns.size()), row.columns.data(), row.values.data(),
                   then->lo, COIN_DBL_MAX);
      // Solved again from scratch, the same way: on launch-burst (2-hour slots) this took
      // 26 s where the dual or primal simplex from the first optimum took 120 s.
      model.initialSolve(how);
      then->status = model.status();
      then->objective = model.objectiveValue();
    }
    return status;
  }

 private:
  std::vector<CoinBigIndex> start_{0};
  std::vector<int> index_;
  std::vector<double> value_;
  std::vector<double> col_lo_, col_hi_, obj_;
  std::vector<double> row_lo_, row_hi_;
};

const double kInf = COIN_DBL_MAX;

class BoundModel {
 public:
  BoundModel(const SimInput& in, TimeMs horizon, DurationMs slot)
      : in_(in), horizon_(horizon), slot_(slot) {
    slots_ = static_cast<int>((horizon + slot - 1) / slot);
    const size_t types = in.cluster.catalog().size();
    capacity_.assign(types, std::vector<double>(static_cast<size_t>(slots_), 0));
    mig_capacity_ = capacity_;
    capacity_row_.assign(types, std::vector<int>(static_cast<size_t>(slots_), -1));
    mig_row_ = capacity_row_;
    AddCapacity();
    gpus_of_type_.assign(types, 0);
    for (size_t n = 0; n < in.cluster.node_count(); ++n) {
      const Node& node = in.cluster.node(static_cast<NodeIndex>(n));
      if (node.gpu_type != kNoGpuType)
        gpus_of_type_[static_cast<size_t>(node.gpu_type)] += node.gpu_count;
    }
    cancelled_ = CancelTimes(in);
  }

  void Build(LpBound* b) {
    // The members of each service with variants, in their variants' order, taken together.
    std::vector<std::vector<const WorkloadSpec*>> groups;
    std::unordered_map<std::string, size_t> group_of;
    for (const WorkloadSpec& s : in_.workloads) {
      if (s.submit_at >= horizon_) continue;
      TimeMs end = horizon_;
      if (auto it = cancelled_.find(s.name); it != cancelled_.end())
        end = std::min(end, it->second);
      if (s.is_service() && s.realtime.is_member()) {
        auto [it, added] = group_of.try_emplace(s.realtime.group, groups.size());
        if (added) groups.emplace_back();
        groups[it->second].push_back(&s);
      } else if (s.is_service()) {
        ++b->services;
        AddService(s, end);
      } else {
        ++b->jobs;
        b->jobs_in_lp += AddJob(s, end) ? 1 : 0;
      }
    }
    for (const auto& members : groups) {
      ++b->services;
      AddVariantService(members);
    }
  }

  const LpBuilder& lp() const { return lp_; }
  double constant() const { return constant_; }
  // For the bound at an SLO target: the requests each GPU replica column serves within the
  // SLO per unit, and in thousands of requests: all the services' requests from their
  // submission on (as the simulator counts them: those before the first replica is ready
  // are missed), those that host-only replicas serve (outside the LP), and the most the LP's
  // columns could serve.
  const SparseRow& served() const { return served_; }
  double requests() const { return requests_; }
  double served_outside() const { return served_outside_; }
  double servable() const { return servable_; }
  int slots() const { return slots_; }

 private:
  TimeMs SlotStart(int t) const { return static_cast<TimeMs>(t) * slot_; }
  TimeMs SlotEnd(int t) const { return std::min(horizon_, SlotStart(t + 1)); }
  // Hours of slot t within [from, to).
  double Overlap(int t, TimeMs from, TimeMs to) const {
    return ToHours(std::max<TimeMs>(0, std::min(to, SlotEnd(t)) - std::max(from, SlotStart(t))));
  }
  // The slot a completion at `at` falls in: (start, end], the first slot for 0.
  int CompletionSlot(TimeMs at) const {
    return at <= 0 ? 0 : std::min(slots_ - 1, static_cast<int>((at - 1) / slot_));
  }

  // GPU-hours per type and slot while the nodes are up (every node starts up; node_down and
  // node_up events in time order switch it).
  void AddCapacity() {
    const Cluster& c = in_.cluster;
    std::vector<TimeMs> up_since(c.node_count(), 0);
    auto close = [&](size_t n, TimeMs to) {
      const Node& node = c.node(static_cast<NodeIndex>(n));
      if (node.gpu_count <= 0 || node.gpu_type == kNoGpuType) return;
      const TimeMs from = up_since[n];
      to = std::min(to, horizon_);
      if (to <= from) return;
      for (int t = static_cast<int>(from / slot_); t < slots_ && SlotStart(t) < to; ++t) {
        const double h = node.gpu_count * Overlap(t, from, to);
        capacity_[static_cast<size_t>(node.gpu_type)][static_cast<size_t>(t)] += h;
        if (node.mig_enabled)
          mig_capacity_[static_cast<size_t>(node.gpu_type)][static_cast<size_t>(t)] += h;
      }
    };
    for (const ScenarioEvent& e : in_.events) {
      if (e.type != ScenarioEvent::kNodeDown && e.type != ScenarioEvent::kNodeUp) continue;
      for (size_t n = 0; n < c.node_count(); ++n) {
        if (c.node(static_cast<NodeIndex>(n)).name != e.target) continue;
        if (e.type == ScenarioEvent::kNodeDown && up_since[n] != kNever) {
          close(n, e.at);
          up_since[n] = kNever;
        } else if (e.type == ScenarioEvent::kNodeUp && up_since[n] == kNever) {
          up_since[n] = e.at;
        }
      }
    }
    for (size_t n = 0; n < c.node_count(); ++n)
      if (up_since[n] != kNever) close(n, horizon_);
  }

  // The capacity rows a column on `u` in slot t occupies (-1: no capacity there).
  bool CapacityEntries(const Usable& u, int t, std::vector<std::pair<int, double>>* e) {
    const auto k = static_cast<size_t>(u.type);
    const auto s = static_cast<size_t>(t);
    if (capacity_[k][s] <= 0 || (u.mig && mig_capacity_[k][s] <= 0)) return false;
    if (capacity_row_[k][s] < 0) capacity_row_[k][s] = lp_.AddRow(-kInf, capacity_[k][s]);
    e->push_back({capacity_row_[k][s], u.gpus});
    if (u.mig) {
      if (mig_row_[k][s] < 0) mig_row_[k][s] = lp_.AddRow(-kInf, mig_capacity_[k][s]);
      e->push_back({mig_row_[k][s], u.gpus});
    }
    return true;
  }

  // Columns x[k][t] (hours the whole gang runs on type k in slot t), z[i] (the fraction of
  // the job completing in the i-th slot kept) and s[i] (work done beyond what completions by
  // then needed). Returns whether the job can complete at all.
  bool AddJob(const WorkloadSpec& s, TimeMs end) {
    if (s.shape.gpu_count == 0) {  // host-only: no GPU capacity to share; runs at speed 1
      const TimeMs done = EarliestEnd(s, 1.0);
      if (done > end) return false;
      constant_ += s.value.CompletionValue(done, s.deadline);
      return true;
    }
    const std::vector<Usable> usable = UsableTypes(s, in_.cluster);
    double best = 0;
    for (const Usable& u : usable) best = std::max(best, u.speed);
    if (best <= 0) return false;
    const TimeMs earliest = EarliestEnd(s, best);
    if (earliest > end) return false;
    // Completion slots worth a variable: value at the slot's start (or the earliest
    // completion), kept where it is larger than the next slot's (an equal later slot asks
    // for no more work) and positive.
    std::vector<std::pair<int, double>> kept;  // slot, value
    const int last = CompletionSlot(end);
    for (int t = CompletionSlot(earliest); t <= last; ++t) {
      const double v = s.value.CompletionValue(std::max(SlotStart(t), earliest), s.deadline);
      const double next =
          t < last ? s.value.CompletionValue(std::max(SlotStart(t + 1), earliest), s.deadline) : -1;
      if (v > 0 && v > next) kept.push_back({t, v});
    }
    if (kept.empty()) return false;
    const double work_h = s.work_seconds / 3600.0;
    if (work_h <= 0) {
      constant_ += kept.front().second;
      return true;
    }
    // Rows: chain[i]: work done in slots (kept[i-1], kept[i]] + s[i-1] - s[i] - z[i] >= 0
    // (work in units of the job's work); one row sum z <= 1 when there are several.
    const size_t m = kept.size();
    std::vector<int> chain(m);
    for (size_t i = 0; i < m; ++i) chain[i] = lp_.AddRow(0, kInf);
    std::vector<std::pair<int, double>> e;
    size_t seg = 0;
    for (int t = static_cast<int>(s.submit_at / slot_); t <= kept.back().first; ++t) {
      while (t > kept[seg].first) ++seg;
      const double avail = Overlap(t, s.submit_at, end);
      if (avail <= 0) continue;
      // At most the whole gang for the slot's available time, over all its types.
      const int width = usable.size() > 1 ? lp_.AddRow(-kInf, avail) : -1;
      for (const Usable& u : usable) {
        e.clear();
        if (!CapacityEntries(u, t, &e)) continue;
        e.push_back({chain[seg], u.speed / work_h});
        if (width >= 0) e.push_back({width, 1.0});
        lp_.AddColumn(0, width >= 0 ? kInf : avail, e);
      }
    }
    const int one = m > 1 ? lp_.AddRow(-kInf, 1) : -1;
    for (size_t i = 0; i < m; ++i) {
      e.clear();
      e.push_back({chain[i], -1.0});
      if (one >= 0) e.push_back({one, 1.0});
      lp_.AddColumn(kept[i].second, 1, e);
      if (i + 1 < m) lp_.AddColumn(0, kInf, {{chain[i], -1.0}, {chain[i + 1], 1.0}});
    }
    return true;
  }

  // A service's replicas counted one by one: at an instant of demand d the k-th replica
  // serves min(cap, d - (k-1) cap) at most (0 when d <= (k-1) cap). Per slot, w[k][level]
  // is how long the k-th replica is held while the demand is at that level (at most the
  // time the demand spends there), earning what it serves then per 1,000 requests; the
  // replica-hours sum w is at most the replica-hours x[type] held on the types, which
  // occupy capacity. k runs up to max_replicas, and only from the first possible ready
  // time. Since a schedule's k-th replica is ready some part of the slot, it serves at
  // most the best part of that length: whole replicas, and never less than a schedule.
  void AddService(const WorkloadSpec& s, TimeMs end) {
    const TimeMs ready = FirstReady(s);
    const double per_1k = std::max(0.0, s.value.per_1k_requests);
    const double cap = s.realtime.capacity_rps;
    const int most = std::max(s.realtime.min_replicas, s.realtime.max_replicas);
    ForEachDemandPiece(s, s.submit_at, end, [&](TimeMs from, TimeMs to, double rps) {
      requests_ += 3.6 * std::max(0.0, rps) * ToHours(to - from);
    });
    // A service worth nothing per request still counts in the SLO: its columns earn 0.
    if (ready >= end || cap <= 0 || most <= 0) return;
    // Per slot: (rps, hours) at each demand level after the first ready time.
    std::vector<std::vector<std::pair<double, double>>> levels(static_cast<size_t>(slots_));
    ForEachDemandPiece(s, ready, end, [&](TimeMs from, TimeMs to, double rps) {
      if (rps <= 0) return;
      for (int t = static_cast<int>(from / slot_); t < slots_ && SlotStart(t) < to; ++t)
        levels[static_cast<size_t>(t)].push_back({rps, Overlap(t, from, to)});
    });
    const std::vector<Usable> usable =
        s.shape.gpu_count > 0 ? UsableTypes(s, in_.cluster) : std::vector<Usable>{};
    if (s.shape.gpu_count > 0 && usable.empty()) return;
    // No schedule holds more replicas than the usable GPUs take at once (a MIG GPU takes
    // 7 slices at most): a service with no max_replicas and a demand of 1e6 times its
    // capacity once built a million columns a slot.
    int fit = most;
    if (s.shape.gpu_count > 0) {
      double gpus = 0;
      for (const Usable& u : usable)
        gpus += in_.cluster.gpus_per_type()[static_cast<size_t>(u.type)];
      const double per =
          s.shape.mode == ShareMode::kMig
              ? 1.0 / 7
              : static_cast<double>(s.shape.TotalMilli(in_.cluster.catalog())) / 1000.0;
      fit = static_cast<int>(std::min<double>(most, std::floor(gpus / std::max(per, 1e-3)) + 1));
    }
    std::vector<std::pair<int, double>> e;
    for (int t = 0; t < slots_; ++t) {
      auto& lv = levels[static_cast<size_t>(t)];
      if (lv.empty()) continue;
      std::sort(lv.begin(), lv.end(), [](auto& a, auto& b) { return a.first > b.first; });
      size_t n = 0;  // merge equal levels
      for (size_t i = 0; i < lv.size(); ++i) {
        if (n > 0 && lv[n - 1].first == lv[i].first) {
          lv[n - 1].second += lv[i].second;
        } else {
          lv[n++] = lv[i];
        }
      }
      lv.resize(n);
      // In double first: a tiny capacity must not overflow the count.
      const int replicas = static_cast<int>(
          std::min<double>(s.shape.gpu_count > 0 ? fit : most, std::ceil(lv[0].first / cap)));
      if (s.shape.gpu_count == 0) {  // host-only replicas: no GPU capacity limits them
        // The k-th serves min(cap, rps - (k - 1) cap), so all of them min(rps, replicas cap).
        for (const auto& [rps, h] : lv) {
          const double served = 3.6 * h * std::min(rps, replicas * cap);
          constant_ += per_1k * served;
          served_outside_ += served;
        }
        continue;
      }
      const int held = lp_.AddRow(-kInf, 0);  // sum w - sum x <= 0
      for (int k = 1; k <= replicas; ++k) {
        double full = 0;  // hours the demand keeps the k-th replica busy
        for (const auto& [rps, h] : lv) {
          const double serves = rps - (k - 1) * cap;
          if (serves >= cap) {
            full += h;
          } else if (serves > 0) {
            served_.columns.push_back(lp_.columns());
            served_.values.push_back(3.6 * serves);
            lp_.AddColumn(per_1k * 3.6 * serves, h, {{held, 1.0}});
            servable_ += 3.6 * serves * h;
          }
        }
        if (full > 0) {
          served_.columns.push_back(lp_.columns());
          served_.values.push_back(3.6 * cap);
          lp_.AddColumn(per_1k * 3.6 * cap, full, {{held, 1.0}});
          servable_ += 3.6 * cap * full;
        }
      }
      const double avail = Overlap(t, ready, end);
      for (const Usable& u : usable) {
        e.clear();
        if (!CapacityEntries(u, t, &e)) continue;
        e.push_back({held, -1.0});
        lp_.AddColumn(0, replicas * avail, e);
      }
    }
  }

  // A service with model variants (its members, RealtimeProfile::is_member), as a fluid
  // relaxation. Per slot t: y[v][k] replica-hours of variant v on type k (occupying its
  // capacity, at most max_replicas for the time v can be ready: its member's submission plus
  // its own cold start); a[c][v] thousands of class c's requests served by a variant v that
  // serves c, worth per_1k x v's quality, at most what v's replicas serve at their
  // throughput on each type (sum_c a[c][v] <= sum_k 3.6 rate[v][k] y[v][k]) and, over the
  // variants, at most class c's requests in the slot (each variant's own after it can be
  // ready). Looser than AddService's replica-by-replica rows, and still never below a
  // schedule: replicas may be fractional, a slot's capacity serves its demand in any order,
  // a variant that a job produces may run from the start, and the quality floor is not
  // imposed (a schedule that breaks it is bounded too).
  void AddVariantService(const std::vector<const WorkloadSpec*>& members) {
    const RealtimeProfile& rt = members.front()->realtime;
    const TimeMs submit = members.front()->submit_at;
    TimeMs end = horizon_;
    if (auto it = cancelled_.find(rt.group); it != cancelled_.end())
      end = std::min(end, it->second);
    for (const WorkloadSpec* m : members)
      if (auto it = cancelled_.find(m->name); it != cancelled_.end())
        end = std::min(end, it->second);
    const double per_1k = std::max(0.0, members.front()->value.per_1k_requests);
    const size_t classes = rt.classes.size();
    // Thousands of class c's requests in slot t from `from` on.
    auto requests_in = [&](size_t c, int t, TimeMs from) {
      double k = 0;
      ForEachCurvePiece(
          rt.classes[c].demand, submit, std::max(from, SlotStart(t)), std::min(end, SlotEnd(t)),
          [&](TimeMs a, TimeMs b, double rps) { k += 3.6 * std::max(0.0, rps) * ToHours(b - a); });
      return k;
    };
    TimeMs first_ready = kNever;
    for (const WorkloadSpec* m : members) first_ready = std::min(first_ready, FirstReady(*m));
    for (size_t c = 0; c < classes; ++c)
      ForEachCurvePiece(rt.classes[c].demand, submit, submit, end,
                        [&](TimeMs a, TimeMs b, double rps) {
                          requests_ += 3.6 * std::max(0.0, rps) * ToHours(b - a);
                        });
    if (first_ready >= end) return;
    std::vector<std::pair<int, double>> e;
    for (int t = static_cast<int>(first_ready / slot_); t < slots_ && SlotStart(t) < end; ++t) {
      // The service's replicas together hold each type's GPUs at most while one of its
      // variants can be ready.
      std::vector<int> type_row(gpus_of_type_.size(), -1);
      const double group_avail = Overlap(t, first_ready, end);
      auto type_row_of = [&](GpuTypeId type) {
        int& row = type_row[static_cast<size_t>(type)];
        if (row < 0)
          row = lp_.AddRow(-kInf, gpus_of_type_[static_cast<size_t>(type)] * group_avail);
        return row;
      };
      std::vector<int> demand_row(classes, -1);
      for (size_t c = 0; c < classes; ++c) {
        // The most any variant serving c could serve of it in this slot.
        double most = 0;
        for (const WorkloadSpec* m : members)
          if (rt.variants[static_cast<size_t>(m->realtime.variant)].Serves(static_cast<int>(c)))
            most = std::max(most, requests_in(c, t, FirstReady(*m)));
        if (most <= 0) continue;
        demand_row[c] = lp_.AddRow(-kInf, most);
        servable_ += most;
      }
      for (const WorkloadSpec* m : members) {
        const ModelVariant& v = rt.variants[static_cast<size_t>(m->realtime.variant)];
        const double avail = Overlap(t, FirstReady(*m), end);
        if (avail <= 0) continue;
        const int most = std::max(m->realtime.min_replicas, m->realtime.max_replicas);
        const bool bounded = most < kUnboundedReplicas;
        int capacity = -1;
        if (m->shape.gpu_count == 0) {  // host-only replicas: no GPU capacity limits them
          double rate = 0;
          for (const auto& [type, rps] : v.throughput_rps) rate = std::max(rate, rps);
          capacity = lp_.AddRow(-kInf, bounded ? 3.6 * rate * most * avail : kInf);
        } else {
          capacity = lp_.AddRow(-kInf, 0);  // sum_c a - sum_k 3.6 rate y <= 0
          const int replicas = bounded ? lp_.AddRow(-kInf, most * avail) : -1;
          for (const Usable& u : UsableTypes(*m, in_.cluster)) {
            const double rate = v.ThroughputOn(u.type);
            e.clear();
            if (rate <= 0 || !CapacityEntries(u, t, &e)) continue;
            e.push_back({capacity, -3.6 * rate});
            if (replicas >= 0) e.push_back({replicas, 1.0});
            e.push_back({type_row_of(u.type), u.gpus});
            // Replicas are held only while the variant can be ready: at most the type's
            // GPUs for that long.
            const double gpu_hours =
                std::min(capacity_[static_cast<size_t>(u.type)][static_cast<size_t>(t)],
                         gpus_of_type_[static_cast<size_t>(u.type)] * avail);
            lp_.AddColumn(0, gpu_hours / u.gpus, e);
          }
        }
        for (size_t c = 0; c < classes; ++c) {
          if (demand_row[c] < 0 || !v.Serves(static_cast<int>(c))) continue;
          const double own = requests_in(c, t, FirstReady(*m));
          if (own <= 0) continue;
          served_.columns.push_back(lp_.columns());
          served_.values.push_back(1.0);
          lp_.AddColumn(per_1k * v.quality, own, {{demand_row[c], 1.0}, {capacity, 1.0}});
        }
      }
    }
  }

  const SimInput& in_;
  const TimeMs horizon_;
  const DurationMs slot_;
  int slots_ = 0;
  std::vector<std::vector<double>> capacity_, mig_capacity_;  // GPU-hours [type][slot]
  std::vector<double> gpus_of_type_;                          // installed, [type]
  std::vector<std::vector<int>> capacity_row_, mig_row_;      // row index or -1
  std::unordered_map<std::string, TimeMs> cancelled_;
  LpBuilder lp_;
  double constant_ = 0;  // value earned outside the LP (host-only work)
  SparseRow served_;     // per column: thousands of requests served per unit
  double requests_ = 0, served_outside_ = 0, servable_ = 0;  // thousands of requests
};

}  // namespace

namespace {

constexpr DurationMs kSlots[] = {
    kMinute, 2 * kMinute, 5 * kMinute, 10 * kMinute, 15 * kMinute, 20 * kMinute, 30 * kMinute,
    kHour,   2 * kHour,   3 * kHour,   4 * kHour,    6 * kHour,    12 * kHour,   kDay};

// CLP's status in words.
std::string LpStatusName(int status) {
  switch (status) {
    case 0:
      return "optimal";
    case 1:
      return "infeasible";  // the bound alone cannot be: all zeros is feasible
    case 2:
      return "unbounded";  // cannot happen: every column is bounded
    case 3:
      return "time limit";
    default:
      return "solver error " + std::to_string(status);
  }
}

// The next longer slot length of kSlots, then twice as long.
DurationMs LongerSlot(DurationMs slot) {
  for (DurationMs s : kSlots)
    if (s > slot) return s;
  return slot * 2;
}

// However they are asked for, at most this many slots: the model keeps vectors per slot and
// type before any column counts, so 1-ms slots over 4 hours, or days over 1e12 s, once took
// all memory.
constexpr int64_t kMaxBoundSlots = 20000;

}  // namespace

DurationMs AutoSlot(TimeMs horizon) {
  // 48 slots a day, at least 48 and at most 192 in all.
  const double days = static_cast<double>(horizon) / kDay;
  const double most = std::clamp(48.0 * days, 48.0, 192.0);
  for (DurationMs s : kSlots)
    if (static_cast<double>(horizon) / static_cast<double>(s) <= most * (1 + 1e-12)) return s;
  return kDay;
}

LpBound ComputeLpBound(const SimInput& input, TimeMs horizon, const LpBoundOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  LpBound b;
  b.installed_gpu_hours = static_cast<double>(input.cluster.gpu_count()) * ToHours(horizon);
  if (horizon <= 0 || horizon == kNever) {
    b.status = "no horizon";
    return b;
  }
  // Automatic slots grow while the LP has more columns than max_columns.
  DurationMs slot = options.slot > 0 ? options.slot : AutoSlot(horizon);
  // The horizon / kMaxBoundSlots, rounded up to a whole second.
  const DurationMs shortest =
      ((horizon + kMaxBoundSlots - 1) / kMaxBoundSlots + kSecond - 1) / kSecond * kSecond;
  while (slot < shortest) slot = options.slot > 0 ? shortest : LongerSlot(slot);
  std::optional<BoundModel> model;
  for (;;) {
    LpBound counts;
    model.emplace(input, horizon, slot);
    model->Build(&counts);
    b.jobs = counts.jobs;
    b.jobs_in_lp = counts.jobs_in_lp;
    b.services = counts.services;
    if (options.slot > 0 || options.max_columns <= 0 ||
        model->lp().columns() <= options.max_columns || slot >= horizon)
      break;
    slot = LongerSlot(slot);
  }
  b.slot = slot;
  b.slots = model->slots();
  const LpBuilder& lp = model->lp();
  b.rows = lp.rows();
  b.columns = lp.columns();
  b.nonzeros = lp.nonzeros();
  double objective = 0;
  int status = 0;
  // The bound at an SLO target: the same LP, solved again with its GPU replicas made to
  // serve what the target asks beyond what host-only replicas serve.
  const double requests = model->requests();
  const double need = options.slo * requests - model->served_outside();
  const double most = (model->servable() + model->served_outside()) / std::max(requests, 1e-12);
  const bool at_slo = options.slo > 0 && requests > 0;
  // Fewer requests than the target asks arrive after the first cold starts, within the
  // replicas' max_replicas, on types that take a replica: no schedule meets it.
  const bool beyond = at_slo && most < options.slo * (1 - 1e-9);
  LpBuilder::Then then;
  then.row = &model->served();
  then.lo = need * (1 - 1e-9);  // a target met to the last request is met
  const bool second = at_slo && !beyond && need > 0 && lp.columns() > 0;
  if (lp.columns() > 0)
    status = lp.Solve(options.max_seconds, &objective, second ? &then : nullptr);
  b.status = LpStatusName(status);
  if (status == 0) b.value = objective + model->constant();
  if (at_slo) {
    b.slo = options.slo;
    b.slo_most = std::min(1.0, most);
    if (status != 0) {
      b.slo_status = b.status;
    } else if (beyond || then.status == 1) {
      // Infeasible also when GPU capacity cannot hold the replicas the target needs.
      b.slo_status = "unreachable";
    } else if (!second) {
      b.slo_status = "optimal";
      b.slo_value = b.value;
    } else {
      b.slo_status = LpStatusName(then.status);
      if (then.status == 0) b.slo_value = then.objective + model->constant();
    }
  }
  b.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

}  // namespace airtime
