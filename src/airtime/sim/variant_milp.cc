#include "airtime/sim/variant_milp.h"

#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>

namespace airtime {
namespace {

constexpr int kNone = -1;

// The program as CBC takes it: columns with bounds and objective (to maximize), rows with
// bounds, the coefficients as triplets.
class Program {
 public:
  int Column(double lo, double hi, double value, bool integer) {
    lo_.push_back(lo);
    hi_.push_back(hi);
    obj_.push_back(-value);  // CBC minimizes
    if (integer) integers_.push_back(static_cast<int>(lo_.size()) - 1);
    return static_cast<int>(lo_.size()) - 1;
  }
  // A row lo <= sum coef x col <= hi; columns kNone are skipped.
  void Row(const std::vector<std::pair<int, double>>& terms, double lo, double hi) {
    const int r = static_cast<int>(row_lo_.size());
    for (const auto& [col, coef] : terms) {
      if (col == kNone || coef == 0) continue;
      rows_.push_back(r);
      cols_.push_back(col);
      coefs_.push_back(coef);
    }
    row_lo_.push_back(lo);
    row_hi_.push_back(hi);
  }
  int rows() const { return static_cast<int>(row_lo_.size()); }
  int columns() const { return static_cast<int>(lo_.size()); }
  int integers() const { return static_cast<int>(integers_.size()); }

  // Solves; the solution (empty: none), the objective (as a maximum) and the best bound.
  struct Outcome {
    std::string status;
    std::vector<double> x;
    double value = 0, bound = 0;
  };
  Outcome Solve(const VariantMilpOptions& o) const {
    OsiClpSolverInterface solver;
    const CoinPackedMatrix m(false, rows_.data(), cols_.data(), coefs_.data(),
                             static_cast<CoinBigIndex>(coefs_.size()));
    // CoinPackedMatrix sizes itself by the highest index seen: pad rows and columns that
    // have no coefficient.
    CoinPackedMatrix full(m);
    full.setDimensions(rows(), columns());
    solver.loadProblem(full, lo_.data(), hi_.data(), obj_.data(), row_lo_.data(), row_hi_.data());
    for (int c : integers_) solver.setInteger(c);
    solver.messageHandler()->setLogLevel(0);
    CbcModel model(solver);
    model.setLogLevel(0);
    model.messageHandler()->setLogLevel(0);
    // CBC's standard driver: presolve, cut generators and heuristics, as its command line
    // runs them.
    const std::string seconds = std::to_string(o.max_seconds);
    const std::string ratio = std::to_string(o.relative_gap);
    const char* argv[] = {"airtime", "-log",        "0",      "-sec", seconds.c_str(),
                          "-ratio",  ratio.c_str(), "-solve", "-quit"};
    CbcMain0(model);
    model.setLogLevel(0);
    CbcMain1(static_cast<int>(sizeof argv / sizeof argv[0]), argv, model);
    Outcome out;
    out.bound = -model.getBestPossibleObjValue();
    if (model.isProvenInfeasible()) {
      out.status = "infeasible";
      return out;
    }
    const double* best = model.bestSolution();
    if (best == nullptr) {
      out.status = "no solution";
      return out;
    }
    out.x.assign(best, best + columns());
    out.value = -model.getObjValue();
    out.status = model.isProvenOptimal() ? "optimal" : "time limit";
    if (out.status == "optimal") out.bound = std::max(out.bound, out.value);
    return out;
  }

