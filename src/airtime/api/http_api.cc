// HttpApi: routing, authentication, body parsing and error answers over cpp-httplib.
#include "airtime/api/http_api.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <functional>
#include <regex>
#include <thread>
#include <vector>

#include "airtime/api/bounded_json.h"
#include "airtime/api/connection_guard.h"
#include "airtime/api/errors.h"
#include "airtime/api/request_framing.h"
#include "airtime/api/request_parse.h"
#include "airtime/api/web_ui.h"
#include "airtime/base/strings.h"

namespace airtime {
namespace {

using nlohmann::json;

// Submissions are workload lists: a few levels of nesting; 64 is ample.
constexpr int kMaxJsonDepth = 64;

ConnectionLimits LimitsOf(const HttpApiOptions& o) {
  ConnectionLimits l;
  l.header_timeout = std::chrono::milliseconds(o.header_timeout_ms);
  l.body_timeout = std::chrono::milliseconds(o.body_timeout_ms);
  l.keepalive_timeout = std::chrono::milliseconds(o.keepalive_timeout_ms);
  l.write_timeout = std::chrono::milliseconds(o.write_timeout_ms);
  l.max_per_address = o.max_connections_per_address;
  l.min_threads = o.threads;
  l.max_threads = o.max_threads;
  return l;
}

// What a route handler sees.
struct Call {
  const httplib::Request& req;
  const Caller& caller;
  std::string arg;  // the {id-or-name} of the path, when it has one
};

using Handler = std::function<void(const Call&, httplib::Response&)>;

struct Route {
  std::string method;
  std::regex pattern;
  bool needs_token;
  Handler handler;
  // How the route takes a query string: its handler parses and checks it; none is allowed
  // (any parameter is a 400 that names it, as an unknown one is where there are some); or
  // any is ignored (/metrics and /healthz, which scrapers and probes may decorate).
  enum class Query { kOwn, kNone, kIgnored } query = Query::kNone;
};

// The query string of a request's target (what follows '?'; empty without one), as sent.
std::string_view QueryOf(const httplib::Request& req) {
  const size_t q = req.target.find('?');
  return q == std::string::npos ? std::string_view() : std::string_view(req.target).substr(q + 1);
}

void WriteJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(DumpJson(body) + "\n", "application/json");
}

void WriteError(httplib::Response& res, const Status& st) {
  WriteJson(res, HttpStatusFor(st.code()), ErrorJson(st));
}

void Reply(httplib::Response& res, const StatusOr<json>& answer, int ok_status = 200) {
  if (answer.ok()) {
    WriteJson(res, ok_status, *answer);
  } else {
    WriteError(res, answer.status());
  }
}

std::string MediaType(const httplib::Request& req) {
  const std::string ct = req.get_header_value("Content-Type");
  return ToLower(Trim(std::string_view(ct).substr(0, ct.find(';'))));
}

Status CheckWorkloadContentType(const httplib::Request& req) {
  static const char* kAccepted[] = {"",          "application/json",   "application/yaml",
                                    "text/yaml", "application/x-yaml", "text/x-yaml"};
  const std::string mt = MediaType(req);
  for (const char* a : kAccepted) {
    if (mt == a) return OkStatus();
  }
  return Status(StatusCode::kInvalidArgument,
                "Content-Type " + mt +
                    ": expected application/json or application/yaml (curl: -H "
                    "'Content-Type: application/yaml' --data-binary @FILE)");
}

// cpp-httplib 0.11 (Debian 12's) compresses an answer with Brotli whenever the client accepts
// "br", at Brotli's highest quality (11), with no setting to change it: measured on a daemon
// with 1,000 fake GPUs, /v1/gpus (340 KB) took 1.0 s with Brotli against 15 ms with gzip,
// and every browser accepts "br", so the dashboard waited seconds for each refresh. So the
// "br" coding is taken out of what the client accepts; gzip (or none) is used instead.
// The Request is the library's own non-const object, handed to handlers as const.
void RefuseBrotli(const httplib::Request& req) {
  auto& headers = const_cast<httplib::Request&>(req).headers;
  auto [from, to] = headers.equal_range("Accept-Encoding");
  for (auto it = from; it != to; ++it) {
    std::string kept;
    for (std::string_view coding : Split(it->second, ',')) {
      const std::string_view name = Trim(coding.substr(0, coding.find(';')));
      if (ToLower(std::string(name)) == "br") continue;
      kept += (kept.empty() ? "" : ", ") + std::string(Trim(coding));
    }
    it->second = kept;
  }
}

// The dashboard's files (web_ui.h): no token, the same for every caller.
void ServeWebUi(const httplib::Request& req, const std::string& path, httplib::Response& res) {
  const WebAnswer a = AnswerWebUi(path, req.get_header_value("If-None-Match"));
  res.status = a.status;
  for (const auto& [k, v] : a.headers) res.set_header(k, v);
  if (a.status != 304) res.set_content(a.body.data(), a.body.size(), a.content_type);
}

}  // namespace

