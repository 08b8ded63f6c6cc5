// SlurmActuator against a scripted SlurmClient: what it asks Slurm, what it reports and when.
// The real thing is tested end to end against the lab (tests/e2e/slurm_backend_e2e_test.cc).
#include "airtime/slurm/slurm_actuator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace airtime::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace std::chrono_literals;

// Jobs are whatever the test sets; every action is logged ("submit", "nodes 7 n1", ...). The
// actuator's poller reads it from its own thread (through a ReaderOf): what it reads is
// under `mu`, and the test changes it only through Edit, SetNodes and FailReads. JobStates
// is brief, as squeue's (no name, nodes or GPUs): those come from Job(id).
class ScriptedSlurm final : public SlurmClient {
 public:
  // The calling thread's (the actions').
  std::vector<std::string> calls;
  bool fail_release = false;  // Release answers an error (set on the test's thread only)
  std::vector<JobRequest> submitted;
  int64_t next_id = 100;
  bool signal_fails = false;
  std::set<std::string> refuse;  // job names Submit refuses

  std::string ApiVersion() const override { return "v0.0.38"; }
  std::string SlurmRelease() const override { return "22.05.8"; }
  StatusOr<std::vector<SlurmNode>> Nodes() override {
    std::lock_guard<std::mutex> lock(mu_);
    return nodes_;
  }
  StatusOr<std::vector<SlurmPartition>> Partitions() override {
    return std::vector<SlurmPartition>{};
  }
  StatusOr<std::vector<SlurmJob>> Jobs() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (reads_fail_) return Status(StatusCode::kUnavailable, "GET /jobs: connection refused");
    ++list_reads_;
    return jobs_;
  }
  StatusOr<std::vector<SlurmJob>> JobStates() override {
    std::unique_lock<std::mutex> lock(mu_);
    if (reads_fail_) return Status(StatusCode::kUnavailable, "squeue: connection refused");
    ++state_reads_;
    std::vector<SlurmJob> brief;
    for (const SlurmJob& j : jobs_) {
      SlurmJob b;
      b.id = j.id;
      b.state = j.state;
      b.state_reason = j.state_reason;
      b.restarts = j.restarts;
      b.exit_code = j.exit_code;
      b.priority = j.priority;
      b.user = j.user;
      brief.push_back(b);
    }
    // A closed gate holds this read, with what it read, until the test opens it.
    if (gate_closed_) {
      held_ = true;
      gate_cv_.notify_all();
      gate_cv_.wait(lock, [&] { return !gate_closed_; });
      held_ = false;
    }
    return brief;
  }
  StatusOr<SlurmJob> Job(int64_t id) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++job_reads_;
    if (job_reads_fail_) return Status(StatusCode::kUnavailable, "GET /job: connection reset");
    for (const SlurmJob& j : jobs_)
      if (j.id == id) return j;
    return NotFound("job " + std::to_string(id));
  }
  // Also the submitters' (SubmitterOf), several at once: under `mu` like the reads.
  StatusOr<int64_t> Submit(const JobRequest& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    submitted.push_back(r);
    calls.push_back("submit");
    if (refuse.count(r.name)) return FailedPrecondition("Slurm refused " + r.name);
    SlurmJob j;
    j.id = next_id++;
    j.name = r.name;
    j.state = "PENDING";
    jobs_.push_back(j);
    return j.id;
  }
  Status SetRequiredNodes(int64_t job, const std::vector<std::string>& nodes) override {
    std::string c = "nodes " + std::to_string(job);
    for (const auto& n : nodes) c += " " + n;
    calls.push_back(c);
    return OkStatus();
  }
  Status Release(int64_t job) override {
    calls.push_back("release " + std::to_string(job));
    if (fail_release) return Status(StatusCode::kFailedPrecondition, "release refused");
    return OkStatus();
  }
  Status Hold(int64_t job) override {
    calls.push_back("hold " + std::to_string(job));
    return OkStatus();
  }
  Status SetPriority(int64_t, int64_t) override { return OkStatus(); }
  Status Requeue(int64_t job, bool hold) override {
    calls.push_back(std::string(hold ? "requeuehold " : "requeue ") + std::to_string(job));
    return OkStatus();
  }
  Status Cancel(int64_t job) override {
    calls.push_back("cancel " + std::to_string(job));
    return OkStatus();
  }
  Status Signal(int64_t job, const std::string& signal) override {
    calls.push_back("signal " + std::to_string(job) + " " + signal);
    return signal_fails ? FailedPrecondition("not running") : OkStatus();
  }

  // A job to change (added when missing), locked until the end of the statement:
  // slurm_->Edit(7)->state = "COMPLETED";
  class Locked {
   public:
    Locked(std::unique_lock<std::mutex> lock, SlurmJob* job) : lock_(std::move(lock)), job_(job) {}
    SlurmJob* operator->() const { return job_; }

   private:
    std::unique_lock<std::mutex> lock_;
    SlurmJob* job_;
  };
  Locked Edit(int64_t id) {
    std::unique_lock<std::mutex> lock(mu_);
    SlurmJob* job = nullptr;
    for (SlurmJob& j : jobs_)
      if (j.id == id) job = &j;
    if (job == nullptr) {
      jobs_.push_back(SlurmJob{});
      jobs_.back().id = id;
      job = &jobs_.back();
    }
    return Locked(std::move(lock), job);
  }
  void Run(int64_t id, const std::string& node, const std::string& type, std::vector<int> idx) {
    Locked j = Edit(id);
    j->state = "RUNNING";
    j->priority = 1;
    j->nodes = {node};
    j->gpus = {NodeGpus{node, type, std::move(idx)}};
  }
  void ClearJobs() {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.clear();
  }
  void SetNodes(std::vector<SlurmNode> nodes) {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_ = std::move(nodes);
  }
  void FailReads(bool fail) {
    std::lock_guard<std::mutex> lock(mu_);
    reads_fail_ = fail;
  }
  void FailJobReads(bool fail) {
    std::lock_guard<std::mutex> lock(mu_);
    job_reads_fail_ = fail;
  }
  // Closes the gate, calls `start` (which asks for a poll), then waits until that poll's
  // read of JobStates is held at the gate.
  void HoldNextRead(const std::function<void()>& start) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      gate_closed_ = true;
    }
    start();
    std::unique_lock<std::mutex> lock(mu_);
    gate_cv_.wait(lock, [&] { return held_; });
  }
  void OpenGate() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      gate_closed_ = false;
    }
    gate_cv_.notify_all();
  }
  int64_t job_reads() {
    std::lock_guard<std::mutex> lock(mu_);
    return job_reads_;
  }
  int64_t list_reads() {
    std::lock_guard<std::mutex> lock(mu_);
    return list_reads_;
  }
  // JobStates reads that have read the list (past the gate or held at it).
  int64_t state_reads() {
    std::lock_guard<std::mutex> lock(mu_);
    return state_reads_;
  }

 private:
  std::mutex mu_;
  std::vector<SlurmJob> jobs_;
  std::vector<SlurmNode> nodes_;
  bool reads_fail_ = false, job_reads_fail_ = false;
  int64_t job_reads_ = 0, list_reads_ = 0, state_reads_ = 0;
  std::condition_variable gate_cv_;
  bool gate_closed_ = false, held_ = false;
};

