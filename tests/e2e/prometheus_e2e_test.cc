// End-to-end tests of the daemon's /metrics against the ecosystem's own tools: a real
// Prometheus (Debian's `prometheus`) scrapes a real `airtime server` on fake GPUs and is
// queried through its HTTP API; `promtool check metrics` lints the exposition; and every
// query of the shipped Grafana dashboard (deploy/grafana/airtime.json) names only metrics the
// daemon exposes. Each test starts one daemon with tenant quotas and a small workload set
// that makes the conditional series exist (tenants, admissions, a service, a queue).
// The Prometheus and promtool tests skip, saying why, when the tool is not installed
// (scripts/install-deps.sh installs it, so CI runs them).
//
// Run as `prometheus_e2e_test --airtime=PATH [gtest flags]` (tests/CMakeLists.txt passes
// the binary of the same build).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e_util.h"
#include "server_process.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;
using airtime::e2e::ReadFile;

std::string g_airtime;  // --airtime=PATH

constexpr char kPrometheus[] = "/usr/bin/prometheus";
constexpr char kPromtool[] = "/usr/bin/promtool";

std::string TempDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(::testing::TempDir()) /
                 ("airtime_prom_" + std::to_string(getpid()) + "_" + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// A port the kernel has free now on 127.0.0.1 (bound to port 0, then closed).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

// Polls `done` every 100 ms until it is true or `limit` passed; returns its last answer.
bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(100ms);
  }
  return true;
}

// 8 fake H100s under airtime's policy with tenant quotas of 4 GPUs each, and:
//   team-a  train-a  6 preemptible GPUs: runs, 2 of them borrowed over its quota;
//   team-b  chat-b   a realtime service at 5 rps (one replica of 10 rps on 1 GPU);
//   team-b  huge-b   8 GPUs, not preemptible: over its tenant's quota, so it waits
//                    (the policy refuses it: inadmissible at every cycle).
// Start() returns once /metrics has every series these make.
class LoadedDaemon {
 public:
  explicit LoadedDaemon(const std::string& dir) : dir_(dir), process_(dir + "/data") {}

  void Start() {
    ASSERT_NO_FATAL_FAILURE(process_.Start(
        {g_airtime, "server", "--data", dir_ + "/data", "--listen", "127.0.0.1:0", "--fake-gpus",
         "8xH100", "--policy", "airtime:quota=team-a=4;team-b=4", "--isolation", "off"}));
    httplib::Client c = process_.Client();
    const std::string workloads =
        "- {name: train-a, tenant: team-a, kind: training, gpus: 6, preemptible: true,\n"
        "   command: [/bin/sleep, '120']}\n"
        "- name: chat-b\n"
        "  tenant: team-b\n"
        "  kind: realtime\n"
        "  slo: {latency_ms: 200, capacity_rps: 10, max_replicas: 1, cold_start: 1s}\n"
        "  value: {per_1k_requests: 2}\n"
        "  command: [/bin/sleep, '120']\n"
        "- {name: huge-b, tenant: team-b, kind: training, gpus: 8, command: [/bin/sleep, '120']}\n";
    auto posted = c.Post("/v1/workloads", workloads, "application/yaml");
    ASSERT_TRUE(posted);
    ASSERT_EQ(posted->status, 201) << posted->body;
    auto demand = c.Post("/v1/workloads/chat-b/demand", R"({"rps": 5})", "application/json");
    ASSERT_TRUE(demand);
    ASSERT_EQ(demand->status, 200) << demand->body;
    const std::vector<std::string> wanted = {
        "airtime_build_info{",
        "airtime_tenant_borrowed_gpus{tenant=\"team-a\"} 2",
        "airtime_workload_allocated_gpus{workload=\"chat-b\"",
        "airtime_admission_attempts_total{result=\"inadmissible\"}",
        "airtime_workloads{state=\"queued\"",
        "airtime_service_requests_total{workload=\"chat-b\"}",
        "airtime_gpu_utilization_ratio{"};
    std::string missing;
    const bool ready = WaitFor(
        [&] {
          const std::string body = Metrics();
          missing.clear();
          for (const std::string& w : wanted)
            if (body.find(w) == std::string::npos) missing += " " + w;
          return missing.empty();
        },
        30s);
    ASSERT_TRUE(ready) << "/metrics still lacks:" << missing << "\n" << Metrics();
  }

