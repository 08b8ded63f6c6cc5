// Metrics: value earned, service levels and waiting, integrated alongside the ledger.
//
// Driven like the Ledger: Advance(to) integrates the interval since the last event with
// the state after the last cycle, Observe(cycle) takes in starts and completions. Finish
// closes the books at the end of a run (censoring work that never started or finished).
// Value: realtime services earn value per 1,000 requests served within their SLO (a request
// is served within the SLO while ready replicas' capacity covers the demand); other work
// earns its completion value, decayed after its deadline.
#pragma once

#include <array>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "airtime/engine/engine.h"
#include "airtime/engine/variant_load.h"
#include "airtime/ledger/hold_book.h"

namespace airtime {

struct Percentiles {
  size_t count = 0;
  double p50 = 0, p99 = 0, max = 0, mean = 0;  // seconds
};
Percentiles ComputePercentiles(std::vector<double> values);

struct KindMetrics {
  size_t submitted = 0, started = 0, completed = 0;
  size_t with_deadline = 0, deadline_met = 0;
  std::vector<double> queue_delay_s;  // first start - submission (censored at the end)
  std::vector<double> jct_s;          // completion - submission
  double value = 0;
};

// One realtime service over the run: the aggregate SLO attainment can hide a service that
// misses its own target behind one that serves many more requests.
struct ServiceMetrics {
  double requests = 0, requests_in_slo = 0;
  double value = 0;   // earned by requests served within the SLO
  double gpu_ms = 0;  // GPU-ms its replicas held (cold starts and unused capacity included)
  // Requests missed before its first replica could be ready (submission + cold start): no
  // schedule serves those; starting the service ahead of its traffic does.
  double missed_at_start = 0;
  size_t replica_starts = 0;  // each a model load; many short-lived ones are churn
  // A service with model variants (its members' figures are summed under its name):
  bool variants = false;
  double quality_served = 0;  // requests served within the SLO, each times its variant's quality
  double quality_floor = 0;
  // GPU-ms freed by variant choice: what the best variant (quality 1, at its highest
  // throughput per replica) would have held for what each other variant served (the whole
  // replicas that serve it, with spares in the proportion that variant kept), less what
  // those variants' replicas held (cold starts included). 0 under a policy that runs the
  // best variant alone; < 0 where the other variants held more than that (a cold start, or
  // a variant that needs more GPUs per request).
  double gpu_ms_freed = 0;
  double slo_attainment() const { return requests > 0 ? requests_in_slo / requests : 1.0; }
  double mean_quality() const {
    return requests_in_slo > 0 ? quality_served / requests_in_slo : 1.0;
  }
};

// Where the GPU-time freed by variant choice went, all services with variants together.
// Each interval, the capacity a service's other variants freed (ServiceMetrics::
// gpu_ms_freed, where positive) is what its best variant alone would have needed more, on
// the GPU types the best variant runs on. It would have come from the free capacity of
// those types first; beyond that, from the running jobs on them that the best variant's
// extra replicas would have displaced: the least dense (value per GPU-hour) first, since
// replicas come first in a value order. So what lay free meanwhile is `left_free`, what the
// jobs held is `taken` by their kind, and what even all of those could not have given (the
// best variant alone would have dropped those requests) is `beyond`.
struct VariantFreedUse {
  double freed_ms = 0;  // GPU-ms freed (the positive part, summed over services)
  std::array<double, kWorkloadKindCount> taken_ms{};
  double left_free_ms = 0;
  double beyond_ms = 0;
};

struct MetricsSummary {
  double value = 0;
  double requests = 0, requests_in_slo = 0;
  double slo_attainment = 1.0;  // requests served in SLO / requests (1 when none)
  size_t with_deadline = 0, deadline_met = 0;
  // Batch kinds (batch, embed, eval) whose deadline was decided by the end of the run
  // (finished, or the deadline passed); cancelled work and deadlines after the end excluded.
  double deadline_hit_rate = 1.0;
  std::array<KindMetrics, kWorkloadKindCount> kinds;
  // Value by the GPU type that earned it, indexed by GpuTypeId: a service's value over an
  // interval is split over its ready replicas' types by capacity, a job's completion value
  // over the types it held, in proportion to the GPU-time it held on each (attempts that
  // were preempted included). Value of work that held no GPU is in none.
  std::vector<double> value_by_type;
  std::map<std::string, double> tenant_gpu_ms;     // GPU-ms held per tenant
  std::map<std::string, ServiceMetrics> services;  // by name
  VariantFreedUse freed_use;
  size_t preemptions = 0, failures = 0;
  // Work under way when the run ends, not in `value` (it pays on completion): the jobs (not
  // services) neither finished nor cancelled that have saved progress, i.e. what a stop at
  // the end would keep (Engine progress: the work before the last checkpoint). Its value is
  // each job's completion value at the end times the share of its work saved. A replay cut
  // at a horizon counts nothing for a long job that the horizon interrupts, however far it
  // got; this says how much such progress the run leaves behind.
  size_t in_progress_jobs = 0;
  double in_progress_value = 0;
  // The 3 a.m. report: every hold-or-hand-off call on services' headroom, scored against
  // what came (HoldBook), and the same per service.
  std::vector<ScoredHold> holds;
  std::map<std::string, HoldSummary> hold_summaries;
};

// The name a service's figures go under: its own, or for a member of a service with variants
// (RealtimeProfile::is_member), the service's.
std::string ServiceName(const Job& job);

struct MetricsOptions {
  // false: the 3 a.m. calls are left to the caller (the daemon keeps its own book, bounded
  // and saved across restarts), and `holds` stays empty.
  bool score_holds = true;
  // false: no per-workload samples (KindMetrics::queue_delay_s and jct_s stay empty; the
  // counts and sums are kept). A driver that runs for months and reads only the totals (the
  // daemon) would otherwise keep two doubles for every job it ever ran.
  bool keep_samples = true;
};

class Metrics {
 public:
  explicit Metrics(const Engine& engine, MetricsOptions options = {});
  Metrics(const Metrics&) = delete;  // service_rates_ point into s_
  Metrics& operator=(const Metrics&) = delete;
  void Advance(TimeMs to);
  void Observe(const CycleResult& cycle);
  // Closes the books at `end`: unstarted work counts its wait so far as its queueing delay.
  void Finish(TimeMs end);
  const MetricsSummary& summary() const { return s_; }

