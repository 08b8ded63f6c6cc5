// End-to-end tests of `airtime server --backend slurm`: the real daemon binary against a real
// Slurm 22.05 that each test starts with scripts/slurm-lab.sh (and stops): placement on the
// node and GPUs airtime chose, how often Slurm's own GPU choice differed, preemption by
// requeue (the same Slurm job id), an airtime restart mid-run (adopted, nothing run twice),
// a node taken down mid-job (noticed within seconds, run again elsewhere, nothing twice),
// a foreign job (its own ledger line), a slurmctld restart, a job whose run the store lost
// (a refused start, then cancelled when the loss is accepted), and fractions of a GPU as
// Slurm's gres/shard (Slurm's GPU adopted, never shared with a whole-GPU job).
//
// They need root (slurmd runs jobs as their users) and skip, saying why, elsewhere. Each
// test prints its measured figures on stderr ("figure: ...").
//
// Run as `slurm_backend_e2e_test --airtime=PATH [gtest flags]`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "airtime/slurm/rest_client.h"
#include "airtime/slurm/slurm_actuator.h"
#include "e2e_util.h"
#include "server_process.h"
#include "slurm_lab.h"

namespace {

namespace fs = std::filesystem;
using airtime::e2e::MsSince;
using airtime::e2e::ReadFile;
using airtime::e2e::SlurmLab;
using airtime::e2e::WaitFor;
using airtime::slurm::SlurmJob;
using json = nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string g_airtime;  // --airtime=PATH

// `airtime server --backend slurm` on the lab, its data in `data`; SIGKILLed at the end
// unless stopped.
class Airtime {
 public:
  Airtime(std::string data, const SlurmLab& lab)
      : data_(std::move(data)), lab_(lab), process_(data_) {}

  void Start(std::vector<std::string> extra = {}) {
    fs::create_directories(data_);
    process_.Start(Args(std::move(extra)), Env());
  }
  // Runs the server expecting it to refuse to start: its exit status (-1: it was still
  // running after 20 s, and was killed) and its output.
  std::pair<int, std::string> StartRefused(std::vector<std::string> extra = {}) {
    return airtime::e2e::RunUntilExit(Args(std::move(extra)), Env(), data_ + ".refused.log", 20s);
  }
  void Kill() { process_.Kill(); }
  const std::string& data() const { return data_; }
  std::string Log() const { return process_.Log(); }
  httplib::Client Client() const { return process_.Client(); }

  int Submit(const std::string& yaml) {
    auto r = Client().Post("/v1/workloads", yaml, "application/yaml");
    if (r && r->status != 201) std::cerr << "submit: " << r->status << " " << r->body << "\n";
    return r ? r->status : -1;
  }
  int Cancel(const std::string& name) {
    auto r = Client().Delete("/v1/workloads/" + name);
    return r ? r->status : -1;
  }
  json Get(const std::string& path) {
    auto r = Client().Get(path);
    if (!r || r->status != 200) return json();
    return json::parse(r->body, nullptr, false);
  }
  json Workload(const std::string& name) { return Get("/v1/workloads/" + name); }
  std::string State(const std::string& name) {
    json w = Workload(name);
    return w.is_object() && w.contains("state") ? w["state"].get<std::string>() : "";
  }
  bool WaitState(const std::string& name, const std::string& state, std::chrono::seconds limit) {
    return WaitFor([&] { return State(name) == state; }, limit);
  }
  std::string Metrics() {
    auto r = Client().Get("/metrics");
    return r ? r->body : "";
  }
  double Metric(const std::string& line_prefix) {
    std::istringstream in(Metrics());
    for (std::string line; std::getline(in, line);)
      if (line.rfind(line_prefix + " ", 0) == 0) return std::stod(line.substr(line_prefix.size()));
    return -1;
  }

 private:
  std::vector<std::string> Args(std::vector<std::string> extra) const {
    std::vector<std::string> args = {g_airtime,  "server",      "--data",    data_,
                                     "--listen", "127.0.0.1:0", "--backend", "slurm"};
    // Slurm polled every 200 ms unless the test says otherwise.
    if (std::find(extra.begin(), extra.end(), "--slurm-poll-ms") == extra.end())
      args.insert(args.end(), {"--slurm-poll-ms", "200"});
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  std::map<std::string, std::string> Env() const {
    std::map<std::string, std::string> env;
    for (const char* k : {"SLURMRESTD_URL", "SLURM_REST_USER", "SLURM_REST_TOKEN", "SLURM_CONF"})
      env[k] = lab_.env(k);
    return env;
  }

  std::string data_;
  const SlurmLab& lab_;
  airtime::e2e::ServerProcess process_;
};

class SlurmBackendE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = airtime::e2e::CannotStartLab();
    if (!why.empty()) GTEST_SKIP() << "Slurm lab: " << why;
    t0_ = std::chrono::steady_clock::now();
  }
  // Starts the lab and the daemon on it.
  void Up(int nodes = 4, int gpus = 8, std::vector<std::string> extra = {}) {
    ASSERT_TRUE(lab_.Start(nodes, gpus));
    airtime::slurm::SlurmConnectOptions o;
    o.rest.url = lab_.env("SLURMRESTD_URL");
    o.rest.user = lab_.env("SLURM_REST_USER");
    o.rest.token = lab_.env("SLURM_REST_TOKEN");
    o.scontrol.slurm_conf = lab_.env("SLURM_CONF");
    auto client = airtime::slurm::ConnectSlurm(o);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    slurm_ = std::move(*client);
    server_ = std::make_unique<Airtime>(lab_.dir() + "/airtime", lab_);
    ASSERT_NO_FATAL_FAILURE(server_->Start(extra));
  }
  void TearDown() override {
    if (server_ && HasFailure()) std::cerr << "---- airtime server log\n" << server_->Log();
    server_.reset();  // SIGKILL; Slurm's jobs go with the lab
    slurm_.reset();
    lab_.Stop(HasFailure());
    std::cerr << "figure: test runtime " << MsSince(t0_) << " ms\n";
  }

