// SlurmActuator against a scripted SlurmClient: what it asks Slurm, what it reports and when.
// The real thing is tested end to end against the lab (tests/e2e/slurm_backend_e2e_test.cc).
#include "airtime/slurm/slurm_actuator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

namespace airtime::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Jobs are whatever the test sets; every action is logged ("submit", "nodes 7 n1", ...).
class ScriptedSlurm final : public SlurmClient {
 public:
  std::vector<SlurmJob> jobs;
  std::vector<std::string> calls;
  std::vector<JobRequest> submitted;
  int64_t next_id = 100;
  bool jobs_fail = false;
  bool signal_fails = false;

  std::string ApiVersion() const override { return "v0.0.38"; }
  std::string SlurmRelease() const override { return "22.05.8"; }
  std::vector<SlurmNode> nodes;
  StatusOr<std::vector<SlurmNode>> Nodes() override { return nodes; }
  StatusOr<std::vector<SlurmPartition>> Partitions() override {
    return std::vector<SlurmPartition>{};
  }
  StatusOr<std::vector<SlurmJob>> Jobs() override {
    if (jobs_fail) return Status(StatusCode::kUnavailable, "GET /jobs: connection refused");
    return jobs;
  }
  StatusOr<int64_t> Submit(const JobRequest& r) override {
    submitted.push_back(r);
    calls.push_back("submit");
    SlurmJob j;
    j.id = next_id++;
    j.name = r.name;
    j.state = "PENDING";
    jobs.push_back(j);
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

  SlurmJob& Job(int64_t id) {
    for (SlurmJob& j : jobs)
      if (j.id == id) return j;
    jobs.push_back(SlurmJob{});
    jobs.back().id = id;
    return jobs.back();
  }
  void Run(int64_t id, const std::string& node, const std::string& type, std::vector<int> idx) {
    SlurmJob& j = Job(id);
    j.state = "RUNNING";
    j.priority = 1;
    j.nodes = {node};
    j.gpus = {NodeGpus{node, type, std::move(idx)}};
  }
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
    auto sc = ClusterFromSlurm(
        {Node("n1", "gpu:h100:8"), Node("n3", "gpu:a100:8"), Node("n5", "gpu:h100:4,gpu:a100:4")},
        "lab");
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    auto client = std::make_unique<ScriptedSlurm>();
    slurm_ = client.get();
    SlurmActuatorOptions o;
    o.poll_interval = 0ms;  // every WaitForExits polls
    o.user = "airtime";
    actuator_ = std::make_unique<SlurmActuator>(std::move(client), *sc, o);
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

  ScriptedSlurm* slurm_ = nullptr;
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
  EXPECT_EQ(r.comment, "airtime: training 'train' on n1 GPUs 0-1");
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
  // Refused, nothing submitted: mixed types, unequal counts, an unknown GPU, a fraction.
  const size_t before = slurm_->submitted.size();
  auto mixed = actuator_->Launch(Request("m", 3, {"slurm:n1:0", "slurm:n3:0"}));
  EXPECT_THAT(mixed.status().message(), HasSubstr("two types"));
  auto unequal = actuator_->Launch(Request("u", 4, {"slurm:n1:0", "slurm:n1:1", "slurm:n5:0"}));
  EXPECT_THAT(unequal.status().message(), HasSubstr("unequal"));
  auto unknown = actuator_->Launch(Request("x", 5, {"slurm:n9:0"}));
  EXPECT_THAT(unknown.status().message(), HasSubstr("slurm:n9:0"));
  LaunchRequest frac = Request("f", 6, {"slurm:n1:0"});
  frac.share_milli = 500;
  EXPECT_THAT(actuator_->Launch(frac).status().message(), HasSubstr("whole GPUs"));
  EXPECT_EQ(slurm_->submitted.size(), before);
}

TEST_F(SlurmActuatorTest, ReportsSlurmsGpusOnceAndTheEndOnce) {
  const int64_t job = Start("train", 7, {"slurm:n1:0", "slurm:n1:1"});
  EXPECT_TRUE(actuator_->WaitForExits(0).empty());
  EXPECT_TRUE(actuator_->TakePlaced().empty());  // still pending
  slurm_->Run(job, "n1", "h100", {2, 3});
  EXPECT_TRUE(actuator_->WaitForExits(0).empty());
  auto placed = actuator_->TakePlaced();
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].run_id, 7);
  EXPECT_THAT(placed[0].gpus, ElementsAre("slurm:n1:2", "slurm:n1:3"));
  EXPECT_TRUE(actuator_->WaitForExits(0).empty());
  EXPECT_TRUE(actuator_->TakePlaced().empty());  // once
  slurm_->Job(job).state = "COMPLETING";
  EXPECT_TRUE(actuator_->WaitForExits(0).empty());
  slurm_->Job(job).state = "FAILED";
  slurm_->Job(job).exit_code = 3 << 8;
  auto exits = actuator_->WaitForExits(0);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].run_id, 7);
  EXPECT_EQ(exits[0].exit_code, 3);
  EXPECT_EQ(exits[0].how, "failed");
  EXPECT_TRUE(actuator_->WaitForExits(0).empty());  // once
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
  actuator_->WaitForExits(0);
  slurm_->calls.clear();
  ASSERT_TRUE(actuator_->Stop(7, 60'000).ok());
  EXPECT_THAT(slurm_->calls, ElementsAre("signal 100 TERM"));
  actuator_->WaitForExits(0);  // within the grace: nothing more
  EXPECT_THAT(slurm_->calls, ElementsAre("signal 100 TERM"));
  // A grace of 0 for the second stop of another run: the requeue comes at the next poll.
  const int64_t job2 = Start("eval", 8, {"slurm:n3:0"});
  slurm_->Run(job2, "n3", "a100", {0});
  actuator_->WaitForExits(0);
  slurm_->calls.clear();
  ASSERT_TRUE(actuator_->Stop(8, 0).ok());
  EXPECT_TRUE(actuator_->WaitForExits(0).empty());
  EXPECT_THAT(slurm_->calls, ElementsAre("signal 101 TERM", "requeuehold 101"));
  SlurmJob& j = slurm_->Job(job2);
  j.state = "PENDING";
  j.priority = 0;
  j.restarts = 1;
  auto exits = actuator_->WaitForExits(0);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].run_id, 8);
  EXPECT_EQ(exits[0].how, "requeued");
  // The workload's next start: the same job, steered and released, nothing submitted.
  slurm_->calls.clear();
  EXPECT_EQ(Start("eval", 9, {"slurm:n3:5"}), job2);
  EXPECT_THAT(slurm_->calls, ElementsAre("nodes 101 n3", "release 101"));
  // Stopped again and retired (the workload was cancelled): the parked job is cancelled.
  slurm_->Run(job2, "n3", "a100", {5});
  actuator_->WaitForExits(0);
  ASSERT_TRUE(actuator_->Stop(9, 0).ok());
  actuator_->WaitForExits(0);
  slurm_->Job(job2).state = "PENDING";
  slurm_->Job(job2).priority = 0;
  EXPECT_EQ(actuator_->WaitForExits(0).size(), 1u);
  slurm_->calls.clear();
  actuator_->Retire("eval");
  EXPECT_THAT(slurm_->calls, ElementsAre("cancel 101"));
}

