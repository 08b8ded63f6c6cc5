// Tests of the SQLite Store: round trips of every row type, updates, filters, errors,
// transactions, durability across Store instances, WAL mode and schema versioning.
#include "airtime/store/store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <tuple>

namespace airtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

auto Tie(const SubmissionRow& s) { return std::tie(s.id, s.tenant, s.body, s.origin, s.at); }

auto Tie(const WorkloadRow& w) {
  return std::tie(w.id, w.submission_id, w.index, w.name, w.tenant, w.kind, w.state, w.priority,
                  w.submitted_at, w.started_at, w.finished_at, w.exit_code, w.message, w.demand_rps,
                  w.demand_at, w.preemptions);
}

auto Tie(const RunRow& r) {
  return std::tie(r.id, r.workload_id, r.replica, r.attempt, r.gpus, r.share_milli, r.state, r.pid,
                  r.start_ticks, r.boot_id, r.started_at, r.ended_at, r.exit_code, r.run_dir,
                  r.stop_reason, r.port, r.slurm_job, r.placed);
}

// Runs one SQL statement on the database file directly (not through Store); returns the
// first column of its first row as text ("" when none).
std::string RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  std::string value;
  if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0)) {
    value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airtime_store_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    store_ = OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    submission_id_ = AddSubmission();
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }

  static std::unique_ptr<Store> OpenStore(const std::string& dir) {
    StatusOr<std::unique_ptr<Store>> store = Store::Open(dir);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  int64_t AddSubmission() {
    StatusOr<int64_t> id = store_->AddSubmission({0, "team-a", "workloads: []", "request", 5});
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  WorkloadRow Workload(const std::string& name, const std::string& state = "queued") {
    WorkloadRow w;
    w.submission_id = submission_id_;
    w.name = name;
    w.tenant = "team-a";
    w.kind = "training";
    w.state = state;
    w.submitted_at = 1000;
    return w;
  }

  int64_t AddWorkload(const std::string& name, const std::string& state = "queued") {
    StatusOr<int64_t> id = store_->AddWorkload(Workload(name, state));
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  RunRow Run(int64_t workload_id, const std::string& state = "launching") {
    RunRow r;
    r.workload_id = workload_id;
    r.gpus = {"GPU-0"};
    r.state = state;
    r.started_at = 2000;
    return r;
  }

  std::vector<WorkloadRow> Workloads(bool active_only) {
    StatusOr<std::vector<WorkloadRow>> rows = store_->LoadWorkloads(active_only);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<WorkloadRow>{};
  }

  std::vector<RunRow> Runs(bool active_only) {
    StatusOr<std::vector<RunRow>> rows = store_->LoadRuns(active_only);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<RunRow>{};
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
  int64_t submission_id_ = 0;
};

TEST_F(StoreTest, OpenCreatesTheDirectoryAndTheDatabase) {
  std::string nested = dir_ + "/a/b/state";
  std::unique_ptr<Store> store = OpenStore(nested);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->path(), nested + "/airtime.db");
  EXPECT_TRUE(fs::is_regular_file(store->path()));
  EXPECT_EQ(store_->path(), dir_ + "/airtime.db");
}

TEST_F(StoreTest, SubmissionRoundTrip) {
  SubmissionRow in{0, "tenant 'quoted'", "workloads:\n  - name: x\n    gpus: 2\n", "demo.yaml",
                   1712345678901};
  StatusOr<int64_t> id = store_->AddSubmission(in);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_GT(*id, 0);
  in.id = *id;
  StatusOr<SubmissionRow> out = store_->GetSubmission(*id);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Tie(*out), Tie(in));
}

TEST_F(StoreTest, GetMissingSubmissionIsNotFound) {
  StatusOr<SubmissionRow> out = store_->GetSubmission(42);
  EXPECT_EQ(out.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(out.status().message(), HasSubstr("42"));
}

TEST_F(StoreTest, WorkloadRoundTripWithOptionalsNullAndSet) {
  WorkloadRow unset = Workload("plain");
  WorkloadRow set = Workload("full", "succeeded");
  set.index = 3;
  set.tenant = "t-\xc3\xa9";  // UTF-8
  set.kind = "realtime";
  set.priority = -7;
  set.submitted_at = 1712345678901;
  set.started_at = 1712345679000;
  set.finished_at = 1712345680000;
  set.exit_code = -1;
  set.message = "exited with status 1; it's \"done\"";
  set.demand_rps = 123.456789;
  set.demand_at = 1712345679500;
  set.preemptions = 4;
  for (WorkloadRow* w : {&unset, &set}) {
    StatusOr<int64_t> id = store_->AddWorkload(*w);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    w->id = *id;
  }
  std::vector<WorkloadRow> rows = Workloads(false);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(Tie(rows[0]), Tie(unset));
  EXPECT_EQ(Tie(rows[1]), Tie(set));
  EXPECT_FALSE(rows[0].started_at.has_value());
  EXPECT_FALSE(rows[0].exit_code.has_value());
}

TEST_F(StoreTest, RunRoundTripWithOptionalsNullAndSet) {
  int64_t w = AddWorkload("w");
  RunRow unset = Run(w);
  unset.gpus = {};
  RunRow set = Run(w, "exited");
  set.replica = 2;
  set.attempt = 3;
  set.gpus = {"GPU-8a1f0c2e-1111-2222-3333-444455556666", "MIG-abc/1/0", "GPU-\"odd\""};
  set.share_milli = 250;
  set.pid = 4194304;
  set.start_ticks = 987654321012;
  set.boot_id = "0f6a3c1e-9b2d-4c5e-8f7a-1b2c3d4e5f60";
  set.started_at = 1712345678901;
  set.ended_at = 1712345699999;
  set.exit_code = 137;
  set.run_dir = "/var/lib/airtime/runs/w/3";
  set.stop_reason = "preempted: by 'train-b'";
  set.port = 8081;
  for (RunRow* r : {&unset, &set}) {
    StatusOr<int64_t> id = store_->AddRun(*r);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    r->id = *id;
  }
  std::vector<RunRow> rows = Runs(false);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(Tie(rows[0]), Tie(unset));
  EXPECT_EQ(Tie(rows[1]), Tie(set));
  EXPECT_EQ(RawSql(store_->path(), "SELECT gpus FROM runs WHERE id = " + std::to_string(unset.id)),
            "[]");
}

TEST_F(StoreTest, UpdateWorkloadChangesEveryColumn) {
  WorkloadRow w = Workload("before");
  StatusOr<int64_t> id = store_->AddWorkload(w);
  ASSERT_TRUE(id.ok());
  w.id = *id;
  w.submission_id = AddSubmission();
  w.index = 1;
  w.name = "after";
  w.tenant = "team-b";
  w.kind = "batch";
  w.state = "failed";
  w.priority = 9;
  w.submitted_at = 11;
  w.started_at = 12;
  w.finished_at = 13;
  w.exit_code = 2;
  w.message = "exited with status 2";
  w.demand_rps = 0.5;
  w.demand_at = 14;
  w.preemptions = 1;
  ASSERT_TRUE(store_->UpdateWorkload(w).ok());
  std::vector<WorkloadRow> rows = Workloads(false);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(Tie(rows[0]), Tie(w));
  EXPECT_FALSE(store_->NameTaken("before"));
  EXPECT_TRUE(store_->NameTaken("after"));

  w.started_at.reset();  // back to null
  ASSERT_TRUE(store_->UpdateWorkload(w).ok());
  EXPECT_FALSE(Workloads(false)[0].started_at.has_value());
}

TEST_F(StoreTest, UpdateRunChangesEveryColumn) {
  int64_t w1 = AddWorkload("w1");
  int64_t w2 = AddWorkload("w2");
  RunRow r = Run(w1);
  StatusOr<int64_t> id = store_->AddRun(r);
  ASSERT_TRUE(id.ok());
  r.id = *id;
  r.workload_id = w2;
  r.replica = 1;
  r.attempt = 2;
  r.gpus = {"GPU-1", "GPU-2"};
  r.share_milli = 500;
  r.state = "exited";
  r.pid = 1234;
  r.start_ticks = 5678;
  r.boot_id = "boot";
  r.started_at = 3;
  r.ended_at = 4;
  r.exit_code = 0;
  r.run_dir = "/runs/x";
  r.stop_reason = "cancelled";
  r.port = 9000;
  ASSERT_TRUE(store_->UpdateRun(r).ok());
  std::vector<RunRow> rows = Runs(false);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(Tie(rows[0]), Tie(r));
}

TEST_F(StoreTest, UpdateOfAMissingIdIsNotFound) {
  WorkloadRow w = Workload("w");
  w.id = 99;
  Status st = store_->UpdateWorkload(w);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_THAT(st.message(), HasSubstr("99"));
  RunRow r = Run(AddWorkload("x"));
  r.id = 77;
  st = store_->UpdateRun(r);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_THAT(st.message(), HasSubstr("77"));
}

TEST_F(StoreTest, ActiveOnlyFilters) {
  int64_t queued = AddWorkload("q", "queued");
  int64_t running = AddWorkload("r", "running");
  AddWorkload("s", "succeeded");
  AddWorkload("f", "failed");
  AddWorkload("c", "cancelled");
  EXPECT_EQ(Workloads(false).size(), 5u);
  std::vector<WorkloadRow> active = Workloads(true);
  ASSERT_EQ(active.size(), 2u);
  EXPECT_EQ(active[0].id, queued);
  EXPECT_EQ(active[1].id, running);

  std::vector<int64_t> want;
  for (const char* state : {"launching", "running", "exited", "abandoned"}) {
    StatusOr<int64_t> id = store_->AddRun(Run(running, state));
    ASSERT_TRUE(id.ok());
    want.push_back(*id);
  }
  EXPECT_EQ(Runs(false).size(), 4u);
  std::vector<RunRow> runs = Runs(true);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, want[0]);
  EXPECT_EQ(runs[1].id, want[1]);
}

// What a daemon that keeps no record of an ended workload asks the store: one by id or
// name, a service's members by their names' prefix, the last to end, a kind, a page of a
// filtered listing with its total, and the counts by state and kind.
TEST_F(StoreTest, WorkloadsAreFoundByIdNamePrefixEndAndFilter) {
  auto add = [&](const std::string& name, const std::string& state, const std::string& kind,
                 const std::string& tenant, std::optional<TimeMs> finished) {
    WorkloadRow w = Workload(name, state);
    w.kind = kind;
    w.tenant = tenant;
    w.finished_at = finished;
    StatusOr<int64_t> id = store_->AddWorkload(w);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  };
  const int64_t a = add("a", "succeeded", "batch", "team-a", 3000);
  add("chat/big", "cancelled", "realtime", "team-a", 5000);
  add("chat/small", "cancelled", "realtime", "team-a", 5000);
  add("chat0", "failed", "batch", "team-b", 4000);
  add("q", "queued", "quantize", "team-b", std::nullopt);
  add("r", "running", "batch", "team-a", std::nullopt);

  auto got = store_->GetWorkload(a);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->name, "a");
  EXPECT_FALSE(store_->GetWorkload(999)->has_value());
  EXPECT_EQ((*store_->GetWorkloadNamed("chat0"))->state, "failed");
  EXPECT_FALSE(store_->GetWorkloadNamed("chat")->has_value());

  auto names = [](const StatusOr<std::vector<WorkloadRow>>& rows) {
    std::vector<std::string> out;
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (rows.ok())
      for (const WorkloadRow& w : *rows) out.push_back(w.name);
    return out;
  };
  EXPECT_THAT(names(store_->WorkloadsNamedFrom("chat/")),
              ::testing::ElementsAre("chat/big", "chat/small"));
  EXPECT_TRUE(names(store_->WorkloadsNamedFrom("zzz/")).empty());
  // The two that ended last (the chat members at 5000), by id.
  EXPECT_THAT(names(store_->LoadEndedWorkloads(2)),
              ::testing::ElementsAre("chat/big", "chat/small"));
  EXPECT_THAT(names(store_->LoadEndedWorkloads(3)),
              ::testing::ElementsAre("chat/big", "chat/small", "chat0"));
  EXPECT_THAT(names(store_->LoadWorkloadsOfKind("quantize")), ::testing::ElementsAre("q"));

  auto Query = [](std::string tenant, std::string kind = "", std::string state = "",
                  int64_t offset = 0, int64_t limit = 0) {
    return WorkloadQuery{std::move(tenant), std::move(kind), std::move(state), offset, limit};
  };
  auto page = [&](WorkloadQuery q) {
    StatusOr<WorkloadPage> p = store_->ListWorkloads(q);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    std::vector<std::string> out;
    if (p.ok())
      for (const WorkloadRow& w : p->rows) out.push_back(w.name);
    return std::make_pair(out, p.ok() ? p->total : -1);
  };
  EXPECT_EQ(page({}), std::make_pair(std::vector<std::string>{"r", "q", "chat0", "chat/small",
                                                              "chat/big", "a"},
                                     int64_t{6}));
  EXPECT_EQ(page(Query("team-a", "", "", 1, 2)),
            std::make_pair(std::vector<std::string>{"chat/small", "chat/big"}, int64_t{4}));
  EXPECT_EQ(page(Query("", "batch", "active")),
            std::make_pair(std::vector<std::string>{"r"}, int64_t{1}));
  EXPECT_EQ(page(Query("", "", "cancelled", 0, 1)),
            std::make_pair(std::vector<std::string>{"chat/small"}, int64_t{2}));
  EXPECT_EQ(page(Query("nobody")).second, 0);

  auto counts = store_->CountWorkloads();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)[std::make_pair("cancelled", "realtime")], 2);
  EXPECT_EQ((*counts)[std::make_pair("succeeded", "batch")], 1);
  EXPECT_EQ(counts->size(), 5u);
}

