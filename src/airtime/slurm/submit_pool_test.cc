// SubmitPool against clients that count how many submissions are under way at once.
#include "airtime/slurm/submit_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace airtime::slurm {
namespace {

using ::testing::UnorderedElementsAre;
using namespace std::chrono_literals;

// What every client of one test shares: the submissions under way and made, which names
// Slurm refuses, and a gate that holds each submission until `hold_until` are under way at
// once (or a second passed: a pool that does not overlap them does not hang the test).
struct Slurm {
  std::mutex mu;
  std::condition_variable cv;
  int under_way = 0, most_at_once = 0, hold_until = 0;
  int64_t next_id = 100;
  std::set<std::string> refused;
  std::vector<std::pair<std::string, int>> made;  // (job name, client number)
};

class CountingClient final : public SlurmClient {
 public:
  CountingClient(Slurm* slurm, int number) : slurm_(slurm), number_(number) {}
  std::string ApiVersion() const override { return "v0.0.38"; }
  std::string SlurmRelease() const override { return "22.05.8"; }
  StatusOr<std::vector<SlurmNode>> Nodes() override { return None(); }
  StatusOr<std::vector<SlurmPartition>> Partitions() override { return None(); }
  StatusOr<std::vector<SlurmJob>> Jobs() override { return None(); }
  StatusOr<std::vector<SlurmJob>> JobStates() override { return None(); }
  StatusOr<SlurmJob> Job(int64_t) override { return None(); }
  StatusOr<int64_t> Submit(const JobRequest& r) override {
    std::unique_lock<std::mutex> lock(slurm_->mu);
    slurm_->most_at_once = std::max(slurm_->most_at_once, ++slurm_->under_way);
    slurm_->cv.notify_all();
    slurm_->cv.wait_for(lock, 1s, [&] { return slurm_->most_at_once >= slurm_->hold_until; });
    --slurm_->under_way;
    slurm_->made.emplace_back(r.name, number_);
    if (slurm_->refused.count(r.name)) return FailedPrecondition("refused " + r.name);
    return slurm_->next_id++;
  }
  Status SetRequiredNodes(int64_t, const std::vector<std::string>&) override { return None(); }
  Status Release(int64_t) override { return None(); }
  Status Hold(int64_t) override { return None(); }
  Status SetPriority(int64_t, int64_t) override { return None(); }
  Status Requeue(int64_t, bool) override { return None(); }
  Status Cancel(int64_t) override { return None(); }
  Status Signal(int64_t, const std::string&) override { return None(); }

 private:
  static Status None() { return Internal("a submitter only submits"); }
  Slurm* slurm_;
  int number_;
};

std::vector<JobRequest> Jobs(int n) {
  std::vector<JobRequest> jobs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) jobs[static_cast<size_t>(i)].name = "j" + std::to_string(i);
  return jobs;
}

std::vector<std::unique_ptr<SlurmClient>> Helpers(Slurm* slurm, int n) {
  std::vector<std::unique_ptr<SlurmClient>> helpers;
  for (int i = 1; i <= n; ++i) helpers.push_back(std::make_unique<CountingClient>(slurm, i));
  return helpers;
}

TEST(SubmitPoolTest, WithoutHelpersTheCallerSubmitsInOrder) {
  Slurm slurm;
  CountingClient own(&slurm, 0);
  SubmitPool pool(&own, {});
  EXPECT_EQ(pool.width(), 1u);
  auto out = pool.SubmitAll(Jobs(3));
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(out[i].job.ok());
    EXPECT_EQ(*out[i].job, 100 + static_cast<int64_t>(i));
  }
  EXPECT_EQ(slurm.most_at_once, 1);
  EXPECT_EQ(slurm.made,
            (std::vector<std::pair<std::string, int>>{{"j0", 0}, {"j1", 0}, {"j2", 0}}));
}

// Four jobs, three helpers and the caller: all four are under way at once, each submitted
// once, each result in its job's place.
TEST(SubmitPoolTest, ABatchIsSubmittedConcurrentlyEachJobOnce) {
  Slurm slurm;
  slurm.hold_until = 4;
  CountingClient own(&slurm, 0);
  SubmitPool pool(&own, Helpers(&slurm, 3));
  EXPECT_EQ(pool.width(), 4u);
  const auto before = SubmitPool::Clock::now();
  auto out = pool.SubmitAll(Jobs(4));
  EXPECT_EQ(slurm.most_at_once, 4);
  ASSERT_EQ(out.size(), 4u);
  std::set<int64_t> ids;
  for (const auto& s : out) {
    ASSERT_TRUE(s.job.ok()) << s.job.status().ToString();
    ids.insert(*s.job);
    EXPECT_GE(s.at, before);
  }
  EXPECT_EQ(ids, (std::set<int64_t>{100, 101, 102, 103}));
  std::set<std::string> names;
  std::set<int> clients;
  for (const auto& [name, client] : slurm.made) {
    names.insert(name);
    clients.insert(client);
  }
  EXPECT_EQ(slurm.made.size(), 4u);
  EXPECT_THAT(names, UnorderedElementsAre("j0", "j1", "j2", "j3"));
  EXPECT_THAT(clients, UnorderedElementsAre(0, 1, 2, 3));  // the caller took its share
}

TEST(SubmitPoolTest, ARefusedJobIsAnErrorInItsPlaceAndTheOthersGoThrough) {
  Slurm slurm;
  slurm.refused = {"j1", "j4"};
  CountingClient own(&slurm, 0);
  SubmitPool pool(&own, Helpers(&slurm, 2));
  auto out = pool.SubmitAll(Jobs(6));
  ASSERT_EQ(out.size(), 6u);
  for (size_t i = 0; i < out.size(); ++i) {
    const bool refused = i == 1 || i == 4;
    EXPECT_EQ(out[i].job.ok(), !refused) << i;
    if (refused) {
      EXPECT_EQ(out[i].job.status().message(), "refused j" + std::to_string(i));
    }
  }
  EXPECT_EQ(slurm.made.size(), 6u);
}

// More jobs than threads, batch after batch (TSan's case): every job of every batch once.
TEST(SubmitPoolTest, ManyBatchesInARowEachJobOnce) {
  Slurm slurm;
  CountingClient own(&slurm, 0);
  SubmitPool pool(&own, Helpers(&slurm, 3));
  size_t total = 0;
  for (int batch = 0; batch < 50; ++batch) {
    const int n = batch % 9;  // empty batches too
    auto out = pool.SubmitAll(Jobs(n));
    ASSERT_EQ(out.size(), static_cast<size_t>(n));
    for (const auto& s : out) EXPECT_TRUE(s.job.ok());
    total += static_cast<size_t>(n);
  }
  EXPECT_EQ(slurm.made.size(), total);
  EXPECT_EQ(slurm.next_id - 100, static_cast<int64_t>(total));
}

TEST(SubmitPoolTest, EndsIdleHelpersAtDestruction) {
  Slurm slurm;
  CountingClient own(&slurm, 0);
  { SubmitPool pool(&own, Helpers(&slurm, 5)); }
  EXPECT_TRUE(slurm.made.empty());
}

}  // namespace
}  // namespace airtime::slurm