  std::vector<SlurmJob> Jobs() {
    auto jobs = slurm_->Jobs();
    EXPECT_TRUE(jobs.ok()) << jobs.status().ToString();
    return jobs.ok() ? *jobs : std::vector<SlurmJob>{};
  }
  // Slurm's jobs of workload `name` (airtime names them airtime.NAME.rRUN).
  std::vector<SlurmJob> JobsOf(const std::string& name) {
    std::vector<SlurmJob> out;
    for (const SlurmJob& j : Jobs())
      if (j.name.rfind("airtime." + name + ".r", 0) == 0) out.push_back(j);
    return out;
  }
  // Waits until workload `name`'s first Slurm job is in `state`; whether it came to be.
  bool WaitJobState(const std::string& name, const std::string& state,
                    std::chrono::seconds limit = 20s) {
    return WaitFor(
        [&] {
          auto j = JobsOf(name);
          return !j.empty() && j[0].state == state;
        },
        limit);
  }
  // jobcomp.txt's lines for job `id`: one per end of a run of it (a requeue ends one too).
  std::vector<std::string> JobcompLines(int64_t id) {
    std::vector<std::string> out;
    std::istringstream in(ReadFile(lab_.dir() + "/log/jobcomp.txt"));
    for (std::string line; std::getline(in, line);)
      if (line.find("JobId=" + std::to_string(id) + " ") != std::string::npos) out.push_back(line);
    return out;
  }
  // The lines of every job of this lab whose name starts with `prefix`.
  int JobcompRunsNamed(const std::string& prefix) {
    int n = 0;
    std::istringstream in(ReadFile(lab_.dir() + "/log/jobcomp.txt"));
    for (std::string line; std::getline(in, line);)
      if (line.find("Name=" + prefix) != std::string::npos) ++n;
    return n;
  }

  SlurmLab lab_;
  std::unique_ptr<airtime::slurm::SlurmClient> slurm_;
  std::unique_ptr<Airtime> server_;
  std::chrono::steady_clock::time_point t0_;
};

// A batch job of `gpus` GPUs of `type` that prints where it runs, then sleeps `seconds`.
std::string Job(const std::string& name, int gpus, const std::string& type, int seconds,
                const std::string& extra = "") {
  return "name: " + name + "\nkind: batch\ngpus: " + std::to_string(gpus) + "\ngpu_type: " + type +
         "\nduration: " + std::to_string(seconds) + "s\n" + extra +
         "command: [/bin/sh, -c, 'echo \"CVD=$CUDA_VISIBLE_DEVICES host=$SLURMD_NODENAME "
         "mps=$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE mem=$CUDA_MPS_PINNED_DEVICE_MEM_LIMIT\"; "
         "sleep " +
         std::to_string(seconds) + "']\n";
}

// "slurm:n3:5" -> {"n3", 5}
std::pair<std::string, int> SplitGpu(const std::string& id) {
  const size_t a = id.find(':'), b = id.rfind(':');
  return {id.substr(a + 1, b - a - 1), std::stoi(id.substr(b + 1))};
}

// The job runs on the node and GPUs the run records (airtime's choice, or Slurm's adopted):
// its own output says so.
void ExpectRanWhereRecorded(const json& w) {
  ASSERT_TRUE(w.contains("runs") && !w["runs"].empty()) << w.dump();
  const json& run = w["runs"].back();
  std::set<std::string> nodes;
  std::vector<int> idx;
  for (const json& g : run["gpus"]) {
    auto [node, i] = SplitGpu(g.get<std::string>());
    nodes.insert(node);
    idx.push_back(i);
  }
  ASSERT_EQ(nodes.size(), 1u) << run.dump();
  std::sort(idx.begin(), idx.end());
  std::string cvd;
  for (int i : idx) cvd += (cvd.empty() ? "" : ",") + std::to_string(i);
  const std::string out = run["log_dir"].get<std::string>() + "/stdout.log";
  ASSERT_TRUE(WaitFor([&] { return ReadFile(out).find("CVD=") != std::string::npos; }, 10s)) << out;
  EXPECT_THAT(ReadFile(out), HasSubstr("CVD=" + cvd + " host=" + *nodes.begin())) << run.dump();
}

