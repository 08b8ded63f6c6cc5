// Store on SQLite: schema version 6, prepared statements cached for the Store's lifetime,
// every value bound as a parameter. See store.h for what is stored and why.
#include "airtime/store/store.h"

#include <sqlite3.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <system_error>
#include <utility>

#include "airtime/base/strings.h"

namespace airtime {
namespace {

constexpr int64_t kSchemaVersion = 7;
// The oldest schema OpenReadOnly reads (it cannot migrate: older stores are upgraded by the
// next daemon of this airtime that opens them).
constexpr int64_t kOldestReadableVersion = 4;

constexpr const char* kSchema = R"sql(
CREATE TABLE submissions(
  id INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  body TEXT NOT NULL,
  origin TEXT NOT NULL,
  at INTEGER NOT NULL);
CREATE TABLE workloads(
  id INTEGER PRIMARY KEY,
  submission_id INTEGER NOT NULL REFERENCES submissions(id),
  idx INTEGER NOT NULL,
  name TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  kind TEXT NOT NULL,
  state TEXT NOT NULL,
  priority INTEGER NOT NULL,
  submitted_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  exit_code INTEGER,
  message TEXT NOT NULL,
  demand_rps REAL NOT NULL,
  demand_at INTEGER NOT NULL,
  preemptions INTEGER NOT NULL);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  replica INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  gpus TEXT NOT NULL,
  share_milli INTEGER NOT NULL,
  state TEXT NOT NULL,
  pid INTEGER NOT NULL,
  start_ticks INTEGER NOT NULL,
  boot_id TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  exit_code INTEGER,
  run_dir TEXT NOT NULL,
  stop_reason TEXT NOT NULL,
  port INTEGER NOT NULL,
  slurm_job INTEGER NOT NULL DEFAULT 0,
  placed TEXT NOT NULL DEFAULT '');
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE demand(
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  at INTEGER NOT NULL,
  rps REAL NOT NULL);
CREATE INDEX runs_by_workload ON runs(workload_id);
CREATE INDEX runs_by_state ON runs(state);
CREATE INDEX workloads_by_state ON workloads(state);
CREATE TABLE daemon_starts(
  at INTEGER NOT NULL,
  policy TEXT NOT NULL,
  cluster TEXT NOT NULL,
  gpus TEXT NOT NULL);
CREATE TABLE node_events(
  at INTEGER NOT NULL,
  node TEXT NOT NULL,
  state TEXT NOT NULL);
CREATE INDEX demand_by_workload ON demand(workload_id, at);
CREATE TABLE class_demand(
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  class TEXT NOT NULL,
  rps REAL NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY(workload_id, class));
CREATE TABLE class_demand_history(
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  class TEXT NOT NULL,
  at INTEGER NOT NULL,
  rps REAL NOT NULL);
CREATE INDEX class_demand_history_by_workload ON class_demand_history(workload_id, at);
PRAGMA user_version = 7;
)sql";

// From version 1: runs gain the Slurm backend's job id.
constexpr char kMigrateFrom1[] = R"sql(
ALTER TABLE runs ADD COLUMN slurm_job INTEGER NOT NULL DEFAULT 0;
PRAGMA user_version = 2;
)sql";

// From version 2: services' demand history.
constexpr char kMigrateFrom2[] = R"sql(
CREATE TABLE demand(
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  at INTEGER NOT NULL,
  rps REAL NOT NULL);
CREATE INDEX demand_by_workload ON demand(workload_id, at);
PRAGMA user_version = 3;
)sql";

// From version 3: each run says where it was placed and why (`airtime events`).
constexpr char kMigrateFrom3[] = R"sql(
ALTER TABLE runs ADD COLUMN placed TEXT NOT NULL DEFAULT '';
PRAGMA user_version = 4;
)sql";

// From version 4: what each daemon start ran (its cluster and policy) and the nodes that
// went down and came back, so that `airtime sim --from-data` can replay the store.
constexpr char kMigrateFrom4[] = R"sql(
CREATE TABLE daemon_starts(
  at INTEGER NOT NULL,
  policy TEXT NOT NULL,
  cluster TEXT NOT NULL,
  gpus TEXT NOT NULL);
CREATE TABLE node_events(
  at INTEGER NOT NULL,
  node TEXT NOT NULL,
  state TEXT NOT NULL);
PRAGMA user_version = 5;
)sql";

// From version 5: the last rate of each request class of a service that splits its demand
// by class (its members' rows), restored after a restart.
constexpr char kMigrateFrom5[] = R"sql(
CREATE TABLE class_demand(
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  class TEXT NOT NULL,
  rps REAL NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY(workload_id, class));
PRAGMA user_version = 6;
)sql";

// From version 6: each request class's history of rates beside its last one, so that a
// restart's window and forecast per class go on from what was seen.
constexpr char kMigrateFrom6[] = R"sql(
CREATE TABLE class_demand_history(
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  class TEXT NOT NULL,
  at INTEGER NOT NULL,
  rps REAL NOT NULL);
CREATE INDEX class_demand_history_by_workload ON class_demand_history(workload_id, at);
PRAGMA user_version = 7;
)sql";

// The cached statements; kSql holds their text in the same order.
enum Statement {
  kAddSubmission,
  kGetSubmission,
  kAddWorkload,
  kUpdateWorkload,
  kLoadWorkloads,
  kLoadActiveWorkloads,
  kNameTaken,
  kGetWorkload,
  kWorkloadNamed,
  kWorkloadsInNameRange,
  kLoadEndedWorkloads,
  kLoadWorkloadsOfKind,
  kListWorkloads,
  kCountMatchingWorkloads,
  kCountWorkloads,
  kAddRun,
  kUpdateRun,
  kLoadRuns,
  kLoadActiveRuns,
  kRunsOf,
  kSetMeta,
  kGetMeta,
  kRunIds,
  kAddDemand,
  kDemandOf,
  kPruneDemand,
  kAddDaemonStart,
  kDaemonStarts,
  kAddNodeEvent,
  kNodeEvents,
  kSetClassDemand,
  kClassDemandOf,
  kAddClassDemandStep,
  kClassDemandHistoryOf,
  kPruneClassDemandHistory,
  kRaiseDemand,
  kRaiseClassDemandStep,
  kStatementCount,
};

