// Tests of the store marks and the start-up check: the marks file, the comparison with the
// store and the run directories, the two damages of issue 19 (a lost WAL, an emptied
// airtime.db beside runs/) on real SQLite files, and the id floors of an accepted loss.
#include "airtime/store/store_marks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace airtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class StoreMarksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airtime_marks_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::unique_ptr<Store> Open() {
    auto store = Store::Open(dir_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // One submission with one workload and `runs` runs, each with its run directory; the
  // sequence bumped once per commit as the daemon does; the marks written after.
  void Populate(Store& store, int runs) {
    ASSERT_TRUE(store
                    .Transaction([&]() -> Status {
                      auto sid = store.AddSubmission({0, "t", "body", "request", 1});
                      if (!sid.ok()) return sid.status();
                      WorkloadRow w;
                      w.submission_id = *sid;
                      w.name = "w" + std::to_string(*sid);
                      w.tenant = "t";
                      w.kind = "batch";
                      auto wid = store.AddWorkload(w);
                      if (!wid.ok()) return wid.status();
                      workload_ = *wid;
                      return store.BumpSequence().status();
                    })
                    .ok());
    for (int i = 0; i < runs; ++i) AddRun(store);
  }

  int64_t AddRun(Store& store, bool write_marks = true) {
    int64_t id = 0;
    EXPECT_TRUE(store
                    .Transaction([&]() -> Status {
                      RunRow r;
                      r.workload_id = workload_;
                      auto rid = store.AddRun(r);
                      if (!rid.ok()) return rid.status();
                      id = *rid;
                      return store.BumpSequence().status();
                    })
                    .ok());
    fs::create_directories(dir_ + "/runs/" + std::to_string(id));
    if (!write_marks) return id;
    auto extent = store.Extent();
    EXPECT_TRUE(extent.ok());
    EXPECT_TRUE(WriteStoreMarks(dir_, MarksOf(*extent)).ok());
    return id;
  }

  StoreCheck Check() {
    auto check = OpenAndCheckStore(dir_);
    EXPECT_TRUE(check.ok()) << check.status().ToString();
    return check.ok() ? std::move(*check) : StoreCheck{};
  }

  std::string dir_;
  int64_t workload_ = 0;
};

TEST(StoreMarksFormatTest, RoundTrip) {
  StoreMarks m{"0123abcd", 7, 3, 4, 9, 72};
  auto parsed = ParseStoreMarks(FormatStoreMarks(m));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->store_id, "0123abcd");
  EXPECT_EQ(parsed->sequence, 7);
  EXPECT_EQ(parsed->submission, 3);
  EXPECT_EQ(parsed->workload, 4);
  EXPECT_EQ(parsed->run, 9);
  EXPECT_EQ(parsed->run_reserved, 72);
}

// Marks written before ids were reserved in blocks reserve nothing beyond their run; a
// version 2 file must say what it reserved, and not less than its run.
TEST(StoreMarksFormatTest, VersionOneMarksReserveNothingBeyondTheirRun) {
  const std::string v1 =
      "airtime-store-marks 1\nstore_id ab\nsequence 2\nsubmission 1\n"
      "workload 1\nrun 5\n";
  auto old = ParseStoreMarks(v1);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->run_reserved, 5);
  EXPECT_THAT(ParseStoreMarks(v1 + "run_reserved 9\n").status().message(),
              HasSubstr("line 7: unknown key 'run_reserved'"));
  const std::string v2 = "airtime-store-marks 2" + v1.substr(v1.find('\n'));
  EXPECT_THAT(ParseStoreMarks(v2).status().message(), HasSubstr("'run_reserved' is missing"));
  EXPECT_THAT(ParseStoreMarks(v2 + "run_reserved 4\n").status().message(),
              HasSubstr("run_reserved 4 is below run 5"));
  EXPECT_EQ(ParseStoreMarks(v2 + "run_reserved 68\n")->run_reserved, 68);
}

TEST(StoreMarksFormatTest, DamagedFilesAreRefusedWithTheLine) {
  EXPECT_THAT(ParseStoreMarks("").status().message(), HasSubstr("line 1"));
  EXPECT_THAT(
      ParseStoreMarks("airtime-store-marks 1\nstore_id ab\nsequence x\n").status().message(),
      HasSubstr("line 3: sequence: expected a count"));
  EXPECT_THAT(
      ParseStoreMarks("airtime-store-marks 1\nstore_id ab\nsequence 1\n").status().message(),
      HasSubstr("'submission' is missing"));
  EXPECT_THAT(ParseStoreMarks("airtime-store-marks 1\nstore_id zz\n").status().message(),
              HasSubstr("hex"));
  EXPECT_THAT(ParseStoreMarks("airtime-store-marks 1\nrun 1\nrun 2\n").status().message(),
              HasSubstr("given twice"));
  EXPECT_THAT(ParseStoreMarks(std::string(5000, 'a')).status().message(), HasSubstr("larger"));
}

