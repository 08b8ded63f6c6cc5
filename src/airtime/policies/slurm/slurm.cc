#include "airtime/policies/slurm/slurm.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "airtime/base/strings.h"
#include "airtime/engine/engine.h"
#include "airtime/policies/plugins/common_plugins.h"
#include "airtime/policies/plugins/what_if.h"

namespace airtime {
namespace {

struct SlurmParams {
  double w_age = 1000, w_fairshare = 10000, w_size = 1000, w_qos = 10000;
  DurationMs max_age = 7 * kDay;
  DurationMs half_life = 7 * kDay;
  bool favor_small = false;
  double qos_max = 100;
  bool backfill = true;
  std::map<std::string, double> shares;  // configured; other tenants weigh 1
  // Backfill passes only at multiples of bf_interval (0: at every cycle); the cycles between
  // them are the main scheduler's, which stops at the first job that cannot start.
  DurationMs bf_interval = 0;
  // Nothing starts but at multiples of sched_tick (0: at every cycle): the scheduler runs at
  // most that often, whatever the events.
  DurationMs sched_tick = 0;
  DurationMs phase = 0;  // passes at phase + k * bf_interval, ticks at phase + k * sched_tick
  // The time limit backfill plans with: run time plus limit_pad, rounded up to a multiple of
  // limit_round (0, 0: the exact run time).
  DurationMs limit_pad = 0;
  DurationMs limit_round = 0;
  // Services sort ahead of every job and are blocked apart from them (a partition of higher
  // PriorityTier, as the lab gives its replicas).
  bool services_first = false;
  // Placement among the nodes where a workload fits: best fit, or the first in the
  // cluster's order (Slurm's node selection at equal node weights).
  bool first_fit = false;
};

// The end backfill plans with for a run from `start` that would end at `end`: the time
// limit of a job whose run takes end - start (kNever stays kNever).
TimeMs PlannedEnd(TimeMs start, TimeMs end, const SlurmParams& p) {
  if (end == kNever || (p.limit_pad == 0 && p.limit_round == 0)) return end;
  DurationMs limit = end - start + p.limit_pad;
  if (p.limit_round > 0) limit = (limit + p.limit_round - 1) / p.limit_round * p.limit_round;
  return start + limit;
}

// Whether `now` is on the grid phase + k * interval (always, for interval 0).
bool OnGrid(TimeMs now, DurationMs interval, DurationMs phase) {
  return interval <= 0 || (now - phase) % interval == 0;
}

// The first time on the grid phase + k * interval after `now` (interval > 0).
TimeMs NextOnGrid(TimeMs now, DurationMs interval, DurationMs phase) {
  const TimeMs since = now - phase;
  const TimeMs k = since >= 0 ? since / interval : -((-since - 1) / interval) - 1;  // floor
  return phase + (k + 1) * interval;
}

// Shared by the policy's plug-ins (one engine): fair-share bookkeeping and this cycle's
// backfill reservation.
struct SlurmState {
  SlurmParams p;
  double installed_milli = 1;

  std::map<std::string, double> usage;      // decayed GPU-hours per tenant
  std::map<std::string, double> held;       // GPUs held per tenant since the last cycle
  std::map<std::string, double> fairshare;  // F per tenant, as of this cycle
  size_t jobs_seen = 0;
  TimeMs last = 0;