#define AIRTIME_WORKLOAD_COLUMNS                                                        \
  "submission_id, idx, name, tenant, kind, state, priority, submitted_at, started_at, " \
  "finished_at, exit_code, message, demand_rps, demand_at, preemptions"
// ListWorkloads' filter: ?1 tenant, ?2 kind, ?3 state ("" any; "active": queued or running).
#define AIRTIME_WORKLOAD_MATCH                                                  \
  "(?1 = '' OR tenant = ?1) AND (?2 = '' OR kind = ?2) AND (CASE WHEN ?3 = '' " \
  "THEN 1 WHEN ?3 = 'active' THEN state IN ('queued', 'running') ELSE state = ?3 END)"
#define AIRTIME_RUN_COLUMNS                                                              \
  "workload_id, replica, attempt, gpus, share_milli, state, pid, start_ticks, boot_id, " \
  "started_at, ended_at, exit_code, run_dir, stop_reason, port, slurm_job, placed"
#define AIRTIME_17_PARAMS "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
#define AIRTIME_15_PARAMS "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"

constexpr std::array<const char*, kStatementCount> kSql = {
    // New ids: one above the highest in the table or the floor (RaiseIdFloors), whichever
    // is higher; the floor is the first parameter.
    "INSERT INTO submissions(id, tenant, body, origin, at) VALUES("
    "(SELECT MAX(IFNULL(MAX(id), 0), ?) + 1 FROM submissions), ?, ?, ?, ?)",
    "SELECT id, tenant, body, origin, at FROM submissions WHERE id = ?",
    "INSERT INTO workloads(id, " AIRTIME_WORKLOAD_COLUMNS
    ") VALUES((SELECT MAX(IFNULL(MAX(id), 0), ?) + 1 FROM workloads), " AIRTIME_15_PARAMS ")",
    "UPDATE workloads SET (" AIRTIME_WORKLOAD_COLUMNS ") = (" AIRTIME_15_PARAMS ") WHERE id = ?",
    "SELECT id, " AIRTIME_WORKLOAD_COLUMNS " FROM workloads ORDER BY id",
    "SELECT id, " AIRTIME_WORKLOAD_COLUMNS
    " FROM workloads WHERE state IN ('queued', 'running') ORDER BY id",
    "SELECT 1 FROM workloads WHERE name = ?",
    "SELECT id, " AIRTIME_WORKLOAD_COLUMNS " FROM workloads WHERE id = ?",
    "SELECT id, " AIRTIME_WORKLOAD_COLUMNS " FROM workloads WHERE name = ?",
    "SELECT id, " AIRTIME_WORKLOAD_COLUMNS
    " FROM workloads WHERE name >= ? AND name < ? ORDER BY id",
    // The newest to end first (finished_at may be missing in a row that failed at start).
    "SELECT id, " AIRTIME_WORKLOAD_COLUMNS
    " FROM workloads WHERE state NOT IN ('queued', 'running') "
    "ORDER BY IFNULL(finished_at, submitted_at) DESC, id DESC LIMIT ?",
    "SELECT id, " AIRTIME_WORKLOAD_COLUMNS " FROM workloads WHERE kind = ? ORDER BY id",
    "SELECT id, " AIRTIME_WORKLOAD_COLUMNS " FROM workloads WHERE " AIRTIME_WORKLOAD_MATCH
    " ORDER BY id DESC LIMIT ?4 OFFSET ?5",
    "SELECT COUNT(*) FROM workloads WHERE " AIRTIME_WORKLOAD_MATCH,
    "SELECT state, kind, COUNT(*) FROM workloads GROUP BY state, kind",
    "INSERT INTO runs(id, " AIRTIME_RUN_COLUMNS
    ") VALUES((SELECT MAX(IFNULL(MAX(id), 0), ?) + 1 FROM runs), " AIRTIME_17_PARAMS ")",
    "UPDATE runs SET (" AIRTIME_RUN_COLUMNS ") = (" AIRTIME_17_PARAMS ") WHERE id = ?",
    "SELECT id, " AIRTIME_RUN_COLUMNS " FROM runs ORDER BY id",
    "SELECT id, " AIRTIME_RUN_COLUMNS
    " FROM runs WHERE state IN ('launching', 'running') ORDER BY id",
    "SELECT id, " AIRTIME_RUN_COLUMNS " FROM runs WHERE workload_id = ? ORDER BY id",
    "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = "
    "excluded.value",
    "SELECT value FROM meta WHERE key = ?",
    "SELECT id FROM runs ORDER BY id",
    "INSERT INTO demand(workload_id, at, rps) VALUES(?, ?, ?)",
    "SELECT at, rps FROM demand WHERE workload_id = ? AND at >= ? ORDER BY at, rowid",
    "DELETE FROM demand WHERE at < ?",
    "INSERT INTO daemon_starts(at, policy, cluster, gpus) VALUES(?, ?, ?, ?)",
    "SELECT at, policy, cluster, gpus FROM daemon_starts ORDER BY at, rowid",
    "INSERT INTO node_events(at, node, state) VALUES(?, ?, ?)",
    "SELECT at, node, state FROM node_events ORDER BY at, rowid",
    "INSERT INTO class_demand(workload_id, class, rps, at) VALUES(?, ?, ?, ?) "
    "ON CONFLICT(workload_id, class) DO UPDATE SET rps = excluded.rps, at = excluded.at",
    "SELECT class, rps, at FROM class_demand WHERE workload_id = ? ORDER BY class",
    "INSERT INTO class_demand_history(workload_id, class, at, rps) VALUES(?, ?, ?, ?)",
    "SELECT class, rps, at FROM class_demand_history WHERE workload_id = ? AND at >= ? "
    "ORDER BY at, rowid",
    "DELETE FROM class_demand_history WHERE at < ?",
    "UPDATE demand SET rps = ?3 WHERE workload_id = ?1 AND at = ?2",
    "UPDATE class_demand_history SET rps = ?4 WHERE workload_id = ?1 AND class = ?2 AND at = ?3",
};

// Meta keys of the start-up check (store_marks.h).
constexpr char kStoreIdKey[] = "store_id";
constexpr char kSequenceKey[] = "sequence";
constexpr char kSubmissionFloorKey[] = "id_floor.submissions";
constexpr char kWorkloadFloorKey[] = "id_floor.workloads";
constexpr char kRunFloorKey[] = "id_floor.runs";

