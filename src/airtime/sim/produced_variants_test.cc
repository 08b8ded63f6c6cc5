// A variant that a quantize job produces, replayed end to end (workload file -> engine ->
// simulator): airtime switches to it in the cycle the job completes, the service never has
// zero ready replicas across the switch, and the GPUs the old variant frees start waiting
// work (which fixed-generalist never starts); a cancelled producer leaves the variant unused.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "airtime/config/workload_yaml.h"
#include "airtime/engine/test_util.h"
#include "airtime/sim/simulator.h"

namespace airtime {
namespace {

// One 8 x H100 node. "chat" (3 req/s) has a generalist `big` (4 GPUs, 4 req/s) and a
// quantized `small` (1 GPU, 2 req/s, quality 0.8) that the job "quantize" (2 GPUs, 30m of
// work) makes; `more`: the rest of the file (other workloads, events).
SimInput WithChat(const std::string& more) {
  const std::string text =
      "workloads:\n"
      "  - name: chat\n"
      "    kind: realtime\n"
      "    slo: {latency_ms: 2000, min_replicas: 1, cold_start: 1m}\n"
      "    value: {per_1k_requests: 1}\n"
      "    demand: [{at: 0, rps: 3}]\n"
      "    variants:\n"
      "      - {name: big, gpus: 4, throughput: {H100: 4}}\n"
      "      - {name: small, gpus: 1, throughput: {H100: 2}, quality: 0.8}\n"
      "  - {name: quantize, kind: quantize, gpus: 2, gpu_type: H100, work: 30m,\n"
      "     produces: {service: chat, variant: small}, value: {on_completion: 10}}\n" +
      more;
  auto s = ParseWorkloadYaml(text, "produced.yaml");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return MakeSimInput(testing::MakeCluster({{"H100", 8, 1}}), std::move(s->workloads),
                      std::move(s->events));
}

// WithChat and "train" (5 GPUs, dense), arriving at 2m: with the generalist and the quantize
// job running, 2 GPUs are free. `events`: the scenario's events section.
SimInput Scenario(const std::string& events = "") {
  return WithChat(
      "  - {name: train, kind: training, gpus: 5, gpu_type: H100, work: 1h, submit_at: 2m,\n"
      "     value: {on_completion: 1000}}\n" +
      events);
}

struct Replay {
  SimResult result;
  std::vector<nlohmann::json> decisions;  // the decision log, in order

