#include "airtime/sim/interference_file.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

TEST(InterferenceFileTest, ReadsPairsBothWaysAndTheDefault) {
  auto m = ParseInterferenceCsv(
      "family,other,factor\n"
      "embedder,reranker,0.5\n"
      "reranker,embedder,0.8\n"
      "chat,chat,0.7\n"
      "chat,embedder,0.9\n"
      "*,*,0.95\n",
      "site.csv");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_DOUBLE_EQ(m->Factor("embedder", "reranker"), 0.5);  // each way its own factor
  EXPECT_DOUBLE_EQ(m->Factor("reranker", "embedder"), 0.8);
  EXPECT_DOUBLE_EQ(m->Factor("Embedder", "CHAT"), 0.9);  // one way only: both ways, any case
  EXPECT_DOUBLE_EQ(m->Factor("chat", "embedder"), 0.9);
  EXPECT_DOUBLE_EQ(m->Factor("chat", "chat"), 0.7);
  EXPECT_DOUBLE_EQ(m->Factor("chat", "reranker"), 0.95);  // not listed: the default
  EXPECT_DOUBLE_EQ(m->Factor("", "chat"), 0.95);
  EXPECT_EQ(m->Canonical("RERANKER"), "reranker");
  EXPECT_EQ(m->families(), (std::vector<std::string>{"chat", "embedder", "reranker"}));
  // Without a '*' row, pairs not listed lose nothing.
  auto plain = ParseInterferenceCsv("family,other,factor\na,b,0.6\n", "p.csv");
  ASSERT_TRUE(plain.ok());
  EXPECT_DOUBLE_EQ(plain->Factor("a", "c"), 1.0);
}

TEST(InterferenceFileTest, ErrorsNameTheFileLineAndWhat) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"family,other\na,b\n", "t.csv:1: missing column 'factor'"},
      {"family,other,factor\na,b,0\n",
       "t.csv:2: column 'factor': expected a speed factor in (0, 1], got '0'"},
      {"family,other,factor\na,b,1.2\n",
       "t.csv:2: column 'factor': expected a speed factor in (0, 1], got '1.2'"},
      {"family,other,factor\na,b,x\n", "t.csv:2: column 'factor'"},
      {"family,other,factor\na,b,0.5\n\na,b,0.6\n",
       "t.csv:4: pair a,b is already listed on line 2"},
      {"family,other,factor\nChat,b,0.5\nchat,c,0.6\n",
       "t.csv:3: column 'family': family 'chat' is spelled 'Chat'"},
      {"family,other,factor\n*,b,0.5\n", "t.csv:2: '*' stands for every family only as '*,*'"},
      {"family,other,factor\n*,*,0.5\n*,*,0.6\na,b,1\n",
       "t.csv:3: the default '*,*' is already set on line 2"},
      {"family,other,factor\n,b,0.5\n", "t.csv:2: column 'family': expected a model family"},
      {"family,other,factor\na,b\n", "t.csv:2: expected 3 fields"},
      {"family,other,factor\n", "t.csv: no pairs"},
  };
  for (const Case& c : cases) {
    auto m = ParseInterferenceCsv(c.text, "t.csv");
    ASSERT_FALSE(m.ok()) << c.text;
    EXPECT_NE(m.status().message().find(c.message), std::string::npos)
        << c.text << " -> " << m.status().message();
  }
  auto missing = LoadInterferenceFile("/nonexistent/measured.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "interference file '/nonexistent/measured.csv' not found");
}

// A file that never ends is refused before a byte is read (it used to grow until bad_alloc).
TEST(InterferenceFileTest, DevZeroIsRefused) {
  auto m = LoadInterferenceFile("/dev/zero");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "interference file '/dev/zero' is a character device, not a regular file");
}

}  // namespace
}  // namespace airtime
