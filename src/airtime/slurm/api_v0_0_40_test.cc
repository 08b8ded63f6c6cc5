// The shapes of v0.0.40 and later against the lab's answers rewritten into those versions'
// shapes (testdata/derive_v0_0_4x.py: the same jobs, nodes and partitions as
// api_v0_0_38_test.cc reads, so the same expectations hold).
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

class V004x : public ::testing::TestWithParam<const char*> {
 protected:
  json Sample(const std::string& name) const {
    std::ifstream f(std::string(AIRTIME_SOURCE_DIR) + "/src/airtime/slurm/testdata/" + GetParam() +
                    "/" + name);
    std::stringstream s;
    s << f.rdbuf();
    json j = json::parse(s.str(), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << name;
    return j;
  }
  // The job_resources node list that gres_detail follows, and its name key.
  json& AllocatedNode(json& job, size_t k) const {
    if (std::string(GetParam()) == "v0.0.40") return job["job_resources"]["allocated_nodes"][k];
    return job["job_resources"]["nodes"]["allocation"][k];
  }
  std::string NameKey() const { return std::string(GetParam()) == "v0.0.40" ? "nodename" : "name"; }

  std::unique_ptr<ApiShapes> shapes_ = ShapesFor(GetParam());
};

TEST_P(V004x, ReadsNodesWithStateArrays) {
  ASSERT_NE(shapes_, nullptr);
  EXPECT_EQ(shapes_->Version(), GetParam());
  EXPECT_EQ(shapes_->Path("jobs"), std::string("/slurm/") + GetParam() + "/jobs");
  auto nodes = shapes_->ParseNodes(Sample("nodes.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 4u);
  const SlurmNode& n1 = (*nodes)[0];
  EXPECT_EQ(n1.name, "n1");
  EXPECT_EQ(n1.state, "mixed");  // ["MIXED"]
  EXPECT_THAT(n1.state_flags, IsEmpty());
  EXPECT_THAT(n1.partitions, ElementsAre("low", "high"));
  ASSERT_EQ(n1.gres.size(), 1u);
  EXPECT_EQ(n1.gres[0].type, "h100");
  EXPECT_THAT(n1.gres_used[0].indices, ElementsAre(0, 1, 2));
  EXPECT_TRUE(n1.Usable());

  auto down = shapes_->ParseNodes(Sample("nodes_down.json"));
  ASSERT_TRUE(down.ok()) << down.status().ToString();
  EXPECT_TRUE((*down)[0].Usable());
  EXPECT_EQ((*down)[2].state, "idle");  // ["IDLE", "DRAIN"]
  EXPECT_THAT((*down)[2].state_flags, ElementsAre("DRAIN"));
  EXPECT_FALSE((*down)[2].Usable());
  EXPECT_EQ((*down)[3].state, "down");
  EXPECT_FALSE((*down)[3].Usable());

  json bad = Sample("nodes.json");
  bad["nodes"][1]["state"] = json::array({"INVALID"});  // Slurm's word for an unset state
  EXPECT_EQ((*shapes_->ParseNodes(bad))[1].state, "unknown");
  EXPECT_FALSE((*shapes_->ParseNodes(bad))[1].Usable());
  bad["nodes"][1]["state"] = json::array({"DRAIN"});
  EXPECT_THAT(shapes_->ParseNodes(bad).status().message(),
              HasSubstr("nodes[1].state: no base state"));
  bad["nodes"][1]["state"] = "idle";  // v0.0.38's form
  EXPECT_THAT(shapes_->ParseNodes(bad).status().message(),
              HasSubstr("nodes[1].state: expected an array"));
}

TEST_P(V004x, ReadsPartitionsFromTheirNestedFields) {
  auto parts = shapes_->ParsePartitions(Sample("partitions.json"));
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].name, "low");
  EXPECT_THAT((*parts)[0].nodes, ElementsAre("n1", "n2", "n3", "n4"));
  EXPECT_EQ((*parts)[1].priority_tier, 10);
  EXPECT_EQ((*parts)[1].state, "UP");
  EXPECT_FALSE((*parts)[0].is_default);  // these versions do not write the flag

  json bad = Sample("partitions.json");
  bad["partitions"][1]["nodes"]["configured"] = "n[1-";
  EXPECT_THAT(shapes_->ParsePartitions(bad).status().message(),
              HasSubstr("partitions[1].nodes.configured"));
}

TEST_P(V004x, ReadsJobsWithTheGpuIndicesSlurmChosePerNode) {
  auto jobs = shapes_->ParseJobs(Sample("jobs.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 4u);
  const SlurmJob& j1 = (*jobs)[0];
  EXPECT_EQ(j1.id, 1);
  EXPECT_EQ(j1.name, "w1");
  EXPECT_EQ(j1.comment, "airtime: test");
  EXPECT_EQ(j1.state, "RUNNING");
  EXPECT_EQ(j1.priority, 100126);  // {"set": true, "number": 100126}
  EXPECT_EQ(j1.submit_time, 1796194096);
  EXPECT_EQ(j1.start_time, 1796194110);
  EXPECT_EQ(j1.exit_code, 0);
  EXPECT_THAT(j1.nodes, ElementsAre("n4"));
  EXPECT_THAT(j1.required_nodes, ElementsAre("n4"));
  ASSERT_EQ(j1.gpus.size(), 1u);
  EXPECT_EQ(j1.gpus[0].node, "n4");
  EXPECT_EQ(j1.gpus[0].type, "a100");
  EXPECT_THAT(j1.gpus[0].indices, ElementsAre(0, 1));
  EXPECT_THAT((*jobs)[1].gpus[0].indices, ElementsAre(2, 3));

  const SlurmJob& gang = (*jobs)[2];
  EXPECT_THAT(gang.nodes, ElementsAre("n1", "n2"));
  ASSERT_EQ(gang.gpus.size(), 2u);
  EXPECT_EQ(gang.gpus[1].node, "n2");
  EXPECT_THAT(gang.gpus[1].indices, ElementsAre(0, 1, 2));

  const SlurmJob& held = (*jobs)[3];
  EXPECT_TRUE(held.Held());
  EXPECT_EQ(held.state_reason, "JobHeldUser");
  EXPECT_THAT(held.gpus, IsEmpty());
  EXPECT_FALSE(j1.Held());

  // gres_detail follows the allocation's node order, not "nodes".
  json swapped = Sample("jobs.json");
  json& gang_json = swapped["jobs"][2];
  std::swap(AllocatedNode(gang_json, 0)[NameKey()], AllocatedNode(gang_json, 1)[NameKey()]);
  auto reordered = shapes_->ParseJobs(swapped);
  ASSERT_TRUE(reordered.ok()) << reordered.status().ToString();
  EXPECT_EQ((*reordered)[2].gpus[0].node, "n2");
}

TEST_P(V004x, ReadsTheGpuAJobsShardsCameFromAndARequeuedHeldJob) {
  auto jobs = shapes_->ParseJobs(Sample("jobs_shards.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 4u);
  EXPECT_EQ((*jobs)[0].gpus[0].shards, 500);
  EXPECT_THAT((*jobs)[0].gpus[0].indices, ElementsAre(0));
  EXPECT_EQ((*jobs)[2].gpus[0].type, "h100");
  EXPECT_THAT((*jobs)[2].gpus[0].indices, ElementsAre(1, 2, 3));
  EXPECT_EQ((*jobs)[3].gpus[0].node, "n2");

  auto requeued = shapes_->ParseJobs(Sample("jobs_requeued.json"));
  ASSERT_TRUE(requeued.ok()) << requeued.status().ToString();
  EXPECT_TRUE((*requeued)[0].Held());
  EXPECT_EQ((*requeued)[0].restarts, 1);
}

// A state array stands for the word squeue (job_state_string) shows: a flag such as
// COMPLETING or REQUEUED before the base state.
TEST_P(V004x, AJobsStateIsTheWordSqueueShows) {
  const json base = Sample("jobs.json");
  auto state_of = [&](const json& words) -> StatusOr<std::string> {
    json b = base;
    b["jobs"][0]["job_state"] = words;
    auto jobs = shapes_->ParseJobs(b);
    if (!jobs.ok()) return jobs.status();
    return (*jobs)[0].state;
  };
  EXPECT_EQ(*state_of({"RUNNING", "COMPLETING"}), "COMPLETING");
  EXPECT_EQ(*state_of({"PENDING", "REQUEUED"}), "REQUEUED");
  EXPECT_EQ(*state_of({"FAILED", "LAUNCH_FAILED"}), "FAILED");
  EXPECT_EQ(*state_of({"CONFIGURING", "RUNNING"}), "CONFIGURING");
  EXPECT_EQ(*state_of({"PENDING", "EXPEDITING", "REQUEUED"}), "EXPEDITING");  // 25.11
  EXPECT_THAT(state_of(json::array()).status().message(),
              HasSubstr("jobs[0].job_state: missing or empty"));
  EXPECT_THAT(state_of({"UPDATE_DB"}).status().message(), HasSubstr("no base state"));
  EXPECT_THAT(state_of("RUNNING").status().message(),
              HasSubstr("jobs[0].job_state: expected an array"));
}

// The exit code object becomes the wait status v0.0.38 and squeue report.
TEST_P(V004x, AnExitCodeBecomesAWaitStatus) {
  const json base = Sample("jobs.json");
  auto code_of = [&](const json& code) -> StatusOr<int64_t> {
    json b = base;
    b["jobs"][0]["exit_code"] = code;
    auto jobs = shapes_->ParseJobs(b);
    if (!jobs.ok()) return jobs.status();
    return (*jobs)[0].exit_code;
  };
  const json unset = {{"set", false}, {"infinite", false}, {"number", 0}};
  auto num = [](int64_t n) { return json{{"set", true}, {"infinite", false}, {"number", n}}; };
  EXPECT_EQ(*code_of({{"status", {"ERROR"}}, {"return_code", num(3)}}), 3 << 8);
  EXPECT_EQ(*code_of({{"status", {"SIGNALED"}},
                      {"return_code", unset},
                      {"signal", {{"id", num(9)}, {"name", "KILL"}}}}),
            9);
  EXPECT_EQ(*code_of({{"status", {"PENDING"}}, {"return_code", unset}}), 0);
  EXPECT_EQ(*code_of(256), 256);  // a plain wait status, as v0.0.38 writes it
  EXPECT_EQ(*code_of({{"status", {"INVALID"}}, {"return_code", num(70000)}}), -1);
  // What the object does not say is unknown (-1), not success.
  EXPECT_EQ(*code_of({{"status", {"SIGNALED"}}, {"return_code", unset}}), -1);
  EXPECT_EQ(*code_of({{"status", {"CORE_DUMPED"}}, {"signal", {{"id", unset}}}}), -1);
  EXPECT_EQ(*code_of({{"status", {"SIGNALED"}}, {"signal", {{"id", num(128)}}}}), -1);
  EXPECT_EQ(*code_of({{"status", {"ERROR"}}, {"return_code", unset}}), -1);
  EXPECT_EQ(*code_of({{"status", {"INVALID"}}, {"return_code", num(3)}}), -1);
  EXPECT_EQ(*code_of({{"status", {"SUCCESS"}}, {"return_code", num(0)}}), 0);
  EXPECT_THAT(code_of("0").status().message(),
              HasSubstr("jobs[0].exit_code: expected an object or an integer"));
  EXPECT_THAT(code_of({{"return_code", {{"set", "yes"}}}}).status().message(),
              HasSubstr("jobs[0].exit_code.return_code.set: expected a boolean"));
}

TEST_P(V004x, ReportsSlurmsErrorsReleaseAndAHeldSubmission) {
  Status st = shapes_->ResponseErrors(Sample("job_not_found.json"), "GET job/999");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("Invalid job id specified"));
  EXPECT_TRUE(shapes_->ResponseErrors(Sample("ping.json"), "ping").ok());
  EXPECT_EQ(shapes_->ParseRelease(Sample("ping.json")),
            std::string(GetParam()) == "v0.0.40" ? "23.11.10" : "24.05.8");
  auto id = shapes_->ParseSubmitted(Sample("submit_held.json"));  // the notice is a warning
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, 10);
}

TEST_P(V004x, BuildsASubmission) {
  JobRequest r;
  r.name = "train-7";
  r.comment = "airtime: placed on n3 for value";
  r.partition = "low";
  r.gpu_type = "a100";
  r.gpus_per_node = 2;
  r.nodes = 2;
  r.required_nodes = {"n3", "n4"};
  r.script = "#!/bin/bash\nexec python3 train.py\n";
  r.environment["AIRTIME_CHECKPOINT_DIR"] = "/ckpt/7";
  r.grace_signal = GraceSignal{"USR1", 30};
  r.time_limit_minutes = 90;
  auto body = shapes_->SubmitBody(r);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_FALSE(body->contains("script"));  // deprecated at the top from v0.0.41
  const json& job = (*body)["job"];
  EXPECT_EQ(job["script"], r.script);
  EXPECT_EQ(job["tres_per_node"], "gres/gpu:a100:2");
  EXPECT_FALSE(job.contains("gres"));
  EXPECT_EQ(job["nodes"], "2");
  EXPECT_EQ(job["required_nodes"], "n3,n4");
  EXPECT_EQ(job["hold"], true);
  EXPECT_EQ(job["kill_warning_signal"], "USR1");
  EXPECT_EQ(job["kill_warning_delay"], 30);
  EXPECT_EQ(job["time_limit"], 90);
  EXPECT_EQ(job["partition"], "low");
  ASSERT_TRUE(job["environment"].is_array());
  EXPECT_EQ(job["environment"][0], "PATH=/usr/local/bin:/usr/bin:/bin");
  EXPECT_EQ(job["environment"][1], "AIRTIME_CHECKPOINT_DIR=/ckpt/7");
  EXPECT_FALSE(job.contains("standard_output"));
  r.standard_output = "/data/runs/7/stdout.log";
  r.environment["PATH"] = "/opt/bin";
  r.required_nodes.clear();
  r.gpu_type.clear();
  body = shapes_->SubmitBody(r);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)["job"]["standard_output"], r.standard_output);
  EXPECT_EQ((*body)["job"]["open_mode"], json::array({"APPEND"}));
  EXPECT_EQ((*body)["job"]["environment"][0], "PATH=/opt/bin");
  EXPECT_EQ((*body)["job"]["tres_per_node"], "gres/gpu:2");
  EXPECT_FALSE((*body)["job"].contains("required_nodes"));

  r.gpus_per_node = 0;
  r.shards_per_node = 500;
  EXPECT_EQ((*shapes_->SubmitBody(r))["job"]["tres_per_node"], "gres/shard:500");
  r.gpus_per_node = 1;
  EXPECT_THAT(shapes_->SubmitBody(r).status().message(), HasSubstr("whole GPUs and shards"));
  r.gpus_per_node = 0;
  r.required_nodes = {"n1,n2"};
  EXPECT_THAT(shapes_->SubmitBody(r).status().message(), HasSubstr("node name"));
  r.required_nodes.clear();
  r.script = "echo no shebang";
  EXPECT_THAT(shapes_->SubmitBody(r).status().message(), HasSubstr("#!"));
}

// From 24.11 slurmctld signals through slurm_kill_jobs: a job it could not signal is listed
// in "status" with its error, not in "errors"; one already ended is no failure.
TEST_P(V004x, ASignalsFailuresPerJobAreErrors) {
  const json ok = {{"status", json::array()}, {"errors", json::array()}};
  EXPECT_TRUE(shapes_->SignalErrors(ok, "cancel of job 5").ok());
  json failed = ok;
  failed["status"].push_back({{"error",
                               {{"string", "Invalid job id specified"},
                                {"code", 2017},
                                {"message", "Unable to find JobId=5"}}},
                              {"job_id", {{"set", true}, {"number", 5}}}});
  Status st = shapes_->SignalErrors(failed, "cancel of job 5");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("cancel of job 5: slurmrestd: Invalid job id specified: "
                                      "Unable to find JobId=5 (error code 2017)"));
  failed["status"][0]["error"]["code"] = 2021;  // ESLURM_ALREADY_DONE
  EXPECT_TRUE(shapes_->SignalErrors(failed, "cancel of job 5").ok());
  failed["status"] = json::array({"x", 1, {{"error", "x"}}, {{"error", {{"code", "2017"}}}}});
  EXPECT_TRUE(shapes_->SignalErrors(failed, "cancel of job 5").ok());  // nothing it can read
  EXPECT_FALSE(shapes_->SignalErrors(Sample("job_not_found.json"), "x").ok());  // "errors"
}

