#include "airtime/traces/datetime.h"

namespace airtime {
namespace {

// Reads exactly `n` digits at `s[*pos]`, advancing `*pos`.
std::optional<int> Digits(std::string_view s, size_t* pos, size_t n) {
  if (*pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  return v;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

}  // namespace

// Howard Hinnant's days_from_civil.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::optional<int64_t> ParseDateTimeMs(std::string_view s) {
  size_t pos = 0;
  auto year = Digits(s, &pos, 4);
  if (!year || !Expect(s, &pos, '-')) return std::nullopt;
  auto month = Digits(s, &pos, 2);
  if (!month || !Expect(s, &pos, '-')) return std::nullopt;
  auto day = Digits(s, &pos, 2);
  if (!day) return std::nullopt;
  if (pos >= s.size() || (s[pos] != ' ' && s[pos] != 'T')) return std::nullopt;
  ++pos;
  auto hour = Digits(s, &pos, 2);
  if (!hour || !Expect(s, &pos, ':')) return std::nullopt;
  auto minute = Digits(s, &pos, 2);
  if (!minute || !Expect(s, &pos, ':')) return std::nullopt;
  auto second = Digits(s, &pos, 2);
  if (!second) return std::nullopt;
  int64_t ms = 0;
  if (pos < s.size()) {
    if (s[pos] != '.' || pos + 1 == s.size()) return std::nullopt;
    ++pos;
    int scale = 100;
    for (; pos < s.size(); ++pos) {
      char c = s[pos];
      if (c < '0' || c > '9') return std::nullopt;
      ms += (c - '0') * scale;
      scale /= 10;
    }
  }
  if (*month < 1 || *month > 12 || *day < 1 || *day > DaysInMonth(*year, *month) || *hour > 23 ||
      *minute > 59 || *second > 59)
    return std::nullopt;
  const int64_t days =
      DaysFromCivil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day));
  return ((days * 24 + *hour) * 60 + *minute) * 60000 + *second * 1000LL + ms;
}

std::optional<int64_t> ParseTraceTimeMs(std::string_view text) {
  constexpr int64_t kEndMs = 4'102'444'800'000;  // 2100-01-01 00:00:00
  const std::optional<int64_t> ms = ParseDateTimeMs(text);
  if (!ms || *ms < 0 || *ms >= kEndMs) return std::nullopt;
  return ms;
}

}  // namespace airtime
