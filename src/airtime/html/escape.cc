#include "airtime/html/escape.h"

#include "airtime/base/utf8.h"

namespace airtime {

std::string EscapeText(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  ForEachCodePoint(text, [&](uint32_t cp, std::string_view bytes) {
    switch (cp) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
      case '\n':
        out += static_cast<char>(cp);
        break;
      default:
        out.append(IsControlCodePoint(cp) ? kUtf8Replacement : bytes);
    }
  });
  return out;
}

std::string Abbreviate(std::string_view text, size_t max_chars) {
  size_t chars = 0, i = 0, cut = std::string_view::npos;
  while (i < text.size()) {
    if (chars == max_chars - (max_chars > 0 ? 1 : 0) && cut == std::string_view::npos) cut = i;
    if (chars == max_chars) return std::string(text.substr(0, cut)) + "\xE2\x80\xA6";
    const size_t n = Utf8SequenceAt(text, i);
    i += n == 0 ? 1 : n;
    ++chars;
  }
  return std::string(text);
}

}  // namespace airtime