// Jobs run on the node and GPUs airtime chose. Slurm picks a job's GPU indices itself (the
// lowest free ones on the node ReqNodeList gave it): where it picks others than the engine,
// the engine's allocation moves onto them. They differ when a GPU freed in Slurm before
// airtime saw it: here a job ends and the next one arrives before airtime's next poll
// (2 s apart on purpose), so the engine still counts the ended job's GPUs as held.
TEST_F(SlurmBackendE2E, PlacesOnTheChosenNodeAndGpusAndAdoptsSlurmsIndices) {
  ASSERT_NO_FATAL_FAILURE(Up(4, 8, {"--slurm-poll-ms", "2000"}));
  // The cluster is Slurm's: 32 GPUs, 16 H100 on n1-n2, 16 A100 on n3-n4.
  json gpus = server_->Get("/v1/gpus");
  ASSERT_EQ(gpus["gpus"].size(), 32u) << gpus.dump();
  EXPECT_EQ(gpus["gpus"][0]["uuid"], "slurm:n1:0");
  EXPECT_EQ(gpus["gpus"][16]["type"], "A100-40GB");
  EXPECT_EQ(gpus["backend"]["kind"], "slurm");
  const auto t_submit = std::chrono::steady_clock::now();
  ASSERT_EQ(server_->Submit(Job("a1", 3, "H100", 1)), 201);
  ASSERT_EQ(server_->Submit(Job("a2", 2, "H100", 60)), 201);
  ASSERT_EQ(server_->Submit(Job("a3", 1, "A100-40GB", 60)), 201);
  ASSERT_TRUE(WaitJobState("a2", "RUNNING"));
  std::cerr << "figure: submission to RUNNING in Slurm (3 jobs) " << MsSince(t_submit) << " ms\n";
  ASSERT_TRUE(server_->WaitState("a1", "succeeded", 30s)) << server_->Workload("a1").dump(2);
  // n2 taken whole, so that H100 work goes to n1.
  ASSERT_EQ(server_->Submit(Job("n2full", 8, "H100", 60)), 201);
  ASSERT_TRUE(server_->WaitState("n2full", "running", 20s));
  std::vector<std::string> names = {"a2", "a3", "n2full"};
  // Whether Slurm then picks other GPUs than the engine depends on its timing too (a GPU
  // still COMPLETING in slurmd is not given again), so rounds go on until one differed, at
  // most 6 (each y is 2 H100 of n1's 6 left by a2; the first three fill n1).
  const auto moved_now = [&] {
    return server_->Metric("airtime_backend_placements_total{outcome=\"moved\"}");
  };
  int rounds = 0;
  for (int round = 1; round <= 6 && (round <= 3 || moved_now() < 1); ++round) {
    const std::string x = "x" + std::to_string(round), y = "y" + std::to_string(round);
    if (round > 3) {
      // n1 is full: the oldest y makes room. Its stop is a signal, then a cancel when the
      // grace is over if the signal did not end it: Slurm then calls it CANCELLED, or
      // FAILED when the signal ended it (as it does under a loaded sanitizer build).
      const std::string old = "y" + std::to_string(round - 3);
      ASSERT_EQ(server_->Cancel(old), 200);
      ASSERT_TRUE(WaitFor(
          [&] {
            auto j = JobsOf(old);
            return !j.empty() && airtime::slurm::FinalJobState(j[0].state);
          },
          45s))
          << server_->Workload(old).dump(2);
      std::erase(names, old);
    }
    ASSERT_EQ(server_->Submit(Job(x, 2, "H100", 1)), 201);
    // x ends in Slurm; y comes at once, before airtime's next poll (most likely).
    ASSERT_TRUE(WaitJobState(x, "COMPLETED", 30s)) << server_->Workload(x).dump(2);
    ASSERT_EQ(server_->Submit(Job(y, 2, "H100", 60, "preempt_grace: 2s\n")), 201);
    ASSERT_TRUE(server_->WaitState(y, "running", 30s)) << server_->Workload(y).dump(2);
    names.push_back(y);
    rounds = round;
    std::this_thread::sleep_for(2500ms);  // a poll: y's start reported
  }
  std::this_thread::sleep_for(2500ms);  // two polls since the last start: every start reported
  // Each job's own output: the node and CUDA_VISIBLE_DEVICES that its run records, so the
  // engine holds the GPUs Slurm gave it.
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    json w = server_->Workload(name);
    ASSERT_NO_FATAL_FAILURE(ExpectRanWhereRecorded(w));
    auto jobs = JobsOf(name);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(w["runs"].back()["slurm_job"], jobs[0].id);
    EXPECT_EQ(jobs[0].comment.rfind("airtime: ", 0), 0u) << jobs[0].comment;
    // The comment says what airtime decided: the run, the policy and the node.
    const json& run = w["runs"].back();
    const std::string node = SplitGpu(run["gpus"][0].get<std::string>()).first;
    EXPECT_THAT(jobs[0].comment, HasSubstr(", run " + std::to_string(run["id"].get<int64_t>()) +
                                           ": placed by policy "));
    EXPECT_THAT(jobs[0].comment, HasSubstr(" on " + node + " (")) << jobs[0].comment;
  }
  const double as_decided =
      server_->Metric("airtime_backend_placements_total{outcome=\"as_decided\"}");
  const double moved = server_->Metric("airtime_backend_placements_total{outcome=\"moved\"}");
  const double unmoved = server_->Metric("airtime_backend_placements_total{outcome=\"unmoved\"}");
  std::cerr << "figure: Slurm's GPU choice: " << as_decided << " as airtime decided, " << moved
            << " moved onto Slurm's, " << unmoved << " not movable\n";
  // Every job that was RUNNING at a poll: the long ones (a2, a3, n2full, y1..y3), and the
  // 1-second ones (a1, x1..x3) when a poll fell within their run.
  EXPECT_GE(as_decided + moved + unmoved, 3 + rounds);
  EXPECT_LE(as_decided + moved + unmoved, 4 + 2 * rounds);
  EXPECT_EQ(unmoved, 0);
  EXPECT_GE(moved, 1) << "Slurm chose the GPUs airtime did in all " << rounds << " rounds";
  // The engine holds each running job's GPUs, no GPU twice: the ones Slurm's jobs hold.
  json now = server_->Get("/v1/gpus");
  std::set<std::string> held_by_engine, held_in_slurm;
  for (const json& g : now["gpus"]) {
    EXPECT_LE(g["allocations"].size(), 1u) << g.dump();
    if (!g["allocations"].empty()) held_by_engine.insert(g["uuid"].get<std::string>());
  }
  for (const SlurmJob& j : Jobs())
    if (j.state == "RUNNING")
      for (const auto& ng : j.gpus)
        for (int i : ng.indices) held_in_slurm.insert("slurm:" + ng.node + ":" + std::to_string(i));
  EXPECT_EQ(held_by_engine, held_in_slurm);
  EXPECT_THAT(ReadFile(lab_.dir() + "/airtime.server.log"),
              ::testing::Not(HasSubstr("placed run")));
}

