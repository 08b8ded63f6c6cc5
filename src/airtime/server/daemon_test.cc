// The daemon in-process, with fake GPUs and real processes (through the test shim).
#include "airtime/server/daemon.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <httplib.h>

#include "airtime/api/http_api.h"
#include "airtime/api/tokens.h"
#include "airtime/model/gpu_cost.h"
#include "airtime/server/demand_scrape.h"
#include "airtime/server/hold_record.h"
#include "airtime/store/store.h"

namespace airtime {
namespace {

using nlohmann::json;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

const Caller kAdmin{"", true};
const Caller kTeamA{"team-a", false};
const Caller kTeamB{"team-b", false};

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airtime-daemon-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    daemon_.reset();
    for (pid_t pid : leftovers_) kill(-pid, SIGKILL);
    // A shim may still be writing its exit file: retry rather than throw.
    std::error_code ec;
    for (int i = 0; i < 20 && std::filesystem::exists(dir_); ++i) {
      std::filesystem::remove_all(dir_, ec);
      if (ec) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  void Open(const std::string& gpus = "4xH100", const std::string& policy = "airtime") {
    OpenWith(Options(gpus, policy));
  }
  void OpenWith(const DaemonOptions& options) {
    auto d = Daemon::Open(options);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    daemon_ = std::move(*d);
    daemon_->Start();
  }

  DaemonOptions Options(const std::string& gpus = "4xH100", const std::string& policy = "airtime") {
    DaemonOptions o;
    o.policy = policy;
    o.data_dir = dir_ + "/data";
    o.fake_gpus = gpus;
    o.shim_path = AIRTIME_TEST_SHIM_PATH;
    o.hostname = "testhost";
    o.telemetry_interval = 100;
    o.scrape_interval = 200;
    return o;
  }

  json Submit(const Caller& c, const std::string& yaml) {
    auto r = daemon_->Submit(c, yaml, "request");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : json();
  }

  json Get(const std::string& id) {
    auto r = daemon_->Get(kAdmin, id);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : json();
  }

  // Waits (up to 20 s) until workload `id` is in `state`.
  json WaitFor(const std::string& id, const std::string& state) {
    json w;
    for (int i = 0; i < 400; ++i) {
      w = Get(id);
      if (w.value("state", "") == state) return w;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "workload " << id << " never reached " << state << ": " << w.dump(2);
    return w;
  }

  // Waits (up to 5 s) until the first run of workload `w` has printed "ready" (its TERM
  // trap is in place once it says so).
  void WaitForReady(const json& w) {
    const std::string out = w["runs"][0]["log_dir"].get<std::string>() + "/stdout.log";
    for (int i = 0; i < 200; ++i) {
      std::ifstream f(out);
      std::string line;
      if (std::getline(f, line) && line == "ready") return;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }

  // The `metrics` and `command` lines of a service whose every replica serves a static
  // exposition of 6 requests in flight (python3's http.server): 30 rps at a 200 ms SLO.
  std::string InFlightMetrics() {
    std::filesystem::create_directories(dir_ + "/www");
    std::ofstream(dir_ + "/www/metrics") << "# TYPE demo_in_flight gauge\ndemo_in_flight 6\n";
    return "metrics: {demand: [demo_in_flight]}\n"
           "command: [/bin/sh, -c, 'exec python3 -m http.server $PORT --bind 127.0.0.1 "
           "--directory " +
           dir_ + "/www']\n";
  }

  // `text`'s lines indented by two spaces (InFlightMetrics' lines in a list item).
  static std::string Indent(const std::string& text) {
    std::string out;
    size_t start = 0;
    while (start < text.size()) {
      const size_t nl = text.find('\n', start);
      const size_t end = nl == std::string::npos ? text.size() : nl + 1;
      out += "  " + text.substr(start, end - start);
      start = end;
    }
    return out;
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
  std::vector<pid_t> leftovers_;
};

TEST_F(DaemonTest, RunsAJobToCompletionWithItsGpusInTheEnvironment) {
  Open();
  json r = Submit(kTeamA,
                  "name: hello\nkind: batch\ngpus: 2\n"
                  "command: [/bin/sh, -c, 'echo \"gpus=$CUDA_VISIBLE_DEVICES\"; echo oops >&2']\n");
  ASSERT_EQ(r["accepted"].size(), 1u);
  json w = WaitFor("hello", "succeeded");
  EXPECT_EQ(w["tenant"], "team-a");
  EXPECT_EQ(w["exit_code"], 0);
  ASSERT_EQ(w["runs"].size(), 1u);
  const std::string log_dir = w["runs"][0]["log_dir"];
  std::ifstream out(log_dir + "/stdout.log");
  std::string line;
  std::getline(out, line);
  EXPECT_THAT(line, HasSubstr("gpus=GPU-"));
  EXPECT_THAT(line, HasSubstr(","));  // two GPUs
  std::ifstream err(log_dir + "/stderr.log");
  std::getline(err, line);
  EXPECT_EQ(line, "oops");
}

TEST_F(DaemonTest, AFailingJobIsRetriedThenFailed) {
  Open();
  Submit(kAdmin, "name: bad\nkind: batch\ncommand: [/bin/sh, -c, 'exit 3']\n");
  json w = WaitFor("bad", "failed");
  EXPECT_EQ(w["runs"].size(), 3u);
  EXPECT_EQ(w["exit_code"], 3);
  EXPECT_THAT(w["explanation"].get<std::string>(), HasSubstr("failed 3 times"));
}

// The store keeps every submission's env: the data directory is the daemon's alone whether
// it isolates or not, while a workload starts with the usual umask.
TEST_F(DaemonTest, TheDataDirectoryIsPrivateAndWorkloadsKeepTheUsualUmask) {
  // The operator's own file in the data directory (`--data .`) is left as it is.
  std::filesystem::create_directories(dir_ + "/data");
  std::ofstream(dir_ + "/data/notes.txt") << "mine\n";
  chmod((dir_ + "/data/notes.txt").c_str(), 0644);
  Open();
  Submit(kAdmin,
         "name: mask\nkind: batch\ncommand: [/bin/sh, -c, 'umask > " + dir_ + "/umask.txt']\n");
  WaitFor("mask", "succeeded");
  std::ifstream in(dir_ + "/umask.txt");
  std::string mask;
  in >> mask;
  EXPECT_EQ(mask, "0022");
  for (const std::string f : {"/data/airtime.db", "/data/daemon.lock", "/data/tokens", "/data/runs",
                              "/data/runs/1/stdout.log"}) {
    struct stat st {};
    if (f == "/data/tokens" && stat((dir_ + f).c_str(), &st) != 0) continue;  // not made here
    ASSERT_EQ(stat((dir_ + f).c_str(), &st), 0) << f;
    EXPECT_EQ(st.st_mode & 066, 0u) << f << " mode " << std::oct << (st.st_mode & 0777);
  }
  struct stat notes {};
  ASSERT_EQ(stat((dir_ + "/data/notes.txt").c_str(), &notes), 0);
  EXPECT_EQ(notes.st_mode & 0777, 0644u);
}

// A host-only task (gpus: 0) is placed on its host's node, and its events say so.
TEST_F(DaemonTest, AHostOnlyTaskIsPlacedOnANodeItsEventsName) {
  Open();
  Submit(kAdmin, "name: host\nkind: batch\ngpus: 0\ncpu: 1\ncommand: [/bin/true]\n");
  WaitFor("host", "succeeded");
  auto events = daemon_->Events(kAdmin, "host");
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_THAT(events->dump(), HasSubstr("(no GPU, host only)"));
  EXPECT_THAT(events->dump(), Not(HasSubstr(" on  (")));
}

TEST_F(DaemonTest, TenantsSeeOnlyTheirOwnWorkloads) {
  Open();
  Submit(kTeamA, "name: a1\nkind: batch\ncommand: [/bin/true]\n");
  EXPECT_EQ(daemon_->Get(kTeamB, "a1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(daemon_->Cancel(kTeamB, "a1").code(), StatusCode::kNotFound);
  auto list = daemon_->List(kTeamB, {});
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE((*list)["workloads"].empty());
  auto other = daemon_->Submit(kTeamB, "name: b1\ntenant: team-a\ncommand: [/bin/true]\n", "req");
  EXPECT_EQ(other.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(other.status().message(), HasSubstr("field 'tenant'"));
  EXPECT_TRUE(daemon_->Get(kAdmin, "a1").ok());
  // `default`, the default tenant, is the caller's own (docs/api.md, "Submit").
  Submit(kTeamB, "name: b2\ntenant: default\nkind: batch\ncommand: [/bin/true]\n");
  EXPECT_EQ(daemon_->Get(kTeamB, "b2").value()["tenant"], "team-b");
}

TEST_F(DaemonTest, BadRequestsNameTheFieldAndLoseNothing) {
  Open();
  Submit(kAdmin, "name: keep\nkind: batch\ncommand: [/bin/sleep, '30']\n");
  auto dup = daemon_->Submit(
      kAdmin, "- {name: new1, command: [/bin/true]}\n- {name: keep, command: [/bin/true]}\n", "r");
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(daemon_->Get(kAdmin, "new1").status().code(), StatusCode::kNotFound);  // all or none
  auto bad = daemon_->Submit(kAdmin, "name: x\ngpus: lots\n", "request");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("request:2"));
  EXPECT_EQ(daemon_->ReportDemand(kAdmin, "keep", 5, "").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(daemon_->ReportDemand(kAdmin, "keep", -1, "").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(WaitFor("keep", "running")["state"], "running");
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "keep").ok());
  json w = WaitFor("keep", "cancelled");
  EXPECT_EQ(w["runs"][0]["stop_reason"], "released: cancelled");
}

// A service with model variants whose first request class is named `first`.
std::string Classes(const std::string& first) {
  return "name: svc\nkind: realtime\nslo: {latency_ms: 500, min_replicas: 1, max_replicas: 1}\n"
         "classes:\n  - {name: \"" +
         first +
         "\", demand: [{at: 0h, rps: 1}]}\n  - {name: conv, demand: [{at: 0h, rps: 1}]}\n"
         "variants:\n  - {name: big, gpus: 1, throughput: {H100: 10}}\n";
}

// Every string a tenant sends is valid UTF-8 without NUL; names, tenants and class names
// also have no control characters. Each refusal names the workload and the field, and
// nothing is committed.
TEST_F(DaemonTest, SubmittedTextMustBeUtf8WithoutNulAndNamesWithoutControls) {
  Open();
  struct Case {
    std::string body, message;
  };
  const std::vector<Case> cases = {
      // Raw invalid UTF-8 is refused by the YAML reader (naming the byte) or by the text rules
      // (naming the field): either way before anything is committed. An escaped NUL is refused
      // by the YAML budget pass (yaml_budget.h), naming its line, in any field.
      {"name: \"bad\xff\"\nkind: batch\nwork: 1h\n", "UTF-8"},
      {"{\"name\": \"bad\xff\", \"kind\": \"batch\", \"work\": \"1h\"}", "UTF-8"},
      {"{\"name\": \"a\\u0000b\", \"kind\": \"batch\", \"work\": \"1h\"}",
       "request:1: a value holds a NUL byte"},
      {"name: \"two\\nlines\"\nkind: batch\nwork: 1h\n",
       "field 'name': contains a control character"},
      {"name: \"tab\\there\"\nkind: batch\nwork: 1h\n", "field 'name': contains a control"},
      {"name: \"del\\x7f\"\nkind: batch\nwork: 1h\n", "field 'name': contains a control"},
      {"name: \"c1\\u0085\"\nkind: batch\nwork: 1h\n", "field 'name': contains a control"},
      {"name: " + std::string(300, 'n') + "\nkind: batch\nwork: 1h\n", "field 'name': longer than"},
      {"name: x\nkind: batch\ncommand: [/bin/echo, \"a\\0b\"]\n",
       "request:3: a value holds a NUL byte"},
      {"name: x\nkind: batch\ncommand: [/bin/echo, \"ok\xc3\"]\n", "UTF-8"},
      {"name: x\nkind: batch\ncommand: [/bin/true]\nenv: {A: \"v\\0w\"}\n",
       "request:4: a value holds a NUL byte"},
      {"name: x\nkind: batch\ncommand: [/bin/true]\nenv: {\"A\\0B\": v}\n",
       "request:4: a value holds a NUL byte"},
      {"name: x\nkind: batch\ncommand: [/bin/true]\nworkdir: \"/tmp\\0/etc\"\n",
       "request:4: a value holds a NUL byte"},
      {"name: x\nkind: batch\ntenant: \"t\xfe\"\nwork: 1h\n", "UTF-8"},
      // A tenant and a class's name are labels: shown in tables, exported to /metrics.
      {"name: x\nkind: batch\ntenant: \"te\\nnant\"\nwork: 1h\n",
       "request:3: workload 'x': field 'tenant': contains a control character (U+000A) at byte 2"},
      {"name: x\nkind: batch\ntenant: \"te\\u2029nant\"\nwork: 1h\n",
       "field 'tenant': contains a control character (U+2029)"},
      {"name: x\nkind: batch\ntenant: ''\nwork: 1h\n", "field 'tenant': expected a non-empty"},
      {Classes("co\\e[31mde"), "field 'classes[0].name': contains a control character (U+001B)"},
      {Classes(std::string(129, 'c')), "field 'classes[0].name': longer than 128 bytes"},
  };
  for (const Case& c : cases) {
    auto r = daemon_->Submit(kAdmin, c.body, "request");
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(r.status().message(), HasSubstr(c.message)) << c.body;
  }
  auto list = daemon_->List(kAdmin, {});
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE((*list)["workloads"].empty())
      << (*list).dump(2, ' ', false, json::error_handler_t::replace);
  Submit(kAdmin,
         "name: caf\xc3\xa9-ok\nkind: batch\nwork: 1h\ncommand: [/bin/echo, 'h\xc3\xa9']\n");
}

// Lookups try the id first, so a workload named `2` could not be reached by its name: such
// names are refused.
TEST_F(DaemonTest, NamesThatReadAsIdsAreRefused) {
  Open();
  for (const char* name : {"2", "0042", "12345678901234567890"}) {
    auto r = daemon_->Submit(kAdmin, std::string("name: '") + name + "'\nkind: batch\nwork: 1h\n",
                             "request");
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(r.status().message(), HasSubstr("would read as a workload id")) << name;
  }
  Submit(kAdmin, "name: '2b'\nkind: batch\nwork: 1h\n");
  EXPECT_EQ(Get("2b")["name"], "2b");
}

// JSON writes characters beyond the BMP as surrogate pairs; they are one character each.
TEST_F(DaemonTest, JsonSurrogatePairsAreAcceptedAndLoneSurrogatesRefused) {
  Open();
  json r = Submit(kAdmin, R"({"name": "smile-\ud83d\ude00", "kind": "batch", "work": "1h",
                             "command": ["/bin/echo", "\uD83D\uDE00"]})");
  ASSERT_EQ(r["accepted"].size(), 1u);
  EXPECT_EQ(r["accepted"][0]["name"], "smile-\xF0\x9F\x98\x80");
  EXPECT_EQ(Get("smile-\xF0\x9F\x98\x80")["state"].is_string(), true);
  for (const char* body : {R"({"name": "lone-\ud83d", "kind": "batch", "work": "1h"})",
                           R"({"name": "low-\ude00x", "kind": "batch", "work": "1h"})"}) {
    auto bad = daemon_->Submit(kAdmin, body, "request");
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << body;
    EXPECT_THAT(bad.status().message(), HasSubstr("surrogate")) << body;
  }
}

// A store written by an older version may hold workloads whose names are not UTF-8; they
// still list, the GPUs one holds still show, and the rest of the API keeps working. One row's
// stored body reads back (it runs and holds a GPU), the other's does not any more (the YAML
// reader now refuses invalid UTF-8): that one is failed at start, and listed all the same.
TEST_F(DaemonTest, AStoredNameThatIsNotUtf8StillListsOverHttp) {
  Open();
  daemon_->Stop();
  daemon_.reset();
  {
    auto store = Store::Open(dir_ + "/data");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const std::vector<std::pair<std::string, std::string>> rows = {
        {"old\xff", "name: old\nkind: batch\ngpus: 1\ncommand: [/bin/sleep, '30']\n"},
        {"older\xfe", "name: \"older\xfe\"\nkind: batch\ngpus: 1\ncommand: [/bin/true]\n"}};
    for (const auto& [name, body] : rows) {
      auto sid = (*store)->AddSubmission({0, "team-a", body, "request", 1000});
      ASSERT_TRUE(sid.ok()) << sid.status().ToString();
      WorkloadRow row;
      row.submission_id = *sid;
      row.name = name;
      row.tenant = "team-a";
      row.kind = "batch";
      row.submitted_at = 1000;
      ASSERT_TRUE((*store)->AddWorkload(row).ok());
    }
  }
  Open();
  std::string state;
  for (int i = 0; i < 400 && state != "running"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto w = daemon_->Get(kAdmin, "old\xff");
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    state = (*w)["state"];
  }
  ASSERT_EQ(state, "running");
  auto tokens =
      Tokens::Parse("admin " + std::string(64, 'a') + "\nteam-a team-a-token-0123456789\n", "test");
  ASSERT_TRUE(tokens.ok());
  HttpApi api(*daemon_, *tokens);
  ASSERT_TRUE(api.Listen("127.0.0.1", 0).ok());
  ASSERT_TRUE(api.Start().ok());
  for (const std::string& token : {std::string(64, 'a'), std::string("team-a-token-0123456789")}) {
    httplib::Client c("127.0.0.1", api.port());
    c.set_bearer_token_auth(token);
    for (const char* path : {"/v1/workloads", "/v1/gpus", "/metrics"}) {
      auto r = c.Get(path);
      ASSERT_TRUE(r) << path;
      EXPECT_EQ(r->status, 200) << path << ": " << r->body;
      if (std::string(path) != "/metrics") {
        EXPECT_THAT(r->body, HasSubstr("old\xEF\xBF\xBD")) << path;
      }
      if (std::string(path) == "/v1/workloads") {
        EXPECT_THAT(r->body, HasSubstr("older\xEF\xBF\xBD")) << path;
      }
    }
  }
  api.Stop();
}

// Issue 19: the one-byte body "," made the YAML parser build empty documents forever (memory
// grew without bound). It is a 400-class error naming the request, and nothing is committed.
TEST_F(DaemonTest, ALoneCommaBodyIsASyntaxErrorNotAnEndlessParse) {
  Open();
  for (const std::string body : {",", ",\n", "[1, 2]\n---\n,"}) {
    auto r = daemon_->Submit(kTeamA, body, "request");
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << body;
    EXPECT_THAT(r.status().message(), HasSubstr("request:")) << body;
    EXPECT_THAT(r.status().message(), HasSubstr("YAML syntax error")) << body;
  }
  auto all = daemon_->List(kAdmin, {});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE((*all)["workloads"].empty());
}

// A JSON body with a syntax error is told where, as a JSON parser says it, besides what the
// YAML parser (which reads every body) saw.
TEST_F(DaemonTest, ABrokenJsonBodyGetsTheJsonParsersAccount) {
  Open();
  const std::string body =
      "{\"workloads\": [{\"name\": \"a\" \"kind\": \"batch\", \"work\": \"1h\"}]}";
  auto r = daemon_->Submit(kTeamA, body, "request");
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("request: not valid JSON: "));
  EXPECT_THAT(r.status().message(), HasSubstr("line 1, column 34"));
  EXPECT_THAT(r.status().message(), HasSubstr("(read as YAML: request:1: YAML syntax error"));
  // YAML flow style that is not JSON is YAML's alone: its errors are not JSON's.
  auto flow = daemon_->Submit(kTeamA, "{workloads: [{name: a, kind: batch}]}", "request");
  EXPECT_EQ(flow.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(flow.status().message(), Not(HasSubstr("JSON")));
  EXPECT_THAT(flow.status().message(), HasSubstr("'work'"));
}

TEST_F(DaemonTest, ARestartAdoptsRunningProcessesAndStartsNothingTwice) {
  Open();
  Submit(kAdmin,
         "- {name: long, kind: training, gpus: 2, command: [/bin/sleep, '60']}\n"
         "- {name: wait, kind: training, gpus: 4, command: [/bin/true]}\n");
  json before = WaitFor("long", "running");
  ASSERT_EQ(before["runs"].size(), 1u);
  const int64_t pid = before["runs"][0]["pid"];
  leftovers_.push_back(static_cast<pid_t>(pid));
  daemon_->Stop();  // the loop ends; the process lives on in its own session
  daemon_.reset();
  ASSERT_EQ(kill(static_cast<pid_t>(pid), 0), 0);
  const std::string address = dir_ + "/data/" + kAddressFileName;
  std::ofstream(address) << "127.0.0.1:1\n";  // what a daemon killed outright leaves

  Open();
  EXPECT_THAT(daemon_->startup_note(), HasSubstr("1 adopted"));
  EXPECT_FALSE(std::filesystem::exists(address)) << "the earlier daemon's address is stale";
  std::ofstream(address) << "127.0.0.1:2\n";  // this daemon's, as `airtime server` writes it
  DaemonOptions second;
  second.data_dir = dir_ + "/data";
  second.fake_gpus = "4xH100";
  auto other = Daemon::Open(second);  // one daemon per data directory
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().message(), HasSubstr("another airtime server uses"));
  EXPECT_TRUE(std::filesystem::exists(address)) << "a refused daemon leaves the holder's address";
  json after = Get("long");
  EXPECT_EQ(after["state"], "running");
  ASSERT_EQ(after["runs"].size(), 1u) << after.dump(2);  // not started again
  EXPECT_EQ(after["runs"][0]["pid"], pid);
  EXPECT_EQ(after["gpus"], before["gpus"]);
  EXPECT_EQ(Get("wait")["state"], "queued");  // its 4 GPUs are not free: long holds 2
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "long").ok());
  WaitFor("long", "cancelled");
  WaitFor("wait", "succeeded");
}

// The daemon holds its live workloads and the `ended_kept` that ended last; older ended
// ones are let go and read back from the store, answering as before: found by id and by
// name (by their tenant only), described with their runs, events and logs, listed and paged
// with state filters, counted in /metrics, and their names stay taken. A restart reads no
// more of them back.
TEST_F(DaemonTest, EndedWorkloadsBeyondTheRetentionAreReadBackFromTheStore) {
  DaemonOptions o = Options();
  o.ended_kept = 3;
  OpenWith(o);
  std::string body;
  for (int i = 0; i < 10; ++i)
    body += "- {name: j" + std::to_string(i) + ", kind: batch, command: [/bin/sh, -c, 'echo out" +
            std::to_string(i) + "']}\n";
  json accepted = Submit(kTeamA, body)["accepted"];
  ASSERT_EQ(accepted.size(), 10u);
  for (int i = 0; i < 10; ++i) WaitFor("j" + std::to_string(i), "succeeded");
  const int64_t first_id = accepted[0]["id"];

  auto check = [&](const std::string& when) {
    SCOPED_TRACE(when);
    EXPECT_LE(daemon_->held_workloads(), 3u);
    // j0 ended long ago: by id and by name, for its tenant and the admin, not for another.
    json w = Get(std::to_string(first_id));
    EXPECT_EQ(w["name"], "j0");
    EXPECT_EQ(w["state"], "succeeded");
    EXPECT_EQ(w["exit_code"], 0);
    EXPECT_EQ(w["tenant"], "team-a");
    ASSERT_EQ(w["runs"].size(), 1u);
    EXPECT_EQ(w["explanation"], "completed");
    EXPECT_TRUE(daemon_->Get(kTeamA, "j0").ok());
    EXPECT_EQ(daemon_->Get(kTeamB, "j0").status().code(), StatusCode::kNotFound);
    EXPECT_EQ(daemon_->Get(kTeamB, std::to_string(first_id)).status().code(),
              StatusCode::kNotFound);
    auto events = daemon_->Events(kTeamA, "j0");
    ASSERT_TRUE(events.ok()) << events.status().ToString();
    std::vector<std::string> kinds;
    for (const json& e : (*events)["events"]) kinds.push_back(e["kind"]);
    EXPECT_THAT(kinds, testing::ElementsAre("submitted", "started", "exited", "succeeded"));
    auto log = daemon_->Logs(kTeamA, "j0", {});
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    EXPECT_EQ(log->data, "out0\n");
    EXPECT_TRUE(log->run_ended);
    // Changes refuse as for any ended workload.
    EXPECT_EQ(daemon_->Cancel(kTeamA, "j0").code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(daemon_->SetPriority(kTeamA, "j0", 5).code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(daemon_->Cancel(kTeamB, "j0").code(), StatusCode::kNotFound);
    // The name stays taken.
    EXPECT_EQ(daemon_->Submit(kTeamA, "name: j0\nkind: batch\nwork: 1h\n", "r").status().code(),
              StatusCode::kAlreadyExists);
    // Listing: every one counted, the page newest first after the offset, oldest first within.
    ListFilter f;
    f.limit = 4;
    f.offset = 2;
    auto list = daemon_->List(kTeamA, f);
    ASSERT_TRUE(list.ok());
    EXPECT_EQ((*list)["total"], 10);
    std::vector<std::string> names;
    for (const json& x : (*list)["workloads"]) names.push_back(x["name"]);
    EXPECT_THAT(names, testing::ElementsAre("j4", "j5", "j6", "j7"));
    f = {};
    f.state = "succeeded";
    EXPECT_EQ((*daemon_->List(kAdmin, f))["total"], 10);
    f.state = "active";
    EXPECT_EQ((*daemon_->List(kAdmin, f))["total"], 0);
    EXPECT_EQ((*daemon_->List(kTeamB, {}))["total"], 0);
    EXPECT_THAT(daemon_->Metrics(),
                HasSubstr("airtime_workloads{state=\"succeeded\",kind=\"batch\"} 10\n"));
  };
  check("while running");
  daemon_.reset();
  OpenWith(o);
  EXPECT_THAT(daemon_->startup_note(), HasSubstr("10 workload(s), 0 not ended (3 ended kept"));
  check("after a restart");
}

// A service with model variants is let go with all of its members once all have ended; its
// name still reaches them, and stays taken.
TEST_F(DaemonTest, AnEndedServiceWithVariantsIsReadBackWithItsMembers) {
  DaemonOptions o = Options();
  o.ended_kept = 1;
  OpenWith(o);
  Submit(kTeamA,
         "- name: chat\n  kind: realtime\n  slo: {latency_ms: 200, min_replicas: 1}\n"
         "  command: [/bin/sleep, '60']\n  variants:\n"
         "    - {name: big, gpus: 2, throughput: {H100: 10}}\n"
         "    - {name: small, gpus: 1, throughput: {H100: 10}, quality: 0.8}\n");
  WaitFor("chat", "running");
  ASSERT_TRUE(daemon_->Cancel(kTeamA, "chat").ok());
  WaitFor("chat", "cancelled");
  Submit(kTeamA,
         "- {name: a, kind: batch, command: [/bin/true]}\n"
         "- {name: b, kind: batch, command: [/bin/true]}\n");
  WaitFor("a", "succeeded");
  WaitFor("b", "succeeded");
  // The members' processes are gone once their runs have closed.
  for (int i = 0; i < 100 && daemon_->held_workloads() > 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(daemon_->held_workloads(), 1u);
  json service = Get("chat");
  EXPECT_EQ(service["state"], "cancelled");
  ASSERT_EQ(service["members"].size(), 2u) << service.dump(2);
  EXPECT_EQ(service["members"][0]["name"], "chat/big");
  EXPECT_EQ(service["members"][0]["service"], "chat");
  EXPECT_EQ(service["members"][1]["variant"], "small");
  EXPECT_EQ(daemon_->Get(kTeamB, "chat").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Get("chat/small")["state"], "cancelled");
  // A member still refuses as a member; the service as ended.
  EXPECT_THAT(daemon_->Cancel(kTeamA, "chat/big").message(), HasSubstr("cancel the service"));
  EXPECT_THAT(daemon_->Cancel(kTeamA, "chat").message(), HasSubstr("already been cancelled"));
  EXPECT_EQ(daemon_->Submit(kTeamA, "name: chat\nkind: batch\nwork: 1h\n", "r").status().code(),
            StatusCode::kAlreadyExists);
  // After a restart what the daemon kept when it let the service go is gone: the members
  // are read back from the accepted submission, parsed once (EndedServiceSpecs).
  daemon_->Stop();
  daemon_.reset();
  OpenWith(o);
  for (int twice = 0; twice < 2; ++twice) {
    json again = Get("chat");
    ASSERT_EQ(again["members"].size(), 2u) << again.dump(2);
    EXPECT_EQ(again["members"][0]["service"], "chat");
    EXPECT_EQ(again["members"][1]["variant"], "small");
    auto list = daemon_->List(kTeamA, {});
    ASSERT_TRUE(list.ok());
    bool member = false;
    for (const json& w : (*list)["workloads"]) member = member || w.value("variant", "") == "big";
    EXPECT_TRUE(member) << (*list).dump(2);
  }
}

TEST_F(DaemonTest, GpusLedgerAndMetricsDescribeTheHost) {
  Open("2xH100");
  Submit(kAdmin, "name: busy\nkind: batch\ncommand: [/bin/sleep, '30']\n");
  WaitFor("busy", "running");
  auto gpus = daemon_->Gpus(kAdmin);
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ((*gpus)["gpus"].size(), 2u);
  int held = 0;
  for (const json& g : (*gpus)["gpus"]) {
    held += !g["allocations"].empty();
    // The ledger's bucket of each GPU now: the held one in a held bucket (its utilization
    // decides which), the free one free with nothing waiting; a whole GPU's worth each.
    int64_t milli = 0;
    for (const auto& [b, m] : g["bucket_milli"].items()) milli += m.get<int64_t>();
    EXPECT_EQ(milli, 1000) << g.dump();
    if (g["allocations"].empty()) {
      EXPECT_EQ(g["bucket"], "free_no_demand") << g.dump();
    } else {
      EXPECT_THAT(g["bucket"].get<std::string>(), testing::AnyOf("useful", "idle_held"))
          << g.dump();
    }
  }
  EXPECT_EQ(held, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto ledger = daemon_->Ledger(kAdmin);
  ASSERT_TRUE(ledger.ok());
  double sum = 0;
  for (const auto& [k, v] : (*ledger)["buckets"].items()) sum += v.get<double>();
  EXPECT_NEAR(sum, (*ledger)["installed_gpu_seconds"].get<double>(), 1e-6);
  EXPECT_GT((*ledger)["buckets"]["free_no_demand"].get<double>(), 0);
  // Costs: the H100s at the catalogue's rate (fake GPUs report no power), every installed
  // second of them, the buckets adding up to the cost.
  const json& costs = (*ledger)["costs"];
  ASSERT_EQ(costs["types"].size(), 1u) << costs.dump(2);
  EXPECT_EQ(costs["types"][0]["type"], "H100");
  EXPECT_EQ(costs["types"][0]["basis"], "catalogue_power");
  const double rate = ComputeHourlyCost(DefaultGpuCost("H100")).total;
  EXPECT_NEAR(costs["types"][0]["per_hour"].get<double>(), rate, 1e-12);
  EXPECT_NEAR(costs["cost"].get<double>(),
              rate * (*ledger)["installed_gpu_seconds"].get<double>() / 3600, 1e-9);
  double cost_sum = 0;
  for (const auto& [k, v] : costs["buckets"].items()) cost_sum += v.get<double>();
  EXPECT_NEAR(cost_sum, costs["cost"].get<double>(), 1e-9);
  const std::string m = daemon_->Metrics();
  EXPECT_THAT(m, HasSubstr("airtime_gpu_cost_per_hour{gpu_type=\"H100\"} 0.79553"));
  EXPECT_THAT(m, HasSubstr("airtime_gpu_allocated_ratio{gpu=\"0\",UUID=\"GPU-"));
  EXPECT_THAT(m, HasSubstr("Hostname=\"testhost\""));
  EXPECT_THAT(m, HasSubstr("airtime_ledger_gpu_seconds_total{bucket=\"useful\"}"));
  EXPECT_THAT(m, HasSubstr("airtime_decision_cycle_seconds_bucket{le=\"+Inf\"}"));
  EXPECT_THAT(m, HasSubstr("airtime_workload_allocated_gpus{workload=\"busy\""));
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "busy").ok());
  WaitFor("busy", "cancelled");
}

// Each start's time from the engine's decision to the backend accepting it is measured
// (airtime_backend_action_seconds{action="start"}, the bench's overhead figure): one sample
// per start, within the time the test took.
TEST_F(DaemonTest, EachStartsDecisionToAcceptanceIsMeasured) {
  Open("2xH100");
  const auto t0 = std::chrono::steady_clock::now();
  Submit(kAdmin,
         "- {name: one, kind: batch, command: [/bin/sleep, '30']}\n"
         "- {name: two, kind: batch, command: [/bin/sleep, '30']}\n");
  WaitFor("one", "running");
  WaitFor("two", "running");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const LatencyLog log = daemon_->latencies();
  EXPECT_EQ(log.decision_to_accepted.count(), 2u);
  for (double s : log.decision_to_accepted.samples()) {
    EXPECT_GT(s, 0);
    EXPECT_LT(s, took);
  }
  const std::string m = daemon_->Metrics();
  EXPECT_THAT(m, HasSubstr("# TYPE airtime_backend_action_seconds histogram"));
  EXPECT_THAT(m, HasSubstr("airtime_backend_action_seconds_count{action=\"start\"} 2\n"));
  EXPECT_THAT(m, HasSubstr("airtime_backend_action_seconds_count{action=\"stop\"} 0\n"));
  EXPECT_THAT(m,
              HasSubstr("airtime_backend_action_seconds_bucket{action=\"start\",le=\"+Inf\"} 2\n"));
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "one").ok());
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "two").ok());
  WaitFor("one", "cancelled");
  WaitFor("two", "cancelled");
}

// The daemon counts value as the simulator does (ledger/metrics.h): a job its completion
// value when its process exits 0 (nothing for a failure), a service per 1,000 requests its
// ready replicas cover; the total is carried across a restart.
TEST_F(DaemonTest, ValueIsCountedAsTheSimulatorCountsItAndCarriedAcrossARestart) {
  Open("2xH100", "fifo");
  Submit(kAdmin,
         "- {name: done, kind: batch, command: [/bin/true], value: {on_completion: 5}}\n"
         "- {name: broken, kind: batch, command: [/bin/false], value: {on_completion: 100}}\n"
         "- name: web\n  kind: realtime\n"
         "  slo: {latency_ms: 200, capacity_rps: 10, min_replicas: 1, max_replicas: 1}\n"
         "  value: {per_1k_requests: 1000}\n"
         "  command: [/bin/sh, -c, 'sleep 60']\n");
  WaitFor("done", "succeeded");
  WaitFor("broken", "failed");
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "web", 5, "").ok());  // within one replica's 10 rps
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  auto ledger = daemon_->Ledger(kAdmin);
  ASSERT_TRUE(ledger.ok());
  const double value = (*ledger)["value"].get<double>();
  // 5 for the job; the service earns 5 requests/s x 1 per request while its replica is
  // ready (about 0.6 s here), never more than the time since the demand came allows.
  EXPECT_GT(value, 5.0) << ledger->dump(2);
  EXPECT_LT(value, 5.0 + 5 * 1.0 * 2.0) << ledger->dump(2);
  const std::string m = daemon_->Metrics();
  const auto in_slo = SumMetrics(m, {"airtime_service_requests_in_slo_total"});
  ASSERT_TRUE(in_slo);
  EXPECT_NEAR(value - 5.0, *in_slo * 1.0, 0.2);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "web").ok());
  daemon_->Stop();
  daemon_.reset();
  Open("2xH100", "fifo");
  auto after = daemon_->Ledger(kAdmin);
  ASSERT_TRUE(after.ok());
  EXPECT_GE((*after)["value"].get<double>(), value - 1e-9);
}