// 64 hex digits from the kernel's random source.
std::string NewStoreId() {
  std::random_device random;
  std::string id;
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 8; ++i) {
    const uint32_t v = random();
    for (int k = 0; k < 4; ++k) {
      id += kHex[(v >> (8 * k + 4)) & 0xf];
      id += kHex[(v >> (8 * k)) & 0xf];
    }
  }
  return id;
}

#undef AIRTIME_WORKLOAD_COLUMNS
#undef AIRTIME_RUN_COLUMNS
#undef AIRTIME_WORKLOAD_MATCH
#undef AIRTIME_15_PARAMS
#undef AIRTIME_17_PARAMS

StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return StatusCode::kUnavailable;
    case SQLITE_CONSTRAINT:
      return StatusCode::kInvalidArgument;
    default:
      return StatusCode::kInternal;
  }
}

// One use of a cached statement: binds parameters in order, steps, reads the columns of
// each row in order, and resets the statement when it goes out of scope.
class Query {
 public:
  // `stmt` null: its preparation failed with `prepare_rc`, which every Step returns.
  explicit Query(sqlite3_stmt* stmt, int prepare_rc = SQLITE_OK)
      : stmt_(stmt),
        bind_rc_(stmt ? SQLITE_OK : (prepare_rc != SQLITE_OK ? prepare_rc : SQLITE_MISUSE)) {}
  ~Query() {
    if (!stmt_) return;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  void Bind(int64_t v) {
    if (stmt_) Check(sqlite3_bind_int64(stmt_, ++param_, v));
  }
  void Bind(int32_t v) { Bind(static_cast<int64_t>(v)); }
  void Bind(double v) {
    if (stmt_) Check(sqlite3_bind_double(stmt_, ++param_, v));
  }
  void Bind(const std::string& v) {
    if (stmt_)
      Check(
          sqlite3_bind_text64(stmt_, ++param_, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  template <typename T>
  void Bind(const std::optional<T>& v) {
    if (v) return Bind(*v);
    if (stmt_) Check(sqlite3_bind_null(stmt_, ++param_));
  }

  // SQLITE_ROW, SQLITE_DONE or an error code (that of a failed Bind first).
  int Step() {
    column_ = 0;
    return bind_rc_ != SQLITE_OK ? bind_rc_ : sqlite3_step(stmt_);
  }

  void Get(int64_t& v) { v = sqlite3_column_int64(stmt_, column_++); }
  void Get(int32_t& v) { v = sqlite3_column_int(stmt_, column_++); }
  void Get(double& v) { v = sqlite3_column_double(stmt_, column_++); }
  void Get(std::string& v) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column_));
    v.assign(text ? text : "", sqlite3_column_bytes(stmt_, column_));
    ++column_;
  }
  template <typename T>
  void Get(std::optional<T>& v) {
    if (sqlite3_column_type(stmt_, column_) == SQLITE_NULL) {
      v.reset();
      ++column_;
      return;
    }
    Get(v.emplace());
  }

 private:
  void Check(int rc) {
    if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  }

  sqlite3_stmt* stmt_;
  int param_ = 0;
  int column_ = 0;
  int bind_rc_ = SQLITE_OK;
};

void BindWorkload(Query& q, const WorkloadRow& w) {
  q.Bind(w.submission_id);
  q.Bind(w.index);
  q.Bind(w.name);
  q.Bind(w.tenant);
  q.Bind(w.kind);
  q.Bind(w.state);
  q.Bind(w.priority);
  q.Bind(w.submitted_at);
  q.Bind(w.started_at);
  q.Bind(w.finished_at);
  q.Bind(w.exit_code);
  q.Bind(w.message);
  q.Bind(w.demand_rps);
  q.Bind(w.demand_at);
  q.Bind(w.preemptions);
}

WorkloadRow ReadWorkload(Query& q) {
  WorkloadRow w;
  q.Get(w.id);
  q.Get(w.submission_id);
  q.Get(w.index);
  q.Get(w.name);
  q.Get(w.tenant);
  q.Get(w.kind);
  q.Get(w.state);
  q.Get(w.priority);
  q.Get(w.submitted_at);
  q.Get(w.started_at);
  q.Get(w.finished_at);
  q.Get(w.exit_code);
  q.Get(w.message);
  q.Get(w.demand_rps);
  q.Get(w.demand_at);
  q.Get(w.preemptions);
  return w;
}

void BindRun(Query& q, const RunRow& r) {
  q.Bind(r.workload_id);
  q.Bind(r.replica);
  q.Bind(r.attempt);
  q.Bind(nlohmann::json(r.gpus).dump());
  q.Bind(r.share_milli);
  q.Bind(r.state);
  q.Bind(r.pid);
  q.Bind(r.start_ticks);
  q.Bind(r.boot_id);
  q.Bind(r.started_at);
  q.Bind(r.ended_at);
  q.Bind(r.exit_code);
  q.Bind(r.run_dir);
  q.Bind(r.stop_reason);
  q.Bind(r.port);
  q.Bind(r.slurm_job);
  q.Bind(r.placed);
}

// Parses the gpus column: a JSON array of strings.
std::optional<std::vector<std::string>> ParseGpus(const std::string& text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_array()) return std::nullopt;
  std::vector<std::string> gpus;
  for (const auto& gpu : json) {
    if (!gpu.is_string()) return std::nullopt;
    gpus.push_back(gpu.get<std::string>());
  }
  return gpus;
}

StatusOr<RunRow> ReadRun(Query& q) {
  RunRow r;
  std::string gpus;
  q.Get(r.id);
  q.Get(r.workload_id);
  q.Get(r.replica);
  q.Get(r.attempt);
  q.Get(gpus);
  q.Get(r.share_milli);
  q.Get(r.state);
  q.Get(r.pid);
  q.Get(r.start_ticks);
  q.Get(r.boot_id);
  q.Get(r.started_at);
  q.Get(r.ended_at);
  q.Get(r.exit_code);
  q.Get(r.run_dir);
  q.Get(r.stop_reason);
  q.Get(r.port);
  q.Get(r.slurm_job);
  q.Get(r.placed);
  std::optional<std::vector<std::string>> parsed = ParseGpus(gpus);
  if (!parsed) {
    return Internal("run " + std::to_string(r.id) +
                    ": gpus is not a JSON array of strings: " + gpus);
  }
  r.gpus = std::move(*parsed);
  return r;
}

