// Daemon: GPU telemetry, demand scraping and the /metrics exposition.
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "airtime/api/prom_writer.h"
#include "airtime/base/build_info.h"
#include "airtime/base/file_read.h"
#include "airtime/server/daemon.h"
#include "airtime/server/demand_scrape.h"

namespace airtime {

TimeMs WallNow();

namespace {

// The last line of a run's telemetry file: "utilization=0.7 memory_mib=2048".
struct ProcessReport {
  std::optional<double> utilization;
  std::optional<int64_t> memory_mib;
};

// Only the file's last 4 KiB are read: the file belongs to the workload's user, who may
// make it as large as the disk allows.
std::optional<ProcessReport> ReadProcessReport(const std::string& path) {
  // The job writes this file: only its last 4 KiB are read, and only if it is a regular file
  // (a FIFO would block the open, /dev/zero never end).
  auto tail = ReadFileTail(path, 4096, "telemetry file");
  if (!tail.ok()) return std::nullopt;
  std::istringstream lines(*tail);
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  if (last.empty()) return std::nullopt;
  ProcessReport r;
  std::istringstream words(last);
  std::string word;
  while (words >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || !std::isfinite(v)) continue;
    if (key == "utilization") r.utilization = std::clamp(v, 0.0, 1.0);
    if (key == "memory_mib") r.memory_mib = static_cast<int64_t>(v);
  }
  return r;
}

}  // namespace

void Daemon::RecordHistory(TimeMs now) {
  if (!history_ || history_->gpus() != devices_.size())
    history_ = std::make_unique<airtime::GpuHistory>(devices_.size());
  std::unordered_map<std::string, int64_t> held_milli;  // by UUID
  for (const auto& [aid, a] : engine_->allocations())
    for (GpuIndex g : a.placement.gpus)
      held_milli[uuid_of_gpu_[static_cast<size_t>(g)]] += a.placement.milli;
  for (size_t i = 0; i < devices_.size(); ++i) {
    const std::string& uuid = devices_[i].uuid;
    auto h = held_milli.find(uuid);
    auto t = telemetry_.find(uuid);
    history_->Record(i, now, h == held_milli.end() ? 0.0 : h->second / 1000.0,
                     t == telemetry_.end() ? std::nullopt : t->second.utilization);
  }
}

void Daemon::SampleTelemetry(TimeMs now) {
  // Fake GPUs learn their load from the processes' own reports; one without a process is
  // idle (not the last report of a process that has gone).
  std::set<std::string> in_use;
  for (const auto& [id, run] : runs_)
    if (run.row.pid != 0) in_use.insert(run.row.gpus.begin(), run.row.gpus.end());
  for (const GpuDevice& d : devices_)
    if (d.fake && !in_use.count(d.uuid)) (void)inventory_->Report(d.uuid, 0.0, int64_t{0}, {});
  for (const auto& [id, run] : runs_) {
    if (run.row.run_dir.empty() || run.stopping) continue;
    auto report = ReadProcessReport(run.row.run_dir + "/telemetry");
    if (!report) continue;
    for (const std::string& uuid : run.row.gpus)
      (void)inventory_->Report(uuid, report->utilization, report->memory_mib, {run.row.pid});
  }
  for (GpuSample& s : inventory_->Sample(now)) {
    CountPower(s);
    telemetry_[s.uuid] = std::move(s);
  }
  RecordHistory(now);
  // The ledger counts measured busy time where telemetry has it.
  std::unordered_map<AllocationId, double> measured;
  for (const auto& [aid, a] : engine_->allocations()) {
    double sum = 0;
    int known = 0;
    for (GpuIndex g : a.placement.gpus) {
      auto t = telemetry_.find(uuid_of_gpu_[static_cast<size_t>(g)]);
      if (t == telemetry_.end() || !t->second.utilization) continue;
      sum += *t->second.utilization;
      ++known;
    }
    if (known > 0) measured[aid] = sum / known;
  }
  ledger_->Advance(std::max(now, engine_->now()));
  ledger_->SetMeasuredUtilization(std::move(measured));
}