TEST_F(DaemonTest, TheLedgerIsCarriedAcrossARestart) {
  Open("2xH100");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto before = daemon_->Ledger(kAdmin);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ((*before)["unobserved_seconds"], 0.0);
  daemon_->Stop();  // saves the totals
  daemon_.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // no daemon counts this
  Open("2xH100");
  EXPECT_THAT(daemon_->startup_note(), HasSubstr("ledger: carried on over"));
  auto after = daemon_->Ledger(kAdmin);
  ASSERT_TRUE(after.ok());
  const json& a = *after;
  EXPECT_EQ(a["since"], (*before)["since"]);
  EXPECT_GT(a["daemon_started"].get<int64_t>(), a["since"].get<int64_t>());
  EXPECT_GE(a["installed_gpu_seconds"].get<double>(),
            (*before)["installed_gpu_seconds"].get<double>());
  EXPECT_GE(a["unobserved_seconds"].get<double>(), 0.25);
  double sum = 0;
  for (const auto& [k, v] : a["buckets"].items()) sum += v.get<double>();
  EXPECT_NEAR(sum, a["installed_gpu_seconds"].get<double>(), 1e-6);
  // The hours per GPU type were carried too: the cost covers every installed hour.
  ASSERT_EQ(a["costs"]["types"].size(), 1u) << a["costs"].dump(2);
  EXPECT_NEAR(a["costs"]["types"][0]["installed_gpu_hours"].get<double>() * 3600,
              a["installed_gpu_seconds"].get<double>(), 1e-6);
  // Every moment of the window is either counted (on 2 GPUs) or not observed.
  const double window_s =
      static_cast<double>(a["now"].get<int64_t>() - a["since"].get<int64_t>()) / 1000;
  EXPECT_NEAR(window_s,
              a["installed_gpu_seconds"].get<double>() / 2 + a["unobserved_seconds"].get<double>(),
              1e-6);

  // A saved ledger that cannot be read is named at start, and counting starts anew.
  daemon_->Stop();
  daemon_.reset();
  {
    auto store = Store::Open(dir_ + "/data");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->SetMeta("ledger", "{\"since\": 1}").ok());
  }
  Open("2xH100");
  EXPECT_THAT(daemon_->startup_note(),
              HasSubstr("ledger: saved ledger: 'saved_at' is missing; counting anew from now"));
  auto fresh = daemon_->Ledger(kAdmin);
  ASSERT_TRUE(fresh.ok());
  EXPECT_GT((*fresh)["since"].get<int64_t>(), a["since"].get<int64_t>());
  EXPECT_EQ((*fresh)["unobserved_seconds"], 0.0);
}

