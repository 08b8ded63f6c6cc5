// FromData: a store built through the store's own API, turned into a replay's input and
// replayed; hostile and broken stores give warnings or errors, never a crash.
#include "airtime/sim/from_data.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>

#include "airtime/config/cluster_yaml.h"
#include "airtime/config/workload_yaml.h"
#include "airtime/sim/simulator.h"
#include "airtime/store/store.h"

namespace airtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr TimeMs kT0 = 1'800'000'000'000;  // a wall-clock time (2027)

// A demand curve as (time, rps) pairs, to compare and print.
using Points = std::vector<std::pair<TimeMs, double>>;
Points Pts(const std::vector<DemandPoint>& curve) {
  Points out;
  for (const DemandPoint& p : curve) out.emplace_back(p.at, p.rps);
  return out;
}
// `curve` is `want`: the same times, the rates within rounding.
void ExpectCurve(const std::vector<DemandPoint>& curve, const Points& want,
                 const std::string& what = "") {
  ASSERT_EQ(curve.size(), want.size()) << what << ": " << ::testing::PrintToString(Pts(curve));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(curve[i].at, want[i].first) << what << " point " << i;
    EXPECT_NEAR(curve[i].rps, want[i].second, 1e-9) << what << " point " << i;
  }
}

void RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

class FromDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("from_data_test." + std::to_string(getpid()) + "." +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    auto store = Store::Open(dir_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  // One node "n0" of 4 A100-80GB (speed 1.0), started at kT0 under `policy`.
  void RecordStart(const std::string& policy = "fifo", TimeMs at = kT0) {
    auto cluster = ParseClusterYaml(
        "cluster:\n  name: lab\n  nodes:\n    - {name: n0, gpu: A100-80GB, gpus: 4}\n", "t");
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    ASSERT_TRUE(
        store_->AddDaemonStart({at, policy, ClusterFileYaml(*cluster), {"G0", "G1", "G2", "G3"}})
            .ok());
  }

  // A workload from `body` (index 0) submitted at kT0 + `at`, in `state`.
  int64_t Submit(const std::string& name, const std::string& body, TimeMs at,
                 const std::string& state = "queued", const std::string& kind = "batch") {
    auto sid = store_->AddSubmission({0, "team-a", body, "request", kT0 + at});
    EXPECT_TRUE(sid.ok()) << sid.status().ToString();
    WorkloadRow w;
    w.submission_id = *sid;
    w.name = name;
    w.tenant = "team-a";
    w.kind = kind;
    w.state = state;
    w.submitted_at = kT0 + at;
    auto id = store_->AddWorkload(w);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return *id;
  }

  // Ends workload `id` in `state` at kT0 + `at` with one run on GPU G0 from `start`.
  void Finish(int64_t id, const std::string& state, TimeMs start, TimeMs at, int exit_code = 0) {
    auto rows = store_->LoadWorkloads(false);
    ASSERT_TRUE(rows.ok());
    for (WorkloadRow w : *rows) {
      if (w.id != id) continue;
      w.state = state;
      w.started_at = kT0 + start;
      w.finished_at = kT0 + at;
      ASSERT_TRUE(store_->UpdateWorkload(w).ok());
    }
    RunRow r;
    r.workload_id = id;
    r.gpus = {"G0"};
    r.state = "exited";
    r.pid = 100;
    r.started_at = kT0 + start;
    r.ended_at = kT0 + at;
    r.exit_code = exit_code;
    ASSERT_TRUE(store_->AddRun(r).ok());
  }

  // A submission stored as the daemon stores one (Daemon::CommitSubmissions): its text,
  // then one row per workload in parse order with each service with variants expanded
  // into its members (ParseSubmission), at kT0 + `at`. The rows' ids by name.
  std::map<std::string, int64_t> SubmitAsDaemon(const std::string& body, TimeMs at) {
    std::map<std::string, int64_t> ids;
    auto parsed = ParseSubmissionYaml(body, "request");
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    if (!parsed.ok()) return ids;
    auto sid = store_->AddSubmission({0, "team-a", body, "request", kT0 + at});
    EXPECT_TRUE(sid.ok()) << sid.status().ToString();
    const std::vector<WorkloadSpec> specs = ExpandAllVariants(std::move(parsed->workloads));
    for (size_t k = 0; k < specs.size(); ++k) {
      WorkloadRow w;
      w.submission_id = *sid;
      w.index = static_cast<int32_t>(k);
      w.name = specs[k].name;
      w.tenant = "team-a";
      w.kind = KindName(specs[k].kind);
      w.submitted_at = kT0 + at;
      auto id = store_->AddWorkload(w);
      EXPECT_TRUE(id.ok()) << id.status().ToString();
      ids[w.name] = *id;
    }
    return ids;
  }

  // A report of class `cls`'s rate at kT0 + `at` to a service split by class, stored as the
  // daemon stores it (Daemon::ReportDemand, RecordDemand): for each member its own demand
  // (`own`, by member) in its history, and the class's rate as the class's last.
  void ReportClass(const std::map<std::string, double>& own, const std::string& cls, double rps,
                   TimeMs at, const std::map<std::string, int64_t>& ids) {
    for (const auto& [member, demand] : own) {
      const int64_t id = ids.at(member);
      ASSERT_TRUE(store_->AddDemand(id, kT0 + at, demand).ok());
      ASSERT_TRUE(store_->SetClassDemand(id, cls, rps, kT0 + at).ok());
      ASSERT_TRUE(store_->AddClassDemandStep(id, cls, kT0 + at, rps).ok());
    }
  }

  // The daemon's ledger saved at `at`: the store's latest record, the window's end.
  void SaveLedgerAt(TimeMs at) {
    ASSERT_TRUE(store_->SetMeta("ledger", "{\"saved_at\": " + std::to_string(at) + "}").ok());
  }

  const WorkloadSpec* Find(const FromData& d, const std::string& name) {
    for (const WorkloadSpec& w : d.input.workloads)
      if (w.name == name) return &w;
    return nullptr;
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(FromDataTest, WorkloadsRunsDemandAndNodeEventsBecomeTheReplaysInput) {
  RecordStart("fifo");
  const int64_t quick =
      Submit("quick",
             "{name: quick, kind: batch, gpus: 1, command: [/bin/true], value: {on_completion: 5}}",
             10 * kSecond, "queued");
  Finish(quick, "succeeded", 20 * kSecond, 620 * kSecond);  // ran 10 minutes
  const int64_t stated =
      Submit("stated", "{name: stated, kind: training, gpus: 2, duration: 2h, priority: 3}", 0,
             "queued", "training");
  const int64_t chat = Submit("chat",
                              "{name: chat, kind: realtime, gpus: 1, slo: {latency_ms: 200, "
                              "capacity_rps: 10}, value: {per_1k_requests: 2}, command: [/bin/x]}",
                              60 * kSecond, "running", "realtime");
  ASSERT_TRUE(store_->AddDemand(chat, kT0 + 60 * kSecond, 4.0).ok());
  ASSERT_TRUE(store_->AddDemand(chat, kT0 + 1800 * kSecond, 25.0).ok());
  {
    // The last report joined the step at 1,800 s (DemandRecorder): it is the workload's last
    // demand alone, and the replay starts it when it came.
    std::optional<WorkloadRow> row = *store_->GetWorkload(chat);
    ASSERT_TRUE(row.has_value());
    row->demand_rps = 12.0;
    row->demand_at = kT0 + 1805 * kSecond;
    ASSERT_TRUE(store_->UpdateWorkload(*row).ok());
  }
  const int64_t gone = Submit("gone", "{name: gone, kind: batch, gpus: 1, command: [/bin/sleep]}",
                              30 * kSecond, "queued");
  Finish(gone, "cancelled", 40 * kSecond, 100 * kSecond, 143);
  ASSERT_TRUE(store_->AddNodeEvent({kT0 + 900 * kSecond, "n0", "down"}).ok());
  ASSERT_TRUE(store_->AddNodeEvent({kT0 + 960 * kSecond, "n0", "up"}).ok());
  SaveLedgerAt(kT0 + kHour);
  (void)stated;

  auto data = LoadFromData(dir_, {});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->origin, kT0);
  EXPECT_EQ(data->end, kT0 + kHour);  // the ledger's save is the latest record
  EXPECT_EQ(data->policy, "fifo");
  EXPECT_TRUE(data->recorded_cluster);
  EXPECT_EQ(data->input.cluster.gpu_count(), 4u);
  EXPECT_TRUE(data->warnings.empty()) << data->warnings.front();
  ASSERT_EQ(data->input.workloads.size(), 4u);

  const WorkloadSpec* q = Find(*data, "quick");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->submit_at, 10 * kSecond);
  EXPECT_DOUBLE_EQ(q->work_seconds, 600);  // the run that completed it, at speed 1.0
  EXPECT_FALSE(q->work_estimated);
  EXPECT_EQ(q->tenant, "team-a");
  EXPECT_TRUE(q->exec.empty());
  const WorkloadSpec* s = Find(*data, "stated");
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(s->work_seconds, 7200);  // not ended: as stated
  EXPECT_EQ(s->shape.gpu_count, 2);
  const WorkloadSpec* c = Find(*data, "chat");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->realtime.demand.size(), 3u);
  EXPECT_EQ(c->realtime.demand[0].at, 60 * kSecond);
  EXPECT_EQ(c->realtime.demand[1].at, 1800 * kSecond);
  EXPECT_DOUBLE_EQ(c->realtime.demand[1].rps, 25.0);
  EXPECT_EQ(c->realtime.demand[2].at, 1805 * kSecond);
  EXPECT_DOUBLE_EQ(c->realtime.demand[2].rps, 12.0);

  // The cancellation and the node's outage are timed events.
  ASSERT_EQ(data->input.events.size(), 3u);
  EXPECT_EQ(data->input.events[0].type, ScenarioEvent::kCancel);
  EXPECT_EQ(data->input.events[0].at, 100 * kSecond);
  EXPECT_EQ(data->input.events[1].type, ScenarioEvent::kNodeDown);
  EXPECT_EQ(data->input.events[1].target, "n0");
  EXPECT_EQ(data->input.events[2].type, ScenarioEvent::kNodeUp);

  // What the daemon did: two runs held one GPU for 10 minutes and 1 minute of 4 GPUs' hour.
  const RecordedWindow& r = data->recorded;
  EXPECT_EQ(r.gpus, 4u);
  EXPECT_DOUBLE_EQ(r.installed_gpu_hours, 4);
  EXPECT_NEAR(r.allocated_gpu_hours, 11.0 / 60, 1e-9);
  EXPECT_EQ(r.submitted, 4u);
  EXPECT_EQ(r.completed, 1u);
  EXPECT_EQ(r.cancelled, 1u);
  EXPECT_EQ(r.unfinished, 2u);
  EXPECT_DOUBLE_EQ(r.completion_value, 5);

  // It replays under any policy, to the window's end.
  SimOptions opt;
  opt.horizon = data->end - data->origin;
  auto results = SimulatePolicies(data->input, {"fifo", "airtime"}, opt);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 2u);
  for (const SimResult& res : *results) {
    EXPECT_EQ(res.end, kHour);
    EXPECT_TRUE(res.event_errors.empty()) << res.event_errors.front();
    EXPECT_EQ(res.metrics.kinds[static_cast<size_t>(WorkloadKind::kBatch)].completed, 1u)
        << res.policy;
  }
}

