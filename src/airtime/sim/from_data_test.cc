// FromData: a store built through the store's own API, turned into a replay's input and
// replayed; hostile and broken stores give warnings or errors, never a crash.
#include "airtime/sim/from_data.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "airtime/config/cluster_yaml.h"
#include "airtime/sim/simulator.h"
#include "airtime/store/store.h"

namespace airtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr TimeMs kT0 = 1'800'000'000'000;  // a wall-clock time (2027)

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
  const int64_t gone = Submit("gone", "{name: gone, kind: batch, gpus: 1, command: [/bin/sleep]}",
                              30 * kSecond, "queued");
  Finish(gone, "cancelled", 40 * kSecond, 100 * kSecond, 143);
  ASSERT_TRUE(store_->AddNodeEvent({kT0 + 900 * kSecond, "n0", "down"}).ok());
  ASSERT_TRUE(store_->AddNodeEvent({kT0 + 960 * kSecond, "n0", "up"}).ok());
  ASSERT_TRUE(
      store_->SetMeta("ledger", "{\"saved_at\": " + std::to_string(kT0 + kHour) + "}").ok());
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
  ASSERT_EQ(c->realtime.demand.size(), 2u);
  EXPECT_EQ(c->realtime.demand[0].at, 60 * kSecond);
  EXPECT_EQ(c->realtime.demand[1].at, 1800 * kSecond);
  EXPECT_DOUBLE_EQ(c->realtime.demand[1].rps, 25.0);

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