TEST_P(V004x, UpdateBodies) {
  EXPECT_EQ(shapes_->ReleaseBody(), json({{"hold", false}, {"begin_time", "now"}}));
  EXPECT_EQ(shapes_->HoldBody(), json({{"hold", true}}));
  EXPECT_EQ(shapes_->PriorityBody(7), json({{"priority", 7}}));
  EXPECT_EQ(shapes_->RequiredNodesBody({"n1", "n3"}), json({{"required_nodes", "n1,n3"}}));
}

TEST_P(V004x, NamesTheFieldThatIsWrong) {
  json jobs = Sample("jobs.json");
  jobs["jobs"][1]["priority"] = {{"set", "yes"}, {"number", 1}};
  EXPECT_THAT(shapes_->ParseJobs(jobs).status().message(),
              HasSubstr("jobs[1].priority.set: expected a boolean, got string"));
  jobs = Sample("jobs.json");
  jobs["jobs"][1]["start_time"] = "soon";
  EXPECT_THAT(shapes_->ParseJobs(jobs).status().message(),
              HasSubstr("jobs[1].start_time: expected an integer or {set, infinite, number}"));
  jobs = Sample("jobs.json");
  AllocatedNode(jobs["jobs"][0], 0)[NameKey()] = "";
  EXPECT_THAT(shapes_->ParseJobs(jobs).status().message(), HasSubstr(NameKey() + ": empty"));
  jobs = Sample("jobs.json");
  jobs["jobs"][2]["gres_detail"].erase(1);
  EXPECT_THAT(shapes_->ParseJobs(jobs).status().message(),
              HasSubstr("jobs[2].gres_detail: 1 entries for 2 nodes"));
  jobs = Sample("jobs.json");
  jobs["jobs"][0]["job_resources"] = json::array();
  EXPECT_THAT(shapes_->ParseJobs(jobs).status().message(),
              HasSubstr("jobs[0].job_resources: expected an object"));
  // An unset number is the fallback; an infinite one too.
  jobs = Sample("jobs.json");
  jobs["jobs"][0]["priority"] = {{"set", true}, {"infinite", true}, {"number", 0}};
  jobs["jobs"][0]["start_time"] = {{"set", false}, {"infinite", false}, {"number", 5}};
  auto parsed = shapes_->ParseJobs(jobs);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ((*parsed)[0].priority, -1);  // not 0: that would read as held
  EXPECT_EQ((*parsed)[0].start_time, 0);
  jobs["jobs"][0]["job_state"] = json::array({"PENDING"});
  EXPECT_FALSE((*shapes_->ParseJobs(jobs))[0].Held());
}

