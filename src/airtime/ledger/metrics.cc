#include "airtime/ledger/metrics.h"

#include <algorithm>
#include <cmath>

#include "airtime/engine/progress.h"
#include "airtime/engine/variant_load.h"

namespace airtime {

Percentiles ComputePercentiles(std::vector<double> v) {
  Percentiles p;
  p.count = v.size();
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    // Nearest rank.
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  };
  p.p50 = at(0.50);
  p.p99 = at(0.99);
  p.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  p.mean = sum / static_cast<double>(v.size());
  return p;
}

std::string ServiceName(const Job& job) {
  return job.s().realtime.is_member() ? job.s().realtime.group : job.s().name;
}

Metrics::Metrics(const Engine& engine, MetricsOptions options)
    : engine_(&engine), last_(engine.now()), options_(options) {
  s_.value_by_type.assign(engine.cluster().catalog().size(), 0.0);
}

void Metrics::Advance(TimeMs to) {
  if (to <= last_) return;
  const double dt = static_cast<double>(to - last_);
  for (const ServiceRate& r : service_rates_) {
    if (options_.score_holds) holds_.Advance(r.id, last_, to, r.demand_rps);
    const double requests = r.demand_rps * dt / 1000.0;
    const double served = std::min(r.demand_rps, r.capacity_rps) * dt / 1000.0;
    s_.requests += requests;
    s_.requests_in_slo += served;
    const double v = r.per_1k * served / 1000.0;
    s_.value += v;
    s_.kinds[static_cast<size_t>(WorkloadKind::kRealtime)].value += v;
    r.out->requests += requests;
    r.out->requests_in_slo += served;
    r.out->value += v;
    for (const auto& [type, share] : r.type_shares)
      s_.value_by_type[static_cast<size_t>(type)] += v * share;
    r.out->gpu_ms += static_cast<double>(r.held_milli) * dt / 1000.0;
    r.out->quality_served += r.quality_rps * dt / 1000.0;
    r.out->gpu_ms_freed += r.freed_milli * dt / 1000.0;
    if (last_ < r.first_ready) {
      const double early = static_cast<double>(std::min(to, r.first_ready) - last_) / 1000.0;
      r.out->missed_at_start += std::max(0.0, r.demand_rps - r.capacity_rps) * early;
    }
  }
  for (const auto& [tenant, milli] : tenant_rates_)
    s_.tenant_gpu_ms[tenant] += static_cast<double>(milli) * dt / 1000.0;
  const auto ms = to - last_;
  for (const JobTypeRate& r : job_type_rates_) *r.held_ms += r.milli * ms;
  if (freed_milli_ > 0) {
    VariantFreedUse& f = s_.freed_use;
    f.freed_ms += freed_milli_ * dt / 1000.0;
    f.left_free_ms += freed_free_milli_ * dt / 1000.0;
    f.beyond_ms += freed_beyond_milli_ * dt / 1000.0;
    for (size_t k = 0; k < kWorkloadKindCount; ++k)
      f.taken_ms[k] += freed_taken_milli_[k] * dt / 1000.0;
  }
  last_ = to;
}

