// End-to-end tests of the live control plane: the real `airtime server` binary with fake
// GPUs, real workload processes, the real CLI and HTTP API; the daemon killed with SIGKILL
// under load and restarted.
//
// Run as `server_e2e_test --airtime=PATH [gtest flags]` (tests/CMakeLists.txt passes the
// binary of the same build).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e_util.h"
#include "server_process.h"

namespace {

namespace fs = std::filesystem;
using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using namespace std::chrono_literals;

std::string g_airtime;  // --airtime=PATH

using airtime::e2e::ReadFile;

std::string TempDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(::testing::TempDir()) /
                 ("airtime_srv_" + std::to_string(getpid()) + "_" + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// A running `airtime server` with fake GPUs; killed (SIGKILL) on destruction unless stopped.
class Server {
 public:
  Server(std::string data, std::string gpus, std::vector<std::string> extra = {})
      : data_(std::move(data)), gpus_(std::move(gpus)), extra_(std::move(extra)), process_(data_) {}
  void SetExtraArgs(std::vector<std::string> extra) { extra_ = std::move(extra); }

  void Start() {
    std::vector<std::string> args = {
        g_airtime, "server", "--data", data_, "--listen", "127.0.0.1:0", "--fake-gpus", gpus_,
        // Workloads as the test's user, as before isolation (isolation_e2e_test.cc),
        // tenant tokens accepted all the same.
        "--isolation", "off", "--allow-unisolated-tenants"};
    args.insert(args.end(), extra_.begin(), extra_.end());
    process_.Start(std::move(args));
  }
  void Kill() { process_.Kill(); }
  void Terminate() { process_.Terminate(); }
  httplib::Client Client() const { return process_.Client(); }
  const std::string& address() const { return process_.address(); }
  const std::string& token() const { return process_.token(); }
  pid_t pid() const { return process_.pid(); }

 private:
  std::string data_, gpus_;
  std::vector<std::string> extra_;
  airtime::e2e::ServerProcess process_;
};

// Runs the CLI with AIRTIME_ADDR / AIRTIME_TOKEN (the server's admin token unless `token` is
// given); returns exit status and output.
std::pair<int, std::string> Cli(const Server& s, const std::string& args,
                                const std::string& token = "") {
  const std::string cmd = "AIRTIME_ADDR=" + s.address() +
                          " AIRTIME_TOKEN=" + (token.empty() ? s.token() : token) + " " +
                          g_airtime + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

json GetJson(httplib::Client& c, const std::string& path) {
  auto r = c.Get(path);
  if (!r || r->status != 200) return json();
  return json::parse(r->body, nullptr, false);
}

// Polls until every listed workload reached a final state (or the time is up).
json WaitAllEnded(httplib::Client& c, std::chrono::seconds limit) {
  json list;
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    list = GetJson(c, "/v1/workloads?state=active");
    if (list.is_object() && list["workloads"].empty()) break;
    std::this_thread::sleep_for(200ms);
  }
  return GetJson(c, "/v1/workloads");
}

TEST(ServerE2E, CliSubmitListDescribeCancel) {
  const std::string dir = TempDir();
  Server s(dir + "/data", "4xH100");
  ASSERT_NO_FATAL_FAILURE(s.Start());
  std::ofstream(dir + "/w.yaml")
      << "- {name: sleeper, kind: training, gpus: 2, command: "
         "[/bin/sleep, '60']}\n"
         "- {name: wide, kind: training, gpus: 4, command: [/bin/true]}\n";
  auto [rc, out] = Cli(s, "submit " + dir + "/w.yaml");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("sleeper"));
  std::this_thread::sleep_for(500ms);
  std::tie(rc, out) = Cli(s, "ls");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("running"));
  EXPECT_THAT(out, HasSubstr("queued"));
  std::tie(rc, out) = Cli(s, "describe wide");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("sleeper"));  // the explanation names who holds the GPUs
  std::tie(rc, out) = Cli(s, "gpus");
  EXPECT_THAT(out, HasSubstr("GPU-fake-0000-h100-00"));
  std::tie(rc, out) = Cli(s, "cancel sleeper");
  EXPECT_EQ(rc, 0) << out;
  auto c = s.Client();
  json all = WaitAllEnded(c, 30s);
  std::map<std::string, std::string> state;
  for (const json& w : all["workloads"]) state[w["name"]] = w["state"];
  EXPECT_EQ(state["sleeper"], "cancelled");
  EXPECT_EQ(state["wide"], "succeeded");
  std::tie(rc, out) = Cli(s, "describe nosuch");
  EXPECT_NE(rc, 0);
  EXPECT_THAT(out, HasSubstr("no workload 'nosuch'"));
  auto bad = c.Post("/v1/workloads", "name: x\ngpus: many\n", "application/yaml");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("gpus"));
  auto metrics = httplib::Client(s.address()).Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("airtime_ledger_gpu_seconds_total"));
  s.Terminate();
  // A clean stop takes its address away: no client reads it as a daemon that listens.
  EXPECT_FALSE(fs::exists(dir + "/data/address"));
}

// What-if on the daemon's own history (docs/what-if.md): `airtime sim --from-data` replays
// the live store of a running daemon under other policies and a larger cluster, beside
// what the daemon recorded; it reads the store without disturbing the daemon.
TEST(ServerE2E, SimFromDataReplaysTheLiveStore) {
  const std::string dir = TempDir();
  const std::string data = dir + "/data";
  Server s(data, "4xH100");
  ASSERT_NO_FATAL_FAILURE(s.Start());
  std::ofstream(dir + "/w.yaml")
      << "- {name: quick, kind: batch, gpus: 1, command: [/bin/sleep, '1'], "
         "value: {on_completion: 5}}\n"
         "- {name: long, kind: training, gpus: 2, command: [/bin/sleep, '60']}\n"
         "- {name: chat, kind: realtime, gpus: 1, slo: {latency_ms: 200, capacity_rps: 10, "
         "max_replicas: 2}, value: {per_1k_requests: 2}, command: [/bin/sleep, '120']}\n";
  auto [rc, out] = Cli(s, "submit " + dir + "/w.yaml");
  ASSERT_EQ(rc, 0) << out;
  auto c = s.Client();
  auto demand = c.Post("/v1/workloads/chat/demand", json{{"rps", 12}}.dump(), "application/json");
  ASSERT_TRUE(demand);
  ASSERT_EQ(demand->status, 200) << demand->body;
  std::tie(rc, out) = Cli(s, "wait quick --for succeeded --timeout 30s --interval 200ms");
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "cancel long");
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "wait long --for cancelled --timeout 30s --interval 200ms");
  ASSERT_EQ(rc, 0) << out;

  const std::string report = dir + "/what-if.json", html = dir + "/what-if.html";
  std::tie(rc, out) =
      Cli(s, "sim --from-data " + data + " --policy fifo,airtime --no-bound --json " + report +
                 " --html " + html);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("cluster "));
  EXPECT_THAT(out, HasSubstr("4 GPUs; 3 workloads"));
  EXPECT_THAT(out, HasSubstr("the daemon ran policy airtime"));
  EXPECT_THAT(out, HasSubstr("What the daemon did from "));
  EXPECT_THAT(out, HasSubstr("beside the replay of its policy (airtime)"));
  EXPECT_THAT(out, HasSubstr("fifo"));
  EXPECT_THAT(out, Not(HasSubstr("warning")));
  const json j = json::parse(ReadFile(report), nullptr, false);
  ASSERT_TRUE(j.is_object()) << ReadFile(report);
  const json& fd = j["from_data"];
  EXPECT_EQ(fd["daemon_policy"], "airtime");
  EXPECT_EQ(fd["recorded"]["gpus"], 4);
  EXPECT_EQ(fd["recorded"]["completed"], 1);
  EXPECT_EQ(fd["recorded"]["cancelled"], 1);
  EXPECT_GT(fd["recorded"]["allocated_gpu_hours"].get<double>(), 0);
  EXPECT_EQ(fd["replay_of_daemon_policy"]["policy"], "airtime");
  EXPECT_EQ(fd["replay_of_daemon_policy"]["completed"], 1);
  EXPECT_TRUE(fd["ledger"].is_object());
  const std::string page = ReadFile(html);
  EXPECT_THAT(page, HasSubstr("What the daemon did"));
  EXPECT_THAT(page, HasSubstr("GPU allocation (held / installed)"));

  // Two more nodes of 8 H100s and another price: the same history on 20 GPUs.
  std::tie(rc, out) =
      Cli(s, "sim --from-data " + data +
                 " --policy fifo --no-bound --add-nodes 2xH100:8 --gpu-cost H100=2");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("20 GPUs"));
  EXPECT_THAT(out, HasSubstr("added 2 node(s) of 8 x H100"));

  // The daemon carries on: the reader took no lock it waits on.
  std::ofstream(dir + "/more.yaml")
      << "{name: after, kind: batch, gpus: 1, command: [/bin/true]}\n";
  std::tie(rc, out) = Cli(s, "submit " + dir + "/more.yaml");
  EXPECT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "wait after --for succeeded --timeout 30s --interval 200ms");
  EXPECT_EQ(rc, 0) << out;

  // A folder with no store is named, with nothing created in it.
  std::tie(rc, out) = Cli(s, "sim --from-data " + dir + "/nowhere");
  EXPECT_NE(rc, 0);
  EXPECT_THAT(out, HasSubstr(dir + "/nowhere/airtime.db"));
  EXPECT_FALSE(fs::exists(dir + "/nowhere"));
  s.Terminate();
}