  // Cancels the workloads (their processes outlive a killed daemon) and waits for them to end.
  ~LoadedDaemon() {
    if (process_.pid() <= 0) return;
    httplib::Client c = Client();
    for (const char* name : {"train-a", "chat-b", "huge-b"})
      c.Delete(std::string("/v1/workloads/") + name);
    WaitFor(
        [&] {
          auto r = c.Get("/v1/workloads?state=active");
          if (!r || r->status != 200) return true;
          const json list = json::parse(r->body, nullptr, false);
          return !list.is_object() || list["workloads"].empty();
        },
        10s);
  }

  // The exposition as a scraper gets it (no token).
  std::string Metrics() const {
    auto r = httplib::Client(process_.address()).Get("/metrics");
    return r && r->status == 200 ? r->body : "";
  }
  httplib::Client Client() const { return process_.Client(); }
  const std::string& address() const { return process_.address(); }
  std::string Log() const { return process_.Log(); }

 private:
  std::string dir_;
  airtime::e2e::ServerProcess process_;
};

// ---------------------------------------------------------------- Prometheus

// A Prometheus of its own: temp dir, free port, scraping `target` every second.
class Prometheus {
 public:
  explicit Prometheus(std::string dir) : dir_(std::move(dir)) {}
  ~Prometheus() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  void Start(const std::string& target) {
    port_ = FreePort();
    ASSERT_GT(port_, 0);
    std::ofstream(dir_ + "/prometheus.yml")
        << "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
           "scrape_configs:\n"
           "  - job_name: airtime\n"
           "    static_configs: [{targets: ['"
        << target << "']}]\n";
    pid_ = airtime::e2e::SpawnLogged(
        {kPrometheus, "--config.file=" + dir_ + "/prometheus.yml",
         "--storage.tsdb.path=" + dir_ + "/tsdb",
         "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"},
        {}, LogPath(), /*append=*/false);
    const bool up = WaitFor(
        [&] {
          httplib::Client c("127.0.0.1", port_);
          auto r = c.Get("/-/ready");
          return r && r->status == 200;
        },
        30s);
    ASSERT_TRUE(up) << "prometheus did not become ready: " << ReadFile(LogPath());
  }

