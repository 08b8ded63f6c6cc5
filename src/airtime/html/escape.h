// Escaping text for HTML and SVG: every string that comes from input files (scenario,
// cluster, service and policy names) goes through EscapeText before it reaches a page.
#pragma once

#include <string>
#include <string_view>

namespace airtime {

// `text` safe as the content of an HTML or XML element or a quoted attribute value: & < > "
// and ' become entities, bytes that are not valid UTF-8 and control characters other than
// tab and newline become U+FFFD (XML 1.0 does not allow them, and they have no place in a
// report).
std::string EscapeText(std::string_view text);

// At most `max_chars` characters of `text` (whole UTF-8 sequences), with "…" in place of the
// rest when it was cut; text that is not valid UTF-8 is cut by bytes (EscapeText repairs it).
std::string Abbreviate(std::string_view text, size_t max_chars);

}  // namespace airtime