// Fractions of a GPU run as Slurm's gres/shard (the lab: 1000 shards per GPU, one per
// milli-GPU). Slurm takes a job's shards from the first GPU of the node with enough free
// (lowest index), the engine from the tightest share: where they differ the engine adopts
// Slurm's GPU. Whole GPUs never share a GPU with shards, in Slurm and in the engine alike.
// n1's 4 H100s, each step waited for in Slurm before the next:
//   h1, h2 (0.5 each)  -> GPU 0, shared
//   w (1 whole GPU)    -> GPU 1, past the sharded one
//   c (0.2), d (0.9)   -> GPUs 2 and 3 (0.9 does not fit beside 0.2)
//   e (0.1)            -> the engine: GPU 3 (tightest: 0.9 + 0.1); Slurm: GPU 2 (the first
//                         with room). Adopted: the engine moves e to GPU 2.
//   f (1 whole GPU)    -> no whole H100 free while they run: queued, no Slurm job
TEST_F(SlurmBackendE2E, FractionsShareOneGpuBySlurmsShardsAndTheEngineAdoptsIt) {
  ASSERT_NO_FATAL_FAILURE(Up(2, 4));  // n1: 4 x h100, n2: 4 x a100; 1000 shards per GPU
  auto frac = [](const std::string& name, const std::string& share, int seconds) {
    return Job(name, 1, "H100", seconds, "gpu_fraction: " + share + "\n");
  };
  // Submits `yaml` and waits until its Slurm job runs and airtime has seen it placed (a poll
  // after it ran: the next step's placement must know where it is).
  auto run = [&](const std::string& name, const std::string& yaml) {
    ASSERT_EQ(server_->Submit(yaml), 201);
    ASSERT_TRUE(WaitJobState(name, "RUNNING", 30s)) << server_->Workload(name).dump(2);
    std::this_thread::sleep_for(700ms);
  };
  // h1 states its GPU memory: its MPS memory limit goes with it.
  ASSERT_NO_FATAL_FAILURE(run("h1", frac("h1", "0.5\nmemory_gb: 30", 40)));
  ASSERT_NO_FATAL_FAILURE(run("h2", frac("h2", "0.5", 40)));
  ASSERT_NO_FATAL_FAILURE(run("w", Job("w", 1, "H100", 40)));
  ASSERT_NO_FATAL_FAILURE(run("c", frac("c", "0.2", 40)));
  ASSERT_NO_FATAL_FAILURE(run("d", frac("d", "0.9", 40)));
  ASSERT_NO_FATAL_FAILURE(run("e", frac("e", "0.1", 40)));
  std::this_thread::sleep_for(1s);  // every start reported
  // Slurm's view: the shards and the GPU each came from.
  std::map<std::string, int> slurm_gpu;  // workload -> n1's GPU index
  std::map<int, int64_t> shards_on;      // GPU index -> shards of airtime's jobs there
  for (const std::string name : {"h1", "h2", "c", "d", "e"}) {
    auto jobs = JobsOf(name);
    ASSERT_EQ(jobs.size(), 1u) << name;
    ASSERT_EQ(jobs[0].gpus.size(), 1u) << name;
    const auto& ng = jobs[0].gpus[0];
    EXPECT_EQ(ng.node, "n1") << name;
    ASSERT_EQ(ng.indices.size(), 1u) << name;
    slurm_gpu[name] = ng.indices[0];
    shards_on[ng.indices[0]] += ng.shards;
  }
  EXPECT_EQ(JobsOf("h1")[0].gpus[0].shards, 500);
  EXPECT_EQ(JobsOf("c")[0].gpus[0].shards, 200);
  EXPECT_EQ(slurm_gpu["h1"], slurm_gpu["h2"]) << "two halves share one GPU";
  for (const auto& [gpu, shards] : shards_on) EXPECT_LE(shards, 1000) << "GPU " << gpu;
  // The whole GPU is none of the sharded ones.
  auto whole = JobsOf("w");
  ASSERT_EQ(whole.size(), 1u);
  ASSERT_EQ(whole[0].gpus.size(), 1u);
  for (int i : whole[0].gpus[0].indices)
    EXPECT_EQ(shards_on.count(i), 0u) << "whole GPU " << i << " also holds shards";
  // airtime's view: each run records the GPU Slurm gave it, and ran there (CVD).
  int differed = 0;
  for (const std::string name : {"h1", "h2", "w", "c", "d", "e"}) {
    SCOPED_TRACE(name);
    json wl = server_->Workload(name);
    ASSERT_NO_FATAL_FAILURE(ExpectRanWhereRecorded(wl));
    if (slurm_gpu.count(name)) {
      EXPECT_EQ(wl["runs"].back()["gpus"][0], "slurm:n1:" + std::to_string(slurm_gpu[name]));
    }
  }
  // Each fraction's MPS limits came with its job, the memory one for the one GPU it sees
  // (enforced where the node runs an MPS control daemon; the lab's do not); a whole GPU's job
  // has none.
  const auto out_of = [&](const std::string& name) {
    return ReadFile(server_->Workload(name)["runs"].back()["log_dir"].get<std::string>() +
                    "/stdout.log");
  };
  EXPECT_THAT(out_of("h1"), HasSubstr("mps=50 mem=0=30720MB\n"));
  EXPECT_THAT(out_of("c"), HasSubstr("mps=20 mem=\n"));
  EXPECT_THAT(out_of("w"), HasSubstr("mps= mem=\n"));
  const double as_decided =
      server_->Metric("airtime_backend_placements_total{outcome=\"as_decided\"}");
  const double moved = server_->Metric("airtime_backend_placements_total{outcome=\"moved\"}");
  const double unmoved = server_->Metric("airtime_backend_placements_total{outcome=\"unmoved\"}");
  differed = static_cast<int>(moved + unmoved);
  std::cerr << "figure: fractions by gres/shard: 6 jobs (5 fractions), " << as_decided
            << " as airtime decided, " << moved << " moved onto Slurm's GPU, " << unmoved
            << " not movable; e on GPU " << slurm_gpu["e"] << " beside c (GPU " << slurm_gpu["c"]
            << ")\n";
  EXPECT_EQ(as_decided + moved + unmoved, 6);
  EXPECT_EQ(unmoved, 0);
  EXPECT_EQ(differed, 1) << "only e: Slurm's first fit against the engine's tightest share";
  EXPECT_EQ(slurm_gpu["e"], slurm_gpu["c"]);
  // The engine's ledger per real GPU: each GPU's allocations are whole or shares, never both,
  // and the shares add up to at most one GPU.
  json gpus = server_->Get("/v1/gpus");
  int shared_gpus = 0;
  for (const json& g : gpus["gpus"]) {
    if (g["allocations"].size() > 1) ++shared_gpus;
  }
  EXPECT_EQ(shared_gpus, 2) << gpus.dump(2);  // h1+h2, c+e
  // f wants a whole H100: none is free (GPU 0, 2, 3 shared, 1 whole): it waits, in airtime,
  // with no Slurm job.
  ASSERT_EQ(server_->Submit(Job("f", 1, "H100", 1)), 201);
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(server_->State("f"), "queued") << server_->Workload("f").dump(2);
  EXPECT_TRUE(JobsOf("f").empty());
  // All end, f runs when a whole GPU is free again; each job ran once.
  ASSERT_TRUE(server_->WaitState("f", "succeeded", 90s)) << server_->Workload("f").dump(2);
  for (const std::string name : {"h1", "h2", "w", "c", "d", "e", "f"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(server_->WaitState(name, "succeeded", 60s)) << server_->Workload(name).dump(2);
    auto jobs = JobsOf(name);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(JobcompLines(jobs[0].id).size(), 1u) << "ran more than once";
    EXPECT_EQ(server_->Workload(name)["runs"].size(), 1u);
  }
  EXPECT_THAT(ReadFile(lab_.dir() + "/airtime.server.log"),
              ::testing::Not(HasSubstr("placed run")));
}

// How often Slurm puts a fraction's shards on another GPU than the engine chose, in a
// mixed stream (fixed seed): 24 workloads on n1's 4 H100s, one every 0.6 s, of 0.1-0.7 of a
// GPU (every fifth a whole GPU), running 2-9 s, so that GPUs fill, empty and refill while
// airtime polls every 200 ms. Every one ends succeeded, ran once, and where it ran (its
// CUDA_VISIBLE_DEVICES) is the GPU its run records.
TEST_F(SlurmBackendE2E, AMixedStreamOfFractionsRunsWhereSlurmPutsThem) {
  ASSERT_NO_FATAL_FAILURE(Up(2, 4));
  std::mt19937 rng(21);
  std::vector<std::string> names;
  int fractions = 0;
  for (int k = 0; k < 24; ++k) {
    const std::string name = "m" + std::to_string(k);
    const int seconds = 2 + static_cast<int>(rng() % 8);
    std::string extra;
    if (k % 5 != 4) {
      extra = "gpu_fraction: 0." + std::to_string(1 + rng() % 7) + "\n";
      ++fractions;
    }
    ASSERT_EQ(server_->Submit(Job(name, 1, "H100", seconds, extra)), 201);
    names.push_back(name);
    std::this_thread::sleep_for(600ms);
  }
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(server_->WaitState(name, "succeeded", 120s)) << server_->Workload(name).dump(2);
    json wl = server_->Workload(name);
    ASSERT_NO_FATAL_FAILURE(ExpectRanWhereRecorded(wl));
    EXPECT_EQ(wl["runs"].size(), 1u);
    auto jobs = JobsOf(name);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(JobcompLines(jobs[0].id).size(), 1u) << "ran more than once";
  }
  const double as_decided =
      server_->Metric("airtime_backend_placements_total{outcome=\"as_decided\"}");
  const double moved = server_->Metric("airtime_backend_placements_total{outcome=\"moved\"}");
  const double unmoved = server_->Metric("airtime_backend_placements_total{outcome=\"unmoved\"}");
  std::cerr << "figure: a mixed stream of " << names.size() << " workloads (" << fractions
            << " fractions) on 4 GPUs: " << as_decided << " placed as airtime decided, " << moved
            << " moved onto Slurm's GPU, " << unmoved << " not movable\n";
  // Every run was seen running and reported once.
  EXPECT_EQ(as_decided + moved + unmoved, static_cast<double>(names.size()));
}