TEST_F(StoreMarksTest, AHealthyStoreHasNoProblems) {
  {
    auto store = Open();
    Populate(*store, 3);
  }
  StoreCheck check = Check();
  EXPECT_THAT(check.damage.problems, IsEmpty());
  EXPECT_EQ(check.run_dirs, (std::vector<int64_t>{1, 2, 3}));
}

TEST_F(StoreMarksTest, AnOldDataDirectoryWithoutMarksIsAccepted) {
  {
    auto store = Open();
    Populate(*store, 2);
  }
  fs::remove(dir_ + "/store-marks");
  EXPECT_THAT(Check().damage.problems, IsEmpty());
}

TEST_F(StoreMarksTest, ALostWalIsFoundWithNumbers) {
  {
    auto store = Open();
    Populate(*store, 2);
  }  // closed: checkpointed into airtime.db
  fs::copy_file(dir_ + "/airtime.db", dir_ + "/backup.db");
  {
    auto store = Open();
    AddRun(*store);  // run 3, sequence 4
    AddRun(*store);  // run 4, sequence 5
  }
  // The last commits are lost (as a deleted airtime.db-wal loses them).
  fs::copy_file(dir_ + "/backup.db", dir_ + "/airtime.db", fs::copy_options::overwrite_existing);
  fs::remove(dir_ + "/airtime.db-wal");
  StoreCheck check = Check();
  const std::string all = StoreDamageMessage(dir_, check.damage);
  EXPECT_THAT(all, HasSubstr("the store's sequence is 3, but " + dir_ + "/store-marks says 5"));
  EXPECT_THAT(all, HasSubstr("highest run id is 2, but " + dir_ + "/store-marks says 4"));
  EXPECT_THAT(all, HasSubstr("runs holds 2 run directories the store does not know: 3, 4"));
  EXPECT_THAT(all, HasSubstr("-wal from a backup"));
  EXPECT_THAT(all, HasSubstr("--accept-store-loss"));
  EXPECT_THAT(all, HasSubstr("ids above 4"));
  EXPECT_EQ(check.damage.unknown_run_dirs, (std::vector<int64_t>{3, 4}));
}

// Runs inside a block of reserved ids write no marks: one whose row a lost WAL took is found
// by its run directory, and the ids to stay above cover the whole block.
TEST_F(StoreMarksTest, ARunLostInsideAReservedBlockIsFoundByItsDirectory) {
  {
    auto store = Open();
    Populate(*store, 1);  // run 1
  }
  auto marks = ReadStoreMarks(dir_);
  ASSERT_TRUE(marks.ok() && marks->has_value());
  StoreMarks reserved = **marks;
  reserved.run_reserved = 64;  // as the daemon's run 1 reserved ids 1 to 64
  ASSERT_TRUE(WriteStoreMarks(dir_, reserved).ok());
  fs::copy_file(dir_ + "/airtime.db", dir_ + "/backup.db");
  {
    auto store = Open();
    AddRun(*store, /*write_marks=*/false);  // run 2, inside the block
  }
  fs::copy_file(dir_ + "/backup.db", dir_ + "/airtime.db", fs::copy_options::overwrite_existing);
  fs::remove(dir_ + "/airtime.db-wal");
  StoreCheck check = Check();
  ASSERT_EQ(check.damage.problems.size(), 1u) << StoreDamageMessage(dir_, check.damage);
  EXPECT_THAT(check.damage.problems[0], HasSubstr("1 run directory the store does not know: 2"));
  EXPECT_EQ(check.damage.run_high, 64);
  // Without the lost run's directory nothing tells, but the block's ids are still kept.
  fs::remove_all(dir_ + "/runs/2");
  check = Check();
  EXPECT_THAT(check.damage.problems, IsEmpty());
  EXPECT_EQ(check.damage.run_high, 64);
}

