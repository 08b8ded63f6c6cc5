#include "airtime/config/workload_yaml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "airtime/config/cluster_yaml.h"

namespace airtime {
namespace {

using ::testing::HasSubstr;

const GpuCatalog& Cat() { return GpuCatalog::Builtin(); }
GpuTypeId Type(const char* name) { return *Cat().Find(name); }

Scenario ParseOk(const std::string& text, const std::string& file = "w.yaml") {
  auto s = ParseWorkloadYaml(text, file);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : Scenario{};
}

// YAML merge keys: the fields of an anchored mapping, where the workload does not give them;
// the earlier of several merged mappings wins; a merge inside a merged mapping is read too.
TEST(WorkloadYamlTest, MergeKeysFillInTheFieldsAWorkloadDoesNotGive) {
  Scenario s = ParseOk(R"(anchors:
  base: &base {tenant: research, gpus: 2, value: {on_completion: 7}}
  train: &train {<<: *base, kind: training, gpus: 8, work: 2h}
  batch: &batch {kind: batch, tenant: product}
workloads:
  - <<: *train
    name: a
  - <<: [*batch, *train]
    name: b
    work: 30m
  - {<<: *base, name: c, kind: eval, work: 1h, gpus: 1}
)");
  ASSERT_EQ(s.workloads.size(), 3u);
  const WorkloadSpec& a = s.workloads[0];
  EXPECT_EQ(a.kind, WorkloadKind::kTraining);
  EXPECT_EQ(a.tenant, "research");
  EXPECT_EQ(a.shape.gpu_count, 8);  // train's own gpus, not base's
  EXPECT_EQ(a.work_seconds, 7200);
  EXPECT_EQ(a.value.on_completion, 7);
  const WorkloadSpec& b = s.workloads[1];
  EXPECT_EQ(b.kind, WorkloadKind::kBatch);  // batch is merged before train
  EXPECT_EQ(b.tenant, "product");
  EXPECT_EQ(b.shape.gpu_count, 8);
  EXPECT_EQ(b.work_seconds, 1800);  // its own
  const WorkloadSpec& c = s.workloads[2];
  EXPECT_EQ(c.kind, WorkloadKind::kEval);
  EXPECT_EQ(c.shape.gpu_count, 1);
  EXPECT_EQ(c.tenant, "research");
}

TEST(WorkloadYamlTest, RealtimeServiceWithEveryField) {
  Scenario s = ParseOk(R"(- name: chat-svc
  kind: realtime
  tenant: product
  priority: 10
  gpus: 1
  gpu_type: [H100, A100-80GB]
  prefer: [H100]
  gpu_fraction: 0.25
  memory_gb: 40
  locality: any
  cpu: 8
  memory_gib: 64
  speed: {T4: 0.2, H100: 2}
  utilization: 0.6
  submit_at: 2h
  preemptible: true
  preempt_grace: 45s
  slo: {latency_ms: 200, capacity_rps: 50, min_replicas: 1, max_replicas: 8, cold_start: 90s}
  demand: [{at: 0, rps: 10}, {at: 1h, rps: 50}]
  demand_trace: {format: azure, file: data/azure_code.csv, scale: 2}
  value: {per_1k_requests: 0.5}
)",
                       "scen/w.yaml");
  ASSERT_EQ(s.workloads.size(), 1u);
  const WorkloadSpec& w = s.workloads[0];
  EXPECT_EQ(w.name, "chat-svc");
  EXPECT_EQ(w.kind, WorkloadKind::kRealtime);
  EXPECT_EQ(w.tenant, "product");
  EXPECT_EQ(w.priority, 10);
  EXPECT_EQ(w.shape.gpu_count, 1);
  EXPECT_EQ(w.shape.allowed_types, (std::vector<GpuTypeId>{Type("H100"), Type("A100-80GB")}));
  EXPECT_EQ(w.shape.preferred_types, (std::vector<GpuTypeId>{Type("H100")}));
  EXPECT_EQ(w.shape.mode, ShareMode::kFraction);
  EXPECT_EQ(w.shape.gpu_milli, 250);
  EXPECT_EQ(w.shape.memory_gb, 40);
  EXPECT_EQ(w.shape.locality, Locality::kAny);
  EXPECT_EQ(w.shape.cpu_milli, 8000);
  EXPECT_EQ(w.shape.memory_mib, 64 * 1024);
  ASSERT_EQ(w.speed_overrides.size(), 2u);
  EXPECT_EQ(w.speed_overrides[0], (std::pair<GpuTypeId, double>{Type("T4"), 0.2}));
  EXPECT_DOUBLE_EQ(w.utilization, 0.6);
  EXPECT_EQ(w.submit_at, 2 * kHour);
  EXPECT_FALSE(w.deadline.has_value());
  EXPECT_TRUE(w.preemptible);
  EXPECT_EQ(w.preempt_grace, 45 * kSecond);
  EXPECT_EQ(w.realtime.latency_slo_ms, 200);
  EXPECT_EQ(w.realtime.capacity_rps, 50);
  EXPECT_EQ(w.realtime.min_replicas, 1);
  EXPECT_EQ(w.realtime.max_replicas, 8);
  EXPECT_EQ(w.realtime.cold_start, 90 * kSecond);
  ASSERT_EQ(w.realtime.demand.size(), 2u);
  EXPECT_EQ(w.realtime.demand[1].at, kHour);
  EXPECT_EQ(w.realtime.demand[1].rps, 50);
  EXPECT_EQ(w.value.per_1k_requests, 0.5);
  EXPECT_EQ(w.source, "scen/w.yaml:1");
  ASSERT_EQ(s.traces.size(), 1u);
  const TraceSource& t = s.traces[0];
  EXPECT_EQ(t.format, "azure");
  EXPECT_EQ(t.path, "scen/data/azure_code.csv");
  EXPECT_EQ(t.options,
            (std::map<std::string, std::string>{{"scale", "2"}, {"target", "chat-svc"}}));
  EXPECT_EQ(t.source, "scen/w.yaml:20");
}

TEST(WorkloadYamlTest, SingleWorkloadMappingTakesDefaults) {
  Scenario s = ParseOk("name: job\nwork: 2h\n");
  ASSERT_EQ(s.workloads.size(), 1u);
  const WorkloadSpec& w = s.workloads[0];
  EXPECT_EQ(w.kind, WorkloadKind::kBatch);
  EXPECT_EQ(w.tenant, "default");
  EXPECT_EQ(w.priority, 0);
  EXPECT_EQ(w.shape.gpu_count, 1);
  EXPECT_EQ(w.shape.mode, ShareMode::kWhole);
  EXPECT_TRUE(w.shape.allowed_types.empty());
  EXPECT_EQ(w.shape.locality, Locality::kNode);
  EXPECT_EQ(w.work_seconds, 7200);
  EXPECT_EQ(w.utilization, 1.0);
  EXPECT_EQ(w.submit_at, 0);
  EXPECT_FALSE(w.preemptible);
  EXPECT_EQ(w.preempt_grace, 30 * kSecond);
  EXPECT_EQ(w.value.decay_after_deadline, kNever);
  EXPECT_EQ(w.source, "w.yaml:1");
}

TEST(WorkloadYamlTest, TrainingJobWithSynonymsAndMig) {
  Scenario s = ParseOk(R"(
- name: train
  kind: training
  gpus: 16
  gpu_type: H100
  locality: nvlink
  duration: 1d
  arrival: 90
  deadline_after: 6h
  checkpoint: {interval: 30m, restart_cost: 5m}
  value: {on_completion: 100, decay_after_deadline: 6h}
- name: small
  kind: eval
  mig: 3g.40gb
  work: 1800
  deadline: 10h
)");
  ASSERT_EQ(s.workloads.size(), 2u);
  const WorkloadSpec& t = s.workloads[0];
  EXPECT_EQ(t.kind, WorkloadKind::kTraining);
  EXPECT_EQ(t.shape.locality, Locality::kNvlinkDomain);
  EXPECT_EQ(t.work_seconds, 86400);
  EXPECT_EQ(t.submit_at, 90 * kSecond);
  EXPECT_EQ(t.deadline, 90 * kSecond + 6 * kHour);
  EXPECT_EQ(t.checkpoint_interval, 30 * kMinute);
  EXPECT_EQ(t.restart_cost, 5 * kMinute);
  EXPECT_EQ(t.value.on_completion, 100);
  EXPECT_EQ(t.value.decay_after_deadline, 6 * kHour);
  EXPECT_EQ(t.source, "w.yaml:2");
  const WorkloadSpec& e = s.workloads[1];
  EXPECT_EQ(e.shape.mode, ShareMode::kMig);
  EXPECT_EQ(e.shape.mig_profile, "3g.40gb");
  EXPECT_EQ(e.work_seconds, 1800);
  EXPECT_EQ(e.deadline, 10 * kHour);
  EXPECT_EQ(e.source, "w.yaml:12");
}

TEST(WorkloadYamlTest, SectionsAndMultipleDocumentsMerge) {
  Scenario s = ParseOk(R"(workloads:
  - {name: a, work: 1h}
events:
  - {at: 8h, node_up: h100-2}
  - {at: 6h, node_down: h100-2}
traces:
  - {format: philly, path: /data/philly.csv, max_jobs: 100}
---
- {name: b, work: 1h, kind: embed}
---
name: c
work: 2h
---
events:
  - {at: 3h, priority: {workload: a, value: 5}}
  - {at: 4h, cancel: b}
)");
  ASSERT_EQ(s.workloads.size(), 3u);
  EXPECT_EQ(s.workloads[0].name, "a");
  EXPECT_EQ(s.workloads[1].name, "b");
  EXPECT_EQ(s.workloads[1].source, "w.yaml:9");
  EXPECT_EQ(s.workloads[2].name, "c");
  EXPECT_EQ(s.workloads[2].source, "w.yaml:11");
  ASSERT_EQ(s.events.size(), 4u);  // sorted by time
  EXPECT_EQ(s.events[0].type, ScenarioEvent::kPriority);
  EXPECT_EQ(s.events[0].at, 3 * kHour);
  EXPECT_EQ(s.events[0].target, "a");
  EXPECT_EQ(s.events[0].priority, 5);
  EXPECT_EQ(s.events[0].source, "w.yaml:15");
  EXPECT_EQ(s.events[1].type, ScenarioEvent::kCancel);
  EXPECT_EQ(s.events[1].target, "b");
  EXPECT_EQ(s.events[2].type, ScenarioEvent::kNodeDown);
  EXPECT_EQ(s.events[2].source, "w.yaml:5");
  EXPECT_EQ(s.events[3].type, ScenarioEvent::kNodeUp);
  EXPECT_EQ(s.events[3].target, "h100-2");
  ASSERT_EQ(s.traces.size(), 1u);
  EXPECT_EQ(s.traces[0].path, "/data/philly.csv");
  EXPECT_EQ(s.traces[0].options.at("max_jobs"), "100");
  EXPECT_EQ(s.traces[0].source, "w.yaml:7");
}

TEST(WorkloadYamlTest, EmptyDocumentsAreSkipped) {
  Scenario s = ParseOk("---\n# only a comment\n---\n- {name: a, work: 1h}\n");
  EXPECT_EQ(s.workloads.size(), 1u);
  EXPECT_TRUE(ParseOk("").workloads.empty());
}

TEST(WorkloadYamlTest, MergeScenarioRejectsDuplicatesAcrossFiles) {
  Scenario a = ParseOk("- {name: x, work: 1h}\n- {name: y, work: 1h}\n", "a.yaml");
  Scenario b = ParseOk("events: [{at: 1h, cancel: x}]\n", "b.yaml");
  ASSERT_TRUE(MergeScenario(&a, std::move(b)).ok());
  EXPECT_EQ(a.events.size(), 1u);
  Scenario c = ParseOk("\n- {name: y, work: 2h}\n", "c.yaml");
  Status st = MergeScenario(&a, std::move(c));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "c.yaml:2: workload 'y': duplicate name (first defined at a.yaml:2)");
}

