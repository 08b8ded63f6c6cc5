#include "airtime/fgd/fgd_protocol.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>

#include "airtime/fgd/fgd_expected.h"

namespace airtime {
namespace {

const std::string kData = AIRTIME_SOURCE_DIR "/tests/data/fgd/";
const std::string kNodes = kData + "openb_node_list_excerpt.csv";
const std::string kPods = kData + "openb_pod_list_excerpt.csv";
const std::string kTraces = AIRTIME_SOURCE_DIR "/../shared/traces/alibaba-gpu-2023/";

int64_t Requested(const OpenbPod& p) { return int64_t{p.num_gpu} * p.gpu_milli; }

class FgdExcerptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = ImportOpenbNodes(kNodes);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::make_unique<Cluster>(std::move(*c));
    auto p = ImportOpenbPods(kPods);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pods_ = std::move(*p);
    capacity_ = 1000 * static_cast<int64_t>(cluster_->gpu_count());
  }
  std::unique_ptr<Cluster> cluster_;
  std::vector<OpenbPod> pods_;
  int64_t capacity_ = 0;
};

TEST_F(FgdExcerptTest, ExcerptIsWhatTheReadmeSays) {
  EXPECT_EQ(cluster_->node_count(), 12u);
  EXPECT_EQ(capacity_, 60000);
  EXPECT_EQ(pods_.size(), 38u);
}

TEST_F(FgdExcerptTest, ArrivalsAreAShuffleOfTheOriginalsThenClonesUpToTheTarget) {
  int64_t cloned = 0;
  const auto a = FgdArrivals(pods_, capacity_, 1.3, 42, &cloned);
  ASSERT_GT(cloned, 0);
  ASSERT_EQ(a.size(), pods_.size() + static_cast<size_t>(cloned));
  // The originals come first, each once, in an order other than by name.
  std::set<std::string> names;
  for (size_t i = 0; i < pods_.size(); ++i) names.insert(a[i].name);
  std::set<std::string> originals;
  for (const auto& p : pods_) originals.insert(p.name);
  EXPECT_EQ(names, originals);
  bool sorted = true;
  for (size_t i = 1; i < pods_.size(); ++i) sorted &= a[i - 1].name < a[i].name;
  EXPECT_FALSE(sorted);
  // Clones: unique names "<original>#k", shapes of originals, appended until the total request
  // first reaches 130% of capacity.
  int64_t total = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i + 1 == a.size()) {
      EXPECT_LT(static_cast<double>(total), 1.3 * capacity_);
    }
    total += Requested(a[i]);
    if (i < pods_.size()) continue;
    const std::string expect_suffix = "#" + std::to_string(i - pods_.size() + 1);
    ASSERT_TRUE(a[i].name.ends_with(expect_suffix)) << a[i].name;
    const std::string original = a[i].name.substr(0, a[i].name.size() - expect_suffix.size());
    EXPECT_TRUE(originals.count(original)) << a[i].name;
    EXPECT_TRUE(names.insert(a[i].name).second) << "repeated " << a[i].name;
  }
  EXPECT_GE(static_cast<double>(total), 1.3 * capacity_);
  // Same seed, same order; another seed, another order.
  const auto b = FgdArrivals(pods_, capacity_, 1.3, 42);
  const auto c = FgdArrivals(pods_, capacity_, 1.3, 43);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].name, b[i].name);
  bool differs = a.size() != c.size();
  for (size_t i = 0; !differs && i < a.size(); ++i) differs = a[i].name != c[i].name;
  EXPECT_TRUE(differs);
  // Input order does not matter: the pods are sorted by name first.
  std::vector<OpenbPod> reversed(pods_.rbegin(), pods_.rend());
  const auto d = FgdArrivals(reversed, capacity_, 1.3, 42);
  ASSERT_EQ(a.size(), d.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].name, d[i].name);
}

TEST_F(FgdExcerptTest, NoClonesWhenTheListAlreadyAsksEnough) {
  int64_t cloned = -1;
  const auto a = FgdArrivals(pods_, capacity_, 0.5, 7, &cloned);
  EXPECT_EQ(cloned, 0);
  EXPECT_EQ(a.size(), pods_.size());
}