 private:
  struct ServiceRate {
    WorkloadId id;
    double demand_rps, capacity_rps, per_1k;
    int64_t held_milli;   // milli-GPUs its replicas hold
    TimeMs first_ready;   // its submission + cold start
    ServiceMetrics* out;  // its entry in s_.services
    // Ready capacity per GPU type, as shares of capacity_rps (empty: nothing ready).
    std::vector<std::pair<GpuTypeId, double>> type_shares;
    // A service with variants: the quality of its served requests (capacity_rps is then
    // what it serves, and per_1k is weighted by it) and the GPU-milli freed by variant choice.
    double quality_rps = 0;
    double freed_milli = 0;
    std::vector<GpuTypeId> freed_types{};  // where the best variant would have held them
  };
  struct JobTypeRate {
    int64_t* held_ms;  // the job's entry for the type in job_type_ms_
    int64_t milli;
  };
  void Recompute();
  // The rate of a service with variants, from its members (in the variants' order).
  ServiceRate GroupRate(const VariantLoad& load);
  // Adds a finished job's value to the types it held, and forgets its GPU-time.
  void AttributeToTypes(WorkloadId job, double value);

  const Engine* engine_;
  TimeMs last_ = 0;
  MetricsSummary s_;
  std::vector<WorkloadId> services_;
  std::vector<ServiceRate> service_rates_;
  std::vector<std::pair<std::string, int64_t>> tenant_rates_;  // milli-GPU held per tenant
  std::vector<JobTypeRate> job_type_rates_;  // milli-GPU each job (not service) holds per type
  // Where the milli-GPUs freed by variant choice go now (VariantFreedUse's rule).
  void AttributeFreed();
  double freed_milli_ = 0, freed_free_milli_ = 0, freed_beyond_milli_ = 0;
  std::array<double, kWorkloadKindCount> freed_taken_milli_{};
  // Milli-GPU-ms each unfinished job has held per type, for its completion value.
  std::unordered_map<WorkloadId, std::vector<int64_t>> job_type_ms_;
  MetricsOptions options_;
  HoldBook holds_;
};

}  // namespace airtime
