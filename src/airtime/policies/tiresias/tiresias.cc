#include "airtime/policies/tiresias/tiresias.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <tuple>

#include "airtime/base/strings.h"
#include "airtime/engine/engine.h"
#include "airtime/policies/plugins/common_plugins.h"
#include "airtime/policies/plugins/what_if.h"

namespace airtime {
namespace {

struct TiresiasParams {
  std::vector<double> thresholds = {3600};  // GPU-seconds; K - 1 of them, ascending
  double promote_knob = 8;
  bool preempt = true;
};

// Per workload, since it arrived or was last promoted.
struct Track {
  double attained = 0;  // GPU-seconds run
  double executed = 0;  // seconds run
  double pending = 0;   // seconds waited after it first ran
  int queue = 0;
  TimeMs entered = 0;    // when it joined its queue
  double held_gpus = 0;  // GPUs held since the last cycle
  bool waiting = false;  // queued since the last cycle
};

struct TiresiasState {
  TiresiasParams p;
  std::vector<Track> jobs;         // by WorkloadId
  std::vector<WorkloadId> active;  // running or waiting since the last cycle
  TimeMs last = 0;
  uint64_t cycles = 0;  // decision cycles begun (the queues stay as they are within one)

  int QueueFor(double attained) const {
    int q = 0;
    while (q < static_cast<int>(p.thresholds.size()) &&
           attained >= p.thresholds[static_cast<size_t>(q)])
      ++q;
    return q;
  }
  const Track* track(const Job& job) const {
    return static_cast<size_t>(job.id) < jobs.size() ? &jobs[static_cast<size_t>(job.id)] : nullptr;
  }
};

class LasOrder : public QueueSortPlugin {
 public:
  explicit LasOrder(std::shared_ptr<TiresiasState> st) : st_(std::move(st)) {}
  std::string_view name() const override { return "2d-las"; }
  bool dynamic() const override { return true; }
  QueueKey Key(const Job& job, const Engine&) const override {
    const Track* t = st_->track(job);
    if (job.is_service() || !t) return {0.0, static_cast<double>(job.queued_since)};
    return {static_cast<double>(t->queue), static_cast<double>(t->entered)};
  }

 private:
  std::shared_ptr<TiresiasState> st_;
};

// Integrates attained service between cycles, demotes and promotes, and asks for the next
// cycle at which a threshold crossing or a promotion could change what runs.
class LasCycle : public CyclePlugin {
 public:
  explicit LasCycle(std::shared_ptr<TiresiasState> st) : st_(std::move(st)) {}
  std::string_view name() const override { return "2d-las-service"; }

  void BeforeAllocate(Engine& engine) override {
    TiresiasState& st = *st_;
    ++st.cycles;
    const TimeMs now = engine.now();
    while (st.jobs.size() < engine.job_count()) {
      Track t;
      t.entered = engine.job(static_cast<WorkloadId>(st.jobs.size())).submitted;
      st.jobs.push_back(t);
    }
    const double dt = ToSeconds(now - st.last);
    st.last = now;
    for (WorkloadId id : st.active) {
      Track& t = st.jobs[static_cast<size_t>(id)];
      if (t.held_gpus > 0) {
        t.attained += t.held_gpus * dt;
        t.executed += dt;
      } else if (t.waiting && t.executed > 0) {
        t.pending += dt;
      }
      const Job& job = engine.job(id);
      if (job.is_service()) continue;
      const int q = std::max(t.queue, st.QueueFor(t.attained));
      if (q != t.queue) {
        // Demoted: joins the back of the lower queue when it crossed the threshold.
        const double over = t.attained - st.p.thresholds[static_cast<size_t>(q - 1)];
        t.queue = q;
        t.entered = t.held_gpus > 0 ? now - static_cast<TimeMs>(over / t.held_gpus * kSecond) : now;
      }
      if (job.queued && t.queue > 0 && st.p.promote_knob > 0 && t.executed > 0 &&
          t.pending >= st.p.promote_knob * t.executed) {
        t = Track{};  // promoted: back to the top queue, attained service reset
        t.entered = now;
      }
    }
  }