  // The instant vector of `query` (its data.result), or null with the error in `why`.
  json Query(const std::string& query, std::string* why) const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(10, 0);
    auto r = c.Get("/api/v1/query", httplib::Params{{"query", query}}, httplib::Headers{});
    if (!r) {
      *why = "no answer from prometheus";
      return nullptr;
    }
    json body = json::parse(r->body, nullptr, false);
    if (r->status != 200 || !body.is_object() || body.value("status", "") != "success") {
      *why = "HTTP " + std::to_string(r->status) + ": " + r->body;
      return nullptr;
    }
    return body["data"]["result"];
  }

  // The single sample's value of `query` once Prometheus has one (within 30 s).
  double Value(const std::string& query) const {
    std::string why;
    json result;
    WaitFor(
        [&] {
          result = Query(query, &why);
          return result.is_array() && !result.empty();
        },
        30s);
    EXPECT_TRUE(result.is_array() && result.size() == 1)
        << query << ": " << (why.empty() ? result.dump() : why);
    if (!result.is_array() || result.size() != 1) return -1;
    return std::stod(result[0]["value"][1].get<std::string>());
  }

  std::string Log() const { return ReadFile(LogPath()); }

 private:
  std::string LogPath() const { return dir_ + "/prometheus.log"; }
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// A real Prometheus scrapes the daemon every second; its HTTP API then holds airtime's
// series with the daemon's values: the build info, the GPU count the API reports, the
// tenants' quotas and use, the admissions.
TEST(PrometheusE2E, RealPrometheusScrapesTheDaemon) {
  if (access(kPrometheus, X_OK) != 0)
    GTEST_SKIP() << kPrometheus << " is not installed (Debian package prometheus; "
                 << "scripts/install-deps.sh installs it)";
  const std::string dir = TempDir();
  LoadedDaemon daemon(dir);
  ASSERT_NO_FATAL_FAILURE(daemon.Start());
  Prometheus prom(dir + "/prometheus");
  fs::create_directories(dir + "/prometheus");
  ASSERT_NO_FATAL_FAILURE(prom.Start(daemon.address()));

  EXPECT_EQ(prom.Value("up{job=\"airtime\"}"), 1) << prom.Log();
  EXPECT_EQ(prom.Value("airtime_build_info"), 1);
  std::string why;
  const json info = prom.Query("airtime_build_info", &why);
  ASSERT_TRUE(info.is_array() && info.size() == 1) << why;
  EXPECT_THAT(info[0]["metric"].value("version", ""), ::testing::MatchesRegex("[0-9]+\\.[0-9]+.*"));
  EXPECT_FALSE(info[0]["metric"].value("commit", "").empty());

  httplib::Client api = daemon.Client();
  auto gpus = api.Get("/v1/gpus");
  ASSERT_TRUE(gpus);
  const json g = json::parse(gpus->body, nullptr, false);
  ASSERT_TRUE(g.contains("gpus")) << gpus->body;
  const double api_gpus = static_cast<double>(g["gpus"].size());
  EXPECT_EQ(api_gpus, 8);
  EXPECT_EQ(prom.Value("airtime_gpus_installed"), api_gpus);
  EXPECT_EQ(prom.Value("count(airtime_gpu_allocated_ratio)"), api_gpus);
  // 6 GPUs of train-a and chat-b's replica.
  EXPECT_NEAR(prom.Value("sum(airtime_gpu_allocated_ratio)"), 7, 1e-9);

  EXPECT_EQ(prom.Value("airtime_tenant_deserved_gpus{tenant=\"team-a\"}"), 4);
  EXPECT_EQ(prom.Value("airtime_tenant_deserved_gpus{tenant=\"team-b\"}"), 4);
  EXPECT_EQ(prom.Value("airtime_tenant_allocated_gpus{tenant=\"team-a\"}"), 6);
  EXPECT_EQ(prom.Value("airtime_tenant_allocated_gpus{tenant=\"team-b\"}"), 1);
  EXPECT_EQ(prom.Value("airtime_tenant_borrowed_gpus{tenant=\"team-a\"}"), 2);
  EXPECT_EQ(prom.Value("airtime_tenant_borrowed_gpus{tenant=\"team-b\"}"), 0);
  EXPECT_EQ(prom.Value("airtime_workloads{state=\"queued\",kind=\"training\"}"), 1);
  EXPECT_GE(prom.Value("airtime_admission_attempts_total{result=\"success\"}"), 2);
  EXPECT_GE(prom.Value("airtime_admission_attempts_total{result=\"inadmissible\"}"), 1);
}

// ---------------------------------------------------------------- promtool

// promtool's findings on a live exposition: each must be one of the deliberate exceptions
// docs/api.md lists (the per-GPU families keep the DCGM exporter's label `modelName`, so that
// they join DCGM's series), and the exposition must parse.
TEST(PrometheusE2E, PromtoolAcceptsTheMetrics) {
  if (access(kPromtool, X_OK) != 0)
    GTEST_SKIP() << kPromtool << " is not installed (Debian package prometheus; "
                 << "scripts/install-deps.sh installs it)";
  const std::string dir = TempDir();
  LoadedDaemon daemon(dir);
  ASSERT_NO_FATAL_FAILURE(daemon.Start());
  const std::string body = daemon.Metrics();
  for (const char* family :
       {"airtime_build_info", "airtime_tenant_allocated_gpus", "airtime_tenant_deserved_gpus",
        "airtime_tenant_fair_share_gpus", "airtime_tenant_borrowed_gpus",
        "airtime_admission_attempts_total", "airtime_gpu_cost_per_hour"})
    EXPECT_NE(body.find(std::string("\n") + family + "{"), std::string::npos) << family;
  std::ofstream(dir + "/metrics.txt") << body;
  const std::string cmd =
      std::string(kPromtool) + " check metrics < " + dir + "/metrics.txt > " + dir + "/out 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  const int rc = WEXITSTATUS(status);
  const std::string out = ReadFile(dir + "/out");
  // 0: clean; 3: lint findings only (checked below); anything else: it did not parse.
  ASSERT_TRUE(rc == 0 || rc == 3) << "promtool exited " << rc << ":\n" << out;
  const std::set<std::string> dcgm_labelled = {
      "airtime_gpu_allocated_ratio", "airtime_gpu_utilization_ratio",
      "airtime_gpu_memory_used_bytes", "airtime_gpu_power_watts"};
  const std::regex camel("(\\w+) label names should be written in 'snake_case' not 'camelCase'");
  std::istringstream lines(out);
  std::string line;
  int findings = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    ++findings;
    std::smatch m;
    EXPECT_TRUE(std::regex_match(line, m, camel) && dcgm_labelled.count(m[1]))
        << "promtool: " << line << "\n(not a documented exception: fix the metric, or list the "
        << "exception in docs/api.md and here)";
  }
  EXPECT_EQ(rc == 0, findings == 0) << out;
}

