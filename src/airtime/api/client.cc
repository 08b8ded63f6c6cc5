// ApiClient: requests over httplib::Client, answers and errors back as JSON / Status.
#include "airtime/api/client.h"

#include <httplib.h>

#include <cstdio>

#include "airtime/api/errors.h"
#include "airtime/base/strings.h"

namespace airtime {
namespace {

using nlohmann::json;

constexpr int kDefaultPort = 8470;

// The daemon's {"error": {...}} back into a Status; a body of another shape keeps the
// HTTP status and the first line of the body.
Status ErrorFromResponse(const httplib::Response& res) {
  json j = json::parse(res.body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    const std::string code = e.value("code", "");
    const std::string message = e.value("message", "");
    StatusCode sc = StatusCodeFromName(code);
    if (sc == StatusCode::kInternal && code != "internal") sc = StatusCodeForHttp(res.status);
    return Status(sc, message);
  }
  std::string body(Trim(res.body.substr(0, res.body.find('\n'))));
  return Status(StatusCodeForHttp(res.status),
                "HTTP " + std::to_string(res.status) + (body.empty() ? "" : ": " + body));
}

std::string Query(const ListFilter& f) {
  httplib::Params params;
  if (!f.state.empty()) params.emplace("state", f.state);
  if (!f.kind.empty()) params.emplace("kind", f.kind);
  if (!f.tenant.empty()) params.emplace("tenant", f.tenant);
  if (f.limit > 0) params.emplace("limit", std::to_string(f.limit));
  if (f.offset > 0) params.emplace("offset", std::to_string(f.offset));
  const std::string q = httplib::detail::params_to_query_str(params);
  return q.empty() ? "" : "?" + q;
}

std::string Query(const HoldsFilter& f) {
  httplib::Params params;
  if (!f.service.empty()) params.emplace("service", f.service);
  params.emplace("limit", std::to_string(f.limit));
  return "?" + httplib::detail::params_to_query_str(params);
}

Status Unreachable(const std::string& base_url, httplib::Error error) {
  return Status(StatusCode::kUnavailable, "cannot reach airtime at " + base_url + ": " +
                                              httplib::to_string(error) +
                                              " (is `airtime server` running? set AIRTIME_ADDR)");
}

}  // namespace

std::string NormalizeApiAddress(std::string_view address) {
  std::string a(Trim(address));
  if (a.empty()) a = kDefaultApiAddress;
  if (a.find("://") == std::string::npos) a = "http://" + a;
  while (a.size() > 8 && a.back() == '/') a.pop_back();
  const size_t host_start = a.find("://") + 3;
  const size_t colon = a.rfind(':');
  const bool has_port = colon > host_start && a.find(']', colon) == std::string::npos;
  if (!has_port) a += ":" + std::to_string(kDefaultPort);
  return a;
}

std::string EscapePathSegment(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '~' || c == '-') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

struct ApiClient::Impl {
  explicit Impl(const std::string& url) : client(url) {
    client.set_connection_timeout(5, 0);
    client.set_read_timeout(60, 0);
    client.set_write_timeout(60, 0);
    client.set_tcp_nodelay(true);
  }
  httplib::Client client;
};

ApiClient::ApiClient(std::string address, std::string token)
    : address_(std::move(address)),
      base_url_(NormalizeApiAddress(address_)),
      token_(std::move(token)),
      impl_(std::make_unique<Impl>(base_url_)) {
  if (!token_.empty()) impl_->client.set_bearer_token_auth(token_);
}

ApiClient::~ApiClient() = default;
ApiClient::ApiClient(ApiClient&&) noexcept = default;

StatusOr<std::string> ApiClient::Send(std::string_view method, const std::string& path,
                                      std::string_view body, std::string_view content_type) {
  httplib::Client& c = impl_->client;
  const std::string ct(content_type);
  httplib::Result r = method == "GET"      ? c.Get(path)
                      : method == "DELETE" ? c.Delete(path)
                                           : c.Post(path, body.data(), body.size(), ct);
  if (!r) return Unreachable(base_url_, r.error());
  if (r->status >= 300) return ErrorFromResponse(*r);
  return r->body;
}

StatusOr<json> ApiClient::SendJson(std::string_view method, const std::string& path,
                                   std::string_view body, std::string_view content_type) {
  auto text = Send(method, path, body, content_type);
  if (!text.ok()) return text.status();
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded()) {
    return Internal("airtime at " + base_url_ + " answered " + path + " with invalid JSON");
  }
  return j;
}