TEST(WorkloadYamlTest, LoadFilesResolvesTracePathsAgainstTheFile) {
  auto dir = std::filesystem::temp_directory_path() / "airtime_config_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "one.yaml") << "- {name: a, work: 1h}\n";
  std::ofstream(dir / "two.yaml") << "traces: [{format: azure, file: t.csv}]\n"
                                     "workloads: [{name: b, work: 1h}]\n";
  auto s = LoadWorkloadYamlFiles({(dir / "one.yaml").string(), (dir / "two.yaml").string()});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->workloads.size(), 2u);
  ASSERT_EQ(s->traces.size(), 1u);
  EXPECT_EQ(s->traces[0].path, (dir / "t.csv").string());
  EXPECT_EQ(s->workloads[1].source, (dir / "two.yaml").string() + ":2");
  auto missing = LoadWorkloadYaml((dir / "absent.yaml").string());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

TEST(WorkloadYamlTest, CheckEventTargets) {
  auto cluster = ParseClusterYaml(
      "cluster: {name: c, nodes: [{name: h100, count: 2, gpu: H100, gpus: 8}]}", "c.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  Scenario ok = ParseOk(
      "workloads: [{name: job, work: 1h}]\nevents:\n"
      "  - {at: 1h, node_down: h100-1}\n  - {at: 2h, cancel: job}\n");
  EXPECT_TRUE(CheckEventTargets(ok, *cluster).ok());
  Scenario bad_node = ParseOk("events:\n  - {at: 1h, node_down: h100-2}\n");
  Status st = CheckEventTargets(bad_node, *cluster);
  EXPECT_EQ(st.message(),
            "w.yaml:2: event node_down: expected a node of cluster 'c', found 'h100-2' (did you "
            "mean 'h100-0'?)");
  Scenario bad_job = ParseOk(
      "workloads: [{name: job, work: 1h}]\nevents:\n"
      "  - {at: 1h, priority: {workload: jbo, value: 3}}\n");
  st = CheckEventTargets(bad_job, *cluster);
  EXPECT_THAT(st.message(), HasSubstr("w.yaml:3: event priority: expected a workload"));
  EXPECT_THAT(st.message(), HasSubstr("did you mean 'job'?"));
}

}  // namespace
}  // namespace airtime