// A live store with a service with model variants (docs/what-if.md): its members, the rates
// reported per request class, and a quantize job of a later submission that produced its
// awaited variant replay as the daemon ran them, with no warning; in the replay the variant
// runs only once the job has completed.
TEST(ServerE2E, SimFromDataReplaysAServiceWithVariantsAndALaterProducer) {
  const std::string dir = TempDir();
  const std::string data = dir + "/data";
  Server s(data, "4xH100");
  ASSERT_NO_FATAL_FAILURE(s.Start());
  std::ofstream(dir + "/chat.yaml")
      << "name: chat\n"
         "kind: realtime\n"
         "slo: {latency_ms: 200}\n"
         "value: {per_1k_requests: 1}\n"
         "command: [/bin/sleep, '120']\n"
         "classes: [{name: code, demand: [{at: 0, rps: 1}]}, {name: conv, demand: [{at: 0, "
         "rps: 2}]}]\n"
         "variants:\n"
         "  - {name: big, gpus: 2, throughput: {H100: 10}, classes: [conv]}\n"
         "  - {name: coder, gpus: 1, throughput: {H100: 20}, classes: [code]}\n"
         "  - {name: int8, gpus: 1, throughput: {H100: 20}, quality: 0.95, awaits_producer: "
         "true}\n";
  auto [rc, out] = Cli(s, "submit " + dir + "/chat.yaml");
  ASSERT_EQ(rc, 0) << out;
  auto c = s.Client();
  for (const auto& [cls, rps] : {std::pair<std::string, double>{"code", 15}, {"conv", 4}}) {
    auto r = c.Post("/v1/workloads/chat/demand", json{{"rps", rps}, {"class", cls}}.dump(),
                    "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }
  std::ofstream(dir + "/q1.yaml") << "{name: q1, kind: quantize, gpus: 1, command: [/bin/sleep, "
                                     "'1'], produces: {service: chat, variant: int8}}\n";
  std::tie(rc, out) = Cli(s, "submit " + dir + "/q1.yaml");
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "wait q1 --for succeeded --timeout 30s --interval 200ms");
  ASSERT_EQ(rc, 0) << out;

  const std::string report = dir + "/what-if.json", decisions = dir + "/decisions.jsonl";
  std::tie(rc, out) = Cli(s, "sim --from-data " + data + " --policy airtime --no-bound --json " +
                                 report + " --decisions " + decisions);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("4 GPUs; 4 workloads"));  // three members and q1
  EXPECT_THAT(out, Not(HasSubstr("warning")));
  const json j = json::parse(ReadFile(report), nullptr, false);
  ASSERT_TRUE(j.is_object()) << ReadFile(report);
  EXPECT_EQ(j["from_data"]["warnings"], json::array());
  EXPECT_EQ(j["from_data"]["replay_of_daemon_policy"]["completed"], 1);  // q1
  std::optional<double> q1_started;
  std::ifstream log(decisions);
  for (std::string line; std::getline(log, line);) {
    const json d = json::parse(line, nullptr, false);
    if (!d.is_object()) continue;
    if (d.value("workload", "") == "q1" && d.value("decision", "") == "start")
      q1_started = d.value("t_s", 0.0);
    if (d.value("workload", "") == "chat/int8" && d.value("replicas", 0) > 0) {
      ASSERT_TRUE(q1_started.has_value()) << line;
      EXPECT_GT(d.value("t_s", 0.0), *q1_started) << line;
    }
  }
  EXPECT_TRUE(q1_started.has_value()) << ReadFile(decisions);
  std::tie(rc, out) = Cli(s, "cancel chat");
  EXPECT_EQ(rc, 0) << out;
  s.Terminate();
}

// The CLI's kubectl habits against a live daemon: `wait` ends with the workload (exit 1, and
// why, when it ended otherwise or time ran out), -o name/yaml/wide print what the API holds,
// `ls --watch` prints the listing and then a change, and `completion bash` completes in bash.
TEST(ServerE2E, CliWaitsWatchesAndPrintsInEachFormat) {
  const std::string dir = TempDir();
  Server s(dir + "/data", "2xH100");
  ASSERT_NO_FATAL_FAILURE(s.Start());
  std::ofstream(dir + "/w.yaml")
      << "- {name: quick, kind: batch, gpus: 1, command: [/bin/sleep, '1']}\n"
         "- {name: broken, kind: batch, gpus: 1, command: [/bin/false]}\n"
         "- {name: long, kind: training, gpus: 1, command: [/bin/sleep, '60']}\n";
  auto [rc, out] = Cli(s, "submit -o name " + dir + "/w.yaml");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "quick\nbroken\nlong\n");
  std::tie(rc, out) = Cli(s, "wait quick --for succeeded --timeout 30s --interval 200ms");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "quick is succeeded\n");
  std::tie(rc, out) = Cli(s, "wait long --for succeeded --timeout 1s --interval 200ms");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_THAT(out, HasSubstr("timed out after 1s waiting for succeeded; 'long' is running"));
  std::tie(rc, out) = Cli(s, "wait broken --for succeeded --timeout 60s --interval 200ms");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_THAT(out, HasSubstr("workload 'broken': it ended failed (exit code 1) and will not be "
                             "succeeded"));
  // Its history: submitted, each run placed and ended with its exit, and the final state.
  std::tie(rc, out) = Cli(s, "events broken");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("submitted  -    submitted by tenant"));
  EXPECT_THAT(out, HasSubstr("placed by policy airtime on vm (1 GPU) after waiting"));
  EXPECT_THAT(out, HasSubstr("restarted by policy airtime on vm (1 GPU)"));
  EXPECT_THAT(out, HasSubstr("exited with status 1"));
  EXPECT_THAT(out, HasSubstr("failed     -    failed 3 times"));
  std::tie(rc, out) = Cli(s, "wait long --for done");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("--for: expected one of"));
  // The formats hold what the API holds.
  std::tie(rc, out) = Cli(s, "ls --all -o name");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("quick\n"));
  EXPECT_THAT(out, HasSubstr("broken\n"));
  std::tie(rc, out) = Cli(s, "describe long -o yaml");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("name: \"long\"\n"));
  EXPECT_THAT(out, HasSubstr("state: \"running\"\n"));
  std::tie(rc, out) = Cli(s, "ls -o wide");
  EXPECT_THAT(out, HasSubstr("PREEMPTIONS"));
  EXPECT_THAT(out, HasSubstr("GPU-fake-"));
  std::tie(rc, out) = Cli(s, "ledger -o name");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("-o name: this command's answer has no names"));
  // --watch: the listing, then the cancelled workload leaving the active listing, in its
  // final state (one JSON line each).
  const std::string watch_out = dir + "/watch.out";
  std::tie(rc, out) = Cli(s, "ls --watch -o json --interval 200ms > " + watch_out +
                                 " & W=$!; sleep 1; " + g_airtime + " cancel long --addr " +
                                 s.address() + " --token " + s.token() + "; sleep 1.5; kill $W");
  std::ifstream in(watch_out);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  ASSERT_GE(lines.size(), 2u) << out;
  EXPECT_EQ(lines.front()["name"], "long");
  EXPECT_EQ(lines.front()["state"], "running");
  EXPECT_EQ(lines.back()["name"], "long");
  EXPECT_EQ(lines.back()["state"], "cancelled");
  std::tie(rc, out) = Cli(s, "events long -o json");
  const json events = json::parse(out, nullptr, false);
  ASSERT_TRUE(events.is_object()) << out;
  std::vector<std::string> kinds;
  for (const json& e : events["events"]) kinds.push_back(e["kind"]);
  // The cancel is recorded when asked; the run's stop when its process has left.
  EXPECT_THAT(kinds, ElementsAre("submitted", "started", AnyOf("stopped", "cancelled"),
                                 AnyOf("stopped", "cancelled")))
      << out;
  EXPECT_THAT(kinds, Contains("stopped"));
  EXPECT_THAT(kinds, Contains("cancelled"));
  // Completion, generated from the CLI's definition, completes in bash.
  std::ofstream(dir + "/complete.bash")
      << "source <(" << g_airtime << " completion bash)\n"
      << "COMP_WORDS=(airtime wa); COMP_CWORD=1; _airtime_complete; echo \"${COMPREPLY[*]}\"\n"
      << "COMP_WORDS=(airtime ls -o ''); COMP_CWORD=3; _airtime_complete; "
         "echo \"${COMPREPLY[*]}\"\n";
  FILE* p = popen(("bash " + dir + "/complete.bash 2>&1").c_str(), "r");
  std::string completed;
  char buf[512];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) completed.append(buf, n);
  pclose(p);
  EXPECT_EQ(completed, "wait\ntable wide json yaml name\n");
  s.Terminate();
}

// A log the daemon cuts over --max-log-mib while `airtime logs -f` follows it: the follow
// says so and goes on from the log's new start, so what the run writes after the cut is
// printed (it waited past the old end for good before). The run writes its first line 3 s
// before the rest: the follow must have read it before the cut (a sanitized CLI takes a
// while to start; with 1 s it once read only after the cut).
TEST(ServerE2E, CliLogsFollowsALogThroughACut) {
  const std::string dir = TempDir();
  Server s(dir + "/data", "1xH100", {"--max-log-mib", "1"});
  ASSERT_NO_FATAL_FAILURE(s.Start());
  std::ofstream(dir + "/w.yaml")
      << "- {name: chatty, kind: batch, gpus: 1, command: [/bin/sh, -c, 'echo start; sleep 3; "
         "head -c 3145728 /dev/zero | tr \\\\0 x; echo; sleep 3; echo after-the-cut']}\n";
  auto [rc, out] = Cli(s, "submit " + dir + "/w.yaml");
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "logs chatty -f --interval 100ms");
  EXPECT_EQ(rc, 0) << out.substr(0, 200);
  const std::string end = out.substr(out.size() > 600 ? out.size() - 600 : 0);
  EXPECT_EQ(out.rfind("start\n", 0), 0u) << out.substr(0, 200);
  EXPECT_THAT(end, HasSubstr("airtime logs: the log was cut (over the daemon's --max-log-mib)"));
  EXPECT_THAT(end, HasSubstr("over its cap of 1.0 MiB"));
  EXPECT_THAT(end, HasSubstr("after-the-cut\n"));
  s.Terminate();
}