  bool backfill_pass = true;        // this cycle: backfill's (else the main scheduler's)
  bool tick = true;                 // this cycle: on a scheduler tick (sched_tick)
  bool held_for_tick = false;       // this cycle: a start found room and waits for a tick
  WorkloadId holder = kNoWorkload;  // the reservation's workload, this cycle
  TimeMs reserve_at = kNever;
  std::optional<ClusterState> future;  // at reserve_at, with the long backfills applied
  std::vector<char> candidate;         // per node: could serve the reservation
  bool candidates_stale = false;
};

double Priority(const Job& job, const Engine& engine, const SlurmState& st) {
  const SlurmParams& p = st.p;
  const TimeMs since = job.is_service() ? job.queued_since : job.submitted;
  const double age =
      p.max_age > 0 ? std::min(1.0, static_cast<double>(std::max<TimeMs>(0, engine.now() - since)) /
                                        static_cast<double>(p.max_age))
                    : 1.0;
  double size = std::min(
      1.0, static_cast<double>(engine.fit_class_shape(job.fit_class).milli) / st.installed_milli);
  if (p.favor_small) size = 1.0 - size;
  auto fs = st.fairshare.find(job.s().tenant);
  const double fair = fs == st.fairshare.end() ? 1.0 : fs->second;
  const double qos = p.qos_max > 0 ? std::clamp(job.priority / p.qos_max, 0.0, 1.0) : 0.0;
  return p.w_age * age + p.w_size * size + p.w_fairshare * fair + p.w_qos * qos;
}

// When `job` would finish if it started now on `placement` (kNever for services), as
// backfill plans it (PlannedEnd).
TimeMs EndIfStarted(const Job& job, const Placement& placement, const Engine& engine,
                    const SlurmParams& p) {
  if (job.is_service()) return kNever;
  double speed = 1.0;
  if (!placement.gpus.empty()) {
    speed = 1e18;
    for (GpuIndex g : placement.gpus)
      speed = std::min(speed, job.s().SpeedOn(engine.cluster().gpu_type(g), engine.catalog()));
  }
  return PlannedEnd(engine.now(), EndIfStartedAt(job, engine.now(), speed), p);
}

class MultifactorOrder : public QueueSortPlugin {
 public:
  explicit MultifactorOrder(std::shared_ptr<SlurmState> st) : st_(std::move(st)) {}
  std::string_view name() const override { return "multifactor"; }
  bool dynamic() const override { return true; }
  QueueKey Key(const Job& job, const Engine& engine) const override {
    const TimeMs since = job.is_service() ? job.queued_since : job.submitted;
    const double tier = st_->p.services_first && !job.is_service() ? 1 : 0;
    return {tier, -Priority(job, engine, *st_), static_cast<double>(since)};
  }

 private:
  std::shared_ptr<SlurmState> st_;
};

// Fair-share usage: integrates the GPUs each tenant held between cycles, with decay, and
// turns it into this cycle's factors; clears the last cycle's reservation.
class SlurmCycle : public CyclePlugin {
 public:
  explicit SlurmCycle(std::shared_ptr<SlurmState> st) : st_(std::move(st)) {}
  std::string_view name() const override { return "slurm-fairshare"; }

  void BeforeAllocate(Engine& engine) override {
    SlurmState& st = *st_;
    for (; st.jobs_seen < engine.job_count(); ++st.jobs_seen)
      st.usage.emplace(engine.job(static_cast<WorkloadId>(st.jobs_seen)).s().tenant, 0.0);
    const DurationMs dt = engine.now() - st.last;
    if (dt > 0) {
      const double hl = static_cast<double>(st.p.half_life);
      const double d = static_cast<double>(dt);
      const double decay = hl > 0 ? std::exp2(-d / hl) : 1.0;
      const double growth = (hl > 0 ? hl / std::log(2.0) * (1.0 - decay) : d) / kHour;
      for (auto& [tenant, u] : st.usage) {
        auto h = st.held.find(tenant);
        u = u * decay + (h == st.held.end() ? 0.0 : h->second * growth);
      }
    }
    st.last = engine.now();
    double total_usage = 0, total_shares = 0;
    for (const auto& [tenant, u] : st.usage) {
      total_usage += u;
      total_shares += SharesOf(tenant);
    }
    for (const auto& [tenant, u] : st.usage) {
      const double un = total_usage > 0 ? u / total_usage : 0.0;
      const double sn = total_shares > 0 ? SharesOf(tenant) / total_shares : 0.0;
      st.fairshare[tenant] = SlurmFairShare(un, sn);
    }
    st.holder = kNoWorkload;
    st.reserve_at = kNever;
    st.future.reset();
    st.tick = OnGrid(engine.now(), st.p.sched_tick, st.p.phase);
    st.backfill_pass =
        st.p.backfill && st.tick && OnGrid(engine.now(), st.p.bf_interval, st.p.phase);
    st.held_for_tick = false;
  }