TEST_F(StoreMarksTest, AnEmptiedDatabaseBesideRunsIsFound) {
  {
    auto store = Open();
    Populate(*store, 3);
  }
  fs::resize_file(dir_ + "/airtime.db", 0);
  fs::remove(dir_ + "/airtime.db-wal");
  StoreCheck check = Check();
  EXPECT_EQ(check.store, nullptr);                     // found before the store was opened
  EXPECT_EQ(fs::file_size(dir_ + "/airtime.db"), 0u);  // and the file left as it was
  const std::string all = StoreDamageMessage(dir_, check.damage);
  EXPECT_THAT(all, HasSubstr("was written for store"));
  EXPECT_THAT(all, HasSubstr("missing or empty"));
  EXPECT_THAT(all, HasSubstr("3 run directories the store does not know: 1, 2, 3"));
}

TEST_F(StoreMarksTest, AMissingDatabaseAndMarksBesideRunsIsFound) {
  {
    auto store = Open();
    Populate(*store, 1);
  }
  for (const char* f : {"/airtime.db", "/airtime.db-wal", "/airtime.db-shm", "/store-marks"})
    fs::remove(dir_ + f);
  StoreCheck check = Check();
  EXPECT_THAT(StoreDamageMessage(dir_, check.damage),
              HasSubstr("airtime.db was missing or empty, but " + dir_ + "/runs holds 1 run"));
}

TEST_F(StoreMarksTest, UnreadableMarksAreAProblem) {
  {
    auto store = Open();
    Populate(*store, 1);
  }
  std::ofstream(dir_ + "/store-marks") << "garbage";
  EXPECT_THAT(StoreDamageMessage(dir_, Check().damage), HasSubstr(dir_ + "/store-marks: line 1"));
}

TEST_F(StoreMarksTest, RaisedFloorsKeepIdsAboveTheLossAndTolerateItsRunDirectories) {
  {
    auto store = Open();
    Populate(*store, 1);
  }
  fs::create_directories(dir_ + "/runs/7");  // a run the store lost
  StoreCheck check = Check();
  ASSERT_EQ(check.damage.unknown_run_dirs, (std::vector<int64_t>{7}));
  EXPECT_EQ(check.damage.run_high, 7);
  ASSERT_TRUE(check.store
                  ->RaiseIdFloors(check.damage.submission_high + 10,
                                  check.damage.workload_high + 20, check.damage.run_high)
                  .ok());
  EXPECT_EQ(AddRun(*check.store), 8);
  auto sid = check.store->AddSubmission({0, "t", "b", "o", 1});
  ASSERT_TRUE(sid.ok());
  EXPECT_EQ(*sid, 12);
  check.store.reset();
  // The floors outlive the Store; runs/7 no longer counts as unknown.
  StoreCheck again = Check();
  EXPECT_THAT(again.damage.problems, IsEmpty());
  auto extent = again.store->Extent();
  ASSERT_TRUE(extent.ok());
  EXPECT_EQ(extent->run_floor, 7);
  EXPECT_EQ(extent->workload_floor, 21);
}

// Found by fuzz/harness/store_recovery.cc: a damaged store id in the database was copied into
// the marks, which then could never be read again, so even an accepted loss stayed refused.
TEST_F(StoreMarksTest, ADamagedStoreIdIsRenewedAndAcceptingTheLossEndsTheRefusals) {
  {
    auto store = Open();
    Populate(*store, 1);
    ASSERT_TRUE(store->SetMeta("store_id", "\xff\xffnot hex").ok());
  }
  StoreCheck check = Check();
  ASSERT_NE(check.store, nullptr);
  auto extent = check.store->Extent();
  ASSERT_TRUE(extent.ok());
  EXPECT_TRUE(IsStoreId(extent->store_id)) << extent->store_id;
  EXPECT_THAT(StoreDamageMessage(dir_, check.damage), HasSubstr("was written for store"));
  // What --accept-store-loss does: floors, then marks from the store.
  ASSERT_TRUE(check.store->RaiseIdFloors(0, 0, 0).ok());
  ASSERT_TRUE(WriteStoreMarks(dir_, MarksOf(*check.store->Extent())).ok());
  check.store.reset();
  EXPECT_THAT(Check().damage.problems, IsEmpty());
}

TEST_F(StoreMarksTest, ScanRunDirsTakesOnlyNumberedDirectories) {
  for (const char* d : {"runs/3", "runs/10", "runs/x", "runs/007", "runs/2"})
    fs::create_directories(dir_ + "/" + d);
  std::ofstream(dir_ + "/runs/5") << "a file";
  auto ids = ScanRunDirs(dir_);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<int64_t>{2, 3, 10}));
}

TEST_F(StoreMarksTest, ANewStoreIsCreatedAndAReopenedOneIsNot) {
  EXPECT_TRUE(Open()->created());
  EXPECT_FALSE(Open()->created());
}

}  // namespace
}  // namespace airtime