TEST_F(FromDataTest, WindowCutsWorkloadsAndCarriesInWhatWasStillGoing) {
  RecordStart();
  const int64_t early = Submit("early", "{name: early, kind: batch, gpus: 1, work: 1h}", 0);
  Finish(early, "succeeded", 0, 10 * kMinute);
  Submit("carried", "{name: carried, kind: batch, gpus: 1, work: 3h, deadline_after: 4h}",
         5 * kMinute);
  Submit("late", "{name: late, kind: batch, gpus: 1, work: 1h}", 3 * kHour);

  FromDataOptions o;
  o.since = "2027-01-15 08:40:00";  // kT0 + 20m (kT0 is 2027-01-15 08:00:00 UTC)
  o.until = "1h";                   // an hour before the latest record, kT0 + 2h
  auto data = LoadFromData(dir_, o);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->origin, kT0 + 40 * kMinute);
  EXPECT_EQ(data->end, kT0 + 2 * kHour);
  ASSERT_EQ(data->input.workloads.size(), 1u);
  const WorkloadSpec& w = data->input.workloads[0];
  EXPECT_EQ(w.name, "carried");
  EXPECT_EQ(w.submit_at, 0);  // submitted before the window: at its start
  ASSERT_TRUE(w.deadline.has_value());
  EXPECT_EQ(*w.deadline, 4 * kHour + 5 * kMinute - 40 * kMinute);  // the same wall-clock time

  o.since = "2027-01-15 12:00";
  auto empty = LoadFromData(dir_, o);
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("is empty"));
  o.since = "last tuesday";
  auto bad = LoadFromData(dir_, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("--since"));
  EXPECT_THAT(bad.status().message(), HasSubstr("last tuesday"));
}

