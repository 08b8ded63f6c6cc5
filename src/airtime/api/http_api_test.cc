// HttpApi + ApiClient tests: a fake ControlPlane behind a real server on a free port.
#include "airtime/api/http_api.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>
#include <tuple>

#include "airtime/api/client.h"
#include "airtime/api/errors.h"
#include "airtime/api/web_assets.h"
#include "airtime/cli/client_commands.h"

namespace airtime {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kAdminToken(64, 'a');
const std::string kTeamAToken = "team-a-token-0123456789";

// A ControlPlane that records calls and answers from a small in-memory list.
class FakePlane : public ControlPlane {
 public:
  StatusOr<json> Submit(const Caller& caller, std::string_view body,
                        std::string_view origin) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_body = std::string(body);
    last_origin = std::string(origin);
    if (body.find("bad") != std::string_view::npos) {
      return InvalidArgument("request:1: field 'gpus': expected a positive integer");
    }
    if (!caller.admin && body.find("tenant: team-b") != std::string_view::npos) {
      return Status(StatusCode::kPermissionDenied, "workload names tenant team-b");
    }
    const int id = next_id_++;
    if (body.find("invalid-utf8") != std::string_view::npos) {
      // As a row of an older store: a name that is not UTF-8.
      workloads_.push_back({{"id", id}, {"name", "bad\xff\xfe"}, {"state", "queued"}});
      return json{{"accepted", {{{"id", id}, {"name", "bad\xff\xfe"}}}}};
    }
    workloads_.push_back({{"id", id},
                          {"name", "w" + std::to_string(id)},
                          {"tenant", caller.tenant},
                          {"state", "queued"}});
    return json{{"accepted", {{{"id", id}, {"name", "w" + std::to_string(id)}}}}};
  }
  StatusOr<json> List(const Caller& caller, const ListFilter& filter) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_caller = caller;
    last_filter = filter;
    return json{{"workloads", workloads_}};
  }
  StatusOr<json> Get(const Caller&, std::string_view id) override {
    if (id == "boom") throw std::runtime_error("kaput");
    if (id == "missing") return NotFound("no workload 'missing'");
    return json{{"id", 1}, {"name", std::string(id)}, {"runs", json::array()}};
  }
  Status Cancel(const Caller&, std::string_view id) override {
    if (id == "done") return FailedPrecondition("workload 7 already finished");
    return OkStatus();
  }
  Status SetPriority(const Caller&, std::string_view id, int priority) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_id = std::string(id);
    last_priority = priority;
    return OkStatus();
  }
  Status ReportDemand(const Caller&, std::string_view id, double rps,
                      std::string_view request_class) override {
    if (id == "batch-job") return InvalidArgument("workload batch-job is not realtime");
    last_rps = rps;
    last_class = std::string(request_class);
    return OkStatus();
  }
  StatusOr<json> Gpus(const Caller&) override {
    std::lock_guard<std::mutex> lock(mu_);
    json gpus = json::array();
    for (const json& w : workloads_) {  // a GPU held by each workload with a bad name
      if (w["name"] == "bad\xff\xfe")
        gpus.push_back({{"index", gpus.size()}, {"allocations", {{{"name", w["name"]}}}}});
    }
    return json{{"gpus", gpus}};
  }
  StatusOr<json> Ledger(const Caller&) override {
    if (ledger_down) return Status(StatusCode::kUnavailable, "ledger not ready");
    return json{{"installed_gpu_seconds", 10}};
  }
  StatusOr<json> GpuHistory(const Caller&, const HistoryFilter& filter) override {
    if (filter.gpu == "nope") return NotFound("no GPU 'nope'");
    return json{{"gpu", filter.gpu}, {"minutes", filter.minutes}};
  }
  StatusOr<json> Holds(const Caller& caller, const HoldsFilter& filter) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_caller = caller;
    last_holds = filter;
    return json{{"services", json::object()}, {"decisions", json::array()}};
  }
  StatusOr<json> Events(const Caller&, std::string_view id) override {
    if (id != "job") return NotFound("no workload '" + std::string(id) + "'");
    return json{
        {"events", {{{"at", 1000}, {"kind", "submitted"}, {"run", nullptr}, {"message", "in"}}}}};
  }
  // A log of "line 0\nline 1\n...line 9\n" (70 bytes) for run 3 of "job"; its run ended.
  StatusOr<LogChunk> Logs(const Caller& caller, std::string_view id, const LogQuery& q) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_caller = caller;
    last_log = q;
    if (id != "job") return NotFound("no workload '" + std::string(id) + "'");
    std::string log;
    for (int i = 0; i < 10; ++i) log += "line " + std::to_string(i) + "\n";
    const auto size = static_cast<int64_t>(log.size());
    const int64_t from =
        q.offset < 0 ? std::max<int64_t>(0, size - q.limit) : std::min(q.offset, size);
    return LogChunk{3,
                    from,
                    size,
                    true,
                    log.substr(static_cast<size_t>(from), static_cast<size_t>(q.limit)),
                    "12-34-56"};
  }
  std::string Metrics() override { return "# TYPE airtime_up gauge\nairtime_up 1\n"; }
  bool Healthy(std::string* why) override {
    if (!healthy) *why = "gpu probe failed";
    return healthy;
  }

  int accepted() {
    std::lock_guard<std::mutex> lock(mu_);
    return next_id_ - 1;
  }

  std::string last_body, last_origin, last_id;
  Caller last_caller;
  ListFilter last_filter;
  HoldsFilter last_holds;
  LogQuery last_log;
  int last_priority = 0;
  double last_rps = 0;
  std::string last_class;
  std::atomic<bool> healthy{true};
  std::atomic<bool> ledger_down{false};

 private:
  std::mutex mu_;
  std::vector<json> workloads_;
  int next_id_ = 1;
};