// `path` for a file: URI: every byte but unreserved ones and '/' percent-encoded.
std::string UriPath(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    }
  }
  return out;
}

Status MakeDirectory(const std::string& dir) {
  if (dir.empty()) return InvalidArgument("store: the state directory is empty");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return FailedPrecondition("store: cannot create directory '" + dir + "': " + ec.message());
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    return FailedPrecondition("store: '" + dir + "' is not a directory");
  }
  return OkStatus();
}

}  // namespace

bool IsStoreId(std::string_view id) {
  return !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

struct Store::Impl {
  sqlite3* db = nullptr;
  std::array<sqlite3_stmt*, kStatementCount> stmts{};
  bool in_transaction = false;
  bool read_only = false;
  int64_t schema_version = 0;  // the schema version found at Open (after any migration)
  int64_t submission_floor = 0, workload_floor = 0, run_floor = 0;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    for (sqlite3_stmt* stmt : stmts) sqlite3_finalize(stmt);
    sqlite3_close(db);
  }

  Status Error(std::string_view op, int rc) const {
    return Status(CodeFor(rc), std::string(op) + ": " + sqlite3_errmsg(db));
  }

  // The cached statement `s`, prepared at its first use (a read-only store prepares only what
  // it reads; a read-write one prepares all at Open).
  Query Use(Statement s) {
    if (!stmts[s]) {
      const int rc =
          sqlite3_prepare_v3(db, kSql[s], -1, SQLITE_PREPARE_PERSISTENT, &stmts[s], nullptr);
      if (rc != SQLITE_OK) {
        sqlite3_finalize(stmts[s]);
        stmts[s] = nullptr;
        return Query(nullptr, rc);
      }
    }
    return Query(stmts[s]);
  }

  // Steps a statement that yields no rows.
  Status Done(Query& q, std::string_view op) {
    int rc = q.Step();
    return rc == SQLITE_DONE ? OkStatus() : Error(op, rc);
  }

  // After an UPDATE by id: NotFound when no row had the id.
  Status Changed(const std::string& op, std::string_view what) const {
    if (sqlite3_changes(db) > 0) return OkStatus();
    return NotFound(op + ": no such " + std::string(what));
  }

  int64_t LastId() const { return static_cast<int64_t>(sqlite3_last_insert_rowid(db)); }

  // Steps an INSERT or UPDATE of a workload: kAlreadyExists when its name is taken.
  Status WriteWorkload(Query& q, const WorkloadRow& row, std::string_view op) {
    int rc = q.Step();
    if (rc == SQLITE_CONSTRAINT_UNIQUE) {
      return Status(StatusCode::kAlreadyExists,
                    "workload name '" + row.name + "' is already taken");
    }
    return rc == SQLITE_DONE ? OkStatus() : Error(op, rc);
  }

  StatusOr<std::vector<RunRow>> ReadRuns(Query& q, std::string_view op) {
    std::vector<RunRow> runs;
    int rc;
    while ((rc = q.Step()) == SQLITE_ROW) {
      StatusOr<RunRow> run = ReadRun(q);
      if (!run.ok()) return Internal(std::string(op) + ": " + run.status().message());
      runs.push_back(std::move(*run));
    }
    if (rc != SQLITE_DONE) return Error(op, rc);
    return runs;
  }

  Status Exec(const char* sql, std::string_view op) {
    int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    return rc == SQLITE_OK ? OkStatus() : Error(op, rc);
  }

  // Runs a one-off statement that yields one row; returns its first column as text.
  StatusOr<std::string> Scalar(const char* sql, std::string_view op) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
    if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
    std::string value;
    if (rc == SQLITE_ROW) {
      Query q(stmt);
      q.Get(value);
    }
    Status status = rc == SQLITE_ROW ? OkStatus() : Error(op, rc);
    sqlite3_finalize(stmt);
    if (!status.ok()) return status;
    return value;
  }

  // Marks a transaction open; rolls it back on scope exit unless Commit succeeded, so an
  // error or an exception from the body leaves nothing behind.
  class TransactionScope {
   public:
    explicit TransactionScope(Impl& impl) : impl_(impl) { impl_.in_transaction = true; }
    ~TransactionScope() {
      if (!sqlite3_get_autocommit(impl_.db)) {
        // The caller gets the error that caused the rollback; a failed rollback adds nothing.
        (void)impl_.Exec("ROLLBACK", "rollback");
      }
      impl_.in_transaction = false;
    }
    TransactionScope(const TransactionScope&) = delete;
    TransactionScope& operator=(const TransactionScope&) = delete;

    Status Commit() { return impl_.Exec("COMMIT", "commit transaction"); }

   private:
    Impl& impl_;
  };

  Status RunTransaction(const std::function<Status()>& body);
  Status Open(const std::string& path);
  Status OpenReadOnly(const std::string& path);
  Status Configure();
  StatusOr<int64_t> ReadVersion();
  Status CreateSchema();
  Status PrepareStatements();
};

Status Store::Impl::RunTransaction(const std::function<Status()>& body) {
  if (in_transaction) {
    return FailedPrecondition("store: Transaction called inside a transaction (no nesting)");
  }
  // A read-only store's transaction is a consistent snapshot for reading: it takes no lock
  // that would stop a daemon writing.
  AIRTIME_RETURN_IF_ERROR(
      Exec(read_only ? "BEGIN DEFERRED" : "BEGIN IMMEDIATE", "begin transaction"));
  TransactionScope scope(*this);
  AIRTIME_RETURN_IF_ERROR(body());
  return scope.Commit();
}

Status Store::Impl::Open(const std::string& path) {
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) return Error("open", rc);
  sqlite3_extended_result_codes(db, 1);
  AIRTIME_RETURN_IF_ERROR(Exec("PRAGMA busy_timeout = 5000", "set busy_timeout"));
  StatusOr<int64_t> version = ReadVersion();
  if (!version.ok()) return version.status();
  if (*version > kSchemaVersion) {
    return FailedPrecondition("written by a newer airtime (schema version " +
                              std::to_string(*version) + ", this airtime knows up to " +
                              std::to_string(kSchemaVersion) +
                              "); use that airtime or another state directory");
  }
  AIRTIME_RETURN_IF_ERROR(Configure());
  AIRTIME_RETURN_IF_ERROR(CreateSchema());
  schema_version = kSchemaVersion;
  return PrepareStatements();
}