TEST_F(SlurmBackendE2E, PreemptionRequeuesTheSlurmJobAndRestartsTheSameJob) {
  ASSERT_NO_FATAL_FAILURE(Up(2, 4));  // n1: 4 x h100, n2: 4 x a100
  ASSERT_EQ(
      server_->Submit("name: train\nkind: training\ngpus: 4\ngpu_type: H100\n"
                      "preemptible: true\npreempt_grace: 2s\nwork: 1h\n"
                      "checkpoint: {interval: 1m, restart_cost: 1s}\n"
                      "value: {on_completion: 1}\n"
                      "command: [/bin/sh, -c, 'trap \"echo checkpointed; exit 0\" TERM; "
                      "echo started $SLURM_RESTART_COUNT; while true; do sleep 0.2; done']\n"),
      201);
  ASSERT_TRUE(server_->WaitState("train", "running", 20s));
  ASSERT_TRUE(WaitJobState("train", "RUNNING"));
  const int64_t job = JobsOf("train")[0].id;
  std::this_thread::sleep_for(1s);  // its trap is in place
  const auto t_urgent = std::chrono::steady_clock::now();
  ASSERT_EQ(server_->Submit("name: urgent\nkind: batch\ngpus: 4\ngpu_type: H100\npriority: 100\n"
                            "duration: 5s\ndeadline_after: 2m\n"
                            "value: {on_completion: 10000, decay_after_deadline: 0}\n"
                            "command: [/bin/sh, -c, 'echo urgent; sleep 5']\n"),
            201);
  // The engine decides at once (the workload reads "running"); Slurm runs urgent once train's
  // job has left n1's GPUs: it got SIGTERM, checkpointed and exited within its grace.
  ASSERT_TRUE(WaitJobState("urgent", "RUNNING", 30s))
      << server_->Workload("urgent").dump(2) << server_->Workload("train").dump(2);
  std::cerr << "figure: high-value job submitted to RUNNING in Slurm (preemption included) "
            << MsSince(t_urgent) << " ms\n";
  EXPECT_THAT(
      ReadFile(server_->Workload("train")["runs"][0]["log_dir"].get<std::string>() + "/stdout.log"),
      HasSubstr("checkpointed"));
  // train's job was requeued and held, not cancelled: the same id, pending.
  auto jobs = JobsOf("train");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, job);
  EXPECT_EQ(jobs[0].state, "PENDING");
  EXPECT_EQ(server_->Workload("train")["preemptions"], 1);
  // When urgent is done, train runs again: the same Slurm job, restarted.
  ASSERT_TRUE(server_->WaitState("urgent", "succeeded", 30s));
  ASSERT_TRUE(WaitFor(
      [&] {
        auto j = JobsOf("train");
        return j.size() == 1 && j[0].state == "RUNNING" && j[0].restarts >= 1;
      },
      30s))
      << server_->Workload("train").dump(2);
  EXPECT_EQ(JobsOf("train")[0].id, job);
  json w = server_->Workload("train");
  ASSERT_GE(w["runs"].size(), 2u);
  EXPECT_EQ(w["runs"][0]["slurm_job"], job);
  EXPECT_EQ(w["runs"][1]["slurm_job"], job);
  // jobcomp: the first run ended by the requeue, the urgent job once.
  EXPECT_EQ(JobcompRunsNamed("airtime.urgent."), 1);
}

TEST_F(SlurmBackendE2E, ARestartMidRunAdoptsTheJobAndNothingRunsTwice) {
  ASSERT_NO_FATAL_FAILURE(Up());
  ASSERT_EQ(server_->Submit(Job("long", 2, "A100-40GB", 8)), 201);
  ASSERT_TRUE(WaitJobState("long", "RUNNING"));
  const int64_t job = JobsOf("long")[0].id;
  server_->Kill();  // kill -9 mid-run
  const auto t_restart = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(server_->Start());
  std::cerr << "figure: restart to serving " << MsSince(t_restart) << " ms\n";
  EXPECT_THAT(server_->Log(), HasSubstr("1 run(s) were live, 1 adopted"));
  EXPECT_EQ(server_->State("long"), "running");
  ASSERT_TRUE(server_->WaitState("long", "succeeded", 30s)) << server_->Workload("long").dump(2);
  json w = server_->Workload("long");
  EXPECT_EQ(w["runs"].size(), 1u);
  EXPECT_EQ(w["runs"][0]["slurm_job"], job);
  // One Slurm job for it, which ran once.
  EXPECT_EQ(JobsOf("long").size(), 1u);
  ASSERT_TRUE(WaitFor([&] { return JobcompLines(job).size() == 1; }, 10s));
  EXPECT_THAT(JobcompLines(job)[0], HasSubstr("JobState=COMPLETED"));
  EXPECT_EQ(JobcompRunsNamed("airtime.long."), 1);
}

