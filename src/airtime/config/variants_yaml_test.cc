// Services with model variants in the workload format: the fields, their expansion into
// members, variants that quantize and finetune jobs produce, and every hostile input refused
// with the field named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "airtime/config/workload_yaml.h"
#include "airtime/config/workload_yaml_expect.h"

namespace airtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A service with a generalist (8 x H100, or H200) and a quantized copy (2 x L40S), demand
// split into two classes; `extra` lines go at the end of the service (indented 4).
std::string Chat(const std::string& variant_extra = "", const std::string& extra = "") {
  return "workloads:\n"                                                         // 1
         "  - name: chat\n"                                                     // 2
         "    kind: realtime\n"                                                 // 3
         "    slo: {latency_ms: 2000, max_replicas: 6, cold_start: 3m}\n"       // 4
         "    value: {per_1k_requests: 4}\n"                                    // 5
         "    quality_floor: 0.9\n"                                             // 6
         "    classes:\n"                                                       // 7
         "      - {name: code, demand: [{at: 0, rps: 2}, {at: 1h, rps: 4}]}\n"  // 8
         "      - {name: conv, demand: [{at: 0, rps: 5}]}\n"                    // 9
         "    variants:\n"                                                      // 10
         "      - name: fp16\n"                                                 // 11
         "        gpus: 8\n"                                                    // 12
         "        throughput: {H100: 3.0, H200: 4.0}\n"                         // 13
         "      - name: int8\n"                                                 // 14
         "        gpus: 2\n"                                                    // 15
         "        throughput: {L40S: 0.8}\n"                                    // 16
         "        quality: 0.85\n"                                              // 17
         "        cold_start: 1m\n"                                             // 18
         "        classes: [code]\n" +                                          // 19
         variant_extra +
         extra;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(VariantsYamlTest, ParsesVariantsClassesAndFloor) {
  auto s = ParseWorkloadYaml(Chat(), "w.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->workloads.size(), 1u);
  const RealtimeProfile& rt = s->workloads[0].realtime;
  EXPECT_DOUBLE_EQ(rt.quality_floor, 0.9);
  ASSERT_EQ(rt.classes.size(), 2u);
  EXPECT_EQ(rt.classes[0].name, "code");
  EXPECT_EQ(rt.classes[0].demand.size(), 2u);
  ASSERT_EQ(rt.variants.size(), 2u);
  const ModelVariant& fp16 = rt.variants[0];
  const ModelVariant& int8 = rt.variants[1];
  EXPECT_EQ(fp16.shape.gpu_count, 8);
  EXPECT_DOUBLE_EQ(fp16.quality, 1.0);
  EXPECT_EQ(fp16.cold_start, 3 * kMinute);  // the service's
  EXPECT_TRUE(fp16.classes.empty());        // every class
  EXPECT_DOUBLE_EQ(fp16.PlanningThroughput(), 3.0);
  EXPECT_EQ(fp16.max_replicas, 6);
  const GpuCatalog& cat = GpuCatalog::Builtin();
  EXPECT_DOUBLE_EQ(fp16.ThroughputOn(*cat.Find("H200")), 4.0);
  EXPECT_DOUBLE_EQ(fp16.ThroughputOn(*cat.Find("L40S")), 0.0);
  // Allowed types are those with a throughput, the fastest preferred first.
  EXPECT_EQ(fp16.shape.allowed_types.front(), *cat.Find("H200"));
  EXPECT_EQ(int8.cold_start, kMinute);
  EXPECT_DOUBLE_EQ(int8.quality, 0.85);
  EXPECT_EQ(int8.classes, (std::vector<int>{0}));
  EXPECT_TRUE(int8.Serves(0));
  EXPECT_FALSE(int8.Serves(1));
  EXPECT_EQ(rt.DefaultVariantFor(0), 0);
  EXPECT_EQ(rt.DefaultVariantFor(1), 0);
}

TEST(VariantsYamlTest, ExpandsIntoOneMemberPerVariant) {
  auto s = ParseWorkloadYaml(Chat(), "w.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<WorkloadSpec> members = ExpandVariants(s->workloads[0]);
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].name, "chat/fp16");
  EXPECT_EQ(members[1].name, "chat/int8");
  for (size_t v = 0; v < 2; ++v) {
    EXPECT_TRUE(members[v].realtime.is_member());
    EXPECT_EQ(members[v].realtime.variant, static_cast<int>(v));
    EXPECT_EQ(members[v].realtime.group, "chat");
    EXPECT_EQ(members[v].realtime.classes.size(), 2u);
    EXPECT_TRUE(ValidateSpec(members[v], GpuCatalog::Builtin()).ok());
  }
  EXPECT_EQ(members[0].shape.gpu_count, 8);
  EXPECT_DOUBLE_EQ(members[0].realtime.capacity_rps, 3.0);
  EXPECT_EQ(members[1].realtime.cold_start, kMinute);
  // The generalist serves both classes by default: its own curve is their sum.
  ASSERT_EQ(members[0].realtime.demand.size(), 2u);
  EXPECT_DOUBLE_EQ(members[0].realtime.demand[0].rps, 7);
  EXPECT_DOUBLE_EQ(members[0].realtime.demand[1].rps, 9);
  EXPECT_TRUE(members[1].realtime.demand.empty());
  // A service without variants comes back as it is.
  WorkloadSpec plain;
  plain.name = "p";
  plain.kind = WorkloadKind::kRealtime;
  EXPECT_EQ(ExpandVariants(plain).size(), 1u);
  EXPECT_EQ(ExpandVariants(plain)[0].name, "p");
}

TEST(VariantsYamlTest, WithoutClassesOneClassFollowsTheDemand) {
  std::string text = Replace(Chat(), "    classes:\n", "    demand: [{at: 0, rps: 3}]\n");
  text = Replace(text, "      - {name: code, demand: [{at: 0, rps: 2}, {at: 1h, rps: 4}]}\n", "");
  text = Replace(text, "      - {name: conv, demand: [{at: 0, rps: 5}]}\n", "");
  text = Replace(text, "        classes: [code]\n", "");
  auto s = ParseWorkloadYaml(text, "w.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<WorkloadSpec> members = ExpandVariants(s->workloads[0]);
  ASSERT_EQ(members.size(), 2u);
  ASSERT_EQ(members[0].realtime.classes.size(), 1u);
  EXPECT_EQ(members[0].realtime.classes[0].name, "all");
  EXPECT_DOUBLE_EQ(members[0].realtime.ClassRpsAt(0, kHour), 3);
}

// What the daemon runs for a variant's replica: its own command, or the service's; its env
// on top of the service's (a name both set takes the variant's value).
TEST(VariantsYamlTest, EachVariantMayRunItsOwnCommand) {
  const std::string service_exec =
      "    command: [serve, --model, big]\n"
      "    env: {MODEL_DIR: /models, PRECISION: fp16}\n";
  std::string text = Chat(
      "        command: [serve-int8, --port, '8000']\n"
      "        env: {PRECISION: int8, EXTRA: 'yes'}\n",
      service_exec);
  auto s = ParseWorkloadYaml(text, "w.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const RealtimeProfile& rt = s->workloads[0].realtime;
  EXPECT_TRUE(rt.variants[0].command.empty());
  EXPECT_EQ(rt.variants[1].command, (std::vector<std::string>{"serve-int8", "--port", "8000"}));
  std::vector<WorkloadSpec> members = ExpandVariants(s->workloads[0]);
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].exec.argv, (std::vector<std::string>{"serve", "--model", "big"}));
  EXPECT_EQ(members[1].exec.argv, (std::vector<std::string>{"serve-int8", "--port", "8000"}));
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(members[0].exec.env, (Env{{"MODEL_DIR", "/models"}, {"PRECISION", "fp16"}}));
  EXPECT_EQ(members[1].exec.env,
            (Env{{"MODEL_DIR", "/models"}, {"PRECISION", "int8"}, {"EXTRA", "yes"}}));
  EXPECT_TRUE(members[0].exec.wants_port);
  EXPECT_TRUE(members[1].exec.wants_port);

  // A variant's command alone, with no service command: only that member runs a process.
  auto alone = ParseWorkloadYaml(Chat("        command: [serve-int8]\n"), "w.yaml");
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  members = ExpandVariants(alone->workloads[0]);
  EXPECT_TRUE(members[0].exec.empty());
  EXPECT_FALSE(members[0].exec.wants_port);
  EXPECT_EQ(members[1].exec.argv, (std::vector<std::string>{"serve-int8"}));
  EXPECT_TRUE(members[1].exec.wants_port);

  // ExpandAllVariants keeps the order, a service's members in its place.
  WorkloadSpec job;
  job.name = "job";
  std::vector<WorkloadSpec> all = ExpandAllVariants({job, s->workloads[0], job});
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].name, "job");
  EXPECT_EQ(all[1].name, "chat/fp16");
  EXPECT_EQ(all[2].name, "chat/int8");
  EXPECT_EQ(all[3].name, "job");
}