// `airtime logs`: a run's output, whole, its tail, its stderr, and followed with -f until the
// run ends; its tenant reads it, another tenant neither its log nor its history.
TEST(ServerE2E, CliLogsPrintsAndFollowsARunsOutput) {
  const std::string dir = TempDir();
  const std::string admin(64, 'a'), team_a = "team-a-token-0123456789abcdef",
                                    team_b = "team-b-token-0123456789abcdef";
  std::ofstream(dir + "/tokens") << "admin " << admin << "\nteam-a " << team_a << "\nteam-b "
                                 << team_b << "\n";
  Server s(dir + "/data", "1xH100", {"--tokens", dir + "/tokens"});
  ASSERT_NO_FATAL_FAILURE(s.Start());
  std::ofstream(dir + "/w.yaml")
      << "- {name: talker, tenant: team-a, kind: batch, gpus: 1, command: [/bin/sh, -c, "
         "'for i in 1 2 3; do echo line $i; sleep 0.4; done; echo oops >&2']}\n";
  std::ofstream(dir + "/blocker.yaml")
      << "- {name: blocker, kind: batch, gpus: 1, command: [/bin/sleep, '1']}\n";
  auto [rc, out] = Cli(s, "submit " + dir + "/blocker.yaml", admin);
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "submit " + dir + "/w.yaml", admin);
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "logs talker", admin);
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("workload 'talker' has not run yet (-f waits for its first run)"));
  // Followed from before it starts (it waits for the blocker's GPU) to its end: every line,
  // once, in order.
  std::tie(rc, out) = Cli(s, "logs talker -f --interval 100ms", admin);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "line 1\nline 2\nline 3\n");
  std::tie(rc, out) = Cli(s, "logs talker", admin);
  EXPECT_EQ(out, "line 1\nline 2\nline 3\n");
  std::tie(rc, out) = Cli(s, "logs talker --tail 7", admin);
  EXPECT_EQ(out, "line 3\n");
  std::tie(rc, out) = Cli(s, "logs talker --stderr", admin);
  EXPECT_EQ(out, "oops\n");
  std::tie(rc, out) = Cli(s, "logs talker", team_a);
  EXPECT_EQ(out, "line 1\nline 2\nline 3\n");
  std::tie(rc, out) = Cli(s, "logs talker", team_b);
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("no workload 'talker' of tenant 'team-b'"));
  std::tie(rc, out) = Cli(s, "events talker", team_b);
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("no workload 'talker' of tenant 'team-b'"));
  std::tie(rc, out) = Cli(s, "logs talker --run 999", admin);
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("workload 'talker' has no run 999"));
  std::tie(rc, out) = Cli(s, "logs nosuch", admin);
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("no workload 'nosuch'"));
  s.Terminate();
}

// The 3 a.m. report through the API and the CLI: a tenant's realtime service at 15 rps needs
// 2 replicas of 10 rps and airtime, asked for warm spares, keeps one (a hold of 1); a rise to
// 24 rps meets
// it (3 replicas is the most the service may have, so no new call) and the hold is scored
// the 4 rps over the needed replicas for the rise's first cold start (1 s): 4 requests.
// Another tenant sees none of it; bad parameters are 400s that name them; a restart carries
// the log on.
TEST(ServerE2E, HoldsAreLoggedScoredAndServedToTheirTenant) {
  const std::string dir = TempDir();
  const std::string admin(64, 'a'), team_a = "team-a-token-0123456789abcdef",
                                    team_b = "team-b-token-0123456789abcdef";
  std::ofstream(dir + "/tokens") << "admin " << admin << "\nteam-a " << team_a << "\nteam-b "
                                 << team_b << "\n";
  Server s(dir + "/data", "4xH100",
           {"--tokens", dir + "/tokens", "--policy", "airtime:spare=0.25"});
  ASSERT_NO_FATAL_FAILURE(s.Start());
  auto as = [&](const std::string& token) {
    httplib::Client c = s.Client();
    c.set_bearer_token_auth(token);
    return c;
  };
  auto cli = [&](const std::string& token, const std::string& args) { return Cli(s, args, token); };
  httplib::Client a = as(team_a);
  auto posted = a.Post("/v1/workloads",
                       "name: chat\nkind: realtime\n"
                       "slo: {latency_ms: 200, capacity_rps: 10, max_replicas: 3, cold_start: 1s}\n"
                       "value: {per_1k_requests: 2}\n"
                       "command: [/bin/sh, -c, 'sleep 120']\n",
                       "application/yaml");
  ASSERT_TRUE(posted);
  ASSERT_EQ(posted->status, 201) << posted->body;
  auto demand = [&](double rps) {
    auto r = a.Post("/v1/workloads/chat/demand", json{{"rps", rps}}.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  };
  ASSERT_NO_FATAL_FAILURE(demand(15));
  json holds;
  for (int i = 0; i < 200; ++i) {
    holds = GetJson(a, "/v1/holds");
    if (holds.is_object() && !holds["decisions"].empty()) break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(holds.is_object() && holds["decisions"].size() == 1u) << holds.dump(2);
  ASSERT_NO_FATAL_FAILURE(demand(24));
  std::this_thread::sleep_for(1500ms);
  holds = GetJson(a, "/v1/holds");
  ASSERT_EQ(holds["decisions"].size(), 1u) << holds.dump(2);
  const json call = holds["decisions"][0];
  EXPECT_EQ(call["service"], "chat");
  EXPECT_EQ(call["choice"], "hold");
  EXPECT_EQ(call["replicas_needed"], 2);
  EXPECT_EQ(call["replicas_held"], 1);
  EXPECT_EQ(call["demand_rps"], 15.0);
  EXPECT_EQ(call["burst_came"], true);
  EXPECT_NEAR(call["requests_protected"].get<double>(), 4.0, 1e-6);
  EXPECT_NEAR(call["value_protected"].get<double>(), 0.008, 1e-9);
  EXPECT_EQ(call["until_s"], nullptr);
  const std::string why = call["why"];
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(holds["services"]["chat"]["holds"], 1);
  EXPECT_EQ(holds["services"]["chat"]["holds_burst_came"], 1);
  EXPECT_EQ(holds["decisions_kept"], 1);
  std::cout << "GET /v1/holds (team-a):\n" << holds.dump(2) << "\n";

  // Another tenant sees nothing of it; naming it gets the 404 a name that does not exist
  // gets. The admin sees it.
  httplib::Client b = as(team_b);
  json other = GetJson(b, "/v1/holds");
  EXPECT_TRUE(other["services"].empty()) << other.dump();
  EXPECT_TRUE(other["decisions"].empty());
  httplib::Client admin_client = as(admin);
  EXPECT_EQ(GetJson(admin_client, "/v1/holds?service=chat&limit=1")["decisions"].size(), 1u);
  for (auto [client, name] : {std::pair{&b, "chat"}, std::pair{&admin_client, "nope"}}) {
    auto r = client->Get(std::string("/v1/holds?service=") + name);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404) << name << ": " << r->body;
    EXPECT_THAT(r->body, HasSubstr(std::string("no workload '") + name + "'"));
  }
  // No token, a wrong token, bad parameters.
  auto none = httplib::Client(s.address()).Get("/v1/holds");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  auto wrong = as("not-a-token-0123456789").Get("/v1/holds");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  for (const char* q : {"limit=0", "limit=10001", "limit=ten", "limit=1&limit=2", "tenant=team-b",
                        "service=%ff", "service=%zz"}) {
    auto r = a.Get(std::string("/v1/holds?") + q);
    ASSERT_TRUE(r) << q;
    EXPECT_EQ(r->status, 400) << q << ": " << r->body;
    EXPECT_THAT(r->body, HasSubstr("invalid_argument")) << q;
  }
  auto bad_limit = a.Get("/v1/holds?limit=0");
  EXPECT_THAT(bad_limit->body, HasSubstr("query 'limit': expected an integer from 1 to 10000"));

  // The CLI: the summary table, then the call with its why in full.
  auto [rc, out] = cli(admin, "holds");
  EXPECT_EQ(rc, 0) << out;
  std::cout << "airtime holds:\n" << out;
  EXPECT_THAT(out, HasSubstr("3 a.m. report"));
  EXPECT_THAT(out, HasSubstr("holds (came)"));
  EXPECT_THAT(out, HasSubstr("1 (1)"));
  EXPECT_THAT(out, HasSubstr("NEEDED/HELD"));
  EXPECT_THAT(out, HasSubstr("2/1"));
  EXPECT_THAT(out, HasSubstr("15.0/"));
  EXPECT_THAT(out, HasSubstr(why));
  std::tie(rc, out) = cli(team_b, "holds");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("no hold-or-hand-off calls yet"));
  std::tie(rc, out) = cli(team_a, "holds --service chta");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_THAT(out, HasSubstr("no workload 'chta'"));
  std::tie(rc, out) = cli(team_a, "holds --service chat --limit 5 --json");
  EXPECT_EQ(rc, 0) << out;
  json cli_json = json::parse(out, nullptr, false);
  ASSERT_TRUE(cli_json.is_object()) << out;
  EXPECT_EQ(cli_json["decisions"][0]["why"], why);
  std::tie(rc, out) = cli(team_a, "holds --limit 0");
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(out, HasSubstr("airtime: error: query 'limit': expected an integer from 1 to"));

  // A restart (SIGTERM saves the log) carries the call on, closed at the save.
  s.Terminate();
  ASSERT_NO_FATAL_FAILURE(s.Start());
  EXPECT_THAT(ReadFile(dir + "/data.server.log"), HasSubstr("holds: 1 call(s) carried on"));
  httplib::Client a2 = as(team_a), b2 = as(team_b);  // its new port
  json after = GetJson(a2, "/v1/holds");
  ASSERT_TRUE(after.is_object() && !after["decisions"].empty()) << after.dump(2);
  EXPECT_EQ(after["decisions"][0]["t_s"], call["t_s"]);
  EXPECT_NE(after["decisions"][0]["until_s"], nullptr);
  EXPECT_TRUE(GetJson(b2, "/v1/holds")["decisions"].empty());
  auto cancelled = a2.Delete("/v1/workloads/chat");
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->status, 200);
  WaitAllEnded(a2, 30s);
  s.Terminate();
}