TEST_F(DaemonTest, ServiceReplicasFollowReportedDemandEachOnItsOwnPort) {
  Open("4xH100", "fifo");
  Submit(kAdmin,
         "name: chat\nkind: realtime\nslo: {latency_ms: 200, capacity_rps: 10, max_replicas: 4}\n"
         "command: [/bin/sh, -c, 'echo port=$PORT; sleep 60']\n");
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 35, "").ok());
  json w;
  for (int i = 0; i < 200; ++i) {
    w = Get("chat");
    if (w["replicas"]["running"] == 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(w["replicas"]["running"], 4) << w.dump(2);
  EXPECT_EQ(w["demand_rps"], 35.0);
  std::set<int64_t> ports;
  for (const json& r : w["runs"]) ports.insert(r["port"].get<int64_t>());
  EXPECT_EQ(ports.size(), 4u);
  EXPECT_EQ(ports.count(0), 0u);
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 5, "").ok());
  for (int i = 0; i < 200; ++i) {
    w = Get("chat");
    if (w["replicas"]["running"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(w["replicas"]["running"], 1) << w.dump(2);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  WaitFor("chat", "cancelled");
}

// A service's demand history is stored: after a restart its forecast and its scale-down
// window go on from it. At 35 rps then 5 the hour's window keeps four replicas; a restart
// that forgot the 35 would hand three back at once.
TEST_F(DaemonTest, ARestartKeepsAServicesDemandHistory) {
  Open("4xH100", "airtime:spare=0");
  Submit(kAdmin,
         "name: chat\nkind: realtime\nslo: {latency_ms: 200, capacity_rps: 10, max_replicas: 4}\n"
         "command: [/bin/sh, -c, 'sleep 60']\n");
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 35, "").ok());
  auto running = [&](int n) {
    json w;
    for (int i = 0; i < 200; ++i) {
      w = Get("chat");
      if (w["replicas"]["running"] == n) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return w;
  };
  ASSERT_EQ(running(4)["replicas"]["running"], 4);
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 5, "").ok());
  daemon_.reset();
  Open("4xH100", "airtime:spare=0");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // cycles after the restart
  json w = running(4);
  EXPECT_EQ(w["replicas"]["running"], 4) << w.dump(2);
  EXPECT_THAT(w.dump(), HasSubstr("35.0 req/s of the last 1h00m")) << w.dump(2);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  WaitFor("chat", "cancelled");
}

