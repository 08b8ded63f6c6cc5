// End-to-end tests: start the real `airtime` binary and check what a user sees -- the exit
// status, the messages and the JSON report.
//
// Run as `e2e_test --airtime=PATH [gtest flags]`; tests/CMakeLists.txt registers each test
// with ctest, passing the binary built in the same tree. Inputs: examples/mixed-day/ (the
// main demo), the small files of tests/data/e2e/ and, for scripts/held-out-days.py, the
// suite's shipped Philly excerpts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "e2e_util.h"

namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string g_airtime;  // --airtime=PATH

const std::string kSourceDir = AIRTIME_SOURCE_DIR;
const std::string kData = kSourceDir + "/tests/data/e2e/";
const std::string kMixedDay = kSourceDir + "/examples/mixed-day/";

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

using airtime::e2e::ReadFile;

// The current test's folder for outputs, emptied when the test first asks for it.
std::string TempDir() {
  static std::set<std::string> fresh;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(::testing::TempDir()) / ("airtime_e2e_" + std::to_string(getpid()) + "_" +
                                                   info->test_suite_name() + "_" + info->name());
  if (fresh.insert(dir.string()).second) fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

// Runs `program ARGS...` (a path or a name on PATH), capturing stdout and stderr.
Outcome RunProgram(const std::string& program, const std::vector<std::string>& args) {
  const std::string err_path = TempDir() + "/stderr.txt";
  std::string cmd = Quote(program);
  for (const auto& a : args) cmd += " " + Quote(a);
  cmd += " 2>" + Quote(err_path);
  Outcome r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "popen failed: " << cmd;
    return r;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = ReadFile(err_path);
  return r;
}

// Runs `airtime ARGS...`, capturing stdout and stderr.
Outcome Airtime(const std::vector<std::string>& args) { return RunProgram(g_airtime, args); }

// The mixed day's input as scripts/demo.sh passes it: cluster.yaml, and every other *.yaml
// of the folder as a workload file.
std::vector<std::string> MixedDayInputArgs() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kMixedDay)) {
    const auto name = e.path().filename().string();
    if (e.is_regular_file() && e.path().extension() == ".yaml" && name != "cluster.yaml")
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> args = {"sim", "--cluster", kMixedDay + "cluster.yaml"};
  for (const auto& f : files) {
    args.push_back("--workload");
    args.push_back(f);
  }
  return args;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const char* const kPolicies[] = {"fifo", "static", "bestfit"};
const char* const kKinds[] = {"realtime", "batch", "training", "finetune",
                              "quantize", "embed", "eval"};

// Fails unless `v` is a finite number, naming `what`.
double Number(const nlohmann::json& v, const std::string& what) {
  EXPECT_TRUE(v.is_number()) << what << " is not a number: " << v.dump();
  if (!v.is_number()) return NAN;
  double d = v.get<double>();
  EXPECT_TRUE(std::isfinite(d)) << what;
  return d;
}

// (a) + (b): the mixed day under fifo, static and bestfit, twice with one seed: the
// policies replayed side by side, then one at a time.
TEST(MixedDay, ReportIsCompleteConsistentAndDeterministic) {
  const std::string dir = TempDir();
  const auto args = Concat(MixedDayInputArgs(), {"--policy", "fifo,static,bestfit", "--horizon",
                                                 "24h", "--seed", "7", "--quiet"});
  Outcome first = Airtime(Concat(
      args, {"--threads", "3", "--json", dir + "/first.json", "--decisions", dir + "/first.log"}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "");  // --quiet
  Outcome second = Airtime(Concat(args, {"--threads", "1", "--json", dir + "/second.json",
                                         "--decisions", dir + "/second.log"}));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(first.err, second.err);
  for (const char* policy : kPolicies) {
    const std::string log = ReadFile(dir + "/first.log." + policy);
    EXPECT_NE(log.find("\"decision\":\"start\""), std::string::npos) << policy;
    EXPECT_TRUE(log == ReadFile(dir + "/second.log." + policy))
        << policy << ": the decision logs differ between --threads 3 and --threads 1";
  }

  const std::string text1 = ReadFile(dir + "/first.json");
  const std::string text2 = ReadFile(dir + "/second.json");
  ASSERT_FALSE(text1.empty());
  // (b) Byte-identical once the wall-clock fields are blanked.
  const std::regex wall("\"wall_seconds\": *[-+0-9.eE]+");
  const std::string det1 = std::regex_replace(text1, wall, "\"wall_seconds\": 0");
  const std::string det2 = std::regex_replace(text2, wall, "\"wall_seconds\": 0");
  EXPECT_NE(det1, text1) << "no wall_seconds field was found";
  EXPECT_TRUE(det1 == det2) << "two runs with --seed 7 (--threads 3, --threads 1) wrote "
                               "different reports";

  // (a) One entry per policy, each complete and consistent.
  const auto report = nlohmann::json::parse(text1);
  EXPECT_EQ(report.at("seed"), 7);
  const double gpus = Number(report.at("cluster").at("gpus"), "cluster.gpus");
  EXPECT_GT(gpus, 0);
  EXPECT_GT(report.at("workloads").get<int>(), 0);
  // The LP bound (sim/lp_bound.h): solved, over the same installed GPU-hours, and never
  // below a policy's return.
  const auto& bound = report.at("bound");
  EXPECT_EQ(bound.at("status"), "optimal");
  EXPECT_NEAR(Number(bound.at("installed_gpu_hours"), "bound.installed_gpu_hours"), gpus * 24,
              1e-6 * gpus * 24);
  const double bound_rate = Number(bound.at("per_gpu_hour"), "bound.per_gpu_hour");
  EXPECT_DOUBLE_EQ(Number(bound.at("slot_s"), "bound.slot_s"), 1800);
  EXPECT_GT(bound.at("columns").get<int>(), 0);
  // The bound at the 99.9% SLO target (the default --bound-slo): solved, or unreachable, and
  // never above the bound; a policy that meets the target earns no more than it.
  const auto& at_slo = bound.at("at_slo");
  EXPECT_DOUBLE_EQ(Number(at_slo.at("slo"), "bound.at_slo.slo"), 0.999);
  const std::string slo_status = at_slo.at("status");
  EXPECT_TRUE(slo_status == "optimal" || slo_status == "unreachable") << slo_status;
  const double slo_bound_rate =
      slo_status == "optimal" ? Number(at_slo.at("per_gpu_hour"), "bound.at_slo.per_gpu_hour") : 0;
  if (slo_status == "optimal") {
    EXPECT_LE(slo_bound_rate, bound_rate * (1 + 1e-9));
  }
  const auto& policies = report.at("policies");
  ASSERT_EQ(policies.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const auto& p = policies[i];
    const std::string name = kPolicies[i];
    SCOPED_TRACE("policy " + name);
    EXPECT_EQ(p.at("policy"), name);
    EXPECT_DOUBLE_EQ(Number(p.at("end_s"), "end_s"), 24 * 3600.0);

    const auto& ledger = p.at("ledger");
    const double installed = Number(ledger.at("installed_gpu_hours"), "installed_gpu_hours");
    EXPECT_NEAR(installed, gpus * 24, 1e-6 * gpus * 24);
    double sum = 0;
    int buckets = 0;
    for (const auto& [bucket, hours] : ledger.items()) {
      if (bucket == "installed_gpu_hours") continue;
      const double h = Number(hours, "ledger." + bucket);
      EXPECT_GE(h, 0) << bucket;
      sum += h;
      ++buckets;
    }
    EXPECT_GE(buckets, 7);
    EXPECT_NEAR(sum, installed, 1e-6 * installed) << ledger.dump();

    const double value = Number(p.at("value"), "value");
    EXPECT_GT(value, 0);
    EXPECT_NEAR(Number(p.at("return_per_gpu_hour"), "return_per_gpu_hour"), value / installed,
                1e-9 * (1 + value / installed));
    EXPECT_LE(value / installed, bound_rate * (1 + 1e-7));
    if (slo_status == "optimal" && Number(p.at("slo_attainment"), "slo_attainment") >= 0.999) {
      EXPECT_LE(value / installed, slo_bound_rate * (1 + 1e-7));
    }
    EXPECT_NEAR(Number(p.at("return_of_bound"), "return_of_bound"), value / installed / bound_rate,
                1e-9);
    const double held = ledger.at("useful").get<double>() + ledger.at("idle_held").get<double>() +
                        ledger.at("low_value_busy").get<double>() + ledger.at("lost").get<double>();
    const double alloc = Number(p.at("allocation_rate"), "allocation_rate");
    EXPECT_GT(alloc, 0);
    EXPECT_LE(alloc, 1);
    EXPECT_NEAR(alloc, held / installed, 1e-9);
    const double slo = Number(p.at("slo_attainment"), "slo_attainment");
    EXPECT_GT(slo, 0);
    EXPECT_LE(slo, 1);
    EXPECT_GT(Number(p.at("requests"), "requests"), 0);

    const auto& kinds = p.at("kinds");
    double kind_value = 0;
    for (const char* kind : kKinds) {
      SCOPED_TRACE(std::string("kind ") + kind);
      ASSERT_TRUE(kinds.contains(kind));
      const auto& k = kinds.at(kind);
      EXPECT_GT(k.at("submitted").get<int>(), 0);  // the mixed day has every kind
      const auto& q = k.at("queueing_delay_s");
      const double p50 = Number(q.at("p50"), "p50"), p99 = Number(q.at("p99"), "p99");
      EXPECT_GE(p50, 0);
      EXPECT_LE(p50, p99);
      EXPECT_LE(p99, 24 * 3600.0);
      kind_value += Number(k.at("value"), "kind value");
    }
    EXPECT_NEAR(kind_value, value, 1e-6 * (1 + value));
  }
}

// (c) Bad input: a clear message, a non-zero exit, no report.

TEST(BadInput, TypoedWorkloadFieldNamesFileLineAndField) {
  const std::string json = TempDir() + "/out.json";
  Outcome r = Airtime({"sim", "--cluster", kData + "cluster.yaml", "--workload",
                       kData + "typo_field.yaml", "--json", json});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, AllOf(HasSubstr("typo_field.yaml:7"), HasSubstr("gpu_typ")));
  EXPECT_THAT(r.err, HasSubstr("gpu_type"));  // the field it most likely means
  EXPECT_FALSE(fs::exists(json));
}

TEST(BadInput, UnknownGpuTypeInAWorkloadIsNamed) {
  Outcome r = Airtime(
      {"sim", "--cluster", kData + "cluster.yaml", "--workload", kData + "unknown_gpu.yaml"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, AllOf(HasSubstr("unknown_gpu.yaml:6"), HasSubstr("H900")));
  EXPECT_THAT(r.err, HasSubstr("H100"));  // lists the known types
}

TEST(BadInput, UnknownGpuTypeInAClusterIsNamed) {
  Outcome r = Airtime(
      {"sim", "--cluster", kData + "cluster_unknown_gpu.yaml", "--workload", kData + "ok.yaml"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, AllOf(HasSubstr("cluster_unknown_gpu.yaml:6"), HasSubstr("H900")));
}

TEST(BadInput, BrokenTraceRowNamesFileAndLine) {
  const std::string json = TempDir() + "/out.json";
  Outcome r = Airtime({"sim", "--cluster", kData + "cluster.yaml", "--workload",
                       kData + "broken_trace.yaml", "--json", json});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err,
              AllOf(HasSubstr("philly_broken.csv:3"), HasSubstr("duration"), HasSubstr("abc")));
  EXPECT_THAT(r.err, HasSubstr("broken_trace.yaml:5"));  // the trace entry that imported it
  EXPECT_FALSE(fs::exists(json));
}

// Issue 19: a one-byte file "," made yaml-cpp build empty documents forever (the simulator
// grew to 24 GB). Given as the cluster or as the workload file it is now a syntax error.
TEST(BadInput, ALoneCommaFileIsAYamlSyntaxError) {
  const std::string comma = TempDir() + "/comma.yaml";
  std::ofstream(comma) << ",";
  Outcome r = Airtime({"sim", "--cluster", comma, "--workload", kData + "ok.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("comma.yaml:1"), HasSubstr("YAML syntax error")));
  r = Airtime({"sim", "--cluster", kData + "cluster.yaml", "--workload", comma});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("comma.yaml:1"), HasSubstr("YAML syntax error")));
}

// Issue 19: a trace that never ends (/dev/zero) grew until std::bad_alloc aborted the
// simulator. Special files are refused before a byte is read.
TEST(BadInput, ATraceThatNeverEndsIsRefused) {
  const std::string w = TempDir() + "/zero_trace.yaml";
  std::ofstream(w) << "traces:\n  - {format: philly, file: /dev/zero}\n";
  Outcome r = Airtime({"sim", "--cluster", kData + "cluster.yaml", "--workload", w});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("'/dev/zero' is a character device, not a regular file"),
                           HasSubstr("zero_trace.yaml:2")));
}

