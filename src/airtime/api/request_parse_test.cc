// Tests of the API's pure parsing: bounded JSON, surrogate pairs, query strings, UTF-8.
#include "airtime/api/request_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "airtime/api/bounded_json.h"
#include "airtime/base/utf8.h"

namespace airtime {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace {

TEST(BoundedJson, DepthAndSizeAreCheckedWithoutParsing) {
  EXPECT_TRUE(CheckJsonBounds("[[[1]]]", "body", {100, 3}).ok());
  const Status deep = CheckJsonBounds("[[[[1]]]]", "body", {100, 3});
  EXPECT_EQ(deep.message(), "body: nested deeper than 3 levels (at byte 3)");
  // Brackets inside strings (with escaped quotes) do not count.
  EXPECT_TRUE(CheckJsonBounds(R"(["[[[[\"[[[[", {"a": "{{{{"}])", "body", {100, 3}).ok());
  EXPECT_EQ(CheckJsonBounds(std::string(101, ' '), "request", {100, 3}).message(),
            "request: longer than 100 bytes");
  // 60,000 levels: refused at once, nothing recursive ran.
  EXPECT_FALSE(ParseBoundedJson(std::string(60000, '[') + std::string(60000, ']'), "b").ok());
}

// A key given twice in one object is refused (the library would keep the last); the same
// key in two objects is not twice.
TEST(BoundedJson, AKeyGivenTwiceInOneObjectIsRefused) {
  auto twice = ParseBoundedJson(R"({"rps": 1, "rps": 2})", "body");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(), "body: field 'rps' given twice");
  EXPECT_EQ(ParseDemandBody(R"({"rps": 1, "rps": 2})").status().message(),
            "body: field 'rps' given twice");
  auto nested =
      ParseBoundedJson(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})", "b");
  EXPECT_TRUE(nested.ok()) << nested.status().message();
  EXPECT_FALSE(ParseBoundedJson(R"([{"a": {"y": 1, "y": 2}}])", "b").ok());
}

TEST(BoundedJson, ParseErrorsSayWhere) {
  auto bad = ParseBoundedJson("{\"a\": }", "body");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(
      bad.status().message().rfind("body: not valid JSON: parse error at line 1, column 7", 0), 0u)
      << bad.status().message();
  // A number too large for a double is out_of_range, not parse_error, in nlohmann: it once
  // escaped as an exception (found by fuzz/harness/http_body.cc).
  auto huge = ParseBoundedJson("[6666666666E666666666666]", "body");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("body: not valid JSON: number overflow"),
            std::string::npos)
      << huge.status().message();
  EXPECT_EQ(ParsePriorityBody(R"({"priority": 1E400})").status().code(),
            StatusCode::kInvalidArgument);
  auto lone = ParseBoundedJson(R"(["\ud83d"])", "request");
  ASSERT_FALSE(lone.ok());
  EXPECT_NE(lone.status().message().find("lone UTF-16 surrogate"), std::string::npos);
  auto ok = ParseBoundedJson(R"({"a": "\ud83d\ude00"})", "body");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)["a"], "\xF0\x9F\x98\x80");
}

TEST(BoundedJson, SurrogatePairsBecomeOneEscape) {
  EXPECT_EQ(RewriteSurrogatePairs(R"({"n": "a\ud83d\ude00b", "m": "\\ud83d\ude00"})"),
            R"({"n": "a\U0001F600b", "m": "\\ud83d\ude00"})");
  EXPECT_EQ(RewriteSurrogatePairs("{\"x\": \"\\uD83D\\uDE00\"}\n[1]"),
            "{\"x\": \"\\U0001F600\"}\n[1]");
  EXPECT_EQ(RewriteSurrogatePairs(R"(["\u00e9 \ud83d"])"), R"(["\u00e9 \ud83d"])");
}

TEST(BoundedJson, DumpReplacesInvalidUtf8) {
  EXPECT_EQ(DumpJson(nlohmann::json{{"n", "a\xff"}}), "{\"n\":\"a\xEF\xBF\xBD\"}");
}

TEST(Utf8, StrictValidation) {
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xF0\x9F\x98\x80"));
  EXPECT_EQ(FindInvalidUtf8("ab\xff"), 2u);
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));          // cut short
  EXPECT_EQ(ReplaceInvalidUtf8("a\xff"
                               "b\xC3"),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
}

TEST(Utf8, PrintableTextEscapesControlsButNewlines) {
  EXPECT_EQ(PrintableText("co\x1b[31mde"), "co\\x1B[31mde");
  EXPECT_EQ(PrintableText("a\tb\rc\nd\x7f"), "a\\x09b\\x0Dc\nd\\x7F");
  EXPECT_EQ(PrintableText("x\xC2\x85y\xE2\x80\xA8z"), "x\\x85y\\u2028z");  // C1, LS
  EXPECT_EQ(PrintableText("caf\xC3\xA9 \xff"), "caf\xC3\xA9 \xEF\xBF\xBD");
  EXPECT_EQ(PrintableText("a\nb", /*keep_newlines=*/false), "a\\x0Ab");
}