// A tenant reporting in a loop grows neither the stored history nor the policy's window by
// a row per report (DemandRecorder, DemandWindow): 2,000 reports alternating 12 and 38 req/s,
// then 8, leave at most two steps per 10 s. After a restart the window still holds the
// burst's peak, and the rate in force is the last one reported.
TEST_F(DaemonTest, AFloodOfDemandReportsStoresStepsNotReports) {
  Open("4xH100", "airtime:spare=0");
  Submit(kAdmin,
         "name: chat\nkind: realtime\nslo: {latency_ms: 200, capacity_rps: 10, max_replicas: 4}\n"
         "command: [/bin/sh, -c, 'sleep 60']\n");
  const int64_t id = Get("chat")["id"].get<int64_t>();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 2000; ++i)
    ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", i % 2 ? 38 : 12, "").ok());
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 8, "").ok());
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  daemon_.reset();
  {
    auto store = Store::OpenReadOnly(dir_ + "/data");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto rows = (*store)->DemandOf(id, 0);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_LE(rows->size(), 2 * static_cast<size_t>(took_s / 10 + 1)) << took_s << " s";
    double peak = 0;
    for (const auto& [at, rps] : *rows) peak = std::max(peak, rps);
    EXPECT_EQ(peak, 38);
  }
  Open("4xH100", "airtime:spare=0");
  json w;
  for (int i = 0; i < 200; ++i) {
    w = Get("chat");
    if (w["replicas"]["running"] == 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(w["demand_rps"], 8.0) << w.dump(2);
  EXPECT_EQ(w["replicas"]["running"], 4) << w.dump(2);
  EXPECT_THAT(w.dump(), HasSubstr("38.0 req/s of the last 1h00m")) << w.dump(2);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  WaitFor("chat", "cancelled");
}

// A service with model variants runs as its members, "chat/big" and "chat/small", each
// running its variant's command (or the service's) with the service's env under the
// variant's. The service's own name reaches them all: its view sums them up, its events are
// theirs, a cancel stops them all, a restart brings them back; what only a member has (logs)
// or only the service decides (a member's cancel or demand) is refused with the members named.
TEST_F(DaemonTest, AServiceWithVariantsRunsAsItsMembersReachedByItsName) {
  Open("4xH100", "fifo");  // fifo knows nothing of variants: the best one serves
  const std::string chat =
      "- name: chat\n"
      "  kind: realtime\n"
      "  slo: {latency_ms: 200, min_replicas: 1}\n"
      "  command: [/bin/sh, -c, 'echo service $V; sleep 60']\n"
      "  env: {V: from-service, W: w}\n"
      "  variants:\n"
      "    - name: big\n"
      "      gpus: 2\n"
      "      throughput: {H100: 10}\n"
      "      command: [/bin/sh, -c, 'echo big $V $W; sleep 60']\n"
      "    - {name: small, gpus: 1, throughput: {H100: 10}, quality: 0.8, env: {V: small}}\n";
  json r = Submit(kTeamA, chat);
  ASSERT_EQ(r["accepted"].size(), 2u) << r.dump();
  EXPECT_EQ(r["accepted"][0]["name"], "chat/big");
  EXPECT_EQ(r["accepted"][1]["name"], "chat/small");
  json big = WaitFor("chat/big", "running");
  EXPECT_EQ(big["service"], "chat");
  EXPECT_EQ(big["variant"], "big");
  ASSERT_EQ(big["runs"].size(), 1u);
  const int64_t pid = big["runs"][0]["pid"];
  leftovers_.push_back(static_cast<pid_t>(pid));
  EXPECT_NE(big["runs"][0]["port"], 0);  // a replica with a command serves on a port
  const std::string out = big["runs"][0]["log_dir"].get<std::string>() + "/stdout.log";
  std::string line;
  for (int i = 0; i < 200 && line.empty(); ++i) {
    std::ifstream f(out);
    std::getline(f, line);
    if (line.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(line, "big from-service w");

  json service = WaitFor("chat", "running");
  EXPECT_TRUE(service["id"].is_null());
  EXPECT_EQ(service["tenant"], "team-a");
  ASSERT_EQ(service["members"].size(), 2u) << service.dump(2);
  EXPECT_EQ(service["members"][0]["name"], "chat/big");
  EXPECT_EQ(service["members"][1]["name"], "chat/small");
  EXPECT_EQ(service["members"][1]["state"], "queued");
  EXPECT_EQ(service["replicas"]["running"], 1);
  EXPECT_EQ(service["gpus"].size(), 2u);
  ASSERT_EQ(service["runs"].size(), 1u);
  EXPECT_EQ(service["runs"][0]["workload"], "chat/big");
  EXPECT_THAT(service["reason"].get<std::string>(), HasSubstr("chat/big 1/1"));
  EXPECT_THAT(service["explanation"].get<std::string>(), HasSubstr("chat/small: "));
  // Another tenant sees neither the service nor its members.
  EXPECT_EQ(daemon_->Get(kTeamB, "chat").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(daemon_->Get(kTeamB, "chat/big").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(daemon_->Cancel(kTeamB, "chat").code(), StatusCode::kNotFound);

  auto events = daemon_->Events(kTeamA, "chat");
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_THAT(events->dump(), HasSubstr("chat/big: replica 1, placed"));
  EXPECT_THAT(events->dump(), HasSubstr("chat/small: submitted"));
  auto logs = daemon_->Logs(kTeamA, "chat", LogQuery{});
  ASSERT_FALSE(logs.ok());
  EXPECT_EQ(logs.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(logs.status().message(), HasSubstr("chat/big, chat/small"));
  EXPECT_TRUE(daemon_->Logs(kTeamA, "chat/big", LogQuery{}).ok());
  const Status member_cancel = daemon_->Cancel(kTeamA, "chat/big");
  EXPECT_EQ(member_cancel.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(member_cancel.message(), HasSubstr("cancel the service"));
  EXPECT_EQ(daemon_->ReportDemand(kTeamA, "chat/small", 3, "").code(),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE(daemon_->ReportDemand(kTeamA, "chat", 3, "").ok());
  EXPECT_EQ(Get("chat/small")["demand_rps"], 3.0);
  ASSERT_TRUE(daemon_->SetPriority(kTeamA, "chat", 7).ok());
  EXPECT_EQ(Get("chat/small")["priority"], 7);

  // The service's name and its members' are taken, by a plain workload or another service.
  for (const std::string& again : {std::string("name: chat\nkind: batch\nwork: 1m\n"),
                                   std::string("name: chat/big\nkind: batch\nwork: 1m\n"), chat}) {
    auto taken = daemon_->Submit(kTeamA, again, "request");
    ASSERT_FALSE(taken.ok()) << again;
    EXPECT_EQ(taken.status().code(), StatusCode::kAlreadyExists);
  }

  // A restart reads the stored text back, expanded the same way: the members return under
  // their names, the running replica adopted, not started again.
  daemon_->Stop();
  daemon_.reset();
  Open("4xH100", "fifo");
  EXPECT_THAT(daemon_->startup_note(), HasSubstr("1 adopted"));
  service = Get("chat");
  EXPECT_EQ(service["state"], "running") << service.dump(2);
  ASSERT_EQ(service["members"].size(), 2u);
  EXPECT_EQ(service["members"][0]["priority"], 7);
  big = Get("chat/big");
  ASSERT_EQ(big["runs"].size(), 1u) << big.dump(2);
  EXPECT_EQ(big["runs"][0]["pid"], pid);

  // Cancelling the service cancels every member and stops its replicas.
  ASSERT_TRUE(daemon_->Cancel(kTeamA, "chat").ok());
  service = WaitFor("chat", "cancelled");
  for (const json& m : service["members"]) EXPECT_EQ(m["state"], "cancelled");
  for (int i = 0; i < 200 && kill(static_cast<pid_t>(pid), 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_NE(kill(static_cast<pid_t>(pid), 0), 0) << "the replica outlived its service";
  EXPECT_EQ(daemon_->Cancel(kTeamA, "chat").code(), StatusCode::kFailedPrecondition);
}

// Demand per class: a service with variants whose demand is split by class takes each
// class's rate by name; an unknown class, no class where there are several, or a class for
// a service without classes is refused, naming it. Each member sees the class's rate and
// runs for the classes it serves by default: the specialist for `code` scales up by it.
TEST_F(DaemonTest, DemandIsReportedPerRequestClass) {
  Open("4xH100", "fifo");
  Submit(kAdmin,
         "- name: chat\n"
         "  kind: realtime\n"
         "  slo: {latency_ms: 200}\n"
         "  classes: [{name: code, demand: [{at: 0, rps: 0}]}, {name: conv, demand: [{at: 0, rps: "
         "0}]}]\n"
         "  variants:\n"
         "    - {name: big, gpus: 2, throughput: {H100: 10}, classes: [conv]}\n"
         "    - {name: coder, gpus: 1, throughput: {H100: 10}, classes: [code]}\n"
         "- {name: web, kind: realtime, slo: {latency_ms: 200, capacity_rps: 10}}\n");
  Status st = daemon_->ReportDemand(kAdmin, "chat", 5, "");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("splits its demand by request class (code, conv)"));
  st = daemon_->ReportDemand(kAdmin, "chat", 5, "chitchat");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("no request class 'chitchat' (its classes: code, conv)"));
  st = daemon_->ReportDemand(kAdmin, "web", 5, "code");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("does not split its demand by request class"));
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "web", 5, "").ok());  // as before
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 15, "code").ok());
  json coder;
  for (int i = 0; i < 200; ++i) {
    coder = Get("chat/coder");
    if (coder.contains("replicas") && coder["replicas"]["running"] == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(coder["replicas"]["running"], 2) << coder.dump(2);  // 15 rps at 10 per replica
  EXPECT_EQ(Get("chat/big")["replicas"]["target"], 0);          // conv has no demand
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  WaitFor("chat", "cancelled");
}

// The rates of a service split by request class are kept: after a restart every member
// hears each class's last rate again (not its file's curve), and its own demand with it.
TEST_F(DaemonTest, ARestartKeepsEachRequestClasssLastRate) {
  Open("4xH100", "fifo");
  Submit(kAdmin,
         "- name: chat\n"
         "  kind: realtime\n"
         "  slo: {latency_ms: 200}\n"
         "  classes: [{name: code, demand: [{at: 0, rps: 1}]}, {name: conv, demand: [{at: 0, rps: "
         "2}]}]\n"
         "  variants:\n"
         "    - {name: big, gpus: 2, throughput: {H100: 10}, classes: [conv]}\n"
         "    - {name: coder, gpus: 1, throughput: {H100: 10}, classes: [code]}\n");
  EXPECT_EQ(Get("chat")["class_rps"], (json{{"code", 1.0}, {"conv", 2.0}}));
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 15, "code").ok());
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 4, "conv").ok());
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 12, "code").ok());
  const json want = {{"code", 12.0}, {"conv", 4.0}};
  EXPECT_EQ(Get("chat")["class_rps"], want);
  EXPECT_EQ(Get("chat/coder")["demand_rps"], 12.0);  // its own: the class it serves
  daemon_->Stop();
  daemon_.reset();
  Open("4xH100", "fifo");
  json chat = Get("chat");
  EXPECT_EQ(chat["class_rps"], want) << chat.dump(2);
  EXPECT_EQ(Get("chat/big")["class_rps"], want);
  EXPECT_EQ(Get("chat/coder")["demand_rps"], 12.0);
  EXPECT_EQ(Get("chat/big")["demand_rps"], 4.0);
  json coder;
  for (int i = 0; i < 200; ++i) {
    coder = Get("chat/coder");
    if (coder.contains("replicas") && coder["replicas"]["target"] == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(coder["replicas"]["target"], 2) << coder.dump(2);  // 12 rps at 10 per replica
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  WaitFor("chat", "cancelled");
}

// A service with variants keeps the history of its demand too, each class's where it has
// several: after a restart its scale-down window goes on from it. The coder serves the code
// class at 10 rps a replica: at 35 then 5 the hour's window keeps four; a restart that forgot
// the 35 would hand three back at once. "solo", one class, keeps three for its 25 the same
// way. (No spares: slo_target=0.)
TEST_F(DaemonTest, ARestartKeepsTheDemandHistoryOfEachRequestClass) {
  Open("8xH100", "airtime:spare=0:slo_target=0");
  Submit(kAdmin,
         "- name: chat\n"
         "  kind: realtime\n"
         "  slo: {latency_ms: 200}\n"
         "  classes: [{name: code}, {name: conv}]\n"
         "  variants:\n"
         "    - {name: big, gpus: 2, throughput: {H100: 10}, classes: [conv]}\n"
         "    - {name: coder, gpus: 1, throughput: {H100: 10}, classes: [code]}\n"
         "  command: [/bin/sh, -c, 'sleep 60']\n"
         "- name: solo\n"
         "  kind: realtime\n"
         "  slo: {latency_ms: 200}\n"
         "  variants: [{name: one, gpus: 1, throughput: {H100: 10}}]\n"
         "  command: [/bin/sh, -c, 'sleep 60']\n");
  auto target = [&](const std::string& name) -> int {
    json w = Get(name);
    return w.contains("replicas") ? w["replicas"]["target"].get<int>() : -1;
  };
  auto reaches = [&](const std::string& name, int n) {
    for (int i = 0; i < 200 && target(name) != n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return target(name);
  };
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 35, "code").ok());
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "solo", 25, "").ok());
  ASSERT_EQ(reaches("chat/coder", 4), 4);
  ASSERT_EQ(reaches("solo/one", 3), 3);
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 5, "code").ok());
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "solo", 5, "").ok());
  daemon_->Stop();
  daemon_.reset();
  Open("8xH100", "airtime:spare=0:slo_target=0");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // cycles after the restart
  EXPECT_EQ(Get("chat/coder")["demand_rps"], 5.0);
  EXPECT_EQ(target("chat/coder"), 4) << Get("chat/coder").dump(2);
  EXPECT_EQ(target("solo/one"), 3) << Get("solo/one").dump(2);
  for (const char* name : {"chat", "solo"}) {
    ASSERT_TRUE(daemon_->Cancel(kAdmin, name).ok());
    WaitFor(name, "cancelled");
  }
}