Tokens TestTokens() {
  auto t = Tokens::Parse("admin " + kAdminToken + "\nteam-a " + kTeamAToken + "\n", "test");
  EXPECT_TRUE(t.ok());
  return *t;
}

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(HttpApiOptions{}); }

  void StartServer(HttpApiOptions options) {
    api_.reset();
    api_ = std::make_unique<HttpApi>(plane_, tokens_, options);
    ASSERT_TRUE(api_->Listen("127.0.0.1", 0).ok());
    ASSERT_GT(api_->port(), 0);
    ASSERT_TRUE(api_->Start().ok());
  }
  std::string Addr() const { return "127.0.0.1:" + std::to_string(api_->port()); }
  ApiClient Admin() const { return ApiClient(Addr(), kAdminToken); }
  ApiClient TeamA() const { return ApiClient(Addr(), kTeamAToken); }
  httplib::Client Raw(const std::string& token = kAdminToken) const {
    httplib::Client c("127.0.0.1", api_->port());
    if (!token.empty()) c.set_bearer_token_auth(token);
    return c;
  }
  static std::string ErrorCode(const httplib::Result& r) {
    return json::parse(r->body)["error"]["code"].get<std::string>();
  }
  static std::string ErrorMessage(const httplib::Result& r) {
    return json::parse(r->body)["error"]["message"].get<std::string>();
  }

  FakePlane plane_;
  Tokens tokens_ = TestTokens();
  std::unique_ptr<HttpApi> api_;
};

TEST_F(HttpApiTest, AuthMissingBadTenantAdmin) {
  auto missing = Raw("").Get("/v1/gpus");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 401);
  EXPECT_EQ(ErrorCode(missing), "unauthenticated");
  EXPECT_EQ(missing->get_header_value("WWW-Authenticate"), "Bearer");
  auto bad = Raw("not-the-token-0000000").Get("/v1/gpus");
  EXPECT_EQ(bad->status, 401);
  EXPECT_EQ(ErrorMessage(bad), "invalid token");

  ASSERT_TRUE(TeamA().List({}).ok());
  EXPECT_EQ(plane_.last_caller.tenant, "team-a");
  EXPECT_FALSE(plane_.last_caller.admin);
  ASSERT_TRUE(Admin().List({}).ok());
  EXPECT_TRUE(plane_.last_caller.admin);

  auto no_token = ApiClient(Addr(), "").Gpus();
  EXPECT_EQ(no_token.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(no_token.status().message().find("AIRTIME_TOKEN"), std::string::npos);
}

TEST_F(HttpApiTest, SubmitYamlAndJson) {
  auto yaml = TeamA().Submit("name: x\ngpus: 1\n", "application/yaml");
  ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
  EXPECT_EQ((*yaml)["accepted"][0]["id"], 1);
  EXPECT_EQ(plane_.last_body, "name: x\ngpus: 1\n");
  EXPECT_EQ(plane_.last_origin, "request");
  auto raw = Raw().Post("/v1/workloads", R"({"name": "y"})", "application/json");
  EXPECT_EQ(raw->status, 201);
  EXPECT_EQ(Raw().Post("/v1/workloads", "name: z", "text/yaml; charset=utf-8")->status, 201);
}

TEST_F(HttpApiTest, SubmitErrors) {
  auto bad = TeamA().Submit("bad: 1", "application/yaml");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "request:1: field 'gpus': expected a positive integer");
  auto other = TeamA().Submit("tenant: team-b", "application/yaml");
  EXPECT_EQ(other.status().code(), StatusCode::kPermissionDenied);
  auto form = Raw().Post("/v1/workloads", "a=b", "application/x-www-form-urlencoded");
  EXPECT_EQ(form->status, 415);
  EXPECT_NE(ErrorMessage(form).find("application/yaml"), std::string::npos);
}

// No answer is served in parts: a Range header cut JSON answers (errors too) and repeated
// a log once per range asked for.
TEST_F(HttpApiTest, ARangeHeaderIsIgnored) {
  ASSERT_TRUE(Admin().Submit("name: a", "application/yaml").ok());
  auto raw = Raw();
  for (const char* path : {"/v1/workloads", "/v1/workloads/nope", "/v1/workloads/job/logs"}) {
    auto whole = raw.Get(path);
    ASSERT_TRUE(whole) << path;
    for (const char* range : {"bytes=0-10", "bytes=5-", "bytes=0-,0-,0-,0-", "bytes=-3"}) {
      auto r = raw.Get(path, {{"Range", range}});
      ASSERT_TRUE(r) << path << " " << range;
      EXPECT_EQ(r->status, whole->status) << path << " " << range;
      EXPECT_EQ(r->body, whole->body) << path << " " << range;
      EXPECT_FALSE(r->has_header("Content-Range")) << path << " " << range;
    }
  }
  // One the library cannot read is refused before the request reaches the API, whole too.
  for (const char* range : {"bytes=x", "bytes=0-3,x"}) {
    auto bad = raw.Get("/v1/workloads", {{"Range", range}});
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->status, 416);
    EXPECT_EQ(ErrorCode(bad), "invalid_argument");
    EXPECT_THAT(ErrorMessage(bad), HasSubstr("header 'Range': not understood"));
  }
}

TEST_F(HttpApiTest, ListPassesFilter) {
  ASSERT_TRUE(Admin().Submit("name: a", "application/yaml").ok());
  auto list = Admin().List(ListFilter{"active", "batch", "team-a", 5});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["workloads"].size(), 1u);
  EXPECT_EQ(plane_.last_filter.state, "active");
  EXPECT_EQ(plane_.last_filter.kind, "batch");
  EXPECT_EQ(plane_.last_filter.tenant, "team-a");
  EXPECT_EQ(plane_.last_filter.limit, 5);
  EXPECT_EQ(plane_.last_filter.offset, 0);
  ASSERT_TRUE(Admin().List(ListFilter{"active", "", "", 200, 400}).ok());
  EXPECT_EQ(plane_.last_filter.limit, 200);
  EXPECT_EQ(plane_.last_filter.offset, 400);
  auto bad_limit = Raw().Get("/v1/workloads?limit=-3");
  EXPECT_EQ(bad_limit->status, 400);
  EXPECT_EQ(ErrorMessage(bad_limit),
            "query 'limit': expected an integer from 0 to 2147483647, found '-3'");
  auto other = TeamA().List(ListFilter{"", "", "team-b", 0});
  EXPECT_EQ(other.status().code(), StatusCode::kPermissionDenied);
}