void Metrics::Observe(const CycleResult& cycle) {
  const Engine& e = *engine_;
  if (options_.score_holds)
    for (const HoldDecision& h : cycle.holds) holds_.Record(h);
  if (cycle.arrived != kNoWorkload) {
    const Job& job = e.job(cycle.arrived);
    ++s_.kinds[static_cast<size_t>(job.s().kind)].submitted;
    if (job.is_service()) {
      services_.push_back(job.id);
      // listed even if it never gets a request; a service with variants under its own name
      ServiceMetrics& sm = s_.services[ServiceName(job)];
      if (job.s().realtime.is_member()) {
        sm.variants = true;
        sm.quality_floor = job.s().realtime.quality_floor;
      }
    }
  }
  for (const Decision& d : cycle.decisions) {
    if (d.type == DecisionType::kPreempt) ++s_.preemptions;
    if (d.type != DecisionType::kStart) continue;
    const Job& job = e.job(d.workload);
    KindMetrics& k = s_.kinds[static_cast<size_t>(job.s().kind)];
    if (job.is_service()) {
      ++s_.services[ServiceName(job)].replica_starts;
      if (options_.keep_samples)
        k.queue_delay_s.push_back(ToSeconds(d.waited));  // every replica's wait
      if (d.replica == 0) ++k.started;
    } else if (job.first_start == e.now() && job.preemptions == 0 && job.failures == 0) {
      ++k.started;
      if (options_.keep_samples)
        k.queue_delay_s.push_back(ToSeconds(job.first_start - job.submitted));
    }
  }
  for (const Stopped& st : cycle.stopped) {
    const Job& job = e.job(st.workload);
    if (!st.completed && st.lost_gpu_ms > 0 && job.is_service()) ++s_.failures;
    // A job that ended without completing (cancelled, failed for good) earns nothing.
    if (!st.completed && !job.is_service() &&
        (job.phase == JobPhase::kCancelled || job.phase == JobPhase::kDone))
      job_type_ms_.erase(job.id);
    if (!st.completed || job.is_service()) continue;
    KindMetrics& k = s_.kinds[static_cast<size_t>(job.s().kind)];
    ++k.completed;
    if (options_.keep_samples) k.jct_s.push_back(ToSeconds(job.finished - job.submitted));
    const double v = job.s().value.CompletionValue(job.finished, job.s().deadline);
    k.value += v;
    s_.value += v;
    AttributeToTypes(job.id, v);
  }
  Recompute();
}

Metrics::ServiceRate Metrics::GroupRate(const VariantLoad& load) {
  const Engine& e = *engine_;
  const Job* first = nullptr;
  for (WorkloadId id : load.members)
    if (id != kNoWorkload && first == nullptr) first = &e.job(id);
  const RealtimeProfile& rt = first->s().realtime;
  const size_t nv = rt.variants.size();
  std::vector<int64_t> held_by(nv, 0);
  int64_t held = 0;
  TimeMs first_ready = kNever;
  for (size_t v = 0; v < nv; ++v) {
    if (load.members[v] == kNoWorkload) continue;
    const Job& m = e.job(load.members[v]);
    first_ready = std::min(first_ready, m.submitted + m.s().realtime.cold_start);
    for (AllocationId a : m.allocations) held_by[v] += e.allocation(a)->placement.total_milli();
    held += held_by[v];
  }
  const VariantRoute& route = load.route;
  // GPU-milli freed: what the best variant would hold for what each other variant serves,
  // less what that variant holds (cold starts included). The best variant's replicas: the
  // whole ones that serve it, times the variant's own provisioning (its ready replicas over
  // the whole ones its load needs: its spares), so that both count spares alike and an idle
  // minimum replica is matched by one of the best variant's, not by its capacity.
  size_t best = 0;
  for (size_t v = 1; v < nv; ++v)
    if (rt.variants[v].quality > rt.variants[best].quality) best = v;
  double best_rps = 0;
  std::vector<GpuTypeId> best_types;
  for (const auto& [t, rps] : rt.variants[best].throughput_rps) {
    best_rps = std::max(best_rps, rps);
    if (rps > 0) best_types.push_back(t);
  }
  const double best_milli = static_cast<double>(rt.variants[best].shape.TotalMilli(e.catalog()));
  double freed = 0;
  std::vector<std::pair<GpuTypeId, double>> shares;
  for (size_t v = 0; v < nv; ++v) {
    const double served = load.Served(v);
    if (v != best && best_rps > 0) {
      const double ready = static_cast<double>(load.ready[v].size());
      const double per_replica = ready > 0 ? load.capacity[v] / ready : 0;
      const double needs =
          per_replica > 0 ? std::max(1.0, std::ceil(served / per_replica - 1e-9)) : 1;
      const double provisioning = ready > 0 ? std::max(1.0, ready / needs) : 1;
      const double best_replicas = std::ceil(served / best_rps - 1e-9) * provisioning;
      freed += best_replicas * best_milli - static_cast<double>(held_by[v]);
    }
    // Value by type: each variant's served requests over its ready replicas' types.
    if (load.capacity[v] > 0 && route.served_rps > 0)
      for (const auto& [type, rps] : load.ready[v])
        shares.push_back({type, served * rps / load.capacity[v] / route.served_rps});
  }
  return {first->id,
          route.demand_rps,
          route.served_rps,
          first->s().value.per_1k_requests * route.MeanQuality(),
          held,
          first_ready,
          &s_.services[rt.group],
          std::move(shares),
          route.quality_rps,
          freed,
          std::move(best_types)};
}