TEST_F(FromDataTest, FailedJobsHoldTheirGpusAndEarnNothing) {
  RecordStart();
  const int64_t id = Submit("flaky",
                            "{name: flaky, kind: batch, gpus: 1, duration: 1h, command: "
                            "[/bin/false], value: {on_completion: 9}}",
                            0);
  Finish(id, "failed", 0, 3 * kMinute, 1);
  auto data = LoadFromData(dir_, {});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_EQ(data->input.workloads.size(), 1u);
  EXPECT_DOUBLE_EQ(data->input.workloads[0].work_seconds, 180);
  EXPECT_DOUBLE_EQ(data->input.workloads[0].value.on_completion, 0);
  EXPECT_EQ(data->recorded.failed, 1u);
}

TEST_F(FromDataTest, HostileRowsAreSkippedOrRenamedWithAWarning) {
  RecordStart();
  Submit("ok", "{name: ok, kind: batch, gpus: 1, work: 1h}", 0);
  Submit("garbage", "{name: [unterminated\x1b[31m", kSecond);
  Submit("bad\x1b]0;pwned\x07name", "{name: x, kind: batch, gpus: 1, work: 1h}", 2 * kSecond);
  Submit("huge", "{name: huge, kind: batch, gpus: 1000000, work: 1h}", 3 * kSecond);
  WorkloadRow orphan_index;  // a workload that points past its submission's workloads
  {
    auto sid = store_->AddSubmission({0, "t", "{name: one, kind: batch, work: 1h}", "r", kT0});
    ASSERT_TRUE(sid.ok());
    orphan_index.submission_id = *sid;
    orphan_index.index = 7;
    orphan_index.name = "seventh";
    orphan_index.tenant = "t";
    orphan_index.kind = "batch";
    orphan_index.submitted_at = kT0;
    ASSERT_TRUE(store_->AddWorkload(orphan_index).ok());
  }
  ASSERT_TRUE(store_->AddNodeEvent({kT0 + kSecond, "no-such-node", "down"}).ok());
  ASSERT_TRUE(store_->AddNodeEvent({kT0 + kSecond, "n0", "sideways"}).ok());

  auto data = LoadFromData(dir_, {});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  std::string all;
  for (const std::string& w : data->warnings) {
    all += w + "\n";
    for (char ch : w) EXPECT_FALSE(static_cast<unsigned char>(ch) < 0x20) << w;
  }
  EXPECT_THAT(all, HasSubstr("skipped workload 'garbage'"));
  EXPECT_THAT(all, HasSubstr("cannot be read back"));
  EXPECT_THAT(all, HasSubstr("replayed as 'workload-3'"));
  EXPECT_THAT(all, HasSubstr("skipped workload 'seventh'"));
  EXPECT_THAT(all, HasSubstr("node 'no-such-node'"));
  EXPECT_THAT(all, HasSubstr("'sideways'"));
  // The oversized one is kept (it can never be placed, as on the daemon) or skipped with a
  // reason; either way the replay runs.
  SimOptions opt;
  opt.horizon = kHour;
  EXPECT_TRUE(SimulatePolicies(data->input, {"fifo"}, opt).ok());
  EXPECT_NE(Find(*data, "ok"), nullptr);
  EXPECT_NE(Find(*data, "workload-3"), nullptr);
}