// ---------------------------------------------------------------- Grafana

// Whether the word at `at` in `expr` is "by" or "without" (an aggregation's clause).
bool FollowedByClause(const std::string& expr, size_t at) {
  size_t end = at;
  while (end < expr.size() && std::isalpha(static_cast<unsigned char>(expr[end]))) ++end;
  std::string word = expr.substr(at, end - at);
  for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return word == "by" || word == "without";
}

// The metric names a PromQL expression reads: identifiers that are not functions or
// aggregations (followed by '('), keywords, label names (inside {...} or the lists of by,
// without, on, ignoring, group_left, group_right), strings, durations ([...]), numbers or
// Grafana variables ($name, ${name}).
std::set<std::string> MetricNames(const std::string& expr) {
  static const std::set<std::string> kKeywords = {
      "by",   "without", "on", "ignoring", "group_left", "group_right", "offset",
      "bool", "and",     "or", "unless",   "inf",        "nan",         "atan2"};
  static const std::set<std::string> kLists = {"by",       "without",    "on",
                                               "ignoring", "group_left", "group_right"};
  auto ident_start = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
  };
  auto ident_char = [&](char c) {
    return ident_start(c) || std::isdigit(static_cast<unsigned char>(c));
  };
  std::set<std::string> names;
  size_t i = 0;
  const size_t n = expr.size();
  auto skip_to = [&](char close) {
    while (i < n && expr[i] != close) {
      if (expr[i] == '"' || expr[i] == '\'') {
        const char q = expr[i++];
        while (i < n && expr[i] != q) i += expr[i] == '\\' ? 2 : 1;
      }
      ++i;
    }
    ++i;
  };
  while (i < n) {
    const char c = expr[i];
    if (c == '"' || c == '\'' || c == '`') {
      ++i;
      while (i < n && expr[i] != c) i += expr[i] == '\\' ? 2 : 1;
      ++i;
    } else if (c == '{') {
      ++i;
      skip_to('}');
    } else if (c == '[') {
      ++i;
      skip_to(']');
    } else if (c == '$') {
      ++i;
      if (i < n && expr[i] == '{') {
        skip_to('}');
      } else {
        while (i < n && ident_char(expr[i])) ++i;
      }
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      while (i < n && (ident_char(expr[i]) || expr[i] == '.')) ++i;
    } else if (ident_start(c)) {
      const size_t start = i;
      while (i < n && ident_char(expr[i])) ++i;
      const std::string word = expr.substr(start, i - start);
      size_t next = i;
      while (next < n && std::isspace(static_cast<unsigned char>(expr[next]))) ++next;
      std::string lower = word;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (kLists.count(lower)) {
        if (next < n && expr[next] == '(') {
          i = next + 1;
          skip_to(')');
        }
      } else if (kKeywords.count(lower)) {
        // an operator or modifier
      } else if (next < n && expr[next] == '(') {
        // a function or an aggregation
      } else if (FollowedByClause(expr, next)) {
        // an aggregation with its clause first: sum by (x) (...)
      } else {
        names.insert(word);
      }
    } else {
      ++i;
    }
  }
  return names;
}