// The poller's client: reads from a ScriptedSlurm, and never acts.
class ReaderOf final : public SlurmClient {
 public:
  explicit ReaderOf(ScriptedSlurm* slurm) : slurm_(slurm) {}
  std::string ApiVersion() const override { return slurm_->ApiVersion(); }
  std::string SlurmRelease() const override { return slurm_->SlurmRelease(); }
  StatusOr<std::vector<SlurmNode>> Nodes() override { return slurm_->Nodes(); }
  StatusOr<std::vector<SlurmPartition>> Partitions() override { return slurm_->Partitions(); }
  StatusOr<std::vector<SlurmJob>> Jobs() override { return slurm_->Jobs(); }
  StatusOr<std::vector<SlurmJob>> JobStates() override { return slurm_->JobStates(); }
  StatusOr<SlurmJob> Job(int64_t id) override { return slurm_->Job(id); }
  StatusOr<int64_t> Submit(const JobRequest&) override { return Acts(); }
  Status SetRequiredNodes(int64_t, const std::vector<std::string>&) override { return Acts(); }
  Status Release(int64_t) override { return Acts(); }
  Status Hold(int64_t) override { return Acts(); }
  Status SetPriority(int64_t, int64_t) override { return Acts(); }
  Status Requeue(int64_t, bool) override { return Acts(); }
  Status Cancel(int64_t) override { return Acts(); }
  Status Signal(int64_t, const std::string&) override { return Acts(); }

 private:
  static Status Acts() {
    ADD_FAILURE() << "the poller's client acted";
    return Internal("the poller's client acts on nothing");
  }
  ScriptedSlurm* slurm_;
};

// A submitter's client (SlurmActuator's LaunchAll): submits to a ScriptedSlurm from its own
// thread, and does nothing else.
class SubmitterOf final : public SlurmClient {
 public:
  explicit SubmitterOf(ScriptedSlurm* slurm) : slurm_(slurm) {}
  std::string ApiVersion() const override { return slurm_->ApiVersion(); }
  std::string SlurmRelease() const override { return slurm_->SlurmRelease(); }
  StatusOr<std::vector<SlurmNode>> Nodes() override { return Other(); }
  StatusOr<std::vector<SlurmPartition>> Partitions() override { return Other(); }
  StatusOr<std::vector<SlurmJob>> Jobs() override { return Other(); }
  StatusOr<std::vector<SlurmJob>> JobStates() override { return Other(); }
  StatusOr<SlurmJob> Job(int64_t) override { return Other(); }
  StatusOr<int64_t> Submit(const JobRequest& r) override { return slurm_->Submit(r); }
  Status SetRequiredNodes(int64_t, const std::vector<std::string>&) override { return Other(); }
  Status Release(int64_t) override { return Other(); }
  Status Hold(int64_t) override { return Other(); }
  Status SetPriority(int64_t, int64_t) override { return Other(); }
  Status Requeue(int64_t, bool) override { return Other(); }
  Status Cancel(int64_t) override { return Other(); }
  Status Signal(int64_t, const std::string&) override { return Other(); }

 private:
  static Status Other() {
    ADD_FAILURE() << "a submitter's client did something else than submit";
    return Internal("a submitter only submits");
  }
  ScriptedSlurm* slurm_;
};

SlurmNode Node(const std::string& name, const std::string& gres) {
  SlurmNode n;
  n.name = name;
  n.gres = *ParseGresList(gres);
  n.cpus = 64;
  return n;
}

class SlurmActuatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SlurmNode n1 = Node("n1", "gpu:h100:8,shard:h100:8000");
    n1.address = "10.0.0.1";  // Slurm's NodeAddr; the others have none (their names)
    auto sc = ClusterFromSlurm(
        {n1, Node("n3", "gpu:a100:8"), Node("n5", "gpu:h100:4,gpu:a100:4,shard:800")}, "lab");
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    cluster_ = *sc;
    Make(0);
  }

  // A new actuator (and Slurm) with `submitters` submitters beside the calling thread.
  void Make(int submitters) {
    actuator_.reset();
    auto client = std::make_unique<ScriptedSlurm>();
    slurm_ = client.get();
    SlurmActuatorOptions o;
    o.poll_interval = 1h;  // the tests ask for each poll (Poll)
    o.user = "airtime";
    o.owner = "store 0123abcd";
    std::vector<std::unique_ptr<SlurmClient>> helpers;
    for (int i = 0; i < submitters; ++i) helpers.push_back(std::make_unique<SubmitterOf>(slurm_));
    actuator_ = std::make_unique<SlurmActuator>(
        std::move(client), std::make_unique<ReaderOf>(slurm_), cluster_, o, std::move(helpers));
    Poll();  // the first poll, begun at construction, is over
  }

  // A poll begun now, applied: what the WaitForExits calls until then reported.
  std::vector<Exited> Poll() {
    const int64_t begun = actuator_->polls();
    actuator_->PollSoon();
    std::vector<Exited> exits;
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (actuator_->last_applied_poll() <= begun) {
      if (std::chrono::steady_clock::now() > give_up) {
        ADD_FAILURE() << "no poll applied within 10 s";
        break;
      }
      for (Exited& e : actuator_->WaitForExits(10)) exits.push_back(std::move(e));
    }
    return exits;
  }

  LaunchRequest Request(const std::string& workload, int64_t run, std::vector<std::string> gpus) {
    LaunchRequest r;
    r.run_dir = "/data/runs/" + std::to_string(run);
    r.run_id = run;
    r.argv = {"python3", "train.py", "--name", "it's"};
    r.env = {{"CUDA_VISIBLE_DEVICES", "slurm:n1:0"}, {"AIRTIME_CHECKPOINT_DIR", "/ck"}};
    r.gpus = std::move(gpus);
    r.workload = workload;
    r.comment = "training 'train' on n1 GPUs 0-1";
    return r;
  }

  int64_t Start(const std::string& workload, int64_t run, std::vector<std::string> gpus) {
    auto h = actuator_->Launch(Request(workload, run, std::move(gpus)));
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    if (!h.ok()) return 0;
    EXPECT_TRUE(actuator_->Watch(run, *h).ok());
    return h->slurm_job;
  }

  // A replica of `workload` on n1's GPU 0 with `port` in its environment, run, stopped and
  // parked (requeued and held). Its job id.
  int64_t ParkReplica(const std::string& workload, int64_t run, const std::string& port) {
    LaunchRequest r = Request(workload, run, {"slurm:n1:0"});
    r.env.push_back({"AIRTIME_PORT", port});
    auto h = actuator_->Launch(r);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    if (!h.ok()) return 0;
    EXPECT_EQ(h->port, std::stoi(port));
    EXPECT_TRUE(actuator_->Watch(run, *h).ok());
    EXPECT_THAT(actuator_->KeptPorts(), ::testing::IsEmpty());  // running: its run holds it
    slurm_->Run(h->slurm_job, "n1", "h100", {0});
    Poll();
    EXPECT_TRUE(actuator_->Stop(run, 0).ok());
    Poll();
    slurm_->Edit(h->slurm_job)->state = "PENDING";
    slurm_->Edit(h->slurm_job)->priority = 0;
    Poll();
    return h->slurm_job;
  }

  ScriptedSlurm* slurm_ = nullptr;
  SlurmCluster cluster_;
  std::unique_ptr<SlurmActuator> actuator_;
};