TEST_F(HttpApiTest, HoldsPassesItsFilterAndRefusesBadParameters) {
  auto holds = TeamA().Holds(HoldsFilter{"chat bot", 7});
  ASSERT_TRUE(holds.ok()) << holds.status().ToString();
  EXPECT_EQ(plane_.last_holds.service, "chat bot");
  EXPECT_EQ(plane_.last_holds.limit, 7);
  EXPECT_EQ(plane_.last_caller.tenant, "team-a");
  auto plain = Raw().Get("/v1/holds");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plane_.last_holds.service, "");
  EXPECT_EQ(plane_.last_holds.limit, kDefaultHoldsLimit);
  EXPECT_EQ(Raw().Get("/v1/holds?limit=10000")->status, 200);
  EXPECT_EQ(plane_.last_holds.limit, 10000);
  struct Bad {
    const char* query;
    const char* message;
  };
  for (const Bad& b : {
           Bad{"limit=0", "query 'limit': expected an integer from 1 to 10000, found '0'"},
           Bad{"limit=10001", "query 'limit': expected an integer from 1 to 10000, found '10001'"},
           Bad{"limit=-1", "query 'limit': expected an integer from 1 to 10000, found '-1'"},
           Bad{"limit=1e3", "query 'limit': expected an integer from 1 to 10000, found '1e3'"},
           Bad{"limit=", "query 'limit': expected an integer from 1 to 10000, found ''"},
           Bad{"limit=99999999999999999999999",
               "query 'limit': expected an integer from 1 to 10000, found "
               "'99999999999999999999999'"},
           Bad{"limit=5&limit=6", "query 'limit': given twice"},
           Bad{"service=a&service=b", "query 'service': given twice"},
           Bad{"tenant=team-a", "query 'tenant': unknown (expected service or limit)"},
           Bad{"service=%zz",
               "query: malformed percent-escape at '%zz' (expected %XX, two hex "
               "digits)"},
           Bad{"service=%01", "query 'service': contains a control character"},
           Bad{"service=%ff", "query 'service': not valid UTF-8"},
       }) {
    auto r = Raw().Get(std::string("/v1/holds?") + b.query);
    ASSERT_TRUE(r) << b.query;
    EXPECT_EQ(r->status, 400) << b.query;
    EXPECT_EQ(ErrorCode(r), "invalid_argument") << b.query;
    EXPECT_EQ(ErrorMessage(r), b.message) << b.query;
  }
  auto long_value = Raw().Get("/v1/holds?service=" + std::string(300, 'x'));
  EXPECT_EQ(long_value->status, 400);
  EXPECT_EQ(ErrorMessage(long_value), "query 'service': longer than 256 bytes");
  EXPECT_EQ(Raw("").Get("/v1/holds")->status, 401);
  EXPECT_EQ(Raw().Post("/v1/holds", "", "application/json")->status, 405);
}

TEST_F(HttpApiTest, LogsServeBytesWithTheirPlaceAndRefuseBadQueries) {
  auto r = Raw().Get("/v1/workloads/job/logs?offset=7&limit=7");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "line 1\n");
  EXPECT_EQ(r->get_header_value("X-Airtime-Run"), "3");
  EXPECT_EQ(r->get_header_value("X-Airtime-Offset"), "7");
  EXPECT_EQ(r->get_header_value("X-Airtime-Log-Size"), "70");
  EXPECT_EQ(r->get_header_value("X-Airtime-Run-Ended"), "true");
  EXPECT_EQ(r->get_header_value("X-Airtime-Log-Cut"), "12-34-56");
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/octet-stream");
  EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff");
  // The client reads the whole log in chunks, and the tail.
  auto chunk = TeamA().Logs("job", LogQuery{0, -1, 14});
  ASSERT_TRUE(chunk.ok()) << chunk.status().ToString();
  EXPECT_EQ(chunk->data, "line 8\nline 9\n");
  EXPECT_EQ(chunk->offset, 56);
  EXPECT_TRUE(chunk->run_ended);
  EXPECT_EQ(plane_.last_caller.tenant, "team-a");
  EXPECT_EQ(plane_.last_log.run, 0);
  EXPECT_EQ(Admin().Logs("nope", LogQuery{}).status().code(), StatusCode::kNotFound);
  struct Bad {
    const char* query;
    const char* message;
  };
  for (const Bad& b : {
           Bad{"run=-1", "query 'run': expected a run id (0: the latest), found '-1'"},
           Bad{"offset=-2", "query 'offset': expected a byte offset (-1: the end), found '-2'"},
           Bad{"offset=x", "query 'offset': expected a byte offset (-1: the end), found 'x'"},
           Bad{"limit=0", "query 'limit': expected an integer from 1 to 16777216, found '0'"},
           Bad{"limit=16777217",
               "query 'limit': expected an integer from 1 to 16777216, found '16777217'"},
           Bad{"run=1&run=2", "query 'run': given twice"},
           Bad{"follow=1", "query 'follow': unknown (expected run, stream, offset or limit)"},
           Bad{"stream=both", "query 'stream': expected stdout or stderr, found 'both'"},
       }) {
    auto bad = Raw().Get(std::string("/v1/workloads/job/logs?") + b.query);
    ASSERT_TRUE(bad) << b.query;
    EXPECT_EQ(bad->status, 400) << b.query;
    EXPECT_EQ(ErrorMessage(bad), b.message) << b.query;
  }
  EXPECT_EQ(Raw("").Get("/v1/workloads/job/logs")->status, 401);
  auto events = Admin().Events("job");
  ASSERT_TRUE(events.ok());
  EXPECT_EQ((*events)["events"][0]["kind"], "submitted");
  EXPECT_EQ(Admin().Events("nope").status().code(), StatusCode::kNotFound);
}

