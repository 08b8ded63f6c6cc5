// ApiClient: the HTTP client of the airtime API (http_api.h), used by the CLI.
//
// Each call is one request on a fresh connection; answers are the JSON documents of
// control_plane.h. Failures come back as a Status: a daemon that cannot be reached gives
// kUnavailable "cannot reach airtime at ADDR: ... (is `airtime server` running? set
// AIRTIME_ADDR)"; an HTTP error gives the daemon's own code and message. One instance is
// for one thread at a time.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "airtime/api/control_plane.h"
#include "airtime/base/status.h"

namespace airtime {

inline constexpr const char* kDefaultApiAddress = "127.0.0.1:8470";

class ApiClient {
 public:
  // `address`: "host:port", "host" (port 8470) or "http://host:port"; `token` may be "".
  ApiClient(std::string address, std::string token);
  ~ApiClient();
  ApiClient(ApiClient&&) noexcept;

  // `content_type`: "application/json" or "application/yaml".
  StatusOr<nlohmann::json> Submit(std::string_view body, std::string_view content_type);
  StatusOr<nlohmann::json> List(const ListFilter& filter);
  StatusOr<nlohmann::json> Get(std::string_view id_or_name);
  StatusOr<nlohmann::json> Cancel(std::string_view id_or_name);
  StatusOr<nlohmann::json> SetPriority(std::string_view id_or_name, int priority);
  // `request_class`: "" for a service's one class.
  StatusOr<nlohmann::json> ReportDemand(std::string_view id_or_name, double rps,
                                        std::string_view request_class = "");
  StatusOr<nlohmann::json> Gpus();
  StatusOr<nlohmann::json> Ledger();
  StatusOr<nlohmann::json> Holds(const HoldsFilter& filter);
  StatusOr<nlohmann::json> Events(std::string_view id_or_name);
  // GET /v1/workloads/{id}/logs: a chunk of a run's log, with where it lies.
  StatusOr<LogChunk> Logs(std::string_view id_or_name, const LogQuery& query);
  // The Prometheus text of /metrics.
  StatusOr<std::string> Metrics();
  // OK when /healthz answers 200; else kUnavailable with the daemon's reason.
  Status Health();

  // "http://host:port", the normalized address.
  const std::string& base_url() const { return base_url_; }

 private:
  struct Impl;
  StatusOr<std::string> Send(std::string_view method, const std::string& path,
                             std::string_view body, std::string_view content_type);
  StatusOr<nlohmann::json> SendJson(std::string_view method, const std::string& path,
                                    std::string_view body = "",
                                    std::string_view content_type = "application/json");

  std::string address_;
  std::string base_url_;
  std::string token_;
  std::unique_ptr<Impl> impl_;
};

// "127.0.0.1:8470" / "http://h:p" / "h" -> "http://h:p"; "" -> the default address.
std::string NormalizeApiAddress(std::string_view address);
// A path segment with everything but [A-Za-z0-9._~-] percent-encoded.
std::string EscapePathSegment(std::string_view s);

}  // namespace airtime