// Run ids are reserved a block at a time, so a run inside a block writes no marks: a crash
// of the machine can take its row (and its run directory) while Slurm runs its job on. The
// next start finds the job by its name and refuses, naming it; accepted, the loss cancels
// the job and the workload runs again, once.
TEST_F(SlurmBackendE2E, AJobWhoseRunTheStoreLostStopsTheStartUntilTheLossIsAccepted) {
  ASSERT_NO_FATAL_FAILURE(Up());
  // The first run of a block is named in the marks; the next one is not.
  ASSERT_EQ(server_->Submit(Job("first", 1, "A100-40GB", 1)), 201);
  ASSERT_TRUE(server_->WaitState("first", "succeeded", 30s));
  ASSERT_EQ(server_->Submit(Job("lost", 2, "A100-40GB", 30)), 201);
  ASSERT_TRUE(WaitJobState("lost", "RUNNING"));
  const SlurmJob job = JobsOf("lost")[0];
  const json lost_run = server_->Workload("lost")["runs"][0];
  const int64_t run = lost_run["id"];
  // Slurm says RUNNING once it allocated the job, a moment before slurmd opens the job's
  // log in the run directory. Removing that directory first fails the job (seen on a loaded
  // machine: the job ended with signal 53 and the start found nothing to refuse), so the
  // crash comes once the command has printed its first line.
  const std::string log = lost_run["log_dir"].get<std::string>() + "/stdout.log";
  ASSERT_TRUE(WaitFor([&] { return ReadFile(log).find("CVD=") != std::string::npos; }, 20s))
      << "the job's command never wrote " << log;
  server_->Kill();
  // What the crash took: the run's row and its directory (the marks do not name the run).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((server_->data() + "/airtime.db").c_str(), &db), SQLITE_OK);
  const std::string del = "DELETE FROM runs WHERE id = " + std::to_string(run);
  EXPECT_EQ(sqlite3_exec(db, del.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  EXPECT_EQ(sqlite3_changes(db), 1);
  sqlite3_close(db);
  fs::remove_all(server_->data() + "/runs/" + std::to_string(run));

  auto [code, out] = server_->StartRefused();
  EXPECT_GT(code, 0) << "started beside a job whose run it lost:\n" << out;
  EXPECT_THAT(out,
              HasSubstr("has no record of 1 run(s) the backend still has under this "
                        "daemon's name: run " +
                        std::to_string(run) + " of 'lost' as slurm job " + std::to_string(job.id) +
                        " 'airtime.lost.r" + std::to_string(run) + "' (RUNNING)"));
  EXPECT_THAT(out, HasSubstr("--accept-store-loss"));
  const std::vector<SlurmJob> left = JobsOf("lost");  // refused, and left alone
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].state, "RUNNING");

  ASSERT_NO_FATAL_FAILURE(server_->Start({"--accept-store-loss"}));
  EXPECT_THAT(server_->Log(), HasSubstr("1 of 1 run(s) the store had lost ended in the backend"));
  ASSERT_TRUE(server_->WaitState("lost", "running", 30s)) << server_->Workload("lost").dump(2);
  json w = server_->Workload("lost");
  ASSERT_EQ(w["runs"].size(), 1u);
  EXPECT_GT(w["runs"][0]["id"].get<int64_t>(), run);  // above the lost run's block
  EXPECT_NE(w["runs"][0]["slurm_job"], job.id);
  // The lost job was cancelled before the new one ran: never both at once.
  ASSERT_TRUE(WaitFor([&] { return !JobcompLines(job.id).empty(); }, 10s));
  EXPECT_THAT(JobcompLines(job.id)[0], HasSubstr("JobState=CANCELLED"));
  for (const SlurmJob& j : JobsOf("lost"))
    EXPECT_TRUE(j.id != job.id || j.state != "RUNNING") << j.id << " " << j.state;
}

TEST_F(SlurmBackendE2E, ANodeTakenDownMidJobIsNoticedAndTheJobRunsAgainElsewhere) {
  ASSERT_NO_FATAL_FAILURE(Up());
  ASSERT_EQ(server_->Submit(Job("victim", 2, "H100", 6)), 201);
  ASSERT_TRUE(WaitJobState("victim", "RUNNING"));
  const SlurmJob first = JobsOf("victim")[0];
  ASSERT_EQ(first.nodes.size(), 1u);
  const std::string node = first.nodes[0];
  const auto t_down = std::chrono::steady_clock::now();
  EXPECT_EQ(lab_.Run("scontrol", "update NodeName=" + node + " State=DOWN Reason=e2e"), "");
  // Kept out: the lab's ReturnToService=2 would take the node back as soon as its slurmd
  // (still alive) registers again.
  EXPECT_EQ(lab_.Run("scontrol", "update NodeName=" + node + " State=DRAIN Reason=e2e"), "");
  // airtime notices: the run ends, the workload goes back to the queue and runs again on the
  // other H100 node.
  ASSERT_TRUE(WaitFor(
      [&] {
        json w = server_->Workload("victim");
        return w["runs"].size() >= 1 && !w["runs"][0]["ended_at"].is_null();
      },
      20s))
      << server_->Workload("victim").dump(2);
  std::cerr << "figure: node down to airtime noticing the run's end " << MsSince(t_down) << " ms\n";
  ASSERT_TRUE(WaitFor(
      [&] {
        json w = server_->Workload("victim");
        return w["runs"].size() == 2 && w["runs"][1]["state"] == "running";
      },
      30s))
      << server_->Workload("victim").dump(2);
  json w = server_->Workload("victim");
  EXPECT_THAT(w["runs"][1]["gpus"][0].get<std::string>(), ::testing::Not(HasSubstr(node + ":")));
  ASSERT_TRUE(server_->WaitState("victim", "succeeded", 40s)) << w.dump(2);
  // Nothing ran twice: the first job never ran again on its own (Slurm requeues a job whose
  // node failed; airtime cancels or holds that copy), and the one run that completed did
  // so once, on the other node.
  std::this_thread::sleep_for(1s);
  std::istringstream comp(ReadFile(lab_.dir() + "/log/jobcomp.txt"));
  int completed = 0;
  for (std::string line; std::getline(comp, line);) {
    if (line.find("Name=airtime.victim.") == std::string::npos) continue;
    if (line.find("JobState=COMPLETED") == std::string::npos) continue;
    ++completed;
    EXPECT_THAT(line, ::testing::Not(HasSubstr("NodeList=" + node + " "))) << line;
  }
  EXPECT_EQ(completed, 1) << ReadFile(lab_.dir() + "/log/jobcomp.txt");
  EXPECT_EQ(server_->Workload("victim")["runs"].size(), 2u);
  lab_.Run("scontrol", "update NodeName=" + node + " State=RESUME");
}