TEST(VariantsYamlTest, AVariantsCommandIsCheckedAsTheServicesIs) {
  ExpectError(Chat("        command: serve-int8\n"), 20,
              {"field 'variants[1].command'", "a list", "no shell"});
  ExpectError(Chat("        command: []\n"), 20, {"field 'variants[1].command'", "non-empty"});
  ExpectError(Chat("        command: [serve, {a: b}]\n"), 20, {"variants[1].command"});
  ExpectError(Chat("        command: [serve]\n        env: {'A=B': x}\n"), 21,
              {"variants[1].env", "without '='"});
  ExpectError(Chat("        command: [serve]\n        env: {A: [x]}\n"), 21,
              {"field 'variants[1].env.A'", "a text value"});
  // An env with no command to run it in, on the variant or the service, is a mistake.
  ExpectError(Chat("        env: {A: x}\n"), 20, {"field 'variants[1].env'", "neither"});
  // Scraped metrics need every variant to run something.
  ExpectError(Chat("        command: [serve]\n", "    metrics: {demand: [reqs]}\n"), 11,
              {"variants[0].command", "metrics"});
}

// A service of several classes may name the label that carries the class in its replicas'
// metrics (the daemon then scrapes its demand per class); every member carries it. The
// label must be a Prometheus label name, and only a service of two or more classes has one.
TEST(VariantsYamlTest, AClassLabelSplitsTheScrapedDemandByClass) {
  const std::string exec = "    command: [serve]\n";  // line 20
  auto s = ParseWorkloadYaml(
      Chat("", exec + "    metrics: {demand: [reqs], class_label: request_class}\n"), "w.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->workloads[0].exec.demand_class_label, "request_class");
  for (const WorkloadSpec& m : ExpandVariants(s->workloads[0]))
    EXPECT_EQ(m.exec.demand_class_label, "request_class") << m.name;
  for (const char* bad : {"__name__", "re-quest", "2class", "'a:b'", "''"})
    ExpectError(Chat("", exec + "    metrics: {demand: [reqs], class_label: " + bad + "}\n"), 21,
                {"field 'metrics.class_label'"});
  ExpectError(Chat("", exec + "    metrics: {demand: [reqs], class_label: re-quest}\n"), 21,
              {"field 'metrics.class_label': expected a Prometheus label name", "re-quest"});
  ExpectError(Chat("", exec + "    metrics: {demand: [reqs], class_label: [class]}\n"), 21,
              {"field 'metrics.class_label'"});
  // One class, or none: nothing to split.
  const std::string one =
      "- name: web\n"
      "  kind: realtime\n"
      "  slo: {latency_ms: 200, capacity_rps: 5}\n"
      "  command: [serve]\n"
      "  metrics:\n"
      "    demand: [reqs]\n"
      "    class_label: class\n";
  ExpectError(one, 7, {"field 'metrics.class_label'", "request classes (two or more)"});
  ExpectError(Replace(Chat("", exec + "    metrics: {demand: [reqs], class_label: c}\n"),
                      "      - {name: conv, demand: [{at: 0, rps: 5}]}\n", ""),
              20, {"field 'metrics.class_label'", "two or more"});
  // ValidateSpec says the same of a spec built otherwise.
  WorkloadSpec bad = s->workloads[0];
  bad.exec.demand_class_label = "bad-label";
  Status st = ValidateSpec(bad, GpuCatalog::Builtin());
  EXPECT_THAT(st.message(), HasSubstr("field 'metrics.class_label': expected a Prometheus label"));
  bad.exec.demand_class_label = "class";
  bad.realtime.classes.resize(1);
  st = ValidateSpec(bad, GpuCatalog::Builtin());
  EXPECT_THAT(st.message(), HasSubstr("field 'metrics.class_label': only a service"));
}

TEST(VariantsYamlTest, HostileInputNamesTheField) {
  ExpectError(Replace(Chat(), "quality: 0.85", "quality: 1.5"), 17,
              {"field 'variants[1].quality'", "(0, 1]"});
  ExpectError(Replace(Chat(), "quality: 0.85", "quality: -0.1"), 17,
              {"field 'variants[1].quality'"});
  ExpectError(Replace(Chat(), "quality: 0.85", "quality: nan"), 17,
              {"field 'variants[1].quality'"});
  ExpectError(Replace(Chat(), "{L40S: 0.8}", "{L40S: 0}"), 16,
              {"field 'variants[1].throughput.L40S'", "in (0, 1e+09]"});
  ExpectError(Replace(Chat(), "{L40S: 0.8}", "{L40S: fast}"), 16,
              {"field 'variants[1].throughput.L40S'"});
  ExpectError(Replace(Chat(), "{L40S: 0.8}", "{L40Z: 0.8}"), 16,
              {"field 'variants[1].throughput'", "L40Z"});
  ExpectError(Replace(Chat(), "{L40S: 0.8}", "{}"), 16,
              {"field 'variants[1].throughput'", "expected a mapping"});
  ExpectError(Replace(Chat(), "        throughput: {L40S: 0.8}\n", ""), 14,
              {"missing required field 'variants[1].throughput'"});
  ExpectError(Replace(Chat(), "classes: [code]", "classes: [cod]"), 19,
              {"field 'variants[1].classes'", "found 'cod'", "did you mean 'code'?"});
  ExpectError(Replace(Chat(), "name: int8", "name: fp16"), 14,
              {"field 'variants[1].name'", "listed twice"});
  ExpectError(Replace(Chat(), "name: int8", "name: a/b"), 14, {"field 'variants[1].name'", "'/'"});
  ExpectError(Replace(Chat(), "        gpus: 2\n", "        gpus: 0\n"), 15,
              {"field 'variants[1].gpus'", "at least 1"});
  ExpectError(Replace(Chat(), "        gpus: 2\n", "        gpus: 2\n        colour: red\n"), 16,
              {"unknown field 'variants[1].colour'"});
  ExpectError(Replace(Chat(), "quality_floor: 0.9", "quality_floor: 2"), 6,
              {"field 'quality_floor'", "[0, 1]"});
  ExpectError(Replace(Chat(), "name: conv", "name: code"), 9,
              {"field 'classes[1].name'", "listed twice"});
  ExpectError(Replace(Chat(), "{at: 1h, rps: 4}", "{at: 1h, rps: -4}"), 8,
              {"field 'classes[0].demand[1].rps'"});
  ExpectError(
      Replace(Chat(), "{at: 0, rps: 2}, {at: 1h, rps: 4}", "{at: 1h, rps: 2}, {at: 0, rps: 4}"), 8,
      {"field 'classes[0].demand[1].at'", "time order"});
  const std::string bare =
      "- name: s\n  kind: realtime\n  slo: {latency_ms: 1}\n";  // the next line is 4
  ExpectError(bare + "  variants: []\n", 4, {"field 'variants'", "non-empty list"});
  ExpectError(bare + "  variants: {a: 1}\n", 4, {"field 'variants'", "non-empty list"});
  ExpectError(bare + "  variants: [{name: a, gpus: 1, throughput: {H100: 1}}]\n  classes: 3\n", 5,
              {"field 'classes'", "non-empty list"});
  ExpectError(bare + "  variants: [{name: a, gpus: 1, throughput: {H100: 1}}]\n  classes: [{}]\n",
              5, {"missing required field 'classes[0].name'"});
  // The service's own shape and capacity belong to its variants.
  ExpectError(Replace(Chat(), "max_replicas: 6,", "max_replicas: 6, capacity_rps: 3,"), 4,
              {"field 'slo.capacity_rps'", "each variant's throughput"});
  ExpectError(Chat("", "    gpus: 4\n"), 20, {"field 'gpus'", "shape per variant"});
  // A class no variant serves; a best quality below 1.
  ExpectError(Replace(Chat(), "        gpus: 8\n", "        gpus: 8\n        classes: [code]\n"), 2,
              {"field 'classes'", "no variant serves class 'conv'"});
  ExpectError(Replace(Chat(), "        gpus: 8\n", "        gpus: 8\n        quality: 0.9\n"), 2,
              {"field 'variants'", "must be 1"});
  // Only a service has variants; classes and a floor only with variants.
  ExpectError("- name: j\n  work: 1h\n  variants: []\n", 3,
              {"field 'variants'", "only a realtime workload"});
  ExpectError(
      "- name: s\n  kind: realtime\n  slo: {latency_ms: 1, capacity_rps: 1}\n  quality_floor: "
      "0.5\n",
      4, {"field 'quality_floor'", "only a service with variants"});
  ExpectError(
      "- name: s\n  kind: realtime\n  slo: {latency_ms: 1, capacity_rps: 1}\n  classes: [{name: "
      "a}]\n",
      4, {"field 'classes'", "only a service with variants"});
  // A class with both a curve and a trace, or a service with both demand and classes.
  ExpectError(Replace(Chat(), "{name: conv, demand: [{at: 0, rps: 5}]}",
                      "{name: conv, demand: [], demand_trace: {format: azure, file: x.csv}}"),
              9, {"demand", "demand_trace"});
  ExpectError(Chat("", "    demand: [{at: 0, rps: 1}]\n"), 20,
              {"field 'demand'", "each class its own demand"});
  // Too many variants or classes (the mix search grows with them): refused, with the count,
  // at the list's first line.
  std::string many_variants = bare + "  variants:\n";
  for (int i = 0; i < 9; ++i)
    many_variants += "    - {name: v" + std::to_string(i) + ", gpus: 1, throughput: {H100: 1}}\n";
  ExpectError(many_variants, 5, {"field 'variants'", "at most 8 variants, found 9"});
  std::string many_classes =
      bare + "  variants: [{name: a, gpus: 1, throughput: {H100: 1}}]\n  classes:\n";
  for (int i = 0; i < 9; ++i) many_classes += "    - {name: c" + std::to_string(i) + "}\n";
  ExpectError(many_classes, 6, {"field 'classes'", "at most 8 classes, found 9"});
}

// A job after Chat() (its name on line 20) that produces `what` ("{service: chat, variant:
// int8}", on line 23).
std::string Producer(const std::string& what, const std::string& kind = "quantize",
                     const std::string& name = "q") {
  return "  - name: " + name + "\n    kind: " + kind + "\n    work: 2h\n    produces: " + what +
         "\n";
}

TEST(VariantsYamlTest, AQuantizeOrFinetuneJobProducesAVariant) {
  for (const char* kind : {"quantize", "finetune"}) {
    auto s = ParseWorkloadYaml(Chat() + Producer("{service: chat, variant: int8}", kind), "w.yaml");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_EQ(s->workloads.size(), 2u);
    const WorkloadSpec& job = s->workloads[1];
    EXPECT_EQ(job.produces.service, "chat");
    EXPECT_EQ(job.produces.variant, "int8");
    EXPECT_EQ(job.produces.variant_source, "w.yaml:23");
    const RealtimeProfile& rt = s->workloads[0].realtime;
    EXPECT_EQ(rt.variants[1].produced_by, "q");  // linked to the service's variant
    EXPECT_TRUE(rt.variants[0].produced_by.empty());
    // Members carry it; each still passes ValidateSpec.
    for (const WorkloadSpec& m : ExpandVariants(s->workloads[0])) {
      EXPECT_EQ(m.realtime.variants[1].produced_by, "q");
      EXPECT_TRUE(ValidateSpec(m, GpuCatalog::Builtin()).ok());
    }
  }
  // The job may come first, in block style.
  auto first = ParseWorkloadYaml(
      "- name: q\n  kind: quantize\n  work: 1h\n  produces:\n    service: chat\n    variant: "
      "int8\n" +
          Replace(Chat(), "workloads:\n", "---\nworkloads:\n"),
      "w.yaml");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->workloads[1].realtime.variants[1].produced_by, "q");
  EXPECT_EQ(first->workloads[0].produces.variant_source, "w.yaml:6");
}