TEST_F(FgdExcerptTest, SeedRunRecordsEveryArrivalAndCancelsFailures) {
  const auto arrivals = FgdArrivals(pods_, capacity_, 1.3, 42);
  const auto tasks = FgdTypicalTasks(pods_);
  for (const std::string policy : {"bestfit", "fgd", "random"}) {
    SCOPED_TRACE(policy);
    auto run = RunFgdSeed(*cluster_, arrivals, policy, 42, &tasks);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    EXPECT_EQ(run->pods_arrived, static_cast<int64_t>(arrivals.size()));
    // At 130% of capacity some pods cannot start; they are cancelled and hold nothing, and
    // nothing else ever leaves.
    EXPECT_GT(run->pods_failed, 0);
    EXPECT_GT(run->gpu_pods_failed, 0);
    EXPECT_EQ(run->allocated_milli, run->arrived_milli - run->failed_milli);
    EXPECT_LE(run->allocated_milli, capacity_);
    // Bins: every arrival up to 130.5% lands in exactly one bin; bin values never fall (nothing
    // leaves) and never exceed the demand that has arrived.
    int in_bins = 0;
    double last = 0;
    for (int b = 0; b < kFgdBins; ++b) {
      const int n = run->curve.arrivals[static_cast<size_t>(b)];
      in_bins += n;
      if (n == 0) {
        EXPECT_TRUE(std::isnan(run->curve.at(b)));
        continue;
      }
      EXPECT_GE(run->curve.at(b), last - 1e-9) << "bin " << b;
      EXPECT_LE(run->curve.at(b), b + 0.5 + 1e-9) << "bin " << b;
      last = run->curve.at(b);
    }
    int64_t arrived = 0;
    int expect_in_bins = 0;
    for (const auto& p : arrivals) {
      arrived += Requested(p);
      expect_in_bins += std::lround(100.0 * arrived / capacity_) <= 130;
    }
    EXPECT_EQ(in_bins, expect_in_bins);
    // On 60 GPUs one pod moves the demand by up to 13 points, so bins can be empty; the last
    // arrivals fill the cluster well.
    int top = kFgdBins - 1;
    while (top > 0 && run->curve.arrivals[static_cast<size_t>(top)] == 0) --top;
    EXPECT_GE(top, 117);
    EXPECT_GT(run->curve.at(top), 60.0);
  }
}

TEST_F(FgdExcerptTest, SameSeedSameCurve) {
  const auto arrivals = FgdArrivals(pods_, capacity_, 1.3, 5);
  for (const std::string policy : {"bestfit", "fgd", "random"}) {
    SCOPED_TRACE(policy);
    auto a = RunFgdSeed(*cluster_, arrivals, policy, 5, nullptr);
    auto b = RunFgdSeed(*cluster_, arrivals, policy, 5, nullptr);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->pods_failed, b->pods_failed);
    for (int i = 0; i < kFgdBins; ++i) {
      if (std::isnan(a->curve.at(i))) {
        EXPECT_TRUE(std::isnan(b->curve.at(i)));
      } else {
        EXPECT_EQ(a->curve.at(i), b->curve.at(i)) << "bin " << i;
      }
    }
  }
}

TEST_F(FgdExcerptTest, ProtocolAveragesSeedsPerPolicy) {
  FgdOptions o;
  o.nodes_csv = kNodes;
  o.pods_csv = kPods;
  o.policies = {"bestfit", "fgd"};
  o.seeds = 3;
  o.first_seed = 42;
  auto r = RunFgdProtocol(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->capacity_milli, 60000);
  EXPECT_EQ(r->original_pods, 38u);
  EXPECT_FALSE(r->typical_tasks.empty());
  ASSERT_EQ(r->policies.size(), 2u);
  ASSERT_NE(r->Find("fgd"), nullptr);
  EXPECT_EQ(r->Find("lottery"), nullptr);
  for (const auto& pr : r->policies) {
    ASSERT_EQ(pr.seeds.size(), 3u);
    EXPECT_EQ(pr.seeds[0].seed, 42u);
    EXPECT_EQ(pr.seeds[2].seed, 44u);
    int64_t arrived = 0;
    for (const auto& s : pr.seeds) arrived += s.pods_arrived;
    EXPECT_EQ(pr.pods_arrived, arrived);
    for (int b = 0; b < kFgdBins; ++b) {
      double sum = 0;
      int n = 0, arrivals = 0;
      for (const auto& s : pr.seeds) {
        arrivals += s.curve.arrivals[static_cast<size_t>(b)];
        if (std::isnan(s.curve.at(b))) continue;
        sum += s.curve.at(b);
        ++n;
      }
      EXPECT_EQ(pr.mean.arrivals[static_cast<size_t>(b)], arrivals);
      if (n == 0) {
        EXPECT_TRUE(std::isnan(pr.mean.at(b)));
      } else {
        EXPECT_NEAR(pr.mean.at(b), sum / n, 1e-9) << "bin " << b;
      }
    }
    // Seeds are independent: the same seed in a one-seed run gives the same curve.
    FgdOptions one = o;
    one.policies = {pr.policy};
    one.seeds = 1;
    one.first_seed = 43;
    auto single = RunFgdProtocol(one);
    ASSERT_TRUE(single.ok());
    EXPECT_EQ(single->policies[0].seeds[0].allocated_milli, pr.seeds[1].allocated_milli);
    EXPECT_EQ(single->policies[0].seeds[0].pods_failed, pr.seeds[1].pods_failed);
  }
}