bool IsLoopbackHost(const std::string& host_in) {
  std::string host = host_in;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (ToLower(host) == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  }
  return false;
}

struct HttpApi::Impl {
  Impl(ControlPlane& p, const Tokens& t, HttpApiOptions o)
      : plane(p), tokens(t), options(o), rate(o.tenant_rate), server(LimitsOf(o)) {}

  void AddRoutes();
  void Add(std::string method, const std::string& pattern, bool needs_token, Handler h,
           Route::Query query = Route::Query::kNone) {
    routes.push_back({std::move(method), std::regex(pattern), needs_token, std::move(h), query});
  }
  void Configure();
  void Dispatch(const httplib::Request& req, httplib::Response& res);
  void Handle(const Route& r, const httplib::Request& req, std::string arg, httplib::Response& res);
  httplib::Server::HandlerResponse FillError(const httplib::Request& req, httplib::Response& res);

  ControlPlane& plane;
  const Tokens& tokens;
  HttpApiOptions options;
  TenantRate rate;
  GuardedServer server;
  std::vector<Route> routes;
  std::thread thread;
  bool bound = false;
  std::atomic<bool> done{false};
};

void HttpApi::Impl::AddRoutes() {
  const std::string one = "/v1/workloads/([^/]+)";
  Add("POST", "/v1/workloads", true, [this](const Call& c, httplib::Response& res) {
    const Status ct = CheckWorkloadContentType(c.req);
    if (!ct.ok()) return WriteJson(res, 415, ErrorJson(ct));
    if (MediaType(c.req) == "application/json") {
      // JSON is bounded before the YAML parser sees it (YAML flow style passes the scan).
      const Status bounded =
          CheckJsonBounds(c.req.body, "request", {options.max_body_bytes, kMaxJsonDepth});
      if (!bounded.ok()) return WriteError(res, bounded);
    }
    Reply(res, plane.Submit(c.caller, c.req.body, "request"), 201);
  });
  Add(
      "GET", "/v1/workloads", true,
      [this](const Call& c, httplib::Response& res) {
        auto filter = ParseListQuery(QueryOf(c.req), c.caller);
        if (!filter.ok()) return WriteError(res, filter.status());
        Reply(res, plane.List(c.caller, *filter));
      },
      Route::Query::kOwn);
  Add("GET", one, true,
      [this](const Call& c, httplib::Response& res) { Reply(res, plane.Get(c.caller, c.arg)); });
  Add("DELETE", one, true, [this](const Call& c, httplib::Response& res) {
    const Status st = plane.Cancel(c.caller, c.arg);
    Reply(res, st.ok() ? StatusOr<json>(json{{"cancelled", c.arg}}) : StatusOr<json>(st));
  });
  Add("POST", one + "/priority", true, [this](const Call& c, httplib::Response& res) {
    auto p = ParsePriorityBody(c.req.body);
    if (!p.ok()) return WriteError(res, p.status());
    const Status st = plane.SetPriority(c.caller, c.arg, *p);
    Reply(res, st.ok() ? StatusOr<json>(json{{"id", c.arg}, {"priority", *p}}) : st);
  });
  Add("POST", one + "/demand", true, [this](const Call& c, httplib::Response& res) {
    auto d = ParseDemandBody(c.req.body);
    if (!d.ok()) return WriteError(res, d.status());
    const Status st = plane.ReportDemand(c.caller, c.arg, d->rps, d->request_class);
    json answer = {{"id", c.arg}, {"rps", d->rps}};
    if (!d->request_class.empty()) answer["class"] = d->request_class;
    Reply(res, st.ok() ? StatusOr<json>(answer) : st);
  });
  Add("GET", one + "/events", true,
      [this](const Call& c, httplib::Response& res) { Reply(res, plane.Events(c.caller, c.arg)); });
  Add(
      "GET", one + "/logs", true,
      [this](const Call& c, httplib::Response& res) {
        auto query = ParseLogQuery(QueryOf(c.req));
        if (!query.ok()) return WriteError(res, query.status());
        auto chunk = plane.Logs(c.caller, c.arg, *query);
        if (!chunk.ok()) return WriteError(res, chunk.status());
        res.set_header("X-Airtime-Run", std::to_string(chunk->run));
        res.set_header("X-Airtime-Offset", std::to_string(chunk->offset));
        res.set_header("X-Airtime-Log-Size", std::to_string(chunk->size));
        res.set_header("X-Airtime-Run-Ended", chunk->run_ended ? "true" : "false");
        if (!chunk->cut.empty()) res.set_header("X-Airtime-Log-Cut", chunk->cut);
        // Bytes as the workload wrote them: never rendered by a browser as a page.
        res.set_header("X-Content-Type-Options", "nosniff");
        res.set_content(std::move(chunk->data), "application/octet-stream");
      },
      Route::Query::kOwn);
  Add("GET", "/v1/gpus", true,
      [this](const Call& c, httplib::Response& res) { Reply(res, plane.Gpus(c.caller)); });
  Add(
      "GET", "/v1/gpus/history", true,
      [this](const Call& c, httplib::Response& res) {
        auto filter = ParseHistoryQuery(QueryOf(c.req));
        if (!filter.ok()) return WriteError(res, filter.status());
        Reply(res, plane.GpuHistory(c.caller, *filter));
      },
      Route::Query::kOwn);
  Add("GET", "/v1/ledger", true,
      [this](const Call& c, httplib::Response& res) { Reply(res, plane.Ledger(c.caller)); });
  Add(
      "GET", "/v1/holds", true,
      [this](const Call& c, httplib::Response& res) {
        auto filter = ParseHoldsQuery(QueryOf(c.req));
        if (!filter.ok()) return WriteError(res, filter.status());
        Reply(res, plane.Holds(c.caller, *filter));
      },
      Route::Query::kOwn);
  Add(
      "GET", "/metrics", options.metrics_need_token,
      [this](const Call&, httplib::Response& res) {
        res.set_content(plane.Metrics(), "text/plain; version=0.0.4; charset=utf-8");
      },
      Route::Query::kIgnored);
  Add(
      "GET", "/healthz", false,
      [this](const Call&, httplib::Response& res) {
        std::string why;
        const bool ok = plane.Healthy(&why);
        res.status = ok ? 200 : 503;
        res.set_content(ok ? "ok\n" : (why.empty() ? "unhealthy" : why) + "\n", "text/plain");
      },
      Route::Query::kIgnored);
}

