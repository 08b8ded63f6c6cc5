// TenantGate: a ControlPlane in front of another that refuses every tenant (non-admin)
// caller with one clear kPermissionDenied. The server puts it in front of a daemon that
// cannot isolate tenants from each other (daemon.h: isolation), unless it was started with
// --allow-unisolated-tenants. The admin, /metrics and /healthz pass through unchanged.
#pragma once

#include <string>
#include <utility>

#include "airtime/api/control_plane.h"

namespace airtime {

class TenantGate final : public ControlPlane {
 public:
  // `why`: what the host lacks, for the message.
  TenantGate(ControlPlane& inner, std::string why) : inner_(inner), why_(std::move(why)) {}

  StatusOr<nlohmann::json> Submit(const Caller& c, std::string_view body,
                                  std::string_view origin) override {
    if (!c.admin) return Refused(c);
    return inner_.Submit(c, body, origin);
  }
  StatusOr<nlohmann::json> List(const Caller& c, const ListFilter& filter) override {
    if (!c.admin) return Refused(c);
    return inner_.List(c, filter);
  }
  StatusOr<nlohmann::json> Get(const Caller& c, std::string_view id) override {
    if (!c.admin) return Refused(c);
    return inner_.Get(c, id);
  }
  Status Cancel(const Caller& c, std::string_view id) override {
    return c.admin ? inner_.Cancel(c, id) : Refused(c);
  }
  Status SetPriority(const Caller& c, std::string_view id, int priority) override {
    return c.admin ? inner_.SetPriority(c, id, priority) : Refused(c);
  }
  Status ReportDemand(const Caller& c, std::string_view id, double rps,
                      std::string_view request_class) override {
    return c.admin ? inner_.ReportDemand(c, id, rps, request_class) : Refused(c);
  }
  StatusOr<nlohmann::json> Gpus(const Caller& c) override {
    if (!c.admin) return Refused(c);
    return inner_.Gpus(c);
  }
  StatusOr<nlohmann::json> Ledger(const Caller& c) override {
    if (!c.admin) return Refused(c);
    return inner_.Ledger(c);
  }
  StatusOr<nlohmann::json> GpuHistory(const Caller& c, const HistoryFilter& filter) override {
    if (!c.admin) return Refused(c);
    return inner_.GpuHistory(c, filter);
  }
  StatusOr<nlohmann::json> Holds(const Caller& c, const HoldsFilter& filter) override {
    if (!c.admin) return Refused(c);
    return inner_.Holds(c, filter);
  }
  StatusOr<nlohmann::json> Events(const Caller& c, std::string_view id) override {
    if (!c.admin) return Refused(c);
    return inner_.Events(c, id);
  }
  StatusOr<LogChunk> Logs(const Caller& c, std::string_view id, const LogQuery& q) override {
    if (!c.admin) return Refused(c);
    return inner_.Logs(c, id, q);
  }
  std::string Metrics() override { return inner_.Metrics(); }
  bool Healthy(std::string* why) override { return inner_.Healthy(why); }

 private:
  Status Refused(const Caller& c) const {
    return Status(StatusCode::kPermissionDenied,
                  "tenant '" + c.tenant +
                      "': tenant tokens are refused: this server cannot isolate tenants (" + why_ +
                      "), so a tenant's workload could act as the daemon's user; use an admin "
                      "token, or start the server with --allow-unisolated-tenants");
  }

  ControlPlane& inner_;
  std::string why_;
};

}  // namespace airtime