namespace {

// What the scraper's thread needs of a workload: copies only (it must not touch loop state).
struct ScrapeJob {
  int64_t workload;
  std::string host;  // Actuator::ServiceAddress
  int port;
  std::string path;
  std::vector<std::string> names;
  std::string class_label;           // "": the whole sum
  std::vector<std::string> classes;  // the service's request classes, by that label
};

// Whether a scrape of one replica may go on: the exposition stays within
// kMaxExpositionBytes and the whole read within its time (a replica that trickles bytes
// would otherwise hold every other scrape back).
constexpr auto kScrapeReadLimit = std::chrono::seconds(2);

// One replica's exposition; nullopt when it cannot be had, is too large or too slow.
std::optional<std::string> FetchExposition(const std::string& host, int port,
                                           const std::string& path) {
  httplib::Client client(host, port);
  client.set_connection_timeout(0, 300000);
  client.set_read_timeout(1, 0);
  const auto deadline = std::chrono::steady_clock::now() + kScrapeReadLimit;
  std::string body;
  auto res = client.Get(path, [&](const char* data, size_t n) {
    if (body.size() + n > kMaxExpositionBytes || std::chrono::steady_clock::now() > deadline)
      return false;
    body.append(data, n);
    return true;
  });
  if (!res || res->status != 200) return std::nullopt;
  return body;
}

}  // namespace

void Daemon::ScrapeDemand(TimeMs) {
  if (scrape_busy_) return;
  std::vector<ScrapeJob> jobs;
  for (const auto& [id, run] : runs_) {
    const WorkloadRec& w = workloads_.at(run.row.workload_id);
    const ExecSpec& exec = w.spec->exec;
    if (exec.demand_metrics.empty() || run.row.port == 0 || run.stopping) continue;
    ScrapeJob job{w.row.id,
                  actuator_->ServiceAddress(run.row.gpus),
                  static_cast<int>(run.row.port),
                  exec.metrics_path,
                  exec.demand_metrics,
                  exec.demand_class_label,
                  {}};
    if (!job.class_label.empty())
      for (const RequestClass& c : w.spec->realtime.classes) job.classes.push_back(c.name);
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) return;
  if (scraper_.joinable()) scraper_.join();
  scrape_busy_ = true;
  scraper_ = std::thread([this, jobs = std::move(jobs)] {
    std::map<int64_t, ScrapeReading> readings;
    for (const ScrapeJob& job : jobs) {
      auto body = FetchExposition(job.host, job.port, job.path);
      if (!body) continue;
      ScrapeReading& r = readings[job.workload];
      if (!job.class_label.empty()) {
        ClassSums sums = SumMetricsByClass(*body, job.names, job.class_label, job.classes);
        if (r.classes)
          r.classes->Add(sums);
        else
          r.classes = std::move(sums);
      } else if (auto v = SumMetrics(*body, job.names)) {
        r.sum = r.sum.value_or(0) + *v;
      }
    }
    Post([this, readings = std::move(readings)] {
      ApplyScrape(readings);
      scrape_busy_ = false;
    });
  });
}