void HttpApi::Impl::Handle(const Route& r, const httplib::Request& req, std::string arg,
                           httplib::Response& res) {
  Caller caller;
  if (r.needs_token) {
    auto who = tokens.Authenticate(req.get_header_value("Authorization"));
    if (!who.ok()) {
      res.set_header("WWW-Authenticate", "Bearer");
      return WriteError(res, who.status());
    }
    caller = *who;
    if (!caller.admin) {
      if (const int64_t wait_ms = rate.Take(caller.tenant); wait_ms > 0) {
        const TenantRate::Options& o = rate.options();
        char what[256];
        std::snprintf(what, sizeof what,
                      "tenant '%s' is over its API calls (%g a second, %g at once): retry in "
                      "%lld ms",
                      caller.tenant.substr(0, 64).c_str(), o.per_second, o.burst,
                      static_cast<long long>(wait_ms));
        res.set_header("Retry-After", std::to_string((wait_ms + 999) / 1000));
        return WriteJson(res, 429, ErrorJson(Status(StatusCode::kResourceExhausted, what)));
      }
    }
  }
  if (r.query == Route::Query::kNone) {
    const Status none = CheckNoQuery(QueryOf(req));
    if (!none.ok()) return WriteError(res, none);
  }
  try {
    r.handler(Call{req, caller, std::move(arg)}, res);
  } catch (const std::exception& e) {
    WriteError(res, Internal(std::string("internal error: ") + e.what()));
  }
}

