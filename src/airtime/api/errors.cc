// API errors: the Status <-> HTTP mapping of control_plane.h.
#include "airtime/api/errors.h"

#include "airtime/base/strings.h"

namespace airtime {
namespace {

constexpr StatusCode kAllCodes[] = {
    StatusCode::kInvalidArgument,    StatusCode::kNotFound,         StatusCode::kAlreadyExists,
    StatusCode::kFailedPrecondition, StatusCode::kOutOfRange,       StatusCode::kUnavailable,
    StatusCode::kInternal,           StatusCode::kPermissionDenied, StatusCode::kUnauthenticated,
    StatusCode::kResourceExhausted,
};

}  // namespace

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kResourceExhausted:
      return 413;
    case StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

StatusCode StatusCodeForHttp(int s) {
  switch (s) {
    case 400:
    case 405:
    case 411:
    case 414:
    case 415:
    case 416:
    case 431:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 409:
      return StatusCode::kFailedPrecondition;
    case 413:
      return StatusCode::kResourceExhausted;
    case 502:
    case 503:
    case 504:
      return StatusCode::kUnavailable;
    default:
      return s < 300 ? StatusCode::kOk : StatusCode::kInternal;
  }
}

std::string ErrorCodeName(StatusCode code) { return ToLower(StatusCodeName(code)); }

StatusCode StatusCodeFromName(std::string_view name) {
  for (StatusCode c : kAllCodes) {
    if (ErrorCodeName(c) == name) return c;
  }
  return StatusCode::kInternal;
}

nlohmann::json ErrorJson(const Status& status) {
  return {{"error", {{"code", ErrorCodeName(status.code())}, {"message", status.message()}}}};
}

}  // namespace airtime