// Reads without writing anything to the database: no WAL switch, no migration, no store id.
// SQLite's WAL lets this reader see committed transactions while a daemon writes.
Status Store::Impl::OpenReadOnly(const std::string& path) {
  read_only = true;
  // With no write-ahead log beside it, no daemon has the database open (a daemon keeps its
  // -wal file while it runs) and every commit is in the file: it is read as immutable, so
  // that SQLite creates no -wal or -shm file of its own in the daemon's folder. Otherwise
  // a plain read-only connection shares the daemon's log and sees its commits.
  struct stat wal {};
  const bool immutable = stat((path + "-wal").c_str(), &wal) != 0;
  const std::string name = immutable ? "file:" + UriPath(path) + "?immutable=1" : path;
  int rc = sqlite3_open_v2(name.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) return Error("open read-only", rc);
  sqlite3_extended_result_codes(db, 1);
  AIRTIME_RETURN_IF_ERROR(Exec("PRAGMA busy_timeout = 5000", "set busy_timeout"));
  // The first read finds a file that is not a database (SQLITE_NOTADB).
  StatusOr<int64_t> found = ReadVersion();
  if (!found.ok()) return found.status();
  schema_version = *found;
  if (schema_version > kSchemaVersion) {
    return FailedPrecondition("written by a newer airtime (schema version " +
                              std::to_string(schema_version) + ", this airtime reads up to " +
                              std::to_string(kSchemaVersion) + "); use that airtime to read it");
  }
  if (schema_version == 0) return FailedPrecondition("it holds no airtime store (no schema)");
  if (schema_version < kOldestReadableVersion) {
    return FailedPrecondition("schema version " + std::to_string(schema_version) +
                              " is older than this reader knows (" +
                              std::to_string(kOldestReadableVersion) +
                              "); start this airtime's server on it once to upgrade it");
  }
  return OkStatus();
}

StatusOr<int64_t> Store::Impl::ReadVersion() {
  StatusOr<std::string> text = Scalar("PRAGMA user_version", "read user_version");
  if (!text.ok()) return text.status();
  std::optional<int64_t> version = ParseInt(*text);
  if (!version) return Internal("read user_version: not an integer: " + *text);
  return *version;
}

Status Store::Impl::Configure() {
  StatusOr<std::string> mode = Scalar("PRAGMA journal_mode = WAL", "set journal_mode");
  if (!mode.ok()) return mode.status();
  if (ToLower(*mode) != "wal") {
    return FailedPrecondition("cannot use WAL mode (journal_mode stays '" + *mode + "')");
  }
  AIRTIME_RETURN_IF_ERROR(Exec("PRAGMA synchronous = NORMAL", "set synchronous"));
  return Exec("PRAGMA foreign_keys = ON", "set foreign_keys");
}

// Creates the schema in a fresh database; the version is read again under the write lock
// in case another process created it meanwhile.
Status Store::Impl::CreateSchema() {
  return RunTransaction([&]() -> Status {
    StatusOr<int64_t> version = ReadVersion();
    if (!version.ok()) return version.status();
    if (*version == kSchemaVersion) return OkStatus();
    if (*version == 0) {
      AIRTIME_RETURN_IF_ERROR(Exec(kSchema, "create schema"));
      const std::string sql = std::string("INSERT INTO meta(key, value) VALUES('") + kStoreIdKey +
                              "', '" + NewStoreId() + "')";
      return Exec(sql.c_str(), "create store id");
    }
    if (*version == 1)
      AIRTIME_RETURN_IF_ERROR(Exec(kMigrateFrom1, "migrate the schema from version 1"));
    if (*version <= 2)
      AIRTIME_RETURN_IF_ERROR(Exec(kMigrateFrom2, "migrate the schema from version 2"));
    if (*version <= 3)
      AIRTIME_RETURN_IF_ERROR(Exec(kMigrateFrom3, "migrate the schema from version 3"));
    if (*version <= 4)
      AIRTIME_RETURN_IF_ERROR(Exec(kMigrateFrom4, "migrate the schema from version 4"));
    if (*version <= 5)
      AIRTIME_RETURN_IF_ERROR(Exec(kMigrateFrom5, "migrate the schema from version 5"));
    if (*version <= 6) return Exec(kMigrateFrom6, "migrate the schema from version 6");
    return FailedPrecondition("unexpected schema version " + std::to_string(*version));
  });
}

Status Store::Impl::PrepareStatements() {
  for (int i = 0; i < kStatementCount; ++i) {
    int rc = sqlite3_prepare_v3(db, kSql[i], -1, SQLITE_PREPARE_PERSISTENT, &stmts[i], nullptr);
    if (rc != SQLITE_OK) return Error(std::string("prepare '") + kSql[i] + "'", rc);
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& dir) {
  AIRTIME_RETURN_IF_ERROR(MakeDirectory(dir));
  std::unique_ptr<Store> store(new Store());
  store->path_ = (std::filesystem::path(dir) / kStoreFileName).string();
  store->impl_ = std::make_unique<Impl>();
  struct stat st {};
  store->created_ = stat(store->path_.c_str(), &st) != 0 || st.st_size == 0;
  Status status = store->impl_->Open(store->path_);
  if (status.ok()) status = store->LoadIdFloors();
  if (!status.ok()) {
    return Status(status.code(), "cannot open store " + store->path_ + ": " + status.message());
  }
  return store;
}

StatusOr<std::unique_ptr<Store>> Store::OpenReadOnly(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kStoreFileName).string();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return NotFound("cannot read store " + path + ": '" + dir + "' is not a directory");
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return NotFound("cannot read store " + path + ": no such file (is '" + dir +
                    "' the --data directory of an airtime server?)");
  if (!S_ISREG(st.st_mode))
    return FailedPrecondition("cannot read store " + path + ": not a regular file");
  if (st.st_size == 0)
    return FailedPrecondition("cannot read store " + path + ": the file is empty");
  std::unique_ptr<Store> store(new Store());
  store->path_ = path;
  store->impl_ = std::make_unique<Impl>();
  Status status = store->impl_->OpenReadOnly(path);
  if (!status.ok())
    return Status(status.code(), "cannot read store " + path + ": " + status.message());
  return store;
}