void Metrics::Recompute() {
  const Engine& e = *engine_;
  service_rates_.clear();
  for (WorkloadId id : services_) {
    const Job& job = e.job(id);
    if (job.phase == JobPhase::kCancelled) continue;
    if (job.s().realtime.is_member()) continue;  // below, with its service's other members
    // Ready replicas, each slowed by work sharing its GPU (Allocation::interference).
    double ready = 0;
    int64_t held = 0;
    std::vector<std::pair<GpuTypeId, double>> shares;
    for (AllocationId a : job.allocations) {
      const Allocation* al = e.allocation(a);
      if (al->ready_at <= e.now() && !al->placement.gpus.empty()) {
        ready += al->interference;
        // A replica spanning several types serves from each in proportion to its GPUs.
        const double per_gpu = al->interference / static_cast<double>(al->placement.gpus.size());
        for (GpuIndex g : al->placement.gpus) shares.push_back({e.cluster().gpu_type(g), per_gpu});
      }
      held += al->placement.total_milli();
    }
    for (auto& [type, share] : shares) share = ready > 0 ? share / ready : 0;
    service_rates_.push_back({id, job.demand_rps, ready * job.s().realtime.capacity_rps,
                              job.s().value.per_1k_requests, held,
                              job.submitted + job.s().realtime.cold_start,
                              &s_.services[job.s().name], std::move(shares)});
  }
  // Services with variants: one rate per service, from all its members.
  for (const auto& [name, load] : VariantLoads(e)) service_rates_.push_back(GroupRate(load));
  std::map<std::string, int64_t> tenants;
  job_type_rates_.clear();
  for (const auto& [aid, a] : e.allocations()) {
    const Job& job = e.job(a.workload);
    tenants[job.s().tenant] += a.placement.total_milli();
    if (job.is_service() || a.placement.gpus.empty()) continue;
    // Pointers into job_type_ms_ stay valid until its entry is erased, which happens only
    // in Observe, before this recomputation.
    std::vector<int64_t>& held = job_type_ms_[a.workload];
    if (held.empty()) held.assign(s_.value_by_type.size(), 0);
    for (GpuIndex g : a.placement.gpus) {
      int64_t* slot = &held[static_cast<size_t>(e.cluster().gpu_type(g))];
      if (!job_type_rates_.empty() && job_type_rates_.back().held_ms == slot)
        job_type_rates_.back().milli += a.placement.milli;  // the same type as the last GPU
      else
        job_type_rates_.push_back({slot, a.placement.milli});
    }
  }
  tenant_rates_.assign(tenants.begin(), tenants.end());
  AttributeFreed();
}

void Metrics::AttributeFreed() {
  const Engine& e = *engine_;
  freed_milli_ = freed_free_milli_ = freed_beyond_milli_ = 0;
  freed_taken_milli_.fill(0);
  for (const ServiceRate& r : service_rates_) freed_milli_ += std::max(0.0, r.freed_milli);
  if (freed_milli_ <= 0) return;
  // Per type: what is free (or held free as headroom) on up nodes, and the running jobs (not
  // services), the least dense first.
  const ClusterState& state = e.state();
  std::vector<double> free(e.catalog().size(), 0.0);
  for (size_t t = 0; t < free.size(); ++t) {
    const auto type = static_cast<GpuTypeId>(t);
    free[t] = static_cast<double>(std::max<int64_t>(0, state.free_milli_of_type(type) +
                                                           state.reserved_milli_of_type(type) -
                                                           state.down_milli_of_type(type)));
  }
  struct Held {
    double density;
    WorkloadKind kind;
    GpuTypeId type;
    double milli;
    AllocationId allocation;  // breaks ties, so the split does not depend on map order
  };
  std::vector<Held> held;
  for (const auto& [aid, a] : e.allocations()) {
    const Job& job = e.job(a.workload);
    if (job.is_service() || a.placement.gpus.empty()) continue;
    held.push_back({ValueDensity(job.s(), e.catalog()), job.s().kind,
                    e.cluster().gpu_type(a.placement.gpus.front()),
                    static_cast<double>(a.placement.total_milli()), aid});
  }
  std::sort(held.begin(), held.end(), [](const Held& a, const Held& b) {
    return a.density != b.density ? a.density < b.density : a.allocation < b.allocation;
  });
  // Each service's freed capacity is on the types its best variant runs on: the free
  // capacity there first, then those jobs, each taken once over the services.
  for (const ServiceRate& r : service_rates_) {
    double rest = std::max(0.0, r.freed_milli);
    if (rest <= 0) continue;
    auto on = [&](GpuTypeId t) {
      return std::find(r.freed_types.begin(), r.freed_types.end(), t) != r.freed_types.end();
    };
    for (size_t t = 0; t < free.size() && rest > 0; ++t) {
      if (!on(static_cast<GpuTypeId>(t))) continue;
      const double take = std::min(rest, free[t]);
      free[t] -= take;
      freed_free_milli_ += take;
      rest -= take;
    }
    for (Held& h : held) {
      if (rest <= 0) break;
      if (!on(h.type)) continue;
      const double take = std::min(rest, h.milli);
      h.milli -= take;
      freed_taken_milli_[static_cast<size_t>(h.kind)] += take;
      rest -= take;
    }
    freed_beyond_milli_ += rest;
  }
}