TEST_F(FromDataTest, MissingEmptyCorruptOrNewerStoresAreErrorsNamingTheFile) {
  auto missing = LoadFromData(dir_ + "/nowhere", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr(dir_ + "/nowhere/airtime.db"));
  EXPECT_FALSE(fs::exists(dir_ + "/nowhere"));

  // A store with nothing in it.
  auto empty = LoadFromData(dir_, {});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("nothing to replay"));

  // Workloads but no recorded cluster (an older daemon): --cluster is needed.
  const int64_t w = Submit("w", "{name: w, kind: batch, work: 1h}", 0);
  Finish(w, "succeeded", 0, kHour);
  auto no_cluster = LoadFromData(dir_, {});
  ASSERT_FALSE(no_cluster.ok());
  EXPECT_THAT(no_cluster.status().message(), HasSubstr("--cluster"));
  auto file = ParseClusterFile("cluster:\n  name: c\n  nodes:\n    - {name: a, gpu: L4, gpus: 2}\n",
                               "c.yaml");
  ASSERT_TRUE(file.ok());
  auto given = LoadFromData(dir_, {}, &*file);
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_EQ(given->input.cluster.gpu_count(), 2u);
  EXPECT_FALSE(given->recorded_cluster);

  // A recorded cluster that does not parse.
  ASSERT_TRUE(store_->AddDaemonStart({kT0, "fifo", "cluster: [", {}}).ok());
  auto broken = LoadFromData(dir_, {});
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.status().message(), HasSubstr("the cluster recorded at"));

  const std::string path = store_->path();
  store_.reset();
  RawSql(path, "PRAGMA user_version = 99");
  auto newer = LoadFromData(dir_, {});
  ASSERT_FALSE(newer.ok());
  EXPECT_THAT(newer.status().message(), HasSubstr(path));
  EXPECT_THAT(newer.status().message(), HasSubstr("newer"));

  // Garbage where the database should be; the reader writes nothing beside it.
  fs::remove(path + "-wal");
  fs::remove(path + "-shm");
  std::ofstream(path, std::ios::trunc) << std::string(8192, '\x42');
  auto corrupt = LoadFromData(dir_, {});
  ASSERT_FALSE(corrupt.ok());
  EXPECT_THAT(corrupt.status().message(), HasSubstr(path));
  EXPECT_EQ(fs::file_size(path), 8192u);
  EXPECT_FALSE(fs::exists(path + "-wal"));
}

TEST_F(FromDataTest, AddNodesAndGpuCostChangeTheCluster) {
  RecordStart();
  Submit("w", "{name: w, kind: batch, work: 1h}", kHour);
  auto data = LoadFromData(dir_, {});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_TRUE(AddNodes("2xH100:8", &data->input).ok());
  EXPECT_EQ(data->input.cluster.node_count(), 3u);
  EXPECT_EQ(data->input.cluster.gpu_count(), 4u + 16u);
  EXPECT_EQ(data->input.cluster.nodes()[1].name, "added-h100-0");
  ASSERT_TRUE(AddNodes("1xL4", &data->input).ok());  // 8 GPUs by default
  EXPECT_EQ(data->input.cluster.gpu_count(), 28u);
  for (const char* bad : {"H100", "0xH100", "2xNoSuchGpu", "2xH100:0", "2xH100:many"})
    EXPECT_FALSE(AddNodes(bad, &data->input).ok()) << bad;

  ASSERT_TRUE(OverrideGpuCost("H100=2.5", &data->input).ok());
  auto h100 = data->input.cluster.catalog().Find("H100");
  ASSERT_TRUE(h100.ok());
  const GpuCost& c = data->input.costs[static_cast<size_t>(*h100)];
  EXPECT_TRUE(c.priced);
  EXPECT_EQ(c.per_hour, 2.5);
  for (const char* bad : {"H100", "H100=-1", "Nope=1", "H100=abc"})
    EXPECT_FALSE(OverrideGpuCost(bad, &data->input).ok()) << bad;
  // The replay prices the added GPUs.
  SimOptions opt;
  opt.horizon = kHour;
  auto results = SimulatePolicies(data->input, {"fifo"}, opt);
  ASSERT_TRUE(results.ok());
}