// kill -9 of the daemon at random moments while a client keeps submitting; after each
// restart nothing accepted is lost, and at the end every workload ran exactly once.
TEST(ServerE2E, KillNineUnderLoadLosesNothingAndStartsNothingTwice) {
  const std::string dir = TempDir();
  const std::string starts = dir + "/starts.log";
  Server s(dir + "/data", "4xH100");
  ASSERT_NO_FATAL_FAILURE(s.Start());
  json ledger_before;
  {
    auto c0 = s.Client();
    ledger_before = GetJson(c0, "/v1/ledger");
    ASSERT_TRUE(ledger_before.is_object());
  }
  std::mutex mu;
  std::set<std::string> accepted;
  std::atomic<bool> stop{false};
  std::atomic<int> next{0};
  std::string address = s.address(), token = s.token();
  // The loader: one workload per request; a lost answer is retried, and a 409 for a name it
  // sent before means the first try was accepted.
  std::thread loader([&] {
    while (!stop) {
      const std::string name = "w" + std::to_string(next++);
      const std::string body = "{name: " + name + ", kind: batch, command: [/bin/sh, -c, 'echo " +
                               name + " >> " + starts + "; sleep 0.2']}";
      for (int attempt = 0; attempt < 200 && !stop; ++attempt) {
        std::string addr;
        {
          std::lock_guard<std::mutex> lock(mu);
          addr = address;
        }
        const size_t colon = addr.rfind(':');
        httplib::Client c(addr.substr(0, colon), std::stoi(addr.substr(colon + 1)));
        c.set_bearer_token_auth(token);
        c.set_connection_timeout(0, 200000);
        auto r = c.Post("/v1/workloads", body, "application/yaml");
        if (r && (r->status == 201 || (r->status == 409 && attempt > 0))) {
          std::lock_guard<std::mutex> lock(mu);
          accepted.insert(name);
          break;
        }
        std::this_thread::sleep_for(50ms);
      }
      std::this_thread::sleep_for(20ms);
    }
  });
  std::mt19937 rng(7);
  for (int round = 0; round < 10; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 700));
    s.Kill();
    s.Start();
    std::lock_guard<std::mutex> lock(mu);
    address = s.address();
  }
  stop = true;
  loader.join();
  auto c = s.Client();
  json all = WaitAllEnded(c, 120s);
  ASSERT_TRUE(all.is_object());
  std::map<std::string, std::string> state;
  for (const json& w : all["workloads"]) state[w["name"]] = w["state"];
  ASSERT_GT(accepted.size(), 20u);
  std::cout << accepted.size() << " workloads accepted across 10 kill -9 restarts\n";
  for (const std::string& name : accepted) {
    EXPECT_EQ(state.count(name), 1u) << name << " was accepted but is lost";
    EXPECT_EQ(state[name], "succeeded") << name;
  }
  std::map<std::string, int> runs;
  std::istringstream log(ReadFile(starts));
  std::string line;
  while (std::getline(log, line)) ++runs[line];
  for (const auto& [name, n] : runs) EXPECT_EQ(n, 1) << name << " started " << n << " times";
  for (const std::string& name : accepted) EXPECT_EQ(runs[name], 1) << name;
  // The ledger went through the ten kills: the same window, and every moment of it either
  // counted on the 4 GPUs or reported as not observed (from a kill back to its last save).
  json ledger = GetJson(c, "/v1/ledger");
  ASSERT_TRUE(ledger.is_object());
  EXPECT_EQ(ledger["since"], ledger_before["since"]);
  EXPECT_GT(ledger["unobserved_seconds"].get<double>(), 0);
  const double window_s =
      static_cast<double>(ledger["now"].get<int64_t>() - ledger["since"].get<int64_t>()) / 1000;
  EXPECT_NEAR(window_s,
              ledger["installed_gpu_seconds"].get<double>() / 4 +
                  ledger["unobserved_seconds"].get<double>(),
              1e-3);
  EXPECT_GT(ledger["buckets"]["useful"].get<double>(), 0);
  s.Terminate();
}

TEST(ServerE2E, TenThousandSubmissionsInABurstAreAllAccounted) {
  const std::string dir = TempDir();
  Server s(dir + "/data", "8xH100");
  ASSERT_NO_FATAL_FAILURE(s.Start());
  constexpr int kThreads = 16, kEach = 625;  // 10,000
  std::atomic<int> created{0}, failed{0};
  std::vector<std::thread> threads;
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto c = s.Client();
      for (int i = 0; i < kEach; ++i) {
        const std::string body = "{\"name\": \"b-" + std::to_string(t) + "-" + std::to_string(i) +
                                 "\", \"kind\": \"batch\", \"gpus\": 8, \"work\": \"1h\"}";
        auto r = c.Post("/v1/workloads", body, "application/json");
        (r && r->status == 201 ? created : failed)++;
      }
    });
  }
  for (auto& t : threads) t.join();
  std::cout << created.load() << " accepted in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s\n";
  EXPECT_EQ(created.load(), kThreads * kEach);
  EXPECT_EQ(failed.load(), 0);
  auto c = s.Client();
  json list = GetJson(c, "/v1/workloads");
  ASSERT_TRUE(list.is_object());
  EXPECT_EQ(list["workloads"].size(), static_cast<size_t>(kThreads * kEach));
  // And after a crash: all still there, one running (8 GPUs each), the rest queued.
  s.Kill();
  ASSERT_NO_FATAL_FAILURE(s.Start());
  auto c2 = s.Client();
  list = GetJson(c2, "/v1/workloads");
  ASSERT_TRUE(list.is_object());
  std::map<std::string, int> states;
  for (const json& w : list["workloads"]) ++states[w["state"]];
  EXPECT_EQ(list["workloads"].size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(states["running"], 1);
  EXPECT_EQ(states["queued"], kThreads * kEach - 1);
  s.Terminate();
}

// A TCP connection to the server at `address` (HOST:PORT) from the loopback address
// `source` (127.0.0.2 ...: bound before connect, so the server sees that peer); -1 on error.
int ConnectFrom(const std::string& source, const std::string& address) {
  const size_t colon = address.rfind(':');
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in from{}, to{};
  from.sin_family = to.sin_family = AF_INET;
  inet_pton(AF_INET, source.c_str(), &from.sin_addr);
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &to.sin_addr);
  to.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

// Waits up to `limit` for the server to answer or close `fd`; returns what it sent ("" when
// it closed without a word) and sets *closed when the connection ended.
std::string ReadUntilClosed(int fd, std::chrono::milliseconds limit, bool* closed) {
  std::string got;
  *closed = false;
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      *closed = true;
      break;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  return v[i];
}

// Issue 19: about 64 clients sending their headers a byte at a time once held every worker
// and stopped the API. With 100 of them trickling from four loopback addresses, /healthz and
// a tenant's GET from another address stay answered within 100 ms p99.
TEST(ServerE2E, SlowHeaderClientsLeaveTheApiAnswered) {
  const std::string dir = TempDir();
  const std::string tenant_token = "team-a-token-0123456789abcdef";
  std::ofstream(dir + "/tokens") << "admin " << std::string(64, 'a') << "\nteam-a " << tenant_token
                                 << "\n";
  Server s(dir + "/data", "4xH100", {"--tokens", dir + "/tokens"});
  ASSERT_NO_FATAL_FAILURE(s.Start());
  constexpr int kSlow = 100;
  const std::vector<std::string> sources = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"};
  std::vector<int> slow;
  for (int i = 0; i < kSlow; ++i) {
    const int fd = ConnectFrom(sources[static_cast<size_t>(i) % sources.size()], s.address());
    ASSERT_GE(fd, 0) << "connect " << i;
    slow.push_back(fd);
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    const std::string request =
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(1000, 'a');
    for (size_t k = 0; !stop && k < request.size(); ++k) {
      for (int fd : slow) send(fd, &request[k], 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      for (int i = 0; i < 10 && !stop; ++i) std::this_thread::sleep_for(50ms);  // a byte per 0.5 s
    }
  });
  std::this_thread::sleep_for(500ms);  // every slow client has begun its headers
  std::vector<double> healthz_ms, tenant_ms;
  int failures = 0;
  const auto until = std::chrono::steady_clock::now() + 3s;
  const size_t colon = s.address().rfind(':');
  const std::string host = s.address().substr(0, colon);
  const int port = std::stoi(s.address().substr(colon + 1));
  while (std::chrono::steady_clock::now() < until) {
    for (int which = 0; which < 2; ++which) {
      httplib::Client c(host, port);  // a new connection each time, as a new client would
      c.set_connection_timeout(2, 0);
      c.set_read_timeout(2, 0);
      if (which == 1) c.set_bearer_token_auth(tenant_token);
      const auto t0 = std::chrono::steady_clock::now();
      auto r = c.Get(which == 0 ? "/healthz" : "/v1/workloads");
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!r || r->status != 200) ++failures;
      (which == 0 ? healthz_ms : tenant_ms).push_back(r && r->status == 200 ? ms : 2000.0);
    }
    std::this_thread::sleep_for(5ms);
  }
  stop = true;
  trickle.join();
  for (int fd : slow) close(fd);
  std::cout << kSlow << " slow-header clients from 4 addresses: /healthz p50 "
            << Percentile(healthz_ms, 0.5) << " ms, p99 " << Percentile(healthz_ms, 0.99) << " ms ("
            << healthz_ms.size() << " requests); tenant GET /v1/workloads p50 "
            << Percentile(tenant_ms, 0.5) << " ms, p99 " << Percentile(tenant_ms, 0.99) << " ms ("
            << tenant_ms.size() << " requests); " << failures << " failed\n";
  EXPECT_EQ(failures, 0);
  EXPECT_LT(Percentile(healthz_ms, 0.99), 100.0);
  EXPECT_LT(Percentile(tenant_ms, 0.99), 100.0);
  s.Terminate();
}

