// UTF-8: strict validation (RFC 3629: no overlong forms, no surrogates, nothing past
// U+10FFFF) and repair with U+FFFD, for text that crosses a trust boundary.
//
// Header-only: the functions are small and used by the API (answers, metrics) and the
// daemon (submissions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace airtime {

// The replacement character U+FFFD in UTF-8.
inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";

// The length (1..4) of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not
// one; *code_point (when given) receives the character.
inline size_t Utf8SequenceAt(std::string_view s, size_t i, uint32_t* code_point = nullptr) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  size_t n = 0;
  uint32_t cp = 0, min = 0;
  if (b0 < 0x80) {
    if (code_point) *code_point = b0;
    return 1;
  } else if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (code_point) *code_point = cp;
  return n;
}

// The offset of the first byte that does not begin a valid UTF-8 sequence, or npos.
inline size_t FindInvalidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceAt(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

inline bool IsValidUtf8(std::string_view s) { return FindInvalidUtf8(s) == std::string_view::npos; }

// `s` with each byte that is not part of a valid sequence replaced by U+FFFD.
inline std::string ReplaceInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceAt(s, i);
    if (n == 0) {
      out += kUtf8Replacement;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

// Control characters: C0 (U+0000..U+001F), DEL (U+007F), C1 (U+0080..U+009F), and the
// Unicode line and paragraph separators U+2028 / U+2029 (they end a line too).
inline bool IsControlCodePoint(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029;
}

// Calls `each(code_point, bytes)` for each character of `s` in order, `bytes` its UTF-8;
// a byte that begins no valid sequence comes as U+FFFD (kUtf8Replacement). The walk the
// encoders below and elsewhere (HTML, /metrics labels) share.
template <typename Each>
void ForEachCodePoint(std::string_view s, Each each) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = Utf8SequenceAt(s, i, &cp);
    if (n == 0) {
      each(uint32_t{0xFFFD}, kUtf8Replacement);
      ++i;
    } else {
      each(cp, s.substr(i, n));
      i += n;
    }
  }
}

// `s` as a terminal may show it: each control character but a newline (with
// `keep_newlines`; a name's is escaped too) written as an escape (`\x1B`, `\u2028`), each
// byte of no valid sequence as U+FFFD. The CLI prints what the API
// answers through it: text from a tenant or from Slurm (a foreign job's name) can then move
// no cursor, clear no screen and forge no line of a table.
inline std::string PrintableText(std::string_view s, bool keep_newlines = true) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  ForEachCodePoint(s, [&](uint32_t cp, std::string_view bytes) {
    if (!IsControlCodePoint(cp) || (cp == '\n' && keep_newlines)) {
      out.append(bytes);
    } else if (cp < 0x100) {
      out += "\\x";
      out += kHex[cp >> 4];
      out += kHex[cp & 0xF];
    } else {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
    }
  });
  return out;
}

}  // namespace airtime
