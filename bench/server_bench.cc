// airtime_server_bench: speed figures of the live control plane, printed as `name: value unit`.
//
// Each phase runs a fresh daemon in this process (Daemon::Open on a new mkdtemp data
// directory, simulated 8xH100, the default policy) behind the real HTTP API (HttpApi on
// 127.0.0.1, any free port, one admin token), and talks to it only through cpp-httplib
// clients set up as the CLI's ApiClient is: a new connection per request. Processes are real:
// the daemon launches them through the `_shim` of the `airtime` binary built beside this one.
//
//   submissions_*  --submissions (10,000) POST /v1/workloads of one planning-only workload
//                  each ({"name", "kind": "batch", "gpus": 8, "work": "1h"}, no command:
//                  nothing is executed; one holds the GPUs, the rest queue) from 32 client
//                  threads. per_s is requests over the burst's wall time; client_* is one
//                  request as the client sees it (connect, send, answer); commit_* is the
//                  daemon's submit_commit series (request parsed -> stored in the database
//                  and answered; submissions that arrive together share one transaction);
//                  cycle_* the decision cycles the burst caused (the queue grows to all of it).
//   arrival_*      --jobs (200) one-GPU jobs running /bin/sleep 0.05, submitted one at a time:
//                  the next is submitted once the previous has succeeded, so every arrival
//                  finds free GPUs and starts at once. to_decision is submission received ->
//                  the engine's decision; to_start -> the launcher returned (the shim is
//                  running, the process spawned).
//   exit_*         --jobs (200) eight-GPU jobs running /bin/sleep 0.05, queued in one request
//                  on 8 GPUs: each exit starts the next. to_decision is the exit seen by the
//                  loop -> the decision; to_start -> the next process launched. The first
//                  start (the arrival) is left out. gap is wall / jobs - 50 ms: the whole
//                  per-job overhead between one process's end and the next one's start, as
//                  the clock on the wall shows it.
//   memory_*       --ended (4,000) workloads that end (one-GPU jobs running /bin/true, 500 per
//                  request, each batch waited out): the daemon's live heap (glibc's mallinfo2,
//                  in use, so the allocator's free lists do not count; SQLite's page cache,
//                  up to its 2 MiB, and the latency samples, up to LatencySeries::kKeep each,
//                  do) after the first 1,000 and after all of them. per_ended_workload is what
//                  one more ended workload keeps, on average since the first 1,000 and between
//                  checkpoints (3,000, 10,000, every 30,000): what keeps growing after the
//                  bounded caches are full is what a daemon's memory grows by for its life.
//   demand_*       --reports (20,000) demand reports to one service, POST
//                  /v1/workloads/flood/demand from one client as fast as it answers, the rate
//                  alternating between two values so that every report is a change (what a
//                  hostile or broken tenant's loop sends). The service is planning-only (no
//                  command, 1-4 one-GPU replicas). client_first/last are one report as the
//                  client sees it over the first and the last tenth of the reports: their
//                  ratio is 1 when a report costs the same however many came before (it
//                  grows with them when a window or a store keeps every report). stored_rows
//                  is what the store's demand history holds afterwards; per_report the live
//                  heap it grew by per report since the first tenth. --queued (0) jobs
//                  wait meanwhile, planning-only, so that each cycle walks that long a queue.
// The event latencies are the daemon's own (Daemon::latencies()), measured on the steady
// clock from the moment the loop noticed the event. Cycle times are steady-clock seconds.
// --keep-alive reuses one connection per client thread instead of one per request; both
// ends set TCP_NODELAY (without it each request on a kept connection waited ~40 ms: Nagle's
// algorithm against delayed ACKs).
// This machine is shared and has few cores: the HTTP workers, the daemon's loop, the clients
// and the launched processes compete for them, which is part of what is measured.
#include <httplib.h>
#include <malloc.h>
#include <sched.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "airtime/api/http_api.h"
#include "airtime/api/tokens.h"
#include "airtime/ledger/metrics.h"
#include "airtime/server/daemon.h"
#include "airtime/store/store.h"
#include "nlohmann/json.hpp"

#ifndef AIRTIME_BENCH_SHIM
#error "AIRTIME_BENCH_SHIM (the airtime binary that runs _shim) must be defined"
#endif