TEST_F(HttpApiTest, GetCancelAndErrorMapping) {
  auto got = Admin().Get("chat");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["name"], "chat");
  auto spaced = Admin().Get("a b/c");  // escaped into one path segment
  ASSERT_TRUE(spaced.ok()) << spaced.status().ToString();
  EXPECT_EQ((*spaced)["name"], "a b/c");
  auto missing = Raw().Get("/v1/workloads/missing");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(ErrorCode(missing), "not_found");
  EXPECT_EQ(Admin().Get("missing").status().code(), StatusCode::kNotFound);

  auto cancelled = Admin().Cancel("12");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ((*cancelled)["cancelled"], "12");
  auto done = Raw().Delete("/v1/workloads/done");
  EXPECT_EQ(done->status, 409);
  EXPECT_EQ(ErrorCode(done), "failed_precondition");
  EXPECT_EQ(Admin().Cancel("done").status().message(), "workload 7 already finished");

  auto boom = Raw().Get("/v1/workloads/boom");
  EXPECT_EQ(boom->status, 500);
  EXPECT_EQ(ErrorMessage(boom), "internal error: kaput");

  plane_.ledger_down = true;
  EXPECT_EQ(Raw().Get("/v1/ledger")->status, 503);
  EXPECT_EQ(Admin().Ledger().status().code(), StatusCode::kUnavailable);
}