// A service with model variants, as the daemon stores it: its members' rows index the
// expanded submission, each member's demand history and its classes' last rates are kept,
// and a quantize job of a later submission produces its awaited variant. The replay runs
// the members with their variants, each class's recorded demand, and the producer linked:
// the variant waits for the job's completion, and is there from the start when the job
// completed before the window.
TEST_F(FromDataTest, AServiceWithVariantsReplaysItsMembersDemandAndLaterProducer) {
  RecordStart("airtime");
  const std::string chat =
      "- name: chat\n"
      "  kind: realtime\n"
      "  slo: {latency_ms: 200}\n"
      "  value: {per_1k_requests: 1}\n"
      "  classes: [{name: code, demand: [{at: 0, rps: 1}]}, {name: conv, demand: [{at: 0, rps: "
      "2}]}]\n"
      "  variants:\n"
      "    - {name: big, gpus: 2, throughput: {A100-80GB: 10}, classes: [conv]}\n"
      "    - {name: coder, gpus: 1, throughput: {A100-80GB: 20}, classes: [code]}\n"
      "    - {name: int8, gpus: 1, throughput: {A100-80GB: 20}, quality: 0.95, "
      "awaits_producer: true}\n"
      "- {name: backlog, kind: batch, gpus: 1, work: 2m}\n";
  auto ids = SubmitAsDaemon(chat, 0);
  ASSERT_EQ(ids.size(), 4u);
  // code 15 at 1m, conv 4 at 2m, code 12 at 30m: each member's own demand is the rate of
  // the class it serves by default (big: conv, coder: code, int8: none).
  ReportClass({{"chat/big", 2}, {"chat/coder", 15}, {"chat/int8", 0}}, "code", 15, kMinute, ids);
  ReportClass({{"chat/big", 4}, {"chat/coder", 15}, {"chat/int8", 0}}, "conv", 4, 2 * kMinute, ids);
  ReportClass({{"chat/big", 4}, {"chat/coder", 12}, {"chat/int8", 0}}, "code", 12, 30 * kMinute,
              ids);
  // A first producer, cancelled; a second one, which completed at 20m.
  const std::string producer =
      "{name: NAME, kind: quantize, gpus: 1, work: 10m, produces: {service: chat, variant: "
      "int8}}\n";
  auto q0 = SubmitAsDaemon(std::regex_replace(producer, std::regex("NAME"), "q0"), 3 * kMinute);
  Finish(q0.at("q0"), "cancelled", 3 * kMinute, 4 * kMinute, 143);
  auto q1 = SubmitAsDaemon(std::regex_replace(producer, std::regex("NAME"), "q1"), 5 * kMinute);
  Finish(q1.at("q1"), "succeeded", 10 * kMinute, 20 * kMinute);
  // Work that waits for GPUs makes the cheaper variant worth switching to once it exists.
  SubmitAsDaemon("{name: wide, kind: batch, gpus: 3, work: 30m, value: {on_completion: 5000}}",
                 6 * kMinute);
  SaveLedgerAt(kT0 + kHour);

  auto data = LoadFromData(dir_, {});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->warnings, std::vector<std::string>{});
  std::vector<std::string> names;
  for (const WorkloadSpec& w : data->input.workloads) names.push_back(w.name);
  ASSERT_EQ(data->input.workloads.size(), 7u)  // 3 members, backlog, q0, q1, wide
      << ::testing::PrintToString(names);
  const WorkloadSpec* backlog = Find(*data, "backlog");
  ASSERT_NE(backlog, nullptr);
  EXPECT_EQ(backlog->kind, WorkloadKind::kBatch);
  const Points code = {{0, 1}, {kMinute, 15}, {30 * kMinute, 12}};
  const Points conv = {{0, 2}, {2 * kMinute, 4}};
  const std::map<std::string, Points> own = {
      {"chat/big", conv}, {"chat/coder", code}, {"chat/int8", {}}};
  for (const auto& [name, curve] : own) {
    const WorkloadSpec* m = Find(*data, name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->kind, WorkloadKind::kRealtime);
    EXPECT_EQ(m->realtime.group, "chat");
    ASSERT_EQ(m->realtime.variants.size(), 3u) << name;
    EXPECT_EQ(m->realtime.variants[2].produced_by, "q1") << name;  // the newest claim
    ASSERT_EQ(m->realtime.classes.size(), 2u);
    ExpectCurve(m->realtime.classes[0].demand, code, name + " code");
    ExpectCurve(m->realtime.classes[1].demand, conv, name + " conv");
    ExpectCurve(m->realtime.demand, curve, name);
  }
  EXPECT_EQ(Find(*data, "chat/big")->shape.gpu_count, 2);

  // Replayed, the int8 variant scales up once q1 has completed, not before.
  std::ostringstream log;
  SimOptions opt;
  opt.horizon = data->end - data->origin;
  opt.decision_log = &log;
  auto results = SimulatePolicies(data->input, {"airtime"}, opt);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 1u);
  EXPECT_TRUE(results->front().event_errors.empty()) << results->front().event_errors.front();
  EXPECT_EQ(results->front().metrics.kinds[static_cast<size_t>(WorkloadKind::kQuantize)].completed,
            1u);
  std::optional<double> q1_end, int8_up;
  std::istringstream lines(log.str());
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json d = nlohmann::json::parse(line, nullptr, false);
    if (!d.is_object()) continue;
    if (d.value("workload", "") == "q1" && d.value("decision", "") == "start")
      q1_end = d.value("expected_end_s", 0.0);
    if (d.value("workload", "") == "chat/int8" && d.value("replicas", 0) > 0 && !int8_up)
      int8_up = d.value("t_s", 0.0);
  }
  ASSERT_TRUE(q1_end.has_value()) << log.str();
  ASSERT_TRUE(int8_up.has_value()) << log.str();
  EXPECT_GE(*int8_up, *q1_end);

  // A window that opens after q1 completed: the variant was produced before it.
  FromDataOptions later;
  later.since = "2027-01-15 08:25";  // kT0 + 25m
  auto after = LoadFromData(dir_, later);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  const WorkloadSpec* int8 = Find(*after, "chat/int8");
  ASSERT_NE(int8, nullptr);
  EXPECT_EQ(Find(*after, "q1"), nullptr);
  EXPECT_TRUE(int8->realtime.variants[2].produced_by.empty());
  EXPECT_FALSE(int8->realtime.variants[2].awaits_producer);
  // Each class at its rate as the window opens, then its later changes.
  ExpectCurve(int8->realtime.classes[0].demand, {{0, 15}, {5 * kMinute, 12}});
  ExpectCurve(int8->realtime.classes[1].demand, {{0, 4}});
}

