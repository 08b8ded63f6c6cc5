#include "airtime/html/escape.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

TEST(EscapeText, MarkupFromInputBecomesText) {
  EXPECT_EQ(EscapeText("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  EXPECT_EQ(EscapeText("plain-name_1"), "plain-name_1");
  EXPECT_EQ(EscapeText("gr\xC3\xBC\xC3\x9F"), "gr\xC3\xBC\xC3\x9F");  // UTF-8 kept
}

TEST(EscapeText, InvalidBytesAndControlCharactersAreReplaced) {
  EXPECT_EQ(EscapeText("a\xFF"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(EscapeText(std::string("a\0b", 3)),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(EscapeText("a\x1B[31mb"), "a\xEF\xBF\xBD[31mb");
  EXPECT_EQ(EscapeText("tab\tand\nnewline"), "tab\tand\nnewline");
}

TEST(Abbreviate, CutsWholeCharactersAndMarksTheCut) {
  EXPECT_EQ(Abbreviate("short", 10), "short");
  EXPECT_EQ(Abbreviate("exactly10!", 10), "exactly10!");
  EXPECT_EQ(Abbreviate("abcdefghijk", 5), "abcd\xE2\x80\xA6");
  // Four two-byte characters cut to three characters: two kept, then the ellipsis.
  EXPECT_EQ(Abbreviate("\xC3\xBC\xC3\xBC\xC3\xBC\xC3\xBC", 3), "\xC3\xBC\xC3\xBC\xE2\x80\xA6");
}

}  // namespace
}  // namespace airtime