// One call: the job is submitted released, with the engine's nodes as its required nodes
// (no scontrol, no release).
TEST_F(SlurmActuatorTest, LaunchSubmitsOneJobRequiredOnTheEnginesNodes) {
  const int64_t job = Start("train", 7, {"slurm:n1:0", "slurm:n1:1"});
  ASSERT_EQ(job, 100);
  EXPECT_THAT(slurm_->calls, ElementsAre("submit"));
  const JobRequest& r = slurm_->submitted.at(0);
  EXPECT_EQ(r.name, "airtime.train.r7");
  EXPECT_EQ(r.comment, "airtime: training 'train' on n1 GPUs 0-1 [store 0123abcd]");
  EXPECT_FALSE(r.hold);
  EXPECT_THAT(r.required_nodes, ElementsAre("n1"));
  EXPECT_EQ(r.gpu_type, "h100");
  EXPECT_EQ(r.gpus_per_node, 2);
  EXPECT_EQ(r.nodes, 1);
  EXPECT_EQ(r.standard_output, "/data/runs/7/stdout.log");
  // No workdir: the daemon's working directory, as the local executor (not the run's
  // directory: the live demo's relative paths failed there, "can't open file").
  EXPECT_EQ(r.working_directory, std::filesystem::current_path().string());
  // Slurm sets CUDA_VISIBLE_DEVICES to the GPUs it chose; the rest goes through.
  EXPECT_EQ(r.environment.count("CUDA_VISIBLE_DEVICES"), 0u);
  EXPECT_EQ(r.environment.at("AIRTIME_CHECKPOINT_DIR"), "/ck");
  EXPECT_EQ(r.script, BatchScript({"python3", "train.py", "--name", "it's"}));
  EXPECT_THAT(r.script, HasSubstr("exec 'python3' 'train.py' '--name' 'it'\\''s'\n"));
}

TEST_F(SlurmActuatorTest, AWorkloadsWorkdirIsTheJobsWorkingDirectory) {
  LaunchRequest r = Request("w", 8, {"slurm:n1:0"});
  r.workdir = "/srv/work";
  ASSERT_TRUE(actuator_->Launch(r).ok());
  EXPECT_EQ(slurm_->submitted.at(0).working_directory, "/srv/work");
  EXPECT_EQ(slurm_->submitted.at(0).standard_output, "/data/runs/8/stdout.log");
}

TEST_F(SlurmActuatorTest, MultiNodeAndMixedNodeGpus) {
  // Two nodes, two GPUs each.
  EXPECT_NE(Start("big", 1, {"slurm:n1:0", "slurm:n1:1", "slurm:n5:0", "slurm:n5:1"}), 0);
  EXPECT_EQ(slurm_->submitted.at(0).nodes, 2);
  EXPECT_EQ(slurm_->submitted.at(0).gpus_per_node, 2);
  EXPECT_THAT(slurm_->submitted.at(0).required_nodes, ElementsAre("n1", "n5"));
  EXPECT_THAT(slurm_->calls, ElementsAre("submit"));
  // n5's a100 half is Slurm's indices 4-7.
  EXPECT_NE(Start("a", 2, {"slurm:n5:4"}), 0);
  EXPECT_EQ(slurm_->submitted.at(1).gpu_type, "a100");
  // Refused, nothing submitted: mixed types, unequal counts, an unknown GPU, a fraction on a
  // node without gres/shard.
  const size_t before = slurm_->submitted.size();
  auto mixed = actuator_->Launch(Request("m", 3, {"slurm:n1:0", "slurm:n3:0"}));
  EXPECT_THAT(mixed.status().message(), HasSubstr("two types"));
  auto unequal = actuator_->Launch(Request("u", 4, {"slurm:n1:0", "slurm:n1:1", "slurm:n5:0"}));
  EXPECT_THAT(unequal.status().message(), HasSubstr("unequal"));
  auto unknown = actuator_->Launch(Request("x", 5, {"slurm:n9:0"}));
  EXPECT_THAT(unknown.status().message(), HasSubstr("slurm:n9:0"));
  LaunchRequest frac = Request("f", 6, {"slurm:n3:0"});
  frac.share_milli = 500;
  EXPECT_THAT(actuator_->Launch(frac).status().message(), HasSubstr("no gres/shard"));
  EXPECT_EQ(slurm_->submitted.size(), before);
}

TEST_F(SlurmActuatorTest, ReportsSlurmsGpusOnceAndTheEndOnce) {
  const int64_t job = Start("train", 7, {"slurm:n1:0", "slurm:n1:1"});
  EXPECT_TRUE(Poll().empty());
  EXPECT_TRUE(actuator_->TakePlaced().empty());  // still pending
  slurm_->Run(job, "n1", "h100", {2, 3});
  EXPECT_TRUE(Poll().empty());
  auto placed = actuator_->TakePlaced();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].run_id, 7);
  EXPECT_THAT(placed[0].gpus, ElementsAre("slurm:n1:2", "slurm:n1:3"));
  EXPECT_TRUE(Poll().empty());
  EXPECT_TRUE(actuator_->TakePlaced().empty());  // once
  slurm_->Edit(job)->state = "COMPLETING";
  EXPECT_TRUE(Poll().empty());
  slurm_->Edit(job)->state = "FAILED";
  slurm_->Edit(job)->exit_code = 3 << 8;
  auto exits = Poll();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].run_id, 7);
  EXPECT_EQ(exits[0].exit_code, 3);
  EXPECT_EQ(exits[0].how, "failed");
  EXPECT_TRUE(Poll().empty());  // once
}