// Headers, bodies and idle keep-alive connections each have a deadline for the whole phase:
// a trickle that never pauses long enough for a per-read timeout is still cut off.
TEST(ServerE2E, SlowOrIdleConnectionsAreClosedAtTheirDeadlines) {
  const std::string dir = TempDir();
  Server s(dir + "/data", "1xH100",
           {"--http-header-timeout", "1", "--http-body-timeout", "1", "--http-keepalive-timeout",
            "0.5"});
  ASSERT_NO_FATAL_FAILURE(s.Start());
  // Sends `prefix` at once, then one byte of `trickle` every 100 ms until the server closes;
  // returns the seconds from connect to close and what the server said.
  auto measure = [&](const std::string& prefix, const std::string& trickle, std::string* said) {
    const int fd = ConnectFrom("127.0.0.2", s.address());
    EXPECT_GE(fd, 0);
    const auto t0 = std::chrono::steady_clock::now();
    if (!prefix.empty()) send(fd, prefix.data(), prefix.size(), MSG_NOSIGNAL);
    bool closed = false;
    size_t k = 0;
    while (!closed && std::chrono::steady_clock::now() - t0 < 5s) {
      if (!trickle.empty()) send(fd, &trickle[k++ % trickle.size()], 1, MSG_NOSIGNAL);
      *said += ReadUntilClosed(fd, 100ms, &closed);
    }
    close(fd);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::string said;
  const double headers = measure("", "GET /healthz HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaa", &said);
  std::cout << "slow headers closed after " << headers << " s\n";
  EXPECT_GT(headers, 0.9);
  EXPECT_LT(headers, 2.0);
  EXPECT_THAT(said, HasSubstr("408"));
  said.clear();
  const double idle = measure("", "", &said);
  std::cout << "a silent connection closed after " << idle << " s\n";
  EXPECT_GT(idle, 0.9);
  EXPECT_LT(idle, 2.0);
  said.clear();
  const double body = measure(
      "POST /v1/workloads HTTP/1.1\r\nHost: x\r\nContent-Type: application/yaml\r\n"
      "Content-Length: 100000\r\n\r\n",
      "abcdefgh", &said);
  std::cout << "a slow body closed after " << body << " s\n";
  EXPECT_GT(body, 0.9);
  EXPECT_LT(body, 2.0);
  said.clear();
  const double keepalive = measure("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", "", &said);
  std::cout << "an idle keep-alive connection closed after " << keepalive << " s\n";
  EXPECT_THAT(said, HasSubstr("200 OK"));
  EXPECT_GT(keepalive, 0.4);
  EXPECT_LT(keepalive, 1.5);
  s.Terminate();
}

// Connections from one client address are capped: the extra one is refused with a 429 that
// says why, other addresses are still served, and a closed connection frees its slot.
TEST(ServerE2E, ConnectionsPerClientAddressAreCapped) {
  const std::string dir = TempDir();
  Server s(dir + "/data", "1xH100", {"--http-max-per-address", "4"});
  ASSERT_NO_FATAL_FAILURE(s.Start());
  std::vector<int> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(ConnectFrom("127.0.0.3", s.address()));
    ASSERT_GE(held.back(), 0);
  }
  std::this_thread::sleep_for(200ms);  // the server has taken all four
  const int extra = ConnectFrom("127.0.0.3", s.address());
  ASSERT_GE(extra, 0);
  bool closed = false;
  const std::string refused = ReadUntilClosed(extra, 2000ms, &closed);
  close(extra);
  EXPECT_TRUE(closed);
  EXPECT_THAT(refused, HasSubstr("429"));
  EXPECT_THAT(refused, HasSubstr("too many connections from 127.0.0.3"));
  auto healthz = [&](const std::string& source) {
    const int fd = ConnectFrom(source, s.address());
    const std::string req = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    bool done = false;
    const std::string answer = ReadUntilClosed(fd, 2000ms, &done);
    close(fd);
    return answer;
  };
  EXPECT_THAT(healthz("127.0.0.4"), HasSubstr("200 OK"));
  close(held.back());
  held.pop_back();
  std::string again;
  for (int i = 0; i < 50 && again.find("200 OK") == std::string::npos; ++i) {
    std::this_thread::sleep_for(20ms);
    again = healthz("127.0.0.3");
  }
  EXPECT_THAT(again, HasSubstr("200 OK"));
  for (int fd : held) close(fd);
  s.Terminate();
}

// A tenant token file beside the data directory: "admin" and "team-a" (whose token it returns).
std::string WriteTenantTokens(const std::string& dir) {
  const std::string tenant_token = "team-a-token-0123456789abcdef";
  std::ofstream(dir + "/tokens") << "admin " << std::string(64, 'a') << "\nteam-a " << tenant_token
                                 << "\n";
  return tenant_token;
}

// Latencies of `n` new-connection requests each of /healthz and a tenant's GET /v1/workloads
// (or until `limit` has passed); a failed request counts as its 2 s timeout.
struct ApiLatency {
  std::vector<double> healthz_ms, tenant_ms;
  int failures = 0;
  std::string Text() const {
    std::ostringstream out;
    out << "/healthz p50 " << Percentile(healthz_ms, 0.5) << " ms, p99 "
        << Percentile(healthz_ms, 0.99) << " ms (" << healthz_ms.size()
        << " requests); tenant GET /v1/workloads p50 " << Percentile(tenant_ms, 0.5) << " ms, p99 "
        << Percentile(tenant_ms, 0.99) << " ms (" << tenant_ms.size() << " requests); " << failures
        << " failed";
    return out.str();
  }
};
ApiLatency MeasureApi(const Server& s, const std::string& tenant_token, int n,
                      std::chrono::seconds limit) {
  ApiLatency m;
  const auto until = std::chrono::steady_clock::now() + limit;
  const size_t colon = s.address().rfind(':');
  const std::string host = s.address().substr(0, colon);
  const int port = std::stoi(s.address().substr(colon + 1));
  for (int i = 0; i < n && std::chrono::steady_clock::now() < until; ++i) {
    for (int which = 0; which < 2; ++which) {
      httplib::Client c(host, port);  // a new connection each time, as a new client would
      c.set_connection_timeout(2, 0);
      c.set_read_timeout(2, 0);
      if (which == 1) c.set_bearer_token_auth(tenant_token);
      const auto t0 = std::chrono::steady_clock::now();
      auto r = c.Get(which == 0 ? "/healthz" : "/v1/workloads");
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!r || r->status != 200) ++m.failures;
      (which == 0 ? m.healthz_ms : m.tenant_ms).push_back(r && r->status == 200 ? ms : 2000.0);
    }
    std::this_thread::sleep_for(5ms);
  }
  return m;
}

// Raises this process's soft limit of open files to its hard limit (the tests below hold
// hundreds of sockets at once).
void RaiseOpenFileLimit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

// The soft and hard limits of open files of process `pid` ("SOFT HARD", from /proc).
std::string OpenFileLimits(pid_t pid) {
  std::istringstream in(ReadFile("/proc/" + std::to_string(pid) + "/limits"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream words(line.substr(14));
    std::string soft, hard;
    words >> soft >> hard;
    return soft + " " + hard;
  }
  return "";
}

// Whether the server answered or closed `fd` already (it should still be waiting for it).
bool AnsweredOrClosed(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

// A connection holds a worker only once its request's headers are complete: 600 clients
// trickling their headers from 15 loopback addresses (40 each, under the per-address cap)
// against 16 workers leave /healthz and a tenant's GET answered within 100 ms p99, and the
// slow clients are still waiting for their header deadline, not dropped.
TEST(ServerE2E, SlowClientsOutnumberingTheWorkersLeaveTheApiAnswered) {
  RaiseOpenFileLimit();
  const std::string dir = TempDir();
  const std::string tenant_token = WriteTenantTokens(dir);
  Server s(dir + "/data", "4xH100", {"--tokens", dir + "/tokens", "--http-max-threads", "16"});
  // The daemon starts with a soft limit of 256 open files (too few for the 600 below), and
  // raises it to the hard limit itself.
  rlimit mine{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &mine), 0);
  rlimit low = mine;
  low.rlim_cur = std::min<rlim_t>(256, mine.rlim_cur);
  setrlimit(RLIMIT_NOFILE, &low);
  s.Start();
  setrlimit(RLIMIT_NOFILE, &mine);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(OpenFileLimits(s.pid()),
            std::to_string(mine.rlim_max) + " " + std::to_string(mine.rlim_max));
  constexpr int kSlow = 600, kPerAddress = 40;
  std::vector<int> slow;
  for (int i = 0; i < kSlow; ++i) {
    const std::string source = "127.0.0." + std::to_string(2 + i / kPerAddress);
    const int fd = ConnectFrom(source, s.address());
    ASSERT_GE(fd, 0) << "connect " << i << " from " << source << ": " << strerror(errno);
    slow.push_back(fd);
  }
  const std::string request =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(1000, 'a');
  for (int fd : slow) send(fd, request.data(), 20, MSG_NOSIGNAL | MSG_DONTWAIT);
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    for (size_t k = 20; !stop && k < request.size(); ++k) {
      for (int fd : slow) send(fd, &request[k], 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      for (int i = 0; i < 10 && !stop; ++i) std::this_thread::sleep_for(50ms);  // a byte per 0.5 s
    }
  });
  std::this_thread::sleep_for(500ms);  // the server has taken every slow connection
  const ApiLatency m = MeasureApi(s, tenant_token, 100, 8s);
  stop = true;
  trickle.join();
  const auto early = std::count_if(slow.begin(), slow.end(), AnsweredOrClosed);
  for (int fd : slow) close(fd);
  std::cout << kSlow << " slow-header clients from " << kSlow / kPerAddress
            << " addresses, 16 workers: " << m.Text() << "; " << early
            << " slow clients answered or closed before their deadline\n";
  EXPECT_EQ(m.failures, 0);
  EXPECT_LT(Percentile(m.healthz_ms, 0.99), 100.0);
  EXPECT_LT(Percentile(m.tenant_ms, 0.99), 100.0);
  EXPECT_EQ(early, 0);
  s.Terminate();
}

