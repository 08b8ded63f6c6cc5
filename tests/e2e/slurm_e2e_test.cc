// End-to-end tests of airtime's Slurm client (src/airtime/slurm/) against a real Slurm 22.05:
// each test starts its own lab with scripts/slurm-lab.sh (4 emulated nodes: n1-n2 with 8
// fake h100, n3-n4 with 8 fake a100; its own directory and ports), drives it through
// slurmrestd and scontrol as the Slurm backend will, and stops it (stop --purge) whatever
// happened, leaving no daemon behind.
//
// They need root (slurmd runs jobs as their users; the lab installs Debian's Slurm packages
// with apt-get when they are missing) and skip, saying why, elsewhere. CI runs them as root.
//
// AIRTIME_SLURM_E2E_KEEP=1 leaves the lab running after a test, to look at its logs
// (stop it with AIRTIME_SLURM_DIR=DIR scripts/slurm-lab.sh stop --purge).
//
// Run as `slurm_e2e_test --airtime=PATH [gtest flags]` (tests/CMakeLists.txt; the airtime
// binary is not used yet: the backend that will use this client comes next).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "airtime/slurm/rest_client.h"
#include "airtime/slurm/slurm_cluster.h"
#include "e2e_util.h"
#include "slurm_lab.h"

namespace {

namespace fs = std::filesystem;
using airtime::Status;
using airtime::StatusCode;
using airtime::e2e::MsSince;
using airtime::e2e::ReadFile;
using airtime::e2e::Shell;
using airtime::e2e::WaitFor;
using airtime::slurm::ConnectSlurm;
using airtime::slurm::JobRequest;
using airtime::slurm::SlurmClient;
using airtime::slurm::SlurmConnectOptions;
using airtime::slurm::SlurmJob;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using namespace std::chrono_literals;

class SlurmE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = airtime::e2e::CannotStartLab();
    if (!why.empty()) GTEST_SKIP() << "Slurm lab: " << why;
    ASSERT_TRUE(lab_.Start());
    dir_ = lab_.dir();
    env_ = lab_.env();
    SlurmConnectOptions o;
    o.rest.url = env_["SLURMRESTD_URL"];
    o.rest.user = env_["SLURM_REST_USER"];
    o.rest.token = env_["SLURM_REST_TOKEN"];
    o.scontrol.slurm_conf = env_["SLURM_CONF"];
    options_ = o;
    auto client = ConnectSlurm(o);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(*client);
  }

  void TearDown() override {
    client_.reset();
    lab_.Stop(HasFailure());
  }

  // The job `id` as Slurm reports it now (a job with id 0 when it is gone).
  SlurmJob Job(int64_t id) {
    auto jobs = client_->Jobs();
    EXPECT_TRUE(jobs.ok()) << jobs.status().ToString();
    if (jobs.ok())
      for (const SlurmJob& j : *jobs)
        if (j.id == id) return j;
    return SlurmJob{};
  }

  JobRequest GpuJob(const std::string& name, const std::string& type, int gpus) {
    JobRequest r;
    r.name = name;
    r.comment = "airtime: e2e " + name;
    r.partition = "low";
    r.gpu_type = type;
    r.gpus_per_node = gpus;
    r.script = "#!/bin/bash\necho \"CVD=$CUDA_VISIBLE_DEVICES host=$SLURMD_NODENAME\"\nsleep 600\n";
    r.working_directory = dir_ + "/out";
    r.standard_output = dir_ + "/out/%j.out";
    r.grace_signal = airtime::slurm::GraceSignal{"USR1", 30};
    return r;
  }

  airtime::e2e::SlurmLab lab_;
  std::string dir_;
  std::map<std::string, std::string> env_;
  SlurmConnectOptions options_;
  std::unique_ptr<SlurmClient> client_;
};

TEST_F(SlurmE2E, ReadsTypedNodesAndPartitions) {
  EXPECT_EQ(client_->ApiVersion(), "v0.0.38");
  EXPECT_THAT(client_->SlurmRelease(), HasSubstr("22.05"));
  auto nodes = client_->Nodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_THAT(*nodes, SizeIs(4));
  std::map<std::string, std::string> type_of;
  for (const auto& n : *nodes) {
    // 8 GPUs, and the lab's gres/shard: 1000 per GPU (scripts/slurm-lab.sh).
    ASSERT_THAT(n.gres, SizeIs(2)) << n.name;
    EXPECT_EQ(n.gres[0].name, "gpu") << n.name;
    EXPECT_EQ(n.gres[0].count, 8) << n.name;
    EXPECT_EQ(airtime::slurm::ShardCount(n.gres), 8000) << n.name;
    EXPECT_TRUE(n.Usable()) << n.name << " " << n.state;
    type_of[n.name] = n.gres[0].type;
  }
  EXPECT_EQ(type_of["n1"], "h100");
  EXPECT_EQ(type_of["n2"], "h100");
  EXPECT_EQ(type_of["n3"], "a100");
  EXPECT_EQ(type_of["n4"], "a100");
  auto parts = client_->Partitions();
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_THAT(*parts, SizeIs(2));
  EXPECT_EQ((*parts)[0].name, "low");
  EXPECT_TRUE((*parts)[0].is_default);
  EXPECT_THAT((*parts)[1].nodes, ElementsAre("n1", "n2", "n3", "n4"));

  // A wrong token is refused with a clear error, not a crash.
  SlurmConnectOptions bad = options_;
  bad.rest.token = "not-a-jwt";
  auto refused = ConnectSlurm(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().ToString(), HasSubstr("ping"));
}