TEST_F(StoreTest, RunsOfReturnsOnlyThatWorkloadsRunsInOrder) {
  int64_t a = AddWorkload("a");
  int64_t b = AddWorkload("b");
  std::vector<int64_t> of_a;
  for (int i = 0; i < 3; ++i) {
    StatusOr<int64_t> id = store_->AddRun(Run(a));
    ASSERT_TRUE(id.ok());
    of_a.push_back(*id);
    ASSERT_TRUE(store_->AddRun(Run(b)).ok());
  }
  StatusOr<std::vector<RunRow>> runs = store_->RunsOf(a);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ((*runs)[i].id, of_a[i]);
  StatusOr<std::vector<RunRow>> none = store_->RunsOf(12345);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(StoreTest, DuplicateNameIsAlreadyExists) {
  AddWorkload("train-a");
  EXPECT_TRUE(store_->NameTaken("train-a"));
  EXPECT_FALSE(store_->NameTaken("train-b"));
  StatusOr<int64_t> dup = store_->AddWorkload(Workload("train-a"));
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(dup.status().message(), "workload name 'train-a' is already taken");

  WorkloadRow other = Workload("train-b");
  StatusOr<int64_t> id = store_->AddWorkload(other);
  ASSERT_TRUE(id.ok());
  other.id = *id;
  other.name = "train-a";
  EXPECT_EQ(store_->UpdateWorkload(other).code(), StatusCode::kAlreadyExists);
}

TEST_F(StoreTest, ForeignKeysAreEnforced) {
  WorkloadRow w = Workload("orphan");
  w.submission_id = 999;
  StatusOr<int64_t> id = store_->AddWorkload(w);
  EXPECT_FALSE(id.ok());
  EXPECT_THAT(id.status().message(), HasSubstr("add workload 'orphan'"));
  EXPECT_THAT(id.status().message(), HasSubstr("FOREIGN KEY"));
  StatusOr<int64_t> run = store_->AddRun(Run(999));
  EXPECT_THAT(run.status().message(), HasSubstr("add run of workload 999"));
}

TEST_F(StoreTest, TransactionCommits) {
  int64_t id = 0;
  Status st = store_->Transaction([&]() -> Status {
    StatusOr<int64_t> added = store_->AddWorkload(Workload("in-txn"));
    if (!added.ok()) return added.status();
    id = *added;
    return store_->SetMeta("k", "v");
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(Workloads(false).size(), 1u);
  EXPECT_EQ(Workloads(false)[0].id, id);
  EXPECT_EQ(store_->GetMeta("k"), "v");
}

TEST_F(StoreTest, TransactionErrorRollsBackEverything) {
  int64_t sub_id = 0;
  Status st = store_->Transaction([&]() -> Status {
    StatusOr<int64_t> sub = store_->AddSubmission({0, "t", "body", "request", 1});
    if (!sub.ok()) return sub.status();
    sub_id = *sub;
    WorkloadRow w = Workload("gone");
    w.submission_id = *sub;
    StatusOr<int64_t> id = store_->AddWorkload(w);
    if (!id.ok()) return id.status();
    AIRTIME_RETURN_IF_ERROR(store_->AddRun(Run(*id)).status());
    AIRTIME_RETURN_IF_ERROR(store_->SetMeta("k", "v"));
    return InvalidArgument("body says no");
  });
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "body says no");
  EXPECT_TRUE(Workloads(false).empty());
  EXPECT_TRUE(Runs(false).empty());
  EXPECT_FALSE(store_->GetMeta("k").has_value());
  ASSERT_NE(sub_id, 0);
  EXPECT_EQ(store_->GetSubmission(sub_id).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(store_->NameTaken("gone"));
}

TEST_F(StoreTest, TransactionSqlErrorRollsBackEarlierWrites) {
  AddWorkload("taken");
  Status st = store_->Transaction([&]() -> Status {
    AIRTIME_RETURN_IF_ERROR(store_->AddWorkload(Workload("first")).status());
    return store_->AddWorkload(Workload("taken")).status();
  });
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists);
  EXPECT_FALSE(store_->NameTaken("first"));
  EXPECT_TRUE(store_->Transaction([] { return OkStatus(); }).ok());  // usable again
}

TEST_F(StoreTest, TransactionExceptionRollsBack) {
  EXPECT_THROW((void)store_->Transaction([&]() -> Status {
    AIRTIME_RETURN_IF_ERROR(store_->AddWorkload(Workload("thrown")).status());
    throw std::runtime_error("boom");
  }),
               std::runtime_error);
  EXPECT_FALSE(store_->NameTaken("thrown"));
  EXPECT_TRUE(store_->Transaction([] { return OkStatus(); }).ok());
}

TEST_F(StoreTest, NestedTransactionIsFailedPrecondition) {
  Status inner;
  Status outer = store_->Transaction([&]() -> Status {
    AIRTIME_RETURN_IF_ERROR(store_->SetMeta("outer", "1"));
    inner = store_->Transaction([&] { return store_->SetMeta("inner", "1"); });
    return OkStatus();
  });
  EXPECT_TRUE(outer.ok()) << outer.ToString();
  EXPECT_EQ(inner.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->GetMeta("outer"), "1");
  EXPECT_FALSE(store_->GetMeta("inner").has_value());
}

TEST_F(StoreTest, MetaSetOverwriteAndMissing) {
  EXPECT_FALSE(store_->GetMeta("daemon_started_at").has_value());
  ASSERT_TRUE(store_->SetMeta("daemon_started_at", "1").ok());
  ASSERT_TRUE(store_->SetMeta("daemon_started_at", "2").ok());
  ASSERT_TRUE(store_->SetMeta("empty", "").ok());
  EXPECT_EQ(store_->GetMeta("daemon_started_at"), "2");
  EXPECT_EQ(store_->GetMeta("empty"), "");
}

TEST_F(StoreTest, ReopenKeepsData) {
  int64_t sub = AddSubmission();
  WorkloadRow w = Workload("durable", "running");
  w.submission_id = sub;
  w.exit_code = 3;
  StatusOr<int64_t> wid = store_->AddWorkload(w);
  ASSERT_TRUE(wid.ok());
  w.id = *wid;
  RunRow r = Run(w.id, "running");
  r.gpus = {"GPU-a", "GPU-b"};
  StatusOr<int64_t> rid = store_->AddRun(r);
  ASSERT_TRUE(rid.ok());
  r.id = *rid;
  ASSERT_TRUE(store_->SetMeta("k", "v").ok());
  store_.reset();

  store_ = OpenStore(dir_);
  ASSERT_NE(store_, nullptr);
  ASSERT_TRUE(store_->GetSubmission(sub).ok());
  std::vector<WorkloadRow> workloads = Workloads(true);
  ASSERT_EQ(workloads.size(), 1u);
  EXPECT_EQ(Tie(workloads[0]), Tie(w));
  std::vector<RunRow> runs = Runs(true);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(Tie(runs[0]), Tie(r));
  EXPECT_EQ(store_->GetMeta("k"), "v");
  StatusOr<int64_t> next = store_->AddWorkload(Workload("next"));
  ASSERT_TRUE(next.ok());
  EXPECT_GT(*next, w.id);
}

TEST_F(StoreTest, DatabaseIsInWalModeWithSchemaVersion7) {
  EXPECT_EQ(RawSql(store_->path(), "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(RawSql(store_->path(), "PRAGMA user_version"), "7");
  AddWorkload("w");
  EXPECT_TRUE(fs::exists(store_->path() + "-wal"));
  for (const char* index :
       {"runs_by_workload", "runs_by_state", "workloads_by_state", "demand_by_workload"}) {
    EXPECT_EQ(
        RawSql(store_->path(),
               std::string("SELECT name FROM sqlite_master WHERE type = 'index' AND name = '") +
                   index + "'"),
        index);
  }
}

TEST_F(StoreTest, NewerSchemaVersionIsRefused) {
  std::string path = store_->path();
  store_.reset();
  RawSql(path, "PRAGMA user_version = 8");
  StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr(path));
  EXPECT_THAT(store.status().message(), HasSubstr("newer"));
  EXPECT_THAT(store.status().message(), HasSubstr("schema version 8"));
}

// A version-1 store (before the Slurm backend) is migrated in place: its runs keep what they
// had, with no Slurm job, and a Slurm job id then round-trips.
TEST_F(StoreTest, Version1StoreGainsTheSlurmJobColumn) {
  const int64_t w = AddWorkload("w");
  RunRow r = Run(w, "running");
  StatusOr<int64_t> id = store_->AddRun(r);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  r.id = *id;
  const std::string path = store_->path();
  store_.reset();
  RawSql(path, "ALTER TABLE runs DROP COLUMN slurm_job");
  RawSql(path, "ALTER TABLE runs DROP COLUMN placed");
  RawSql(path, "DROP TABLE demand");
  RawSql(path, "DROP TABLE daemon_starts");
  RawSql(path, "DROP TABLE node_events");
  RawSql(path, "DROP TABLE class_demand");
  RawSql(path, "DROP TABLE class_demand_history");
  RawSql(path, "PRAGMA user_version = 1");
  StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  store_ = std::move(*store);
  EXPECT_EQ(RawSql(path, "PRAGMA user_version"), "7");
  std::vector<RunRow> runs = Runs(false);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(Tie(runs[0]), Tie(r));
  r.slurm_job = 4242;
  ASSERT_TRUE(store_->UpdateRun(r).ok());
  runs = Runs(false);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].slurm_job, 4242);
}

// A service's demand history: read back by time from a given moment, each workload's
// alone, pruned for all; a version-2 store gains the table.
TEST_F(StoreTest, DemandHistoryIsKeptByWorkloadAndPruned) {
  const int64_t a = AddWorkload("a"), b = AddWorkload("b");
  for (auto [w, at, rps] : {std::tuple{a, 3000, 3.0}, std::tuple{a, 1000, 1.0},
                            std::tuple{b, 2000, 9.0}, std::tuple{a, 2000, 2.0}})
    ASSERT_TRUE(store_->AddDemand(w, at, rps).ok());
  using Points = std::vector<std::pair<int64_t, double>>;
  EXPECT_EQ(*store_->DemandOf(a, 0), (Points{{1000, 1.0}, {2000, 2.0}, {3000, 3.0}}));
  EXPECT_EQ(*store_->DemandOf(a, 2000), (Points{{2000, 2.0}, {3000, 3.0}}));
  EXPECT_EQ(*store_->DemandOf(b, 0), (Points{{2000, 9.0}}));
  EXPECT_EQ(store_->AddDemand(999, 1000, 1.0).code(), StatusCode::kInvalidArgument);
  // A raised step takes the new rate: that workload's, at that time, alone.
  ASSERT_TRUE(store_->RaiseDemand(a, 2000, 2.5).ok());
  EXPECT_EQ(*store_->DemandOf(a, 0), (Points{{1000, 1.0}, {2000, 2.5}, {3000, 3.0}}));
  EXPECT_EQ(*store_->DemandOf(b, 0), (Points{{2000, 9.0}}));
  ASSERT_TRUE(store_->PruneDemand(2500).ok());
  EXPECT_EQ(*store_->DemandOf(a, 0), (Points{{3000, 3.0}}));
  EXPECT_TRUE(store_->DemandOf(b, 0)->empty());

  const std::string path = store_->path();
  store_.reset();
  RawSql(path, "DROP TABLE demand");
  RawSql(path, "ALTER TABLE runs DROP COLUMN placed");
  RawSql(path, "DROP TABLE daemon_starts");
  RawSql(path, "DROP TABLE node_events");
  RawSql(path, "DROP TABLE class_demand");
  RawSql(path, "DROP TABLE class_demand_history");
  RawSql(path, "PRAGMA user_version = 2");
  StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  store_ = std::move(*store);
  EXPECT_EQ(RawSql(path, "PRAGMA user_version"), "7");
  EXPECT_TRUE(store_->DemandOf(a, 0)->empty());
  ASSERT_TRUE(store_->AddDemand(a, 4000, 4.0).ok());
  EXPECT_EQ(*store_->DemandOf(a, 0), (Points{{4000, 4.0}}));
}

// A version-3 store gains the runs' placement column: old runs read back with none, and a
// new run's round-trips.
TEST_F(StoreTest, Version3StoreGainsThePlacementColumn) {
  const int64_t w = AddWorkload("w");
  RunRow r = Run(w, "exited");
  StatusOr<int64_t> id = store_->AddRun(r);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  r.id = *id;
  const std::string path = store_->path();
  store_.reset();
  RawSql(path, "ALTER TABLE runs DROP COLUMN placed");
  RawSql(path, "DROP TABLE daemon_starts");
  RawSql(path, "DROP TABLE node_events");
  RawSql(path, "DROP TABLE class_demand");
  RawSql(path, "DROP TABLE class_demand_history");
  RawSql(path, "PRAGMA user_version = 3");
  StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  store_ = std::move(*store);
  EXPECT_EQ(RawSql(path, "PRAGMA user_version"), "7");
  std::vector<RunRow> runs = Runs(false);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(Tie(runs[0]), Tie(r));
  RunRow next = Run(w, "running");
  next.placed = "placed on n1/gpu0 after waiting 3m00s";
  id = store_->AddRun(next);
  ASSERT_TRUE(id.ok());
  runs = Runs(false);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].placed, "placed on n1/gpu0 after waiting 3m00s");
}

