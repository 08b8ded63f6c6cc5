#include "airtime/server/replica_ports.h"

#include <charconv>

namespace airtime {

StatusOr<PortRange> ParsePortRange(std::string_view text) {
  const size_t dash = text.find('-');
  auto number = [](std::string_view s, int* out) {
    if (s.empty() || s.size() > 5) return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && end == s.data() + s.size();
  };
  PortRange r;
  if (dash == std::string_view::npos || !number(text.substr(0, dash), &r.first) ||
      !number(text.substr(dash + 1), &r.last))
    return InvalidArgument("--replica-ports '" + std::string(text.substr(0, 40)) +
                           "': expected FIRST-LAST, e.g. 20000-20999");
  if (r.first < 1024 || r.last > 65535 || r.first > r.last)
    return InvalidArgument("--replica-ports '" + std::string(text) +
                           "': the ports must be 1024 to 65535, the first not above the last");
  return r;
}

int PickPort(const PortRange& range, const std::set<int>& used, int from) {
  const int start = from >= range.first && from <= range.last ? from : range.first;
  for (int p = start; p <= range.last; ++p)
    if (!used.count(p)) return p;
  for (int p = range.first; p < start; ++p)
    if (!used.count(p)) return p;
  return 0;
}

}  // namespace airtime