// A workload that checkpoints and exits on the signal, within its grace: its finished job is
// requeued and held all the same, and is its next start. StopNow cancels, parks nothing.
TEST_F(SlurmActuatorTest, AJobThatEndsWithinTheGraceIsParkedToo) {
  const int64_t job = Start("fin", 10, {"slurm:n1:4"});
  slurm_->Run(job, "n1", "h100", {4});
  actuator_->WaitForExits(0);
  ASSERT_TRUE(actuator_->Stop(10, 60'000).ok());
  slurm_->Job(job).state = "COMPLETED";
  slurm_->calls.clear();
  auto exits = actuator_->WaitForExits(0);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 0);
  EXPECT_EQ(exits[0].how, "completed, requeued");
  EXPECT_THAT(slurm_->calls, ElementsAre("requeuehold 100"));
  slurm_->calls.clear();
  EXPECT_EQ(Start("fin", 11, {"slurm:n1:4"}), job);
  EXPECT_THAT(slurm_->calls, ElementsAre("nodes 100 n1", "release 100"));
  slurm_->Run(job, "n1", "h100", {4});
  actuator_->WaitForExits(0);
  slurm_->calls.clear();
  ASSERT_TRUE(actuator_->StopNow(11).ok());
  EXPECT_THAT(slurm_->calls, ElementsAre("cancel 100"));
  slurm_->Job(job).state = "CANCELLED";
  slurm_->Job(job).exit_code = 15;
  exits = actuator_->WaitForExits(0);
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
  actuator_->WaitForExits(0);
  ASSERT_TRUE(actuator_->Stop(20, 0).ok());
  ASSERT_TRUE(actuator_->Stop(21, 0).ok());
  actuator_->WaitForExits(0);  // both requeued and held
  for (int64_t j : {a, b}) {
    slurm_->Job(j).state = "PENDING";
    slurm_->Job(j).priority = 0;
  }
  EXPECT_EQ(actuator_->WaitForExits(0).size(), 2u);
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

TEST_F(SlurmActuatorTest, AJobSlurmRequeuedByItselfIsCancelledAndReportedOnce) {
  const int64_t job = Start("train", 7, {"slurm:n1:0"});
  slurm_->Run(job, "n1", "h100", {0});
  actuator_->WaitForExits(0);
  // n1 went down: Slurm requeued the job (pending, eligible again later).
  SlurmJob& j = slurm_->Job(job);
  j.state = "PENDING";
  j.state_reason = "BeginTime";
  j.restarts = 1;
  j.nodes.clear();
  slurm_->calls.clear();
  auto exits = actuator_->WaitForExits(0);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, -1);
  EXPECT_THAT(exits[0].how, HasSubstr("requeued by Slurm (BeginTime)"));
  EXPECT_THAT(slurm_->calls, ElementsAre("cancel 100"));
  EXPECT_EQ(actuator_->slurm_requeues_seen(), 1);
  EXPECT_TRUE(actuator_->WaitForExits(0).empty());
}

TEST_F(SlurmActuatorTest, SlurmUnreachableConcludesNothing) {
  Start("train", 7, {"slurm:n1:0"});
  slurm_->jobs_fail = true;
  EXPECT_TRUE(actuator_->WaitForExits(0).empty());
  EXPECT_EQ(actuator_->poll_errors(), 1);
  EXPECT_THAT(actuator_->Describe(), HasSubstr("connection refused"));
  slurm_->jobs_fail = false;
  slurm_->jobs.clear();  // and then the job is gone
  auto exits = actuator_->WaitForExits(0);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_THAT(exits[0].how, HasSubstr("gone"));
}

TEST_F(SlurmActuatorTest, AdoptLooksTheJobUpInSlurm) {
  slurm_->Run(40, "n1", "h100", {0});
  slurm_->Job(40).name = "airtime.train.r1";
  slurm_->Job(41).state = "COMPLETED";
  slurm_->Run(42, "n3", "a100", {0});
  slurm_->Job(42).name = "airtime.lost.r5";  // submitted, not recorded
  slurm_->Job(42).user = "airtime";
  slurm_->Run(44, "n3", "a100", {1});
  slurm_->Job(44).name = "airtime.fake.r8";  // another user's look-alike
  slurm_->Job(44).user = "mallory";
  slurm_->Job(43).state = "PENDING";  // held: never released
  slurm_->Job(43).name = "airtime.cut.r6";
  slurm_->Job(43).user = "airtime";
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
  EXPECT_EQ(actuator_->Adopt(7, h)->state, AdoptState::kNeverStarted);
  // A job named like run 8's but another user's is not airtime's: not adopted, not touched.
  slurm_->calls.clear();
  auto fake = actuator_->Adopt(8, h);
  EXPECT_EQ(fake->state, AdoptState::kNeverStarted);
  EXPECT_NE(fake->handle.slurm_job, 44);
  EXPECT_TRUE(slurm_->calls.empty());
  // The adopted running job is watched: its GPUs and its end come through.
  actuator_->WaitForExits(0);
  auto placed = actuator_->TakePlaced();
  ASSERT_EQ(placed.size(), 2u);
  slurm_->Job(40).state = "COMPLETED";
  auto exits = actuator_->WaitForExits(0);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].run_id, 1);
}