TEST_F(FgdExcerptTest, RunsSideBySideGiveTheSameReportAsOneAtATime) {
  FgdOptions o;
  o.nodes_csv = kNodes;
  o.pods_csv = kPods;
  o.policies = {"bestfit", "fgd", "airtime"};
  o.seeds = 4;
  auto serial = RunFgdProtocol(o);
  o.threads = 5;
  auto parallel = RunFgdProtocol(o);
  ASSERT_TRUE(serial.ok() && parallel.ok());
  ASSERT_EQ(serial->policies.size(), parallel->policies.size());
  for (size_t p = 0; p < serial->policies.size(); ++p) {
    const FgdPolicyReport& a = serial->policies[p];
    const FgdPolicyReport& b = parallel->policies[p];
    SCOPED_TRACE(a.policy);
    EXPECT_EQ(a.policy, b.policy);
    EXPECT_EQ(a.pods_failed, b.pods_failed);
    ASSERT_EQ(a.seeds.size(), b.seeds.size());
    for (size_t i = 0; i < a.seeds.size(); ++i) {
      EXPECT_EQ(a.seeds[i].seed, b.seeds[i].seed);
      EXPECT_EQ(a.seeds[i].pods_cloned, b.seeds[i].pods_cloned);
      EXPECT_EQ(a.seeds[i].allocated_milli, b.seeds[i].allocated_milli);
    }
    for (int bin = 0; bin < kFgdBins; ++bin) {
      if (std::isnan(a.mean.at(bin))) {
        EXPECT_TRUE(std::isnan(b.mean.at(bin))) << "bin " << bin;
      } else {
        EXPECT_EQ(a.mean.at(bin), b.mean.at(bin)) << "bin " << bin;
      }
    }
  }
}

TEST_F(FgdExcerptTest, BadInputsAreErrors) {
  FgdOptions o;
  o.nodes_csv = kNodes;
  o.pods_csv = kPods;
  o.policies = {"lottery"};
  EXPECT_FALSE(RunFgdProtocol(o).ok());
  o.policies = {"bestfit"};
  o.seeds = 0;
  EXPECT_FALSE(RunFgdProtocol(o).ok());
  o.seeds = 1;
  o.pods_csv = kData + "no_such_file.csv";
  EXPECT_FALSE(RunFgdProtocol(o).ok());
}

// ---- Fidelity against the published figures (full traces only).

class FgdPublishedTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_THREAD__)
    // 135 s under TSan in CI, the longest of its tests, for no thread the small cases above
    // do not run (5 threads at once): the fidelity is checked by the normal and ASan builds.
    GTEST_SKIP() << "the published curves are checked by the normal and ASan builds";
#endif
    if (!std::filesystem::exists(kTraces + "openb_pod_list_default.csv") ||
        !std::filesystem::exists(kTraces + "fgd_expected_allocation.csv"))
      GTEST_SKIP() << "full traces not at " << kTraces;
    auto p = ReadFgdPublished(kTraces + "fgd_expected_allocation.csv");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    published_ = std::move(*p);
  }

  // Runs `policy` on the default list with seeds 42..51 and checks the 10-seed means at 100%
  // and 130% against the published ones (which must be the README's figures).
  void Check(const std::string& policy, const std::string& published, double readme100,
             double readme130, double tolerance) {
    const std::string workload = "openb_pod_list_default";
    const double pub100 = FgdPublishedMean(published_, workload, published, 100);
    const double pub130 = FgdPublishedMean(published_, workload, published, 130);
    EXPECT_NEAR(pub100, readme100, 0.006);
    EXPECT_NEAR(pub130, readme130, 0.006);
    FgdOptions o;
    o.nodes_csv = kTraces + "openb_node_list_gpu_node.csv";
    o.pods_csv = kTraces + workload + ".csv";
    o.policies = {policy};
    const auto start = std::chrono::steady_clock::now();
    auto r = RunFgdProtocol(o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const FgdPolicyReport& pr = r->policies[0];
    ASSERT_EQ(pr.seeds.size(), 10u);
    EXPECT_EQ(r->capacity_milli, 6212000);
    EXPECT_EQ(r->typical_tasks.size(), 35u);
    EXPECT_NEAR(pr.mean.at(100), pub100, tolerance);
    EXPECT_NEAR(pr.mean.at(130), pub130, tolerance);
    std::printf(
        "%s: 10-seed mean %.2f at 100%% (published %.2f), %.2f at 130%% (published %.2f); "
        "%.1f s\n",
        policy.c_str(), pr.mean.at(100), pub100, pr.mean.at(130), pub130, secs);
  }

  std::vector<FgdPublishedCurve> published_;
};

TEST_F(FgdPublishedTest, BestFitMatchesThePublishedCurve) {
  Check("bestfit", "05-BestFit", 92.86, 93.08, 1.0);
}

// FGD with the reference's quantized score (the policy's default). 0.5 rather than 1.0: the
// exact-drop variant (fgd:quantize=0) lands 0.9 lower and should not pass for the reference.
TEST_F(FgdPublishedTest, FgdMatchesThePublishedCurve) { Check("fgd", "06-FGD", 95.23, 95.39, 0.5); }

}  // namespace
}  // namespace airtime
