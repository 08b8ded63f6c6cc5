#include "airtime/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "airtime/base/parallel.h"
#include "airtime/engine/engine.h"
#include "airtime/policies/registry.h"

namespace airtime {
namespace {

// What a queued simulator event is; at equal times the lower class goes first, so work
// that ends frees its GPUs before new work arrives at the same instant.
enum class Kind : uint8_t { kCompletion, kScenario, kDemand, kArrival, kTimer };

struct Pending {
  TimeMs at;
  Kind kind;
  int64_t seq;
  int64_t a;  // allocation id, scenario event index, workload index
  double rps;
  int request_class = -1;  // kDemand of a member of a service with variants: its class

  bool operator>(const Pending& o) const {
    if (at != o.at) return at > o.at;
    if (kind != o.kind) return kind > o.kind;
    return seq > o.seq;
  }
};

// The ledger counts installed milli-GPU-milliseconds exactly, in 64 bits: the latest time
// a replay of `cluster` can be counted to, with room for the buckets' sums (an eighth).
TimeMs AccountableEnd(const Cluster& cluster) {
  const auto milli = std::max<int64_t>(1, static_cast<int64_t>(cluster.gpu_count()) * 1000);
  return std::numeric_limits<int64_t>::max() / 8 / milli;
}

class Run {
 public:
  Run(const SimInput& in, Engine& engine, const SimOptions& opt)
      : in_(in),
        engine_(engine),
        opt_(opt),
        limit_(AccountableEnd(in.cluster)),
        ledger_(engine),
        metrics_(engine),
        timeline_(opt.timeline_points) {}

  SimResult Go() {
    for (size_t i = 0; i < in_.workloads.size(); ++i)
      Push(in_.workloads[i].submit_at, Kind::kArrival, static_cast<int64_t>(i));
    for (size_t i = 0; i < in_.events.size(); ++i)
      Push(in_.events[i].at, Kind::kScenario, static_cast<int64_t>(i));
    SimResult r;
    TimeMs last = 0;
    while (!queue_.empty()) {
      Pending p = queue_.top();
      if (p.at > opt_.horizon) break;
      if (p.at > limit_) {
        // Without a horizon, work that ends this late (a speed of 1e-12) ends the replay.
        r.event_errors.push_back("the replay stops at " + FormatTime(last) + ": " +
                                 FormatTime(p.at) + " is past what the ledger can count for " +
                                 std::to_string(in_.cluster.gpu_count()) + " GPUs");
        break;
      }
      queue_.pop();
      const bool wake = p.kind == Kind::kTimer && p.a == 1;
      if (!wake) --others_;
      // A completion is void once the allocation stopped (preempted) or its end moved.
      if (p.kind == Kind::kCompletion) {
        auto it = live_.find(p.a);
        if (it == live_.end() || it->second != p.at) continue;
      }
      Event ev;
      if (!ToEvent(p, &ev)) continue;
      Sample(p.at);
      ledger_.Advance(p.at);
      metrics_.Advance(p.at);
      const auto t0 = std::chrono::steady_clock::now();
      const CycleResult& cycle = engine_.Handle(ev);
      if (opt_.time_cycles)
        r.cycle_us.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count());
      ++r.events;
      last = p.at;
      if (!cycle.event_status.ok() && r.event_errors.size() < 10)
        r.event_errors.push_back(FormatTime(p.at) + ": " + cycle.event_status.message());
      if (p.kind == Kind::kArrival && cycle.arrived != kNoWorkload)
        OnArrived(static_cast<size_t>(p.a), cycle.arrived);
      // A plug-in may ask for wake-ups forever (a forecast curve to follow). Once nothing
      // but wake-ups is left and a few in a row changed nothing, the world is static: stop.
      // Services alone are static too: once nothing but timers has happened and no job has
      // been started, stopped or resized for kServicesOnlyLimit, only the services'
      // replicas follow their daily curve (and their cold-start timers), for ever.
      const bool idle = wake && others_ == 0 && !Changes(cycle);
      idle_wakes_ = idle ? idle_wakes_ + 1 : 0;
      if (JobChanges(cycle) || p.kind != Kind::kTimer) last_job_change_ = p.at;
      if (idle_wakes_ >= kIdleWakeLimit || p.at - last_job_change_ >= kServicesOnlyLimit) {
        ledger_.Observe(cycle);
        metrics_.Observe(cycle);
        break;
      }
      Actuate(cycle);
      if (opt_.decision_log) LogDecisions(cycle);
      ledger_.Observe(cycle);
      metrics_.Observe(cycle);
    }
    r.end = opt_.horizon != kNever ? opt_.horizon : last;
    r.waiting_at_end_count = engine_.queue().size();
    for (WorkloadId id : engine_.queue()) {
      const std::string why = engine_.job(id).s().name + ": " + engine_.Explain(id);
      if (r.waiting_at_end.size() < 20) r.waiting_at_end.push_back(why);
      if (opt_.decision_log)
        *opt_.decision_log << nlohmann::json{{"t_s", ToSeconds(r.end)},
                                             {"waiting", engine_.job(id).s().name},
                                             {"why", engine_.Explain(id)}}
                                  .dump()
                           << "\n";
    }
    Sample(r.end);
    ledger_.Advance(r.end);
    metrics_.Finish(r.end);
    r.ledger = ledger_.totals();
    r.shape_blocked = ledger_.shape_blocked();
    r.metrics = metrics_.summary();
    r.policy = engine_.policy().name;
    r.policy_description = engine_.policy().description;
    if (opt_.timeline_points > 0) {
      r.timeline = timeline_.Points();
      r.timeline_step = timeline_.step();
    }
    return r;
  }