  void AfterAllocate(Engine& engine) override {
    TiresiasState& st = *st_;
    for (WorkloadId id : st.active) {
      st.jobs[static_cast<size_t>(id)].held_gpus = 0;
      st.jobs[static_cast<size_t>(id)].waiting = false;
    }
    st.active.clear();
    for (const auto& [aid, a] : engine.allocations()) {
      Track& t = st.jobs[static_cast<size_t>(a.workload)];
      if (t.held_gpus == 0 && !t.waiting) st.active.push_back(a.workload);
      t.held_gpus += static_cast<double>(a.placement.total_milli()) / 1000.0;
    }
    int top_waiting = 1 << 20;  // the best queue any fitting-able waiting job is in
    for (WorkloadId id : engine.queue()) {
      Track& t = st.jobs[static_cast<size_t>(id)];
      if (t.held_gpus == 0 && !t.waiting) st.active.push_back(id);
      t.waiting = true;
      const Job& job = engine.job(id);
      if (!job.never_fits) top_waiting = std::min(top_waiting, job.is_service() ? 0 : t.queue);
    }
    std::sort(st.active.begin(), st.active.end());
    if (engine.queue().empty() || !st.p.preempt) return;
    // Running preemptible jobs: when each crosses its next threshold (if that lets a waiting
    // job outrank it before it ends), and the latest end among them.
    const TimeMs now = engine.now();
    TimeMs latest_end = now;
    for (const auto& [aid, a] : engine.allocations()) {
      const Job& job = engine.job(a.workload);
      if (job.is_service() || !job.s().preemptible) continue;
      const Track& t = st.jobs[static_cast<size_t>(a.workload)];
      latest_end = std::max(latest_end, a.expected_end);
      if (t.queue >= static_cast<int>(st.p.thresholds.size()) || t.queue < top_waiting ||
          t.held_gpus <= 0)
        continue;
      const double left = st.p.thresholds[static_cast<size_t>(t.queue)] - t.attained;
      const TimeMs at = now + static_cast<TimeMs>(std::ceil(left / t.held_gpus * kSecond));
      if (at < a.expected_end) engine.WakeAt(at);
    }
    if (st.p.promote_knob <= 0) return;
    for (WorkloadId id : engine.queue()) {
      const Track& t = st.jobs[static_cast<size_t>(id)];
      if (t.queue == 0 || t.executed <= 0 || engine.job(id).never_fits) continue;
      const double left = st.p.promote_knob * t.executed - t.pending;
      const TimeMs at = now + static_cast<TimeMs>(std::ceil(std::max(0.0, left) * kSecond));
      if (at < latest_end) engine.WakeAt(at);
    }
  }

 private:
  std::shared_ptr<TiresiasState> st_;
};

// A waiting job preempts running preemptible jobs of lower queues: lowest queue and latest
// to join it first, and only those it needs.
class LasPreempt : public PreemptPlugin {
 public:
  explicit LasPreempt(std::shared_ptr<TiresiasState> st) : st_(std::move(st)) {}
  std::string_view name() const override { return "2d-las-preempt"; }

  bool MakeRoom(const Job& job, Engine& engine) override {
    const TiresiasState& st = *st_;
    const Track* mine = st.track(job);
    const int my_queue = job.is_service() || !mine ? 0 : mine->queue;
    // What it finds depends on the shape (the fit class), the queue (fixed within a cycle)
    // and the GPUs: a long queue of jobs alike is not searched again and again while no
    // allocation came or went and the free capacity (holds, nodes down) is the same.
    const auto& allocs = engine.allocations();
    int64_t free_milli = 0;
    for (size_t t = 0; t < engine.catalog().size(); ++t)
      free_milli += engine.state().free_milli_of_type(static_cast<GpuTypeId>(t));
    const Fingerprint fp{st.cycles, engine.state().allocated_milli(), free_milli, allocs.size(),
                         allocs.empty() ? kNoAllocation : allocs.rbegin()->first};
    if (fp != fp_) {
      fp_ = fp;
      failed_.clear();
    }
    const std::pair<int, int> kind{job.fit_class, my_queue};
    if (failed_.count(kind)) return false;
    const bool made = FindAndPreempt(job, engine, my_queue);
    if (!made) failed_.insert(kind);
    return made;
  }