// A fraction of a GPU is gres/shard of one GPU on the engine's node: share x shards per GPU
// / 1000, rounded up (n1: 1000 per GPU; n5: 800 over 8 GPUs, 100 each). Slurm's choice of
// GPU is reported as for whole GPUs; its stop parks it, and its next start of the same
// shards reuses the job. Others' shard jobs hold their share of their GPU: foreign, as a
// share of it (n1 has 1000 shards per GPU: 250 are a quarter; n5's 30 of 100, 300).
TEST_F(SlurmActuatorTest, AFractionIsShardsOfOneGpuOnTheEnginesNode) {
  LaunchRequest half = Request("half", 20, {"slurm:n1:0"});
  half.share_milli = 500;
  // What GpuEnv gives a half: its MPS limits by the daemon's GPU id, and the daemon's MPS
  // server's directory, which means nothing on a node.
  half.env.push_back({"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50"});
  half.env.push_back({"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "slurm:n1:0=40960MB"});
  half.env.push_back({"CUDA_MPS_PIPE_DIRECTORY", "/data/mps/pipe"});
  auto h = actuator_->Launch(half);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_TRUE(actuator_->Watch(20, *h).ok());
  const JobRequest& r = slurm_->submitted.at(0);
  EXPECT_EQ(r.shards_per_node, 500);
  EXPECT_EQ(r.gpus_per_node, 0);
  EXPECT_EQ(r.gpu_type, "");
  EXPECT_THAT(r.required_nodes, ElementsAre("n1"));
  // The limits go with the job, the memory one for the one GPU it sees (device 0): an MPS
  // daemon on the node enforces them.
  EXPECT_EQ(r.environment.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "50");
  EXPECT_EQ(r.environment.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=40960MB");
  EXPECT_EQ(r.environment.count("CUDA_MPS_PIPE_DIRECTORY"), 0u);
  LaunchRequest third = Request("third", 21, {"slurm:n5:1"});
  third.share_milli = 333;
  ASSERT_TRUE(actuator_->Launch(third).ok());
  EXPECT_EQ(slurm_->submitted.at(1).shards_per_node, 34);  // 33.3 of 100, rounded up
  third.gpus = {"slurm:n5:4"};                             // n5's a100: the same node's shards
  ASSERT_TRUE(actuator_->Launch(third).ok());
  EXPECT_EQ(slurm_->submitted.at(2).shards_per_node, 34);
  // Refused: a fraction of two GPUs on a node (Slurm takes a job's shards from one GPU).
  LaunchRequest two = Request("two", 22, {"slurm:n1:0", "slurm:n1:1"});
  two.share_milli = 500;
  EXPECT_THAT(actuator_->Launch(two).status().message(), HasSubstr("from one GPU"));
  EXPECT_EQ(slurm_->submitted.size(), 3u);

  // Slurm put the shards on GPU 2: reported once, like whole GPUs.
  {
    auto j = slurm_->Edit(h->slurm_job);
    j->state = "RUNNING";
    j->priority = 1;
    j->nodes = {"n1"};
    j->gpus = {NodeGpus{"n1", "", {2}, 500}};
  }
  Poll();
  auto placed = actuator_->TakePlaced();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].run_id, 20);
  EXPECT_THAT(placed[0].gpus, ElementsAre("slurm:n1:2"));
  EXPECT_FALSE(actuator_->TakeForeign().has_value());  // its own: not foreign

  // Stopped: requeued and held, then its next start (500 shards again) is the same job.
  ASSERT_TRUE(actuator_->Stop(20, 0).ok());
  Poll();
  {
    auto j = slurm_->Edit(h->slurm_job);
    j->state = "PENDING";
    j->priority = 0;
    j->restarts = 1;
  }
  ASSERT_EQ(Poll().size(), 1u);
  slurm_->calls.clear();
  half.run_id = 23;
  half.gpus = {"slurm:n1:5"};
  auto again = actuator_->Launch(half);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->slurm_job, h->slurm_job);
  EXPECT_THAT(slurm_->calls, ElementsAre("nodes " + std::to_string(h->slurm_job) + " n1",
                                         "release " + std::to_string(h->slurm_job)));

  // Someone else's shards hold a share of their GPU: foreign, by that share.
  slurm_->Run(500, "n1", "", {7});
  slurm_->Edit(500)->gpus[0].shards = 250;
  slurm_->Edit(500)->user = "alice";
  Poll();
  auto foreign = actuator_->TakeForeign();
  ASSERT_TRUE(foreign.has_value());
  ASSERT_EQ(foreign->size(), 1u);
  EXPECT_EQ((*foreign)[0].gpu, "slurm:n1:7");
  EXPECT_EQ((*foreign)[0].milli, 250);
  // Its share grows (another job of theirs on n5): reported again, each by its share.
  slurm_->Run(501, "n5", "", {3});
  slurm_->Edit(501)->gpus[0].shards = 30;
  Poll();
  foreign = actuator_->TakeForeign();
  ASSERT_TRUE(foreign.has_value());
  ASSERT_EQ(foreign->size(), 2u);
  EXPECT_EQ((*foreign)[1].gpu, "slurm:n5:3");
  EXPECT_EQ((*foreign)[1].milli, 300);
  // A count beyond the GPU's shards (a record out of range) holds the whole GPU, no more.
  slurm_->Run(502, "n5", "", {4});
  slurm_->Edit(502)->gpus[0].shards = std::numeric_limits<int64_t>::max();
  Poll();
  foreign = actuator_->TakeForeign();
  ASSERT_TRUE(foreign.has_value());
  ASSERT_EQ(foreign->size(), 3u);
  EXPECT_EQ((*foreign)[2].gpu, "slurm:n5:4");
  EXPECT_EQ((*foreign)[2].milli, 1000);
}

TEST_F(SlurmActuatorTest, ExitCodesFromWaitStatus) {
  EXPECT_EQ(ExitCodeOf(0), 0);
  EXPECT_EQ(ExitCodeOf(1 << 8), 1);
  EXPECT_EQ(ExitCodeOf(15), 143);
  EXPECT_EQ(ExitCodeOf(9), 137);
  EXPECT_EQ(ExitCodeOf(-5), -1);
  EXPECT_EQ(ExitCodeOf(int64_t{1} << 40), -1);
}

TEST_F(SlurmActuatorTest, StopSignalsThenRequeuesHeldAndTheNextStartReusesTheJob) {
  const int64_t job = Start("train", 7, {"slurm:n1:0", "slurm:n1:1"});
  slurm_->Run(job, "n1", "h100", {0, 1});
  Poll();
  slurm_->calls.clear();
  ASSERT_TRUE(actuator_->Stop(7, 60'000).ok());
  EXPECT_THAT(slurm_->calls, ElementsAre("signal 100 TERM"));
  Poll();  // within the grace: nothing more
  EXPECT_THAT(slurm_->calls, ElementsAre("signal 100 TERM"));
  // A grace of 0 for the second stop of another run: the requeue comes at the next poll.
  const int64_t job2 = Start("eval", 8, {"slurm:n3:0"});
  slurm_->Run(job2, "n3", "a100", {0});
  Poll();
  slurm_->calls.clear();
  ASSERT_TRUE(actuator_->Stop(8, 0).ok());
  EXPECT_TRUE(Poll().empty());
  EXPECT_THAT(slurm_->calls, ElementsAre("signal 101 TERM", "requeuehold 101"));
  {
    auto j = slurm_->Edit(job2);
    j->state = "PENDING";
    j->priority = 0;
    j->restarts = 1;
  }
  auto exits = Poll();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].run_id, 8);
  EXPECT_EQ(exits[0].how, "requeued");
  // The workload's next start: the same job, steered and released, nothing submitted.
  slurm_->calls.clear();
  EXPECT_EQ(Start("eval", 9, {"slurm:n3:5"}), job2);
  EXPECT_THAT(slurm_->calls, ElementsAre("nodes 101 n3", "release 101"));
  // Stopped again and retired (the workload was cancelled): the parked job is cancelled.
  slurm_->Run(job2, "n3", "a100", {5});
  Poll();
  ASSERT_TRUE(actuator_->Stop(9, 0).ok());
  Poll();
  slurm_->Edit(job2)->state = "PENDING";
  slurm_->Edit(job2)->priority = 0;
  EXPECT_EQ(Poll().size(), 1u);
  slurm_->calls.clear();
  actuator_->Retire("eval");
  EXPECT_THAT(slurm_->calls, ElementsAre("cancel 101"));
}