namespace airtime {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kToken = "bench-admin-token-0123456789abcdef";
bool g_keep_alive = false;  // --keep-alive

void Print(const std::string& name, double value, const char* unit) {
  std::printf("%s: %.6g %s\n", name.c_str(), value, unit);
  std::fflush(stdout);
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "airtime_server_bench: %s\n", what.c_str());
  return 1;
}

// Prints p50/p99 (and optionally the mean) of samples in seconds, scaled to `unit`.
void PrintQuantiles(const std::string& prefix, std::vector<double> seconds, double scale,
                    const char* unit, bool mean = false) {
  const Percentiles p = ComputePercentiles(std::move(seconds));
  Print(prefix + "_p50_" + unit, p.p50 * scale, unit);
  Print(prefix + "_p99_" + unit, p.p99 * scale, unit);
  if (mean) Print(prefix + "_mean_" + unit, p.mean * scale, unit);
}

std::vector<double> Samples(const LatencySeries& s, size_t skip = 0) {
  const auto& d = s.samples();
  return std::vector<double>(d.begin() + static_cast<std::ptrdiff_t>(std::min(skip, d.size())),
                             d.end());
}

// A daemon on simulated GPUs behind the HTTP API, in a fresh data directory removed at the end.
class LiveDaemon {
 public:
  ~LiveDaemon() {
    if (api_) api_->Stop();
    if (daemon_) daemon_->Stop();
    api_.reset();
    daemon_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  Status Open(const std::string& gpus) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "airtime-server-bench-XXXXXX");
    if (!mkdtemp(tmpl.data())) return InvalidArgument("mkdtemp " + tmpl + " failed");
    dir_ = tmpl;
    DaemonOptions o;
    o.data_dir = dir_ + "/data";
    o.fake_gpus = gpus;
    o.shim_path = AIRTIME_BENCH_SHIM;
    auto d = Daemon::Open(o);
    if (!d.ok()) return d.status();
    daemon_ = std::move(*d);
    daemon_->Start();
    auto tokens = Tokens::Parse(std::string("admin ") + kToken + "\n", "bench");
    if (!tokens.ok()) return tokens.status();
    tokens_ = std::move(*tokens);
    api_ = std::make_unique<HttpApi>(*daemon_, tokens_);
    AIRTIME_RETURN_IF_ERROR(api_->Listen("127.0.0.1", 0));
    return api_->Start();
  }

  std::unique_ptr<httplib::Client> Client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", api_->port());
    c->set_keep_alive(g_keep_alive);
    c->set_tcp_nodelay(true);
    c->set_bearer_token_auth(kToken);
    c->set_connection_timeout(10);
    c->set_read_timeout(60);
    c->set_write_timeout(60);
    return c;
  }

  Daemon& daemon() { return *daemon_; }
  std::string data_dir() const { return dir_ + "/data"; }

 private:
  std::string dir_;
  Tokens tokens_;
  std::unique_ptr<Daemon> daemon_;
  std::unique_ptr<HttpApi> api_;
};

// POSTs `body` to /v1/workloads; "" when accepted (201), else why not.
std::string Post(httplib::Client& c, const std::string& body) {
  auto r = c.Post("/v1/workloads", body, "application/json");
  if (!r) return "POST /v1/workloads: " + httplib::to_string(r.error());
  if (r->status != 201) return "POST /v1/workloads: " + std::to_string(r->status) + " " + r->body;
  return "";
}

// GET `path` as JSON, or null (with `why` set).
json GetJson(httplib::Client& c, const std::string& path, std::string* why) {
  auto r = c.Get(path);
  if (!r) {
    *why = "GET " + path + ": " + httplib::to_string(r.error());
    return nullptr;
  }
  if (r->status != 200) {
    *why = "GET " + path + ": " + std::to_string(r->status) + " " + r->body;
    return nullptr;
  }
  return json::parse(r->body, nullptr, false);
}

