// Small string helpers shared by loaders, importers and reports.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace airtime {

std::string ToLower(std::string_view s);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);  // ASCII case
std::string_view Trim(std::string_view s);
// Splits on `sep`, keeping empty fields ("a,,b" -> {"a","","b"}).
std::vector<std::string_view> Split(std::string_view s, char sep);
std::optional<double> ParseDouble(std::string_view s);
std::optional<int64_t> ParseInt(std::string_view s);
// Parses "90s", "15m", "2h", "1d", "500ms", compounds such as "1h45m", or a bare number of
// seconds into milliseconds: from 0 to 1e12 s (nullopt otherwise).
std::optional<int64_t> ParseDurationMs(std::string_view s);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);

// `bytes` in MiB with one decimal: "1029.3 MiB".
std::string FormatMib(double bytes);

}  // namespace airtime