void HttpApi::Impl::Dispatch(const httplib::Request& req, httplib::Response& res) {
  RefuseBrotli(req);
  const std::string method = req.method == "HEAD" ? "GET" : req.method;
  // Route on the raw target, so that an escaped '/' stays inside its {id-or-name} segment.
  const std::string raw_path = req.target.substr(0, req.target.find('?'));
  if (IsWebUiPath(raw_path)) {
    if (method == "GET") return ServeWebUi(req, raw_path, res);
    res.set_header("Allow", "GET");
    return WriteJson(res, 405,
                     ErrorJson(InvalidArgument("method " + req.method + " not allowed on " +
                                               req.path + " (allowed: GET)")));
  }
  std::string allowed;
  for (const Route& r : routes) {
    std::smatch m;
    if (!std::regex_match(raw_path, m, r.pattern)) continue;
    if (r.method == method) {
      return Handle(r, req, m.size() > 1 ? httplib::detail::decode_url(m[1].str(), false) : "",
                    res);
    }
    allowed += (allowed.empty() ? "" : ", ") + r.method;
  }
  if (allowed.empty()) {
    return WriteJson(res, 404, ErrorJson(NotFound("no route " + req.path)));
  }
  res.set_header("Allow", allowed);
  WriteJson(res, 405,
            ErrorJson(InvalidArgument("method " + req.method + " not allowed on " + req.path +
                                      " (allowed: " + allowed + ")")));
}

// Answers the library made itself (413 for a body over the limit, 400 for a malformed
// request) get the JSON error body too.
httplib::Server::HandlerResponse HttpApi::Impl::FillError(const httplib::Request& req,
                                                          httplib::Response& res) {
  // A Range header the library could not read is answered 416 before FrameRequest runs, and
  // the ranges it did read would cut this answer: it is sent whole (the library's request is
  // its own, not const; only the handler's view of it is).
  const_cast<httplib::Request&>(req).ranges.clear();
  if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
  const StatusCode code = StatusCodeForHttp(res.status);
  std::string message = "HTTP " + std::to_string(res.status);
  if (res.status == 413)
    message = "request body over the server's limit of " + std::to_string(options.max_body_bytes) +
              " bytes (--max-body)";
  if (res.status == 400) message = "malformed HTTP request";
  if (res.status == 416)
    message = "header 'Range': not understood ('" + req.get_header_value("Range").substr(0, 40) +
              "'); the API serves whole answers (logs in parts with offset and limit): leave "
              "it out";
  if (res.status == 414)
    message = "request line (method, target and version) longer than the server's " +
              std::to_string(CPPHTTPLIB_REQUEST_URI_MAX_LENGTH) + " bytes";
  WriteJson(res, res.status, ErrorJson(Status(code, message)));
  return httplib::Server::HandlerResponse::Handled;
}