// A workload that checkpoints and exits on the signal, within its grace: its finished job is
// requeued and held all the same, and is its next start. StopNow cancels, parks nothing.
TEST_F(SlurmActuatorTest, AJobThatEndsWithinTheGraceIsParkedToo) {
  const int64_t job = Start("fin", 10, {"slurm:n1:4"});
  slurm_->Run(job, "n1", "h100", {4});
  Poll();
  ASSERT_TRUE(actuator_->Stop(10, 60'000).ok());
  slurm_->Edit(job)->state = "COMPLETED";
  slurm_->calls.clear();
  auto exits = Poll();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 0);
  EXPECT_EQ(exits[0].how, "completed, requeued");
  EXPECT_THAT(slurm_->calls, ElementsAre("requeuehold 100"));
  slurm_->calls.clear();
  EXPECT_EQ(Start("fin", 11, {"slurm:n1:4"}), job);
  EXPECT_THAT(slurm_->calls, ElementsAre("nodes 100 n1", "release 100"));
  slurm_->Run(job, "n1", "h100", {4});
  Poll();
  slurm_->calls.clear();
  ASSERT_TRUE(actuator_->StopNow(11).ok());
  EXPECT_THAT(slurm_->calls, ElementsAre("cancel 100"));
  slurm_->Edit(job)->state = "CANCELLED";
  slurm_->Edit(job)->exit_code = 15;
  exits = Poll();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].how, "cancelled");
  EXPECT_EQ(exits[0].exit_code, 143);
  slurm_->calls.clear();
  EXPECT_NE(Start("fin", 12, {"slurm:n1:4"}), job);  // a new job
  EXPECT_EQ(slurm_->calls.at(0), "submit");
}

// Two replicas of one service stopped: both jobs are parked, each start takes one back (on
// whatever node it is steered to), and a retired service's parked jobs are all cancelled.
TEST_F(SlurmActuatorTest, ReplicasOfOneServiceParkSeveralJobs) {
  const int64_t a = Start("svc", 20, {"slurm:n1:0"});
  const int64_t b = Start("svc", 21, {"slurm:n1:1"});
  slurm_->Run(a, "n1", "h100", {0});
  slurm_->Run(b, "n1", "h100", {1});
  Poll();
  ASSERT_TRUE(actuator_->Stop(20, 0).ok());
  ASSERT_TRUE(actuator_->Stop(21, 0).ok());
  Poll();  // both requeued and held
  for (int64_t j : {a, b}) {
    slurm_->Edit(j)->state = "PENDING";
    slurm_->Edit(j)->priority = 0;
  }
  EXPECT_EQ(Poll().size(), 2u);
  EXPECT_THAT(actuator_->Describe(), HasSubstr("2 parked"));
  slurm_->calls.clear();
  const int64_t again = Start("svc", 22, {"slurm:n5:2"});  // another node, same shape
  EXPECT_TRUE(again == a || again == b) << again;
  EXPECT_THAT(slurm_->calls, ElementsAre("nodes " + std::to_string(again) + " n5",
                                         "release " + std::to_string(again)));
  slurm_->calls.clear();
  actuator_->Retire("svc");
  EXPECT_THAT(slurm_->calls, ElementsAre("cancel " + std::to_string(again == a ? b : a)));
  EXPECT_THAT(actuator_->Describe(), HasSubstr("0 parked"));
}

// A replica's port is in its job's environment: a parked job keeps it, the next start that
// takes the job back runs with it (the handle says so), and while parked no other replica
// may be given it. The replica is reached at its node's address.
TEST_F(SlurmActuatorTest, AParkedReplicaKeepsItsPortAndIsReachedAtItsNode) {
  EXPECT_EQ(actuator_->ServiceAddress({"slurm:n1:0"}), "10.0.0.1");
  EXPECT_EQ(actuator_->ServiceAddress({"slurm:n3:2", "slurm:n3:3"}), "n3");
  EXPECT_EQ(actuator_->ServiceAddress({}), "127.0.0.1");
  const int64_t job = ParkReplica("svc", 30, "20007");
  EXPECT_THAT(actuator_->KeptPorts(), ElementsAre(20007));
  LaunchRequest again = Request("svc", 31, {"slurm:n5:1"});
  again.env.push_back({"AIRTIME_PORT", "20008"});  // what the daemon chose: not the job's
  auto back = actuator_->Launch(again);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->slurm_job, job);
  EXPECT_EQ(back->port, 20007);
  EXPECT_THAT(actuator_->KeptPorts(), IsEmpty());
}

// A parked job that cannot be taken back (its release fails) is cancelled and a new job is
// submitted with the request's environment: the run's port is the request's.
TEST_F(SlurmActuatorTest, ANewJobInsteadOfAParkedOneHasTheRequestsPort) {
  const int64_t job = ParkReplica("svc", 30, "20007");
  ASSERT_THAT(actuator_->KeptPorts(), ElementsAre(20007));
  slurm_->fail_release = true;
  LaunchRequest again = Request("svc", 31, {"slurm:n1:1"});
  again.env.push_back({"AIRTIME_PORT", "20008"});
  auto fresh = actuator_->Launch(again);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_NE(fresh->slurm_job, job);
  EXPECT_EQ(fresh->port, 20008);
  EXPECT_THAT(actuator_->KeptPorts(), IsEmpty());
}

TEST_F(SlurmActuatorTest, AJobSlurmRequeuedByItselfIsCancelledAndReportedOnce) {
  const int64_t job = Start("train", 7, {"slurm:n1:0"});
  slurm_->Run(job, "n1", "h100", {0});
  Poll();
  // n1 went down: Slurm requeued the job (pending, eligible again later).
  {
    auto j = slurm_->Edit(job);
    j->state = "PENDING";
    j->state_reason = "BeginTime";
    j->restarts = 1;
    j->nodes.clear();
    j->gpus.clear();
  }
  slurm_->calls.clear();
  auto exits = Poll();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, -1);
  EXPECT_THAT(exits[0].how, HasSubstr("requeued by Slurm (BeginTime)"));
  EXPECT_THAT(slurm_->calls, ElementsAre("cancel 100"));
  EXPECT_EQ(actuator_->slurm_requeues_seen(), 1);
  EXPECT_TRUE(Poll().empty());
}

TEST_F(SlurmActuatorTest, SlurmUnreachableConcludesNothing) {
  Start("train", 7, {"slurm:n1:0"});
  slurm_->FailReads(true);
  EXPECT_TRUE(Poll().empty());
  EXPECT_EQ(actuator_->poll_errors(), 1);
  EXPECT_THAT(actuator_->Describe(), HasSubstr("connection refused"));
  slurm_->FailReads(false);
  slurm_->ClearJobs();  // and then the job is gone
  auto exits = Poll();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_THAT(exits[0].how, HasSubstr("gone"));
}

// A fraction's job adopted after a restart keeps its shards: stopped, it is parked, and the
// next start of the same share takes it back; another share is a new job.
TEST_F(SlurmActuatorTest, AnAdoptedFractionIsParkedWithItsShards) {
  slurm_->Run(60, "n1", "", {4});
  slurm_->Edit(60)->gpus[0].shards = 500;
  slurm_->Edit(60)->name = "airtime.half.r30";
  RunHandle h;
  h.slurm_job = 60;
  auto adopted = actuator_->Adopt(30, h);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_EQ(adopted->state, AdoptState::kRunning);
  Poll();
  ASSERT_TRUE(actuator_->Stop(30, 0).ok());
  Poll();
  {
    auto j = slurm_->Edit(60);
    j->state = "PENDING";
    j->priority = 0;
    j->restarts = 1;
  }
  ASSERT_EQ(Poll().size(), 1u);
  LaunchRequest quarter = Request("half", 31, {"slurm:n1:2"});
  quarter.share_milli = 250;
  auto other = actuator_->Launch(quarter);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_NE(other->slurm_job, 60);
  EXPECT_EQ(slurm_->submitted.back().shards_per_node, 250);
  LaunchRequest half = Request("half", 32, {"slurm:n1:6"});
  half.share_milli = 500;
  slurm_->calls.clear();
  auto again = actuator_->Launch(half);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->slurm_job, 60);
  EXPECT_THAT(slurm_->calls, ElementsAre("nodes 60 n1", "release 60"));
}