TEST(VariantsYamlTest, AJobInAnotherFileProducesAVariant) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "airtime-produced-variants";
  std::filesystem::create_directories(dir);
  const std::string service = (dir / "service.yaml").string();
  const std::string job = (dir / "job.yaml").string();
  std::ofstream(service) << Chat();
  std::ofstream(job) << "- name: q\n  kind: quantize\n  work: 1h\n  produces: {service: chat, "
                        "variant: int8}\n";
  auto both = LoadWorkloadYamlFiles({job, service});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->workloads[1].realtime.variants[1].produced_by, "q");
  // Alone, the job's file names a service it does not have.
  auto alone = LoadWorkloadYaml(job);
  ASSERT_FALSE(alone.ok());
  EXPECT_THAT(alone.status().message(),
              StartsWith(job + ":4: workload 'q': field 'produces.service'"));
  std::filesystem::remove_all(dir);
}

// A variant declared `awaits_producer` waits for a job that may come later (a later
// submission to the daemon): with no job of the text producing it, it names none and cannot
// run; a job of the same text still links to it. The best variant of a class cannot wait.
TEST(VariantsYamlTest, AVariantMayAwaitAProducerThatComesLater) {
  auto s = ParseWorkloadYaml(Chat("        awaits_producer: true\n"), "w.yaml");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const ModelVariant& int8 = s->workloads[0].realtime.variants[1];
  EXPECT_TRUE(int8.awaits_producer);
  EXPECT_TRUE(int8.produced_by.empty());
  EXPECT_FALSE(s->workloads[0].realtime.variants[0].awaits_producer);
  for (const WorkloadSpec& m : ExpandVariants(s->workloads[0]))
    EXPECT_TRUE(m.realtime.variants[1].awaits_producer);
  auto linked = ParseWorkloadYaml(
      Chat("        awaits_producer: true\n") + Producer("{service: chat, variant: int8}"),
      "w.yaml");
  ASSERT_TRUE(linked.ok()) << linked.status().ToString();
  EXPECT_EQ(linked->workloads[0].realtime.variants[1].produced_by, "q");

  ExpectError(
      Replace(Chat(), "        gpus: 8\n", "        gpus: 8\n        awaits_producer: true\n"), 13,
      {"workload 'chat'", "field 'variants[0].awaits_producer'", "variant 'fp16' cannot wait",
       "best variant for class 'code'"});
  ExpectError(Chat("        awaits_producer: yes please\n"), 20,
              {"field 'variants[1].awaits_producer'"});
}