namespace airtime {
namespace {

TEST(WorkloadYamlTest, ElasticGang) {
  auto s = ParseWorkloadYaml(R"(- name: el
  kind: training
  gpus: 8
  work: 2h
  elastic: {min_gpus: 2}
)",
                             "e.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->workloads[0].shape.min_gpus, 2);
  auto bad = ParseWorkloadYaml(R"(- name: el
  kind: training
  gpus: 4
  work: 2h
  elastic: {min_gpus: 6}
)",
                               "e.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("e.yaml:5"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("min_gpus"), std::string::npos);
}

TEST(WorkloadYamlTest, CommandEnvAndMetricsForTheDaemon) {
  Scenario s = ParseOk(R"(- name: train
  kind: training
  command: [python3, train.py, --lr, "0.1"]
  env: {HF_HOME: /cache, SEED: 7}
  workdir: /srv/train
- name: chat
  kind: realtime
  slo: {latency_ms: 200, capacity_rps: 10}
  command: [vllm, serve]
  metrics: {demand: ["vllm:num_requests_running", "vllm:num_requests_waiting"]}
- name: est
  kind: batch
  command: [./run]
  duration: 10m
)");
  ASSERT_EQ(s.workloads.size(), 3u);
  const ExecSpec& t = s.workloads[0].exec;
  EXPECT_EQ(t.argv, (std::vector<std::string>{"python3", "train.py", "--lr", "0.1"}));
  EXPECT_EQ(t.env.size(), 2u);
  EXPECT_EQ(t.env[1], (std::pair<std::string, std::string>{"SEED", "7"}));
  EXPECT_EQ(t.workdir, "/srv/train");
  EXPECT_TRUE(s.workloads[0].work_estimated);
  EXPECT_EQ(s.workloads[0].work_seconds, kDefaultCommandWorkSeconds);
  const ExecSpec& c = s.workloads[1].exec;
  EXPECT_EQ(c.metrics_path, "/metrics");
  EXPECT_EQ(c.demand_metrics.size(), 2u);
  EXPECT_FALSE(c.demand_is_counter);
  EXPECT_TRUE(c.wants_port);
  EXPECT_FALSE(s.workloads[2].work_estimated);
  EXPECT_EQ(s.workloads[2].work_seconds, 600);
}

TEST(WorkloadYamlTest, CommandErrorsNameTheField) {
  auto err = [](const std::string& text) {
    auto s = ParseWorkloadYaml(text, "w.yaml");
    EXPECT_FALSE(s.ok());
    return s.ok() ? std::string() : s.status().message();
  };
  EXPECT_THAT(
      err("- {name: a, command: python3 train.py}"),
      ::testing::AllOf(HasSubstr("w.yaml:1"), HasSubstr("'command'"), HasSubstr("runs no shell")));
  EXPECT_THAT(err("- {name: a, command: []}"),
              HasSubstr("expected a non-empty list, found an empty list"));
  EXPECT_THAT(err("- {name: a, command: [x], env: {A: [1]}}"), HasSubstr("'env.A'"));
  EXPECT_THAT(err("- {name: a, work: 1h, metrics: {demand: x}}"), HasSubstr("needs a command"));
  EXPECT_THAT(err("- {name: a, command: [x], metrics: {demand: x, type: gauges}}"),
              HasSubstr("did you mean 'gauge'"));
  EXPECT_THAT(err("- {name: a, kind: batch}"), HasSubstr("missing required field 'work'"));
}

}  // namespace
}  // namespace airtime
