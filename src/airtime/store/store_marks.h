// Store marks: the store's high-water marks kept outside its database, and the start-up
// check that compares the store with them and with the run directories.
//
// The store (store.h) is SQLite in WAL mode: its latest commits live in airtime.db-wal
// until a checkpoint copies them into airtime.db. A lost WAL silently takes those commits
// with it; an emptied or deleted airtime.db takes everything. Both leave the run
// directories (DATA/runs/N, one per run the store recorded) in place. So the daemon keeps:
//   DATA/store-marks  written (temporary file, fsync, rename, fsync of DATA) after each
//                     commit that accepts submissions or cancels a workload, and after a
//                     commit that records a run whose id is beyond the run ids reserved:
//                     the store's id, its sequence (bumped in those commits), its highest
//                     submission and workload ids, the run that reserved ids last, and the
//                     highest run id reserved.
// and at start compares the store with the marks and with DATA/runs. A store behind its
// marks, of another id, or that does not know a run directory, was damaged: starting on it
// would lose accepted work, run finished work again and reuse run ids (whose old claim files
// make new runs refuse to start).
//
// Run ids are reserved a block at a time (kRunIdBlock), as a database sequence caches its
// values, so that a start does not wait for two fsyncs: only the run that goes beyond the
// block writes the marks. A run row lost inside a block is found by its run directory (made
// before its process or job can exist) and, under Slurm, by its job's name (a job of this
// daemon's that the store has no run for; the daemon's start checks); a restart hands out
// ids above the whole block, so none of them names two runs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/store/store.h"

namespace airtime {

inline constexpr char kStoreMarksFile[] = "store-marks";
// Run ids reserved by one write of the marks.
inline constexpr int64_t kRunIdBlock = 64;

struct StoreMarks {
  std::string store_id;
  int64_t sequence = 0;
  int64_t submission = 0, workload = 0;  // highest ids
  int64_t run = 0;           // the run whose commit reserved ids last (the highest, at first)
  int64_t run_reserved = 0;  // the highest run id reserved: ids up to it may be in use
};

// "airtime-store-marks 2" then one "KEY VALUE" line per field. Version 1 (no run_reserved:
// every run wrote the marks) is read too, with run_reserved = run.
std::string FormatStoreMarks(const StoreMarks& marks);
// InvalidArgument naming the line when the text is not a complete marks file.
StatusOr<StoreMarks> ParseStoreMarks(std::string_view text);
// nullopt when DATA/store-marks does not exist; an error names the path.
StatusOr<std::optional<StoreMarks>> ReadStoreMarks(const std::string& data_dir);
// Replaces DATA/store-marks atomically and durably (DATA/store-marks.tmp, fsync, rename,
// fsync of DATA).
Status WriteStoreMarks(const std::string& data_dir, const StoreMarks& marks);
// The marks that describe `extent` (ids raised to the store's floors; no run ids reserved
// beyond its highest).
StoreMarks MarksOf(const StoreExtent& extent);

// The run ids of DATA/runs: its subdirectories named by a number, ascending. Other names
// are ignored; no DATA/runs gives none.
StatusOr<std::vector<int64_t>> ScanRunDirs(const std::string& data_dir);

// What the start-up check found. `problems` empty: the store is consistent.
struct StoreDamage {
  std::vector<std::string> problems;      // one sentence each, with numbers and paths
  std::vector<int64_t> unknown_run_dirs;  // run directories the store does not know
  int64_t highest_run_dir = 0;            // 0: none
  // The ids to stay above if the loss is accepted: what the marks, the store and the run
  // directories show.
  int64_t submission_high = 0, workload_high = 0, run_high = 0;
};

// Compares the store (`extent`; `created`: its file was missing or empty at open) with its
// marks (`marks`: as ReadStoreMarks returned) and the run directories (`run_dirs`).
StoreDamage FindStoreDamage(const std::string& data_dir, const StoreExtent& extent, bool created,
                            const StatusOr<std::optional<StoreMarks>>& marks,
                            const std::vector<int64_t>& run_dirs);

// The refusal: what is inconsistent and how to recover (restore the database with its WAL,
// or start once with --accept-store-loss).
std::string StoreDamageMessage(const std::string& data_dir, const StoreDamage& damage);

// The whole check without starting anything: opens DATA's store, reads its marks and run
// directories, and compares them. An error only when the store cannot be opened or read.
// A missing or empty airtime.db with marks or run directories beside it is damage found
// before the store is opened: `store` is then null and the file is left as it was.
struct StoreCheck {
  std::unique_ptr<Store> store;  // null: see above
  StoreDamage damage;
  std::vector<int64_t> run_dirs;
};
StatusOr<StoreCheck> OpenAndCheckStore(const std::string& data_dir);

}  // namespace airtime