// Daemon starts and node events round-trip by time; a version-4 store gains both tables,
// and a read-only store of version 4 reads them as empty.
TEST_F(StoreTest, DaemonStartsAndNodeEventsRoundTripAndVersion4Migrates) {
  ASSERT_TRUE(store_->AddDaemonStart({2000, "fifo", "cluster: {}", {"GPU-b"}}).ok());
  ASSERT_TRUE(store_->AddDaemonStart({1000, "airtime", "cluster:\n  name: x\n", {"GPU-a"}}).ok());
  ASSERT_TRUE(store_->AddNodeEvent({5000, "n1", "up"}).ok());
  ASSERT_TRUE(store_->AddNodeEvent({4000, "n1", "down"}).ok());
  StatusOr<std::vector<DaemonStartRow>> starts = store_->DaemonStarts();
  ASSERT_TRUE(starts.ok()) << starts.status().ToString();
  ASSERT_EQ(starts->size(), 2u);
  EXPECT_EQ((*starts)[0].policy, "airtime");
  EXPECT_EQ((*starts)[0].cluster, "cluster:\n  name: x\n");
  EXPECT_EQ((*starts)[0].gpus, std::vector<std::string>{"GPU-a"});
  StatusOr<std::vector<NodeEventRow>> events = store_->NodeEvents();
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].state, "down");
  EXPECT_EQ((*events)[1].at, 5000);

  const std::string path = store_->path();
  store_.reset();
  RawSql(path, "DROP TABLE daemon_starts");
  RawSql(path, "DROP TABLE node_events");
  RawSql(path, "DROP TABLE class_demand");
  RawSql(path, "DROP TABLE class_demand_history");
  RawSql(path, "PRAGMA user_version = 4");
  {
    StatusOr<std::unique_ptr<Store>> old = Store::OpenReadOnly(dir_);
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    EXPECT_EQ((*old)->schema_version(), 4);
    EXPECT_TRUE((*old)->DaemonStarts()->empty());
    EXPECT_TRUE((*old)->NodeEvents()->empty());
  }
  EXPECT_EQ(RawSql(path, "PRAGMA user_version"), "4");  // read-only migrates nothing
  StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  store_ = std::move(*store);
  EXPECT_EQ(RawSql(path, "PRAGMA user_version"), "7");
  EXPECT_TRUE(store_->DaemonStarts()->empty());
  ASSERT_TRUE(store_->AddNodeEvent({6000, "n2", "down"}).ok());
  EXPECT_EQ(store_->NodeEvents()->size(), 1u);
}