void Daemon::ApplyScrape(const std::map<int64_t, ScrapeReading>& readings) {
  const TimeMs now = std::max(WallNow(), engine_->now());
  // A request rate from a workload's sum (over its replicas) for class `c` (-1: the whole).
  // A replica's metrics are its tenant's to write: a rate is kept within [0, kMaxRps], as
  // a reported one must be, so that no count built from it overflows.
  const auto bounded = [](double rps) {
    return std::isfinite(rps) ? std::clamp(rps, 0.0, kMaxRps) : 0.0;
  };
  auto rate_of = [&](const WorkloadRec& w, int c, double sum) -> std::optional<double> {
    if (!w.spec->exec.demand_is_counter)
      return bounded(RateFromInFlight(sum, w.spec->realtime.latency_slo_ms));
    const auto key = std::make_pair(w.row.id, c);
    auto last = counters_.find(key);
    auto rps = CounterRate(
        last == counters_.end() ? std::nullopt : std::optional<CounterReading>(last->second), sum,
        now);
    counters_[key] = {sum, now};
    if (rps) rps = bounded(*rps);
    return rps;
  };
  // A service's demand, by the name it is reported under: a workload's own replicas' rate;
  // for a service with model variants and one request class, the sum over all its members'
  // replicas, which every member hears as that class's (a member's own rate is not its
  // service's demand). A service of several classes without a class label: each member's
  // own.
  struct Scraped {
    std::vector<WorkloadRec*> recs;  // empty: the members of the service of that name
    double rps = 0;
    int request_class = -1;
  };
  std::map<std::string, Scraped> demand;
  // A service of several classes with a class label: each class's rate summed over all its
  // members' replicas, as a report per class gives it (ReportDemand).
  struct PerClass {
    std::vector<double> rps;
    std::vector<bool> seen;
    ClassSums skipped;  // the counts of samples that counted for no class
    std::string label;
  };
  std::map<std::string, PerClass> per_class;
  for (const auto& [id, reading] : readings) {
    auto it = workloads_.find(id);
    if (it == workloads_.end() || it->second.eid == kNoWorkload) continue;
    WorkloadRec& w = it->second;
    const RealtimeProfile& rt = w.spec->realtime;
    if (reading.classes) {
      if (!rt.is_member()) continue;  // ValidateSpec: only a service with classes has a label
      PerClass& p = per_class[rt.group];
      p.rps.resize(rt.classes.size(), 0.0);
      p.seen.resize(rt.classes.size(), false);
      p.label = w.spec->exec.demand_class_label;
      const ClassSums& sums = *reading.classes;
      for (size_t c = 0; c < sums.sums.size() && c < p.rps.size(); ++c) {
        if (!sums.seen[c]) continue;
        if (auto rps = rate_of(w, static_cast<int>(c), sums.sums[c])) {
          p.rps[c] += *rps;
          p.seen[c] = true;
        }
      }
      ClassSums counts = sums;
      counts.seen.assign(counts.seen.size(), false);  // the counts only
      p.skipped.Add(counts);
      continue;
    }
    if (!reading.sum) continue;
    auto rps = rate_of(w, -1, *reading.sum);
    if (!rps) continue;  // a counter's first reading, or a reset
    if (rt.is_member() && rt.classes.size() == 1) {
      Scraped& s = demand[rt.group];
      s.rps += *rps;
      s.request_class = 0;
    } else {
      demand[w.row.name] = {{&w}, *rps, -1};
    }
  }
  for (auto& [name, s] : demand) {
    s.rps = bounded(s.rps);  // a sum over replicas
    if (s.recs.empty())
      for (int64_t id : members_of_.at(name))
        if (WorkloadRec& m = workloads_.at(id); !IsFinalState(m.row.state) && m.eid != kNoWorkload)
          s.recs.push_back(&m);
    if (s.recs.empty()) continue;
    const double last = s.recs.front()->row.demand_rps;
    if (std::abs(s.rps - last) <= 0.01 * std::max(1.0, last)) continue;
    std::vector<Event> events;
    for (WorkloadRec* w : s.recs) {
      (void)RecordDemand(*w, s.rps, now);  // the engine follows the demand even if not stored
      for (const Event& e : DemandEvents(*w, s.request_class, s.rps, now)) events.push_back(e);
    }
    FeedTogether(events);
  }
  for (auto& [name, p] : per_class) {
    for (double& rps : p.rps) rps = bounded(rps);
    NoteSkippedSamples(name, p.skipped, p.label, now);
    std::vector<Event> events;
    for (int64_t id : members_of_.at(name)) {
      WorkloadRec& m = workloads_.at(id);
      if (IsFinalState(m.row.state) || m.eid == kNoWorkload) continue;
      // Every class whose rate changed by more than 1%, then the member's own demand that
      // follows from all of them (DemandEvents, for several classes at once). A class that
      // no sample named keeps its rate: its label set may not be exported yet.
      std::vector<double> classes = engine_->job(m.eid).class_rps;
      classes.resize(p.rps.size(), 0.0);
      std::vector<std::pair<std::string, double>> changed;
      for (size_t c = 0; c < p.rps.size(); ++c) {
        if (!p.seen[c] || std::abs(p.rps[c] - classes[c]) <= 0.01 * std::max(1.0, classes[c]))
          continue;
        classes[c] = p.rps[c];
        events.push_back(Event::ClassDemand(now, m.eid, static_cast<int>(c), p.rps[c]));
        changed.emplace_back(m.spec->realtime.classes[c].name, p.rps[c]);
      }
      if (changed.empty()) continue;
      const double own = m.spec->realtime.OwnDemand(classes);
      events.push_back(Event::Demand(now, m.eid, own));
      // Stored as a report per class is: a restart feeds them back.
      (void)RecordDemand(m, own, now, changed);
    }
    if (!events.empty()) FeedTogether(events);
  }
}