void HttpApi::Impl::Configure() {
  AddRoutes();
  auto dispatch = [this](const httplib::Request& req, httplib::Response& res) {
    Dispatch(req, res);
  };
  const httplib::Server::Handler h = dispatch;
  server.Get(".*", h);
  server.Post(".*", h);
  server.Put(".*", h);
  server.Patch(".*", h);
  server.Delete(".*", h);
  server.Options(".*", h);
  // A request whose body length is malformed, ambiguous or over the limit is answered before
  // its body would be read (request_framing.h; the connection then closes).
  const auto framing_error = [](const httplib::Request& req, httplib::Response& res) {
    const std::optional<FramingError> e = FramingErrorOf(req);
    if (e) WriteJson(res, e->status, ErrorJson(Status(StatusCodeForHttp(e->status), e->message)));
    return e.has_value();
  };
  server.set_pre_routing_handler(
      [framing_error](const httplib::Request& req, httplib::Response& res) {
        return framing_error(req, res) ? httplib::Server::HandlerResponse::Handled
                                       : httplib::Server::HandlerResponse::Unhandled;
      });
  // In place of `100 Continue`, which would invite a body that is not read.
  server.set_expect_100_continue_handler(
      [framing_error](const httplib::Request& req, httplib::Response& res) {
        return framing_error(req, res) ? res.status : 100;
      });
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) { return FillError(req, res); }));
  server.set_payload_max_length(options.max_body_bytes);
  server.set_tcp_nodelay(true);  // small JSON answers must not wait for Nagle's timer
  // The library's default adds SO_REUSEPORT, which lets a second daemon bind the same port.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
}

HttpApi::HttpApi(ControlPlane& plane, const Tokens& tokens, HttpApiOptions options)
    : impl_(std::make_unique<Impl>(plane, tokens, options)) {
  impl_->Configure();
}

HttpApi::~HttpApi() { Stop(); }

Status HttpApi::Listen(const std::string& host_in, int port) {
  if (impl_->bound) return FailedPrecondition("HttpApi::Listen: already listening");
  if (!impl_->options.allow_remote && !IsLoopbackHost(host_in)) {
    return InvalidArgument("listen address " + host_in +
                           " is not loopback: the API would be reachable from other hosts; "
                           "pass --listen-remote to allow it");
  }
  std::string host = host_in;
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  int bound_port = port;
  if (port == 0) {
    bound_port = impl_->server.bind_to_any_port(host);
  } else if (!impl_->server.bind_to_port(host, port)) {
    bound_port = -1;
  }
  if (bound_port <= 0) {
    return Status(StatusCode::kUnavailable, "cannot listen on " + host_in + ":" +
                                                std::to_string(port) +
                                                " (address in use or not on this host?)");
  }
  impl_->server.Deepen(impl_->options.listen_backlog);
  impl_->bound = true;
  port_ = bound_port;
  return OkStatus();
}

Status HttpApi::Start() {
  if (!impl_->bound) return FailedPrecondition("HttpApi::Start: call Listen first");
  if (impl_->thread.joinable()) return FailedPrecondition("HttpApi::Start: already started");
  impl_->done = false;
  impl_->thread = std::thread([this] {
    impl_->server.listen_after_bind();
    impl_->done = true;
  });
  // Stop() is a no-op until the accept loop runs, so wait for it.
  while (!impl_->server.is_running() && !impl_->done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (impl_->done) {
    impl_->thread.join();
    return Status(StatusCode::kUnavailable, "HttpApi::Start: the server stopped at once");
  }
  return OkStatus();
}

void HttpApi::Stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->server.stop();
  impl_->thread.join();
}

}  // namespace airtime