// Sends `request` on `fd` and reads one whole answer (headers and Content-Length body) within
// `limit`; "" when none came.
std::string RoundTrip(int fd, const std::string& request, std::chrono::milliseconds limit) {
  if (!request.empty()) send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string got;
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    const size_t end = got.find("\r\n\r\n");
    if (end != std::string::npos) {
      const size_t cl = got.find("Content-Length: ");
      const size_t body = cl == std::string::npos ? 0 : std::stoul(got.substr(cl + 16));
      if (got.size() >= end + 4 + body) return got;
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 10) <= 0) continue;
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return "";
}

// A connection idle between two requests holds no worker: 100 keep-alive connections that
// each made one request and stay open leave 16 workers free for /healthz, and each is served
// again when it sends its next request. Pipelined requests on one connection are all
// answered, and a connection closes after its fifth request (cpp-httplib's keep-alive count).
TEST(ServerE2E, IdleKeepAliveConnectionsHoldNoWorker) {
  RaiseOpenFileLimit();
  const std::string dir = TempDir();
  const std::string tenant_token = WriteTenantTokens(dir);
  Server s(
      dir + "/data", "1xH100",
      {"--tokens", dir + "/tokens", "--http-max-threads", "16", "--http-keepalive-timeout", "30"});
  ASSERT_NO_FATAL_FAILURE(s.Start());
  const std::string get = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  constexpr int kIdle = 100;
  std::vector<int> idle;
  int answered = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kIdle; ++i) {
    idle.push_back(ConnectFrom("127.0.0." + std::to_string(2 + i / 40), s.address()));
    ASSERT_GE(idle.back(), 0);
    if (RoundTrip(idle.back(), get, 3000ms).find("200 OK") != std::string::npos) ++answered;
    if (std::chrono::steady_clock::now() - t0 > 6s) break;  // the old server serves 16 at most
  }
  const ApiLatency m = MeasureApi(s, tenant_token, 50, 5s);
  std::cout << answered << " of " << kIdle
            << " keep-alive connections answered, then idle: " << m.Text() << "\n";
  EXPECT_EQ(answered, kIdle);
  EXPECT_EQ(m.failures, 0);
  EXPECT_LT(Percentile(m.healthz_ms, 0.99), 100.0);
  EXPECT_LT(Percentile(m.tenant_ms, 0.99), 100.0);
  int again = 0;
  for (int fd : idle) {
    if (RoundTrip(fd, get, 2000ms).find("200 OK") != std::string::npos) ++again;
    if (answered < kIdle) break;  // the old server: one try is enough
  }
  EXPECT_EQ(again, static_cast<int>(idle.size())) << "second requests on the idle connections";
  for (int fd : idle) close(fd);

  // Two requests in one segment: both answered, in order, then the connection closes.
  const int fd = ConnectFrom("127.0.0.2", s.address());
  ASSERT_GE(fd, 0);
  const std::string pair = get + "GET /v1/workloads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                           tenant_token + "\r\nConnection: close\r\n\r\n";
  send(fd, pair.data(), pair.size(), MSG_NOSIGNAL);
  bool closed = false;
  const std::string both = ReadUntilClosed(fd, 2000ms, &closed);
  close(fd);
  EXPECT_TRUE(closed);
  const size_t second = both.find("HTTP/1.1 200", 1);
  EXPECT_EQ(both.rfind("HTTP/1.1 200 OK", 0), 0u) << both;
  ASSERT_NE(second, std::string::npos) << both;
  EXPECT_THAT(both.substr(second), HasSubstr("\"workloads\"")) << both;

  // Five requests with pauses between them: the fifth is answered with Connection: close
  // and the connection ends.
  const int five = ConnectFrom("127.0.0.3", s.address());
  ASSERT_GE(five, 0);
  std::string last;
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(50ms);
    last = RoundTrip(five, get, 2000ms);
    EXPECT_THAT(last, HasSubstr("200 OK")) << "request " << i + 1;
  }
  EXPECT_THAT(last, HasSubstr("Connection: close"));
  closed = false;
  ReadUntilClosed(five, 1000ms, &closed);
  close(five);
  EXPECT_TRUE(closed);
  s.Terminate();
}

// Runs `airtime server` on `data` expecting it to refuse to start: returns its exit status
// (-1: it started after all, and was killed) and its output.
std::pair<int, std::string> StartRefused(const std::string& data, const std::string& gpus) {
  fs::remove(data + "/address");
  return airtime::e2e::RunUntilExit(
      {g_airtime, "server", "--data", data, "--listen", "127.0.0.1:0", "--fake-gpus", gpus}, {},
      data + ".refused.log", 10s, [&] { return fs::exists(data + "/address"); });
}

// Polls the workload until it reaches `state` (or the time is up); returns its last view.
json WaitState(httplib::Client& c, const std::string& name, const std::string& state,
               std::chrono::seconds limit = 30s) {
  json w;
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    w = GetJson(c, "/v1/workloads/" + name);
    if (w.is_object() && w.value("state", "") == state) break;
    std::this_thread::sleep_for(100ms);
  }
  return w;
}

std::map<std::string, int> CountLines(const std::string& path) {
  std::map<std::string, int> n;
  std::istringstream in(ReadFile(path));
  std::string line;
  while (std::getline(in, line)) ++n[line];
  return n;
}

// A one-GPU batch job that appends its name to `log`, then sleeps `sleep` seconds.
std::string Job(const std::string& name, const std::string& log, const std::string& sleep) {
  return "{name: " + name + ", kind: batch, gpus: 1, command: [/bin/sh, -c, 'echo " + name +
         " >> " + log + "; sleep " + sleep + "']}";
}

int Post(httplib::Client& c, const std::string& body) {
  auto r = c.Post("/v1/workloads", body, "application/yaml");
  return r ? r->status : -1;
}

// Issue 19: a store whose WAL was lost (after kill -9) started without a word; the job that
// had finished ran again and new runs reused old run ids ("refused"). Now it refuses to
// start, saying what is inconsistent; --accept-store-loss carries on without re-running
// finished work or reusing a run id.
TEST(ServerE2E, StoreThatLostItsWalRefusesToStartAndAcceptingTheLossRerunsNothing) {
  const std::string dir = TempDir();
  const std::string data = dir + "/data", starts = dir + "/starts.log";
  Server s(data, "1xH100");
  ASSERT_NO_FATAL_FAILURE(s.Start());
  {
    auto c = s.Client();
    ASSERT_EQ(Post(c, Job("first", starts, "1")), 201);
    ASSERT_EQ(Post(c, Job("second", starts, "0")), 201);
    ASSERT_EQ(WaitState(c, "first", "running")["state"], "running");
  }
  s.Terminate();  // a clean stop: the store is checkpointed into airtime.db
  ASSERT_NO_FATAL_FAILURE(s.Start());
  std::string run;  // second's: above the run ids the first start reserved
  {
    auto c = s.Client();
    json second = WaitState(c, "second", "succeeded");
    ASSERT_EQ(second["state"], "succeeded");
    run = std::to_string(second["runs"].back()["id"].get<int64_t>());
  }
  s.Kill();
  ASSERT_NO_FATAL_FAILURE(s.Start());  // a healthy restart after kill -9 still starts
  s.Kill();
  // Everything since the clean stop (second's run, its success) is in the WAL: lose it.
  ASSERT_TRUE(fs::exists(data + "/runs/" + run + "/exit"));
  fs::remove(data + "/airtime.db-wal");
  fs::remove(data + "/airtime.db-shm");
  auto [code, out] = StartRefused(data, "1xH100");
  EXPECT_GT(code, 0) << "started on a store that lost its WAL:\n" << out;
  EXPECT_THAT(out, HasSubstr("does not match the data directory"));
  EXPECT_THAT(out, HasSubstr(data + "/runs holds 1 run directory the store does not know: " + run));
  EXPECT_THAT(out, HasSubstr("the store's sequence is"));
  EXPECT_THAT(out, HasSubstr("airtime.db-wal from a backup"));
  EXPECT_THAT(out, HasSubstr("--accept-store-loss"));

  s.SetExtraArgs({"--accept-store-loss"});
  ASSERT_NO_FATAL_FAILURE(s.Start());
  auto c = s.Client();
  json second = WaitState(c, "second", "succeeded", 10s);
  EXPECT_EQ(second["state"], "succeeded") << second.dump();
  EXPECT_EQ(WaitState(c, "first", "succeeded")["state"], "succeeded");
  ASSERT_EQ(Post(c, Job("third", starts, "0")), 201);
  json third = WaitState(c, "third", "succeeded");
  EXPECT_EQ(third["state"], "succeeded") << third.dump();
  ASSERT_EQ(third["runs"].size(), 1u) << third.dump();
  EXPECT_GT(third["runs"][0]["id"].get<int64_t>(), std::stoll(run));
  EXPECT_THAT(ReadFile(data + "/store-loss.log"), HasSubstr("workload 'second' (id 2)"));
  s.Terminate();
  s.SetExtraArgs({});
  ASSERT_NO_FATAL_FAILURE(s.Start());  // the loss was accepted once; later starts are clean
  s.Terminate();
  const auto n = CountLines(starts);
  EXPECT_EQ(n.at("first"), 1);
  EXPECT_EQ(n.at("second"), 1) << "a finished job ran again";
  EXPECT_EQ(n.at("third"), 1);
}