 private:
  static bool Changes(const CycleResult& cycle) {
    for (const Decision& d : cycle.decisions)
      if (d.type != DecisionType::kScale) return true;
    return false;
  }
  // Whether the cycle started, stopped or resized a job (not a service's replica).
  bool JobChanges(const CycleResult& cycle) const {
    for (const Decision& d : cycle.decisions) {
      if (d.type == DecisionType::kScale || d.type == DecisionType::kHold ||
          d.type == DecisionType::kUnhold)
        continue;
      if (d.workload != kNoWorkload && !engine_.job(d.workload).is_service()) return true;
    }
    return !cycle.stopped.empty() &&
           std::any_of(cycle.stopped.begin(), cycle.stopped.end(),
                       [&](const Stopped& st) { return !engine_.job(st.workload).is_service(); });
  }

  // The state since the ledger's last advance, in force until `to`, into the timeline.
  void Sample(TimeMs to) {
    if (opt_.timeline_points == 0 || to <= ledger_.last()) return;
    timeline_.Add(ledger_.last(), to, ledger_.held_milli(), ledger_.installed_milli(),
                  static_cast<int64_t>(engine_.queue().size()));
  }

  void Push(TimeMs at, Kind kind, int64_t a, double rps = 0, int request_class = -1) {
    if (!(kind == Kind::kTimer && a == 1)) ++others_;
    queue_.push({at, kind, seq_++, a, rps, request_class});
  }

  bool ToEvent(const Pending& p, Event* ev) {
    switch (p.kind) {
      case Kind::kArrival:
        *ev = Event::Arrival(p.at, in_.workloads[static_cast<size_t>(p.a)]);
        return true;
      case Kind::kCompletion:
        live_.erase(p.a);
        *ev = Event::Completion(p.at, p.a);
        return true;
      case Kind::kDemand:
        *ev = p.request_class >= 0
                  ? Event::ClassDemand(p.at, static_cast<WorkloadId>(p.a), p.request_class, p.rps)
                  : Event::Demand(p.at, static_cast<WorkloadId>(p.a), p.rps);
        return true;
      case Kind::kTimer:
        if (p.a == 1) wakes_.erase(p.at);
        *ev = Event::Timer(p.at);
        return true;
      case Kind::kScenario: {
        const ScenarioEvent& s = in_.events[static_cast<size_t>(p.a)];
        if (s.type == ScenarioEvent::kNodeDown || s.type == ScenarioEvent::kNodeUp) {
          NodeIndex node = -1;
          for (size_t n = 0; n < in_.cluster.node_count(); ++n)
            if (in_.cluster.node(static_cast<NodeIndex>(n)).name == s.target)
              node = static_cast<NodeIndex>(n);
          *ev = s.type == ScenarioEvent::kNodeDown ? Event::NodeDown(p.at, node)
                                                   : Event::NodeUp(p.at, node);
          return true;
        }
        auto id = engine_.FindByName(s.target);
        if (!id) return false;  // the workload has not arrived (or never will): nothing to change
        *ev = s.type == ScenarioEvent::kCancel ? Event::Cancel(p.at, *id)
                                               : Event::Priority(p.at, *id, s.priority);
        return true;
      }
    }
    return false;
  }

