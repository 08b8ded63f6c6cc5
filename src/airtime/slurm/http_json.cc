#include "airtime/slurm/http_json.h"

#include <httplib.h>

namespace airtime::slurm {

HttpJson::HttpJson(RestOptions options) : options_(std::move(options)) { Reconnect(); }

void HttpJson::Reconnect() {
  client_ = std::make_unique<httplib::Client>(options_.url);
  client_->set_connection_timeout(options_.connect_timeout);
  client_->set_read_timeout(options_.timeout);
  client_->set_write_timeout(options_.timeout);
  // One connection per call. slurmrestd closes a connection after an error answer (with
  // "Connection: Close", which Debian's cpp-httplib 0.11 does not honour) and sometimes after
  // others: a kept-alive socket then fails the next call with "Read", and a submission cannot
  // be retried safely. A local connect costs well under a millisecond.
  client_->set_keep_alive(false);
}

HttpJson::~HttpJson() = default;

StatusOr<nlohmann::json> HttpJson::Get(const std::string& path) {
  return Call("GET", path, nullptr);
}
StatusOr<nlohmann::json> HttpJson::Post(const std::string& path, const nlohmann::json& body) {
  return Call("POST", path, &body);
}
StatusOr<nlohmann::json> HttpJson::Delete(const std::string& path) {
  return Call("DELETE", path, nullptr);
}

StatusOr<nlohmann::json> HttpJson::Call(std::string_view method, const std::string& path,
                                        const nlohmann::json* body) {
  const std::string what = std::string(method) + " " + options_.url + path;
  if (!client_->is_valid())
    return InvalidArgument("slurmrestd URL '" + options_.url + "' is not valid");
  httplib::Headers headers = {{"X-SLURM-USER-NAME", options_.user},
                              {"X-SLURM-USER-TOKEN", options_.token},
                              {"Accept", "application/json"}};
  std::string received;
  bool too_big = false;
  auto receive = [&](const char* data, size_t n) {
    if (received.size() + n > options_.max_body_bytes) {
      too_big = true;
      return false;
    }
    received.append(data, n);
    return true;
  };
  httplib::Result res = [&] {
    if (method == "GET") return client_->Get(path, headers, receive);
    if (method == "DELETE") return client_->Delete(path, headers);
    return client_->Post(path, headers, body->dump(), "application/json");
  }();
  if (too_big)
    return Status(
        StatusCode::kResourceExhausted,
        what + ": answer larger than " + std::to_string(options_.max_body_bytes) + " bytes");
  if (!res) {
    // httplib names the failure in a word ("Connection", "Read"): say what it means.
    const httplib::Error e = res.error();
    const std::string meaning = e == httplib::Error::Connection ? "could not connect to slurmrestd"
                                : e == httplib::Error::Read || e == httplib::Error::Write
                                    ? "the connection to slurmrestd broke"
                                    : "no answer from slurmrestd";
    return Status(StatusCode::kUnavailable,
                  what + ": " + meaning + " (" + httplib::to_string(e) + ")");
  }
  const std::string& text = method == "GET" ? received : res->body;
  if (text.size() > options_.max_body_bytes)
    return Status(
        StatusCode::kResourceExhausted,
        what + ": answer larger than " + std::to_string(options_.max_body_bytes) + " bytes");
  if (res->status == 401)
    return Status(StatusCode::kUnauthenticated,
                  what + ": 401: slurmrestd refused the token (expired? scontrol token)");
  if (res->status == 403)
    return Status(StatusCode::kPermissionDenied,
                  what + ": 403: not allowed for user '" + options_.user + "'");
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded())
    return InvalidArgument(what + ": HTTP " + std::to_string(res->status) + ", not JSON: '" +
                           text.substr(0, 200) + "'");
  return parsed;
}

}  // namespace airtime::slurm