Store::~Store() = default;

bool Store::read_only() const { return impl_->read_only; }
int64_t Store::schema_version() const { return impl_->schema_version; }

Status Store::Transaction(const std::function<Status()>& body) {
  return impl_->RunTransaction(body);
}

StatusOr<int64_t> Store::AddSubmission(const SubmissionRow& row) {
  Query q = impl_->Use(kAddSubmission);
  q.Bind(impl_->submission_floor);
  q.Bind(row.tenant);
  q.Bind(row.body);
  q.Bind(row.origin);
  q.Bind(row.at);
  AIRTIME_RETURN_IF_ERROR(impl_->Done(q, "add submission"));
  return impl_->LastId();
}

StatusOr<int64_t> Store::AddWorkload(const WorkloadRow& row) {
  Query q = impl_->Use(kAddWorkload);
  q.Bind(impl_->workload_floor);
  BindWorkload(q, row);
  AIRTIME_RETURN_IF_ERROR(impl_->WriteWorkload(q, row, "add workload '" + row.name + "'"));
  return impl_->LastId();
}

Status Store::UpdateWorkload(const WorkloadRow& row) {
  Query q = impl_->Use(kUpdateWorkload);
  BindWorkload(q, row);
  q.Bind(row.id);
  std::string op = "update workload " + std::to_string(row.id);
  AIRTIME_RETURN_IF_ERROR(impl_->WriteWorkload(q, row, op));
  return impl_->Changed(op, "workload");
}

StatusOr<int64_t> Store::AddRun(const RunRow& row) {
  Query q = impl_->Use(kAddRun);
  q.Bind(impl_->run_floor);
  BindRun(q, row);
  AIRTIME_RETURN_IF_ERROR(impl_->Done(q, "add run of workload " + std::to_string(row.workload_id)));
  return impl_->LastId();
}

Status Store::UpdateRun(const RunRow& row) {
  Query q = impl_->Use(kUpdateRun);
  BindRun(q, row);
  q.Bind(row.id);
  std::string op = "update run " + std::to_string(row.id);
  AIRTIME_RETURN_IF_ERROR(impl_->Done(q, op));
  return impl_->Changed(op, "run");
}

StatusOr<SubmissionRow> Store::GetSubmission(int64_t id) {
  Query q = impl_->Use(kGetSubmission);
  q.Bind(id);
  std::string op = "get submission " + std::to_string(id);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return NotFound(op + ": no such submission");
  if (rc != SQLITE_ROW) return impl_->Error(op, rc);
  SubmissionRow row;
  q.Get(row.id);
  q.Get(row.tenant);
  q.Get(row.body);
  q.Get(row.origin);
  q.Get(row.at);
  return row;
}

StatusOr<std::vector<WorkloadRow>> Store::LoadWorkloads(bool active_only) {
  Query q = impl_->Use(active_only ? kLoadActiveWorkloads : kLoadWorkloads);
  std::vector<WorkloadRow> rows;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) rows.push_back(ReadWorkload(q));
  if (rc != SQLITE_DONE) return impl_->Error("load workloads", rc);
  return rows;
}

namespace {

// The rows a workload query gives, read to its end.
StatusOr<std::vector<WorkloadRow>> ReadWorkloads(Query& q,
                                                 const std::function<Status(int)>& error) {
  std::vector<WorkloadRow> rows;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) rows.push_back(ReadWorkload(q));
  if (rc != SQLITE_DONE) return error(rc);
  return rows;
}

}  // namespace

StatusOr<std::optional<WorkloadRow>> Store::GetWorkload(int64_t id) {
  Query q = impl_->Use(kGetWorkload);
  q.Bind(id);
  const int rc = q.Step();
  if (rc == SQLITE_DONE) return std::optional<WorkloadRow>();
  if (rc != SQLITE_ROW) return impl_->Error("get workload " + std::to_string(id), rc);
  return std::optional<WorkloadRow>(ReadWorkload(q));
}

StatusOr<std::optional<WorkloadRow>> Store::GetWorkloadNamed(const std::string& name) {
  Query q = impl_->Use(kWorkloadNamed);
  q.Bind(name);
  const int rc = q.Step();
  if (rc == SQLITE_DONE) return std::optional<WorkloadRow>();
  if (rc != SQLITE_ROW) return impl_->Error("get workload '" + name + "'", rc);
  return std::optional<WorkloadRow>(ReadWorkload(q));
}

StatusOr<std::vector<WorkloadRow>> Store::WorkloadsNamedFrom(const std::string& prefix) {
  if (prefix.empty()) return LoadWorkloads(false);
  // Names from `prefix` up to (not including) the prefix with its last byte raised: the
  // name index answers it.
  std::string end = prefix;
  while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xff) end.pop_back();
  if (end.empty()) return LoadWorkloads(false);
  end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
  Query q = impl_->Use(kWorkloadsInNameRange);
  q.Bind(prefix);
  q.Bind(end);
  return ReadWorkloads(q, [&](int rc) { return impl_->Error("workloads named " + prefix, rc); });
}

StatusOr<std::vector<WorkloadRow>> Store::LoadEndedWorkloads(int64_t limit) {
  Query q = impl_->Use(kLoadEndedWorkloads);
  q.Bind(limit);
  auto rows = ReadWorkloads(q, [&](int rc) { return impl_->Error("load ended workloads", rc); });
  if (rows.ok())
    std::sort(rows->begin(), rows->end(),
              [](const WorkloadRow& a, const WorkloadRow& b) { return a.id < b.id; });
  return rows;
}

StatusOr<std::vector<WorkloadRow>> Store::LoadWorkloadsOfKind(const std::string& kind) {
  Query q = impl_->Use(kLoadWorkloadsOfKind);
  q.Bind(kind);
  return ReadWorkloads(q, [&](int rc) { return impl_->Error("load " + kind + " workloads", rc); });
}