// A variant declared `awaits_producer` runs nothing until a quantize job of a later
// submission produces it. The job's `produces` is checked against the daemon's services: an
// unknown service (or another tenant's), one without variants, a job, an unknown variant, one
// that runs from the start, one another live job is producing, or one produced already is a
// 400 naming the field and the value. A cancelled producer may be replaced; the producer is
// linked again after a restart, and the variant stays produced across one.
TEST_F(DaemonTest, ALaterSubmissionsJobProducesAnAwaitedVariant) {
  Open("4xH100");
  Submit(kTeamA,
         "- name: chat\n"
         "  kind: realtime\n"
         "  slo: {latency_ms: 200, min_replicas: 1, cold_start: 1s}\n"
         "  quality_floor: 0.9\n"
         "  value: {per_1k_requests: 1}\n"
         "  command: [/bin/sh, -c, 'sleep 60']\n"
         "  variants:\n"
         "    - {name: big, gpus: 2, throughput: {H100: 10}}\n"
         "    - {name: int8, gpus: 1, throughput: {H100: 10}, quality: 0.95, awaits_producer: "
         "true}\n"
         "- {name: web, kind: realtime, slo: {latency_ms: 200, capacity_rps: 10}}\n");
  ASSERT_TRUE(daemon_->ReportDemand(kTeamA, "chat", 8, "").ok());
  WaitFor("chat/big", "running");
  EXPECT_THAT(Get("chat/int8")["reason"].get<std::string>(), HasSubstr("none names it yet"));
  auto producer = [](const std::string& name, const std::string& service,
                     const std::string& variant, const std::string& command) {
    return "{name: " + name + ", kind: quantize, gpus: 1, command: " + command +
           ", produces: {service: " + service + ", variant: " + variant + "}}\n";
  };
  auto refused = [&](const Caller& c, const std::string& body, const std::string& field,
                     const std::string& what) {
    auto r = daemon_->Submit(c, body, "request");
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
    EXPECT_THAT(r.status().message(), HasSubstr("field 'produces." + field + "'")) << body;
    EXPECT_THAT(r.status().message(), HasSubstr(what)) << body;
  };
  const std::string sleep = "[/bin/sleep, '60']";
  refused(kTeamA, producer("q0", "nope", "int8", sleep), "service", "found 'nope'");
  refused(kTeamB, producer("q0", "chat", "int8", sleep), "service", "found 'chat'");
  refused(kTeamA, producer("q0", "web", "int8", sleep), "service",
          "found 'web', a realtime service without variants");
  refused(kTeamA, producer("q0", "chat", "int4", sleep), "variant",
          "expected one of the variants of 'chat' (big, int8), found 'int4'");
  refused(kTeamA, producer("q0", "chat", "big", sleep), "variant",
          "variant 'chat/big' is not one a job produces");

  Submit(kTeamA, producer("q1", "chat", "int8", sleep));
  EXPECT_THAT(Get("chat/int8")["reason"].get<std::string>(), HasSubstr("job 'q1'"));
  refused(kTeamA, producer("q2", "chat", "int8", sleep), "variant",
          "variant 'chat/int8' is already claimed by job 'q1'");
  refused(kTeamA, producer("q2", "q1", "int8", sleep), "service", "found 'q1', a quantize job");
  ASSERT_TRUE(daemon_->Cancel(kTeamA, "q1").ok());
  WaitFor("q1", "cancelled");
  refused(
      kTeamA,
      "- " + producer("q2", "chat", "int8", sleep) + "- " + producer("q3", "chat", "int8", sleep),
      "variant", "already claimed by job 'q2' of this submission");
  // A cancelled producer left the variant waiting: another job may make it. The daemon
  // restarts while that job runs; the next one links it again.
  Submit(kTeamA, producer("q2", "chat", "int8", "[/bin/sleep, '2']"));
  json q2 = WaitFor("q2", "running");
  for (int i = 0; i < 200 && q2["runs"].empty(); ++i) {  // its run is recorded as it launches
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    q2 = Get("q2");
  }
  ASSERT_FALSE(q2["runs"].empty()) << q2.dump(2);
  leftovers_.push_back(q2["runs"][0]["pid"].get<pid_t>());
  const json chat = Get("chat");  // held: a range over a temporary's member would dangle
  for (const json& m : chat["runs"]) leftovers_.push_back(m["pid"].get<pid_t>());
  daemon_->Stop();
  daemon_.reset();
  Open("4xH100");
  EXPECT_THAT(Get("chat/int8")["reason"].get<std::string>(), HasSubstr("job 'q2'"));
  // Work that waits for GPUs makes the cheaper variant worth switching to once it exists.
  Submit(kTeamA,
         "{name: backlog, kind: batch, gpus: 3, command: [/bin/sleep, '60'], value: "
         "{on_completion: 5000}}\n");
  WaitFor("q2", "succeeded");
  json int8;
  for (int i = 0; i < 400; ++i) {
    int8 = Get("chat/int8");
    if (int8.contains("replicas") && int8["replicas"]["running"] >= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(int8["replicas"]["running"], 1) << int8.dump(2);
  for (const json& r : int8["runs"]) leftovers_.push_back(r["pid"].get<pid_t>());
  refused(kTeamA, producer("q3", "chat", "int8", sleep), "variant",
          "variant 'chat/int8' has been produced already, by job 'q2'");
  // Produced before a restart, it stays so after it.
  daemon_->Stop();
  daemon_.reset();
  Open("4xH100");
  EXPECT_THAT(Get("chat/int8")["reason"].get<std::string>(), Not(HasSubstr("runs only once")));
  refused(kTeamA, producer("q3", "chat", "int8", sleep), "variant",
          "variant 'chat/int8' has been produced already, by job 'q2'");
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "backlog").ok());
  WaitFor("chat", "cancelled");
  WaitFor("backlog", "cancelled");
}

// A variant's command, env and name are checked as the service's, before anything is
// committed: an error names the line or the variant's field.
TEST_F(DaemonTest, AVariantsCommandFollowsTheSubmissionTextRules) {
  Open();
  const std::string head =
      "name: chat\nkind: realtime\nslo: {latency_ms: 200}\nvariants:\n"
      "  - {name: big, gpus: 1, throughput: {H100: 1}, ";
  struct Case {
    std::string tail, message;
  };
  const std::vector<Case> cases = {
      {"command: [serve, \"a\\0b\"]}\n", "request:5: a value holds a NUL byte"},
      {"command: [serve, \"ok\xc3\"]}\n", "UTF-8"},
      {"command: [serve], env: {A: \"v\\0w\"}}\n", "request:5: a value holds a NUL byte"},
      {"command: serve}\n", "field 'variants[0].command': expected a list"},
      {"command: [serve], env: {A: [x]}}\n", "field 'variants[0].env.A'"},
  };
  for (const Case& c : cases) {
    auto r = daemon_->Submit(kAdmin, head + c.tail, "request");
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.tail;
    EXPECT_THAT(r.status().message(), HasSubstr(c.message)) << c.tail;
  }
  // A member's name is "<service>/<variant>": a variant's name follows the name rules.
  auto r = daemon_->Submit(kAdmin,
                           "name: chat\nkind: realtime\nslo: {latency_ms: 200}\nvariants:\n"
                           "  - {name: \"b\\tig\", gpus: 1, throughput: {H100: 1}}\n",
                           "request");
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("field 'variants[0].name': the member's name 'chat/b\tig' contains a "
                        "control character"));
  auto list = daemon_->List(kAdmin, {});
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE((*list)["workloads"].empty());
}

TEST_F(DaemonTest, AReplicaServesFromTheEndOfItsColdStartWithoutAnotherEvent) {
  // One replica is ready when demand jumps to 30 rps; the two more it needs take a 1 s cold
  // start. Nothing else happens for 3 s: the daemon still cycles when they become ready (as
  // the simulator does), so the books (and the policy's, the airtime error budget) count
  // 20 rps missed for one second, not for none (the next event's replicas) or for all three
  // (the last event's).
  Open("4xH100", "fifo");
  Submit(kAdmin,
         "name: chat\nkind: realtime\n"
         "slo: {latency_ms: 200, capacity_rps: 10, min_replicas: 1, max_replicas: 4, "
         "cold_start: 1s}\n"
         "command: [/bin/sh, -c, 'sleep 60']\n");
  WaitFor("chat", "running");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the first one is ready
  auto missed = [&] {
    const std::string m = daemon_->Metrics();
    const auto requests = SumMetrics(m, {"airtime_service_requests_total"});
    const auto in_slo = SumMetrics(m, {"airtime_service_requests_in_slo_total"});
    return requests && in_slo ? *requests - *in_slo : -1.0;
  };
  EXPECT_NEAR(missed(), 0, 1e-6);
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 30, "").ok());
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 30, "").ok());  // books up to now
  EXPECT_EQ(Get("chat")["replicas"]["running"], 3);
  EXPECT_NEAR(missed(), 20, 4);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  WaitFor("chat", "cancelled");
}

// The 3 a.m. report: at 15 rps a 10-rps service needs 2 replicas and airtime, with warm
// spares asked for (kHoldPolicy), keeps one (a hold of 1, priced by the spare count until its
// forecast has errors). A rise to 24
// rps meets that spare (3 replicas is the most it may have, so no new call): the hold is
// scored the 4 rps over the needed replicas for the rise's first cold start (1 s).
constexpr char kHoldService[] =
    "name: chat\nkind: realtime\n"
    "slo: {latency_ms: 200, capacity_rps: 10, max_replicas: 3, cold_start: 1s}\n"
    "value: {per_1k_requests: 2}\n"
    "command: [/bin/sh, -c, 'sleep 60']\n";
constexpr char kHoldPolicy[] = "airtime:spare=0.25";

TEST_F(DaemonTest, AServicesHoldIsRecordedScoredAndSeenOnlyByItsTenant) {
  Open("4xH100", kHoldPolicy);
  Submit(kTeamA, kHoldService);
  ASSERT_TRUE(daemon_->ReportDemand(kTeamA, "chat", 15, "").ok());
  json holds;
  for (int i = 0; i < 200; ++i) {
    auto h = daemon_->Holds(kTeamA, {});
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    holds = *h;
    if (!holds["decisions"].empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(holds["decisions"].size(), 1u) << holds.dump(2);
  json call = holds["decisions"][0];
  EXPECT_EQ(call["service"], "chat");
  EXPECT_EQ(call["choice"], "hold");
  EXPECT_EQ(call["replicas_needed"], 2);
  EXPECT_EQ(call["replicas_held"], 1);
  EXPECT_EQ(call["demand_rps"], 15.0);
  EXPECT_EQ(call["until_s"], nullptr);  // it stands
  EXPECT_EQ(call["burst_came"], false);
  EXPECT_FALSE(call["why"].get<std::string>().empty());
  // Wall-clock seconds.
  EXPECT_GT(call["t_s"].get<double>(), static_cast<double>(kWallClockFrom) / 1000);
  EXPECT_EQ(holds["services"]["chat"]["holds"], 1);
  EXPECT_EQ(holds["decisions_kept"], 1);

  ASSERT_TRUE(daemon_->ReportDemand(kTeamA, "chat", 24, "").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto after = daemon_->Holds(kTeamA, {});
  ASSERT_TRUE(after.ok());
  ASSERT_EQ((*after)["decisions"].size(), 1u) << after->dump(2);  // no new call
  call = (*after)["decisions"][0];
  EXPECT_EQ(call["burst_came"], true);
  EXPECT_NEAR(call["requests_protected"].get<double>(), 4.0, 1e-6);
  EXPECT_NEAR(call["value_protected"].get<double>(), 4.0 * 0.002, 1e-9);
  const json& chat = (*after)["services"]["chat"];
  EXPECT_EQ(chat["holds_burst_came"], 1);
  EXPECT_NEAR(chat["requests_protected"].get<double>(), 4.0, 1e-6);
  EXPECT_GT(chat["held_gpu_hours"].get<double>(), 0);

  // Another tenant sees nothing of it; naming it, a 404 as for a name that does not exist.
  auto other = daemon_->Holds(kTeamB, {});
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE((*other)["services"].empty()) << other->dump();
  EXPECT_TRUE((*other)["decisions"].empty());
  EXPECT_EQ((*other)["decisions_kept"], 0);
  EXPECT_EQ(daemon_->Holds(kTeamB, HoldsFilter{"chat", 10}).status().code(), StatusCode::kNotFound);
  auto admin = daemon_->Holds(kAdmin, HoldsFilter{"chat", 10});
  ASSERT_TRUE(admin.ok());
  EXPECT_EQ((*admin)["decisions"].size(), 1u);
  auto unknown = daemon_->Holds(kAdmin, HoldsFilter{"nope", 10});
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(), HasSubstr("no workload 'nope'"));

  // A cancelled service's call closes.
  ASSERT_TRUE(daemon_->Cancel(kTeamA, "chat").ok());
  WaitFor("chat", "cancelled");
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 1, "").code() != StatusCode::kOk);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto closed = daemon_->Holds(kAdmin, {});
  ASSERT_TRUE(closed.ok());
  EXPECT_NE((*closed)["decisions"][0]["until_s"], nullptr) << closed->dump(2);
}