// Polls until no workload is queued or running (up to `limit_s`); "" when idle.
std::string WaitIdle(httplib::Client& c, double limit_s) {
  const auto t0 = Clock::now();
  std::string why;
  while (SecondsSince(t0) < limit_s) {
    json j = GetJson(c, "/v1/workloads?state=active&limit=1", &why);
    if (j.is_null() || !j.contains("workloads")) return why.empty() ? "bad list answer" : why;
    if (j["workloads"].empty()) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return "workloads still active after " + std::to_string(limit_s) + " s";
}

// "" when exactly `n` workloads have succeeded.
std::string CheckSucceeded(httplib::Client& c, size_t n) {
  std::string why;
  json j = GetJson(c, "/v1/workloads?state=succeeded", &why);
  if (j.is_null() || !j.contains("workloads")) return why.empty() ? "bad list answer" : why;
  if (j["workloads"].size() != n)
    return std::to_string(j["workloads"].size()) + " of " + std::to_string(n) +
           " workloads succeeded";
  return "";
}

int Submissions(int n) {
  constexpr int kThreads = 32;
  LiveDaemon live;
  if (Status st = live.Open("8xH100"); !st.ok()) return Fail(st.ToString());
  std::atomic<int> next{0}, errors{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::vector<double>> client_s(kThreads);
  std::string first_error;
  std::mutex error_mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto c = live.Client();
      client_s[static_cast<size_t>(t)].reserve(static_cast<size_t>(n / kThreads + 1));
      ++ready;
      while (!go) std::this_thread::yield();
      for (int i = next++; i < n; i = next++) {
        const std::string body = json{
            {"name", "s" + std::to_string(i)},
            {"kind", "batch"},
            {"gpus", 8},
            {"work", "1h"}}.dump();
        const auto t0 = Clock::now();
        std::string why = Post(*c, body);
        client_s[static_cast<size_t>(t)].push_back(SecondsSince(t0));
        if (!why.empty()) {
          ++errors;
          std::lock_guard<std::mutex> lock(error_mu);
          if (first_error.empty()) first_error = why;
        }
      }
    });
  }
  while (ready < kThreads) std::this_thread::yield();
  const auto t0 = Clock::now();
  go = true;
  for (auto& t : threads) t.join();
  const double wall = SecondsSince(t0);
  if (errors > 0)
    return Fail(std::to_string(errors.load()) + " submissions failed; first: " + first_error);
  std::vector<double> all;
  for (auto& v : client_s) all.insert(all.end(), v.begin(), v.end());
  const LatencyLog log = live.daemon().latencies();
  Print("submissions_count", n, "requests");
  Print("submissions_clients", kThreads, "threads");
  Print("submissions_wall", wall, "s");
  Print("submissions_per_s", n / wall, "requests/s");
  PrintQuantiles("submissions_client", std::move(all), 1e3, "ms");
  PrintQuantiles("submissions_commit", Samples(log.submit_commit), 1e3, "ms");
  Print("submissions_cycles", static_cast<double>(log.cycle.count()), "cycles");
  PrintQuantiles("submissions_cycle", Samples(log.cycle), 1e6, "us");
  return 0;
}

std::string SleepJob(const std::string& name, int gpus) {
  return json{
      {"name", name}, {"kind", "batch"}, {"gpus", gpus}, {"command", {"/bin/sleep", "0.05"}}}
      .dump();
}

int Arrival(int jobs) {
  LiveDaemon live;
  if (Status st = live.Open("8xH100"); !st.ok()) return Fail(st.ToString());
  auto c = live.Client();
  const auto t0 = Clock::now();
  for (int i = 0; i < jobs; ++i) {
    if (std::string why = Post(*c, SleepJob("a" + std::to_string(i), 1)); !why.empty())
      return Fail(why);
    if (std::string why = WaitIdle(*c, 30); !why.empty()) return Fail(why);
  }
  const double wall = SecondsSince(t0);
  if (std::string why = CheckSucceeded(*c, static_cast<size_t>(jobs)); !why.empty())
    return Fail(why);
  const LatencyLog log = live.daemon().latencies();
  if (log.event_to_start.count() != static_cast<uint64_t>(jobs))
    return Fail("arrival: " + std::to_string(log.event_to_start.count()) + " starts for " +
                std::to_string(jobs) + " jobs");
  Print("arrival_jobs", jobs, "jobs");
  Print("arrival_wall", wall, "s");
  PrintQuantiles("arrival_to_decision", Samples(log.event_to_decision), 1e3, "ms", true);
  PrintQuantiles("arrival_to_start", Samples(log.event_to_start), 1e3, "ms", true);
  PrintQuantiles("arrival_cycle", Samples(log.cycle), 1e6, "us");
  return 0;
}