TEST_F(HttpApiTest, PriorityAndDemand) {
  auto p = Admin().SetPriority("chat", 5);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(plane_.last_id, "chat");
  EXPECT_EQ(plane_.last_priority, 5);
  EXPECT_EQ((*p)["priority"], 5);
  auto d = Admin().ReportDemand("chat", 12.5);
  ASSERT_TRUE(d.ok());
  EXPECT_DOUBLE_EQ(plane_.last_rps, 12.5);
  EXPECT_EQ(plane_.last_class, "");
  EXPECT_FALSE(d->contains("class"));
  // A class for a service whose demand is split by class goes through, and comes back.
  auto code = Admin().ReportDemand("chat", 3, "code");
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(plane_.last_class, "code");
  EXPECT_EQ((*code)["class"], "code");
  EXPECT_EQ(Admin().ReportDemand("batch-job", 1).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(HttpApiTest, MalformedPriorityAndDemandBodiesNameTheField) {
  auto post = [&](const std::string& path, const std::string& body) {
    auto r = Raw().Post(path, body, "application/json");
    EXPECT_EQ(r->status, 400) << body;
    return ErrorMessage(r);
  };
  const std::string prio = "/v1/workloads/chat/priority";
  EXPECT_EQ(post(prio, R"({"priority": "high"})"),
            "field 'priority': expected an integer from -2147483648 to 2147483647, got \"high\"");
  EXPECT_EQ(post(prio, R"({"priority": 1.5})"),
            "field 'priority': expected an integer from -2147483648 to 2147483647, got 1.5");
  EXPECT_EQ(
      post(prio, R"({"priority": 99999999999})"),
      "field 'priority': expected an integer from -2147483648 to 2147483647, got 99999999999");
  EXPECT_EQ(
      post(prio, "{priority: 5")
          .rfind("field 'priority': expected a JSON object body such as {\"priority\": 5}; body: "
                 "not valid JSON: ",
                 0),
      0u);
  EXPECT_EQ(post(prio, "{}"), "field 'priority': missing (expected {\"priority\": 5})");
  EXPECT_EQ(post(prio, R"({"priority": 1, "x": 2})"),
            "field 'x': unknown (expected {\"priority\": 5})");
  const std::string demand = "/v1/workloads/chat/demand";
  EXPECT_EQ(post(demand, R"({"rps": -1})"),
            "field 'rps': expected a request rate from 0 to 1e9 a second, got -1");
  EXPECT_EQ(post(demand, R"({"rps": 1e308})"),
            "field 'rps': expected a request rate from 0 to 1e9 a second, got 1e+308");
  EXPECT_EQ(post(demand, "[]"),
            "field 'rps': expected a JSON object body such as {\"rps\": 12.5} or {\"rps\": "
            "12.5, \"class\": \"code\"}");
  EXPECT_EQ(post(demand, R"({"rps": 1, "class": ["code"]})"),
            "field 'class': expected the name of one of the service's request classes, got "
            "[\"code\"]");
}

TEST_F(HttpApiTest, GpusMetricsHealthz) {
  EXPECT_TRUE(Admin().Gpus().ok());
  auto metrics = Raw("").Get("/metrics");  // no token needed
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metrics->body, "# TYPE airtime_up gauge\nairtime_up 1\n");
  EXPECT_TRUE(Admin().Health().ok());
  plane_.healthy = false;
  auto health = Raw("").Get("/healthz");
  EXPECT_EQ(health->status, 503);
  EXPECT_EQ(health->body, "gpu probe failed\n");
  EXPECT_EQ(Admin().Health().code(), StatusCode::kUnavailable);
  EXPECT_NE(Admin().Health().message().find("gpu probe failed"), std::string::npos);
}

// docs/api.md: an unknown query parameter is a 400 that names it, also where an endpoint
// takes none (a `?window=1h` on /v1/ledger used to be ignored, answering the whole ledger);
// the token is checked first; /metrics and /healthz ignore a query.
TEST_F(HttpApiTest, EndpointsThatTakeNoParametersRefuseAQuery) {
  struct Case {
    const char* path;
    const char* name;
  };
  for (const Case& c : {Case{"/v1/ledger?window=1h", "window"}, Case{"/v1/gpus?x=1", "x"},
                        Case{"/v1/workloads/chat?verbose", "verbose"},
                        Case{"/v1/workloads/job/events?since=5&x=1", "since"}}) {
    auto r = Raw().Get(c.path);
    ASSERT_TRUE(r) << c.path;
    EXPECT_EQ(r->status, 400) << c.path;
    EXPECT_EQ(ErrorMessage(r), std::string("query '") + c.name +
                                   "': unknown (this endpoint takes no query parameters)")
        << c.path;
  }
  auto demand = Raw().Post("/v1/workloads/chat/demand?rps=5", R"({"rps": 5})", "application/json");
  ASSERT_TRUE(demand);
  EXPECT_EQ(demand->status, 400);
  EXPECT_EQ(Raw().Get("/v1/gpus?%zz")->status, 400);  // malformed, as anywhere
  EXPECT_EQ(Raw().Get("/v1/ledger?")->status, 200);   // an empty query is none
  EXPECT_EQ(Raw("").Get("/v1/ledger?window=1h")->status, 401);
  EXPECT_EQ(Raw("").Get("/healthz?probe=1")->status, 200);
  EXPECT_EQ(Raw("").Get("/metrics?target=x")->status, 200);
}

TEST_F(HttpApiTest, MetricsCanNeedAToken) {
  HttpApiOptions o;
  o.metrics_need_token = true;
  StartServer(o);
  EXPECT_EQ(Raw("").Get("/metrics")->status, 401);
  EXPECT_EQ(Raw().Get("/metrics")->status, 200);
}

// The dashboard's files need no token, carry a strict CSP, an ETag that answers 304, and
// caching by kind; a build without the UI answers / with a page that says how to build it.
TEST_F(HttpApiTest, DashboardIsServedWithoutATokenUnderAStrictPolicy) {
  auto page = Raw("").Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  const std::string csp = page->get_header_value("Content-Security-Policy");
  EXPECT_THAT(csp, HasSubstr("default-src 'none'"));
  EXPECT_THAT(csp, HasSubstr("script-src 'self'"));
  EXPECT_THAT(csp, Not(HasSubstr("unsafe")));
  EXPECT_EQ(page->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(Raw("").Get("/index.html")->body, page->body);
  EXPECT_EQ(Raw("").Get("/?x=1")->status, 200);
  if (!WebAssetsMissing().empty()) {
    EXPECT_THAT(page->body, HasSubstr("dashboard was not built"));
    EXPECT_THAT(page->body, HasSubstr(std::string(WebAssetsMissing())));
    EXPECT_EQ(Raw("").Get("/assets/index.js")->status, 404);
    return;
  }
  // Built: the page loads its script from assets/, with no inline script.
  EXPECT_THAT(page->body, Not(HasSubstr("<script>")));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page->body, m, std::regex(R"re(src="(/assets/[^"]+\.js)")re")))
      << page->body;
  auto script = Raw("").Get(m[1].str());
  ASSERT_TRUE(script);
  EXPECT_EQ(script->status, 200);
  EXPECT_EQ(script->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_THAT(script->get_header_value("Cache-Control"), HasSubstr("immutable"));
  EXPECT_EQ(page->get_header_value("Cache-Control"), "no-cache");
  const std::string etag = page->get_header_value("ETag");
  ASSERT_FALSE(etag.empty());
  auto again = Raw("").Get("/", {{"If-None-Match", etag}});
  EXPECT_EQ(again->status, 304);
  EXPECT_TRUE(again->body.empty());
  EXPECT_EQ(Raw("").Get("/", {{"If-None-Match", "\"other\""}})->status, 200);
  EXPECT_EQ(Raw("").Get("/assets/nothing.js")->status, 404);
  auto post = Raw("").Post("/", "", "text/plain");
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET");
}

// Brotli at cpp-httplib's fixed quality 11 takes a second for a few hundred KB: a client
// that accepts it (every browser) gets gzip instead.
TEST_F(HttpApiTest, AnswersAreNeverBrotli) {
  auto both = Raw().Get("/metrics", {{"Accept-Encoding", "gzip, deflate, br, zstd"}});
  ASSERT_TRUE(both);
  EXPECT_EQ(both->status, 200);
  EXPECT_NE(both->get_header_value("Content-Encoding"), "br");
  auto br = Raw().Get("/v1/gpus", {{"Accept-Encoding", "br;q=1.0"}});
  ASSERT_TRUE(br);
  EXPECT_EQ(br->status, 200);
  EXPECT_EQ(br->get_header_value("Content-Encoding"), "");
}

TEST_F(HttpApiTest, HistoryPassesItsFilter) {
  auto all = Raw().Get("/v1/gpus/history");
  ASSERT_EQ(all->status, 200) << all->body;
  EXPECT_EQ(json::parse(all->body), (json{{"gpu", ""}, {"minutes", 1440}}));
  auto one = Raw().Get("/v1/gpus/history?gpu=GPU-x&minutes=60");
  EXPECT_EQ(json::parse(one->body), (json{{"gpu", "GPU-x"}, {"minutes", 60}}));
  EXPECT_EQ(Raw().Get("/v1/gpus/history?gpu=nope")->status, 404);
  auto bad = Raw().Get("/v1/gpus/history?minutes=0");
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(ErrorMessage(bad), "query 'minutes': expected an integer from 1 to 1440, found '0'");
  EXPECT_EQ(Raw("").Get("/v1/gpus/history")->status, 401);
}

TEST_F(HttpApiTest, UnknownRoute404WrongMethod405) {
  auto unknown = Raw().Get("/v2/nothing");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(ErrorCode(unknown), "not_found");
  auto wrong = Raw().Put("/v1/gpus", "x", "text/plain");
  EXPECT_EQ(wrong->status, 405);
  EXPECT_EQ(wrong->get_header_value("Allow"), "GET");
  auto wrong2 = Raw().Get("/v1/workloads/chat/priority");
  EXPECT_EQ(wrong2->status, 405);
  EXPECT_EQ(ErrorMessage(wrong2),
            "method GET not allowed on /v1/workloads/chat/priority (allowed: POST)");
}

TEST_F(HttpApiTest, BodyOverLimitIs413) {
  HttpApiOptions o;
  o.max_body_bytes = 1024;
  StartServer(o);
  auto big = Raw().Post("/v1/workloads", std::string(4096, 'x'), "application/yaml");
  ASSERT_TRUE(big) << httplib::to_string(big.error());
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(ErrorCode(big), "resource_exhausted");
  EXPECT_EQ(ErrorMessage(big),
            "request body of 4096 bytes is over the server's limit of 1024 bytes (--max-body)");
  auto small = Raw().Post("/v1/workloads", std::string(512, 'x'), "application/yaml");
  EXPECT_EQ(small->status, 201);
  EXPECT_EQ(TeamA().Submit(std::string(4096, 'x'), "application/yaml").status().code(),
            StatusCode::kResourceExhausted);
}

// A request's body length is settled before anything reads it (request_framing.h): one
// without a length has an empty body, and is answered at once (a wrong method's 405 once
// waited out the 60 s body timeout for a 408); a length over the limit gets its 413 before
// the body is sent; a malformed or ambiguous length is refused. Each refusal closes the
// connection, its body unread.
TEST_F(HttpApiTest, ABodyLengthIsSettledBeforeTheBodyIsRead) {
  HttpApiOptions o;
  o.max_body_bytes = 1024;
  StartServer(o);
  // One request on a new connection; the answer and whether the server closed, within 3 s.
  auto exchange = [&](const std::string& head) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(api_->port()));
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
    send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    std::string got;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    bool closed = false;
    while (std::chrono::steady_clock::now() < until && got.find("}") == std::string::npos) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      char buf[4096];
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        closed = true;
        break;
      }
      got.append(buf, static_cast<size_t>(n));
    }
    if (!closed) {  // the answer is in: does the connection close after it?
      pollfd p{fd, POLLIN, 0};
      char c;
      closed = poll(&p, 1, 1000) > 0 && recv(fd, &c, 1, 0) == 0;
    }
    close(fd);
    return std::make_pair(got, closed);
  };
  const std::string auth = "Authorization: Bearer " + std::string(kTeamAToken) + "\r\n";
  auto [put, put_closed] = exchange("PUT /v1/workloads HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n");
  EXPECT_THAT(put, HasSubstr("HTTP/1.1 405"));
  EXPECT_THAT(put, HasSubstr("allowed: POST, GET"));
  EXPECT_FALSE(put_closed);  // nothing was left unread
  // Over the limit: the 413 comes though the client goes on sending (the connection drains
  // before it closes), and in place of `100 Continue` when the client asks first.
  const std::string big_head = "POST /v1/workloads HTTP/1.1\r\nHost: x\r\n" + auth +
                               "Connection: keep-alive\r\nContent-Type: application/yaml\r\n"
                               "Content-Length: 2000000\r\n";
  for (const std::string& rest :
       {"\r\n" + std::string(200000, 'x'), std::string("Expect: 100-continue\r\n\r\n")}) {
    auto [big, big_closed] = exchange(big_head + rest);
    EXPECT_THAT(big, ::testing::StartsWith("HTTP/1.1 413"));
    EXPECT_THAT(big, HasSubstr("request body of 2000000 bytes is over the server's limit of 1024 "
                               "bytes (--max-body)"));
    EXPECT_THAT(big, HasSubstr("Connection: close"));
    EXPECT_THAT(big, Not(HasSubstr("Keep-Alive")));
    EXPECT_TRUE(big_closed);
  }
  for (const auto& [request, status, message] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"POST", "Content-Length: 1x\r\n",
            "400 header 'Content-Length': expected a byte count, found '1x'"},
           {"POST", "Content-Length: -5\r\n",
            "400 header 'Content-Length': expected a byte count, found '-5'"},
           {"POST", "Content-Length: 99999999999999999999999\r\n", "400 expected a byte count"},
           {"POST", "Content-Length: 15\r\nContent-Length: 3\r\n",
            "400 header 'Content-Length': given twice with different values ('15', '3')"},
           {"POST", "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
            "411 header 'Transfer-Encoding': not taken (found 'chunked'); send the body with "
            "Content-Length"},
           {"POST", "Transfer-Encoding: gzip, chunked\r\n", "411 header 'Transfer-Encoding'"},
           {"GET", "Content-Length: 3\r\n",
            "400 a GET request has no body (found Content-Length: 3)"}}) {
    auto [got, closed] = exchange(request + " /v1/workloads HTTP/1.1\r\nHost: x\r\n" + auth +
                                  "Content-Type: application/yaml\r\n" + status + "\r\nabc");
    const std::string code = message.substr(0, 3), text = message.substr(4);
    EXPECT_THAT(got, ::testing::StartsWith("HTTP/1.1 " + code)) << status;
    EXPECT_THAT(got, HasSubstr(text)) << status;
    EXPECT_TRUE(closed) << status;
  }
  // The header that marks a refused request is the server's: a client's own is dropped.
  auto [spoof, spoof_closed] = exchange("GET /v1/workloads HTTP/1.1\r\nHost: x\r\n" + auth +
                                        "X-Airtime-Framing-Error: 400 nothing is wrong\r\n\r\n");
  EXPECT_THAT(spoof, ::testing::StartsWith("HTTP/1.1 200"));
  EXPECT_FALSE(spoof_closed);
  // The same length given twice is one length.
  auto [twice, twice_closed] = exchange(
      "POST /v1/workloads HTTP/1.1\r\nHost: x\r\n" + auth +
      "Content-Type: application/yaml\r\nContent-Length: 7\r\nContent-Length: 7\r\n\r\nname: q");
  EXPECT_THAT(twice, HasSubstr("HTTP/1.1 201"));
  EXPECT_FALSE(twice_closed);
  // A URL over the library's limit is the client's error, not an internal one.
  auto long_url = Raw().Get("/v1/workloads/" + std::string(9000, 'a'));
  ASSERT_TRUE(long_url);
  EXPECT_EQ(long_url->status, 414);
  EXPECT_EQ(ErrorCode(long_url), "invalid_argument");
}

