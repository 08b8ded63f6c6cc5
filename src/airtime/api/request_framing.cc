// Request framing: see request_framing.h.
#include "airtime/api/request_framing.h"

#include <cstdlib>

namespace airtime {

namespace {

bool MayHaveBody(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE" ||
         method == "PRI";  // the methods the library reads a body for
}

void Mark(httplib::Request& req, int status, const std::string& message) {
  // No body is read for a marked request: none is declared to the library.
  req.headers.erase("Content-Length");
  req.headers.erase("Transfer-Encoding");
  req.set_header("Content-Length", "0");
  req.set_header(kFramingErrorHeader, std::to_string(status) + " " + message);
}

}  // namespace

bool FrameRequest(httplib::Request& req, size_t max_body_bytes) {
  req.headers.erase(kFramingErrorHeader);
  // No answer is served in parts (RFC 9110 lets a server ignore Range): the library would
  // cut any answer to a client's ranges, an error's JSON included, and repeat the body once
  // per range asked for (a log read 200 times over in one answer). Logs are read in parts
  // with their own query (offset, limit).
  req.ranges.clear();
  // The API's bodies are sent whole, with their length: a chunked one would pass the
  // library's --max-body check (it checks Content-Length only), and another coding would be
  // read until the client closes.
  if (req.has_header("Transfer-Encoding")) {
    Mark(req, 411,
         "header 'Transfer-Encoding': not taken (found '" +
             req.get_header_value("Transfer-Encoding").substr(0, 40) +
             "'); send the body with Content-Length");
    return true;
  }
  const size_t lengths = req.get_header_value_count("Content-Length");
  if (lengths == 0) {
    // No length: the body is empty (a request is never delimited by the connection's close).
    if (MayHaveBody(req.method)) req.set_header("Content-Length", "0");
    return false;
  }
  const std::string first = req.get_header_value("Content-Length");
  for (size_t i = 1; i < lengths; ++i) {
    if (req.get_header_value("Content-Length", i) != first) {
      Mark(req, 400,
           "header 'Content-Length': given twice with different values ('" + first.substr(0, 40) +
               "', '" + req.get_header_value("Content-Length", i).substr(0, 40) + "')");
      return true;
    }
  }
  const bool digits = !first.empty() && first.size() <= 19 &&
                      first.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    Mark(req, 400,
         "header 'Content-Length': expected a byte count, found '" + first.substr(0, 40) + "'");
    return true;
  }
  const unsigned long long length = std::strtoull(first.c_str(), nullptr, 10);
  if (length > 0 && !MayHaveBody(req.method)) {
    // The library reads no body for it: what follows would be read as the next request.
    Mark(req, 400,
         "a " + req.method + " request has no body (found Content-Length: " + first + ")");
    return true;
  }
  if (length > max_body_bytes) {
    Mark(req, 413,
         "request body of " + first + " bytes is over the server's limit of " +
             std::to_string(max_body_bytes) + " bytes (--max-body)");
    return true;
  }
  return false;
}

std::optional<FramingError> FramingErrorOf(const httplib::Request& req) {
  if (!req.has_header(kFramingErrorHeader)) return std::nullopt;
  const std::string v = req.get_header_value(kFramingErrorHeader);
  const size_t space = v.find(' ');
  FramingError e;
  e.status = std::atoi(v.substr(0, space).c_str());
  e.message = space == std::string::npos ? "" : v.substr(space + 1);
  return e;
}

}  // namespace airtime