StatusOr<WorkloadPage> Store::ListWorkloads(const WorkloadQuery& query) {
  WorkloadPage page;
  {
    Query q = impl_->Use(kCountMatchingWorkloads);
    q.Bind(query.tenant);
    q.Bind(query.kind);
    q.Bind(query.state);
    const int rc = q.Step();
    if (rc != SQLITE_ROW) return impl_->Error("count workloads", rc);
    q.Get(page.total);
  }
  Query q = impl_->Use(kListWorkloads);
  q.Bind(query.tenant);
  q.Bind(query.kind);
  q.Bind(query.state);
  q.Bind(query.limit > 0 ? query.limit : int64_t{-1});
  q.Bind(std::max<int64_t>(0, query.offset));
  auto rows = ReadWorkloads(q, [&](int rc) { return impl_->Error("list workloads", rc); });
  if (!rows.ok()) return rows.status();
  page.rows = std::move(*rows);
  return page;
}

StatusOr<std::map<std::pair<std::string, std::string>, int64_t>> Store::CountWorkloads() {
  Query q = impl_->Use(kCountWorkloads);
  std::map<std::pair<std::string, std::string>, int64_t> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    std::string state, kind;
    int64_t n = 0;
    q.Get(state);
    q.Get(kind);
    q.Get(n);
    out[{state, kind}] = n;
  }
  if (rc != SQLITE_DONE) return impl_->Error("count workloads", rc);
  return out;
}

StatusOr<std::vector<RunRow>> Store::LoadRuns(bool active_only) {
  Query q = impl_->Use(active_only ? kLoadActiveRuns : kLoadRuns);
  return impl_->ReadRuns(q, "load runs");
}

StatusOr<std::vector<RunRow>> Store::RunsOf(int64_t workload_id) {
  Query q = impl_->Use(kRunsOf);
  q.Bind(workload_id);
  return impl_->ReadRuns(q, "runs of workload " + std::to_string(workload_id));
}

Status Store::AddDemand(int64_t workload_id, int64_t at, double rps) {
  Query q = impl_->Use(kAddDemand);
  q.Bind(workload_id);
  q.Bind(at);
  q.Bind(rps);
  return impl_->Done(q, "add demand of workload " + std::to_string(workload_id));
}

Status Store::RaiseDemand(int64_t workload_id, int64_t at, double rps) {
  Query q = impl_->Use(kRaiseDemand);
  q.Bind(workload_id);
  q.Bind(at);
  q.Bind(rps);
  return impl_->Done(q, "raise a demand step of workload " + std::to_string(workload_id));
}

StatusOr<std::vector<std::pair<int64_t, double>>> Store::DemandOf(int64_t workload_id,
                                                                  int64_t since) {
  Query q = impl_->Use(kDemandOf);
  q.Bind(workload_id);
  q.Bind(since);
  std::vector<std::pair<int64_t, double>> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    std::pair<int64_t, double> p;
    q.Get(p.first);
    q.Get(p.second);
    out.push_back(p);
  }
  if (rc != SQLITE_DONE)
    return impl_->Error("demand of workload " + std::to_string(workload_id), rc);
  return out;
}

Status Store::PruneDemand(int64_t before) {
  {
    Query q = impl_->Use(kPruneDemand);
    q.Bind(before);
    AIRTIME_RETURN_IF_ERROR(impl_->Done(q, "prune demand"));
  }
  Query q = impl_->Use(kPruneClassDemandHistory);
  q.Bind(before);
  return impl_->Done(q, "prune class demand history");
}

Status Store::SetClassDemand(int64_t workload_id, const std::string& request_class, double rps,
                             int64_t at) {
  Query q = impl_->Use(kSetClassDemand);
  q.Bind(workload_id);
  q.Bind(request_class);
  q.Bind(rps);
  q.Bind(at);
  return impl_->Done(q, "set class demand of workload " + std::to_string(workload_id));
}

Status Store::AddClassDemandStep(int64_t workload_id, const std::string& request_class, int64_t at,
                                 double rps) {
  Query q = impl_->Use(kAddClassDemandStep);
  q.Bind(workload_id);
  q.Bind(request_class);
  q.Bind(at);
  q.Bind(rps);
  return impl_->Done(q,
                     "add to the class demand history of workload " + std::to_string(workload_id));
}

Status Store::RaiseClassDemandStep(int64_t workload_id, const std::string& request_class,
                                   int64_t at, double rps) {
  Query q = impl_->Use(kRaiseClassDemandStep);
  q.Bind(workload_id);
  q.Bind(request_class);
  q.Bind(at);
  q.Bind(rps);
  return impl_->Done(
      q, "raise a step of the class demand history of workload " + std::to_string(workload_id));
}

namespace {

// Reads the rows of a class-demand query (its columns: class, rps, at) into `out`; returns
// SQLITE_DONE, or the step's error code.
int ReadClassDemand(Query& q, std::vector<ClassDemandRow>& out) {
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    ClassDemandRow row;
    q.Get(row.request_class);
    q.Get(row.rps);
    q.Get(row.at);
    out.push_back(std::move(row));
  }
  return rc;
}

}  // namespace

StatusOr<std::vector<ClassDemandRow>> Store::ClassDemandOf(int64_t workload_id) {
  if (impl_->schema_version < 6) return std::vector<ClassDemandRow>{};  // a read-only older store
  Query q = impl_->Use(kClassDemandOf);
  q.Bind(workload_id);
  std::vector<ClassDemandRow> out;
  if (int rc = ReadClassDemand(q, out); rc != SQLITE_DONE)
    return impl_->Error("class demand of workload " + std::to_string(workload_id), rc);
  return out;
}

StatusOr<std::vector<ClassDemandRow>> Store::ClassDemandHistoryOf(int64_t workload_id,
                                                                  int64_t since) {
  if (impl_->schema_version < 7) return std::vector<ClassDemandRow>{};  // a read-only older store
  Query q = impl_->Use(kClassDemandHistoryOf);
  q.Bind(workload_id);
  q.Bind(since);
  std::vector<ClassDemandRow> out;
  if (int rc = ReadClassDemand(q, out); rc != SQLITE_DONE)
    return impl_->Error("class demand history of workload " + std::to_string(workload_id), rc);
  return out;
}