// Two classes that one variant serves by default: the store keeps that member's own demand
// (their sum), each class's rate at each report and its last. The replay takes each class's
// recorded rates as they were. A store written before it recorded them (schema version 6)
// has only the sum and the last rates: a class is at its last rate from its last report on;
// before, what the sum leaves is split among the classes not yet at theirs, by those rates.
// The sum stays what was recorded, and the replay says where it estimated.
TEST_F(FromDataTest, ClassesSharingADefaultVariantSplitItsRecordedDemand) {
  RecordStart("airtime");
  auto ids = SubmitAsDaemon(
      "name: chat\n"
      "kind: realtime\n"
      "slo: {latency_ms: 200}\n"
      "classes: [{name: code, demand: [{at: 0, rps: 0}]}, {name: conv, demand: [{at: 0, rps: "
      "0}]}]\n"
      "variants:\n"
      "  - {name: big, gpus: 2, throughput: {A100-80GB: 10}}\n"
      "  - {name: coder, gpus: 1, throughput: {A100-80GB: 10}, quality: 0.8, classes: [code]}\n",
      0);
  ASSERT_EQ(ids.size(), 2u);
  ReportClass({{"chat/big", 6}, {"chat/coder", 0}}, "code", 6, kMinute, ids);
  ReportClass({{"chat/big", 8}, {"chat/coder", 0}}, "conv", 2, 2 * kMinute, ids);
  ReportClass({{"chat/big", 5}, {"chat/coder", 0}}, "code", 3, 3 * kMinute, ids);
  SaveLedgerAt(kT0 + kHour);
  const Points sum = {{0, 0}, {kMinute, 6}, {2 * kMinute, 8}, {3 * kMinute, 5}};
  {
    auto data = LoadFromData(dir_, {});
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    EXPECT_TRUE(data->warnings.empty()) << data->warnings[0];
    const WorkloadSpec* big = Find(*data, "chat/big");
    ASSERT_NE(big, nullptr);
    ExpectCurve(big->realtime.demand, sum);
    ASSERT_EQ(big->realtime.classes.size(), 2u);
    ExpectCurve(big->realtime.classes[0].demand, {{0, 0}, {kMinute, 6}, {3 * kMinute, 3}});
    ExpectCurve(big->realtime.classes[1].demand, {{0, 0}, {2 * kMinute, 2}});
  }
  const std::string path = store_->path();
  store_.reset();
  RawSql(path, "DROP TABLE class_demand_history");
  RawSql(path, "PRAGMA user_version = 6");
  auto data = LoadFromData(dir_, {});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  ASSERT_EQ(data->warnings.size(), 1u);
  EXPECT_THAT(data->warnings[0], HasSubstr("service 'chat'"));
  EXPECT_THAT(data->warnings[0], HasSubstr("code, conv"));
  const WorkloadSpec* big = Find(*data, "chat/big");
  ASSERT_NE(big, nullptr);
  ExpectCurve(big->realtime.demand, sum);
  ASSERT_EQ(big->realtime.classes.size(), 2u);
  // At 1m neither class is at its last rate: 6 is split 3 to 2. At 2m conv is at its 2,
  // code has the rest; at 3m both are at their last.
  ExpectCurve(big->realtime.classes[0].demand,
              {{0, 0}, {kMinute, 3.6}, {2 * kMinute, 6}, {3 * kMinute, 3}});
  ExpectCurve(big->realtime.classes[1].demand, {{0, 0}, {kMinute, 2.4}, {2 * kMinute, 2}});
  const WorkloadSpec* coder = Find(*data, "chat/coder");
  ASSERT_NE(coder, nullptr);
  ExpectCurve(coder->realtime.classes[0].demand,
              {{0, 0}, {kMinute, 3.6}, {2 * kMinute, 6}, {3 * kMinute, 3}});
  EXPECT_TRUE(coder->realtime.demand.empty() || coder->realtime.demand.back().rps == 0);
}