// A request class's last rate: one per workload and class, a new one replacing the old, read
// back by class name. A version-5 store gains the table (read-only, it reads as empty).
TEST_F(StoreTest, ClassDemandKeepsTheLastRateOfEachClassAndVersion5Migrates) {
  const int64_t a = AddWorkload("chat/big"), b = AddWorkload("chat/small");
  ASSERT_TRUE(store_->SetClassDemand(a, "conv", 5.0, 1000).ok());
  ASSERT_TRUE(store_->SetClassDemand(a, "code", 3.0, 1000).ok());
  ASSERT_TRUE(store_->SetClassDemand(a, "code", 7.5, 2000).ok());
  ASSERT_TRUE(store_->SetClassDemand(b, "code", 1.0, 1500).ok());
  StatusOr<std::vector<ClassDemandRow>> rows = store_->ClassDemandOf(a);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].request_class, "code");
  EXPECT_EQ((*rows)[0].rps, 7.5);
  EXPECT_EQ((*rows)[0].at, 2000);
  EXPECT_EQ((*rows)[1].request_class, "conv");
  EXPECT_EQ((*rows)[1].rps, 5.0);
  EXPECT_EQ(store_->ClassDemandOf(b)->size(), 1u);
  EXPECT_EQ(store_->SetClassDemand(999, "code", 1.0, 1).code(), StatusCode::kInvalidArgument);

  const std::string path = store_->path();
  store_.reset();
  RawSql(path, "DROP TABLE class_demand");
  RawSql(path, "DROP TABLE class_demand_history");
  RawSql(path, "PRAGMA user_version = 5");
  {
    StatusOr<std::unique_ptr<Store>> old = Store::OpenReadOnly(dir_);
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    EXPECT_TRUE((*old)->ClassDemandOf(a)->empty());
  }
  StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  store_ = std::move(*store);
  EXPECT_EQ(RawSql(path, "PRAGMA user_version"), "7");
  EXPECT_TRUE(store_->ClassDemandOf(a)->empty());
  ASSERT_TRUE(store_->SetClassDemand(a, "code", 2.0, 3000).ok());
  EXPECT_EQ((*store_->ClassDemandOf(a))[0].rps, 2.0);
}