TEST_F(HttpApiTest, ConcurrentBurstAllAccepted) {
  HttpApiOptions o;
  o.tenant_rate.per_second = 0;  // this test is of concurrency, not of the rate limit
  StartServer(o);
  constexpr int kThreads = 16, kEach = 125;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ApiClient c = TeamA();
      for (int i = 0; i < kEach; ++i) ok += c.Submit("name: burst", "application/yaml").ok();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kEach);
  EXPECT_EQ(plane_.accepted(), kThreads * kEach);
}

// A tenant over its API calls is answered 429 with Retry-After and a message that says why;
// the admin and other tenants are not held back, and the calls refused reach nothing.
TEST_F(HttpApiTest, ATenantOverItsCallRateIs429) {
  HttpApiOptions o;
  o.tenant_rate = {1, 5};  // 5 at once, then one a second
  StartServer(o);
  auto team_a = Raw(kTeamAToken);
  int passed = 0, refused = 0;
  std::string body, retry_after;
  for (int i = 0; i < 8; ++i) {
    auto r = team_a.Get("/v1/gpus");
    ASSERT_TRUE(r);
    if (r->status == 200) ++passed;
    if (r->status != 429) continue;
    ++refused;
    body = r->body;
    retry_after = r->get_header_value("Retry-After");
  }
  EXPECT_EQ(passed, 5);
  ASSERT_EQ(refused, 3);
  const json error = json::parse(body)["error"];
  EXPECT_EQ(error["code"], "resource_exhausted");
  EXPECT_NE(error["message"].get<std::string>().find(
                "tenant 'team-a' is over its API calls (1 a second, 5 at once): retry in"),
            std::string::npos)
      << body;
  EXPECT_EQ(retry_after, "1");
  const int submitted = plane_.accepted();
  auto post = team_a.Post("/v1/workloads", "name: x\n", "application/yaml");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 429);
  EXPECT_EQ(plane_.accepted(), submitted);  // refused before the plane
  for (int i = 0; i < 20; ++i) ASSERT_EQ(Raw(kAdminToken).Get("/v1/gpus")->status, 200);
  EXPECT_EQ(Raw("").Get("/healthz")->status, 200);
}