  void OnArrived(size_t index, WorkloadId id) {
    const WorkloadSpec& spec = in_.workloads[index];
    if (!spec.is_service()) return;
    // The demand in force at arrival, then every later change.
    double initial = 0;
    for (const DemandPoint& d : spec.realtime.demand) {
      if (d.at <= spec.submit_at) {
        initial = d.rps;
      } else {
        Push(d.at, Kind::kDemand, id, d.rps);
      }
    }
    Push(spec.submit_at, Kind::kDemand, id, initial);
    // A member of a service with variants also sees each class's demand.
    if (!spec.realtime.is_member()) return;
    for (size_t c = 0; c < spec.realtime.classes.size(); ++c) {
      const int cls = static_cast<int>(c);
      for (const DemandPoint& d : spec.realtime.classes[c].demand)
        if (d.at > spec.submit_at) Push(d.at, Kind::kDemand, id, d.rps, cls);
      Push(spec.submit_at, Kind::kDemand, id, spec.realtime.ClassRpsAt(cls, spec.submit_at), cls);
    }
  }

  void LogDecisions(const CycleResult& cycle) {
    for (const Decision& d : cycle.decisions) {
      nlohmann::json j = {{"t_s", ToSeconds(cycle.at)},
                          {"decision", DecisionTypeName(d.type)},
                          {"reason", d.reason}};
      if (d.workload != kNoWorkload) j["workload"] = engine_.job(d.workload).s().name;
      if (d.allocation != kNoAllocation) j["allocation"] = d.allocation;
      if (!d.placement.gpus.empty()) {
        std::vector<std::string> gpus;
        for (GpuIndex g : d.placement.gpus) gpus.push_back(in_.cluster.gpu_name(g));
        j["gpus"] = gpus;
        if (d.placement.mode != ShareMode::kWhole) j["share_milli"] = d.placement.milli;
      }
      if (d.type == DecisionType::kScale) j["replicas"] = d.replicas;
      if (d.type == DecisionType::kResize) j["resized_from"] = d.resized_from;
      if ((d.type == DecisionType::kStart || d.type == DecisionType::kResize ||
           d.type == DecisionType::kRetime) &&
          d.expected_end != kNever)
        j["expected_end_s"] = ToSeconds(d.expected_end);
      // A replica's cold start (or a job's restart cost): when it begins to serve or progress.
      if (d.type == DecisionType::kStart && d.ready_at > cycle.at)
        j["ready_at_s"] = ToSeconds(d.ready_at);
      *opt_.decision_log << j.dump() << "\n";
    }
    // A job's completion is no decision, but a reader of the log asks what finished when,
    // and what it earned (the ledger's value: its completion value, decayed after its
    // deadline).
    for (const Stopped& st : cycle.stopped) {
      const Job& job = engine_.job(st.workload);
      if (!st.completed || job.is_service()) continue;
      *opt_.decision_log << nlohmann::json{{"t_s", ToSeconds(cycle.at)},
                                           {"completed", job.s().name},
                                           {"allocation", st.allocation},
                                           {"value", job.s().value.CompletionValue(
                                                         job.finished, job.s().deadline)}}
                                .dump()
                         << "\n";
    }
  }

  void Actuate(const CycleResult& cycle) {
    // A plug-in's wake-up request; one timer per distinct time (a = 1 marks it).
    if (cycle.wake_at != kNever && wakes_.insert(cycle.wake_at).second)
      Push(cycle.wake_at, Kind::kTimer, 1);
    for (const Decision& d : cycle.decisions) {
      switch (d.type) {
        case DecisionType::kStart:
          if (d.expected_end != kNever) {
            live_[d.allocation] = d.expected_end;
            Push(d.expected_end, Kind::kCompletion, d.allocation);
          }
          if (d.ready_at > cycle.at) Push(d.ready_at, Kind::kTimer, 0);
          break;
        case DecisionType::kResize:
          // The old allocation ends here (its completion is void); the new one runs on.
          live_.erase(d.resized_from);
          live_[d.allocation] = d.expected_end;
          Push(d.expected_end, Kind::kCompletion, d.allocation);
          if (d.ready_at > cycle.at) Push(d.ready_at, Kind::kTimer, 0);
          break;
        case DecisionType::kRetime:
          if (d.expected_end != kNever) {
            live_[d.allocation] = d.expected_end;
            Push(d.expected_end, Kind::kCompletion, d.allocation);
          }
          break;
        case DecisionType::kPreempt:
        case DecisionType::kRelease:
          live_.erase(d.allocation);
          break;
        case DecisionType::kHold:
          if (d.until != kNever) Push(d.until, Kind::kTimer, 0);
          break;
        case DecisionType::kScale:
        case DecisionType::kUnhold:
          break;
      }
    }
  }