// A service with model variants makes its hold-or-hand-off calls under its own name, scored
// against its whole demand: at 35 then 5 req/s of its code class, the coder's four replicas
// (10 req/s each) stand for the hour's window, one needed now. Its tenant sees them, by the
// service's name too; another tenant does not.
TEST_F(DaemonTest, AServiceWithVariantsMakesItsHoldsUnderItsName) {
  Open("8xH100", "airtime:spare=0:slo_target=0");
  Submit(kTeamA,
         "name: chat\n"
         "kind: realtime\n"
         "slo: {latency_ms: 200}\n"
         "classes: [{name: code}, {name: conv}]\n"
         "variants:\n"
         "  - {name: big, gpus: 2, throughput: {H100: 10}, classes: [conv]}\n"
         "  - {name: coder, gpus: 1, throughput: {H100: 10}, classes: [code]}\n"
         "command: [/bin/sh, -c, 'sleep 60']\n");
  ASSERT_TRUE(daemon_->ReportDemand(kTeamA, "chat", 35, "code").ok());
  for (int i = 0; i < 200 && Get("chat/coder")["replicas"]["target"] != 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(daemon_->ReportDemand(kTeamA, "chat", 5, "code").ok());
  json holds;
  for (int i = 0; i < 200; ++i) {
    auto h = daemon_->Holds(kTeamA, HoldsFilter{"chat", 10});
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    holds = *h;
    if (!holds["decisions"].empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(holds["decisions"].size(), 1u) << holds.dump(2);
  const json& call = holds["decisions"][0];
  EXPECT_EQ(call["service"], "chat");
  EXPECT_EQ(call["choice"], "hold");
  EXPECT_EQ(call["replicas_needed"], 1);
  EXPECT_EQ(call["replicas_held"], 3);
  EXPECT_NEAR(call["demand_rps"].get<double>(), 5.0, 1e-9);
  EXPECT_THAT(call["why"].get<std::string>(), HasSubstr("4 replicas kept (1 needed now)"));
  EXPECT_EQ(holds["services"]["chat"]["holds"], 1);
  auto by_member = daemon_->Holds(kTeamA, HoldsFilter{"chat/coder", 10});
  ASSERT_TRUE(by_member.ok()) << by_member.status().ToString();
  EXPECT_EQ((*by_member)["decisions"].size(), 1u);
  auto other = daemon_->Holds(kTeamB, {});
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE((*other)["decisions"].empty()) << other->dump();
  EXPECT_EQ(daemon_->Holds(kTeamB, HoldsFilter{"chat", 10}).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(daemon_->Cancel(kTeamA, "chat").ok());
  WaitFor("chat", "cancelled");
}
TEST_F(DaemonTest, TheHoldLogIsCarriedAcrossARestart) {
  Open("4xH100", kHoldPolicy);
  Submit(kTeamA, kHoldService);
  ASSERT_TRUE(daemon_->ReportDemand(kTeamA, "chat", 15, "").ok());
  json before;
  for (int i = 0; i < 200 && before.empty(); ++i) {
    auto h = daemon_->Holds(kAdmin, {});
    ASSERT_TRUE(h.ok());
    if (!(*h)["decisions"].empty()) before = (*h)["decisions"][0];
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(before.empty());
  const json chat = Get("chat");  // kept: a range over a member of a temporary dangles
  for (const json& r : chat["runs"]) leftovers_.push_back(r["pid"].get<pid_t>());
  daemon_->Stop();  // saves the log
  daemon_.reset();
  Open("4xH100", kHoldPolicy);
  EXPECT_THAT(daemon_->startup_note(), HasSubstr("holds: 1 call(s) carried on"));
  auto after = daemon_->Holds(kTeamA, {});
  ASSERT_TRUE(after.ok());
  ASSERT_GE((*after)["decisions"].size(), 1u) << after->dump(2);
  const json& call = (*after)["decisions"][0];
  EXPECT_EQ(call["t_s"], before["t_s"]);
  EXPECT_EQ(call["why"], before["why"]);
  EXPECT_NE(call["until_s"], nullptr);  // closed at the last save
  EXPECT_EQ((*after)["services"]["chat"]["holds"].get<int>(),
            static_cast<int>((*after)["decisions"].size()));
  EXPECT_TRUE((*daemon_->Holds(kTeamB, {}))["decisions"].empty());

  // A saved log that cannot be read is named at start, and the log starts anew.
  daemon_->Stop();
  daemon_.reset();
  {
    auto store = Store::Open(dir_ + "/data");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->SetMeta("holds", "{\"saved_at\": 1}").ok());
  }
  Open("4xH100", kHoldPolicy);
  EXPECT_THAT(daemon_->startup_note(),
              HasSubstr("holds: saved holds: 'services' is not an object; starting anew"));
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  WaitFor("chat", "cancelled");
}

// GET /v1/holds?service= takes a service with model variants by its name: its members'
// calls, each naming its member; a member's name gives that member's alone. A name that is
// unknown, or another tenant's, is a 404 naming it (the same answer for both); a workload
// that is not a service is a 400. (The calls are a saved log carried into the daemon: the
// airtime policy makes none for members today.)
TEST_F(DaemonTest, HoldsTakeAServiceWithVariantsByItsNameAndRefuseUnknownNames) {
  Open("4xH100", "fifo");
  Submit(kTeamA,
         "- name: chat\n"
         "  kind: realtime\n"
         "  slo: {latency_ms: 200}\n"
         "  variants:\n"
         "    - {name: big, gpus: 2, throughput: {H100: 10}}\n"
         "    - {name: small, gpus: 1, throughput: {H100: 10}, quality: 0.8}\n"
         "- {name: web, kind: realtime, slo: {latency_ms: 200, capacity_rps: 10}}\n"
         "- {name: job, kind: batch, work: 1h}\n");
  daemon_->Stop();
  daemon_.reset();
  {
    HoldRecord saved;
    saved.saved_at = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    for (const char* name : {"chat/big", "web", "chat/small"}) {
      ScoredHold call;
      call.decision.at = saved.saved_at - 1000;
      call.decision.name = name;
      call.decision.needed = 1;
      call.decision.held = 1;
      call.decision.why = std::string("held for ") + name;
      call.until = saved.saved_at;
      saved.state.calls.push_back(call);
    }
    auto store = Store::Open(dir_ + "/data");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->SetMeta("holds", EncodeHoldRecord(saved)).ok());
  }
  Open("4xH100", "fifo");
  auto names = [](const json& holds) {
    std::vector<std::string> out;
    for (const json& d : holds["decisions"]) out.push_back(d["service"]);
    return out;
  };
  auto service = daemon_->Holds(kTeamA, HoldsFilter{"chat", 10});
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  EXPECT_EQ(names(*service), (std::vector<std::string>{"chat/big", "chat/small"}))
      << service->dump(2);
  EXPECT_EQ((*service)["services"].size(), 2u);
  EXPECT_TRUE((*service)["services"].contains("chat/small"));
  auto member = daemon_->Holds(kTeamA, HoldsFilter{"chat/small", 10});
  ASSERT_TRUE(member.ok()) << member.status().ToString();
  EXPECT_EQ(names(*member), (std::vector<std::string>{"chat/small"}));
  auto plain = daemon_->Holds(kAdmin, HoldsFilter{"web", 10});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(names(*plain), (std::vector<std::string>{"web"}));
  EXPECT_EQ(names(*daemon_->Holds(kTeamA, {})).size(), 3u);

  for (const auto& [caller, name] : std::vector<std::pair<Caller, std::string>>{
           {kAdmin, "nope"}, {kTeamB, "chat"}, {kTeamB, "chat/big"}}) {
    auto refused = daemon_->Holds(caller, HoldsFilter{name, 10});
    ASSERT_FALSE(refused.ok()) << name;
    EXPECT_EQ(refused.status().code(), StatusCode::kNotFound) << name;
    EXPECT_THAT(refused.status().message(), HasSubstr("'" + name + "'"));
  }
  auto job = daemon_->Holds(kAdmin, HoldsFilter{"job", 10});
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(job.status().message(), HasSubstr("query 'service': workload 'job' is batch"));
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "web").ok());
}

TEST_F(DaemonTest, TheHoldLogKeepsItsNewestCalls) {
  // Each rise of demand raises the target (what the demand needs and a warm spare): a new
  // call each time, seven in all, of which the log keeps the newest three closed ones.
  DaemonOptions o = Options("16xH100", kHoldPolicy);  // room for every spare
  o.max_hold_calls = 3;
  OpenWith(o);
  Submit(kAdmin,
         "name: chat\nkind: realtime\n"
         "slo: {latency_ms: 200, capacity_rps: 10, max_replicas: 12, cold_start: 1s}\n"
         "command: [/bin/sh, -c, 'sleep 60']\n");
  // Each report's cycle before the next (on a loaded machine two reports 20 ms apart once
  // met in one cycle, and made one call).
  auto calls = [&] {
    auto h = daemon_->Holds(kAdmin, {});
    if (!h.ok() || !(*h)["services"].contains("chat")) return 0;
    const json& c = (*h)["services"]["chat"];
    return c["holds"].get<int>() + c["handoffs"].get<int>();
  };
  for (int i = 1; i <= 7; ++i) {
    ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 10 * i + 5, "").ok());
    for (int k = 0; k < 500 && calls() < i; ++k)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // A replaced call is scored for a cold start (1 s) more, then closed.
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  auto holds = daemon_->Holds(kAdmin, {});
  ASSERT_TRUE(holds.ok());
  const json& chat = (*holds)["services"]["chat"];
  EXPECT_EQ(chat["holds"].get<int>() + chat["handoffs"].get<int>(), 7) << holds->dump(2);
  // Three closed ones and the standing one; the summary counts them all.
  ASSERT_EQ((*holds)["decisions"].size(), 4u) << holds->dump(2);
  EXPECT_EQ((*holds)["decisions"][3]["demand_rps"], 75.0);
  auto one = daemon_->Holds(kAdmin, HoldsFilter{"", 1});
  ASSERT_TRUE(one.ok());
  ASSERT_EQ((*one)["decisions"].size(), 1u);
  EXPECT_EQ((*one)["decisions"][0]["t_s"], (*holds)["decisions"][3]["t_s"]);  // the newest
  EXPECT_EQ((*one)["decisions_kept"], 4);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  WaitFor("chat", "cancelled");
}

TEST_F(DaemonTest, AFractionRunsAsAnMpsClientWithItsShare) {
  Open("1xH100");
  Submit(kAdmin,
         "name: small\nkind: embed\ngpu_fraction: 0.25\nmemory_gb: 20\n"
         "command: [/usr/bin/env]\n");
  json w = WaitFor("small", "succeeded");
  std::ifstream out(w["runs"][0]["log_dir"].get<std::string>() + "/stdout.log");
  std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25"));
  EXPECT_THAT(text, HasSubstr("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=GPU-fake-0000-h100-00="));
  EXPECT_THAT(text, HasSubstr("CUDA_MPS_PIPE_DIRECTORY=" + dir_ + "/data/mps/pipe"));
  EXPECT_THAT(text, HasSubstr("AIRTIME_CHECKPOINT_DIR=" + dir_ + "/data/checkpoints/"));
}

TEST_F(DaemonTest, DemandIsScrapedFromTheReplicasMetrics) {
  Open("4xH100", "fifo");
  Submit(kAdmin,
         "name: web\nkind: realtime\n"
         "slo: {latency_ms: 200, capacity_rps: 10, min_replicas: 1, max_replicas: 4}\n" +
             InFlightMetrics());
  json w;
  for (int i = 0; i < 300; ++i) {
    w = Get("web");
    if (w["demand_rps"].get<double>() >= 30) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // 6 in flight per replica at 200 ms each: at least 30 requests per second.
  EXPECT_GE(w["demand_rps"].get<double>(), 30) << w.dump(2);
  for (int i = 0; i < 200 && w["replicas"]["running"].get<int>() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    w = Get("web");
  }
  EXPECT_GE(w["replicas"]["running"].get<int>(), 3) << w.dump(2);
  const std::string m = daemon_->Metrics();
  EXPECT_THAT(m, HasSubstr("airtime_service_requests_total{workload=\"web\"}"));
  EXPECT_THAT(m, HasSubstr("airtime_service_requests_in_slo_total{workload=\"web\"}"));
  const auto requests = SumMetrics(m, {"airtime_service_requests_total"});
  const auto in_slo = SumMetrics(m, {"airtime_service_requests_in_slo_total"});
  ASSERT_TRUE(requests && in_slo);
  EXPECT_GT(*requests, 0);  // the demand of 30 rps or more, for a while now
  EXPECT_LE(*in_slo, *requests + 1e-9);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "web").ok());
  WaitFor("web", "cancelled");
}

// A replica's exposition is read up to kMaxExpositionBytes: one larger is not read at all
// (the daemon would otherwise hold whatever a replica sends), while a neighbour's, scraped in
// the same rounds, is.
TEST_F(DaemonTest, AnOversizedExpositionIsNotRead) {
  Open("4xH100", "fifo");
  std::filesystem::create_directories(dir_ + "/huge");
  {
    std::ofstream f(dir_ + "/huge/metrics");
    f << "demo_in_flight 6\n";
    const std::string padding = "# " + std::string(1022, 'x') + "\n";
    for (size_t n = 0; n <= kMaxExpositionBytes / padding.size(); ++n) f << padding;
  }
  Submit(kAdmin,
         "- name: web\n  kind: realtime\n"
         "  slo: {latency_ms: 200, capacity_rps: 1000, min_replicas: 1, max_replicas: 1}\n" +
             Indent(InFlightMetrics()) +
             "- name: huge\n  kind: realtime\n"
             "  slo: {latency_ms: 200, capacity_rps: 1000, min_replicas: 1, max_replicas: 1}\n"
             "  metrics: {demand: [demo_in_flight]}\n"
             "  command: [/bin/sh, -c, 'exec python3 -m http.server $PORT --bind 127.0.0.1 "
             "--directory " +
             dir_ + "/huge']\n");
  WaitFor("huge", "running");
  json w;
  for (int i = 0; i < 300; ++i) {
    w = Get("web");
    if (w["demand_rps"].get<double>() >= 30) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(w["demand_rps"].get<double>(), 30) << w.dump(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // five more rounds
  EXPECT_EQ(Get("huge")["demand_rps"], 0.0);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "web").ok());
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "huge").ok());
  WaitFor("huge", "cancelled");
}