// Each class's rates are kept as a history too: read back by time from a given moment, each
// workload's alone, pruned with the services' demand. A version-6 store gains the table
// (read-only, its history reads as empty, its last rates as they are).
TEST_F(StoreTest, ClassDemandHistoryIsKeptByWorkloadPrunedAndVersion6Migrates) {
  const int64_t a = AddWorkload("chat/big"), b = AddWorkload("chat/small");
  // A report as the daemon stores one: the class's last rate, and a step of its history.
  auto report = [&](int64_t w, const std::string& cls, double rps, int64_t at) {
    EXPECT_TRUE(store_->SetClassDemand(w, cls, rps, at).ok());
    EXPECT_TRUE(store_->AddClassDemandStep(w, cls, at, rps).ok());
  };
  report(a, "code", 3.0, 1000);
  report(a, "conv", 5.0, 1000);
  report(b, "code", 9.0, 1500);
  report(a, "code", 7.5, 2000);
  report(a, "code", 1.0, 3000);
  auto steps = [&](int64_t w, int64_t since) {
    std::vector<std::tuple<std::string, int64_t, double>> out;
    StatusOr<std::vector<ClassDemandRow>> rows = store_->ClassDemandHistoryOf(w, since);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok()) return out;
    for (const ClassDemandRow& r : *rows) out.emplace_back(r.request_class, r.at, r.rps);
    return out;
  };
  using Steps = std::vector<std::tuple<std::string, int64_t, double>>;
  EXPECT_EQ(
      steps(a, 0),
      (Steps{{"code", 1000, 3.0}, {"conv", 1000, 5.0}, {"code", 2000, 7.5}, {"code", 3000, 1.0}}));
  EXPECT_EQ(steps(a, 2000), (Steps{{"code", 2000, 7.5}, {"code", 3000, 1.0}}));
  EXPECT_EQ(steps(b, 0), (Steps{{"code", 1500, 9.0}}));
  // A step raised (reports joined into it) takes the new rate; only that workload's, that
  // class's step at that time.
  ASSERT_TRUE(store_->RaiseClassDemandStep(a, "code", 2000, 8.0).ok());
  ASSERT_TRUE(store_->RaiseClassDemandStep(a, "code", 2500, 99.0).ok());  // no such step
  EXPECT_EQ(steps(a, 2000), (Steps{{"code", 2000, 8.0}, {"code", 3000, 1.0}}));
  EXPECT_EQ(steps(b, 0), (Steps{{"code", 1500, 9.0}}));
  EXPECT_EQ((*store_->ClassDemandOf(a))[0].rps, 1.0);  // the last rate is another row
  ASSERT_TRUE(store_->PruneDemand(2500).ok());
  EXPECT_EQ(steps(a, 0), (Steps{{"code", 3000, 1.0}}));
  EXPECT_TRUE(steps(b, 0).empty());
  EXPECT_EQ(store_->ClassDemandOf(b)->size(), 1u);  // a class's last rate is not pruned

  const std::string path = store_->path();
  store_.reset();
  RawSql(path, "DROP TABLE class_demand_history");
  RawSql(path, "PRAGMA user_version = 6");
  {
    StatusOr<std::unique_ptr<Store>> old = Store::OpenReadOnly(dir_);
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    EXPECT_TRUE((*old)->ClassDemandHistoryOf(a, 0)->empty());
    EXPECT_EQ((*old)->ClassDemandOf(a)->size(), 2u);
  }
  StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  store_ = std::move(*store);
  EXPECT_EQ(RawSql(path, "PRAGMA user_version"), "7");
  EXPECT_TRUE(steps(a, 0).empty());
  report(a, "conv", 2.0, 4000);
  EXPECT_EQ(steps(a, 0), (Steps{{"conv", 4000, 2.0}}));
}