void Daemon::NoteSkippedSamples(const std::string& service, const ClassSums& skipped,
                                const std::string& label, TimeMs now) {
  if (skipped.skipped() == 0) return;
  SkippedSamples& s = skipped_samples_[service];
  if (s.scrapes == 0) s.first = now;
  s.last = now;
  s.samples += skipped.skipped();
  ++s.scrapes;
  s.last_text = skipped.SkippedText(label);
}

// Per tenant, as Kueue's cluster queues and KAI's queues report: what it holds, and under a
// policy with tenant quotas (kai, airtime:quota=...) its deserved quota, fair share and what
// it borrows over its quota.
void Daemon::RenderTenantMetrics(PromWriter& w, std::map<std::string, double> allocated) const {
  std::vector<TenantStanding> standings;
  if (const TenantReportPlugin* report = engine_->policy().tenants.get())
    standings = report->Standings(*engine_);
  for (const TenantStanding& t : standings) allocated[t.tenant];  // 0 unless it holds some
  for (const auto& [tenant, gpus] : allocated)
    w.Gauge("airtime_tenant_allocated_gpus", "GPUs the tenant's workloads hold (shares summed).",
            gpus, {{"tenant", tenant}});
  for (const TenantStanding& t : standings) {
    const PromLabels l = {{"tenant", t.tenant}};
    w.Gauge("airtime_tenant_deserved_gpus",
            "The tenant's deserved quota under the policy's tenant quotas.", t.deserved, l);
    w.Gauge("airtime_tenant_fair_share_gpus",
            "The tenant's fair share at the last decision cycle (deserved quota plus its part of "
            "what others leave idle, capped by what it asks for).",
            t.fair_share, l);
    w.Gauge("airtime_tenant_borrowed_gpus",
            "GPUs the tenant holds over its deserved quota (preemptible work on capacity others "
            "leave idle).",
            t.borrowed, l);
  }
}

std::string Daemon::Metrics() {
  return OnLoop<std::string>([this] { return RenderMetrics(); });
}