// Issue 19: an emptied airtime.db beside an existing runs/ started as a new store; its first
// run reused run id 1 and was refused by the old claim file.
TEST(ServerE2E, EmptiedStoreBesideRunsRefusesToStartAndNewRunsDoNotCollide) {
  const std::string dir = TempDir();
  const std::string data = dir + "/data", starts = dir + "/starts.log";
  Server s(data, "1xH100");
  ASSERT_NO_FATAL_FAILURE(s.Start());
  {
    auto c = s.Client();
    ASSERT_EQ(Post(c, Job("one", starts, "0")), 201);
    ASSERT_EQ(WaitState(c, "one", "succeeded")["state"], "succeeded");
  }
  s.Terminate();
  fs::resize_file(data + "/airtime.db", 0);
  fs::remove(data + "/airtime.db-wal");
  fs::remove(data + "/airtime.db-shm");
  auto [code, out] = StartRefused(data, "1xH100");
  EXPECT_GT(code, 0) << "started on an emptied store:\n" << out;
  EXPECT_THAT(out, HasSubstr("missing or empty"));
  EXPECT_THAT(out, HasSubstr(data + "/runs holds 1 run directory the store does not know: 1"));

  s.SetExtraArgs({"--accept-store-loss"});
  ASSERT_NO_FATAL_FAILURE(s.Start());
  auto c = s.Client();
  ASSERT_EQ(Post(c, Job("two", starts, "0")), 201);
  json two = WaitState(c, "two", "succeeded");
  EXPECT_EQ(two["state"], "succeeded") << two.dump();
  ASSERT_EQ(two["runs"].size(), 1u) << two.dump();
  EXPECT_GT(two["runs"][0]["id"].get<int64_t>(), 1);
  EXPECT_GT(two["id"].get<int64_t>(), 1);  // the lost workload's id (and checkpoints) not reused
  EXPECT_THAT(ReadFile(data + "/store-loss.log"),
              HasSubstr("workload 'one' (id 1): the store no longer has this workload"));
  s.Terminate();
  const auto n = CountLines(starts);
  EXPECT_EQ(n.at("one"), 1);
  EXPECT_EQ(n.at("two"), 1);
}

// Issue 19: a job started while the disk was full burnt its attempts and failed for good.
// Now starts pause while DATA's file system is low (the job stays queued and says why) and
// resume when space returns. Needs root to mount a small tmpfs.
TEST(ServerE2E, AFullDiskPausesStartsAndTheJobRunsWhenSpaceReturns) {
  const std::string dir = TempDir();
  const std::string disk = dir + "/disk", starts = dir + "/starts.log";
  fs::create_directories(disk);
  if (mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=128m") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs at " << disk << " (needs root): " << strerror(errno);
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{disk};
  const std::string data = disk + "/data";
  Server s(data, "1xH100");
  ASSERT_NO_FATAL_FAILURE(s.Start());
  {
    // About 40 MiB left: below the default 100 MiB, room enough for the store.
    std::ofstream filler(disk + "/filler", std::ios::binary);
    const std::string block(1024 * 1024, 'x');
    for (int i = 0; i < 88; ++i) filler.write(block.data(), block.size());
    ASSERT_TRUE(filler.good());
  }
  auto c = s.Client();
  ASSERT_EQ(Post(c, Job("patient", starts, "0")), 201);
  std::this_thread::sleep_for(1500ms);
  json w = GetJson(c, "/v1/workloads/patient");
  EXPECT_EQ(w["state"], "queued") << w.dump();
  EXPECT_TRUE(w["runs"].empty()) << w.dump();
  EXPECT_THAT(w.value("reason", ""), HasSubstr("starts paused: " + data + "'s file system has"));
  EXPECT_THAT(w.value("reason", ""), HasSubstr("below the 100 MiB needed"));
  EXPECT_THAT(Cli(s, "describe patient").second, HasSubstr("starts paused"));
  fs::remove(disk + "/filler");
  w = WaitState(c, "patient", "succeeded");
  EXPECT_EQ(w["state"], "succeeded") << w.dump();
  EXPECT_EQ(w["runs"].size(), 1u) << w.dump();
  s.Terminate();
  EXPECT_EQ(CountLines(starts)["patient"], 1);
}

// Model variants live (issue 22): a service whose generalist takes 2 GPUs a replica and whose
// quantized copy takes 1, made by a quantize job, beside a valuable batch job that needs 3 of
// the 4 GPUs. Once the quantize job completes, the airtime policy switches the service to
// the quantized variant, make-before-break (its replica starts, and the generalist's stops
// only once it has served its cold start), and the GPUs the generalist gives back start the
// waiting job. The service never has zero replicas at any poll; each replica runs its own
// variant's command; a SIGKILL of the daemon brings it back as it was; `cancel chat` stops it.
// Every wait is for a state, with minutes of slack (CI runs this at nice 19 beside a build).
TEST(ServerE2E, AQuantizeJobsVariantReplacesTheGeneralistAndItsGpusStartTheWaitingJob) {
  const std::string dir = TempDir();
  Server s(dir + "/data", "4xH100");
  ASSERT_NO_FATAL_FAILURE(s.Start());
  const std::string marks = dir + "/variants.log";  // each replica says which it is
  std::ofstream(dir + "/w.yaml")
      << "- name: chat\n"
         "  kind: realtime\n"
         "  slo: {latency_ms: 200, min_replicas: 1, cold_start: 1s}\n"
         "  quality_floor: 0.9\n"
         "  value: {per_1k_requests: 1}\n"
         "  variants:\n"
         "    - name: big\n"
         "      gpus: 2\n"
         "      throughput: {H100: 10}\n"
         "      command: [/bin/sh, -c, 'echo big >> "
      << marks
      << "; exec sleep 600']\n"
         "    - name: int8\n"
         "      gpus: 1\n"
         "      throughput: {H100: 10}\n"
         "      quality: 0.95\n"
         "      cold_start: 3s\n"
         "      command: [/bin/sh, -c, 'echo int8 >> "
      << marks
      << "; exec sleep 600']\n"
         "- {name: quant, kind: quantize, gpus: 1, command: [/bin/sleep, '3'],\n"
         "   produces: {service: chat, variant: int8}}\n"
         "- {name: backlog, kind: batch, gpus: 3, command: [/bin/sleep, '600'],\n"
         "   value: {on_completion: 5000}}\n";
  auto [rc, out] = Cli(s, "submit " + dir + "/w.yaml");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("chat/big"));
  EXPECT_THAT(out, HasSubstr("chat/int8"));
  std::tie(rc, out) = Cli(s, "demand chat 8");
  ASSERT_EQ(rc, 0) << out;
  auto c = s.Client();
  json view = WaitState(c, "chat", "running", 180s);
  ASSERT_EQ(view.value("state", ""), "running") << view.dump(2);

  // Poll until the switch is over: the quantized variant serves, the generalist holds
  // nothing, the waiting job runs. At every poll the service has a replica.
  auto replicas = [](const json& member) {
    return member.contains("replicas") ? member["replicas"]["running"].get<int>() : 0;
  };
  std::vector<std::string> seen;  // "big/int8" replica counts, as they changed
  json backlog;
  bool switched = false;
  const auto until = std::chrono::steady_clock::now() + 300s;
  while (std::chrono::steady_clock::now() < until) {
    view = GetJson(c, "/v1/workloads/chat");
    backlog = GetJson(c, "/v1/workloads/backlog");
    ASSERT_TRUE(view.is_object() && view.contains("members")) << view.dump(2);
    ASSERT_EQ(view["members"].size(), 2u);
    const int big = replicas(view["members"][0]), int8 = replicas(view["members"][1]);
    const std::string counts = std::to_string(big) + "/" + std::to_string(int8);
    if (seen.empty() || seen.back() != counts) seen.push_back(counts);
    ASSERT_GE(view["replicas"]["running"].get<int>(), 1)
        << "the service had no replica; counts so far: " << testing::PrintToString(seen);
    if (big == 0 && int8 >= 1 && backlog.value("state", "") == "running") {
      switched = true;
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(switched) << "counts (big/int8): " << testing::PrintToString(seen) << "\n"
                        << view.dump(2) << "\n"
                        << backlog.dump(2) << "\n"
                        << Cli(s, "describe chat").second;
  EXPECT_EQ(GetJson(c, "/v1/workloads/quant")["state"], "succeeded");
  // Make-before-break: the generalist's replica ended only once the quantized one had been
  // up for its cold start (3 s). The run rows' stamps are the daemon's wall clock when it
  // recorded the start and saw the exit, a few ms off the engine's own times: 250 ms slack,
  // far from a break-before-make, which would end it about when the new one starts.
  // The engine gives the generalist's GPUs to the waiting job in the cycle that releases
  // them; its process's exit is recorded when the daemon sees it, a moment later (slower
  // under a sanitizer): wait for it.
  json big;
  for (const auto end = std::chrono::steady_clock::now() + 60s;
       std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(100ms)) {
    big = GetJson(c, "/v1/workloads/chat%2Fbig");
    if (big.contains("runs") && big["runs"].size() == 1 && !big["runs"][0]["ended_at"].is_null())
      break;
  }
  json int8 = GetJson(c, "/v1/workloads/chat%2Fint8");
  ASSERT_EQ(big["runs"].size(), 1u) << big.dump(2);
  ASSERT_GE(int8["runs"].size(), 1u) << int8.dump(2);
  ASSERT_FALSE(big["runs"][0]["ended_at"].is_null()) << big.dump(2);
  const int64_t big_end = big["runs"][0]["ended_at"];
  const int64_t int8_start = int8["runs"][0]["started_at"];
  EXPECT_GE(big_end, int8_start + 3000 - 250) << big.dump(2) << int8.dump(2);
  // The waiting job runs on GPUs the generalist gave back. The engine starts it in the
  // cycle that frees them; its run (and so its GPUs) is recorded when launched, a moment
  // later: wait for it.
  for (const auto end = std::chrono::steady_clock::now() + 60s;
       std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(100ms)) {
    backlog = GetJson(c, "/v1/workloads/backlog");
    if (backlog.contains("gpus") && !backlog["gpus"].empty()) break;
  }
  std::set<std::string> freed;
  for (const json& g : big["runs"][0]["gpus"]) freed.insert(g.get<std::string>());
  int reused = 0;
  for (const json& g : backlog["gpus"]) reused += freed.count(g.get<std::string>());
  EXPECT_EQ(reused, 2) << backlog.dump(2) << big.dump(2);
  // Each replica ran its own variant's command.
  EXPECT_EQ(CountLines(marks), (std::map<std::string, int>{{"big", 1}, {"int8", 1}}));

  // The CLI by the service's name and by a member's.
  std::tie(rc, out) = Cli(s, "describe chat");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("Members:"));
  EXPECT_THAT(out, HasSubstr("chat/int8"));
  std::tie(rc, out) = Cli(s, "logs chat/int8");
  EXPECT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "events chat");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("chat/big"));
  std::tie(rc, out) = Cli(s, "logs chat");
  EXPECT_NE(rc, 0);
  EXPECT_THAT(out, HasSubstr("run as its members chat/big, chat/int8"));
  std::tie(rc, out) = Cli(s, "cancel chat/int8");
  EXPECT_NE(rc, 0);
  EXPECT_THAT(out, HasSubstr("cancel the service"));
  std::tie(rc, out) = Cli(s, "ls");
  EXPECT_THAT(out, HasSubstr("chat/int8"));

  // A SIGKILL and a restart: the service returns with its members, the replica adopted.
  const int64_t pid = int8["runs"].back()["pid"];
  s.Kill();
  ASSERT_NO_FATAL_FAILURE(s.Start());
  auto again = s.Client();
  view = WaitState(again, "chat", "running", 120s);
  ASSERT_EQ(view.value("state", ""), "running") << view.dump(2);
  int8 = GetJson(again, "/v1/workloads/chat%2Fint8");
  EXPECT_EQ(int8["runs"].back()["pid"], pid) << int8.dump(2);
  EXPECT_EQ(int8["runs"].size(), 1u) << int8.dump(2);

  std::tie(rc, out) = Cli(s, "cancel chat");
  EXPECT_EQ(rc, 0) << out;
  view = WaitState(again, "chat", "cancelled", 120s);
  EXPECT_EQ(view.value("state", ""), "cancelled") << view.dump(2);
  for (const json& m : view["members"]) EXPECT_EQ(m["state"], "cancelled") << view.dump(2);
  for (int i = 0; i < 600 && kill(static_cast<pid_t>(pid), 0) == 0; ++i)
    std::this_thread::sleep_for(100ms);
  EXPECT_NE(kill(static_cast<pid_t>(pid), 0), 0) << "the replica outlived its service";
  std::tie(rc, out) = Cli(s, "cancel backlog");
  s.Terminate();
}