// A reader sees what a writer committed while the writer keeps the store open, writes
// nothing itself, and takes no lock the writer would wait on.
TEST_F(StoreTest, ReadOnlyStoreReadsBesideAWriterAndNeverWrites) {
  const int64_t w = AddWorkload("w");
  StatusOr<std::unique_ptr<Store>> reader = Store::OpenReadOnly(dir_);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_TRUE((*reader)->read_only());
  ASSERT_TRUE((*reader)
                  ->Transaction([&]() -> Status {
                    // The writer commits while the reader holds its snapshot.
                    EXPECT_TRUE(store_->AddDemand(w, 1000, 2.0).ok());
                    EXPECT_EQ((*reader)->LoadWorkloads(false)->size(), 1u);
                    return OkStatus();
                  })
                  .ok());
  EXPECT_EQ((*reader)->DemandOf(w, 0)->size(), 1u);
  EXPECT_FALSE((*reader)->AddDemand(w, 2000, 3.0).ok());
  EXPECT_FALSE((*reader)->SetMeta("k", "v").ok());
  EXPECT_EQ(store_->DemandOf(w, 0)->size(), 1u);
  EXPECT_EQ(store_->GetMeta("k"), std::nullopt);
}

// A store no daemon has open (no -wal file) is read without creating SQLite's -wal and -shm
// files in the daemon's folder, whatever its path holds.
TEST_F(StoreTest, ReadOnlyStoreOfAClosedDatabaseCreatesNoFile) {
  const std::string odd = dir_ + "/odd ?#%& name";
  {
    auto store = Store::Open(odd);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const int64_t sub = *(*store)->AddSubmission({0, "t", "b", "o", 1});
    WorkloadRow w = Workload("w");
    w.submission_id = sub;
    ASSERT_TRUE((*store)->AddWorkload(w).ok());
  }
  ASSERT_FALSE(fs::exists(odd + "/airtime.db-wal"));
  auto reader = Store::OpenReadOnly(odd);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->LoadWorkloads(false)->size(), 1u);
  reader->reset();
  EXPECT_FALSE(fs::exists(odd + "/airtime.db-wal"));
  EXPECT_FALSE(fs::exists(odd + "/airtime.db-shm"));
}

