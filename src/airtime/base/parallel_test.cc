#include "airtime/base/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace airtime {
namespace {

TEST(ParallelForTest, RunsEveryTaskOnceWhateverTheThreadCount) {
  for (int threads : {0, 1, 2, 4, 64}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{100}}) {
      std::vector<std::atomic<int>> runs(n);
      ParallelFor(n, threads, [&](size_t i) { runs[i].fetch_add(1); });
      for (size_t i = 0; i < n; ++i)
        EXPECT_EQ(runs[i].load(), 1)
            << "task " << i << " of " << n << ", " << threads << " threads";
    }
  }
}

TEST(ParallelForTest, OneThreadRunsTheTasksInOrderOnTheCaller) {
  std::vector<size_t> order;
  const std::thread::id caller = std::this_thread::get_id();
  bool elsewhere = false;
  ParallelFor(5, 1, [&](size_t i) {
    order.push_back(i);
    elsewhere = elsewhere || std::this_thread::get_id() != caller;
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(elsewhere);
}

TEST(ParallelForTest, TasksRunSideBySide) {
  // Each of two tasks waits (up to 10 s) to see the other one started: only possible when
  // both run at once.
  std::atomic<int> started{0};
  std::vector<char> saw_other(2, 0);
  ParallelFor(2, 2, [&](size_t i) {
    started.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    saw_other[i] = started.load() == 2;
  });
  EXPECT_TRUE(saw_other[0]);
  EXPECT_TRUE(saw_other[1]);
}

TEST(ParallelForTest, RethrowsTheFirstFailingTasksExceptionAndStartsNoMore) {
  for (int threads : {1, 3}) {
    std::atomic<int> ran{0};
    try {
      ParallelFor(1000, threads, [&](size_t i) {
        ran.fetch_add(1);
        if (i == 3 || i == 7) throw std::runtime_error("task " + std::to_string(i));
      });
      ADD_FAILURE() << "no exception with " << threads << " threads";
    } catch (const std::runtime_error& e) {
      // Tasks are handed out in index order, so task 3 always starts, and it is the lowest
      // that throws.
      EXPECT_EQ(std::string(e.what()), "task 3") << threads << " threads";
    }
    EXPECT_LT(ran.load(), 1000) << threads << " threads";
  }
}

TEST(ParallelForTest, DefaultParallelismIsAtLeastOne) { EXPECT_GE(DefaultParallelism(), 1); }

}  // namespace
}  // namespace airtime
