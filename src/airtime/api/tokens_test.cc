// Tokens tests: file format, errors with path and line, defaults, authentication.
#include "airtime/api/tokens.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace airtime {
namespace {

const std::string kAdmin(64, 'a');
const std::string kTeamA = "team-a-token-0123456789";

TEST(Tokens, ParsesNamesCommentsAndBlankLines) {
  auto t = Tokens::Parse("# comment\n\nadmin " + kAdmin + "\n  team-a\t" + kTeamA + "  \n", "f");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->entries().size(), 2u);
  EXPECT_EQ(t->entries()[1].name, "team-a");
  EXPECT_EQ(t->AdminToken(), kAdmin);
}

TEST(Tokens, ErrorsNameOriginAndLine) {
  auto bad = [](const std::string& text) { return Tokens::Parse(text, "/d/tokens").status(); };
  EXPECT_EQ(bad("admin " + kAdmin + "\njust-one-field\n").message(),
            "/d/tokens:2: expected 'NAME TOKEN' (NAME a tenant or admin)");
  EXPECT_EQ(bad("# c\nteam-a short\n").message(),
            "/d/tokens:2: token for 'team-a': expected 16 to 256 characters");
  EXPECT_EQ(bad("a " + kTeamA + "\nb " + kTeamA + "\n").message(),
            "/d/tokens:2: this token appears on an earlier line");
  EXPECT_EQ(bad("te@m " + kTeamA + "\n").message(),
            "/d/tokens:1: name 'te@m': expected letters, digits, '-', '_' or '.'");
  EXPECT_EQ(bad("a " + kTeamA + "\"\n").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad("# nothing\n").message(), "/d/tokens: no tokens");
  EXPECT_EQ(Tokens::Load("/nonexistent/tokens").status().code(), StatusCode::kNotFound);
  EXPECT_NE(Tokens::Load("/nonexistent/tokens").status().message().find("/nonexistent/tokens"),
            std::string::npos);
}

TEST(Tokens, AuthenticatesBearerTokens) {
  auto t = Tokens::Parse("admin " + kAdmin + "\nteam-a " + kTeamA + "\n", "f");
  ASSERT_TRUE(t.ok());
  auto admin = t->Authenticate("Bearer " + kAdmin);
  ASSERT_TRUE(admin.ok());
  EXPECT_TRUE(admin->admin);
  EXPECT_EQ(admin->tenant, "");
  EXPECT_TRUE(t->Authenticate("bearer " + kAdmin).ok());
  auto tenant = t->Authenticate("Bearer " + kTeamA);
  ASSERT_TRUE(tenant.ok());
  EXPECT_FALSE(tenant->admin);
  EXPECT_EQ(tenant->tenant, "team-a");
  for (const std::string& h :
       std::vector<std::string>{"", "Bearer ", "Basic abc", "Bearer wrong-token-000000000",
                                "Bearer " + kTeamA + "x", "Bearer " + kTeamA.substr(1)}) {
    EXPECT_EQ(t->Authenticate(h).status().code(), StatusCode::kUnauthenticated) << h;
  }
  EXPECT_NE(t->Authenticate("").status().message().find("missing"), std::string::npos);
}

TEST(Tokens, GenerateDefaultCreatesPrivateFileOnce) {
  const std::string dir = ::testing::TempDir() + "/tokens_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/tokens";
  std::filesystem::remove(path);
  auto first = Tokens::GenerateDefault(path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->AdminToken().size(), 64u);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  auto again = Tokens::GenerateDefault(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->AdminToken(), first->AdminToken());
  EXPECT_TRUE(again->Authenticate("Bearer " + first->AdminToken()).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace airtime