TEST_F(SlurmActuatorTest, AdoptLooksTheJobUpInSlurm) {
  slurm_->Run(40, "n1", "h100", {0});
  slurm_->Edit(40)->name = "airtime.train.r1";
  slurm_->Edit(41)->state = "COMPLETED";
  slurm_->Run(42, "n3", "a100", {0});
  slurm_->Edit(42)->name = "airtime.lost.r5";  // submitted, not recorded
  slurm_->Edit(42)->user = "airtime";
  slurm_->Edit(42)->comment = "airtime: batch 'lost' [store 0123abcd]";
  slurm_->Run(45, "n3", "a100", {2});
  slurm_->Edit(45)->name = "airtime.theirs.r7";  // another daemon's, under the same user
  slurm_->Edit(45)->user = "airtime";
  slurm_->Edit(45)->comment = "airtime: batch 'theirs' [store 99ffee]";
  slurm_->Run(44, "n3", "a100", {1});
  slurm_->Edit(44)->name = "airtime.fake.r8";  // another user's look-alike
  slurm_->Edit(44)->user = "mallory";
  slurm_->Edit(43)->state = "PENDING";  // held: never released
  slurm_->Edit(43)->name = "airtime.cut.r6";
  slurm_->Edit(43)->user = "airtime";
  slurm_->Edit(43)->comment = "airtime: batch 'cut' [store 0123abcd]";
  RunHandle h;
  h.slurm_job = 40;
  auto running = actuator_->Adopt(1, h);
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->state, AdoptState::kRunning);
  h.slurm_job = 41;
  auto ended = actuator_->Adopt(2, h);
  EXPECT_EQ(ended->state, AdoptState::kExited);
  EXPECT_EQ(ended->exit->exit_code, 0);
  h.slurm_job = 99;
  auto gone = actuator_->Adopt(3, h);
  EXPECT_EQ(gone->state, AdoptState::kExited);
  EXPECT_EQ(gone->exit->exit_code, -1);
  h.slurm_job = 0;
  auto by_name = actuator_->Adopt(5, h);
  EXPECT_EQ(by_name->state, AdoptState::kRunning);
  EXPECT_EQ(by_name->handle.slurm_job, 42);
  slurm_->calls.clear();
  auto cut = actuator_->Adopt(6, h);
  EXPECT_EQ(cut->state, AdoptState::kNeverStarted);
  EXPECT_THAT(slurm_->calls, ElementsAre("cancel 43"));
  EXPECT_EQ(actuator_->Adopt(7, h)->state, AdoptState::kNeverStarted);  // not job 45
  // A job named like run 8's but another user's is not airtime's: not adopted, not touched.
  slurm_->calls.clear();
  auto fake = actuator_->Adopt(8, h);
  EXPECT_EQ(fake->state, AdoptState::kNeverStarted);
  EXPECT_NE(fake->handle.slurm_job, 44);
  EXPECT_TRUE(slurm_->calls.empty());
  // The adopted running job is watched: its GPUs and its end come through.
  Poll();
  auto placed = actuator_->TakePlaced();
  ASSERT_EQ(placed.size(), 2u);
  slurm_->Edit(40)->state = "COMPLETED";
  auto exits = Poll();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].run_id, 1);
}

// At a start, this daemon's live jobs whose runs the store does not know (a crash took their
// rows) are found by name, and ended only when asked.
TEST_F(SlurmActuatorTest, UnrecordedRunsAreThisDaemonsLiveJobsTheStoreDoesNotKnow) {
  auto job = [&](int64_t id, const std::string& name, const std::string& user) {
    slurm_->Run(id, "n1", "h100", {0});
    slurm_->Edit(id)->name = name;
    slurm_->Edit(id)->user = user;
    slurm_->Edit(id)->comment = "airtime: a run [store 0123abcd]";
  };
  job(40, "airtime.train.r1", "airtime");   // recorded
  job(42, "airtime.lost.r.r5", "airtime");  // lost: its workload's name has ".r" in it
  job(43, "airtime.held.r70", "airtime");   // lost, pending
  slurm_->Edit(43)->state = "PENDING";
  job(44, "airtime.fake.r8", "mallory");  // another user's look-alike
  job(45, "airtime.done.r9", "airtime");  // ended
  slurm_->Edit(45)->state = "COMPLETED";
  job(46, "airtime.odd.r9x", "airtime");    // not a run's name
  job(47, "airtime..r", "airtime");         // nor this
  job(48, "other.train.r3", "airtime");     // another prefix
  job(49, "airtime.theirs.r6", "airtime");  // another daemon's, under the same user
  slurm_->Edit(49)->comment = "airtime: a run [store 99ffee]";
  auto lost = actuator_->Unrecorded({1, 2, 3});
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  ASSERT_EQ(lost->size(), 2u);
  EXPECT_EQ((*lost)[0].run_id, 5);
  EXPECT_EQ((*lost)[0].workload, "lost.r");
  EXPECT_EQ((*lost)[0].handle.slurm_job, 42);
  EXPECT_EQ((*lost)[0].what, "slurm job 42 'airtime.lost.r.r5' (RUNNING)");
  EXPECT_EQ((*lost)[1].run_id, 70);
  EXPECT_TRUE(slurm_->calls.empty());  // found, not touched
  ASSERT_TRUE(actuator_->EndUnrecorded((*lost)[1]).ok());
  EXPECT_THAT(slurm_->calls, ElementsAre("cancel 43"));
  EXPECT_TRUE(actuator_->Unrecorded({1, 5, 70})->empty());
}

TEST_F(SlurmActuatorTest, OthersRunningJobsAreForeign) {
  const int64_t mine = Start("train", 7, {"slurm:n1:0"});
  slurm_->Run(mine, "n1", "h100", {0});
  slurm_->Run(500, "n3", "a100", {6, 7});
  slurm_->Edit(500)->name = "alice-job";
  slurm_->Edit(500)->user = "alice";
  Poll();
  auto foreign = actuator_->TakeForeign();
  ASSERT_TRUE(foreign.has_value());
  ASSERT_EQ(foreign->size(), 2u);
  EXPECT_EQ((*foreign)[0].gpu, "slurm:n3:6");
  EXPECT_THAT((*foreign)[0].owner, HasSubstr("alice"));
  EXPECT_EQ((*foreign)[0].milli, 1000);  // whole GPUs
  Poll();
  EXPECT_FALSE(actuator_->TakeForeign().has_value());  // unchanged
  slurm_->Edit(500)->state = "COMPLETED";
  Poll();
  foreign = actuator_->TakeForeign();
  ASSERT_TRUE(foreign.has_value());
  EXPECT_TRUE(foreign->empty());
}

