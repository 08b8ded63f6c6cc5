#include "airtime/cli/completion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace airtime {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void Define(CLI::App& app) {
  static std::string s;
  static bool all = false;
  CLI::App* ls = app.add_subcommand("ls", "list");
  ls->add_option("--state", s, "state");
  ls->add_option("-o,--output", s, "format");
  ls->add_flag("--all", all, "all");
  CLI::App* submit = app.add_subcommand("submit", "submit");
  submit->add_option("FILE", s, "a file");
}

// What bash completes `words` (the last one being completed) to, with the script loaded.
std::string Complete(const std::string& script, const std::string& words) {
  // A folder of its own: ctest runs the tests of this file at once, in separate processes.
  std::string dir = ::testing::TempDir() + "/completion_XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return "mkdtemp failed";
  std::ofstream(dir + "/completion.bash") << script;
  std::ofstream(dir + "/driver.bash") << "source " << dir << "/completion.bash\n"
                                      << "COMP_WORDS=(" << words << ")\n"
                                      << "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
                                      << "_airtime_complete\n"
                                      << "echo \"${COMPREPLY[*]}\"\n";
  FILE* p = popen(("bash " + dir + "/driver.bash 2>&1").c_str(), "r");
  std::string out;
  char buf[512];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(BashCompletion, CompletesSubcommandsFlagsAndFlagValuesInBash) {
  CLI::App app{"sample", "airtime"};
  Define(app);
  const std::string script =
      BashCompletion(app, {{"-o", {"table", "wide", "json"}}, {"--state", {"queued", "running"}}});
  EXPECT_THAT(script, HasSubstr("complete -o default -F _airtime_complete airtime"));
  EXPECT_EQ(Complete(script, "airtime ''"), "ls submit");
  EXPECT_EQ(Complete(script, "airtime l"), "ls");
  EXPECT_EQ(Complete(script, "airtime ls --s"), "--state");
  EXPECT_EQ(Complete(script, "airtime ls --all -o w"), "wide");
  EXPECT_EQ(Complete(script, "airtime ls --state ''"), "queued running");
  // Positional arguments are not flags.
  EXPECT_THAT(Complete(script, "airtime submit --"), Not(HasSubstr("FILE")));
}

TEST(BashCompletion, WordsThatWouldBreakTheScriptAreLeftOut) {
  CLI::App app{"sample", "airtime"};
  Define(app);
  const std::string script = BashCompletion(app, {{"-o", {"ok", "bad'quote", "$(boom)"}}});
  EXPECT_THAT(script, Not(HasSubstr("bad'quote")));
  EXPECT_THAT(script, Not(HasSubstr("$(boom)")));
  EXPECT_EQ(Complete(script, "airtime ls -o ''"), "ok");
}

}  // namespace
}  // namespace airtime
