// Every class of error the workload loader reports, with its file, line and field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "airtime/config/workload_yaml.h"
#include "airtime/config/workload_yaml_expect.h"

namespace airtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A batch job named "j" on line 1 with `extra` fields (one per line, from line 3 on).
std::string Job(const std::string& extra) { return "name: j\nwork: 1h\n" + extra; }
// A realtime service named "s" with a valid SLO; `extra` starts on line 4.
std::string Service(const std::string& extra) {
  return "name: s\nkind: realtime\nslo: {latency_ms: 100, capacity_rps: 10}\n" + extra;
}

// A merged field is checked like one given in place, at the line it is written on; a merge
// of something that is not a mapping, a quoted "<<" (an ordinary key) and merges nested too
// deep are named.
TEST(WorkloadYamlErrorsTest, MergeKeysAreCheckedLikeTheirFields) {
  ExpectError(
      "anchors:\n  d: &d {gpus: 1,\n    gpu_typ: H100}\nworkloads:\n  - {<<: *d, name: j}\n", 3,
      {"workload 'j'", "unknown field 'gpu_typ'", "did you mean 'gpu_type'?"});
  ExpectError(Job("<<: 5\n"), 3,
              {"field '<<' (a YAML merge)",
               "expected a mapping (such as *defaults) or a list "
               "of them, found '5'"});
  ExpectError(Job("<<: [{gpus: 1}, x]\n"), 3, {"field '<<' (a YAML merge)", "found"});
  ExpectError(Job("\"<<\": {gpus: 1}\n"), 3, {"unknown field '<<'"});
  std::string deep = "anchors:\n  - &m0 {gpus: 1}\n";
  for (int i = 1; i <= 9; ++i)
    deep += "  - &m" + std::to_string(i) + " {<<: *m" + std::to_string(i - 1) + "}\n";
  // m0 is on line 2, so m2 (whose merge of m1 is the ninth) on line 4.
  ExpectError(deep + "workloads:\n  - {<<: *m9, name: j, work: 1h}\n", 4,
              {"merges nested more than 8 deep, or a mapping that merges itself"});
  // Within a merged mapping, as in place: no field twice; and one merge key to a mapping.
  ExpectError("anchors:\n  d: &d {gpus: 1,\n    gpus: 4}\nworkloads:\n  - {<<: *d, name: j}\n", 3,
              {"field 'gpus' given twice in a merged mapping (first at line 2)"});
  ExpectError("anchors:\n  d: &d {gpus: 1}\nworkloads:\n  - name: j\n    <<: *d\n    <<: *d\n", 6,
              {"field '<<' given twice (first at line 5)", "<<: [*a, *b]"});
}

TEST(WorkloadYamlErrorsTest, UnknownFieldWithSuggestion) {
  ExpectError(Job("gpu_typ: H100\n"), 3,
              {"workload 'j'", "unknown field 'gpu_typ'", "did you mean 'gpu_type'?"});
  ExpectError(Job("colour: red\n"), 3, {"unknown field 'colour'", "known fields: name, kind"});
  ExpectError(Job("checkpoint: {intervall: 1h}\n"), 3,
              {"unknown field 'checkpoint.intervall'", "did you mean 'interval'?"});
  ExpectError("workload:\n  - {name: a}\n", 1,
              {"unknown top-level key 'workload'", "did you mean 'workloads'?"});
  ExpectError("workloads: []\nevent: []\n", 2,
              {"scenario", "unknown field 'event'", "did you mean 'events'?"});
}