std::string Daemon::RenderMetrics() {
  const TimeMs now = std::max(WallNow(), engine_->now());
  ledger_->Advance(now);
  AccountValue(now);
  PromWriter w;
  w.Gauge("airtime_build_info", "The daemon's version and the commit it was built from; always 1.",
          1, {{"version", BuildVersion()}, {"commit", BuildCommit()}});
  w.Gauge("airtime_gpus_installed", "GPUs the engine schedules on this host.",
          static_cast<double>(uuid_of_gpu_.size()));
  // Per GPU, with DCGM exporter labels.
  std::map<std::string, double> held;  // by UUID, in GPUs
  struct Owner {
    std::string name, tenant, kind;
  };
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, double>> per_wl;
  for (const auto& [aid, a] : engine_->allocations()) {
    auto wit = by_engine_id_.find(a.workload);
    if (wit == by_engine_id_.end()) continue;
    const WorkloadRec& rec = workloads_.at(wit->second);
    double util_sum = 0;
    for (GpuIndex g : a.placement.gpus) {
      const std::string& uuid = uuid_of_gpu_[static_cast<size_t>(g)];
      const double share = a.placement.milli / 1000.0;
      held[uuid] += share;
      auto t = telemetry_.find(uuid);
      if (t != telemetry_.end() && t->second.utilization)
        util_sum += std::min(share, *t->second.utilization);
    }
    auto& [alloc, used] = per_wl[{rec.row.name, rec.row.tenant, rec.row.kind}];
    alloc += a.placement.total_milli() / 1000.0;
    used += util_sum;
  }
  for (const GpuDevice& d : devices_) {
    const PromLabels labels = {{"gpu", std::to_string(d.index)},
                               {"UUID", d.uuid},
                               {"modelName", d.model},
                               {"Hostname", options_.hostname}};
    w.Gauge("airtime_gpu_allocated_ratio", "Share of the GPU allocated to workloads (0-1).",
            held[d.uuid], labels);
    auto t = telemetry_.find(d.uuid);
    if (t == telemetry_.end()) continue;
    const GpuSample& s = t->second;
    if (s.utilization)
      w.Gauge("airtime_gpu_utilization_ratio", "GPU busy fraction from telemetry (0-1).",
              *s.utilization, labels);
    if (s.memory_used_mib)
      w.Gauge("airtime_gpu_memory_used_bytes", "GPU memory in use.",
              static_cast<double>(*s.memory_used_mib) * 1024 * 1024, labels);
    if (s.power_w) w.Gauge("airtime_gpu_power_watts", "GPU power draw.", *s.power_w, labels);
  }
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> per_tk;
  std::map<std::string, double> per_tenant;  // allocated GPUs; 0 for a tenant with work waiting
  for (const auto& [id, rec] : workloads_)
    if (!IsFinalState(rec.row.state)) per_tenant[rec.row.tenant];
  for (const auto& [key, v] : per_wl) {
    const auto& [name, tenant, kind] = key;
    const PromLabels l = {{"workload", name}, {"tenant", tenant}, {"kind", kind}};
    w.Gauge("airtime_workload_allocated_gpus", "GPUs allocated to the workload.", v.first, l);
    w.Gauge("airtime_workload_utilized_gpus", "GPUs the workload keeps busy (telemetry).", v.second,
            l);
    per_tk[{tenant, kind}].first += v.first;
    per_tk[{tenant, kind}].second += v.second;
    per_tenant[tenant] += v.first;
  }
  RenderTenantMetrics(w, per_tenant);
  for (const auto& [key, v] : per_tk) {
    const PromLabels l = {{"tenant", key.first}, {"kind", key.second}};
    w.Gauge("airtime_allocated_gpus", "GPUs allocated, per tenant and kind.", v.first, l);
    w.Gauge("airtime_utilized_gpus", "GPUs kept busy, per tenant and kind.", v.second, l);
  }
  std::map<std::pair<std::string, std::string>, int> states;
  for (const auto& [id, rec] : workloads_) ++states[{rec.row.state, rec.row.kind}];
  for (const auto& [key, n] : evicted_counts_) states[key] += static_cast<int>(n);
  for (const auto& [key, n] : states)
    w.Gauge("airtime_workloads", "Workloads by state and kind.", n,
            {{"state", key.first}, {"kind", key.second}});
  const LedgerTotals& t = ledger_->totals();
  for (int b = 0; b < kBucketCount; ++b)
    w.Counter("airtime_ledger_gpu_seconds_total",
              "Installed GPU-seconds by where they went (the ledger's buckets).",
              static_cast<double>(t.milli_ms[static_cast<size_t>(b)]) / 1e6,
              {{"bucket", BucketName(static_cast<Bucket>(b))}});
  w.Counter("airtime_installed_gpu_seconds_total",
            "Installed GPU-seconds counted since the ledger began (kept across restarts).",
            static_cast<double>(t.installed_milli_ms) / 1e6);
  w.Counter("airtime_value_total",
            "Value earned (owner's units) since the ledger began (kept across restarts).",
            ValueEarned());
  for (const TypeCost& c : Costs().types)
    w.Gauge("airtime_gpu_cost_per_hour",
            "Hourly cost of one installed GPU of the type: depreciation + power x PUE "
            "(catalogue figures; measured power where NVML gives it); 0 when unpriced.",
            c.hourly.total, {{"gpu_type", c.name}});
  for (const auto& [name, sm] : books_->summary().services) {
    const std::pair<double, double> v = {sm.requests, sm.requests_in_slo};
    const PromLabels l = {{"workload", name}};
    w.Counter("airtime_service_requests_total",
              "Requests that arrived at a realtime service (its demand over time) since the "
              "daemon started.",
              v.first, l);
    w.Counter("airtime_service_requests_in_slo_total",
              "Of those, the requests its ready replicas' capacity covered (served within the "
              "SLO); the ratio of the two rates is its SLO attainment.",
              v.second, l);
  }
  w.Counter("airtime_submissions_total", "Workloads accepted.",
            static_cast<double>(submissions_total_));
  w.Counter("airtime_process_starts_total", "Processes started.",
            static_cast<double>(starts_total_));
  w.Counter("airtime_preemptions_total", "Allocations preempted.",
            static_cast<double>(preemptions_total_));
  w.Counter("airtime_run_failures_total", "Runs that failed on their own.",
            static_cast<double>(failures_total_));
  w.Counter("airtime_log_cuts_total",
            "Run logs (stdout.log, stderr.log) cut once over --max-log-mib, their tails kept in "
            "NAME.1.",
            static_cast<double>(log_cuts_));
  w.Counter("airtime_log_dropped_bytes_total",
            "Output bytes those cuts dropped (beyond the tails they kept).",
            static_cast<double>(log_bytes_dropped_));
  w.Counter("airtime_checkpoint_cap_ends_total",
            "Workloads ended because their checkpoint directory went over "
            "--max-checkpoint-mib (or held too many files).",
            static_cast<double>(checkpoint_cap_ends_));
  for (const auto& [result, n] : {std::pair<const char*, uint64_t>{"success", admitted_total_},
                                  {"inadmissible", inadmissible_total_}})
    w.Counter("airtime_admission_attempts_total",
              "Workloads a decision cycle tried to place, by result: success (started; a "
              "service's replica counts once per replica), inadmissible (left waiting: no room, "
              "a policy's refusal such as a quota, or no hardware that could take it).",
              static_cast<double>(n), {{"result", result}});
  for (const auto& [outcome, n] :
       {std::pair<const char*, uint64_t>{"as_decided", placements_as_decided_},
        {"moved", placements_moved_},
        {"unmoved", placements_unmoved_}})
    w.Counter("airtime_backend_placements_total",
              "Runs whose GPUs the backend chose itself (Slurm picks a job's GPU indices), by "
              "outcome: as_decided (the engine's choice), moved (the engine's allocation moved "
              "onto the backend's GPUs), unmoved (it could not be).",
              static_cast<double>(n), {{"outcome", outcome}});
  w.Gauge("airtime_foreign_gpus",
          "GPUs held now, whole or in part (Slurm's gres/shard), by work airtime does not run "
          "(jobs submitted to Slurm directly).",
          static_cast<double>(engine_->foreign().size()));
  w.Histogram("airtime_queue_wait_seconds", "Time a workload waited before each start.",
              queue_wait_hist_);
  w.Histogram("airtime_decision_cycle_seconds", "Duration of one engine decision cycle.",
              cycle_hist_);
  for (const auto& [action, h] :
       {std::pair<const char*, const PromHistogram*>{"start", &start_action_hist_},
        {"stop", &stop_action_hist_}})
    w.Histogram("airtime_backend_action_seconds",
                "From the engine's decision to the backend accepting the action: start (the "
                "process launched; under Slurm the job submitted to its nodes), stop (the stop "
                "signal sent).",
                *h, {{"action", action}});
  return w.Text();
}

}  // namespace airtime