 private:
  bool FindAndPreempt(const Job& job, Engine& engine, int my_queue) {
    const TiresiasState& st = *st_;
    struct Victim {
      int queue;
      TimeMs entered;
      const Allocation* a;
    };
    std::vector<Victim> victims;
    for (const auto& [aid, a] : engine.allocations()) {
      const Job& v = engine.job(a.workload);
      if (v.is_service() || !v.s().preemptible || a.workload == job.id) continue;
      const Track& t = st.jobs[static_cast<size_t>(a.workload)];
      if (t.queue > my_queue) victims.push_back({t.queue, t.entered, &a});
    }
    if (victims.empty()) return false;
    std::sort(victims.begin(), victims.end(), [](const Victim& x, const Victim& y) {
      if (x.queue != y.queue) return x.queue > y.queue;
      if (x.entered != y.entered) return x.entered > y.entered;
      return x.a->id > y.a->id;
    });
    const Shape& shape = job.s().shape;
    ClusterState what_if = engine.state();
    size_t used = 0;
    while (used < victims.size() && !FitsIn(what_if, shape))
      what_if.Release(victims[used++].a->placement);
    if (!FitsIn(what_if, shape)) return false;
    // Spare the victims it does not need, the highest-ranked first.
    std::vector<bool> spared(used, false);
    for (size_t i = used; i-- > 0;) {
      what_if.Apply(victims[i].a->placement);
      if (FitsIn(what_if, shape)) {
        spared[i] = true;
      } else {
        what_if.Release(victims[i].a->placement);
      }
    }
    std::vector<AllocationId> chosen;
    std::vector<std::string> reasons;
    for (size_t i = 0; i < used; ++i) {
      if (spared[i]) continue;
      const Victim& v = victims[i];
      char buf[64];
      std::snprintf(buf, sizeof buf, "' in Q%d (%.2f GPU-h attained) for '", v.queue,
                    st.jobs[static_cast<size_t>(v.a->workload)].attained / 3600.0);
      chosen.push_back(v.a->id);
      reasons.push_back("2D-LAS: preempts '" + engine.job(v.a->workload).s().name + buf +
                        job.s().name + "' in Q" + std::to_string(my_queue));
    }
    for (size_t i = 0; i < chosen.size(); ++i) engine.Preempt(chosen[i], std::move(reasons[i]));
    return !chosen.empty();
  }

  std::shared_ptr<TiresiasState> st_;
  using Fingerprint = std::tuple<uint64_t, int64_t, int64_t, size_t, AllocationId>;
  Fingerprint fp_{0, -1, -1, 0, kNoAllocation};
  std::set<std::pair<int, int>> failed_;  // (fit class, queue) that found no victims at fp_
};

StatusOr<TiresiasParams> ParseParams(const PolicyParams& params) {
  TiresiasParams p;
  const std::string thresholds = params.GetString("thresholds", "");
  if (!thresholds.empty()) {
    p.thresholds.clear();
    for (std::string_view part : Split(thresholds, ',')) {
      auto d = ParseDurationMs(Trim(part));
      if (!d || *d <= 0 || (!p.thresholds.empty() && ToSeconds(*d) <= p.thresholds.back()))
        return InvalidArgument(
            "policy 'tiresias': thresholds must be ascending GPU-time durations such as "
            "'1h' or '30m,4h', got '" +
            thresholds + "'");
      p.thresholds.push_back(ToSeconds(*d));
    }
  }
  auto knob = params.GetDouble("promote_knob", p.promote_knob);
  if (!knob.ok()) return knob.status();
  if (*knob < 0) return InvalidArgument("policy 'tiresias': promote_knob must be >= 0");
  p.promote_knob = *knob;
  auto preempt = params.GetDouble("preempt", 1);
  if (!preempt.ok()) return preempt.status();
  p.preempt = *preempt != 0;
  return p;
}

}  // namespace

void RegisterTiresias(PolicyRegistry& registry) {
  registry.Register(
      "tiresias",
      "Tiresias 2D-LAS: queues by attained GPU-time, FIFO within a queue, preemption of lower "
      "queues, promotion of starved jobs",
      {"thresholds", "promote_knob", "preempt"},
      [](const Cluster&, const PolicyParams& params) -> StatusOr<Policy> {
        auto parsed = ParseParams(params);
        if (!parsed.ok()) return parsed.status();
        auto st = std::make_shared<TiresiasState>();
        st->p = *parsed;
        Policy p;
        p.name = "tiresias";
        p.description = "Tiresias discretized 2D-LAS (" +
                        std::to_string(st->p.thresholds.size() + 1) + " queues)";
        p.queue_sort = std::make_unique<LasOrder>(st);
        if (st->p.preempt) p.preempt = std::make_unique<LasPreempt>(st);
        p.scores.emplace_back(std::make_unique<BestFitScore>(), 1.0);
        p.cycle.push_back(std::make_unique<LasCycle>(st));
        return p;
      });
}

}  // namespace airtime
