// HeaderScan: the end of a request's headers (header_scan.h).
#include "airtime/api/header_scan.h"

namespace airtime {

HeaderScan::Result HeaderScan::Feed(const char* data, size_t n, size_t* used) {
  for (size_t k = 0; k < n; ++k) {
    if (bytes_ >= max_bytes_) {
      *used = k;
      return Result::kTooLarge;
    }
    ++bytes_;
    const char c = data[k];
    if (c == '\n') {
      if (line_length_ == 0 && bytes_ > 2) {
        *used = k + 1;
        return Result::kEnd;
      }
      line_length_ = 0;
    } else if (c != '\r') {
      ++line_length_;
    }
  }
  *used = n;
  return Result::kMore;
}

}  // namespace airtime