// Every field of every job, and of its nested objects, replaced by a value of each JSON type
// in turn: the parser answers (a value or an error), never throws or crashes.
TEST_P(V004x, SurvivesAnyTypeInAnyField) {
  const auto jobs = MutateEveryField(Sample("jobs.json"), "jobs", true,
                                     [&](const json& b) { return shapes_->ParseJobs(b).ok(); });
  EXPECT_GT(jobs.errors, 0);
  EXPECT_GT(jobs.parsed, 0);
  MutateEveryField(Sample("nodes.json"), "nodes", true,
                   [&](const json& b) { return shapes_->ParseNodes(b).ok(); });
  MutateEveryField(Sample("partitions.json"), "partitions", true,
                   [&](const json& b) { return shapes_->ParsePartitions(b).ok(); });
}

INSTANTIATE_TEST_SUITE_P(SlurmApi, V004x, ::testing::Values("v0.0.40", "v0.0.41"));

// Slurm 23.11 serves v0.0.38 beside v0.0.39 and v0.0.40: the newest is chosen. Each of
// v0.0.41 to v0.0.44 has its shapes (they write alike what airtime reads: api_v0_0_40.cc).
TEST(ApiVersion, ChoosesTheNewestOfANewerSlurm) {
  const json slurm_23_11 = {{"paths",
                             {{"/slurm/v0.0.38/jobs", json::object()},
                              {"/slurm/v0.0.39/jobs", json::object()},
                              {"/slurm/v0.0.40/jobs", json::object()}}}};
  EXPECT_EQ(*ChooseApiVersion(slurm_23_11), "v0.0.40");
  const json slurm_25_11 = {{"paths",
                             {{"/slurm/v0.0.42/jobs", json::object()},
                              {"/slurm/v0.0.43/jobs", json::object()},
                              {"/slurm/v0.0.44/jobs", json::object()}}}};
  EXPECT_EQ(*ChooseApiVersion(slurm_25_11), "v0.0.44");
  for (const std::string& v : SupportedApiVersions()) {
    auto shapes = ShapesFor(v);
    ASSERT_NE(shapes, nullptr) << v;
    EXPECT_EQ(shapes->Version(), v);
  }
  EXPECT_EQ(ShapesFor("v0.0.39"), nullptr);
}

}  // namespace
}  // namespace airtime::slurm