// A body nested 60,000 levels deep (about 120 KB) once overflowed a worker's stack; it is
// refused before anything recursive runs, for an id that exists or not.
TEST_F(HttpApiTest, DeeplyNestedJsonBodiesAreRefusedNotACrash) {
  const int kDepth = 60000;
  const std::string arrays = std::string(kDepth, '[') + std::string(kDepth, ']');
  std::string objects;
  for (int i = 0; i < kDepth; ++i) objects += "{\"a\":";
  objects += "1" + std::string(kDepth, '}');
  for (const std::string path : {"/v1/workloads/nosuch/priority", "/v1/workloads/chat/demand"}) {
    const std::string field = path.find("priority") != std::string::npos ? "priority" : "rps";
    for (const std::string& inner : {arrays, objects}) {
      const std::string body = "{\"" + field + "\": " + inner + "}";
      auto r = Raw().Post(path, body, "application/json");
      ASSERT_TRUE(r) << path << ": the server went away: " << httplib::to_string(r.error());
      EXPECT_EQ(r->status, 400) << path;
      EXPECT_NE(ErrorMessage(r).find("nested deeper than"), std::string::npos) << ErrorMessage(r);
    }
  }
  auto submit = Raw().Post("/v1/workloads", arrays, "application/json");
  ASSERT_TRUE(submit);
  EXPECT_EQ(submit->status, 400);
  EXPECT_NE(ErrorMessage(submit).find("nested deeper than"), std::string::npos);
  EXPECT_TRUE(Admin().Health().ok());  // still serving
}

// A workload name that is not UTF-8 (a row of a store written by an older version) once
// made every answer that held it a 500: it is rendered with U+FFFD instead.
TEST_F(HttpApiTest, AnswersWithInvalidUtf8AreRenderedNotA500) {
  ASSERT_EQ(Raw().Post("/v1/workloads", "invalid-utf8", "application/yaml")->status, 201);
  for (const char* path : {"/v1/workloads", "/v1/gpus"}) {
    auto r = Raw().Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    EXPECT_NE(r->body.find("bad\xEF\xBF\xBD"), std::string::npos) << r->body;
  }
  auto list = Admin().List(ListFilter{});
  ASSERT_TRUE(list.ok()) << list.status().ToString();
}

TEST_F(HttpApiTest, ListQueriesAreValidatedAndBounded) {
  auto get = [&](const std::string& query) {
    auto r = Raw().Get("/v1/workloads?" + query);
    EXPECT_TRUE(r) << query;
    return r;
  };
  auto bad = [&](const std::string& query, const std::string& message) {
    auto r = get(query);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << query << ": " << r->body;
    EXPECT_NE(ErrorMessage(r).find(message), std::string::npos) << query << ": " << r->body;
  };
  bad("state=bogus", "query 'state': expected one of");
  bad("kind=bogus", "query 'kind': expected one of");
  bad("limit=abc", "query 'limit': expected an integer from 0 to 2147483647, found 'abc'");
  bad("limit=+1", "query 'limit': expected an integer from 0 to 2147483647, found '+1'");
  bad("limit=1&limit=2", "query 'limit': given twice");
  bad("colour=red", "query 'colour': unknown");
  bad("tenant=a%00b", "query 'tenant'");
  bad("tenant=%ff", "query 'tenant'");
  bad("state=%zz", "query: malformed percent-escape");
  std::string many;
  for (int i = 0; i < 40; ++i) many += "state=queued&";
  bad(many, "query: more than");
  bad("tenant=" + std::string(3000, 'a'), "query: longer than");
  EXPECT_EQ(get("state=active&kind=batch&limit=3&tenant=team-a")->status, 200);
  EXPECT_EQ(plane_.last_filter.limit, 3);
  EXPECT_EQ(get("state=queued")->status, 200);
  EXPECT_EQ(get("")->status, 200);
}

// Runs `airtime ARGS...` through AddClientCommands in this process.
struct CliResult {
  int exit_code;
  std::string out, err;
};