// `airtime submit` reads its file before it talks to any daemon: /dev/zero used to grow the
// client until it was killed.
TEST(BadInput, SubmittingAFileThatNeverEndsIsRefused) {
  Outcome r =
      Airtime({"submit", "--addr", "127.0.0.1:9", "--token", std::string(32, 'a'), "/dev/zero"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("workload file '/dev/zero' is a character device, not a regular "
                               "file"));
}

TEST(BadInput, SkipBadRowsImportsTheRestAndCountsTheSkippedRow) {
  const std::string json = TempDir() + "/out.json";
  Outcome r =
      Airtime({"sim", "--cluster", kData + "cluster.yaml", "--workload",
               kData + "broken_trace.yaml", "--policy", "fifo", "--skip-bad-rows", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("2 rows imported"), HasSubstr("1 broken rows skipped"),
                           HasSubstr("philly_broken.csv:3")));
  const auto report = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(report.at("workloads"), 3);  // batch-a and the two good rows
  ASSERT_EQ(report.at("notes").size(), 1u);
  EXPECT_THAT(report.at("notes")[0].get<std::string>(),
              AllOf(HasSubstr("2 rows imported"), HasSubstr("1 broken rows skipped")));
  ASSERT_EQ(report.at("policies").size(), 1u);
  EXPECT_EQ(report.at("policies")[0].at("kinds").at("training").at("completed"), 2);
}

// --demand-csv writes each service's demand curve as the replay sees it: the mixed day's
// three services, each with its profile on every row, the steps in time order.
TEST(MixedDay, DemandCsvHasEachServicesCurve) {
  const std::string csv = TempDir() + "/demand.csv";
  Outcome r = Airtime(Concat(MixedDayInputArgs(), {"--policy", "fifo", "--horizon", "24h", "-q",
                                                   "--no-bound", "--demand-csv", csv}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(ReadFile(csv));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "service,from_s,rps,capacity_rps,cold_start_s,min_replicas,max_replicas");
  std::map<std::string, int> rows;
  std::map<std::string, double> last_at;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
    ASSERT_EQ(f.size(), 7u) << line;
    const double at = std::stod(f[1]);
    if (rows[f[0]]++ > 0) {
      EXPECT_GT(at, last_at[f[0]]) << line;
    }
    last_at[f[0]] = at;
    EXPECT_GE(std::stod(f[2]), 0) << line;
    EXPECT_GT(std::stod(f[3]), 0) << line;
  }
  EXPECT_EQ(rows.size(), 3u);
  for (const auto& [name, n] : rows) EXPECT_GT(n, 100) << name;  // minute steps over a day
  // A path that cannot be written is named.
  Outcome bad =
      Airtime(Concat(MixedDayInputArgs(), {"--policy", "fifo", "-q", "--no-bound", "--demand-csv",
                                           TempDir() + "/no/such/dir.csv"}));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("--demand-csv"));
}

