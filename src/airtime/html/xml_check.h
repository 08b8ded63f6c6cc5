// A small well-formedness check of XML (and of XHTML-compatible HTML such as HtmlPage's):
// one root element, every element closed in order, quoted attributes, no bare '<' or '&' in
// text, only the five predefined entities and character references. Not a validating
// parser: it does not read DTDs, CDATA sections or processing instructions (it refuses
// them). For tests of the report writers. Pure function; thread-safe.
#pragma once

#include <string_view>

#include "airtime/base/status.h"

namespace airtime {

// OK, or an error naming the byte offset and what was wrong there. A leading
// "<!DOCTYPE ...>" is allowed.
Status CheckWellFormedXml(std::string_view text);

}  // namespace airtime
