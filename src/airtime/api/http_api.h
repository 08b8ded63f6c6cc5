// HttpApi: the daemon's HTTP/JSON API, serving a ControlPlane over cpp-httplib.
//
// Routes (all but /metrics and /healthz need "Authorization: Bearer TOKEN", see tokens.h):
//   POST   /v1/workloads                 body YAML or JSON (Content-Type application/json,
//                                        application/yaml, application/x-yaml or text/yaml;
//                                        none is read as YAML) -> 201 {"accepted": [...]}
//   GET    /v1/workloads?state=&kind=&tenant=&limit=&offset= -> {"workloads": [...], "total"}
//   GET    /v1/workloads/{id-or-name}    -> the workload view with runs and explanation
//   DELETE /v1/workloads/{id-or-name}    -> {"cancelled": "{id-or-name}"}
//   POST   /v1/workloads/{id-or-name}/priority  {"priority": 5}  -> {"id": ..., "priority": 5}
//   POST   /v1/workloads/{id-or-name}/demand    {"rps": 12.5}    -> {"id": ..., "rps": 12.5}
//   GET    /v1/gpus, GET /v1/ledger      -> ControlPlane::Gpus / Ledger
//   GET    /v1/gpus/history?gpu=&minutes= -> ControlPlane::GpuHistory
//   GET    /v1/holds                     -> ControlPlane::Holds
//   GET    /metrics                      Prometheus text, Content-Type text/plain;
//                                        version=0.0.4 (no token unless
//                                        metrics_need_token: scrapers on loopback)
//   GET    /healthz                      200 "ok" or 503 with the reason (never a token)
//   GET    /, /index.html, /assets/NAME  the dashboard's files (web_ui.h; never a token)
// Errors: {"error": {"code": "not_found", "message": "..."}} with the status of
// control_plane.h's mapping; also 404 for an unknown path, 405 (with an Allow header) for a
// known path with another method, 413 for a body over max_body_bytes, 415 for another
// Content-Type, 500 when a handler throws.
//
// Bodies and queries are bounded before they are parsed (request_parse.h, bounded_json.h):
// JSON nested deeper than 64 levels and bad query parameters are answered 400. Answers are
// written with invalid UTF-8 replaced by U+FFFD, so an old row cannot make them fail.
//
// Threads: Start() serves on a background accept thread that hands connections to a pool
// of workers that grows from `threads` to `max_threads`; the ControlPlane is called from
// those workers concurrently. Slow and idle connections are cut off by the deadlines below
// and capped per client address (connection_guard.h): 408, 429, 431. A tenant's calls are
// rate-limited (tenant_rate.h): 429 with Retry-After.
// Listen/Start/Stop are for one owning thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "airtime/api/control_plane.h"
#include "airtime/api/tenant_rate.h"
#include "airtime/api/tokens.h"
#include "airtime/base/status.h"

namespace airtime {

struct HttpApiOptions {
  size_t max_body_bytes = 1 << 20;  // larger bodies are answered 413
  bool allow_remote = false;        // may Listen on a non-loopback address (--listen-remote)
  int threads = 16;                 // workers kept ready
  int max_threads = 1024;           // the most workers: connections served at once
  int listen_backlog = 1024;        // pending connections the kernel queues
  bool metrics_need_token = false;  // whether /metrics asks for a token
  // Deadlines for the whole of each phase of a connection (connection_guard.h): a client
  // that trickles bytes is cut off all the same.
  int64_t header_timeout_ms = 10'000;    // request line + headers, from accept / first byte
  int64_t body_timeout_ms = 60'000;      // the body, from the end of the headers
  int64_t keepalive_timeout_ms = 5'000;  // idle between two requests of a connection
  int64_t write_timeout_ms = 10'000;     // writing one answer
  int max_connections_per_address = 64;  // more at once from one address: 429 (<= 0: no cap)
  // Each tenant's API calls (tenant_rate.h): beyond them 429 with Retry-After. The admin
  // is not limited. per_second 0: no limit.
  TenantRate::Options tenant_rate;
};

class HttpApi {
 public:
  HttpApi(ControlPlane& plane, const Tokens& tokens, HttpApiOptions options = {});
  ~HttpApi();  // Stop()s
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  // Binds host:port (port 0: any free port; port() then says which). A host that is not a
  // loopback address (127.0.0.0/8, ::1, localhost) needs options.allow_remote.
  Status Listen(const std::string& host, int port);
  int port() const { return port_; }
  // Serves on background threads until Stop(); needs a successful Listen first.
  Status Start();
  // Stops accepting, finishes the requests in flight, joins the threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// Whether `host` names the loopback interface: "localhost", 127.x.y.z, "::1", "[::1]".
bool IsLoopbackHost(const std::string& host);

}  // namespace airtime