CliResult RunCli(std::vector<std::string> args) {
  CLI::App app{"airtime"};
  app.require_subcommand(1);
  int exit_code = 0;
  AddClientCommands(app, &exit_code);
  args.insert(args.begin(), "airtime");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e);
  }
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  return {exit_code, out.str(), err.str()};
}

TEST_F(HttpApiTest, CliCommandsAgainstTheServer) {
  ::unsetenv("AIRTIME_TOKEN");
  ::unsetenv("AIRTIME_ADDR");
  const std::string dir = ::testing::TempDir() + "/cli_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/w.yaml") << "name: x\n";
  std::ofstream(dir + "/tokens") << "admin " << kAdminToken << "\n";
  const std::vector<std::string> common = {"--addr", Addr(), "--data", dir};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.end(), common.begin(), common.end());
    return RunCli(args);
  };
  CliResult submit = run({"submit", dir + "/w.yaml"});
  EXPECT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_EQ(submit.out, "1\tw1\n");
  CliResult ls = run({"ls"});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out.rfind("ID  NAME", 0), 0u) << ls.out;
  EXPECT_EQ(plane_.last_filter.state, "active");
  EXPECT_EQ(run({"ls", "--all"}).exit_code, 0);
  EXPECT_EQ(plane_.last_filter.state, "");
  CliResult js = run({"ls", "--json", "--state", "queued"});
  EXPECT_EQ(json::parse(js.out)["workloads"].size(), 1u);
  EXPECT_EQ(run({"priority", "chat", "7"}).out, "priority of chat set to 7\n");
  EXPECT_EQ(plane_.last_priority, 7);
  EXPECT_EQ(run({"demand", "chat", "3.5"}).out, "demand of chat set to 3.5 rps\n");
  EXPECT_EQ(run({"cancel", "12"}).out, "cancelled 12\n");
  EXPECT_NE(run({"describe", "chat"}).out.find("Name:"), std::string::npos);
  EXPECT_NE(run({"gpus"}).out.find("INDEX"), std::string::npos);
  EXPECT_NE(run({"ledger"}).out.find("installed"), std::string::npos);
  CliResult top = run({"top", "--once"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_EQ(top.out.rfind("airtime top: 0 GPUs, 1 active workloads", 0), 0u) << top.out;

  CliResult missing = run({"describe", "missing"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "airtime: error: no workload 'missing'\n");
  CliResult bad_token = RunCli({"gpus", "--addr", Addr(), "--token", "wrong-token-0000000000"});
  EXPECT_EQ(bad_token.exit_code, 1);
  EXPECT_EQ(bad_token.err, "airtime: error: invalid token\n");
  CliResult down = RunCli({"gpus", "--addr", "127.0.0.1:1", "--token", "t"});
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_NE(down.err.find("cannot reach airtime at http://127.0.0.1:1"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(HttpApiListen, RefusesNonLoopbackWithoutAllowRemote) {
  FakePlane plane;
  Tokens tokens = TestTokens();
  HttpApi api(plane, tokens);
  const Status st = api.Listen("0.0.0.0", 0);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--listen-remote"), std::string::npos) << st.message();
  HttpApiOptions o;
  o.allow_remote = true;
  HttpApi remote(plane, tokens, o);
  EXPECT_TRUE(remote.Listen("0.0.0.0", 0).ok());
  EXPECT_GT(remote.port(), 0);
  EXPECT_EQ(remote.Start().code(), StatusCode::kOk);
  remote.Stop();
  remote.Stop();  // idempotent
}

TEST(HttpApiListen, LoopbackHosts) {
  for (const char* h : {"127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"}) {
    EXPECT_TRUE(IsLoopbackHost(h)) << h;
  }
  for (const char* h : {"0.0.0.0", "10.0.0.1", "::", "example.com", ""}) {
    EXPECT_FALSE(IsLoopbackHost(h)) << h;
  }
}

TEST(HttpApiListen, StartNeedsListenAndBusyPortFails) {
  FakePlane plane;
  Tokens tokens = TestTokens();
  HttpApi first(plane, tokens);
  EXPECT_EQ(first.Start().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(first.Listen("127.0.0.1", 0).ok());
  HttpApi second(plane, tokens);
  const Status st = second.Listen("127.0.0.1", first.port());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
}

TEST(ApiClientTest, UnreachableDaemonSaysHow) {
  auto r = ApiClient("127.0.0.1:1", "t").Gpus();
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message().rfind("cannot reach airtime at http://127.0.0.1:1: ", 0), 0u)
      << r.status().message();
  EXPECT_NE(r.status().message().find("(is `airtime server` running? set AIRTIME_ADDR)"),
            std::string::npos);
}

TEST(ApiClientTest, NormalizesAddresses) {
  EXPECT_EQ(NormalizeApiAddress(""), "http://127.0.0.1:8470");
  EXPECT_EQ(NormalizeApiAddress("127.0.0.1:9000"), "http://127.0.0.1:9000");
  EXPECT_EQ(NormalizeApiAddress("http://host:1/"), "http://host:1");
  EXPECT_EQ(NormalizeApiAddress("host"), "http://host:8470");
  EXPECT_EQ(NormalizeApiAddress("[::1]"), "http://[::1]:8470");
  EXPECT_EQ(NormalizeApiAddress("[::1]:9"), "http://[::1]:9");
  EXPECT_EQ(EscapePathSegment("a b/c"), "a%20b%2Fc");
}

TEST(Errors, StatusHttpMapping) {
  EXPECT_EQ(HttpStatusFor(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kAlreadyExists), 409);
  EXPECT_EQ(HttpStatusFor(StatusCode::kResourceExhausted), 413);
  EXPECT_EQ(HttpStatusFor(StatusCode::kOutOfRange), 500);
  EXPECT_EQ(StatusCodeFromName("permission_denied"), StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusCodeFromName("nonsense"), StatusCode::kInternal);
  EXPECT_EQ(ErrorJson(NotFound("x")).dump(), R"({"error":{"code":"not_found","message":"x"}})");
}

}  // namespace
}  // namespace airtime