TEST(QueryString, DecodesAndBounds) {
  auto q = ParseQueryString("a=1&b=x%20y+z&c&&d=");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(*q, (QueryParams{{"a", "1"}, {"b", "x y z"}, {"c", ""}, {"d", ""}}));
  EXPECT_TRUE(ParseQueryString("")->empty());
  EXPECT_EQ(ParseQueryString("a=%4").status().message(),
            "query: malformed percent-escape at '%4' (expected %XX, two hex digits)");
  EXPECT_EQ(ParseQueryString("a=%00").status().message(), "query 'a': contains a NUL byte");
  EXPECT_EQ(ParseQueryString("a=%0a").status().message(),
            "query 'a': contains a control character");
  EXPECT_EQ(ParseQueryString("a=%c3").status().message(), "query 'a': not valid UTF-8");
  EXPECT_EQ(ParseQueryString("a=1&b=2&c=3", {100, 2, 10}).status().message(),
            "query: more than 2 parameters");
  EXPECT_EQ(ParseQueryString("a=12345678901", {100, 2, 10}).status().message(),
            "query 'a': longer than 10 bytes");
}

TEST(QueryString, ListFilter) {
  const Caller admin{"", true}, team_a{"team-a", false};
  auto f = ParseListQuery("state=active&kind=realtime&tenant=team-b&limit=7", admin);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->state, "active");
  EXPECT_EQ(f->kind, "realtime");
  EXPECT_EQ(f->tenant, "team-b");
  EXPECT_EQ(f->limit, 7);
  EXPECT_EQ(f->offset, 0);
  EXPECT_EQ(ParseListQuery("limit=200&offset=400", admin)->offset, 400);
  // A kind's synonyms, as a workload file takes them, list what they name there.
  EXPECT_EQ(ParseListQuery("kind=serving", admin)->kind, "realtime");
  EXPECT_EQ(ParseListQuery("kind=inference", admin)->kind, "realtime");
  EXPECT_EQ(ParseListQuery("kind=", admin)->kind, "");
  EXPECT_EQ(ParseListQuery("offset=-1", admin).status().message(),
            "query 'offset': expected an integer from 0 to 2147483647, found '-1'");
  EXPECT_EQ(ParseListQuery("offset=%201", admin).status().message(),
            "query 'offset': expected an integer from 0 to 2147483647, found ' 1'");
  EXPECT_EQ(ParseListQuery("page=2", admin).status().message(),
            "query 'page': unknown (expected state, kind, tenant, limit or offset)");
  EXPECT_EQ(ParseListQuery("tenant=team-b", team_a).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ParseListQuery("tenant=team-a", team_a)->tenant, "");
  EXPECT_EQ(ParseListQuery("limit=99999999999", admin).status().message(),
            "query 'limit': expected an integer from 0 to 2147483647, found '99999999999'");
  EXPECT_EQ(ParseListQuery("state=done", admin).status().message(),
            "query 'state': expected one of active, queued, running, succeeded, failed, "
            "cancelled, found 'done'");
}

TEST(SmallBodies, PriorityAndRps) {
  EXPECT_EQ(*ParsePriorityBody(R"({"priority": -3})"), -3);
  EXPECT_DOUBLE_EQ(ParseDemandBody(R"({"rps": 0.5})")->rps, 0.5);
  EXPECT_FALSE(std::signbit(ParseDemandBody(R"({"rps": -0.0})")->rps));  // echoed as 0
  EXPECT_EQ(ParseDemandBody(R"({"rps": 0.5})")->request_class, "");
  EXPECT_EQ(ParseDemandBody(R"({"rps": 2, "class": "code"})")->request_class, "code");
  EXPECT_EQ(ParseDemandBody(R"({"rps": 2, "class": 3})").status().message(),
            "field 'class': expected the name of one of the service's request classes, got 3");
  EXPECT_EQ(ParseDemandBody(R"({"rps": 2, "class": ""})").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_THAT(ParseDemandBody(R"({"rps": 2, "clas": "code"})").status().message(),
              StartsWith("field 'clas': unknown"));
  EXPECT_THAT(ParseDemandBody(R"({"class": "code"})").status().message(),
              StartsWith("field 'rps': missing"));
  EXPECT_EQ(ParsePriorityBody(R"({"priority": [[[[[[[[[1]]]]]]]]]})").status().message(),
            "body: nested deeper than 8 levels (at byte 20)");
  EXPECT_THAT(ParseDemandBody(R"({"rps": "x\ud83d"})").status().message(),
              StartsWith("field 'rps': expected a JSON object body such as {\"rps\": 12.5} or "
                         "{\"rps\": 12.5, \"class\": \"code\"}; body: not valid JSON: "));
  // A number beyond a double's range is said as such, not only as a body of the wrong shape.
  EXPECT_THAT(ParseDemandBody(R"({"rps": 1e400})").status().message(),
              AllOf(StartsWith("field 'rps': expected a JSON object body such as {\"rps\": "
                               "12.5} or {\"rps\": 12.5, \"class\": \"code\"}; body: not "
                               "valid JSON: "),
                    HasSubstr("1e400")));
}

}  // namespace
}  // namespace airtime