TEST(BadInput, ANegativeThreadCountIsNamed) {
  Outcome r = Airtime(Concat(MixedDayInputArgs(), {"--threads", "-2", "--quiet"}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--threads"));
  EXPECT_EQ(r.out, "");
}

TEST(BadInput, AMalformedBoundSlotIsNamed) {
  Outcome r = Airtime({"sim", "--cluster", kData + "cluster.yaml", "--workload", kData + "ok.yaml",
                       "--policy", "fifo", "--bound-slot", "soon"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--bound-slot"));
  EXPECT_EQ(r.out, "");
}

TEST(BadInput, ABoundSloOutsideZeroToOneIsNamed) {
  Outcome r = Airtime({"sim", "--cluster", kData + "cluster.yaml", "--workload", kData + "ok.yaml",
                       "--policy", "fifo", "--bound-slo", "99.9"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--bound-slo"), HasSubstr("[0, 1]"), HasSubstr("99.9")));
  EXPECT_EQ(r.out, "");
}

TEST(BadInput, UnknownPolicyIsNamedWithTheKnownOnes) {
  const std::string json = TempDir() + "/out.json";
  Outcome r = Airtime({"sim", "--cluster", kData + "cluster.yaml", "--workload", kData + "ok.yaml",
                       "--policy", "fifo,bestfti", "--json", json});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, AllOf(HasSubstr("bestfti"), HasSubstr("bestfit"), HasSubstr("static")));
  EXPECT_THAT(r.err, Not(HasSubstr("Segmentation")));
  EXPECT_FALSE(fs::exists(json));
}

TEST(GoodInput, SmallScenarioRuns) {
  Outcome r = Airtime({"sim", "--cluster", kData + "cluster.yaml", "--workload", kData + "ok.yaml",
                       "--policy", "fifo,static,bestfit"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("fifo"), HasSubstr("static"), HasSubstr("bestfit"),
                           HasSubstr("installed GPU-hours")));
}

// The cluster file's costs reach the report: every installed GPU-hour at the type's rate
// (here 43,800 / (5 x 8,760 h) = 1.00 + 1 kW x 0.10 x 1.5 = 0.15, so 1.15 per GPU-hour).
TEST(Costs, SimJsonCarriesCostsFromTheClusterFile) {
  const std::string dir = TempDir();
  const std::string cluster = dir + "/cluster.yaml";
  {
    std::ofstream f(cluster);
    f << ReadFile(kData + "cluster.yaml")
      << "  costs:\n    H100: {price: 43800, life_years: 5, power_w: 1000, "
         "electricity_per_kwh: 0.10, pue: 1.5}\n";
  }
  const std::string json = dir + "/report.json";
  Outcome r = Airtime({"sim", "--cluster", cluster, "--workload", kData + "ok.yaml", "--policy",
                       "fifo", "--no-bound", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("costs for fifo"), HasSubstr("break-even"),
                           HasSubstr("cost by bucket: useful")));
  const auto report = nlohmann::json::parse(ReadFile(json));
  const auto& p = report["policies"][0];
  const auto& c = p["costs"];
  ASSERT_EQ(c["types"].size(), 1u) << c.dump(2);
  const auto& h100 = c["types"][0];
  EXPECT_EQ(h100["type"], "H100");
  EXPECT_EQ(h100["basis"], "catalogue_power");
  EXPECT_NEAR(h100["per_hour"].get<double>(), 1.15, 1e-12);
  EXPECT_NEAR(h100["depreciation_per_hour"].get<double>(), 1.0, 1e-12);
  const double installed = p["ledger"]["installed_gpu_hours"].get<double>();
  EXPECT_NEAR(c["cost"].get<double>(), 1.15 * installed, 1e-9);
  double buckets = 0;
  for (const auto& [name, v] : c["buckets"].items()) buckets += v.get<double>();
  EXPECT_NEAR(buckets, c["cost"].get<double>(), 1e-9);
  EXPECT_NEAR(c["margin"].get<double>(), p["value"].get<double>() - c["cost"].get<double>(), 1e-9);
  // Both jobs complete on the H100s: their value is the type's, and so is a break-even.
  EXPECT_NEAR(h100["value"].get<double>(), p["value"].get<double>(), 1e-9);
  ASSERT_TRUE(h100["breakeven_allocation"].is_number()) << h100.dump(2);
  EXPECT_NEAR(h100["breakeven_allocation"].get<double>(),
              1.15 / h100["value_per_allocated_gpu_hour"].get<double>(), 1e-12);
}

TEST(Costs, AHostileCostIsRefusedNamingFileLineAndField) {
  const std::string dir = TempDir();
  const std::string cluster = dir + "/cluster.yaml";
  {
    std::ofstream f(cluster);
    f << ReadFile(kData + "cluster.yaml") << "  costs:\n    H100: {price: -30000}\n";
  }
  Outcome r = Airtime({"sim", "--cluster", cluster, "--workload", kData + "ok.yaml"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, AllOf(HasSubstr("cluster.yaml:13"), HasSubstr("costs.H100.price"),
                           HasSubstr("found '-30000'")));
}

TEST(Suite, EveryScenarioUnderEveryPolicyWithInputFromTheCommandLine) {
  const std::string json = TempDir() + "/suite.json";
  Outcome r = Airtime({"sim", "--suite", "--suite-file", kData + "suite.yaml", "--policy",
                       "fifo,airtime", "--cluster", kData + "cluster.yaml", "--workload",
                       kData + "ok.yaml", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("== small"), HasSubstr("absent-fgd: skipped"),
                           HasSubstr("== command-line"), HasSubstr("== summary")));
  const auto report = nlohmann::json::parse(ReadFile(json));
  ASSERT_EQ(report.at("entries").size(), 4u);  // (small, command-line) x (fifo, airtime)
  for (const auto& e : report.at("entries")) {
    EXPECT_TRUE(e.contains("ledger"));
    EXPECT_TRUE(e.contains("return_per_gpu_hour"));
    EXPECT_TRUE(e.contains("slo_attainment"));
  }
  EXPECT_EQ(report.at("entries")[0].at("scenario"), "small");
  EXPECT_EQ(report.at("entries")[1].at("policy"), "airtime");
  // Every replay prints its LP bound and each return as a share of it.
  EXPECT_THAT(r.out, AllOf(HasSubstr("bound per installed GPU-h: "), HasSubstr("% of bound")));
  // Its scenarios have no service: no bound at an SLO target.
  EXPECT_THAT(r.out, Not(HasSubstr("realtime SLO: ")));
  for (const auto& e : report.at("entries")) {
    EXPECT_EQ(e.at("bound").at("status"), "optimal");
    EXPECT_LE(e.at("return_per_gpu_hour").get<double>(),
              e.at("bound").at("per_gpu_hour").get<double>() * (1 + 1e-7));
  }
  // --no-bound skips it.
  Outcome n = Airtime({"sim", "--suite", "--suite-file", kData + "suite.yaml", "--policy", "fifo",
                       "--no-bound", "--json", json});
  ASSERT_EQ(n.exit_code, 0) << n.err;
  EXPECT_THAT(n.out, Not(HasSubstr("bound per installed GPU-h")));
  // (The parsed report must outlive the loop: a range-for over a member of a temporary
  // reads freed memory.)
  const nlohmann::json plain = nlohmann::json::parse(ReadFile(json));
  for (const auto& e : plain.at("entries")) EXPECT_FALSE(e.contains("bound"));
}

// `airtime policies` lists the registry in registration order, and that list, less replay
// (it needs a schedule of its own), is the default of `airtime sim` (a replay and the suite);
// the FGD protocol keeps its own default.
TEST(Policies, TheListIsTheRegistryAndSimsDefault) {
  Outcome j = Airtime({"policies", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto list = nlohmann::json::parse(j.out);
  std::vector<std::string> names;
  for (const auto& p : list.at("policies")) {
    names.push_back(p.at("name"));
    EXPECT_FALSE(p.at("description").get<std::string>().empty()) << p.dump();
    EXPECT_TRUE(p.at("parameters").is_array()) << p.dump();
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"fifo", "static", "bestfit", "fgd", "slurm", "tiresias",
                                      "kai", "lyra", "airtime", "fixed-generalist",
                                      "cheapest-meeting-quality", "static-split", "replay"}));
  // Compared by default: all but replay and the peers for model variants (airtime itself on
  // any input without variants).
  std::string joined;
  std::vector<std::string> compared;
  for (const auto& n : names)
    if (n != "replay" && n != "fixed-generalist" && n != "cheapest-meeting-quality" &&
        n != "static-split") {
      joined += (joined.empty() ? "" : ",") + n;
      compared.push_back(n);
    }
  EXPECT_EQ(list.at("sim_default"), joined);

  Outcome t = Airtime({"policies"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_THAT(t.out, AllOf(HasSubstr("parameters: inference_share"), HasSubstr("tiresias"),
                           HasSubstr(joined)));
  Outcome help = Airtime({"sim", "--help"});
  EXPECT_THAT(help.out, HasSubstr("--policy TEXT=" + joined));

  // A replay without --policy runs every registered policy compared by default, in that
  // order (all but replay and the peers for model variants).
  const std::string json = TempDir() + "/out.json";
  Outcome r = Airtime({"sim", "--cluster", kData + "cluster.yaml", "--workload", kData + "ok.yaml",
                       "--quiet", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(ReadFile(json));
  std::vector<std::string> ran;
  for (const auto& p : report.at("policies")) ran.push_back(p.at("policy"));
  EXPECT_EQ(ran, compared);

  // The protocol compares the placement policies unless told otherwise.
  const std::string fgd_json = TempDir() + "/fgd.json";
  const std::string fgd = kSourceDir + "/tests/data/fgd/";
  Outcome f =
      Airtime({"sim", "--protocol", "fgd", "--nodes", fgd + "openb_node_list_excerpt.csv", "--pods",
               fgd + "openb_pod_list_excerpt.csv", "--seeds", "1", "--json", fgd_json});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  const auto protocol = nlohmann::json::parse(ReadFile(fgd_json));
  std::vector<std::string> placed;
  for (const auto& p : protocol.at("policies")) placed.push_back(p.at("policy"));
  EXPECT_EQ(placed, (std::vector<std::string>{"bestfit", "fgd"}));
}

// The lines of `path` after its header.
std::string Body(const std::string& path) {
  const std::string text = ReadFile(path);
  return text.substr(std::min(text.size(), text.find('\n') + 1));
}

// scripts/held-out-days.py swaps a scenario's Philly day for another day cut from the full
// trace. Here the "full trace" is the two shipped excerpts together: virtual cluster 6c71a0
// submitted jobs on both dates, so with a band wide enough it gets the other file's date as
// its held-out day; the three clusters together only on their own date, so they get none.
// The shipped day (the control) must replay exactly as the scenario itself does, and a
// held-out day's excerpt must be the header and that day's rows of the cluster, in file order.
TEST(HeldOutDays, TheShippedDayReplaysUnchangedAndAnotherDayIsCutAlike) {
  const std::string dir = TempDir();
  const std::string mixed_trace = kMixedDay + "data/philly_6c71a0_2017-10-26.csv";
  const std::string three_vc = kSourceDir + "/examples/suite/data/philly_3vc_2017-11-15.csv";
  const std::string full = dir + "/philly.csv";
  {
    const std::string text = ReadFile(mixed_trace);
    std::ofstream(full) << text << Body(three_vc);
  }
  Outcome r = RunProgram(
      "python3", {kSourceDir + "/scripts/held-out-days.py", "--philly", full, "--band", "10",
                  "--policy", "fifo", "--keep", dir + "/keep", "--airtime", g_airtime});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("virtual clusters 6c71a0, shipped day 2017-10-26"),
                    HasSubstr("held-out days 2017-11-15"),
                    HasSubstr("virtual clusters 103959,11cb48,6c71a0, shipped day "
                              "2017-11-15"),
                    HasSubstr("held-out days none"), HasSubstr("mixed-day 1 days"),
                    HasSubstr("overload-150 2017-11-15"), Not(HasSubstr("overload-150 1 days"))));

  // The control: the mixed day as the suite runs it.
  const std::string json = dir + "/mixed.json";
  Outcome m = Airtime({"sim", "--cluster", kMixedDay + "cluster.yaml", "--workload",
                       kMixedDay + "workloads.yaml", "--horizon", "24h", "--policy", "fifo",
                       "--seed", "1", "--quiet", "--json", json});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto direct = nlohmann::json::parse(ReadFile(json)).at("policies").at(0);
  const auto control = nlohmann::json::parse(ReadFile(dir + "/keep/suite_2017-10-26_seed1.json"));
  bool found = false;
  for (const auto& e : control.at("entries")) {
    if (e.at("scenario") != "mixed-day") continue;
    found = true;
    EXPECT_EQ(e.at("value"), direct.at("value"));
    EXPECT_EQ(e.at("return_per_gpu_hour"), direct.at("return_per_gpu_hour"));
    EXPECT_EQ(e.at("kinds").at("training").at("submitted"),
              direct.at("kinds").at("training").at("submitted"));
  }
  EXPECT_TRUE(found) << "no mixed-day entry on the shipped day";

  // The held-out day of virtual cluster 6c71a0: its rows of the three-cluster file.
  std::string expected = ReadFile(three_vc);
  expected = expected.substr(0, expected.find('\n') + 1);
  std::istringstream rows(Body(three_vc));
  int kept = 0;
  for (std::string line; std::getline(rows, line);)
    if (line.size() > 7 && line.compare(line.size() - 7, 7, ",6c71a0") == 0) {
      expected += line + "\n";
      ++kept;
    }
  EXPECT_GT(kept, 0);
  EXPECT_EQ(ReadFile(dir + "/keep/philly_6c71a0_2017-11-15.csv"), expected);
}

// What every HTML report must be: one self-contained file (nothing fetched: no http(s) in a
// src or href, no script), well-formed as XML (python3's parser reads it whole, where
// python3 is installed), holding `svgs` charts and each of `names`.
void ExpectSelfContainedReport(const std::string& path, size_t svgs,
                               const std::vector<std::string>& names) {
  const std::string html = ReadFile(path);
  ASSERT_FALSE(html.empty()) << path;
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_FALSE(std::regex_search(
      html, std::regex("(src|href)\\s*=\\s*[\"']?\\s*(https?:)?//", std::regex::icase)));
  EXPECT_THAT(html, AllOf(Not(HasSubstr("<script")), Not(HasSubstr("<link")),
                          Not(HasSubstr("@import")), Not(HasSubstr("url("))));
  size_t count = 0;
  for (size_t i = html.find("<svg"); i != std::string::npos; i = html.find("<svg", i + 1)) ++count;
  EXPECT_EQ(count, svgs);
  for (const std::string& n : names) EXPECT_THAT(html, HasSubstr(n));
  if (std::system("command -v python3 >/dev/null 2>&1") == 0) {
    Outcome xml = RunProgram(
        "python3", {"-c", "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])", path});
    EXPECT_EQ(xml.exit_code, 0) << xml.err;
  }
}

// `airtime sim --html` on the small scenario: a report with every policy and each chart,
// safe with a hostile cluster name, and no progress line when stderr is not a terminal.
TEST(Html, AReplayReportIsSelfContainedWithEveryPolicy) {
  const std::string dir = TempDir();
  std::string cluster = ReadFile(kData + "cluster.yaml");
  const std::string from = "name: e2e-one-node";
  ASSERT_NE(cluster.find(from), std::string::npos);
  cluster.replace(cluster.find(from), from.size(), "name: \"<script>alert(1)</script>&\"");
  std::ofstream(dir + "/cluster.yaml") << cluster;
  const std::string html = dir + "/report.html";
  Outcome r = Airtime({"sim", "--cluster", dir + "/cluster.yaml", "--workload", kData + "ok.yaml",
                       "--policy", "fifo,bestfit,airtime", "--html", html});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("HTML report written to " + html));
  EXPECT_EQ(r.err, "");  // stderr is a file here: no progress line
  // Return, ledger, allocation and queue over time, queueing delay (no service: no SLO chart).
  ExpectSelfContainedReport(
      html, 5,
      {"fifo", "bestfit", "airtime", "&lt;script&gt;alert(1)&lt;/script&gt;&amp;", "useful",
       "training", "batch"});
  // A folder that does not exist is named before anything runs.
  Outcome bad = Airtime({"sim", "--cluster", kData + "cluster.yaml", "--workload",
                         kData + "ok.yaml", "--policy", "fifo", "--html", dir + "/no/such.html"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, AllOf(HasSubstr("--html: cannot write " + dir + "/no/such.html"),
                             HasSubstr("folder")));
}

TEST(Html, TheProtocolAndTheSuiteWriteReportsToo) {
  const std::string dir = TempDir();
  const std::string fgd = kSourceDir + "/tests/data/fgd/";
  Outcome p =
      Airtime({"sim", "--protocol", "fgd", "--nodes", fgd + "openb_node_list_excerpt.csv", "--pods",
               fgd + "openb_pod_list_excerpt.csv", "--seeds", "2", "--html", dir + "/fgd.html"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.err, "");
  // The whole curve and the part from 80%; no published curve beside the excerpt, which the
  // report says.
  ExpectSelfContainedReport(dir + "/fgd.html", 2,
                            {"bestfit", "fgd", "No published curve to compare with"});
  Outcome s = Airtime({"sim", "--suite", "--suite-file", kData + "suite.yaml", "--policy",
                       "fifo,airtime", "--no-bound", "--html", dir + "/suite.html"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.err, "");
  ExpectSelfContainedReport(
      dir + "/suite.html", 5,
      {"<h2>small</h2>", "<h2>absent-fgd</h2>", "Skipped", "<h2>Summary</h2>", "fifo", "airtime"});
}

TEST(Protocol, FgdRunsTheSeedsFromTheFirstSeedGiven) {
  const std::string json = TempDir() + "/fgd.json";
  const std::string fgd = kSourceDir + "/tests/data/fgd/";
  Outcome r = Airtime({"sim", "--protocol", "fgd", "--nodes", fgd + "openb_node_list_excerpt.csv",
                       "--pods", fgd + "openb_pod_list_excerpt.csv", "--policy", "fgd", "--seeds",
                       "2", "--first-seed", "7", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("seeds 2 from 7"));
  const auto report = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(report.at("first_seed"), 7);
  const auto& per_seed = report.at("policies").at(0).at("per_seed");
  ASSERT_EQ(per_seed.size(), 2u);
  EXPECT_EQ(per_seed[0].at("seed"), 7);
  EXPECT_EQ(per_seed[1].at("seed"), 8);
}

TEST(Suite, ABadSuiteFileNamesTheLineAndField) {
  Outcome r = Airtime({"sim", "--suite", "--suite-file", kData + "suite_bad.yaml"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, AllOf(HasSubstr("suite_bad.yaml:2"), HasSubstr("clustr")));
}

// `airtime sim` of tests/data/e2e/WORKLOAD on the one-L4 cluster under fifo, JSON to `json`.
std::vector<std::string> OneL4Run(const std::string& workload, const std::string& json) {
  return {"sim",        "--cluster",      kData + "cluster_one_l4.yaml",
          "--workload", kData + workload, "--policy",
          "fifo",       "--json",         json};
}

TEST(Interference, GavelSlowsAContendingPairAndNoneDoesNot) {
  // ResNet-50 beside Recommendation: 0.66 each in Gavel's table. An hour of work on the L4
  // (12,000 s) takes 12,000 / 0.66 = 18,220 s while they share; with `none`, 12,000 s.
  const std::string json = TempDir() + "/out.json";
  const std::vector<std::string> run = OneL4Run("shared_gavel.yaml", json);
  Outcome r = Airtime(run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto report = nlohmann::json::parse(ReadFile(json));
  EXPECT_NEAR(report.at("policies")[0].at("end_s").get<double>(), 12000 / 0.6586, 1);
  EXPECT_EQ(report.at("interference"), "gavel");
  r = Airtime(Concat(run, {"--interference", "none"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  report = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(report.at("policies")[0].at("end_s"), 12000);
  EXPECT_EQ(report.at("interference"), "none");
}

TEST(Interference, AMeasuredTableSlowsSharedWorkAsMeasured) {
  // Both jobs share the one L4 from 00:00. On an L4 (speed 0.3) an hour of work takes
  // 12,000 s; the table slows embed-a to 0.5 and rerank-b to 0.8 while they share: rerank-b
  // ends at 15,000 s, and embed-a, at full speed after that, at 19,500 s.
  const std::string json = TempDir() + "/out.json";
  const std::vector<std::string> run = OneL4Run("shared.yaml", json);
  Outcome r = Airtime(Concat(run, {"--interference", kData + "interference.csv"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(report.at("policies")[0].at("end_s"), 19500);
  EXPECT_EQ(report.at("interference"), kData + "interference.csv");
  // Without the table the families are unknown, and the message lists the known ones.
  fs::remove(json);
  r = Airtime(run);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, AllOf(HasSubstr("shared.yaml:3"),
                           HasSubstr("unknown model family "
                                     "'embedder'"),
                           HasSubstr("ResNet-50")));
  EXPECT_FALSE(fs::exists(json));
  // A typo is not taken for a file name without saying what was expected.
  r = Airtime(Concat(run, {"--interference", "off"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("expected gavel, none or a CSV file"),
                           HasSubstr("interference file 'off' not found")));
  // A broken table is named with its line, before anything runs.
  r = Airtime(Concat(run, {"--interference", kData + "interference_bad.csv"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err,
              AllOf(HasSubstr("interference_bad.csv:3"), HasSubstr("factor"), HasSubstr("1.5")));
  EXPECT_FALSE(fs::exists(json));
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  g_airtime = airtime::e2e::AirtimeFlag(argc, argv, "e2e_test");
  if (g_airtime.empty()) return 2;
  return RUN_ALL_TESTS();
}