// Grafana's label_values(METRIC_OR_SELECTOR, LABEL) of a query variable, or the expression.
std::string VariableExpr(const std::string& query) {
  static const std::regex label_values("^\\s*label_values\\((.*),\\s*\\w+\\s*\\)\\s*$");
  std::smatch m;
  if (std::regex_match(query, m, label_values)) return m[1];
  return query;
}

// The sample names of an exposition: NAME of each "NAME{...} VALUE" or "NAME VALUE" line.
std::set<std::string> ExposedNames(const std::string& body) {
  std::set<std::string> names;
  std::istringstream lines(body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    names.insert(line.substr(0, line.find_first_of("{ ")));
  }
  return names;
}

TEST(GrafanaDashboard, MetricNamesAreReadFromPromQL) {
  // The extractor itself, so that the dashboard check below cannot pass by finding nothing.
  EXPECT_EQ(MetricNames("histogram_quantile(0.9, sum by (le) (rate(a_bucket{x=\"y\"}[5m])))"),
            (std::set<std::string>{"a_bucket"}));
  EXPECT_EQ(MetricNames("sum(increase(v_total{i=~\"$i\"}[$__range])) / (sum(increase("
                        "g_seconds_total[1h] offset 5m)) / 3600)"),
            (std::set<std::string>{"v_total", "g_seconds_total"}));
  EXPECT_EQ(MetricNames("b * on (instance) group_left(version) c > bool 0 and ${d}"),
            (std::set<std::string>{"b", "c"}));
  EXPECT_EQ(VariableExpr("label_values(airtime_build_info, instance)"), "airtime_build_info");
}

// Every query of deploy/grafana/airtime.json (panels' targets, rows' panels, query variables)
// reads only metrics that a live daemon's /metrics holds; a failure names the panel and the
// metric.
TEST(GrafanaDashboard, EveryQueryNamesAnExposedMetric) {
  const std::string path = std::string(AIRTIME_SOURCE_DIR) + "/deploy/grafana/airtime.json";
  const json dashboard = json::parse(ReadFile(path), nullptr, false);
  ASSERT_TRUE(dashboard.is_object()) << path << " is not a JSON object";
  const std::string dir = TempDir();
  LoadedDaemon daemon(dir);
  ASSERT_NO_FATAL_FAILURE(daemon.Start());
  const std::set<std::string> exposed = ExposedNames(daemon.Metrics());
  ASSERT_TRUE(exposed.count("airtime_gpus_installed")) << daemon.Metrics();

  int queries = 0;
  auto check = [&](const std::string& where, const std::string& expr) {
    ++queries;
    const std::set<std::string> names = MetricNames(expr);
    EXPECT_FALSE(names.empty()) << where << ": no metric in '" << expr << "'";
    for (const std::string& name : names)
      EXPECT_TRUE(exposed.count(name)) << where << ": unknown metric '" << name
                                       << "' (not in the daemon's /metrics) in '" << expr << "'";
  };
  std::function<void(const json&)> panels = [&](const json& list) {
    for (const json& p : list) {
      const std::string where = "panel '" + p.value("title", "?") + "'";
      int exprs = 0;
      for (const json& t : p.value("targets", json::array()))
        if (t.contains("expr")) {
          check(where, t["expr"].get<std::string>());
          ++exprs;
        }
      if (p.value("type", "") == "row") {
        panels(p.value("panels", json::array()));
      } else {
        EXPECT_GT(exprs, 0) << where << " has no query";
      }
    }
  };
  panels(dashboard.value("panels", json::array()));
  for (const json& v : dashboard["templating"].value("list", json::array())) {
    if (v.value("type", "") != "query") continue;
    const json& q = v["query"];
    check("variable '" + v.value("name", "?") + "'",
          VariableExpr(q.is_object() ? q.value("query", "") : q.get<std::string>()));
  }
  EXPECT_GE(queries, 10) << path;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  g_airtime = airtime::e2e::AirtimeFlag(argc, argv, "prometheus_e2e_test");
  if (g_airtime.empty()) return 2;
  return RUN_ALL_TESTS();
}