Status Store::AddDaemonStart(const DaemonStartRow& row) {
  Query q = impl_->Use(kAddDaemonStart);
  q.Bind(row.at);
  q.Bind(row.policy);
  q.Bind(row.cluster);
  q.Bind(nlohmann::json(row.gpus).dump());
  return impl_->Done(q, "add daemon start");
}

StatusOr<std::vector<DaemonStartRow>> Store::DaemonStarts() {
  if (impl_->schema_version < 5) return std::vector<DaemonStartRow>{};  // a read-only older store
  Query q = impl_->Use(kDaemonStarts);
  std::vector<DaemonStartRow> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    DaemonStartRow row;
    std::string gpus;
    q.Get(row.at);
    q.Get(row.policy);
    q.Get(row.cluster);
    q.Get(gpus);
    std::optional<std::vector<std::string>> parsed = ParseGpus(gpus);
    if (!parsed)
      return Internal("daemon start at " + std::to_string(row.at) +
                      ": gpus is not a JSON array of strings");
    row.gpus = std::move(*parsed);
    out.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) return impl_->Error("load daemon starts", rc);
  return out;
}

Status Store::AddNodeEvent(const NodeEventRow& row) {
  Query q = impl_->Use(kAddNodeEvent);
  q.Bind(row.at);
  q.Bind(row.node);
  q.Bind(row.state);
  return impl_->Done(q, "add node event");
}

StatusOr<std::vector<NodeEventRow>> Store::NodeEvents() {
  if (impl_->schema_version < 5) return std::vector<NodeEventRow>{};
  Query q = impl_->Use(kNodeEvents);
  std::vector<NodeEventRow> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    NodeEventRow row;
    q.Get(row.at);
    q.Get(row.node);
    q.Get(row.state);
    out.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) return impl_->Error("load node events", rc);
  return out;
}

bool Store::NameTaken(const std::string& name) {
  Query q = impl_->Use(kNameTaken);
  q.Bind(name);
  return q.Step() == SQLITE_ROW;
}

Status Store::SetMeta(const std::string& key, const std::string& value) {
  Query q = impl_->Use(kSetMeta);
  q.Bind(key);
  q.Bind(value);
  return impl_->Done(q, "set meta '" + key + "'");
}

std::optional<std::string> Store::GetMeta(const std::string& key) {
  Query q = impl_->Use(kGetMeta);
  q.Bind(key);
  if (q.Step() != SQLITE_ROW) return std::nullopt;
  std::string value;
  q.Get(value);
  return value;
}

// The id floors kept in meta, and a store id for a database made before store ids existed.
Status Store::LoadIdFloors() {
  auto floor = [&](const char* key) -> StatusOr<int64_t> {
    std::optional<std::string> text = GetMeta(key);
    if (!text) return int64_t{0};
    std::optional<int64_t> value = ParseInt(*text);
    if (!value || *value < 0)
      return Internal(std::string("meta '") + key + "' is not a count: " + *text);
    return *value;
  };
  StatusOr<int64_t> s = floor(kSubmissionFloorKey), w = floor(kWorkloadFloorKey),
                    r = floor(kRunFloorKey);
  for (const StatusOr<int64_t>* f : {&s, &w, &r})
    if (!f->ok()) return f->status();
  impl_->submission_floor = *s;
  impl_->workload_floor = *w;
  impl_->run_floor = *r;
  // A store made before store ids existed gets one; so does a store whose id was damaged
  // (the marks then name another id, and the start-up check says so).
  if (!IsStoreId(GetMeta(kStoreIdKey).value_or(""))) return SetMeta(kStoreIdKey, NewStoreId());
  return OkStatus();
}

StatusOr<StoreExtent> Store::Extent() {
  StoreExtent e;
  e.store_id = GetMeta(kStoreIdKey).value_or("");
  const std::string sequence = GetMeta(kSequenceKey).value_or("0");
  std::optional<int64_t> seq = ParseInt(sequence);
  if (!seq || *seq < 0) return Internal("meta 'sequence' is not a count: " + sequence);
  e.sequence = *seq;
  struct Max {
    const char* sql;
    int64_t* out;
  };
  for (const Max& m : {Max{"SELECT IFNULL(MAX(id), 0) FROM submissions", &e.max_submission},
                       Max{"SELECT IFNULL(MAX(id), 0) FROM workloads", &e.max_workload},
                       Max{"SELECT IFNULL(MAX(id), 0) FROM runs", &e.max_run}}) {
    StatusOr<std::string> text = impl_->Scalar(m.sql, "read the highest id");
    if (!text.ok()) return text.status();
    std::optional<int64_t> value = ParseInt(*text);
    if (!value) return Internal(std::string(m.sql) + ": not an integer: " + *text);
    *m.out = *value;
  }
  Query q = impl_->Use(kRunIds);
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    int64_t id = 0;
    q.Get(id);
    e.run_ids.push_back(id);
  }
  if (rc != SQLITE_DONE) return impl_->Error("list run ids", rc);
  e.submission_floor = impl_->submission_floor;
  e.workload_floor = impl_->workload_floor;
  e.run_floor = impl_->run_floor;
  return e;
}

StatusOr<int64_t> Store::BumpSequence() {
  std::optional<int64_t> seq = ParseInt(GetMeta(kSequenceKey).value_or("0"));
  const int64_t next = seq.value_or(0) + 1;
  AIRTIME_RETURN_IF_ERROR(SetMeta(kSequenceKey, std::to_string(next)));
  return next;
}

Status Store::RaiseIdFloors(int64_t submission, int64_t workload, int64_t run) {
  const int64_t s = std::max(submission, impl_->submission_floor);
  const int64_t w = std::max(workload, impl_->workload_floor);
  const int64_t r = std::max(run, impl_->run_floor);
  AIRTIME_RETURN_IF_ERROR(Transaction([&]() -> Status {
    AIRTIME_RETURN_IF_ERROR(SetMeta(kSubmissionFloorKey, std::to_string(s)));
    AIRTIME_RETURN_IF_ERROR(SetMeta(kWorkloadFloorKey, std::to_string(w)));
    return SetMeta(kRunFloorKey, std::to_string(r));
  }));
  impl_->submission_floor = s;
  impl_->workload_floor = w;
  impl_->run_floor = r;
  return OkStatus();
}

}  // namespace airtime