StatusOr<json> ApiClient::Submit(std::string_view body, std::string_view content_type) {
  return SendJson("POST", "/v1/workloads", body, content_type);
}

StatusOr<json> ApiClient::List(const ListFilter& filter) {
  return SendJson("GET", "/v1/workloads" + Query(filter));
}

StatusOr<json> ApiClient::Events(std::string_view id) {
  return SendJson("GET", "/v1/workloads/" + EscapePathSegment(id) + "/events");
}

StatusOr<LogChunk> ApiClient::Logs(std::string_view id, const LogQuery& q) {
  const std::string path =
      "/v1/workloads/" + EscapePathSegment(id) + "/logs?run=" + std::to_string(q.run) +
      "&stream=" + (q.stderr_log ? "stderr" : "stdout") + "&offset=" + std::to_string(q.offset) +
      "&limit=" + std::to_string(q.limit);
  httplib::Result r = impl_->client.Get(path);
  if (!r) return Unreachable(base_url_, r.error());
  if (r->status >= 300) return ErrorFromResponse(*r);
  auto header = [&](const char* name) { return ParseInt(r->get_header_value(name)); };
  auto run = header("X-Airtime-Run");
  auto offset = header("X-Airtime-Offset");
  auto size = header("X-Airtime-Log-Size");
  if (!run || !offset || !size) {
    return Internal("airtime at " + base_url_ + " answered " + path +
                    " without the X-Airtime-Run, -Offset and -Log-Size headers");
  }
  return LogChunk{*run,
                  *offset,
                  *size,
                  r->get_header_value("X-Airtime-Run-Ended") == "true",
                  std::move(r->body),
                  r->get_header_value("X-Airtime-Log-Cut")};
}

StatusOr<json> ApiClient::Get(std::string_view id) {
  return SendJson("GET", "/v1/workloads/" + EscapePathSegment(id));
}

StatusOr<json> ApiClient::Cancel(std::string_view id) {
  return SendJson("DELETE", "/v1/workloads/" + EscapePathSegment(id));
}

StatusOr<json> ApiClient::SetPriority(std::string_view id, int priority) {
  return SendJson("POST", "/v1/workloads/" + EscapePathSegment(id) + "/priority",
                  json{{"priority", priority}}.dump());
}

StatusOr<json> ApiClient::ReportDemand(std::string_view id, double rps,
                                       std::string_view request_class) {
  json body = {{"rps", rps}};
  if (!request_class.empty()) body["class"] = std::string(request_class);
  return SendJson("POST", "/v1/workloads/" + EscapePathSegment(id) + "/demand", body.dump());
}

StatusOr<json> ApiClient::Gpus() { return SendJson("GET", "/v1/gpus"); }
StatusOr<json> ApiClient::Ledger() { return SendJson("GET", "/v1/ledger"); }

StatusOr<json> ApiClient::Holds(const HoldsFilter& filter) {
  return SendJson("GET", "/v1/holds" + Query(filter));
}
StatusOr<std::string> ApiClient::Metrics() { return Send("GET", "/metrics", "", ""); }

Status ApiClient::Health() {
  auto r = Send("GET", "/healthz", "", "");
  if (r.ok()) return OkStatus();
  if (r.status().code() == StatusCode::kUnavailable) return r.status();
  return Status(StatusCode::kUnavailable, r.status().message());
}

}  // namespace airtime