// The Start and Preempt actions of the backend: a held job steered with ReqNodeList to a
// chosen node, released, its GPU indices read back (and seen by the job itself as
// CUDA_VISIBLE_DEVICES), requeued, requeued held, released again, cancelled.
TEST_F(SlurmE2E, SteersAHeldJobReadsItsGpusRequeuesAndCancels) {
  // A foreign job (submitted with sbatch, not by airtime) takes n4's GPUs 0-2 first, so
  // Slurm's choice for ours on n4 is not simply 0-1.
  ASSERT_EQ(Shell("SLURM_CONF=" + env_["SLURM_CONF"] +
                  " sbatch -Q -p low -w n4 --gres=gpu:a100:3 -J foreign -o /dev/null "
                  "--wrap 'sleep 600'"),
            0);
  // How long each action takes until Slurm has accepted it (printed, not asserted: the
  // issue's overhead target is measured by the bench).
  auto t0 = std::chrono::steady_clock::now();
  auto id = client_->Submit(GpuJob("steer", "a100", 2));
  std::cerr << "submit (held): " << MsSince(t0) << " ms\n";
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  SlurmJob j = Job(*id);
  ASSERT_EQ(j.id, *id);
  EXPECT_TRUE(j.Held()) << j.state << " " << j.state_reason;
  EXPECT_EQ(j.name, "steer");
  EXPECT_EQ(j.comment, "airtime: e2e steer");

  {
    t0 = std::chrono::steady_clock::now();
    Status st = client_->SetRequiredNodes(*id, {"n4"});
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::cerr << "ReqNodeList (scontrol): " << MsSince(t0) << " ms\n";
  }
  EXPECT_THAT(Job(*id).required_nodes, ElementsAre("n4"));
  // A bad node name never reaches scontrol.
  EXPECT_FALSE(client_->SetRequiredNodes(*id, {"n4 Priority=1"}).ok());
  EXPECT_FALSE(client_->SetRequiredNodes(*id, {}).ok());

  const auto released = std::chrono::steady_clock::now();
  {
    Status st = client_->Release(*id);
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::cerr << "release: " << MsSince(released) << " ms\n";
  }
  ASSERT_TRUE(WaitFor([&] { return Job(*id).state == "RUNNING"; }, 20s))
      << "state " << Job(*id).state << " " << Job(*id).state_reason;
  std::cerr << "release to RUNNING (polled every 100 ms): " << MsSince(released) << " ms\n";
  t0 = std::chrono::steady_clock::now();
  {
    auto jobs = client_->Jobs();
    ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  }
  std::cerr << "list jobs: " << MsSince(t0) << " ms\n";
  j = Job(*id);
  EXPECT_THAT(j.nodes, ElementsAre("n4"));
  ASSERT_THAT(j.gpus, SizeIs(1));
  EXPECT_EQ(j.gpus[0].node, "n4");
  EXPECT_EQ(j.gpus[0].type, "a100");
  ASSERT_THAT(j.gpus[0].indices, SizeIs(2));
  for (int idx : j.gpus[0].indices) EXPECT_GE(idx, 3) << "n4's GPUs 0-2 are the foreign job's";
  {
    // The GPUs Slurm chose, as the engine's GPUs (what Engine::Adopt takes): n4 is the
    // fourth node of 8 GPUs, so its GPU i is the engine's 24 + i.
    auto nodes = client_->Nodes();
    ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
    auto sc = airtime::slurm::ClusterFromSlurm(*nodes, "lab");
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    auto engine_gpus = sc->GpusOf(j);
    ASSERT_TRUE(engine_gpus.ok()) << engine_gpus.status().ToString();
    EXPECT_THAT(*engine_gpus, ElementsAre(24 + j.gpus[0].indices[0], 24 + j.gpus[0].indices[1]));
  }
  // The job sees the same GPUs.
  const std::string out_file = dir_ + "/out/" + std::to_string(*id) + ".out";
  ASSERT_TRUE(WaitFor([&] { return ReadFile(out_file).find("CVD=") != std::string::npos; }));
  EXPECT_THAT(ReadFile(out_file), HasSubstr("CVD=" + std::to_string(j.gpus[0].indices[0]) + "," +
                                            std::to_string(j.gpus[0].indices[1]) + " host=n4"));

  // The foreign job is seen too, with its GPUs.
  auto jobs = client_->Jobs();
  ASSERT_TRUE(jobs.ok());
  bool saw_foreign = false;
  for (const SlurmJob& f : *jobs) {
    if (f.name != "foreign") continue;
    saw_foreign = true;
    EXPECT_EQ(f.state, "RUNNING");
    ASSERT_THAT(f.gpus, SizeIs(1));
    EXPECT_THAT(f.gpus[0].indices, ElementsAre(0, 1, 2));
  }
  EXPECT_TRUE(saw_foreign);

  // The backend's poll reads the brief list (squeue) and one job in full: they agree with
  // the whole list on every field they carry.
  {
    t0 = std::chrono::steady_clock::now();
    auto brief = client_->JobStates();
    std::cerr << "list jobs in brief (squeue): " << MsSince(t0) << " ms\n";
    ASSERT_TRUE(brief.ok()) << brief.status().ToString();
    ASSERT_EQ(brief->size(), jobs->size());
    for (const SlurmJob& b : *brief) {
      SlurmJob full = Job(b.id);
      ASSERT_EQ(full.id, b.id);
      EXPECT_EQ(b.state, full.state) << b.id;
      EXPECT_EQ(b.state_reason, full.state_reason) << b.id;
      EXPECT_EQ(b.restarts, full.restarts) << b.id;
      EXPECT_EQ(b.exit_code, full.exit_code) << b.id;
      EXPECT_EQ(b.priority, full.priority) << b.id;
      EXPECT_EQ(b.user, full.user) << b.id;
      EXPECT_TRUE(b.gpus.empty());
    }
    t0 = std::chrono::steady_clock::now();
    auto one = client_->Job(*id);
    std::cerr << "one job in full: " << MsSince(t0) << " ms\n";
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    EXPECT_EQ(one->name, "steer");
    ASSERT_THAT(one->gpus, SizeIs(1));
    EXPECT_EQ(one->gpus[0].indices, j.gpus[0].indices);
    auto unknown = client_->Job(999999);
    EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound) << unknown.status().ToString();
  }

  // A running job cannot be steered: ReqNodeList is for pending jobs (22.05 answers
  // "Invalid node name specified for job N").
  {
    Status st = client_->SetRequiredNodes(*id, {"n3"});
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr("Invalid node name"));
  }

  // Preempt: requeue. The job goes back to pending, counted as a restart.
  {
    t0 = std::chrono::steady_clock::now();
    Status st = client_->Requeue(*id, /*hold=*/false);
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::cerr << "requeue (scontrol): " << MsSince(t0) << " ms\n";
  }
  ASSERT_TRUE(WaitFor([&] { return Job(*id).state == "PENDING"; })) << Job(*id).state;
  EXPECT_EQ(Job(*id).restarts, 1);
  // Slurm would restart it by itself only after about 2 minutes (its begin time is set
  // 121 s ahead); Release makes it eligible now. It stays on n4 (ReqNodeList stays).
  EXPECT_EQ(Job(*id).state_reason, "BeginTime");
  // Released at once after the requeue, Release first waits for the next second: a run
  // allocated within the second of the requeue would be refused by slurmd ("Job credential
  // revoked") and FAIL.
  t0 = std::chrono::steady_clock::now();
  Status again = client_->Release(*id);
  ASSERT_TRUE(again.ok()) << again.ToString();
  ASSERT_TRUE(WaitFor([&] { return Job(*id).state == "RUNNING"; }))
      << Job(*id).state << " " << Job(*id).state_reason;
  std::cerr << "release after requeue to RUNNING: " << MsSince(t0) << " ms\n";
  EXPECT_THAT(Job(*id).nodes, ElementsAre("n4"));

  // Preempt and keep it: requeuehold; it stays pending and held until released.
  {
    Status st = client_->Requeue(*id, /*hold=*/true);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  ASSERT_TRUE(WaitFor([&] { return Job(*id).Held(); })) << Job(*id).state;
  EXPECT_EQ(Job(*id).restarts, 2);
  {
    auto brief = client_->JobStates();
    ASSERT_TRUE(brief.ok()) << brief.status().ToString();
    auto it =
        std::find_if(brief->begin(), brief->end(), [&](const SlurmJob& b) { return b.id == *id; });
    ASSERT_NE(it, brief->end());
    EXPECT_TRUE(it->Held()) << it->state << " " << it->priority;
    EXPECT_EQ(it->restarts, 2);
  }
  std::this_thread::sleep_for(1s);
  EXPECT_TRUE(Job(*id).Held()) << "a requeued-held job must not start by itself";
  // Steer it elsewhere while pending (n3, also a100), then release it.
  {
    Status st = client_->SetRequiredNodes(*id, {"n3"});
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  {
    Status st = client_->Release(*id);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  ASSERT_TRUE(WaitFor([&] { return Job(*id).state == "RUNNING"; }, 30s)) << Job(*id).state;
  j = Job(*id);
  EXPECT_THAT(j.nodes, ElementsAre("n3"));
  ASSERT_THAT(j.gpus, SizeIs(1));
  EXPECT_THAT(j.gpus[0].indices, ElementsAre(0, 1));
  // The job itself runs there, on those GPUs (the output file is appended to by each run).
  ASSERT_TRUE(WaitFor([&] {
    return ReadFile(out_file).find("CVD=0,1 host=n3") != std::string::npos;
  })) << ReadFile(out_file);

  {
    Status st = client_->Cancel(*id);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  ASSERT_TRUE(WaitFor([&] {
    const std::string s = Job(*id).state;
    return s == "CANCELLED" || s.empty();
  })) << Job(*id).state;
  // Actions on a job Slurm does not know fail with Slurm's reason.
  Status gone = client_->Cancel(999999);
  ASSERT_FALSE(gone.ok());
  EXPECT_THAT(gone.message(), HasSubstr("Invalid job id"));
  EXPECT_FALSE(client_->Requeue(999999, false).ok());
}

// Hold, priority and release of a pending job; a GPU type no node has stays pending.
TEST_F(SlurmE2E, HoldsPrioritizesAndReleases) {
  JobRequest r = GpuJob("prio", "h100", 8);
  r.hold = false;
  r.script = "#!/bin/bash\nsleep 600\n";
  // Fill both h100 nodes so the next h100 job must wait.
  for (int i = 0; i < 2; ++i) {
    auto filler = client_->Submit(r);
    ASSERT_TRUE(filler.ok()) << filler.status().ToString();
  }
  auto id = client_->Submit(r);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(WaitFor([&] { return Job(*id).state_reason == "Resources"; }))
      << Job(*id).state_reason;
  {
    Status st = client_->SetPriority(*id, 424242);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  EXPECT_EQ(Job(*id).priority, 424242);
  {
    Status st = client_->Hold(*id);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  EXPECT_TRUE(Job(*id).Held());
  // Slurm refuses a priority while held (the hold is priority 0): the error says so.
  Status held = client_->SetPriority(*id, 5);
  ASSERT_FALSE(held.ok());
  EXPECT_THAT(held.message(), HasSubstr("held"));
  {
    Status st = client_->Release(*id);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  EXPECT_FALSE(Job(*id).Held());
  EXPECT_EQ(Job(*id).state, "PENDING");
  EXPECT_FALSE(client_->SetPriority(*id, 0).ok());

  JobRequest none = GpuJob("no-such-type", "b200", 1);
  none.hold = false;
  auto nid = client_->Submit(none);
  // 22.05 refuses a GRES type no node has at submission.
  if (nid.ok()) {
    std::this_thread::sleep_for(500ms);
    EXPECT_EQ(Job(*nid).state, "PENDING");
  } else {
    EXPECT_THAT(nid.status().message(), HasSubstr("job/submit"));
  }
}

// The checkpoint grace: a signal reaches the job's own script, which can checkpoint and end.
TEST_F(SlurmE2E, SignalsARunningJobForItsCheckpoint) {
  JobRequest r = GpuJob("grace", "h100", 1);
  r.hold = false;
  r.script =
      "#!/bin/bash\ntrap 'echo checkpointed; exit 0' USR1\necho started\n"
      "while true; do sleep 0.1; done\n";
  auto id = client_->Submit(r);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  const std::string out_file = dir_ + "/out/" + std::to_string(*id) + ".out";
  ASSERT_TRUE(WaitFor([&] { return ReadFile(out_file).find("started") != std::string::npos; }))
      << Job(*id).state << " " << Job(*id).state_reason;
  {
    Status st = client_->Signal(*id, "USR1");
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  ASSERT_TRUE(WaitFor([&] { return ReadFile(out_file).find("checkpointed") != std::string::npos; }))
      << ReadFile(out_file);
  ASSERT_TRUE(WaitFor([&] { return Job(*id).state == "COMPLETED"; })) << Job(*id).state;
  EXPECT_FALSE(client_->Signal(*id, "USR1; rm").ok());
  EXPECT_FALSE(client_->Signal(999999, "USR1").ok());
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // --airtime=PATH is accepted (every e2e entry passes it) but not needed yet.
  return RUN_ALL_TESTS();
}