  // The decisions of `type` for `workload`.
  std::vector<nlohmann::json> Of(const std::string& type, const std::string& workload) const {
    std::vector<nlohmann::json> out;
    for (const auto& d : decisions)
      if (d.value("decision", "") == type && d.value("workload", "") == workload) out.push_back(d);
    return out;
  }
  // The fewest ready replicas of "chat" from its first ready one to the end: each replica
  // counts from its ready time until its release (or preemption).
  int MinReady() const {
    std::map<int64_t, std::pair<double, double>> replicas;  // allocation -> [ready, stop)
    for (const auto& d : decisions) {
      const std::string w = d.value("workload", "");
      if (w.rfind("chat/", 0) != 0 || !d.contains("allocation")) continue;
      const int64_t a = d["allocation"];
      if (d["decision"] == "start")
        replicas[a] = {d.value("ready_at_s", d["t_s"].get<double>()), 1e300};
      else if (d["decision"] == "release" || d["decision"] == "preempt")
        replicas[a].second = d["t_s"];
    }
    std::vector<double> times;
    for (const auto& [a, span] : replicas) times.insert(times.end(), {span.first, span.second});
    double first = 1e300;
    for (const auto& [a, span] : replicas) first = std::min(first, span.first);
    int fewest = 1 << 20;
    for (double t : times) {
      if (t < first || t > ToSeconds(result.end)) continue;
      int ready = 0;
      for (const auto& [a, span] : replicas) ready += span.first <= t && t < span.second;
      fewest = std::min(fewest, ready);
    }
    return fewest;
  }
};

Replay Replayed(const SimInput& in, const std::string& policy) {
  std::ostringstream log;
  SimOptions o;
  o.horizon = 3 * kHour;
  o.decision_log = &log;
  auto r = Simulate(in, policy, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  Replay out{std::move(*r), {}};
  std::istringstream lines(log.str());
  for (std::string line; std::getline(lines, line);)
    out.decisions.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(ProducedVariantSimTest, AQuantizeJobCompletingSwitchesTheServiceAndFreesGpusForWaitingWork) {
  const Replay r = Replayed(Scenario(), "airtime");
  const auto quantize = r.Of("start", "quantize");
  ASSERT_EQ(quantize.size(), 1u);
  const double done = quantize[0]["expected_end_s"];
  // The quantized variant starts in the cycle of the job's completion, not before.
  const auto small = r.Of("start", "chat/small");
  ASSERT_FALSE(small.empty());
  for (const auto& d : small) EXPECT_GE(d["t_s"].get<double>(), done);
  EXPECT_DOUBLE_EQ(small.front()["t_s"].get<double>(), done);
  // Make-before-break: the generalist goes once the new replicas are ready, and the waiting
  // job starts on its GPUs at that moment.
  const double ready = small.front()["ready_at_s"];
  const auto big_released = r.Of("release", "chat/big");
  ASSERT_FALSE(big_released.empty());
  EXPECT_DOUBLE_EQ(big_released.front()["t_s"].get<double>(), ready);
  const auto train = r.Of("start", "train");
  ASSERT_EQ(train.size(), 1u);
  EXPECT_DOUBLE_EQ(train[0]["t_s"].get<double>(), ready);
  EXPECT_GE(r.MinReady(), 1);
  // Every request after the first cold start was served, part of them by the cheaper variant.
  const ServiceMetrics& chat = r.result.metrics.services.at("chat");
  EXPECT_NEAR(chat.requests_in_slo + chat.missed_at_start, chat.requests, 1e-6);
  EXPECT_LT(chat.mean_quality(), 1.0);
  // fixed-generalist keeps the generalist: the job that needs 5 GPUs never gets them.
  const Replay g = Replayed(Scenario(), "fixed-generalist");
  EXPECT_TRUE(g.Of("start", "chat/small").empty());
  EXPECT_TRUE(g.Of("start", "train").empty());
}

// When the new variant's replicas find too little room, make-before-break gives back one old
// replica once they have waited `lead` (5 minutes): that moment needs a cycle of its own.
TEST(ProducedVariantSimTest, ASwitchShortOfRoomGoesOnAfterLeadWithoutOtherEvents) {
  // As Scenario(), but a 10-hour batch job holds 2 GPUs and "train" needs 3: when the
  // quantize job completes only its 2 GPUs are free, for 3 replicas of the small variant.
  const Replay r =
      Replayed(WithChat("  - {name: filler, kind: batch, gpus: 2, gpu_type: H100, work: 10h,\n"
                        "     value: {on_completion: 10}}\n"
                        "  - {name: train, kind: training, gpus: 3, gpu_type: H100, work: 1h, "
                        "submit_at: 2m,\n"
                        "     value: {on_completion: 1000}}\n"),
               "airtime");
  const double done = r.Of("start", "quantize").at(0)["expected_end_s"];
  const auto small = r.Of("start", "chat/small");
  ASSERT_EQ(small.size(), 3u);
  EXPECT_DOUBLE_EQ(small[0]["t_s"].get<double>(), done);
  EXPECT_DOUBLE_EQ(small[1]["t_s"].get<double>(), done);
  const auto big_released = r.Of("release", "chat/big");
  ASSERT_FALSE(big_released.empty());
  EXPECT_DOUBLE_EQ(big_released[0]["t_s"].get<double>(), done + 300);
  EXPECT_DOUBLE_EQ(small[2]["t_s"].get<double>(), done + 300);
  EXPECT_DOUBLE_EQ(r.Of("start", "train").at(0)["t_s"].get<double>(), done + 300);
  EXPECT_GE(r.MinReady(), 1);
}

TEST(ProducedVariantSimTest, TheSameInputGivesTheSameDecisions) {
  const SimInput in = Scenario();
  const Replay a = Replayed(in, "airtime"), b = Replayed(in, "airtime");
  ASSERT_FALSE(a.decisions.empty());
  EXPECT_EQ(a.decisions, b.decisions);
}

TEST(ProducedVariantSimTest, ACancelledProducerLeavesTheVariantUnused) {
  const Replay r = Replayed(Scenario("events:\n  - {at: 10m, cancel: quantize}\n"), "airtime");
  EXPECT_TRUE(r.Of("start", "chat/small").empty());
  EXPECT_FALSE(r.Of("start", "chat/big").empty());
  const ServiceMetrics& chat = r.result.metrics.services.at("chat");
  EXPECT_DOUBLE_EQ(chat.mean_quality(), 1.0);
  EXPECT_GE(r.MinReady(), 1);
  // The same scenario with the job left to finish does use it.
  EXPECT_FALSE(Replayed(Scenario(), "airtime").Of("start", "chat/small").empty());
}

}  // namespace
}  // namespace airtime