TEST_F(StoreTest, ReadOnlyStoreNamesTheFileAndWhatIsWrong) {
  const std::string missing = dir_ + "/none";
  StatusOr<std::unique_ptr<Store>> store = Store::OpenReadOnly(missing);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(missing));
  EXPECT_FALSE(fs::exists(missing));  // nothing created

  const std::string empty = dir_ + "/empty";
  fs::create_directories(empty);
  EXPECT_THAT(Store::OpenReadOnly(empty).status().message(), HasSubstr("no such file"));
  std::ofstream(empty + "/airtime.db").flush();
  EXPECT_THAT(Store::OpenReadOnly(empty).status().message(), HasSubstr("empty"));

  const std::string garbage = dir_ + "/garbage";
  fs::create_directories(garbage);
  std::ofstream(garbage + "/airtime.db") << std::string(4096, 'x');
  store = Store::OpenReadOnly(garbage);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(garbage + "/airtime.db"));
  EXPECT_THAT(store.status().message(), HasSubstr("not a database"));

  const std::string path = store_->path();
  store_.reset();
  RawSql(path, "PRAGMA user_version = 8");
  store = Store::OpenReadOnly(dir_);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("newer"));
  RawSql(path, "PRAGMA user_version = 3");
  store = Store::OpenReadOnly(dir_);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("older"));
}