// What a service with variants was told survives a SIGKILL of the daemon: each request
// class's last rate (not its file's curve), and the producer a later submission named for a
// variant declared awaits_producer, which completes after the restart and makes the variant
// run. The service's name reaches its members' hold-or-hand-off calls.
TEST(ServerE2E, ClassRatesAndALaterProducerSurviveASigkill) {
  const std::string dir = TempDir();
  Server s(dir + "/data", "4xH100");
  ASSERT_NO_FATAL_FAILURE(s.Start());
  std::ofstream(dir + "/chat.yaml")
      << "- name: chat\n"
         "  kind: realtime\n"
         "  slo: {latency_ms: 200, min_replicas: 1, cold_start: 1s}\n"
         "  quality_floor: 0.9\n"
         "  value: {per_1k_requests: 1}\n"
         "  command: [/bin/sh, -c, 'exec sleep 600']\n"
         "  classes: [{name: code, demand: [{at: 0, rps: 1}]}, {name: conv, demand: [{at: 0, "
         "rps: 1}]}]\n"
         "  variants:\n"
         "    - {name: big, gpus: 2, throughput: {H100: 10}}\n"
         "    - {name: int8, gpus: 1, throughput: {H100: 10}, quality: 0.95, awaits_producer: "
         "true}\n";
  auto [rc, out] = Cli(s, "submit " + dir + "/chat.yaml");
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "demand chat 5 --class code");
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "demand chat 3 --class conv");
  ASSERT_EQ(rc, 0) << out;
  auto c = s.Client();
  json view = WaitState(c, "chat", "running", 120s);
  ASSERT_EQ(view.value("state", ""), "running") << view.dump(2);
  const json rates = {{"code", 5.0}, {"conv", 3.0}};
  EXPECT_EQ(view["class_rps"], rates) << view.dump(2);
  // A later submission's job produces int8 (a refusal first: a variant that runs from the start).
  std::ofstream(dir + "/bad.yaml") << "{name: q0, kind: quantize, gpus: 1, command: [/bin/true], "
                                      "produces: {service: chat, variant: big}}\n";
  std::tie(rc, out) = Cli(s, "submit " + dir + "/bad.yaml");
  EXPECT_NE(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("field 'produces.variant'"));
  EXPECT_THAT(out, HasSubstr("'chat/big' is not one a job produces"));
  std::ofstream(dir + "/quant.yaml") << "{name: quant, kind: quantize, gpus: 1, command: "
                                        "[/bin/sleep, '4'], produces: {service: chat, variant: "
                                        "int8}}\n";
  std::tie(rc, out) = Cli(s, "submit " + dir + "/quant.yaml");
  ASSERT_EQ(rc, 0) << out;
  // The daemon is killed while the job runs.
  ASSERT_EQ(WaitState(c, "quant", "running", 60s).value("state", ""), "running");
  s.Kill();
  ASSERT_NO_FATAL_FAILURE(s.Start());
  auto again = s.Client();
  view = WaitState(again, "chat", "running", 120s);
  EXPECT_EQ(view["class_rps"], rates) << view.dump(2);
  json int8 = GetJson(again, "/v1/workloads/chat%2Fint8");
  EXPECT_THAT(int8.value("reason", ""), HasSubstr("job 'quant'")) << int8.dump(2);
  ASSERT_EQ(WaitState(again, "quant", "succeeded", 120s).value("state", ""), "succeeded");
  // The variant may run now: switching to it pays only where waiting work wants the GPUs.
  std::ofstream(dir + "/backlog.yaml") << "{name: backlog, kind: batch, gpus: 3, command: "
                                          "[/bin/sleep, '600'], value: {on_completion: 5000}}\n";
  std::tie(rc, out) = Cli(s, "submit " + dir + "/backlog.yaml");
  ASSERT_EQ(rc, 0) << out;
  for (const auto end = std::chrono::steady_clock::now() + 120s;
       std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(100ms)) {
    int8 = GetJson(again, "/v1/workloads/chat%2Fint8");
    if (int8.contains("replicas") && int8["replicas"]["running"].get<int>() >= 1) break;
  }
  ASSERT_GE(int8["replicas"]["running"].get<int>(), 1) << int8.dump(2);
  std::ofstream(dir + "/again.yaml") << "{name: quant2, kind: quantize, gpus: 1, command: "
                                        "[/bin/true], produces: {service: chat, variant: int8}}\n";
  std::tie(rc, out) = Cli(s, "submit " + dir + "/again.yaml");
  EXPECT_NE(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("'chat/int8' has been produced already, by job 'quant'"));
  std::tie(rc, out) = Cli(s, "holds --service chat --json");
  EXPECT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "holds --service chta");
  EXPECT_NE(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("no workload 'chta'"));
  std::tie(rc, out) = Cli(s, "cancel chat");
  EXPECT_EQ(rc, 0) << out;
  std::tie(rc, out) = Cli(s, "cancel backlog");
  view = WaitState(again, "chat", "cancelled", 120s);
  EXPECT_EQ(view.value("state", ""), "cancelled") << view.dump(2);
  s.Terminate();
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  g_airtime = airtime::e2e::AirtimeFlag(argc, argv, "server_e2e_test");
  if (g_airtime.empty()) return 2;
  signal(SIGPIPE, SIG_IGN);
  return RUN_ALL_TESTS();
}