TEST_F(SlurmBackendE2E, AForeignJobHasItsOwnLedgerLineAndIsNotPlacedOn) {
  ASSERT_NO_FATAL_FAILURE(Up(2, 4));  // n1: 4 x h100, n2: 4 x a100
  // Someone submits to Slurm directly: 3 of n1's 4 H100s.
  const std::string out = lab_.Run(
      "sbatch", "--parsable -p low --gres=gpu:h100:3 -w n1 -o /dev/null --wrap 'sleep 60'");
  ASSERT_TRUE(WaitFor([&] {
    for (const SlurmJob& j : Jobs())
      if (j.name == "wrap" && j.state == "RUNNING") return true;
    return false;
  })) << out;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return server_->Get("/v1/gpus")["backend"]["foreign"].size() == 3; }))
      << server_->Get("/v1/gpus").dump(2);
  std::cerr << "figure: foreign job seen by airtime within " << MsSince(t0) << " ms\n";
  // A 2-GPU H100 job does not fit beside it: it waits, it is not placed on the foreign GPUs.
  ASSERT_EQ(server_->Submit(Job("mine", 2, "H100", 2)), 201);
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(server_->State("mine"), "queued") << server_->Workload("mine").dump(2);
  EXPECT_TRUE(JobsOf("mine").empty());
  std::this_thread::sleep_for(1s);
  json ledger = server_->Get("/v1/ledger");
  EXPECT_GT(ledger["buckets"]["foreign"].get<double>(), 0) << ledger.dump(2);
  EXPECT_EQ(server_->Metric("airtime_foreign_gpus"), 3);
  // The foreign job ends: the GPUs are airtime's again, and its job runs.
  for (const SlurmJob& j : Jobs())
    if (j.name == "wrap") lab_.Run("scancel", std::to_string(j.id));
  ASSERT_TRUE(server_->WaitState("mine", "succeeded", 30s)) << server_->Workload("mine").dump(2);
  EXPECT_EQ(server_->Metric("airtime_foreign_gpus"), 0);
}