TEST_F(StoreTest, DirectoryThatIsAFileIsAClearError) {
  std::string file = dir_ + "/plain-file";
  std::ofstream(file) << "x";
  for (const std::string& dir : {file, file + "/sub"}) {
    StatusOr<std::unique_ptr<Store>> store = Store::Open(dir);
    ASSERT_FALSE(store.ok()) << dir;
    EXPECT_THAT(store.status().message(), HasSubstr(dir));
  }
  EXPECT_EQ(Store::Open("").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, DatabaseThatIsADirectoryIsAClearError) {
  std::string dir = dir_ + "/other";
  fs::create_directories(dir + "/airtime.db");
  StatusOr<std::unique_ptr<Store>> store = Store::Open(dir);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(dir + "/airtime.db"));
}

TEST_F(StoreTest, DatabaseThatIsNotSqliteIsAClearError) {
  std::string dir = dir_ + "/garbage";
  fs::create_directories(dir);
  std::ofstream(dir + "/airtime.db") << std::string(4096, 'g');
  StatusOr<std::unique_ptr<Store>> store = Store::Open(dir);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(dir + "/airtime.db"));
  EXPECT_THAT(store.status().message(), HasSubstr("not a database"));
}

TEST_F(StoreTest, UnwritableDirectoryIsAClearError) {
  // Root ignores permission bits, not /proc; others get a directory without write permission.
  std::string dir = "/proc/airtime-store-test/state";
  if (geteuid() != 0) {
    dir = dir_ + "/readonly";
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  }
  StatusOr<std::unique_ptr<Store>> store = Store::Open(dir);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(dir));
  std::cout << store.status().ToString() << "\n";
}

TEST_F(StoreTest, TenThousandInsertsInOneTransaction) {
  constexpr int kCount = 10000;
  int64_t sub = AddSubmission();
  Status st = store_->Transaction([&]() -> Status {
    for (int i = 0; i < kCount; ++i) {
      WorkloadRow w = Workload("w-" + std::to_string(i), i % 2 ? "queued" : "succeeded");
      w.submission_id = sub;
      w.index = i;
      AIRTIME_RETURN_IF_ERROR(store_->AddWorkload(w).status());
    }
    return OkStatus();
  });
  ASSERT_TRUE(st.ok()) << st.ToString();  // speed: bench/, not a timed test
  EXPECT_EQ(Workloads(false).size(), static_cast<size_t>(kCount));
  EXPECT_EQ(Workloads(true).size(), static_cast<size_t>(kCount / 2));
  EXPECT_TRUE(store_->NameTaken("w-9999"));
}

}  // namespace
}  // namespace airtime