int Exit(int jobs) {
  LiveDaemon live;
  if (Status st = live.Open("8xH100"); !st.ok()) return Fail(st.ToString());
  auto c = live.Client();
  std::string body = "[";
  for (int i = 0; i < jobs; ++i) body += (i ? "," : "") + SleepJob("x" + std::to_string(i), 8);
  body += "]";
  const auto t0 = Clock::now();
  if (std::string why = Post(*c, body); !why.empty()) return Fail(why);
  if (std::string why = WaitIdle(*c, 30 + 0.5 * jobs); !why.empty()) return Fail(why);
  const double wall = SecondsSince(t0);
  if (std::string why = CheckSucceeded(*c, static_cast<size_t>(jobs)); !why.empty())
    return Fail(why);
  const LatencyLog log = live.daemon().latencies();
  if (log.event_to_start.count() != static_cast<uint64_t>(jobs))
    return Fail("exit: " + std::to_string(log.event_to_start.count()) + " starts for " +
                std::to_string(jobs) + " jobs");
  Print("exit_jobs", jobs, "jobs");
  Print("exit_wall", wall, "s");
  Print("exit_gap", (wall / jobs - 0.05) * 1e3, "ms");
  // The first sample is the arrival that started the first job.
  PrintQuantiles("exit_to_decision", Samples(log.event_to_decision, 1), 1e3, "ms", true);
  PrintQuantiles("exit_to_start", Samples(log.event_to_start, 1), 1e3, "ms", true);
  PrintQuantiles("exit_cycle", Samples(log.cycle), 1e6, "us");
  return 0;
}

// Bytes the process has allocated and not freed (mallinfo2's uordblks: in use, not cached).
double HeapInUse() { return static_cast<double>(mallinfo2().uordblks); }

int Memory(int ended) {
  constexpr int kBatch = 500, kWarm = 1000;
  if (ended <= kWarm) return Fail("memory: --ended must be above " + std::to_string(kWarm));
  LiveDaemon live;
  if (Status st = live.Open("8xH100"); !st.ok()) return Fail(st.ToString());
  auto c = live.Client();
  double warm = 0, last = 0;
  int last_at = 0;
  for (int done = 0; done < ended;) {
    const int n = std::min(kBatch, ended - done);
    std::string body = "[";
    for (int i = 0; i < n; ++i)
      body += (i ? "," : "") + json{{"name", "m" + std::to_string(done + i)},
                                    {"kind", "batch"},
                                    {"gpus", 1},
                                    {"command", {"/bin/true"}}}
                                   .dump();
    body += "]";
    if (std::string why = Post(*c, body); !why.empty()) return Fail(why);
    if (std::string why = WaitIdle(*c, 120); !why.empty()) return Fail(why);
    done += n;
    if (done == kWarm) warm = HeapInUse();
    // What each one ended beyond the first 1,000 keeps, at 3,000, 10,000 and every 30,000
    // (and since the checkpoint before: bounded caches, SQLite's pages and the latency
    // samples, fill early and then stop growing; what keeps growing shows there).
    const bool checkpoint =
        done < ended && (done == 3000 || done == 10000 || (done > kWarm && done % 30000 == 0));
    if (checkpoint) {
      const double heap = HeapInUse();
      Print("memory_per_ended_workload_at_" + std::to_string(done), (heap - warm) / (done - kWarm),
            "bytes");
      if (last_at > kWarm)
        Print(
            "memory_per_ended_workload_" + std::to_string(last_at) + "_to_" + std::to_string(done),
            (heap - last) / (done - last_at), "bytes");
      last = heap;
      last_at = done;
    }
  }
  const double all = HeapInUse();
  if (last_at > kWarm)
    Print("memory_per_ended_workload_" + std::to_string(last_at) + "_to_" + std::to_string(ended),
          (all - last) / (ended - last_at), "bytes");
  Print("memory_ended", ended, "workloads");
  Print("memory_heap_after_1000", warm / 1e6, "MB");
  Print("memory_heap_after_all", all / 1e6, "MB");
  Print("memory_per_ended_workload", (all - warm) / (ended - kWarm), "bytes");
  return 0;
}

