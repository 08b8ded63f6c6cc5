// HeaderScan: finds where an HTTP request's line and headers end, a few bytes at a time.
//
// The headers end at the first empty line: "\r\n\r\n", or a bare "\n\n" (a '\r' is skipped
// wherever it is, so "\r\r\n" is an empty line too), once more than two bytes have come
// (a request that starts with an empty line is not a whole request). Bytes are counted from
// the request's first: more than `max_bytes` before the end is too large. The waiting room
// (waiting_room.h) and the worker's stream (connection_guard.cc) share it, so both see the
// end of the headers at the same byte.
#pragma once

#include <cstddef>

namespace airtime {

class HeaderScan {
 public:
  enum class Result { kMore, kEnd, kTooLarge };

  explicit HeaderScan(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Scans the next `n` bytes of the request. kEnd: the headers end within them, *used is the
  // count up to and including the end. kTooLarge: byte max_bytes + 1 came before the end,
  // *used is the count before it. kMore: all `n` used, the end is still to come.
  Result Feed(const char* data, size_t n, size_t* used);
  // Bytes scanned since the start (or the last Reset).
  size_t bytes() const { return bytes_; }
  // A new request begins.
  void Reset() { bytes_ = line_length_ = 0; }

 private:
  const size_t max_bytes_;
  size_t bytes_ = 0;
  size_t line_length_ = 0;  // bytes of the current line other than '\r'
};

}  // namespace airtime
