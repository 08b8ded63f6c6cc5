// API errors: how a Status travels over HTTP and back.
//
// The server answers a non-OK Status with the HTTP status of control_plane.h's mapping and
// the body {"error": {"code": "invalid_argument", "message": "..."}}; the client turns that
// body back into the same Status.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "airtime/base/status.h"

namespace airtime {

// kInvalidArgument -> 400, kUnauthenticated -> 401, kPermissionDenied -> 403,
// kNotFound -> 404, kAlreadyExists / kFailedPrecondition -> 409, kResourceExhausted -> 413,
// kUnavailable -> 503, anything else -> 500.
int HttpStatusFor(StatusCode code);
// The reverse, for answers without a JSON error body.
StatusCode StatusCodeForHttp(int http_status);
// "invalid_argument", "not_found", ... (lowercase StatusCodeName).
std::string ErrorCodeName(StatusCode code);
// The reverse; kInternal for an unknown name.
StatusCode StatusCodeFromName(std::string_view name);
// {"error": {"code": ..., "message": ...}}
nlohmann::json ErrorJson(const Status& status);

}  // namespace airtime