// A service with model variants and one request class that scrapes its replicas' metrics:
// its demand is the sum over all its members' replicas, and every member hears it as the
// class's, so the airtime policy's mix follows it (a member's own rate alone would leave
// the mix at the service's min_replicas).
TEST_F(DaemonTest, AServiceWithVariantsFollowsItsReplicasScrapedDemand) {
  Open("4xH100", "airtime");
  Submit(kAdmin, "name: chat\nkind: realtime\nslo: {latency_ms: 200, min_replicas: 1}\n" +
                     InFlightMetrics() +
                     "variants: [{name: one, gpus: 1, throughput: {H100: 10}, max_replicas: 4}]\n");
  json w;
  for (int i = 0; i < 400; ++i) {
    w = Get("chat");
    if (w.contains("replicas") && w["replicas"]["running"].get<int>() >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // 6 in flight per replica at 200 ms each: 30 requests per second or more, 3 replicas.
  EXPECT_GE(w["demand_rps"].get<double>(), 30) << w.dump(2);
  EXPECT_GE(w["replicas"]["running"].get<int>(), 3) << w.dump(2);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  WaitFor("chat", "cancelled");
}

// A service of two request classes that names the label carrying the class: its scraped
// demand is summed per class over all its members' replicas, and each class's rate reaches
// every member as a report per class does. One member gets the service's minimum replica;
// the other starts only on its class's scraped rate (both curves are 0). The
// samples without the label or of another class count for neither, and the service's
// events say how many were skipped.
TEST_F(DaemonTest, AServiceOfTwoClassesGetsEachClassesScrapedRate) {
  Open("4xH100", "fifo");
  std::filesystem::create_directories(dir_ + "/www");
  std::ofstream(dir_ + "/www/metrics") << "# TYPE demo_in_flight gauge\n"
                                          "demo_in_flight{class=\"code\"} 3\n"
                                          "demo_in_flight{class=\"conv\",model=\"a\"} 2\n"
                                          "demo_in_flight{model=\"b\",class=\"conv\"} 2\n"
                                          "demo_in_flight{class=\"chitchat\"} 100\n"
                                          "demo_in_flight{class=\"co\\\"de\"} 100\n"
                                          "demo_in_flight 100\n"
                                          "demo_in_flight{class=\"code\"} NaN\n";
  Submit(kAdmin,
         "name: chat\nkind: realtime\nslo: {latency_ms: 200, min_replicas: 1}\n"
         "classes: [{name: code, demand: [{at: 0, rps: 0}]}, {name: conv, demand: [{at: 0, rps: "
         "0}]}]\n"
         "metrics: {demand: [demo_in_flight], class_label: class}\n"
         "command: [/bin/sh, -c, 'exec python3 -m http.server $PORT --bind 127.0.0.1 "
         "--directory " +
             dir_ +
             "/www']\n"
             "variants:\n"
             "  - {name: big, gpus: 1, throughput: {H100: 100}, classes: [conv], max_replicas: 1}\n"
             "  - {name: coder, gpus: 1, throughput: {H100: 100}, classes: [code], max_replicas: "
             "1}\n");
  // Per replica: 3 code and 4 conv requests in flight at 200 ms each, 15 and 20 rps.
  json w;
  for (int i = 0; i < 400; ++i) {
    w = Get("chat");
    if (w.contains("replicas") && w["replicas"]["running"].get<int>() >= 2 &&
        w["class_rps"]["code"].get<double>() >= 29)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(Get("chat/coder")["replicas"]["running"], 1) << w.dump(2);
  ASSERT_TRUE(w.contains("class_rps")) << w.dump(2);
  const double code = w["class_rps"]["code"].get<double>();
  const double conv = w["class_rps"]["conv"].get<double>();
  EXPECT_NEAR(code, 30, 0.5) << w.dump(2);  // two replicas, each 15
  EXPECT_NEAR(conv, 40, 0.5) << w.dump(2);
  EXPECT_EQ(w["mix"],
            "code: 100% coder; conv: 100% big (the best variant for each class: policy fifo "
            "chooses no mix)");
  auto events = daemon_->Events(kAdmin, "chat");
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  std::string warning;
  for (const json& e : (*events)["events"])
    if (e["kind"] == "warning") warning = e["message"];
  EXPECT_THAT(warning, HasSubstr("counted for no class"));
  EXPECT_THAT(warning, HasSubstr("label 'class' absent: "));
  EXPECT_THAT(warning, HasSubstr("(e.g. 'chitchat', 'co\"de')"));
  EXPECT_THAT(warning, HasSubstr("malformed, negative or not finite: "));
  // Stored as reports per class are: each member's class rates, last and history (what a
  // restart feeds back).
  const int64_t coder = Get("chat/coder")["id"];
  auto store = Store::OpenReadOnly(dir_ + "/data");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto last = (*store)->ClassDemandOf(coder);
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  ASSERT_EQ(last->size(), 2u);
  EXPECT_NEAR((*last)[0].rps, 30, 0.5);  // code
  EXPECT_NEAR((*last)[1].rps, 40, 0.5);  // conv
  auto steps = (*store)->ClassDemandHistoryOf(coder, 0);
  ASSERT_TRUE(steps.ok()) << steps.status().ToString();
  EXPECT_GE(steps->size(), 2u);
  store->reset();
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  WaitFor("chat", "cancelled");
}

TEST_F(DaemonTest, ANewRunWaitsForAStoppingProcessToLeaveItsGpus) {
  Open("2xH100", "fifo");
  Submit(kAdmin,
         "- name: slow-to-stop\n  kind: training\n  gpus: 2\n  preempt_grace: 10s\n"
         "  command: [/bin/sh, -c, 'trap \"sleep 0.5; exit 0\" TERM; echo ready; while true; do "
         "sleep 0.1; done']\n"
         "- {name: next, kind: batch, gpus: 2, command: [/bin/true]}\n");
  json w = WaitFor("slow-to-stop", "running");
  WaitForReady(w);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "slow-to-stop").ok());
  json next = WaitFor("next", "succeeded");
  json old = Get("slow-to-stop");
  ASSERT_EQ(old["runs"].size(), 1u);
  ASSERT_EQ(next["runs"].size(), 1u);
  const int64_t old_end = old["runs"][0]["ended_at"];
  EXPECT_GE(next["runs"][0]["started_at"].get<int64_t>(), old_end);
  EXPECT_EQ(old["runs"][0]["exit_code"], 0);  // it left on SIGTERM, within its grace
  EXPECT_EQ(old["exit_code"], 0);
  // What the workload shows is what the store holds: the same after a restart.
  daemon_->Stop();
  daemon_.reset();
  Open("2xH100", "fifo");
  EXPECT_EQ(Get("slow-to-stop")["exit_code"], 0);
}

// A job runs once at a time. Preempted for a service, a checkpointing job takes 2 s to stop
// (its TERM trap); its GPUs go to the service's replica, and other GPUs free up at once (a
// job without a grace is cancelled). The engine places the job again there, but its next run
// waits until the one being stopped has exited, on other GPUs too.
TEST_F(DaemonTest, APreemptedJobsNextRunWaitsForTheStoppingOneEvenOnOtherGpus) {
  Open("4xH100", "airtime");
  Submit(kAdmin,
         "- name: ckpt\n  kind: training\n  gpus: 2\n  preemptible: true\n"
         "  preempt_grace: 30s\n  value: {on_completion: 1}\n"
         "  command: [/bin/sh, -c, 'trap \"sleep 2; exit 0\" TERM; echo ready; while true; do "
         "sleep 0.1; done']\n"
         "- name: filler\n  kind: training\n  gpus: 2\n  preemptible: false\n"
         "  value: {on_completion: 100}\n  command: [/bin/sleep, '600']\n");
  json w = WaitFor("ckpt", "running");
  WaitFor("filler", "running");
  WaitForReady(w);
  Submit(kAdmin,
         "name: chat\nkind: realtime\ngpus: 2\nvalue: {per_1k_requests: 100}\n"
         "slo: {latency_ms: 200, capacity_rps: 10, max_replicas: 1}\n"
         "command: [/bin/sleep, '600']\n");
  ASSERT_TRUE(daemon_->ReportDemand(kAdmin, "chat", 5, "").ok());
  // Once the job is being stopped, the filler goes: its GPUs are free at once.
  for (int i = 0; i < 200; ++i) {
    w = Get("ckpt");
    if (!w["runs"][0].value("stop_reason", "").empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_FALSE(w["runs"][0].value("stop_reason", "").empty()) << w.dump(2);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "filler").ok());
  for (int i = 0; i < 400; ++i) {
    w = Get("ckpt");
    if (w["runs"].size() == 2 && w["runs"][1].value("state", "") == "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(w["runs"].size(), 2u) << w.dump(2);
  EXPECT_EQ(w["runs"][0]["exit_code"], 0) << w.dump(2);  // it left on TERM, within its grace
  EXPECT_GE(w["runs"][1]["started_at"].get<int64_t>(), w["runs"][0]["ended_at"].get<int64_t>())
      << w.dump(2);
  // Stopped: a daemon that goes leaves its workloads' processes running (each run of this
  // test once left these two behind).
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "ckpt").ok());
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chat").ok());
  WaitFor("ckpt", "cancelled");
  WaitFor("chat", "cancelled");
}

// The starts of one cycle are launched as one batch (Actuator::LaunchAll): one the backend
// refuses (its workdir went away after it was accepted) ends alone, as a failed launch
// (retried, then failed), and the others of its batch run, each once.
TEST_F(DaemonTest, ALaunchRefusedInACyclesBatchEndsAloneAndTheOthersRunOnce) {
  DaemonOptions o = Options("4xH100", "fifo");
  o.restart_backoff = 0;
  OpenWith(o);
  const std::string wd = dir_ + "/wd";
  std::filesystem::create_directories(wd);
  Submit(kAdmin, "{name: blocker, kind: batch, gpus: 4, command: [/bin/sleep, '30']}\n");
  WaitFor("blocker", "running");
  Submit(kAdmin,
         "- {name: a, kind: batch, command: [/bin/sleep, '30']}\n"
         "- {name: b, kind: batch, workdir: " +
             wd +
             ", command: [/bin/sleep, '30']}\n"
             "- {name: c, kind: batch, command: [/bin/sleep, '30']}\n");
  std::filesystem::remove_all(wd);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "blocker").ok());  // a, b and c start in one cycle
  json a = WaitFor("a", "running"), c = WaitFor("c", "running");
  json b = WaitFor("b", "failed");
  EXPECT_THAT(b.dump(), HasSubstr("workload 'b': workdir '" + wd + "' does not exist"));
  a = Get("a");
  c = Get("c");
  ASSERT_EQ(a["runs"].size(), 1u);
  ASSERT_EQ(c["runs"].size(), 1u);
  EXPECT_EQ(a["runs"][0]["state"], "running");
  EXPECT_EQ(c["runs"][0]["state"], "running");
  EXPECT_EQ(b["runs"].size(), 3u);  // max_attempts: each a launch that failed
  for (const json& r : b["runs"]) EXPECT_EQ(r["exit_code"], 127) << r.dump();
  // Accepted: the blocker, a and c; b's refusals are not.
  EXPECT_EQ(daemon_->latencies().decision_to_accepted.count(), 3u);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "a").ok());
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "c").ok());
  WaitFor("a", "cancelled");
  WaitFor("c", "cancelled");
}

TEST_F(DaemonTest, ARunRecordedWithoutItsDirectoryNeverStartedAndRunsOnce) {
  // What a crash between the run row and its directory leaves: the process never started,
  // so the restarted daemon runs the workload (once), and does not wait for a ghost.
  {
    auto store = Store::Open(dir_ + "/data");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const std::string body = "name: ghost\nkind: batch\ncommand: [/bin/true]\n";
    auto sub = (*store)->AddSubmission({0, "default", body, "request", 1000});
    ASSERT_TRUE(sub.ok());
    WorkloadRow w;
    w.submission_id = *sub;
    w.name = "ghost";
    w.tenant = "default";
    w.kind = "batch";
    w.state = "running";
    w.submitted_at = 1000;
    auto id = (*store)->AddWorkload(w);
    ASSERT_TRUE(id.ok());
    RunRow r;
    r.workload_id = *id;
    r.gpus = {"GPU-fake-0000-h100-00"};
    ASSERT_TRUE((*store)->AddRun(r).ok());  // state launching, no run_dir, no pid
  }
  Open();
  json w = WaitFor("ghost", "succeeded");
  ASSERT_EQ(w["runs"].size(), 2u);
  EXPECT_EQ(w["runs"][0]["state"], "abandoned");
  EXPECT_EQ(w["runs"][1]["exit_code"], 0);
}

// A workdir that does not exist is refused at submission, naming the workload and the
// workdir (it used to be accepted, then fail as "posix_spawn ...: No such file or directory").
TEST_F(DaemonTest, AMissingWorkdirIsRefusedAtSubmission) {
  Open();
  auto r = daemon_->Submit(
      kTeamA, "name: lost\nkind: batch\nworkdir: /nope-airtime\ncommand: [/bin/true]\n", "request");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("request:3: workload 'lost': field 'workdir': '/nope-airtime' does not "
                        "exist (or is not a directory)"));
  // Nothing was accepted.
  EXPECT_FALSE(daemon_->Get(kAdmin, "lost").ok());
  // A merged workdir is named where it is written.
  r = daemon_->Submit(kTeamA,
                      "anchors:\n  where: &w {workdir: /nope-airtime}\nworkloads:\n"
                      "  - name: lost\n    kind: batch\n    command: [/bin/true]\n    <<: *w\n",
                      "request");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("request:2: workload 'lost': field 'workdir'"));
}

// Issue 19: a run directory the store does not know (its row lost with the WAL) stops the
// start with the numbers; --accept-store-loss starts, and the next run id is above it.
TEST_F(DaemonTest, ARunDirectoryTheStoreDoesNotKnowStopsTheStartUnlessTheLossIsAccepted) {
  Open();
  Submit(kAdmin, "{name: one, kind: batch, command: [/bin/true]}");
  WaitFor("one", "succeeded");
  daemon_.reset();
  const std::string data = dir_ + "/data";
  std::filesystem::create_directories(data + "/runs/9");
  std::ofstream(data + "/runs/9/exit") << "exit 0\n";
  auto refused = Daemon::Open(Options());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr(data + "/runs holds 1 run directory the store does not know: 9"));
  EXPECT_THAT(refused.status().message(), HasSubstr("--accept-store-loss"));
  DaemonOptions accept = Options();
  accept.accept_store_loss = true;
  auto d = Daemon::Open(accept);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  daemon_ = std::move(*d);
  daemon_->Start();
  EXPECT_THAT(daemon_->startup_note(), HasSubstr("store loss accepted"));
  Submit(kAdmin, "{name: two, kind: batch, command: [/bin/true]}");
  json two = WaitFor("two", "succeeded");
  ASSERT_EQ(two["runs"].size(), 1u);
  EXPECT_EQ(two["runs"][0]["id"], 1 + kRunIdBlock);  // above 9, and above run 1's block
  std::ifstream log(data + "/store-loss.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("run 9 of an unknown workload"));
  daemon_.reset();
  Open();  // accepted once: a plain start works again
}

