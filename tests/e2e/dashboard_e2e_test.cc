// The dashboard (web/, served by `airtime server` at /) in a real browser: Debian's chromium
// driven by playwright-core (web/e2e/dashboard.e2e.mjs) against a real daemon on 4 fake
// H100s with tenant quotas, filled with work whose names are hostile markup. The script
// signs in, checks that the figures shown are the API's, clicks through every view, checks
// that nothing tenant-written became markup or script, and saves a screenshot of each view
// in BUILD/test-output/dashboard/. Skips, saying why, when chromium, node or web/node_modules
// (npm ci in web/, which the build runs) is missing.
//
// Run as `dashboard_e2e_test --airtime=PATH [gtest flags]` (tests/CMakeLists.txt passes the
// binary of the same build).
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

std::string g_airtime;  // --airtime=PATH

// The first executable `name` on PATH ("" if none).
std::string OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = dir + "/" + name;
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// `node --version` ("v20.20.2"), or "" when it does not answer.
std::string NodeVersion(const std::string& node) {
  std::string out;
  if (FILE* p = popen((node + " --version 2>/dev/null").c_str(), "r")) {
    char buf[64];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// Why the browser test cannot run here ("" when it can).
std::string MissingForBrowser(std::string* node, std::string* chromium) {
  const char* env = std::getenv("AIRTIME_CHROMIUM");
  *chromium = env && *env ? env : "/usr/bin/chromium";
  if (access(chromium->c_str(), X_OK) != 0)
    return "no chromium at " + *chromium +
           " (apt-get install chromium, or scripts/install-deps.sh)";
  *node = OnPath("node");
  if (node->empty()) return "node is not installed (apt-get install nodejs npm)";
  // web/package.json pins playwright-core 1.61.1, the last that declares Node.js >= 18
  // (Debian 12's nodejs is 18.20; 1.62 wants 20).
  const std::string version = NodeVersion(*node);
  if (std::atoi(version.c_str() + (version.rfind('v', 0) == 0 ? 1 : 0)) < 18)
    return "node " + version + " is older than the 18 that playwright-core 1.61 needs";
  const std::string pw = std::string(AIRTIME_SOURCE_DIR) + "/web/node_modules/playwright-core";
  if (!fs::exists(pw + "/package.json"))
    return "no " + pw + ": run `npm ci` in web/ (the build does when npm is installed)";
  return "";
}

json GetJson(httplib::Client& c, const std::string& path) {
  auto r = c.Get(path);
  if (!r || r->status != 200) return json();
  return json::parse(r->body, nullptr, false);
}

// Runs web/e2e/dashboard.e2e.mjs with `args` in node, screenshots into
// BUILD/test-output/`shots`; its exit status and output.
std::pair<int, std::string> RunScript(const std::string& node, const std::string& chromium,
                                      const fs::path& dir, const std::string& shots,
                                      std::vector<std::string> args) {
  const fs::path out = fs::path(AIRTIME_BINARY_DIR) / "test-output" / shots;
  fs::remove_all(out);
  const std::string script = std::string(AIRTIME_SOURCE_DIR) + "/web/e2e/dashboard.e2e.mjs";
  args.insert(args.begin(), {node, script, "--out", out.string()});
  const auto t0 = std::chrono::steady_clock::now();
  auto result = airtime::e2e::RunUntilExit(args, {{"AIRTIME_CHROMIUM", chromium}},
                                           (dir / (shots + "-browser.log")).string(), 120s);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << result.second << "browser run: " << seconds << " s; screenshots in " << out << "\n";
  return result;
}

// Cancels every active workload and waits (up to 5 s) for their processes to stop (a killed
// daemon would leave them for the next daemon to adopt).
void CancelAll(httplib::Client& c) {
  for (const json& w : GetJson(c, "/v1/workloads?state=active").value("workloads", json::array()))
    if (!w.contains("service")) c.Delete("/v1/workloads/" + std::to_string(w.value("id", 0)));
  std::set<std::string> services;
  for (const json& w : GetJson(c, "/v1/workloads?state=active").value("workloads", json::array()))
    if (w.contains("service")) services.insert(w["service"].get<std::string>());
  for (const std::string& s : services) c.Delete("/v1/workloads/" + s);
  for (int i = 0;
       i < 100 &&
       !GetJson(c, "/v1/workloads?state=running").value("workloads", json::array()).empty();
       ++i)
    std::this_thread::sleep_for(50ms);
}

TEST(DashboardE2E, ShowsTheApisFiguresAndNoInjectedMarkupInChromium) {
  std::string node, chromium;
  const std::string missing = MissingForBrowser(&node, &chromium);
  if (!missing.empty()) GTEST_SKIP() << missing;

  const fs::path dir =
      fs::path(::testing::TempDir()) / ("airtime_dash_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string admin(64, 'a'), team_a = "team-a-token-0123456789abcdef",
                                    team_b = "team-b-token-0123456789abcdef";
  std::ofstream(dir / "tokens") << "admin " << admin << "\nteam-a " << team_a << "\nteam-b "
                                << team_b << "\n";
  airtime::e2e::ServerProcess server((dir / "data").string());
  ASSERT_NO_FATAL_FAILURE(server.Start(
      {g_airtime, "server", "--data", (dir / "data").string(), "--listen", "127.0.0.1:0",
       "--fake-gpus", "4xH100", "--isolation", "off", "--allow-unisolated-tenants", "--tokens",
       (dir / "tokens").string(), "--policy", "airtime:quota=team-a=2;team-b=2"}));
  httplib::Client c = server.Client();
  c.set_bearer_token_auth(admin);  // the token file is ours, not DATA/tokens

  // Names as a hostile tenant would write them (the name rules allow any printable text).
  const std::string hostile = "<img src=x onerror=alert(1)>";
  const std::string hostile_queued = "\"><script>alert(2)</script>";
  const json body = {{"workloads",
                      {{{"name", hostile},
                        {"tenant", "team-a"},
                        {"kind", "training"},
                        {"gpus", 2},
                        {"preemptible", true},
                        {"command", {"/bin/sleep", "300"}}},
                       {{"name", hostile_queued},
                        {"tenant", "team-b"},
                        {"kind", "training"},
                        {"gpus", 4},
                        {"command", {"/bin/sleep", "300"}}},
                       {{"name", "chat"},
                        {"tenant", "team-b"},
                        {"kind", "realtime"},
                        {"slo", {{"latency_ms", 200}, {"capacity_rps", 10}, {"max_replicas", 1}}},
                        {"value", {{"per_1k_requests", 2}}},
                        {"command", {"/bin/sleep", "300"}}},
                       {{"name", "quick-batch"},
                        {"tenant", "team-a"},
                        {"kind", "batch"},
                        {"gpus", 1},
                        {"value", {{"on_completion", 5}}},
                        {"command", {"/bin/true"}}}}}};
  auto posted = c.Post("/v1/workloads", body.dump(), "application/json");
  ASSERT_TRUE(posted);
  ASSERT_EQ(posted->status, 201) << posted->body;
  auto demand = c.Post("/v1/workloads/chat/demand", R"({"rps": 5})", "application/json");
  ASSERT_TRUE(demand);
  ASSERT_EQ(demand->status, 200) << demand->body;

  // Settled: the hostile job runs, the 4-GPU one waits, the batch job has earned its value.
  bool settled = false;
  for (int i = 0; i < 200 && !settled; ++i) {
    const json all = GetJson(c, "/v1/workloads");
    int running = 0, queued = 0, succeeded = 0;
    for (const json& w : all.value("workloads", json::array())) {
      const std::string st = w.value("state", "");
      running += st == "running";
      queued += st == "queued";
      succeeded += st == "succeeded";
    }
    settled = running == 2 && queued == 1 && succeeded == 1;
    if (!settled) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(settled) << GetJson(c, "/v1/workloads").dump(1);

  auto [status, output] = RunScript(node, chromium, dir, "dashboard",
                                    {"--addr", server.address(), "--token", admin, "--tenant",
                                     "team-a", "--tenant-token", team_a, "--hostile", hostile});
  EXPECT_EQ(status, 0) << output;
  const fs::path out = fs::path(AIRTIME_BINARY_DIR) / "test-output" / "dashboard";
  for (const char* shot : {"gpus.png", "ledger.png", "queue.png", "holds.png", "tenants.png"})
    EXPECT_TRUE(fs::exists(out / shot)) << shot;
  CancelAll(c);
  // A cancelled run's shim may still be writing its exit file: a folder that cannot be
  // removed whole now is left in the temporary directory, not a failure.
  std::error_code ignored;
  if (status == 0 && !HasFailure()) fs::remove_all(dir, ignored);
}

// A service with model variants in the queue: one group, the service's row (its members'
// replicas and GPUs summed, its mix: which variant serves which class, as `describe` gives
// it) with its members' rows under it, on a daemon of 4 fake H100s under the airtime policy
// with a plain job beside it.
TEST(DashboardE2E, GroupsAServicesVariantsUnderTheServicesRow) {
  std::string node, chromium;
  const std::string missing = MissingForBrowser(&node, &chromium);
  if (!missing.empty()) GTEST_SKIP() << missing;
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("airtime_dash_variants_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string admin(64, 'b');
  std::ofstream(dir / "tokens") << "admin " << admin << "\n";
  airtime::e2e::ServerProcess server((dir / "data").string());
  ASSERT_NO_FATAL_FAILURE(
      server.Start({g_airtime, "server", "--data", (dir / "data").string(), "--listen",
                    "127.0.0.1:0", "--fake-gpus", "4xH100", "--isolation", "off", "--tokens",
                    (dir / "tokens").string(), "--policy", "airtime"}));
  httplib::Client c = server.Client();
  c.set_bearer_token_auth(admin);
  const std::string yaml =
      "- name: chat\n"
      "  kind: realtime\n"
      "  slo: {latency_ms: 200, min_replicas: 1, max_replicas: 2}\n"
      "  value: {per_1k_requests: 2}\n"
      "  classes: [{name: code, demand: [{at: 0, rps: 12}]}, {name: conv, demand: [{at: 0, rps: "
      "6}]}]\n"
      "  command: [/bin/sleep, '300']\n"
      "  variants:\n"
      "    - {name: big, gpus: 1, throughput: {H100: 10}}\n"
      "    - {name: coder, gpus: 1, throughput: {H100: 20}, quality: 0.9, classes: [code]}\n"
      "- {name: train, kind: training, gpus: 1, command: [/bin/sleep, '300']}\n";
  auto posted = c.Post("/v1/workloads", yaml, "application/yaml");
  ASSERT_TRUE(posted);
  ASSERT_EQ(posted->status, 201) << posted->body;
  // Settled: the job runs, and the service's replicas are its target (a mix is chosen).
  bool settled = false;
  json view;
  for (int i = 0; i < 200 && !settled; ++i) {
    view = GetJson(c, "/v1/workloads/chat");
    const json train = GetJson(c, "/v1/workloads/train");
    settled = train.value("state", "") == "running" && view.contains("replicas") &&
              view["replicas"]["running"].get<int>() > 0 &&
              view["replicas"]["running"] == view["replicas"]["target"] &&
              view.value("mix", "") != "";
    if (!settled) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(settled) << view.dump(1);
  auto [status, output] =
      RunScript(node, chromium, dir, "dashboard-variants",
                {"--addr", server.address(), "--token", admin, "--service", "chat"});
  EXPECT_EQ(status, 0) << output;
  CancelAll(c);
  std::error_code ignored;
  if (status == 0 && !HasFailure()) fs::remove_all(dir, ignored);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  g_airtime = airtime::e2e::AirtimeFlag(argc, argv, "dashboard_e2e_test");
  if (g_airtime.empty()) return 2;
  return RUN_ALL_TESTS();
}