  void AfterAllocate(Engine& engine) override {
    // With a backfill interval: the next pass, while a job that may ever start waits for
    // one (services wait for events; a job that never fits would wake the engine for ever).
    const SlurmParams& p = st_->p;
    if (p.backfill && p.bf_interval > 0 && JobWaits(engine))
      engine.WakeAt(NextOnGrid(engine.now(), p.bf_interval, p.phase));
    if (st_->held_for_tick) engine.WakeAt(NextOnGrid(engine.now(), p.sched_tick, p.phase));
    st_->held.clear();
    for (const auto& [id, a] : engine.allocations())
      st_->held[engine.job(a.workload).s().tenant] +=
          static_cast<double>(a.placement.total_milli()) / 1000.0;
  }

 private:
  static bool JobWaits(const Engine& engine) {
    for (WorkloadId id : engine.queue()) {
      const Job& job = engine.job(id);
      if (!job.is_service() && !job.never_fits) return true;
    }
    return false;
  }
  double SharesOf(const std::string& tenant) const {
    auto it = st_->p.shares.find(tenant);
    return it == st_->p.shares.end() ? 1.0 : it->second;
  }
  std::shared_ptr<SlurmState> st_;
};

// Slurm's main scheduler, in the cycles that are not backfill passes: it stops at the first
// workload that cannot start, within its partition (with services_first, services and jobs
// are two; else one).
class MainSchedulerOrder : public OrderPlugin {
 public:
  explicit MainSchedulerOrder(std::shared_ptr<SlurmState> st) : st_(std::move(st)) {}
  std::string_view name() const override { return "slurm-main-scheduler"; }
  int BlockingGroup(const Job& job, const Engine& /*engine*/) const override {
    if (st_->backfill_pass) return -1;
    return st_->p.services_first && job.is_service() ? 1 : 0;
  }

 private:
  std::shared_ptr<SlurmState> st_;
};

// With sched_tick: a workload that found room starts only on a tick; the policy asks the
// engine for a cycle at the next one.
class SchedulerTick : public PermitPlugin {
 public:
  explicit SchedulerTick(std::shared_ptr<SlurmState> st) : st_(std::move(st)) {}
  std::string_view name() const override { return "slurm-scheduler-tick"; }
  bool Permit(const Job& /*job*/, const Placement& /*placement*/,
              const Engine& /*engine*/) override {
    if (st_->tick) return true;
    st_->held_for_tick = true;
    return false;
  }
  std::string WhyHeld(const Job& /*job*/, const Engine& engine) const override {
    const SlurmParams& p = st_->p;
    return "the scheduler starts work only at its next tick, " +
           FormatTime(NextOnGrid(engine.now(), p.sched_tick, p.phase)) + " (sched_tick)";
  }

 private:
  std::shared_ptr<SlurmState> st_;
};

// EASY backfill: reserves for the first workload left waiting, and vets every later start.
// Running work ends, and candidates would end, at their planned ends (PlannedEnd).
class EasyBackfill : public PermitPlugin {
 public:
  explicit EasyBackfill(std::shared_ptr<SlurmState> st) : st_(std::move(st)) {}
  std::string_view name() const override { return "easy-backfill"; }

  void Unplaced(const Job& job, const Engine& engine) override {
    SlurmState& st = *st_;
    if (st.holder != kNoWorkload || !st.backfill_pass) return;
    // Release running work in order of planned end until the shape fits.
    std::vector<std::pair<TimeMs, const Allocation*>> ending;
    for (const auto& [id, a] : engine.allocations())
      if (a.expected_end != kNever)
        ending.emplace_back(PlannedEnd(a.started, a.expected_end, st.p), &a);
    std::sort(ending.begin(), ending.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second->id < b.second->id;
    });
    ClusterState future = engine.state();
    const Shape& shape = job.s().shape;
    TimeMs at = FitsIn(future, shape) ? engine.now() : kNever;
    for (size_t i = 0; i < ending.size() && at == kNever; ++i) {
      future.Release(ending[i].second->placement);
      if (i + 1 < ending.size() && ending[i + 1].first == ending[i].first) continue;
      if (FitsIn(future, shape)) at = ending[i].first;
    }
    if (at == kNever) return;  // never fits on what runs now: the next one may reserve
    st.holder = job.id;
    st.reserve_at = at;
    st.future.emplace(std::move(future));
    st.candidates_stale = true;
  }