// A submission to the daemon may hold a job that produces a variant of a service accepted
// before: ParseSubmissionYaml leaves it unlinked for the daemon, where a file load refuses
// it. A name of the text that is not a service with variants is refused all the same.
TEST(VariantsYamlTest, ASubmissionsJobMayNameAServiceOfAnEarlierSubmission) {
  const std::string job =
      "- name: q\n  kind: quantize\n  work: 1h\n  produces: {service: chat, variant: int8}\n";
  auto later = ParseSubmissionYaml(job, "request");
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  EXPECT_EQ(later->workloads[0].produces.service, "chat");
  EXPECT_EQ(later->workloads[0].produces.variant_source, "request:4");
  EXPECT_FALSE(ParseWorkloadYaml(job, "request").ok());
  auto plain = ParseSubmissionYaml(
      job + "- {name: chat, kind: realtime, slo: {latency_ms: 200, capacity_rps: 10}}\n",
      "request");
  ASSERT_FALSE(plain.ok());
  EXPECT_THAT(plain.status().message(),
              HasSubstr("field 'produces.service': expected a realtime service with variants"));
  EXPECT_THAT(plain.status().message(), HasSubstr("a realtime service without variants"));
  // With its service in the text, it links as in a file.
  auto both = ParseSubmissionYaml(Chat() + Producer("{service: chat, variant: int8}"), "request");
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->workloads[0].realtime.variants[1].produced_by, "q");
}