// What Linux would refuse to pass to the program (an argument or NAME=VALUE over 128 KiB)
// is refused at submission, not found out by three failed starts; so is an env of more than
// kMaxEnvVars variables. A mapping of many keys parses in time proportional to its size.
TEST(WorkloadYamlErrorsTest, CommandsLinuxCouldNotStartAreRefused) {
  const std::string big(kMaxExecString + 1, 'x');
  ExpectError(Job("command: [/bin/echo, ok, " + big + "]\n"), 3,
              {"field 'command'", "argument 3 is 131072 bytes long, over the 131071"});
  ExpectError(Job("command: [/bin/true]\nenv: {BIG: " + big + "}\n"), 4,
              {"field 'env.BIG'", "bytes as NAME=VALUE, over the 131071"});
  std::string many = "command: [/bin/true]\nenv: {";
  for (size_t i = 0; i <= kMaxEnvVars; ++i) many += (i ? ", K" : "K") + std::to_string(i) + ": v";
  ExpectError(Job(many + "}\n"), 4, {"field 'env'", "sets 4097 variables, more than the 4096"});
  std::string fine = "command: [/bin/true]\nenv: {";
  for (size_t i = 0; i < kMaxEnvVars; ++i) fine += (i ? ", K" : "K") + std::to_string(i) + ": v";
  auto ok = ParseWorkloadYaml(Job(fine + "}\n"), "w.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ExpectError(Job("command: [/bin/true]\nenv: {A: 1, B: 2, A: 3}\n"), 4,
              {"field 'env.A' given twice"});
  // Each under its limit, too much in all.
  std::string total = "command: [/bin/true]\nenv: {";
  const std::string value(100000, 'v');
  for (int i = 0; i < 11; ++i) total += (i ? ", K" : "K") + std::to_string(i) + ": " + value;
  ExpectError(Job(total + "}\n"), 4,
              {"field 'env'", "the command's arguments and env take 1100", "over the 1048576"});
}

TEST(WorkloadYamlErrorsTest, WrongTypes) {
  ExpectError(Job("gpus: two\n"), 3,
              {"workload 'j'", "field 'gpus'", "expected an integer >= 0", "found 'two'"});
  ExpectError(Job("priority: high\n"), 3,
              {"field 'priority'", "expected an integer, found 'high'"});
  ExpectError(Job("preemptible: sometimes\n"), 3,
              {"field 'preemptible'", "expected true or false", "found 'sometimes'"});
  ExpectError(Job("deadline:\n"), 3, {"field 'deadline'", "found nothing"});
  ExpectError(Job("submit_at: soon\n"), 3,
              {"field 'submit_at'", "expected a duration such as 90s, 15m, 2h", "found 'soon'"});
  ExpectError(Job("tenant: [a, b]\n"), 3,
              {"field 'tenant'", "expected a non-empty string", "found a list"});
  ExpectError(Job("checkpoint: 30m\n"), 3,
              {"field 'checkpoint'", "expected a mapping", "found '30m'"});
  ExpectError(Job("gpu_type: {H100: 1}\n"), 3,
              {"field 'gpu_type'", "expected a name or a list of names", "found a mapping"});
  ExpectError("- 42\n", 1, {"workload #1", "expected a mapping", "found '42'"});
  ExpectError("just text\n", 1, {"expected a workload", "found 'just text'"});
  ExpectError("workloads: {name: a}\n", 1, {"field 'workloads'", "expected a list of workloads"});
}