// A job's full record that cannot be read fails the poll: its GPUs do not look free.
TEST_F(SlurmActuatorTest, AFullRecordThatCannotBeReadFailsThePoll) {
  slurm_->Run(500, "n3", "a100", {0});
  Poll();
  ASSERT_EQ(actuator_->TakeForeign()->size(), 1u);
  slurm_->FailJobReads(true);
  slurm_->Run(501, "n3", "a100", {1});
  const int64_t errors = actuator_->poll_errors();
  Poll();
  EXPECT_EQ(actuator_->poll_errors(), errors + 1);
  EXPECT_FALSE(actuator_->TakeForeign().has_value());
  EXPECT_THAT(actuator_->Describe(), HasSubstr("connection reset"));
  slurm_->FailJobReads(false);
  Poll();
  EXPECT_EQ(actuator_->TakeForeign()->size(), 2u);
}

TEST_F(SlurmActuatorTest, GpusOfNodesSlurmWillNotUseAreReportedWhenThatChanges) {
  SlurmNode n1;
  n1.name = "n1";
  n1.state = "idle";
  SlurmNode n3 = n1;
  n3.name = "n3";
  n3.state = "down";
  slurm_->SetNodes({n1, n3});
  Poll();
  auto unusable = actuator_->TakeUnusable();
  ASSERT_TRUE(unusable.has_value());
  EXPECT_EQ(unusable->size(), 8u);
  EXPECT_EQ(unusable->front(), "slurm:n3:0");
  Poll();
  EXPECT_FALSE(actuator_->TakeUnusable().has_value());  // unchanged
  n3.state = "idle";
  n1.state_flags = {"DRAIN"};
  slurm_->SetNodes({n1, n3});
  Poll();
  unusable = actuator_->TakeUnusable();
  ASSERT_TRUE(unusable.has_value());
  EXPECT_EQ(unusable->front(), "slurm:n1:0");
  EXPECT_EQ(unusable->size(), 8u);
}

TEST_F(SlurmActuatorTest, WakeInterruptsAWait) {
  SlurmActuatorOptions o;
  o.poll_interval = 60s;
  auto client = std::make_unique<ScriptedSlurm>();
  ScriptedSlurm* fake = client.get();
  SlurmActuator slow(std::move(client), std::make_unique<ReaderOf>(fake), cluster_, o);
  slow.WaitForExits(0);
  const auto t0 = std::chrono::steady_clock::now();
  std::thread waker([&] {
    std::this_thread::sleep_for(50ms);
    slow.Wake();
  });
  slow.WaitForExits(-1);
  waker.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

// The poller runs on its own: a job's end it reads ends a long wait at once, not at the
// wait's timeout.
TEST_F(SlurmActuatorTest, AnEndThePollerFindsEndsAWaitAtOnce) {
  SlurmActuatorOptions o;
  o.poll_interval = 20ms;
  auto client = std::make_unique<ScriptedSlurm>();
  ScriptedSlurm* fake = client.get();
  SlurmActuator a(std::move(client), std::make_unique<ReaderOf>(fake), cluster_, o);
  auto h = a.Launch(Request("train", 7, {"slurm:n1:0"}));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_TRUE(a.Watch(7, *h).ok());
  fake->Run(h->slurm_job, "n1", "h100", {0});
  // Its GPUs come through first (a wait returns for them too).
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  std::vector<Placed> placed;
  while (placed.empty() && std::chrono::steady_clock::now() < give_up) {
    EXPECT_TRUE(a.WaitForExits(100).empty());
    placed = a.TakePlaced();
  }
  ASSERT_EQ(placed.size(), 1u);
  std::thread ender([&] {
    std::this_thread::sleep_for(100ms);
    auto j = fake->Edit(h->slurm_job);
    j->state = "COMPLETED";
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto exits = a.WaitForExits(30'000);
  const auto waited = std::chrono::steady_clock::now() - t0;
  ender.join();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].run_id, 7);
  EXPECT_EQ(exits[0].how, "completed");
  EXPECT_GE(waited, 90ms);
  EXPECT_LT(waited, 5s);  // the end, a poll (20 ms) after it; not the 30 s timeout
}

// A poll that read Slurm's job list before the job was submitted, applied after it is
// watched, does not report it gone; one begun after does see it.
TEST_F(SlurmActuatorTest, APollBegunBeforeAWatchSaysNothingOfTheJob) {
  slurm_->HoldNextRead([&] { actuator_->PollSoon(); });
  const int64_t held = actuator_->polls();
  const int64_t job = Start("train", 7, {"slurm:n1:0"});  // not in the held read's list
  RunHandle adopted;
  adopted.slurm_job = 40;
  slurm_->Run(40, "n1", "h100", {1});
  slurm_->Edit(40)->name = "airtime.old.r8";
  ASSERT_EQ(actuator_->Adopt(8, adopted)->state, AdoptState::kRunning);  // nor is this one
  slurm_->OpenGate();
  std::vector<Exited> exits;
  while (actuator_->last_applied_poll() < held)
    for (Exited& e : actuator_->WaitForExits(10)) exits.push_back(e);
  EXPECT_TRUE(exits.empty()) << exits[0].how;
  EXPECT_TRUE(Poll().empty());  // pending, and running
  slurm_->Edit(job)->state = "COMPLETED";
  slurm_->Edit(40)->state = "COMPLETED";
  exits = Poll();
  ASSERT_EQ(exits.size(), 2u);
  EXPECT_EQ(exits[0].how, "completed");
  EXPECT_EQ(exits[1].how, "completed");
  EXPECT_TRUE(Poll().empty());  // once
}

// A stop's hold of a job that had not started: a poll begun before the hold (here it shows
// the job pending) does not conclude that the hold took; one begun after it does.
TEST_F(SlurmActuatorTest, APollBegunBeforeAStopsActionSaysNothingOfIt) {
  const int64_t job = Start("eval", 8, {"slurm:n3:0"});
  const int64_t reads = slurm_->state_reads();
  ASSERT_TRUE(actuator_->Stop(8, 0).ok());  // not running: held at the next poll
  while (slurm_->state_reads() == reads) std::this_thread::sleep_for(1ms);
  // That poll's snapshot waits unapplied while the next one begins and is held.
  slurm_->HoldNextRead([&] { actuator_->PollSoon(); });
  const int64_t held = actuator_->polls();
  slurm_->calls.clear();
  std::vector<Exited> exits;
  while (actuator_->last_applied_poll() < held - 1)
    for (Exited& e : actuator_->WaitForExits(10)) exits.push_back(e);
  EXPECT_THAT(slurm_->calls, ElementsAre("hold " + std::to_string(job)));
  // It started just before the hold reached Slurm; the held read still says pending.
  slurm_->Run(job, "n3", "a100", {0});
  slurm_->OpenGate();
  while (actuator_->last_applied_poll() < held)
    for (Exited& e : actuator_->WaitForExits(10)) exits.push_back(e);
  EXPECT_TRUE(exits.empty()) << exits[0].how;
  EXPECT_TRUE(Poll().empty());  // running: not held after all
  {
    auto j = slurm_->Edit(job);
    j->state = "PENDING";
    j->priority = 0;
  }
  exits = Poll();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].run_id, 8);
}