 private:
  std::vector<double> lo_, hi_, obj_, row_lo_, row_hi_;
  std::vector<int> integers_, rows_, cols_;
  std::vector<double> coefs_;
};

}  // namespace

VariantMilpResult SolveVariantMilp(const VariantMilpInstance& in, const VariantMilpOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const size_t nt = in.gpus.size(), ns = static_cast<size_t>(std::max(in.slots, 0));
  const double h = in.slot_hours;
  Program p;
  VariantMilpResult res;

  // Columns. x, a: [i][v][t][s]; r: [i][c][v][s]; w: [j][t][s] (the share of the job's gang
  // that runs); z: [j].
  using Grid = std::vector<std::vector<std::vector<std::vector<int>>>>;
  Grid x(in.services.size()), a(in.services.size()), r(in.services.size());
  for (size_t i = 0; i < in.services.size(); ++i) {
    const auto& svc = in.services[i];
    const double per_request = svc.value_per_request * 3600 * h;
    x[i].assign(svc.variants.size(), std::vector<std::vector<int>>(nt));
    a[i] = x[i];
    r[i].assign(svc.classes.size(),
                std::vector<std::vector<int>>(svc.variants.size(), std::vector<int>(ns, kNone)));
    for (size_t v = 0; v < svc.variants.size(); ++v) {
      const auto& var = svc.variants[v];
      for (size_t t = 0; t < nt; ++t) {
        x[i][v][t].assign(ns, kNone);
        a[i][v][t].assign(ns, kNone);
        if (t >= var.rps.size() || var.rps[t] <= 0 || var.gpus <= 0) continue;
        // No more replicas than the type's GPUs hold.
        const double most =
            std::min<double>(var.max_replicas, std::floor(in.gpus[t] / var.gpus + 1e-9));
        for (size_t s = 0; s < ns; ++s) {
          x[i][v][t][s] = p.Column(0, most, 0, true);
          a[i][v][t][s] = p.Column(0, most, 0, false);
        }
      }
      for (size_t c = 0; c < svc.classes.size(); ++c) {
        if (c >= var.serves.size() || !var.serves[c]) continue;
        for (size_t s = 0; s < ns; ++s) {
          const double d = s < svc.demand.size() && c < svc.demand[s].size() ? svc.demand[s][c] : 0;
          r[i][c][v][s] = p.Column(0, std::max(d, 0.0), per_request * var.quality, false);
        }
      }
    }
  }
  std::vector<std::vector<std::vector<int>>> w(in.jobs.size());
  // z[j]: (slot, column) for each slot job j may complete in: those whose value is above the
  // next slot's (completing in a later slot of the same value asks for no more work).
  std::vector<std::vector<std::pair<size_t, int>>> z(in.jobs.size());
  auto value_in = [&](const VariantMilpInstance::Job& job, size_t s) {
    return job.value_by_slot.empty()      ? job.value
           : s < job.value_by_slot.size() ? job.value_by_slot[s]
                                          : 0.0;
  };
  for (size_t j = 0; j < in.jobs.size(); ++j) {
    const auto& job = in.jobs[j];
    w[j].assign(nt, std::vector<int>(ns, kNone));
    bool runs = false;
    const size_t first = static_cast<size_t>(std::max(job.first_slot, 0));
    for (size_t t = 0; t < nt; ++t) {
      if (t >= job.hours.size() || job.hours[t] <= 0 || job.gpus > in.gpus[t]) continue;
      for (size_t s = first; s < ns; ++s) {
        w[j][t][s] = p.Column(0, 1, 0, o.whole_gangs);
        runs = true;
      }
    }
    if (!runs) continue;
    for (size_t s = first; s < ns; ++s) {
      const double v = value_in(job, s);
      if (v > 0 && (s + 1 == ns || v > value_in(job, s + 1)))
        z[j].push_back({s, p.Column(0, 1, v, o.integer_jobs)});
    }
  }

  // Rows.
  for (size_t i = 0; i < in.services.size(); ++i) {
    const auto& svc = in.services[i];
    const double floor = svc.quality_floor;
    for (size_t s = 0; s < ns; ++s) {
      // Demand per class.
      for (size_t c = 0; c < svc.classes.size(); ++c) {
        std::vector<std::pair<int, double>> terms;
        for (size_t v = 0; v < svc.variants.size(); ++v) terms.push_back({r[i][c][v][s], 1});
        const double d = s < svc.demand.size() && c < svc.demand[s].size() ? svc.demand[s][c] : 0;
        p.Row(terms, -COIN_DBL_MAX, std::max(d, 0.0));
      }
      std::vector<std::pair<int, double>> quality, min_replicas;
      for (size_t v = 0; v < svc.variants.size(); ++v) {
        const auto& var = svc.variants[v];
        // Serving capacity: what the replicas serve, less what new ones miss while loading.
        const double cold = std::min(var.cold_start_hours, h) / h;
        std::vector<std::pair<int, double>> cap, count;
        for (size_t c = 0; c < svc.classes.size(); ++c) {
          cap.push_back({r[i][c][v][s], 1});
          quality.push_back({r[i][c][v][s], var.quality - floor});
        }
        for (size_t t = 0; t < nt; ++t) {
          if (x[i][v][t][s] == kNone) continue;
          cap.push_back({x[i][v][t][s], -var.rps[t]});
          cap.push_back({a[i][v][t][s], var.rps[t] * cold});
          count.push_back({x[i][v][t][s], 1});
          min_replicas.push_back({x[i][v][t][s], 1});
          // Starts: a[s] >= x[s] - x[s-1].
          std::vector<std::pair<int, double>> start = {{x[i][v][t][s], 1}, {a[i][v][t][s], -1}};
          if (s > 0) start.push_back({x[i][v][t][s - 1], -1});
          p.Row(start, -COIN_DBL_MAX, 0);
        }
        p.Row(cap, -COIN_DBL_MAX, 0);
        if (count.size() > 1) p.Row(count, -COIN_DBL_MAX, var.max_replicas);
      }
      if (floor > 0) p.Row(quality, 0, COIN_DBL_MAX);
      if (svc.min_replicas > 0) p.Row(min_replicas, svc.min_replicas, COIN_DBL_MAX);
    }
  }
  // GPUs per type and slot.
  for (size_t t = 0; t < nt; ++t) {
    for (size_t s = 0; s < ns; ++s) {
      std::vector<std::pair<int, double>> terms;
      for (size_t i = 0; i < in.services.size(); ++i)
        for (size_t v = 0; v < in.services[i].variants.size(); ++v)
          terms.push_back({x[i][v][t][s], in.services[i].variants[v].gpus});
      for (size_t j = 0; j < in.jobs.size(); ++j) terms.push_back({w[j][t][s], in.jobs[j].gpus});
      p.Row(terms, -COIN_DBL_MAX, in.gpus[t]);
    }
  }
  // Jobs: a gang's width per slot; completion by the slot by the work done by its end.
  for (size_t j = 0; j < in.jobs.size(); ++j) {
    if (z[j].empty()) continue;
    const auto& job = in.jobs[j];
    std::vector<std::pair<int, double>> done;  // completions so far less the work so far
    size_t k = 0;                              // the next completion slot
    for (size_t s = 0; s < ns && k < z[j].size(); ++s) {
      std::vector<std::pair<int, double>> width;
      for (size_t t = 0; t < nt; ++t) {
        if (w[j][t][s] == kNone) continue;
        width.push_back({w[j][t][s], 1});
        done.push_back({w[j][t][s], -h / job.hours[t]});
      }
      if (width.size() > 1) p.Row(width, -COIN_DBL_MAX, 1);
      if (z[j][k].first == s) {
        done.push_back({z[j][k].second, 1});
        p.Row(done, -COIN_DBL_MAX, 0);
        ++k;
      }
    }
    if (z[j].size() > 1) {
      std::vector<std::pair<int, double>> once;
      for (const auto& [s, col] : z[j]) once.push_back({col, 1});
      p.Row(once, -COIN_DBL_MAX, 1);
    }
  }

  res.rows = p.rows();
  res.columns = p.columns();
  res.integers = p.integers();
  const Program::Outcome out = p.Solve(o);
  res.status = out.status;
  res.value = out.value;
  res.bound = out.bound;
  if (!out.x.empty()) {
    res.replicas.resize(in.services.size());
    for (size_t i = 0; i < in.services.size(); ++i) {
      const auto& svc = in.services[i];
      res.replicas[i].assign(svc.variants.size(),
                             std::vector<std::vector<int>>(nt, std::vector<int>(ns, 0)));
      for (size_t v = 0; v < svc.variants.size(); ++v) {
        for (size_t t = 0; t < nt; ++t)
          for (size_t s = 0; s < ns; ++s)
            if (x[i][v][t][s] != kNone)
              res.replicas[i][v][t][s] =
                  static_cast<int>(std::lround(out.x[static_cast<size_t>(x[i][v][t][s])]));
        for (size_t c = 0; c < svc.classes.size(); ++c)
          for (size_t s = 0; s < ns; ++s)
            if (r[i][c][v][s] != kNone)
              res.realtime_value += out.x[static_cast<size_t>(r[i][c][v][s])] *
                                    svc.value_per_request * 3600 * h * svc.variants[v].quality;
      }
    }
    res.job_done.assign(in.jobs.size(), 0);
    res.job_slot.assign(in.jobs.size(), -1);
    for (size_t j = 0; j < in.jobs.size(); ++j) {
      for (const auto& [s, col] : z[j]) {
        const double done = out.x[static_cast<size_t>(col)];
        res.job_done[j] += done;
        res.job_value += done * value_in(in.jobs[j], s);
        if (done > 0.5) res.job_slot[j] = static_cast<int>(s);
      }
    }
  }
  res.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

std::vector<DemandPoint> SlotMeans(const std::vector<DemandPoint>& curve, TimeMs horizon,
                                   DurationMs slot) {
  std::vector<DemandPoint> out;
  for (TimeMs from = 0; from < horizon; from += slot) {
    const TimeMs to = std::min<TimeMs>(from + slot, horizon);
    double area = 0;
    for (size_t k = 0; k < curve.size(); ++k) {
      const TimeMs b = std::max(curve[k].at, from);
      const TimeMs e = std::min(k + 1 < curve.size() ? curve[k + 1].at : to, to);
      if (e > b) area += curve[k].rps * static_cast<double>(e - b);
    }
    out.push_back({from, area / static_cast<double>(to - from)});
  }
  return out;
}

VariantMilpInstance VariantMilpInstanceOf(const SimInput& input, TimeMs horizon, DurationMs slot,
                                          std::vector<std::string>* skipped) {
  VariantMilpInstance in;
  const GpuCatalog& catalog = input.cluster.catalog();
  in.slot_hours = ToHours(slot);
  in.slots = slot > 0 ? static_cast<int>((horizon + slot - 1) / slot) : 0;
  const std::vector<int>& per_type = input.cluster.gpus_per_type();
  // Only the types the cluster has, in catalogue order.
  std::vector<int> type_index(catalog.size(), kNone);
  std::vector<GpuTypeId> type_of;
  for (size_t t = 0; t < per_type.size(); ++t) {
    if (per_type[t] <= 0) continue;
    type_index[t] = static_cast<int>(in.gpus.size());
    type_of.push_back(static_cast<GpuTypeId>(t));
    in.types.push_back(catalog.type(static_cast<GpuTypeId>(t)).name);
    in.gpus.push_back(per_type[t]);
  }
  std::map<std::string, bool> seen;
  for (const WorkloadSpec& w : input.workloads) {
    if (w.submit_at >= horizon) continue;
    if (w.is_service()) {
      const RealtimeProfile& rt = w.realtime;
      if (!rt.is_member()) {
        if (skipped != nullptr) skipped->push_back(w.name + ": a service without variants");
        continue;
      }
      if (seen[rt.group]) continue;
      seen[rt.group] = true;
      VariantMilpInstance::Service svc;
      svc.name = rt.group;
      svc.value_per_request = w.value.per_1k_requests / 1000.0;
      svc.quality_floor = rt.quality_floor;
      for (const RequestClass& c : rt.classes) svc.classes.push_back(c.name);
      for (const ModelVariant& mv : rt.variants) {
        VariantMilpInstance::Variant var;
        var.name = mv.name;
        var.gpus = static_cast<double>(mv.shape.TotalMilli(catalog)) / 1000.0;
        var.rps.assign(in.gpus.size(), 0.0);
        for (const auto& [t, rps] : mv.throughput_rps)
          if (static_cast<size_t>(t) < type_index.size() && type_index[t] != kNone)
            var.rps[static_cast<size_t>(type_index[t])] = rps;
        var.quality = mv.quality;
        for (size_t c = 0; c < rt.classes.size(); ++c)
          var.serves.push_back(mv.Serves(static_cast<int>(c)));
        var.cold_start_hours = ToHours(mv.cold_start);
        var.max_replicas = mv.max_replicas;
        svc.variants.push_back(std::move(var));
      }
      svc.demand.assign(static_cast<size_t>(in.slots), std::vector<double>(rt.classes.size()));
      for (size_t c = 0; c < rt.classes.size(); ++c) {
        const std::vector<DemandPoint> means = SlotMeans(rt.classes[c].demand, horizon, slot);
        for (size_t s = 0; s < means.size() && s < svc.demand.size(); ++s)
          svc.demand[s][c] = means[s].rps;
      }
      in.services.push_back(std::move(svc));
      continue;
    }
    VariantMilpInstance::Job job;
    job.name = w.name;
    job.value = w.value.on_completion;
    job.gpus = static_cast<double>(w.shape.TotalMilli(catalog)) / 1000.0;
    job.first_slot = static_cast<int>(w.submit_at / slot);
    if (w.deadline) {
      job.value_by_slot.resize(static_cast<size_t>(in.slots));
      for (int s = 0; s < in.slots; ++s)
        job.value_by_slot[static_cast<size_t>(s)] =
            w.value.CompletionValue(std::min<TimeMs>((s + 1) * slot, horizon), w.deadline);
    }
    job.hours.assign(in.gpus.size(), 0.0);
    for (size_t k = 0; k < type_of.size(); ++k)
      if (w.shape.AllowsType(type_of[k]) && w.SpeedOn(type_of[k], catalog) > 0)
        job.hours[k] = ToHours(w.RunTimeOn(type_of[k], w.work_seconds, catalog));
    in.jobs.push_back(std::move(job));
  }
  // The min_replicas of a service's members (ExpandVariants gives them to one of them).
  for (const WorkloadSpec& w : input.workloads)
    if (w.is_service() && w.realtime.is_member())
      for (auto& svc : in.services)
        if (svc.name == w.realtime.group) svc.min_replicas += w.realtime.min_replicas;
  return in;
}

}  // namespace airtime