// Run ids are reserved a block at a time: only the first run of a block writes the marks,
// and a restart hands out ids above the block, used or not.
TEST_F(DaemonTest, RunIdsAreReservedABlockAtATimeAndARestartSkipsTheRest) {
  const std::string data = dir_ + "/data";
  auto marks = [&] {
    auto m = ReadStoreMarks(data);
    EXPECT_TRUE(m.ok() && m->has_value());
    return m.ok() && m->has_value() ? **m : StoreMarks{};
  };
  Open();
  Submit(kAdmin, "{name: one, kind: batch, command: [/bin/true]}");
  WaitFor("one", "succeeded");
  const StoreMarks first = marks();
  EXPECT_EQ(first.run, 1);
  EXPECT_EQ(first.run_reserved, kRunIdBlock);
  Submit(kAdmin, "{name: two, kind: batch, command: [/bin/true]}");
  json two = WaitFor("two", "succeeded");
  EXPECT_EQ(two["runs"][0]["id"], 2);
  const StoreMarks second = marks();
  EXPECT_EQ(second.run, 1);  // not written for run 2 (the submission wrote them, as before)
  EXPECT_EQ(second.run_reserved, kRunIdBlock);
  daemon_.reset();
  Open();
  Submit(kAdmin, "{name: three, kind: batch, command: [/bin/true]}");
  json three = WaitFor("three", "succeeded");
  EXPECT_EQ(three["runs"][0]["id"], kRunIdBlock + 1);
  EXPECT_EQ(marks().run_reserved, 2 * kRunIdBlock);
}

// A run's log over --max-log-mib is cut while it runs (its tail kept in stdout.log.1, a note
// opening the log again), and once more when the run ends: a workload that writes without
// end takes a bounded part of the data directory. /metrics counts the cuts.
TEST_F(DaemonTest, ALogOverMaxLogMibIsCutItsTailKept) {
  DaemonOptions o = Options();
  o.max_log_mib = 1;
  o.disk_check_interval = 100;
  OpenWith(o);
  // 3 MiB of x, a marker, then quiet; and a job that writes as much and ends at once.
  Submit(kAdmin,
         "[{name: chatty, kind: batch, command: [/bin/sh, -c, 'head -c 3145728 /dev/zero | tr "
         "\\\\0 x; echo; echo the-end; sleep 60']},"
         " {name: brief, kind: batch, command: [/bin/sh, -c, 'head -c 3145728 /dev/zero | tr "
         "\\\\0 y; echo; echo the-end']}]");
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  for (const char* name : {"chatty", "brief"}) {
    json w = name == std::string("brief") ? WaitFor(name, "succeeded") : WaitFor(name, "running");
    const std::string dir = w["runs"][0]["log_dir"].get<std::string>();
    // Cut, and all written (a cut may come while it still writes: what follows the cut
    // stays in the log, and is cut in turn once over the cap).
    std::string log, tail;
    for (int i = 0; i < 200; ++i) {
      tail = read(dir + "/stdout.log.1");  // first: a cut writes it before the log's note
      log = read(dir + "/stdout.log");
      if (!tail.empty() && log.find("over its cap") != std::string::npos &&
          (tail + log).find("the-end\n") != std::string::npos && log.size() <= 1024 * 1024 + 4096)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(tail.size(), 256u * 1024) << name;  // a quarter of the cap
    EXPECT_THAT(log, HasSubstr("stdout.log reached ")) << name;
    EXPECT_THAT(log, HasSubstr(" MiB, over its cap of 1.0 MiB: its last 262144 bytes are in "
                               "stdout.log.1"))
        << name;
    EXPECT_LE(log.size(), 1024u * 1024 + 4096) << name;
    EXPECT_THAT(tail + log, HasSubstr("the-end\n")) << name;
  }
  EXPECT_THAT(daemon_->Metrics(), ContainsRegex("airtime_log_cuts_total [2-9]"));
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chatty").ok());
  WaitFor("chatty", "cancelled");
}

// A workload whose checkpoint directory grows over --max-checkpoint-mib is ended as failed,
// saying where and by how much, and the directory is removed once its run has stopped;
// another tenant's workload under the cap runs on, and what was accepted stays. A restart
// removes the directory of one ended so whose removal had not happened yet.
TEST_F(DaemonTest, ACheckpointDirectoryOverItsCapEndsItsWorkloadAndIsRemoved) {
  DaemonOptions o = Options();
  o.max_checkpoint_mib = 1;
  o.disk_check_interval = 100;
  OpenWith(o);
  Submit(kTeamA,
         "{name: hoarder, kind: batch, command: [/bin/sh, -c, 'mkdir -p "
         "\"$AIRTIME_CHECKPOINT_DIR\" && head -c 3145728 /dev/zero > "
         "\"$AIRTIME_CHECKPOINT_DIR\"/step-1.pt && sleep 60']}");
  // Without `mkdir -p`: the directory is there before the first run.
  Submit(kTeamB,
         "{name: modest, kind: batch, command: [/bin/sh, -c, 'head -c 65536 /dev/zero > "
         "\"$AIRTIME_CHECKPOINT_DIR\"/step-1.pt && sleep 60']}");
  const json hoarder = WaitFor("hoarder", "failed");
  EXPECT_THAT(hoarder.value("reason", ""),
              HasSubstr("failed: its checkpoint directory " + o.data_dir + "/checkpoints/"));
  EXPECT_THAT(hoarder.value("reason", ""),
              HasSubstr(" MiB, over the cap of 1.0 MiB (--max-checkpoint-mib); ended, and the "
                        "directory is removed"));
  const std::string dir = o.data_dir + "/checkpoints/" + std::to_string(hoarder["id"].get<int>());
  for (int i = 0; i < 200 && std::filesystem::exists(dir); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(std::filesystem::exists(dir));
  const json modest = Get("modest");
  EXPECT_EQ(modest.value("state", ""), "running");
  EXPECT_TRUE(std::filesystem::exists(o.data_dir + "/checkpoints/" +
                                      std::to_string(modest["id"].get<int>()) + "/step-1.pt"));
  EXPECT_THAT(daemon_->Metrics(), HasSubstr("airtime_checkpoint_cap_ends_total 1\n"));

  // Ended over the cap before a restart, its directory still there: the restart removes it.
  daemon_.reset();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/left.pt") << "x";
  OpenWith(o);
  for (int i = 0; i < 200 && std::filesystem::exists(dir); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_EQ(Get("hoarder").value("state", ""), "failed");
  EXPECT_EQ(Get("modest").value("state", ""), "running");
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "modest").ok());
  WaitFor("modest", "cancelled");
}

// A member of a service with model variants over its checkpoint cap ends the service: its
// members share one reason to run. The service's state and reason say so.
TEST_F(DaemonTest, AVariantOverItsCheckpointCapEndsItsService) {
  DaemonOptions o = Options("4xH100", "fifo");  // fifo runs the best variant
  o.max_checkpoint_mib = 1;
  o.disk_check_interval = 100;
  OpenWith(o);
  Submit(kTeamA,
         "- name: chat\n"
         "  kind: realtime\n"
         "  slo: {latency_ms: 200, min_replicas: 1}\n"
         "  command: [/bin/sh, -c, 'mkdir -p \"$AIRTIME_CHECKPOINT_DIR\" && head -c 2097152 "
         "/dev/zero > \"$AIRTIME_CHECKPOINT_DIR\"/cache && sleep 60']\n"
         "  variants:\n"
         "    - {name: big, gpus: 2, throughput: {H100: 10}}\n"
         "    - {name: small, gpus: 1, throughput: {H100: 10}, quality: 0.8}\n");
  const json big = WaitFor("chat/big", "failed");
  EXPECT_THAT(big.value("reason", ""), HasSubstr("over the cap of 1.0 MiB"));
  const json small = WaitFor("chat/small", "failed");
  EXPECT_THAT(small.value("reason", ""), HasSubstr("over the cap of 1.0 MiB"));
  const json chat = Get("chat");
  EXPECT_EQ(chat.value("state", ""), "failed") << chat.dump(2);
  // Only the directory over the cap goes, also at a restart: the other variant's stays.
  const std::string small_dir =
      o.data_dir + "/checkpoints/" + std::to_string(small["id"].get<int>());
  std::filesystem::create_directories(small_dir);
  std::ofstream(small_dir + "/kept.pt") << "x";
  const std::string big_dir = o.data_dir + "/checkpoints/" + std::to_string(big["id"].get<int>());
  for (int i = 0; i < 200 && std::filesystem::exists(big_dir); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(std::filesystem::exists(big_dir));
  daemon_.reset();
  OpenWith(o);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // five rounds
  EXPECT_TRUE(std::filesystem::exists(small_dir + "/kept.pt"));
}

// A log cut and grown back past where a reader was is not shorter than what the reader read,
// so its size cannot say it was cut: its cut mark (LogChunk::cut, X-Airtime-Log-Cut) does,
// and changes at each cut.
TEST_F(DaemonTest, ALogCutAndGrownBackIsToldByItsCutMark) {
  DaemonOptions o = Options();
  o.max_log_mib = 1;
  o.disk_check_interval = 100;
  OpenWith(o);
  Submit(kAdmin,
         "[{name: chatty, kind: batch, command: [/bin/sh, -c, 'echo start; sleep 1; "
         "head -c 3145728 /dev/zero | tr \\\\0 x; sleep 1; head -c 3145728 /dev/zero | "
         "tr \\\\0 y; sleep 60']}]");
  WaitFor("chatty", "running");
  // Its first line, before any cut.
  StatusOr<LogChunk> first = Internal("not read");
  for (int i = 0; i < 100; ++i) {
    first = daemon_->Logs(kAdmin, "chatty", LogQuery{});
    if (first.ok() && first->data == "start\n") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->data, "start\n");
  EXPECT_EQ(first->cut, "");
  // Cut once: the note alone is longer than what was read, so under the first mark the log
  // grows back past the reader (a read between the cut's emptying and its note may see it
  // empty first).
  std::vector<std::string> marks;
  bool grown = false;
  for (int i = 0; i < 400 && marks.size() < 2; ++i) {
    auto now = daemon_->Logs(kAdmin, "chatty", LogQuery{0, 0, 16, false});
    ASSERT_TRUE(now.ok()) << now.status().ToString();
    if (!now->cut.empty() && (marks.empty() || marks.back() != now->cut)) marks.push_back(now->cut);
    if (marks.size() == 1 && now->cut == marks[0] && now->size > first->size) grown = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(grown);
  ASSERT_EQ(marks.size(), 2u);  // and again at the second cut
  EXPECT_NE(marks[0], marks[1]);
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "chatty").ok());
  WaitFor("chatty", "cancelled");
}

// A run that wrote past the cap and ended before the next look is cut as it ends.
TEST_F(DaemonTest, ALogIsCutWhenItsRunEnds) {
  DaemonOptions o = Options();
  o.max_log_mib = 1;
  o.disk_check_interval = kHour;  // the first look, at start; the next one an hour later
  OpenWith(o);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the look at start is done
  Submit(kAdmin,
         "{name: brief, kind: batch, command: [/bin/sh, -c, 'head -c 3145728 /dev/zero | tr "
         "\\\\0 y; echo; echo the-end']}");
  json w = WaitFor("brief", "succeeded");
  const std::string dir = w["runs"][0]["log_dir"].get<std::string>();
  ASSERT_TRUE(std::filesystem::exists(dir + "/stdout.log.1"));
  EXPECT_EQ(std::filesystem::file_size(dir + "/stdout.log.1"), 256u * 1024);
  EXPECT_LT(std::filesystem::file_size(dir + "/stdout.log"), 4096u);
}

// --max-active-per-tenant bounds what one tenant has queued or running: a submission that
// would pass it is refused whole, naming the tenant and the counts; another tenant is not
// touched; an ended workload frees its place; a restart counts the tenant's live ones again.
TEST_F(DaemonTest, ATenantsQueuedAndRunningWorkloadsAreBounded) {
  DaemonOptions o = Options("1xH100");
  o.max_active_per_tenant = 3;
  OpenWith(o);
  // One runs (holding the GPU), the others wait.
  Submit(kTeamA,
         "[{name: a1, kind: batch, gpus: 1, command: [/bin/sh, -c, 'sleep 60']},"
         " {name: a2, kind: batch, gpus: 1, command: [/bin/true]}]");
  auto refused = daemon_->Submit(kTeamA,
                                 "[{name: a3, kind: batch, gpus: 1, command: [/bin/true]},"
                                 " {name: a4, kind: batch, gpus: 1, command: [/bin/true]}]",
                                 "request");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("tenant 'team-a' has 2 workloads queued or running; these 2 would make "
                        "4, more than the 3 the daemon accepts of one tenant "
                        "(--max-active-per-tenant): none was accepted"));
  EXPECT_FALSE(daemon_->Get(kAdmin, "a3").ok());  // nothing of it was accepted
  Submit(kTeamA, "{name: a3, kind: batch, gpus: 1, command: [/bin/true]}");
  Submit(kTeamB,
         "[{name: b1, kind: batch, gpus: 1, command: [/bin/true]}, {name: b2, kind: "
         "batch, gpus: 1, command: [/bin/true]}, {name: b3, kind: batch, gpus: 1, "
         "command: [/bin/true]}]");
  EXPECT_FALSE(
      daemon_->Submit(kTeamA, "{name: a4, kind: batch, command: [/bin/true]}", "request").ok());
  // A restart counts team-a's three again.
  daemon_.reset();
  OpenWith(o);
  EXPECT_FALSE(
      daemon_->Submit(kTeamA, "{name: a4, kind: batch, command: [/bin/true]}", "request").ok());
  // One ended: room for one more.
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "a3").ok());
  WaitFor("a3", "cancelled");
  Submit(kTeamA, "{name: a4, kind: batch, command: [/bin/true]}");
  ASSERT_TRUE(daemon_->Cancel(kAdmin, "a1").ok());
  WaitFor("a1", "cancelled");
}

// Issue 19: below --min-free-mib, starts pause and the workload says why.
TEST_F(DaemonTest, StartsPauseBelowTheFreeSpaceThreshold) {
  DaemonOptions o = Options();
  o.min_free_mib = int64_t{1} << 40;  // more than any disk has
  OpenWith(o);
  Submit(kAdmin, "{name: waits, kind: batch, command: [/bin/true]}");
  json w = Get("waits");
  EXPECT_EQ(w["state"], "queued");
  EXPECT_THAT(w.value("reason", ""), HasSubstr("starts paused"));
  EXPECT_THAT(w.value("explanation", ""), HasSubstr("MiB needed to start a run"));
  EXPECT_TRUE(w["runs"].empty());
}

}  // namespace
}  // namespace airtime
