// Request parsing of the HTTP API that needs no server: the small JSON bodies of the
// priority and demand routes and the query string of GET /v1/workloads. Every input is a
// tenant's bytes: each function is bounded (size, depth, count) and answers
// kInvalidArgument naming the field or parameter, never throws.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "airtime/api/control_plane.h"
#include "airtime/base/status.h"

namespace airtime {

struct QueryLimits {
  size_t max_bytes = 2048;  // the raw query string, after the '?'
  size_t max_params = 16;
  size_t max_value_bytes = 256;  // one decoded value
};

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// "a=1&b=x%20y" -> {{"a", "1"}, {"b", "x y"}} in order ('+' is a space, "a" alone is
// {"a", ""}). Refuses a malformed %-escape, and a name or value that holds a NUL, a control
// character or bytes that are not UTF-8.
StatusOr<QueryParams> ParseQueryString(std::string_view query, const QueryLimits& limits = {});
// For an endpoint that takes no query parameters: OK for an empty query, else an
// InvalidArgument naming the first parameter ("query 'window': unknown (this endpoint takes
// no query parameters)"), or what ParseQueryString finds wrong first.
Status CheckNoQuery(std::string_view query, const QueryLimits& limits = {});

// GET /v1/workloads?state=&kind=&tenant=&limit=&offset=: each at most once; state is a
// workload state or "active", kind a workload kind, limit and offset non-negative integers. A
// tenant caller may name only its own tenant.
StatusOr<ListFilter> ParseListQuery(std::string_view query, const Caller& caller,
                                    const QueryLimits& limits = {});

// GET /v1/holds?service=&limit=: each at most once; limit an integer from 1 to
// kMaxHoldsLimit (default kDefaultHoldsLimit); service a name ("" or absent: all).
StatusOr<HoldsFilter> ParseHoldsQuery(std::string_view query, const QueryLimits& limits = {});
// ?run=&stream=&offset=&limit= of GET /v1/workloads/{id}/logs; each at most once, integers.
StatusOr<LogQuery> ParseLogQuery(std::string_view query, const QueryLimits& limits = {});

// GET /v1/gpus/history?gpu=&minutes=: each at most once; gpu a UUID or index (checked by the
// daemon), minutes an integer from 1 to 1440.
StatusOr<HistoryFilter> ParseHistoryQuery(std::string_view query, const QueryLimits& limits = {});

// {"priority": 5} -> 5.
StatusOr<int> ParsePriorityBody(std::string_view body);
// A service's request rate: {"rps": 12.5} (finite, >= 0), and for a service whose demand is
// split by request class, the class it is for: {"rps": 12.5, "class": "code"}.
struct DemandReport {
  double rps = 0;
  std::string request_class;  // "" : none named
};
StatusOr<DemandReport> ParseDemandBody(std::string_view body);

}  // namespace airtime