  bool Permit(const Job& job, const Placement& placement, const Engine& engine) override {
    SlurmState& st = *st_;
    if (st.holder == kNoWorkload || job.id == st.holder) return true;
    if (EndIfStarted(job, placement, engine, st.p) <= st.reserve_at) return true;  // done by then
    // Running past the reservation: allowed only on GPUs the reservation does not need.
    const Shape& reserved = engine.job(st.holder).s().shape;
    st.future->Apply(placement);
    if (FitsIn(*st.future, reserved)) {
      st.candidates_stale = true;
      return true;
    }
    st.future->Release(placement);
    return false;
  }

  std::string WhyHeld(const Job& job, const Engine& engine) const override {
    const SlurmState& st = *st_;
    if (st.holder == kNoWorkload || job.id == st.holder) return {};
    return "it would still run at " + FormatTime(st.reserve_at) + " on GPUs reserved for '" +
           engine.job(st.holder).s().name +
           "', the highest-priority workload waiting (EASY backfill)";
  }

 private:
  std::shared_ptr<SlurmState> st_;
};

// Steers a workload that would run past the reservation away from the nodes the
// reservation could use (Permit has the last word).
class ReservationScore : public ScorePlugin {
 public:
  explicit ReservationScore(std::shared_ptr<SlurmState> st) : st_(std::move(st)) {}
  std::string_view name() const override { return "avoid-reservation"; }

  double Score(const Job& job, NodeIndex node, const Engine& engine) const override {
    SlurmState& st = *st_;
    if (st.holder == kNoWorkload || job.id == st.holder || !st.future) return 0;
    if (st.candidates_stale) {
      st.candidate.assign(engine.cluster().node_count(), 0);
      for (NodeIndex n : CandidateNodes(*st.future, engine.job(st.holder).s().shape))
        st.candidate[static_cast<size_t>(n)] = 1;
      st.candidates_stale = false;
    }
    if (!st.candidate[static_cast<size_t>(node)]) return 0;
    if (!job.is_service()) {
      const DurationMs overhead = job.work_saved > 0 ? job.s().restart_cost : 0;
      const double speed = job.s().SpeedOn(engine.cluster().node(node).gpu_type, engine.catalog());
      RunSegment seg{engine.now(), overhead, speed, job.work_saved, {}};
      if (PlannedEnd(engine.now(), SegmentEnd(job.s(), seg), st.p) <= st.reserve_at) return 0;
    }
    return -1;
  }