  const SimInput& in_;
  Engine& engine_;
  const SimOptions& opt_;
  const TimeMs limit_;  // AccountableEnd
  Ledger ledger_;
  Metrics metrics_;
  Timeline timeline_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> queue_;
  int64_t seq_ = 0;
  std::unordered_map<AllocationId, TimeMs> live_;  // running job -> its expected end
  std::set<TimeMs> wakes_;                         // pending wake-up timers
  static constexpr int kIdleWakeLimit = 4;
  static constexpr DurationMs kServicesOnlyLimit = 2 * kDay;
  TimeMs last_job_change_ = 0;
  int64_t others_ = 0;  // pending events that are not wake-ups
  int idle_wakes_ = 0;
};

}  // namespace

double SimResult::return_per_gpu_hour() const {
  const double h = ledger.installed_gpu_hours();
  return h > 0 ? metrics.value / h : 0;
}

double SimResult::allocation_rate() const {
  if (ledger.installed_milli_ms == 0) return 0;
  const auto& m = ledger.milli_ms;
  const int64_t held = m[static_cast<size_t>(Bucket::kUseful)] +
                       m[static_cast<size_t>(Bucket::kIdleHeld)] +
                       m[static_cast<size_t>(Bucket::kLowValueBusy)] +
                       m[static_cast<size_t>(Bucket::kLost)] + ledger.reserved_held_milli_ms;
  return static_cast<double>(held) / static_cast<double>(ledger.installed_milli_ms);
}

StatusOr<SimResult> Simulate(const SimInput& input, const std::string& policy_spec,
                             const SimOptions& options) {
  if (options.horizon != kNever && options.horizon > AccountableEnd(input.cluster))
    return InvalidArgument("horizon " + FormatDuration(options.horizon) +
                           ": past what the ledger can count exactly for " +
                           std::to_string(input.cluster.gpu_count()) + " GPUs (at most " +
                           FormatDuration(AccountableEnd(input.cluster)) +
                           "); shorten it (--horizon; with --from-data, --since and --until)");
  auto policy = PolicyRegistry::Builtin().Make(policy_spec, input.cluster, &input.workloads);
  if (!policy.ok()) return policy.status();
  EngineOptions eo{options.seed};
  eo.interference = options.interference;
  Engine engine(input.cluster, std::move(*policy), eo);
  const auto t0 = std::chrono::steady_clock::now();
  Run run(input, engine, options);
  SimResult r = run.Go();
  // Name the run by the spec as given, so that variants of one policy
  // ("kai:preempt_min_runtime=30m") stay apart in tables and reports.
  if (policy_spec.find(':') != std::string::npos) r.policy = policy_spec;
  const std::vector<GpuCost> costs =
      input.costs.empty() ? DefaultGpuCosts(input.cluster.catalog()) : input.costs;
  r.costs = ComputeCosts(r.ledger, r.metrics.value, r.metrics.value_by_type, HourlyRates(costs),
                         PricedTypes(costs), input.cluster.catalog());
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

StatusOr<std::vector<SimResult>> SimulatePolicies(const SimInput& input,
                                                  const std::vector<std::string>& policy_specs,
                                                  const SimOptions& options) {
  // Every name is checked before anything runs.
  for (const std::string& spec : policy_specs) {
    auto p = PolicyRegistry::Builtin().Make(spec, input.cluster, &input.workloads);
    if (!p.ok()) return p.status();
  }
  const int threads = options.decision_log ? 1 : options.threads;
  // Runs the policies side by side; the first error in the policies' order is reported.
  auto run_all = [&](const SimOptions& o,
                     const std::vector<char>& skip) -> StatusOr<std::vector<SimResult>> {
    std::vector<StatusOr<SimResult>> runs(policy_specs.size(), Internal("not run"));
    ParallelFor(policy_specs.size(), threads, [&](size_t i) {
      if (skip[i]) return;
      runs[i] = Simulate(input, policy_specs[i], o);
      if (o.on_replay_done) o.on_replay_done();
    });
    std::vector<SimResult> out(policy_specs.size());
    for (size_t i = 0; i < runs.size(); ++i) {
      if (skip[i]) continue;
      if (!runs[i].ok()) return runs[i].status();
      out[i] = std::move(*runs[i]);
    }
    return out;
  };
  auto results = run_all(options, std::vector<char>(policy_specs.size(), 0));
  if (!results.ok() || options.horizon != kNever) return results;
  TimeMs end = 0;
  for (const SimResult& r : *results) end = std::max(end, r.end);
  SimOptions common = options;
  common.horizon = end;
  common.on_replay_done = nullptr;  // each policy was counted once
  std::vector<char> done(results->size());
  for (size_t i = 0; i < results->size(); ++i) done[i] = (*results)[i].end == end;
  auto rerun = run_all(common, done);
  if (!rerun.ok()) return rerun.status();
  for (size_t i = 0; i < results->size(); ++i)
    if (!done[i]) (*results)[i] = std::move((*rerun)[i]);
  return results;
}

}  // namespace airtime
