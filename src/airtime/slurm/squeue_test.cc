#include "airtime/slurm/squeue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SqueueTest, TheArgumentsAskForEveryJobInBrief) {
  EXPECT_THAT(SqueueBriefArgs(),
              ElementsAre("--noheader", "--states=all",
                          "--Format=JobID:|,State:|,RestartCnt:|,exit_code:|,PriorityLong:|,"
                          "UserName:|,Reason:|"));
}

// Lines as the lab's squeue (22.05.8) printed them: a completed job, one that exited 3 (wait
// status 768), one killed by SIGTERM (15), a running one, and a requeued held one.
TEST(SqueueTest, ParsesWhatTheLabPrinted) {
  auto jobs = ParseSqueueBrief(
      "4|COMPLETED|0|0|100126|root|None|\n"
      "1|FAILED|0|768|100126|root|NonZeroExitCode|\n"
      "2|FAILED|0|15|100126|root|JobLaunchFailure|\n"
      "3|RUNNING|0|0|100126|alice|None|\n"
      "7|PENDING|1|0|0|airtime|job requeued in held state|\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 5u);
  const SlurmJob& failed = (*jobs)[1];
  EXPECT_EQ(failed.id, 1);
  EXPECT_EQ(failed.state, "FAILED");
  EXPECT_EQ(failed.exit_code, 768);
  EXPECT_EQ(failed.state_reason, "NonZeroExitCode");
  EXPECT_EQ((*jobs)[3].user, "alice");
  EXPECT_EQ((*jobs)[3].priority, 100126);
  const SlurmJob& held = (*jobs)[4];
  EXPECT_TRUE(held.Held());
  EXPECT_EQ(held.restarts, 1);
  EXPECT_EQ(held.state_reason, "job requeued in held state");
  EXPECT_TRUE(held.name.empty());
  EXPECT_TRUE(held.gpus.empty());
  EXPECT_TRUE(ParseSqueueBrief("")->empty());
}

// From 23.11 on squeue prints exit_code as EXIT:SIGNAL (src/squeue/print.c,
// _print_job_exit_code), and nothing for a job that has none yet: read back into the wait
// status 22.05 printed, so the actuator reads either alike.
TEST(SqueueTest, ReadsTheExitCodeOfNewerReleases) {
  auto jobs = ParseSqueueBrief(
      "1|FAILED|0|3:0|100126|root|NonZeroExitCode|\n"
      "2|FAILED|0|0:15|100126|root|JobLaunchFailure|\n"
      "3|RUNNING|0|0:0|100126|alice|None|\n"
      "4|PENDING|0||100126|alice|Resources|\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 4u);
  EXPECT_EQ((*jobs)[0].exit_code, 768);
  EXPECT_EQ((*jobs)[1].exit_code, 15);
  EXPECT_EQ((*jobs)[2].exit_code, 0);
  EXPECT_EQ((*jobs)[3].exit_code, 0);
  for (const char* bad : {"3:", ":0", "256:0", "0:128", "-1:0", "1:2:3", "x:0"}) {
    auto st = ParseSqueueBrief("1|FAILED|0|" + std::string(bad) + "|1|root|None|\n");
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_THAT(st.status().message(), HasSubstr("exit_code")) << bad;
  }
}

TEST(SqueueTest, TheReasonIsTheRestOfTheLine) {
  auto jobs = ParseSqueueBrief("9|PENDING|0|0|5|bob|odd | reason|\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_EQ(jobs->at(0).state_reason, "odd | reason");
}

TEST(SqueueTest, MalformedLinesAreErrorsThatQuoteThem) {
  for (const char* bad :
       {"x|RUNNING|0|0|1|u|None|", "1|RUNNING|0|0|1|u|None", "1|RUNNING|0|0|1|None|",
        "1|RUN NING|0|0|1|u|None|", "1|RUNNING|-1|0|1|u|None|", "1|RUNNING|0|zero|1|u|None|",
        "1|RUNNING|0|0|1|u;rm|None|", "0|RUNNING|0|0|1|u|None|"}) {
    auto jobs = ParseSqueueBrief(std::string("5|RUNNING|0|0|1|u|None|\n") + bad + "\n");
    ASSERT_FALSE(jobs.ok()) << bad;
    EXPECT_THAT(jobs.status().message(), HasSubstr("line 2")) << bad;
  }
}

}  // namespace
}  // namespace airtime::slurm