void Metrics::AttributeToTypes(WorkloadId job, double value) {
  auto it = job_type_ms_.find(job);
  if (it == job_type_ms_.end()) return;
  int64_t total = 0;
  for (int64_t ms : it->second) total += ms;
  for (size_t t = 0; t < it->second.size() && total > 0; ++t)
    s_.value_by_type[t] += value * static_cast<double>(it->second[t]) / static_cast<double>(total);
  job_type_ms_.erase(it);
}

void Metrics::Finish(TimeMs end) {
  Advance(end);
  const Engine& e = *engine_;
  for (size_t i = 0; i < e.job_count(); ++i) {
    const Job& job = e.job(static_cast<WorkloadId>(i));
    KindMetrics& k = s_.kinds[static_cast<size_t>(job.s().kind)];
    if (!job.is_service() && job.first_start == kNever && job.phase != JobPhase::kCancelled)
      k.queue_delay_s.push_back(ToSeconds(end - job.submitted));
    // A deadline counts once it is decided: the work finished, or the deadline has passed
    // by the end of the run. Work still running towards a later deadline is not counted.
    const bool decided =
        job.s().deadline && (job.phase == JobPhase::kDone || *job.s().deadline <= end);
    if (decided && !job.is_service() && job.phase != JobPhase::kCancelled) {
      ++k.with_deadline;
      const bool met = job.phase == JobPhase::kDone && job.finished <= *job.s().deadline;
      k.deadline_met += met ? 1 : 0;
      const auto kind = job.s().kind;
      if (kind == WorkloadKind::kBatch || kind == WorkloadKind::kEmbed ||
          kind == WorkloadKind::kEval) {
        ++s_.with_deadline;
        s_.deadline_met += met ? 1 : 0;
      }
    }
    if (!job.is_service()) s_.failures += static_cast<size_t>(job.failures);
    if (!job.is_service() && job.phase != JobPhase::kDone && job.phase != JobPhase::kCancelled &&
        job.s().work_seconds > 0) {
      double saved = job.work_saved;
      if (!job.allocations.empty())
        if (const Allocation* a = e.allocation(job.allocations.front()))
          saved = std::max(saved, StopSegment(job.s(), a->segment, end).work_saved);
      if (saved > 0) {
        ++s_.in_progress_jobs;
        s_.in_progress_value += job.s().value.CompletionValue(end, job.s().deadline) *
                                std::min(1.0, saved / job.s().work_seconds);
      }
    }
  }
  holds_.Finish(end);
  s_.holds = holds_.Calls();
  s_.hold_summaries = holds_.Summaries();
  s_.slo_attainment = s_.requests > 0 ? s_.requests_in_slo / s_.requests : 1.0;
  s_.deadline_hit_rate = s_.with_deadline > 0 ? static_cast<double>(s_.deadline_met) /
                                                    static_cast<double>(s_.with_deadline)
                                              : 1.0;
}

}  // namespace airtime