// Jobs watched, started and ended while the poller reads on and on (every millisecond):
// each end is reported exactly once, and no job is ever reported gone.
TEST_F(SlurmActuatorTest, EachEndIsReportedOnceWhileThePollerRunsOnAndOn) {
  SlurmActuatorOptions o;
  o.poll_interval = 1ms;
  auto client = std::make_unique<ScriptedSlurm>();
  ScriptedSlurm* fake = client.get();
  SlurmActuator a(std::move(client), std::make_unique<ReaderOf>(fake), cluster_, o);
  constexpr int kRuns = 60;
  std::map<int64_t, int64_t> job_of;
  std::map<int64_t, std::vector<std::string>> ends;
  auto collect = [&](int timeout_ms) {
    for (const Exited& e : a.WaitForExits(timeout_ms)) ends[e.run_id].push_back(e.how);
  };
  for (int64_t run = 1; run <= kRuns; ++run) {
    auto h = a.Launch(Request("w" + std::to_string(run), run, {"slurm:n1:0"}));
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    ASSERT_TRUE(a.Watch(run, *h).ok());
    job_of[run] = h->slurm_job;
    if (run % 2 == 0) fake->Run(h->slurm_job, "n1", "h100", {0});
    if (run % 3 == 0) fake->Edit(job_of[run / 2])->state = "COMPLETED";
    collect(0);
  }
  for (const auto& [run, job] : job_of) fake->Edit(job)->state = "COMPLETED";
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (ends.size() < job_of.size() && std::chrono::steady_clock::now() < give_up) collect(50);
  for (int i = 0; i < 5; ++i) collect(5);  // and nothing more comes
  ASSERT_EQ(ends.size(), job_of.size());
  for (const auto& [run, hows] : ends) EXPECT_THAT(hows, ElementsAre("completed")) << "run " << run;
}

// A job's full record (its GPUs) is read once per run of it; many new at once, in one read
// of the whole list.
TEST_F(SlurmActuatorTest, FullRecordsAreReadOncePerJobAndInOneListWhenMany) {
  const int64_t job = Start("train", 7, {"slurm:n1:0"});
  slurm_->Run(job, "n1", "h100", {0});
  const int64_t reads = slurm_->job_reads();
  Poll();
  EXPECT_EQ(slurm_->job_reads(), reads + 1);
  ASSERT_EQ(actuator_->TakePlaced().size(), 1u);
  Poll();
  Poll();
  EXPECT_EQ(slurm_->job_reads(), reads + 1);
  for (int64_t j = 500; j < 540; ++j) {
    slurm_->Run(j, "n3", "a100", {static_cast<int>(j % 8)});
    slurm_->Edit(j)->user = "alice";
  }
  const int64_t lists = slurm_->list_reads();
  Poll();
  EXPECT_EQ(slurm_->list_reads(), lists + 1);
  EXPECT_EQ(slurm_->job_reads(), reads + 1);
  auto foreign = actuator_->TakeForeign();
  ASSERT_TRUE(foreign.has_value());
  EXPECT_EQ(foreign->size(), 40u);
  Poll();
  EXPECT_EQ(slurm_->list_reads(), lists + 1);
  EXPECT_EQ(actuator_->list_reads(), 1);
}

// The starts of one cycle, with three submitters: the new jobs are submitted (each once),
// a parked job is steered and released on the calling thread, a request Slurm cannot run is
// refused before anything is submitted, and each result is in its request's place; each
// launched job is then watched and placed like one from Launch.
TEST_F(SlurmActuatorTest, LaunchAllSubmitsACyclesJobsConcurrentlyEachInItsPlace) {
  Make(3);
  // A parked job of workload "eval".
  const int64_t parked = Start("eval", 8, {"slurm:n3:0"});
  slurm_->Run(parked, "n3", "a100", {0});
  Poll();
  ASSERT_TRUE(actuator_->Stop(8, 0).ok());
  Poll();
  {
    auto j = slurm_->Edit(parked);
    j->state = "PENDING";
    j->priority = 0;
    j->restarts = 1;
  }
  ASSERT_EQ(Poll().size(), 1u);
  (void)actuator_->TakePlaced();  // run 8's
  slurm_->calls.clear();
  slurm_->submitted.clear();

  LaunchRequest fraction = Request("half", 12, {"slurm:n3:3"});  // n3: no shards
  fraction.share_milli = 500;
  const auto before = std::chrono::steady_clock::now();
  std::vector<LaunchResult> out = actuator_->LaunchAll({
      Request("eval", 9, {"slurm:n3:5"}),
      Request("train", 10, {"slurm:n1:0", "slurm:n1:1"}),
      Request("svc", 11, {"slurm:n1:2"}),
      fraction,
      Request("embed", 13, {"slurm:n5:0"}),
  });
  ASSERT_EQ(out.size(), 5u);
  ASSERT_TRUE(out[0].handle.ok()) << out[0].handle.status().ToString();
  EXPECT_EQ(out[0].handle->slurm_job, parked);
  EXPECT_FALSE(out[3].handle.ok());
  EXPECT_THAT(out[3].handle.status().message(), HasSubstr("no gres/shard"));
  std::set<int64_t> ids;
  for (size_t i : {1u, 2u, 4u}) {
    ASSERT_TRUE(out[i].handle.ok()) << out[i].handle.status().ToString();
    ids.insert(out[i].handle->slurm_job);
    EXPECT_EQ(out[i].handle->run_dir, "/data/runs/" + std::to_string(9 + i));
  }
  EXPECT_EQ(ids, (std::set<int64_t>{101, 102, 103}));
  for (const LaunchResult& r : out) EXPECT_GE(r.done, before);
  std::multiset<std::string> names;
  for (const JobRequest& r : slurm_->submitted) names.insert(r.name);
  EXPECT_EQ(names, (std::multiset<std::string>{"airtime.train.r10", "airtime.svc.r11",
                                               "airtime.embed.r13"}));
  // The parked job's steering first, on this thread; then the submissions.
  ASSERT_GE(slurm_->calls.size(), 2u);
  EXPECT_EQ(slurm_->calls[0], "nodes " + std::to_string(parked) + " n3");
  EXPECT_EQ(slurm_->calls[1], "release " + std::to_string(parked));
  EXPECT_EQ(std::count(slurm_->calls.begin(), slurm_->calls.end(), "submit"), 3);

  // Watched and placed as launched.
  for (size_t i : {0u, 1u, 2u, 4u})
    ASSERT_TRUE(actuator_->Watch(9 + static_cast<int64_t>(i), *out[i].handle).ok());
  slurm_->Run(out[1].handle->slurm_job, "n1", "h100", {4, 5});
  Poll();
  auto placed = actuator_->TakePlaced();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].run_id, 10);
  EXPECT_THAT(placed[0].gpus, ElementsAre("slurm:n1:4", "slurm:n1:5"));
}

// A submission Slurm refuses is an error in its place; the others of the batch are launched.
TEST_F(SlurmActuatorTest, LaunchAllReportsARefusedSubmissionInItsPlace) {
  Make(2);
  slurm_->refuse = {"airtime.b.r2"};
  std::vector<LaunchResult> out = actuator_->LaunchAll({
      Request("a", 1, {"slurm:n1:0"}),
      Request("b", 2, {"slurm:n1:1"}),
      Request("c", 3, {"slurm:n1:2"}),
  });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].handle.ok());
  ASSERT_FALSE(out[1].handle.ok());
  EXPECT_EQ(out[1].handle.status().message(), "Slurm refused airtime.b.r2");
  EXPECT_TRUE(out[2].handle.ok());
  EXPECT_EQ(slurm_->submitted.size(), 3u);
  // Launch is a batch of one.
  auto one = actuator_->Launch(Request("b", 4, {"slurm:n1:1"}));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
}

}  // namespace
}  // namespace airtime::slurm