int Demand(int reports, int queued) {
  if (reports < 100) return Fail("demand: --reports must be at least 100");
  LiveDaemon live;
  if (Status st = live.Open("8xH100"); !st.ok()) return Fail(st.ToString());
  auto c = live.Client();
  // --queued: planning-only jobs that wait behind one holding 7 GPUs (the service's replicas
  // take the eighth), so that every cycle a report causes walks a queue that long.
  if (queued > 0) {
    std::string body =
        "[" + json{{"name", "holder"}, {"kind", "batch"}, {"gpus", 7}, {"work", "24h"}}.dump();
    for (int i = 0; i < queued; ++i)
      body +=
          "," +
          json{{"name", "q" + std::to_string(i)}, {"kind", "batch"}, {"gpus", 2}, {"work", "1h"}}
              .dump();
    body += "]";
    if (std::string why = Post(*c, body); !why.empty()) return Fail(why);
  }
  const json service = {{"name", "flood"},
                        {"kind", "realtime"},
                        {"gpus", 1},
                        {"slo",
                         {{"latency_ms", 500},
                          {"capacity_rps", 10},
                          {"min_replicas", 1},
                          {"max_replicas", 4},
                          {"cold_start", "2s"}}}};
  if (std::string why = Post(*c, service.dump()); !why.empty()) return Fail(why);
  const size_t tenth = static_cast<size_t>(reports) / 10;
  std::vector<double> first, last;
  double heap_at_tenth = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < reports; ++i) {
    const std::string body = json{{"rps", i % 2 ? 25.0 : 12.0}}.dump();
    const auto sent = Clock::now();
    auto r = c->Post("/v1/workloads/flood/demand", body, "application/json");
    if (!r) return Fail("POST demand: " + httplib::to_string(r.error()));
    if (r->status != 200 && r->status != 204)
      return Fail("POST demand: " + std::to_string(r->status) + " " + r->body);
    const double took = SecondsSince(sent);
    if (static_cast<size_t>(i) < tenth) first.push_back(took);
    if (static_cast<size_t>(i) >= static_cast<size_t>(reports) - tenth) last.push_back(took);
    if (static_cast<size_t>(i) + 1 == tenth) heap_at_tenth = HeapInUse();
  }
  const double wall = SecondsSince(t0);
  const double heap = HeapInUse();
  const Percentiles f = ComputePercentiles(first), l = ComputePercentiles(last);
  Print("demand_reports", reports, "reports");
  Print("demand_queued", queued, "workloads");
  Print("demand_per_s", reports / wall, "reports/s");
  Print("demand_client_first_p50_ms", f.p50 * 1e3, "ms");
  Print("demand_client_last_p50_ms", l.p50 * 1e3, "ms");
  Print("demand_client_last_over_first_p50", l.p50 / f.p50, "x");
  Print("demand_client_last_over_first_mean", l.mean / f.mean, "x");
  Print("demand_per_report", (heap - heap_at_tenth) / (reports - tenth), "bytes");
  auto store = Store::OpenReadOnly(live.data_dir());
  if (!store.ok()) return Fail(store.status().ToString());
  auto rows = (*store)->DemandOf(1, 0);
  if (!rows.ok()) return Fail(rows.status().ToString());
  Print("demand_stored_rows", static_cast<double>(rows->size()), "rows");
  return 0;
}

int CpuCount() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

}  // namespace
}  // namespace airtime

int main(int argc, char** argv) {
  std::string only;
  int submissions = 10000, jobs = 200, ended = 4000, reports = 20000, queued = 0;
  bool ok = true;
  for (int i = 1; i < argc && ok; ++i) {
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--submissions") && i + 1 < argc)
      submissions = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--jobs") && i + 1 < argc)
      jobs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--ended") && i + 1 < argc)
      ended = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--reports") && i + 1 < argc)
      reports = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--queued") && i + 1 < argc)
      queued = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--keep-alive"))
      airtime::g_keep_alive = true;
    else
      ok = false;
  }
  if (!ok || submissions <= 0 || jobs <= 0 || ended <= 0 || reports <= 0 || queued < 0 ||
      (!only.empty() && only != "submissions" && only != "arrival" && only != "exit" &&
       only != "memory" && only != "demand")) {
    std::fprintf(stderr,
                 "usage: airtime_server_bench [--only submissions|arrival|exit|memory|demand] "
                 "[--submissions N] [--jobs N] [--ended N] [--reports N] [--queued N] "
                 "[--keep-alive]\n");
    return 2;
  }
  airtime::Print("nproc", airtime::CpuCount(), "cpus");
  int rc = 0;
  if (only.empty() || only == "submissions") rc |= airtime::Submissions(submissions);
  if (only.empty() || only == "arrival") rc |= airtime::Arrival(jobs);
  if (only.empty() || only == "exit") rc |= airtime::Exit(jobs);
  if (only.empty() || only == "memory") rc |= airtime::Memory(ended);
  if (only.empty() || only == "demand") rc |= airtime::Demand(reports, queued);
  return rc;
}