// A hostile store: a later job's `produces` names a variant the service lacks, a stored
// rate is not a number, and a member's row points past its submission. Each is a warning
// that names the workload and what is wrong; the rest replays.
TEST_F(FromDataTest, BrokenVariantRowsAreWarningsNamingTheWorkload) {
  RecordStart();
  auto ids = SubmitAsDaemon(
      "name: chat\n"
      "kind: realtime\n"
      "slo: {latency_ms: 200}\n"
      "variants:\n"
      "  - {name: big, gpus: 2, throughput: {A100-80GB: 10}}\n"
      "  - {name: int8, gpus: 1, throughput: {A100-80GB: 10}, quality: 0.9, awaits_producer: "
      "true}\n",
      0);
  ASSERT_TRUE(store_->AddDemand(ids.at("chat/big"), kT0 + 2 * kMinute, 5).ok());
  SubmitAsDaemon(
      "{name: q4, kind: quantize, gpus: 1, work: 10m, produces: {service: chat, variant: int4}}",
      kMinute);
  {
    const std::string path = store_->path();
    RawSql(path, "UPDATE workloads SET idx = 9 WHERE name = 'chat/int8'");
    // Rates no report gives: negative, and infinite (9e999 reads back as +inf).
    const std::string big = std::to_string(ids.at("chat/big"));
    RawSql(path, "INSERT INTO demand(workload_id, at, rps) VALUES(" + big + ", " +
                     std::to_string(kT0 + kMinute) + ", -5), (" + big + ", " +
                     std::to_string(kT0 + 90 * kSecond) + ", 9e999)");
  }
  SaveLedgerAt(kT0 + kHour);
  auto data = LoadFromData(dir_, {});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  std::string all;
  for (const std::string& w : data->warnings) all += w + "\n";
  EXPECT_THAT(all, HasSubstr("workload 'q4'"));
  EXPECT_THAT(all, HasSubstr("produces.variant"));
  EXPECT_THAT(all, HasSubstr("found 'int4'"));
  EXPECT_THAT(all, HasSubstr("workload 'chat/big'"));
  EXPECT_THAT(all, HasSubstr("not a request rate"));
  EXPECT_THAT(all, HasSubstr("skipped workload 'chat/int8'"));
  const WorkloadSpec* big = Find(*data, "chat/big");
  ASSERT_NE(big, nullptr);
  ExpectCurve(big->realtime.demand, {{0, 0}, {2 * kMinute, 5}});
  ASSERT_NE(Find(*data, "q4"), nullptr);  // it runs, and produces nothing
  SimOptions opt;
  opt.horizon = data->end - data->origin;
  EXPECT_TRUE(SimulatePolicies(data->input, {"airtime", "fifo"}, opt).ok());
}

TEST(ParseWindowTime, DatesTimesAndDurations) {
  const TimeMs latest = kT0 + kDay;
  EXPECT_EQ(*ParseWindowTime("7d", latest), latest - 7 * kDay);
  EXPECT_EQ(*ParseWindowTime("2027-01-15", latest), kT0 - 8 * kHour);
  EXPECT_EQ(*ParseWindowTime("2027-01-15 08:00", latest), kT0);
  EXPECT_EQ(*ParseWindowTime("2027-01-15T08:00:00Z", latest), kT0);
  EXPECT_FALSE(ParseWindowTime("yesterday", latest).ok());
  EXPECT_FALSE(ParseWindowTime("2027-13-01", latest).ok());
}

}  // namespace
}  // namespace airtime
