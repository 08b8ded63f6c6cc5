// Calendar timestamps as they appear in the traces, turned into milliseconds.
//
// The traces write local wall-clock times without a zone ("2017-10-09 07:01:55",
// "2023-11-16 18:17:03.9799600"). Importers only ever need differences between two such
// times, so they are read as if they were UTC, which makes the result independent of the
// machine's time zone and of daylight saving. Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace airtime {

// Days from 1970-01-01 to the given proleptic Gregorian date (negative before 1970).
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);

// Parses "YYYY-MM-DD HH:MM:SS" with an optional fraction of a second of any number of
// digits (truncated to milliseconds); a 'T' may replace the space. Returns milliseconds
// since 1970-01-01 00:00:00 read as UTC, or nullopt when the text is not such a timestamp
// or names an impossible date or time (month 13, 31 April, 24:00:00, ...).
std::optional<int64_t> ParseDateTimeMs(std::string_view text);

// As ParseDateTimeMs, for a trace's rows: only from 1970 to 2099 (nullopt otherwise). The
// rows of a trace are of one era; one dated year 1 or 9999 would stretch a replay over
// millennia and leave every other row at one far end of it.
std::optional<int64_t> ParseTraceTimeMs(std::string_view text);
inline constexpr std::string_view kTraceTimeRange = "from 1970 to 2099";

}  // namespace airtime