 private:
  std::shared_ptr<SlurmState> st_;
};

// first_fit: the lowest-indexed node where the workload fits.
class FirstFitScore : public ScorePlugin {
 public:
  std::string_view name() const override { return "first-fit"; }
  double Score(const Job& /*job*/, NodeIndex node, const Engine& /*engine*/) const override {
    return -static_cast<double>(node);
  }
};

StatusOr<SlurmParams> ParseParams(const PolicyParams& params) {
  SlurmParams p;
  struct Weight {
    const char* key;
    double* value;
  };
  for (const Weight& w :
       {Weight{"w_age", &p.w_age}, Weight{"w_fairshare", &p.w_fairshare},
        Weight{"w_size", &p.w_size}, Weight{"w_qos", &p.w_qos}, Weight{"qos_max", &p.qos_max}}) {
    auto v = params.GetDouble(w.key, *w.value);
    if (!v.ok()) return v.status();
    if (*v < 0) return InvalidArgument(std::string("policy 'slurm': ") + w.key + " must be >= 0");
    *w.value = *v;
  }
  for (auto [key, value] :
       {std::pair{"max_age", &p.max_age}, std::pair{"half_life", &p.half_life},
        std::pair{"bf_interval", &p.bf_interval}, std::pair{"sched_tick", &p.sched_tick},
        std::pair{"phase", &p.phase}, std::pair{"limit_pad", &p.limit_pad},
        std::pair{"limit_round", &p.limit_round}}) {
    const std::string s = params.GetString(key, "");
    if (s.empty()) continue;
    auto d = ParseDurationMs(s);
    if (!d || *d < 0)
      return InvalidArgument(std::string("policy 'slurm': ") + key +
                             " must be a duration such as " + "'7d' or '12h', got '" + s + "'");
    *value = *d;
  }
  for (auto [key, value] :
       {std::pair{"favor_small", &p.favor_small}, std::pair{"backfill", &p.backfill},
        std::pair{"services_first", &p.services_first}}) {
    auto v = params.GetDouble(key, *value ? 1 : 0);
    if (!v.ok()) return v.status();
    *value = *v != 0;
  }
  const std::string placement = params.GetString("placement", "bestfit");
  if (placement != "bestfit" && placement != "firstfit")
    return InvalidArgument("policy 'slurm': placement must be 'bestfit' or 'firstfit', got '" +
                           placement + "'");
  p.first_fit = placement == "firstfit";
  const std::string shares = params.GetString("shares", "");
  if (!shares.empty()) {
    for (std::string_view part : Split(shares, ',')) {
      auto kv = Split(part, '@');
      auto w = kv.size() == 2 ? ParseDouble(Trim(kv[1])) : std::nullopt;
      if (!w || *w < 0 || Trim(kv[0]).empty())
        return InvalidArgument("policy 'slurm': shares must read 'tenant@weight,...', got '" +
                               std::string(part) + "'");
      p.shares[std::string(Trim(kv[0]))] = *w;
    }
  }
  return p;
}

}  // namespace

double SlurmFairShare(double usage_norm, double shares_norm) {
  if (usage_norm <= 0) return 1.0;
  if (shares_norm <= 0) return 0.0;
  return std::exp2(-usage_norm / shares_norm);
}

void RegisterSlurm(PolicyRegistry& registry) {
  registry.Register(
      "slurm",
      "Slurm multifactor priority (age, size, fair-share, QoS) with EASY backfill; no preemption",
      {"w_age", "w_fairshare", "w_size", "w_qos", "max_age", "half_life", "favor_small", "qos_max",
       "shares", "backfill", "bf_interval", "sched_tick", "phase", "limit_pad", "limit_round",
       "services_first", "placement"},
      [](const Cluster& cluster, const PolicyParams& params) -> StatusOr<Policy> {
        auto parsed = ParseParams(params);
        if (!parsed.ok()) return parsed.status();
        auto st = std::make_shared<SlurmState>();
        st->p = *parsed;
        st->installed_milli = std::max(1.0, 1000.0 * static_cast<double>(cluster.gpu_count()));
        for (const auto& [tenant, weight] : st->p.shares) st->usage[tenant] = 0;  // all count
        Policy p;
        p.name = "slurm";
        p.description = st->p.backfill ? "Slurm multifactor priority, EASY backfill"
                                       : "Slurm multifactor priority, no backfill";
        p.queue_sort = std::make_unique<MultifactorOrder>(st);
        if (st->p.sched_tick > 0) p.permits.push_back(std::make_unique<SchedulerTick>(st));
        if (st->p.backfill) {
          if (st->p.bf_interval > 0) p.order = std::make_unique<MainSchedulerOrder>(st);
          p.permits.push_back(std::make_unique<EasyBackfill>(st));
          // The reservation first; best fit breaks its ties (ScoreTerm tiers).
          p.scores.emplace_back(std::make_unique<ReservationScore>(st), 1.0, 0);
        } else if (st->p.services_first) {
          p.order = std::make_unique<MainSchedulerOrder>(st);  // never a backfill pass
        } else {
          p.order = std::make_unique<StrictOrder>();
        }
        if (st->p.first_fit) {
          p.scores.emplace_back(std::make_unique<FirstFitScore>(), 1.0, 1);
        } else {
          p.scores.emplace_back(std::make_unique<BestFitScore>(), 1.0, 1);
        }
        p.cycle.push_back(std::make_unique<SlurmCycle>(st));
        return p;
      });
}

}  // namespace airtime