TEST(VariantsYamlTest, HostileProducersNameTheField) {
  // No such service, or not one with variants.
  ExpectError(
      Chat() + Producer("{service: chta, variant: int8}"), 23,
      {"workload 'q'", "field 'produces.service'",
       "expected a realtime service with variants (chat)", "found 'chta'", "did you mean 'chat'?"});
  ExpectError(Chat() + Producer("{service: q, variant: int8}"), 23,
              {"field 'produces.service'", "found 'q', a quantize job"});
  ExpectError(Chat() +
                  "  - {name: plain, kind: realtime, slo: {latency_ms: 1, capacity_rps: 1}}\n" +
                  Producer("{service: plain, variant: int8}"),
              24, {"field 'produces.service'", "'plain', a realtime service without variants"});
  // No such variant; block style names the variant's own line.
  ExpectError(Chat() + Producer("{service: chat, variant: int4}"), 23,
              {"field 'produces.variant'", "expected one of the variants of 'chat' (fp16, int8)",
               "found 'int4'", "did you mean 'int8'?"});
  ExpectError(Chat() + Producer("\n      service: chat\n      variant: int4"), 25,
              {"field 'produces.variant'", "found 'int4'"});
  // Two jobs for one variant.
  ExpectError(Chat() + Producer("{service: chat, variant: int8}") +
                  Producer("{service: chat, variant: int8}", "finetune", "q2"),
              27,
              {"workload 'q2'", "field 'produces.variant'",
               "already produced by job 'q' (at w.yaml:23)", "one job makes each variant"});
  // The variant the service needs from the start: its best for some class, or its only one.
  ExpectError(Chat() + Producer("{service: chat, variant: fp16}"), 23,
              {"field 'produces.variant'", "'chat/fp16' cannot wait for this job",
               "best variant for class 'code'"});
  ExpectError(
      "- name: one\n  kind: realtime\n  slo: {latency_ms: 1}\n  variants: [{name: a, gpus: 1, "
      "throughput: {H100: 1}}]\n- name: q\n  kind: quantize\n  work: 1h\n  produces: {service: "
      "one, variant: a}\n",
      8, {"field 'produces.variant'", "the service's only variant"});
  // Only a quantize or finetune job produces one.
  ExpectError(
      Chat() + Producer("{service: chat, variant: int8}", "batch"), 23,
      {"workload 'q'", "field 'produces'", "only a quantize or finetune job", "kind batch"});
  ExpectError(Chat() + Producer("{service: chat, variant: int8}", "training"), 23,
              {"field 'produces'", "kind training"});
  ExpectError(Chat("", "    produces: {service: chat, variant: int8}\n"), 20,
              {"workload 'chat'", "field 'produces'", "kind realtime"});
  // Its shape.
  ExpectError(Chat() + Producer("int8"), 23, {"field 'produces'", "expected a mapping"});
  ExpectError(Chat() + Producer("{}"), 23, {"field 'produces'", "expected a mapping"});
  ExpectError(Chat() + Producer("{service: chat}"), 23,
              {"missing required field 'produces.variant'"});
  ExpectError(Chat() + Producer("{service: chat, variant: int8, model: x}"), 23,
              {"unknown field 'produces.model'"});
  ExpectError(Chat() + Producer("{service: [chat], variant: int8}"), 23,
              {"field 'produces.service'", "expected a non-empty string"});
  // A variant a programme marks as produced is checked by ValidateSpec as well.
  auto s = ParseWorkloadYaml(Chat(), "w.yaml");
  ASSERT_TRUE(s.ok());
  WorkloadSpec spec = s->workloads[0];
  spec.realtime.variants[0].produced_by = "q";
  const Status bad = ValidateSpec(spec, GpuCatalog::Builtin());
  EXPECT_THAT(bad.message(), HasSubstr("field 'variants[0]': job 'q' cannot produce it"));
}

}  // namespace
}  // namespace airtime
