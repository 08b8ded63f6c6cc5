// How long a request's body is, settled before anyone reads it (RFC 9112 section 6). The
// HTTP library reads a POST, PUT, PATCH or DELETE without Content-Length until the client
// closes (a client that sends none then waits out the body timeout for a 408), reads
// `Content-Length: 1x` as 1, takes the first of two different lengths, leaves a GET's body
// to be read as the next request, checks --max-body against Content-Length only (not a
// chunked body), and waits for a body over the limit only to drop it. FrameRequest runs once
// the headers are read (the library's setup_request): it gives a request without a length an
// empty body, and marks one whose length is malformed, ambiguous, over the limit or on a
// method without a body, or that comes with Transfer-Encoding (411: the API takes bodies
// with their length). The API answers a marked request at once, with the reason (also in
// place of `100 Continue`), and the connection closes, draining, rather than read on. A
// `Range` header is ignored: every answer is whole.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <optional>
#include <string>

namespace airtime {

// The header FrameRequest marks a request with: "STATUS MESSAGE". A client's own is removed.
inline constexpr char kFramingErrorHeader[] = "X-Airtime-Framing-Error";

// Settles `req`'s body length (above). Returns true when the connection must close after the
// answer: the request is marked, and its body, if any, was not read.
bool FrameRequest(httplib::Request& req, size_t max_body_bytes);

// The status and message a marked request is answered with; nullopt when it is not marked.
struct FramingError {
  int status = 400;
  std::string message;
};
std::optional<FramingError> FramingErrorOf(const httplib::Request& req);

}  // namespace airtime