TEST_F(SlurmActuatorTest, OthersRunningJobsAreForeign) {
  const int64_t mine = Start("train", 7, {"slurm:n1:0"});
  slurm_->Run(mine, "n1", "h100", {0});
  slurm_->Run(500, "n3", "a100", {6, 7});
  slurm_->Job(500).name = "alice-job";
  slurm_->Job(500).user = "alice";
  actuator_->WaitForExits(0);
  auto foreign = actuator_->TakeForeign();
  ASSERT_TRUE(foreign.has_value());
  ASSERT_EQ(foreign->size(), 2u);
  EXPECT_EQ((*foreign)[0].gpu, "slurm:n3:6");
  EXPECT_THAT((*foreign)[0].owner, HasSubstr("alice"));
  actuator_->WaitForExits(0);
  EXPECT_FALSE(actuator_->TakeForeign().has_value());  // unchanged
  slurm_->Job(500).state = "COMPLETED";
  actuator_->WaitForExits(0);
  foreign = actuator_->TakeForeign();
  ASSERT_TRUE(foreign.has_value());
  EXPECT_TRUE(foreign->empty());
}

TEST_F(SlurmActuatorTest, GpusOfNodesSlurmWillNotUseAreReportedWhenThatChanges) {
  SlurmNode n1;
  n1.name = "n1";
  n1.state = "idle";
  SlurmNode n3 = n1;
  n3.name = "n3";
  n3.state = "down";
  slurm_->nodes = {n1, n3};
  actuator_->WaitForExits(0);
  auto unusable = actuator_->TakeUnusable();
  ASSERT_TRUE(unusable.has_value());
  EXPECT_EQ(unusable->size(), 8u);
  EXPECT_EQ(unusable->front(), "slurm:n3:0");
  actuator_->WaitForExits(0);
  EXPECT_FALSE(actuator_->TakeUnusable().has_value());  // unchanged
  slurm_->nodes[1].state = "idle";
  slurm_->nodes[0].state_flags = {"DRAIN"};
  actuator_->WaitForExits(0);
  unusable = actuator_->TakeUnusable();
  ASSERT_TRUE(unusable.has_value());
  EXPECT_EQ(unusable->front(), "slurm:n1:0");
  EXPECT_EQ(unusable->size(), 8u);
}

TEST_F(SlurmActuatorTest, WakeInterruptsAWait) {
  SlurmActuatorOptions o;
  o.poll_interval = 60s;
  auto sc = ClusterFromSlurm({Node("n1", "gpu:h100:8")}, "lab");
  SlurmActuator slow(std::make_unique<ScriptedSlurm>(), *sc, o);
  slow.WaitForExits(0);  // the first poll is due at once
  const auto t0 = std::chrono::steady_clock::now();
  std::thread waker([&] {
    std::this_thread::sleep_for(50ms);
    slow.Wake();
  });
  slow.WaitForExits(-1);
  waker.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

}  // namespace
}  // namespace airtime::slurm