// Someone else's shards (Slurm's gres/shard) hold a share of one GPU: airtime's fractions
// still fit in the rest of it, and whole-GPU work never goes there (Slurm uses a GPU whole
// or by shards, never both). n1's 4 H100s: the foreign shards take 600 of GPU 0's 1000,
// another foreign job the other 3 GPUs whole.
//   s (0.3)            -> GPU 0, beside the foreign shards (the only room on n1)
//   t (0.5)            -> no room for it beside 0.6 + 0.3: queued, no Slurm job
//   w (1 whole GPU)    -> none whole: queued, no Slurm job
// The foreign jobs end: t and w run.
TEST_F(SlurmBackendE2E, ForeignShardsLeaveTheRestOfTheirGpuToFractions) {
  ASSERT_NO_FATAL_FAILURE(Up(2, 4));  // n1: 4 x h100, n2: 4 x a100; 1000 shards per GPU
  const std::string shards =
      lab_.Run("sbatch", "--parsable -p low --gres=shard:600 -w n1 -o /dev/null --wrap 'sleep 60'");
  const std::string whole = lab_.Run(
      "sbatch", "--parsable -p low --gres=gpu:h100:3 -w n1 -o /dev/null --wrap 'sleep 60'");
  ASSERT_TRUE(WaitFor([&] {
    int running = 0;
    for (const SlurmJob& j : Jobs()) running += j.name == "wrap" && j.state == "RUNNING";
    return running == 2;
  })) << shards
      << whole;
  ASSERT_TRUE(WaitFor([&] { return server_->Get("/v1/gpus")["backend"]["foreign"].size() == 4; }))
      << server_->Get("/v1/gpus").dump(2);
  int shared = 0;
  const json foreign = server_->Get("/v1/gpus")["backend"]["foreign"];
  for (const json& f : foreign) {
    if (f["share_milli"] == 600)
      ++shared;
    else
      EXPECT_EQ(f["share_milli"], 1000) << f.dump();
  }
  EXPECT_EQ(shared, 1) << foreign.dump(2);
  auto frac = [](const std::string& name, const std::string& share) {
    return Job(name, 1, "H100", 30, "gpu_fraction: " + share + "\n");
  };
  ASSERT_EQ(server_->Submit(frac("s", "0.3")), 201);
  ASSERT_TRUE(WaitJobState("s", "RUNNING", 30s)) << server_->Workload("s").dump(2);
  auto jobs = JobsOf("s");
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_EQ(jobs[0].gpus.size(), 1u);
  EXPECT_EQ(jobs[0].gpus[0].node, "n1");
  EXPECT_EQ(jobs[0].gpus[0].shards, 300);
  ASSERT_EQ(server_->Submit(frac("t", "0.5")), 201);
  ASSERT_EQ(server_->Submit(Job("w", 1, "H100", 1)), 201);
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(server_->State("t"), "queued") << server_->Workload("t").dump(2);
  EXPECT_EQ(server_->State("w"), "queued") << server_->Workload("w").dump(2);
  EXPECT_TRUE(JobsOf("t").empty());
  EXPECT_TRUE(JobsOf("w").empty());
  json ledger = server_->Get("/v1/ledger");
  EXPECT_GT(ledger["buckets"]["foreign"].get<double>(), 0) << ledger.dump(2);
  for (const SlurmJob& j : Jobs())
    if (j.name == "wrap") lab_.Run("scancel", std::to_string(j.id));
  for (const std::string name : {"s", "t", "w"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(server_->WaitState(name, "succeeded", 90s)) << server_->Workload(name).dump(2);
    ASSERT_NO_FATAL_FAILURE(ExpectRanWhereRecorded(server_->Workload(name)));
    EXPECT_EQ(server_->Workload(name)["runs"].size(), 1u);
  }
  EXPECT_EQ(server_->Metric("airtime_foreign_gpus"), 0);
}

TEST_F(SlurmBackendE2E, ASlurmctldRestartMidRunLosesNothing) {
  ASSERT_NO_FATAL_FAILURE(Up(2, 4));
  ASSERT_EQ(server_->Submit(Job("steady", 1, "H100", 10)), 201);
  ASSERT_TRUE(WaitJobState("steady", "RUNNING"));
  const int64_t job = JobsOf("steady")[0].id;
  // slurmctld goes away and comes back with its saved state (not -c: a restart, not a new
  // cluster).
  ASSERT_EQ(lab_.Run("scontrol", "shutdown slurmctld"), "");
  ASSERT_TRUE(WaitFor([&] {
    return airtime::e2e::Shell("ss -ltn | grep -q ':" + std::to_string(lab_.port()) + " '") != 0;
  }));
  std::this_thread::sleep_for(2s);  // airtime polls a Slurm that does not answer
  EXPECT_EQ(server_->State("steady"), "running");
  const std::string conf = lab_.env("SLURM_CONF");
  const auto t_back = std::chrono::steady_clock::now();
  ASSERT_EQ(
      airtime::e2e::Shell("SLURM_CONF=" + conf + " /usr/sbin/slurmctld </dev/null >/dev/null 2>&1"),
      0);
  ASSERT_TRUE(server_->WaitState("steady", "succeeded", 40s))
      << server_->Workload("steady").dump(2);
  std::cerr << "figure: slurmctld back to the job's end seen by airtime " << MsSince(t_back)
            << " ms\n";
  json w = server_->Workload("steady");
  EXPECT_EQ(w["runs"].size(), 1u);
  EXPECT_EQ(w["runs"][0]["slurm_job"], job);
  EXPECT_EQ(JobcompRunsNamed("airtime.steady."), 1);
}

// Realtime replicas are long-running Slurm jobs: scaling up submits (or takes back) jobs,
// scaling down requeues and holds them (parked for the next scale-up, the same job ids), and
// the service's end cancels them all.
TEST_F(SlurmBackendE2E, RealtimeReplicasAreSlurmJobsThatScaleWithDemand) {
  ASSERT_NO_FATAL_FAILURE(Up(2, 4, {"--policy", "fifo"}));  // replicas follow demand at once
  ASSERT_EQ(server_->Submit("name: svc\nkind: realtime\ngpus: 1\ngpu_type: H100\n"
                            "slo: {latency_ms: 100, capacity_rps: 10, min_replicas: 1, "
                            "max_replicas: 4}\npreempt_grace: 1s\n"
                            "value: {per_1k_requests: 1}\n"
                            "command: [/bin/sh, -c, 'echo replica $PORT; sleep 600']\n"),
            201);
  auto running = [&] {
    int n = 0;
    for (const SlurmJob& j : JobsOf("svc")) n += j.state == "RUNNING";
    return n;
  };
  ASSERT_TRUE(WaitFor([&] { return running() == 1; })) << server_->Workload("svc").dump(2);
  auto demand = [&](double rps) {
    auto r = server_->Client().Post("/v1/workloads/svc/demand", json{{"rps", rps}}.dump(),
                                    "application/json");
    return r ? r->status : -1;
  };
  const auto t_up = std::chrono::steady_clock::now();
  ASSERT_EQ(demand(35) / 100, 2);
  ASSERT_TRUE(WaitFor([&] { return running() == 4; }, 30s)) << server_->Workload("svc").dump(2);
  std::cerr << "figure: 1 -> 4 replicas running in Slurm " << MsSince(t_up) << " ms\n";
  std::set<int64_t> ids;
  for (const SlurmJob& j : JobsOf("svc")) ids.insert(j.id);
  EXPECT_EQ(ids.size(), 4u);
  const auto t_down = std::chrono::steady_clock::now();
  ASSERT_EQ(demand(5) / 100, 2);
  ASSERT_TRUE(WaitFor([&] { return running() == 1; }, 30s)) << server_->Workload("svc").dump(2);
  std::cerr << "figure: 4 -> 1 replicas in Slurm " << MsSince(t_down) << " ms\n";
  // The three stopped are pending and held in Slurm, not cancelled (each requeued at the
  // poll that sees its end).
  auto held = [&] {
    int n = 0;
    for (const SlurmJob& j : JobsOf("svc")) n += j.Held();
    return n;
  };
  EXPECT_TRUE(WaitFor([&] { return held() == 3; }, 10s)) << held();
  const auto t_again = std::chrono::steady_clock::now();
  ASSERT_EQ(demand(25) / 100, 2);
  ASSERT_TRUE(WaitFor([&] { return running() == 3; }, 30s)) << server_->Workload("svc").dump(2);
  std::cerr << "figure: 1 -> 3 replicas from parked jobs " << MsSince(t_again) << " ms\n";
  std::set<int64_t> again;
  for (const SlurmJob& j : JobsOf("svc")) again.insert(j.id);
  EXPECT_EQ(again, ids);  // no new Slurm job: the parked ones ran again
  // Each running replica listens where the daemon says (its run's host and port, which the
  // demand scrape uses): a parked job runs again with the PORT of its first submission, and
  // its run records that port, not a new one. The replicas echo $PORT into their first run's
  // log (Slurm appends).
  std::string echoed;
  ASSERT_TRUE(WaitFor(
      [&] {
        echoed.clear();
        const json w = server_->Workload("svc");
        for (const json& run : w["runs"])
          echoed += ReadFile(run["log_dir"].get<std::string>() + "/stdout.log");
        int seen = 0;
        for (const json& run : w["runs"])
          if (run["state"] == "running" && run["port"].get<int>() > 0 &&
              echoed.find("replica " + std::to_string(run["port"].get<int>()) + "\n") !=
                  std::string::npos)
            ++seen;
        return seen == 3;
      },
      10s))
      << echoed << server_->Workload("svc").dump(2);
  const json svc = server_->Workload("svc");  // held: a range-for over a temporary's member dangles
  for (const json& run : svc["runs"]) {
    if (run["state"] != "running") continue;
    EXPECT_EQ(run["host"], "127.0.0.1");  // the lab's NodeAddr
  }
  // The service cancelled: every job of it ends, none left pending.
  auto r = server_->Client().Delete("/v1/workloads/svc");
  ASSERT_TRUE(r && r->status / 100 == 2) << (r ? r->body : "no answer");
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const SlurmJob& j : JobsOf("svc"))
          if (!airtime::slurm::FinalJobState(j.state)) return false;
        return true;
      },
      30s));
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  g_airtime = airtime::e2e::AirtimeFlag(argc, argv, "slurm_backend_e2e_test");
  if (g_airtime.empty()) return 2;
  return RUN_ALL_TESTS();
}