TEST(WorkloadYamlErrorsTest, UnknownModelFamily) {
  ExpectError(Job("family: resnet-152\n"), 3,
              {"field 'family'", "unknown model family 'resnet-152'", "known: A3C, CycleGAN",
               "ResNet-50", "leave it out"});
  auto ok = ParseWorkloadYaml(Job("family: resnet-50\n"), "w.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->workloads.at(0).family, "ResNet-50");  // as the table spells it
  // Its P100 and K80 speeds are Gavel's for the family, relative to its V100 speed (the
  // catalogue's 0.45 here; a `speed` given for a type stands).
  const GpuCatalog& cat = GpuCatalog::Builtin();
  const WorkloadSpec& w = ok->workloads.at(0);
  EXPECT_NEAR(w.SpeedOn(*cat.Find("P100"), cat), 0.45 * 0.6590, 1e-4);
  EXPECT_NEAR(w.SpeedOn(*cat.Find("K80"), cat), 0.45 * 0.1583, 1e-4);
  auto given = ParseWorkloadYaml(Job("family: LM\nspeed: {V100: 0.5, K80: 0.3}\n"), "w.yaml");
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_NEAR(given->workloads.at(0).SpeedOn(*cat.Find("P100"), cat), 0.5 * 0.8398, 1e-4);
  EXPECT_DOUBLE_EQ(given->workloads.at(0).SpeedOn(*cat.Find("K80"), cat), 0.3);
}

TEST(WorkloadYamlErrorsTest, OutOfRange) {
  ExpectError(Job("gpu_fraction: 1.5\n"), 3,
              {"field 'gpu_fraction'", "expected a number in (0, 1]", "found '1.5'"});
  ExpectError(Job("gpu_fraction: 0\n"), 3, {"field 'gpu_fraction'", "found '0'"});
  ExpectError(Job("utilization: 0\n"), 3, {"field 'utilization'", "found '0'"});
  ExpectError(Job("gpus: -2\n"), 3, {"field 'gpus'", "found '-2'"});
  ExpectError(Job("memory_gb: 500\n"), 3,
              {"field 'memory_gb'", "no allowed GPU type has that much memory", "H200"});
  ExpectError(Job("gpu_type: T4\nmemory_gb: 20\n"), 4, {"field 'memory_gb'", "T4 with 16 GB"});
  ExpectError(Job("speed: {T4: 0}\n"), 3,
              {"field 'speed.T4'", "expected a number in [0.001, 1000]"});
  ExpectError(Job("speed: {T4: 1e-308}\n"), 3,
              {"field 'speed.T4'", "expected a number in [0.001, 1000]"});
  ExpectError(Job("submit_at: 5h\ndeadline: 2h\n"), 4,
              {"field 'deadline'", "at or after submission (5h", "found 2h"});
  ExpectError("name: j\nwork: 0s\n", 2, {"field 'work'", "expected a positive duration"});
  ExpectError(Job("locality: planet\n"), 3,
              {"field 'locality'", "expected one of node, nvlink, rack, any", "found 'planet'"});
  ExpectError(Job("kind: trainig\n"), 3,
              {"field 'kind'", "expected one of realtime, batch",
               "found 'trainig' (did you mean 'training'?)"});
  ExpectError(Service("slo: {latency_ms: 100, capacity_rps: 10}\n"), 4,
              {"field 'slo' given twice (first at line 3)"});
  ExpectError(
      "name: s\nkind: realtime\nslo:\n  latency_ms: 100\n  capacity_rps: 10\n"
      "  min_replicas: 4\n  max_replicas: 2\n",
      7, {"field 'slo.max_replicas'", "expected at least min_replicas (4)", "found 2"});
  // Beyond what an unbounded max_replicas means, the bound itself is named (not max_replicas).
  ExpectError(
      "name: s\nkind: realtime\nslo:\n  latency_ms: 100\n  capacity_rps: 10\n"
      "  min_replicas: 2000000000\n",
      6, {"field 'slo.min_replicas'", "an integer in [0, 1048576]"});
  ExpectError(Service("demand:\n  - {at: 2h, rps: 5}\n  - {at: 1h, rps: 5}\n"), 6,
              {"field 'demand[1].at'", "expected points in time order"});
  ExpectError(Service("demand:\n  - {at: 0, rps: -5}\n"), 5,
              {"field 'demand[0].rps'", "found '-5'"});
}

TEST(WorkloadYamlErrorsTest, UnknownGpuTypeNamesTheKnownOnes) {
  ExpectError(Job("gpu_type:\n  - H100\n  - H1OO\n"), 5,
              {"workload 'j'", "field 'gpu_type'", "found 'H1OO'", "known: H200, H100, A100-80GB",
               "did you mean 'H100'?"});
  ExpectError(Job("speed: {Z9: 1}\n"), 3, {"field 'speed'", "found 'Z9'", "known: H200"});
  ExpectError(Job("gpu_type: H100\nprefer: A100\n"), 4,
              {"field 'prefer'", "expected one of the allowed types (gpu_type: H100)",
               "found 'A100-40GB'"});
  ExpectError(Job("mig: 3g.20gb\ngpu_type: H100\n"), 3,
              {"field 'mig'", "expected a MIG profile", "3g.40gb", "found '3g.20gb'"});
  ExpectError(Job("mig: 1g.10gb\ngpu_type: T4\n"), 3, {"field 'mig'", "(T4) supports MIG"});
}

TEST(WorkloadYamlErrorsTest, MissingRequiredFields) {
  ExpectError("- work: 1h\n", 1, {"workload #1", "missing required field 'name'"});
  ExpectError("- {name: a, work: 1h}\n- {name: b}\n", 2,
              {"workload 'b'", "missing required field 'work'", "'duration' is a synonym"});
  ExpectError("name: s\nkind: realtime\n", 1, {"workload 's'", "missing required field 'slo'"});
  ExpectError("name: s\nkind: realtime\nslo: {latency_ms: 100}\n", 3,
              {"missing required field 'slo.capacity_rps'"});
  ExpectError("events:\n  - {node_down: n}\n", 2, {"event #1", "missing required field 'at'"});
  ExpectError("events:\n  - {at: 1h, priority: {workload: x}}\n", 2,
              {"missing required field 'priority.value'"});
  ExpectError("traces:\n  - {format: azure}\n", 2, {"trace #1", "missing required field 'file'"});
}

TEST(WorkloadYamlErrorsTest, ConflictingAndKindSpecificFields) {
  ExpectError(Job("gpu_fraction: 0.5\nmig: 1g.10gb\n"), 4,
              {"field 'mig'", "either 'gpu_fraction' or 'mig', not both"});
  ExpectError(Job("duration: 2h\n"), 3, {"either 'work' or 'duration'"});
  ExpectError(Job("submit_at: 1h\narrival: 2h\n"), 4, {"either 'submit_at' or 'arrival'"});
  ExpectError(Job("demand: [{at: 0, rps: 1}]\n"), 3,
              {"field 'demand'", "only a realtime workload", "kind batch"});
  ExpectError(Service("work: 1h\n"), 4, {"field 'work'", "runs until cancelled"});
  ExpectError(Service("deadline: 2h\n"), 4, {"field 'deadline'", "runs until cancelled"});
  ExpectError(Service("value: {on_completion: 5}\n"), 4,
              {"field 'value.on_completion'", "per_1k_requests"});
  ExpectError(Job("value: {per_1k_requests: 5}\n"), 3, {"field 'value.per_1k_requests'"});
  ExpectError("events:\n  - {at: 1h, node_down: a, cancel: b}\n", 2,
              {"event #1", "exactly one of node_down, node_up, priority, cancel",
               "found node_down and cancel"});
  ExpectError("events:\n  - {at: 1h}\n", 2, {"found none"});
  ExpectError("traces:\n  - {format: azure, file: a.csv, opts: [1]}\n", 2,
              {"trace #1", "field 'opts'", "found a list"});
}

TEST(WorkloadYamlErrorsTest, ValidateSpecRunsWithSource) {
  // A fraction below 1 with several GPUs is a cross-field rule of ValidateSpec.
  ExpectError("\n- name: frac\n  gpus: 2\n  gpu_fraction: 0.5\n  work: 1h\n", 2,
              {"workload 'frac'", "field 'gpu_fraction'", "only with gpus: 1"});
  ExpectError("- name: idle\n  gpus: 0\n  work: 1h\n", 1, {"workload 'idle'", "field 'gpus'"});
}

// Sizes and values beyond any host or any worth: a request of 1e16 cores wrapped negative
// once counted in milli-cores (and fit anywhere), and values of 1e308 summed to inf.
TEST(WorkloadYamlErrorsTest, HostSizesAndValuesHaveCeilings) {
  ExpectError("- {name: a, work: 1h, cpu: 1e16}\n", 1,
              {"workload 'a'", "field 'cpu'", "expected a number in [0, 1e+06]"});
  ExpectError("- {name: a, work: 1h, memory_gib: 1e16}\n", 1,
              {"field 'memory_gib'", "expected a number in [0, 1e+09]"});
  ExpectError("- {name: a, work: 1h, value: {on_completion: 1e308}}\n", 1,
              {"field 'value.on_completion'", "expected a number in [0, 1e+12]"});
  // A replica serving over a billion requests a second: its demand would round to none.
  ExpectError("- {name: s, kind: realtime, slo: {latency_ms: 100, capacity_rps: 1e10}}\n", 1,
              {"field 'slo.capacity_rps'", "1e+09"});
}

TEST(WorkloadYamlErrorsTest, DuplicateNamesAcrossDocumentsNameBothLines) {
  ExpectError("- {name: a, work: 1h}\n---\n- {name: b, work: 1h}\n- {name: a, work: 2h}\n", 4,
              {"workload 'a'", "duplicate name", "first defined at w.yaml:1"});
}

TEST(WorkloadYamlErrorsTest, SyntaxErrorGivesTheLine) {
  ExpectError("- name: a\n  work: 1h\n- name: b\n  work: [1h\n", 5, {"YAML syntax error"});
  ExpectError("name: a\n  work: 1h\n bad\n", 2, {"YAML syntax error"});
}

}  // namespace
}  // namespace airtime
