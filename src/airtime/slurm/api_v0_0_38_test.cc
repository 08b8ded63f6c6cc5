// The v0.0.38 shapes against answers recorded from Debian 12's slurmrestd 22.05.8
// (testdata/v0.0.38/, captured from scripts/slurm-lab.sh's lab: 4 nodes, n1-n2 with 8 h100,
// n3-n4 with 8 a100).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "airtime/slurm/api_shapes.h"
#include "airtime/slurm/shapes_test_util.h"

namespace airtime::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using json = nlohmann::json;

json Sample(const std::string& name) {
  std::ifstream f(std::string(AIRTIME_SOURCE_DIR) + "/src/airtime/slurm/testdata/v0.0.38/" + name);
  std::stringstream s;
  s << f.rdbuf();
  json j = json::parse(s.str(), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << name;
  return j;
}

class V0038 : public ::testing::Test {
 protected:
  std::unique_ptr<ApiShapes> shapes_ = ShapesFor("v0.0.38");
};

TEST_F(V0038, ReadsTheLabsNodesWithTypedGpus) {
  auto nodes = shapes_->ParseNodes(Sample("nodes.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 4u);
  const SlurmNode& n1 = (*nodes)[0];
  EXPECT_EQ(n1.name, "n1");
  EXPECT_EQ(n1.state, "mixed");
  EXPECT_THAT(n1.partitions, ElementsAre("low", "high"));
  ASSERT_EQ(n1.gres.size(), 1u);
  EXPECT_EQ(n1.gres[0].type, "h100");
  EXPECT_EQ(n1.gres[0].count, 8);
  ASSERT_EQ(n1.gres_used.size(), 1u);
  EXPECT_THAT(n1.gres_used[0].indices, ElementsAre(0, 1, 2));
  EXPECT_EQ(n1.cpus, 64);
  EXPECT_TRUE(n1.Usable());
  EXPECT_EQ((*nodes)[3].gres[0].type, "a100");
}

TEST_F(V0038, DrainedAndDownNodesAreNotUsable) {
  auto nodes = shapes_->ParseNodes(Sample("nodes_down.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  EXPECT_TRUE((*nodes)[0].Usable());
  EXPECT_FALSE((*nodes)[2].Usable());
  EXPECT_THAT((*nodes)[2].state_flags, ElementsAre("DRAIN"));
  EXPECT_EQ((*nodes)[2].reason, "airtime test");
  EXPECT_EQ((*nodes)[3].state, "down");
  EXPECT_FALSE((*nodes)[3].Usable());
  EXPECT_THAT((*nodes)[3].gres_used[0].indices, IsEmpty());
}

TEST_F(V0038, ReadsPartitions) {
  auto parts = shapes_->ParsePartitions(Sample("partitions.json"));
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].name, "low");
  EXPECT_TRUE((*parts)[0].is_default);
  EXPECT_THAT((*parts)[0].nodes, ElementsAre("n1", "n2", "n3", "n4"));
  EXPECT_EQ((*parts)[1].name, "high");
  EXPECT_FALSE((*parts)[1].is_default);
  EXPECT_EQ((*parts)[1].priority_tier, 10);
}

TEST_F(V0038, ReadsJobsWithTheGpuIndicesSlurmChosePerNode) {
  auto jobs = shapes_->ParseJobs(Sample("jobs.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 4u);
  const SlurmJob& j1 = (*jobs)[0];
  EXPECT_EQ(j1.id, 1);
  EXPECT_EQ(j1.name, "w1");
  EXPECT_EQ(j1.comment, "airtime: test");
  EXPECT_EQ(j1.state, "RUNNING");
  EXPECT_THAT(j1.nodes, ElementsAre("n4"));
  EXPECT_THAT(j1.required_nodes, ElementsAre("n4"));
  ASSERT_EQ(j1.gpus.size(), 1u);
  EXPECT_EQ(j1.gpus[0].node, "n4");
  EXPECT_EQ(j1.gpus[0].type, "a100");
  EXPECT_THAT(j1.gpus[0].indices, ElementsAre(0, 1));
  EXPECT_THAT((*jobs)[1].gpus[0].indices, ElementsAre(2, 3));  // the same node, the next two

  const SlurmJob& gang = (*jobs)[2];  // submitted with sbatch: a foreign job
  EXPECT_EQ(gang.name, "foreign");
  EXPECT_THAT(gang.nodes, ElementsAre("n1", "n2"));
  ASSERT_EQ(gang.gpus.size(), 2u);
  EXPECT_EQ(gang.gpus[1].node, "n2");
  EXPECT_EQ(gang.gpus[1].type, "h100");
  EXPECT_THAT(gang.gpus[1].indices, ElementsAre(0, 1, 2));

  const SlurmJob& held = (*jobs)[3];
  EXPECT_TRUE(held.Held());
  EXPECT_EQ(held.state_reason, "JobHeldUser");
  EXPECT_THAT(held.nodes, IsEmpty());
  EXPECT_THAT(held.gpus, IsEmpty());
  EXPECT_FALSE(j1.Held());
}

// Recorded with gres/shard configured (1000 per GPU): on n1, two jobs of shard:500 and one
// of gpu:h100:3; on n2 one of shard:300. Slurm put both halves on GPU 0 and the whole GPUs
// on 1-3, past the sharded one.
TEST_F(V0038, ReadsTheGpuAJobsShardsCameFrom) {
  auto jobs = shapes_->ParseJobs(Sample("jobs_shards.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 4u);
  for (int k : {0, 1}) {
    const SlurmJob& half = (*jobs)[static_cast<size_t>(k)];
    EXPECT_EQ(half.name, "half" + std::to_string(k + 1));
    ASSERT_EQ(half.gpus.size(), 1u);
    EXPECT_EQ(half.gpus[0].node, "n1");
    EXPECT_EQ(half.gpus[0].type, "");  // shards are untyped
    EXPECT_EQ(half.gpus[0].shards, 500);
    EXPECT_THAT(half.gpus[0].indices, ElementsAre(0));
  }
  const SlurmJob& whole = (*jobs)[2];
  ASSERT_EQ(whole.gpus.size(), 1u);
  EXPECT_EQ(whole.gpus[0].shards, 0);
  EXPECT_EQ(whole.gpus[0].type, "h100");
  EXPECT_THAT(whole.gpus[0].indices, ElementsAre(1, 2, 3));
  ASSERT_EQ((*jobs)[3].gpus.size(), 1u);
  EXPECT_EQ((*jobs)[3].gpus[0].node, "n2");
  EXPECT_EQ((*jobs)[3].gpus[0].shards, 300);

  auto nodes = shapes_->ParseNodes(Sample("nodes_shards.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ(GpuCount((*nodes)[0].gres), 8);
  EXPECT_EQ(ShardCount((*nodes)[0].gres), 8000);
  // In use: 22.05 counts the GPUs with shards in use here, not the shards.
  EXPECT_EQ(ShardCount((*nodes)[0].gres_used), 1);
  EXPECT_EQ(GpuCount((*nodes)[0].gres_used), 3);
}

TEST_F(V0038, ARequeueHeldJobIsPendingHeldWithARestart) {
  auto jobs = shapes_->ParseJobs(Sample("jobs_requeued.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_TRUE((*jobs)[0].Held());
  EXPECT_EQ((*jobs)[0].restarts, 1);
}

TEST_F(V0038, ReportsSlurmsErrorsAndRelease) {
  const json missing = Sample("job_not_found.json");
  Status st = shapes_->ResponseErrors(missing, "GET job/999");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("Invalid job id specified"));
  EXPECT_THAT(st.message(), HasSubstr("2017"));
  EXPECT_TRUE(shapes_->ResponseErrors(Sample("ping.json"), "ping").ok());
  EXPECT_EQ(shapes_->ParseRelease(Sample("ping.json")), "22.05.8");
}

TEST_F(V0038, ASubmissionSucceedsDespiteTheHeldStateWarning) {
  auto id = shapes_->ParseSubmitted(Sample("submit_held.json"));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, 10);
  auto refused = shapes_->ParseSubmitted(Sample("submit_bad_signal.json"));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("Invalid SIGNAL specification"));
}

TEST_F(V0038, BuildsASubmission) {
  JobRequest r;
  r.name = "train-7";
  r.comment = "airtime: placed on n3 for value";
  r.partition = "low";
  r.gpu_type = "a100";
  r.gpus_per_node = 2;
  r.nodes = 2;
  r.script = "#!/bin/bash\nexec python3 train.py\n";
  r.environment["AIRTIME_CHECKPOINT_DIR"] = "/ckpt/7";
  r.grace_signal = GraceSignal{"USR1", 30};
  r.time_limit_minutes = 90;
  auto body = shapes_->SubmitBody(r);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  const json& job = (*body)["job"];
  EXPECT_EQ((*body)["script"], r.script);
  EXPECT_EQ(job["gres"], "gpu:a100:2");
  EXPECT_EQ(job["nodes"], "2");  // a string: the array form is taken as one node
  EXPECT_EQ(job["hold"], true);
  EXPECT_EQ(job["signal"], "USR1@30");  // v0.0.38 refuses "B:USR1@30"
  EXPECT_EQ(job["time_limit"], 90);
  EXPECT_EQ(job["environment"]["AIRTIME_CHECKPOINT_DIR"], "/ckpt/7");
  EXPECT_TRUE(job["environment"].contains("PATH"));
  EXPECT_FALSE(job.contains("nodelist"));  // no required nodes: any
  EXPECT_FALSE(job.contains("standard_output"));
  r.standard_output = "/data/runs/7/stdout.log";
  EXPECT_EQ((*shapes_->SubmitBody(r))["job"]["standard_output"], r.standard_output);
  EXPECT_EQ((*shapes_->SubmitBody(r))["job"]["open_mode"], "append");
  r.standard_output.clear();
  r.gpu_type = "";
  EXPECT_EQ((*shapes_->SubmitBody(r))["job"]["gres"], "gpu:2");
}

// A fraction: gres/shard, untyped (Slurm ignores a shard's type; the node gives it); never
// with whole GPUs in the same job.
TEST_F(V0038, BuildsAShardSubmission) {
  JobRequest r;
  r.name = "half";
  r.gpu_type = "h100";
  r.shards_per_node = 500;
  r.required_nodes = {"n1"};
  r.script = "#!/bin/sh\nexec sleep 1\n";
  auto body = shapes_->SubmitBody(r);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ((*body)["job"]["gres"], "shard:500");
  EXPECT_EQ((*body)["job"]["nodelist"], "n1");
  r.gpus_per_node = 1;
  EXPECT_THAT(shapes_->SubmitBody(r).status().message(), HasSubstr("whole GPUs and shards"));
  r.gpus_per_node = 0;
  r.shards_per_node = -1;
  EXPECT_EQ(shapes_->SubmitBody(r).status().code(), StatusCode::kInvalidArgument);
}

// The nodes a job must run on go in "nodelist" ("required_nodes" is a disabled key in
// v0.0.38's submission); a name that is not one node's name is refused.
TEST_F(V0038, SubmissionRequiresTheGivenNodes) {
  JobRequest r;
  r.name = "x";
  r.script = "#!/bin/sh\n";
  r.nodes = 2;
  r.required_nodes = {"n3", "gpu-a.01"};
  auto body = shapes_->SubmitBody(r);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ((*body)["job"]["nodelist"], "n3,gpu-a.01");
  EXPECT_FALSE((*body)["job"].contains("required_nodes"));
  for (const std::string bad : {"n[1-2]", "n1,n2", "", "n 1"}) {
    r.required_nodes = {"n3", bad};
    EXPECT_THAT(shapes_->SubmitBody(r).status().message(), HasSubstr("node name")) << bad;
  }
}

TEST_F(V0038, UpdateBodies) {
  EXPECT_EQ(shapes_->ReleaseBody(), json({{"hold", false}, {"begin_time", "now"}}));
  EXPECT_EQ(shapes_->HoldBody(), json({{"hold", true}}));
  EXPECT_EQ(shapes_->PriorityBody(7), json({{"priority", "7"}}));
  EXPECT_EQ(shapes_->RequiredNodesBody({"n1"}), std::nullopt);  // scontrol does it
}

TEST_F(V0038, RefusesABadSubmission) {
  JobRequest r;
  r.name = "x";
  r.script = "echo no shebang";
  EXPECT_THAT(shapes_->SubmitBody(r).status().message(), HasSubstr("#!"));
  r.script = "#!/bin/sh\n";
  r.grace_signal = GraceSignal{"B:USR1", 30};
  EXPECT_THAT(shapes_->SubmitBody(r).status().message(), HasSubstr("grace signal"));
  r.grace_signal.reset();
  r.nodes = 0;
  EXPECT_FALSE(shapes_->SubmitBody(r).ok());
}

TEST_F(V0038, NamesTheFieldThatIsWrong) {
  json jobs = Sample("jobs.json");
  jobs["jobs"][2]["job_id"] = "3";
  EXPECT_THAT(shapes_->ParseJobs(jobs).status().message(),
              HasSubstr("jobs[2].job_id: expected an integer, got string"));

  jobs = Sample("jobs.json");
  jobs["jobs"][2]["gres_detail"].erase(1);
  EXPECT_THAT(shapes_->ParseJobs(jobs).status().message(),
              HasSubstr("jobs[2].gres_detail: 1 entries for 2 nodes"));

  jobs = Sample("jobs.json");
  jobs["jobs"][0]["gres_detail"][0] = "gpu:a100:2(IDX:0-1";
  EXPECT_THAT(shapes_->ParseJobs(jobs).status().message(), HasSubstr("jobs[0].gres_detail[0]"));

  jobs = Sample("jobs.json");
  jobs["jobs"][1]["nodes"] = "n[4";
  EXPECT_THAT(shapes_->ParseJobs(jobs).status().message(), HasSubstr("jobs[1].nodes: hostlist"));

  jobs = Sample("jobs.json");
  jobs["jobs"][0]["job_resources"]["allocated_nodes"][0]["nodename"] = "";
  EXPECT_THAT(shapes_->ParseJobs(jobs).status().message(),
              HasSubstr("jobs[0].job_resources.allocated_nodes[0].nodename: empty"));

  json nodes = Sample("nodes.json");
  nodes["nodes"][1]["gres"] = 8;
  EXPECT_THAT(shapes_->ParseNodes(nodes).status().message(),
              HasSubstr("nodes[1].gres: expected a string"));
  nodes["nodes"] = json::object();
  EXPECT_THAT(shapes_->ParseNodes(nodes).status().message(), HasSubstr("nodes: expected an array"));
  EXPECT_FALSE(shapes_->ParsePartitions(json::array()).ok());
  EXPECT_FALSE(shapes_->ParseJobs(json("jobs")).ok());
}

// Every field of every recorded job, replaced by a value of each JSON type in turn: the
// parser answers (a value or an error), never throws or crashes.
TEST_F(V0038, SurvivesAnyTypeInAnyField) {
  const auto jobs = MutateEveryField(Sample("jobs.json"), "jobs", false,
                                     [&](const json& b) { return shapes_->ParseJobs(b).ok(); });
  EXPECT_GT(jobs.errors, 0);
  MutateEveryField(Sample("nodes.json"), "nodes", false,
                   [&](const json& b) { return shapes_->ParseNodes(b).ok(); });
}

TEST(ApiVersion, ChoosesTheNewestVersionBothSpeak) {
  auto v = ChooseApiVersion(Sample("openapi_paths.json"));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "v0.0.38");
  ASSERT_NE(ShapesFor(*v), nullptr);
  EXPECT_EQ(ShapesFor(*v)->Path("jobs"), "/slurm/v0.0.38/jobs");

  const json newer = {{"paths",
                       {{"/slurm/v0.0.41/jobs", json::object()},
                        {"/slurm/v0.0.40/jobs", json::object()},
                        {"/openapi", json::object()}}}};
  auto newest = ChooseApiVersion(newer);
  ASSERT_TRUE(newest.ok()) << newest.status().ToString();
  EXPECT_EQ(*newest, "v0.0.41");
  const json none = {{"paths", {{"/slurm/v0.0.39/jobs", json::object()}}}};
  EXPECT_THAT(ChooseApiVersion(none).status().message(), HasSubstr("offers v0.0.39"));
  EXPECT_FALSE(ChooseApiVersion(json::array()).ok());
  EXPECT_EQ(ShapesFor("v0.0.99"), nullptr);
}

}  // namespace
}  // namespace airtime::slurm
