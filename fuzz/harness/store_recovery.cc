// Harness: the store's start-up check and recovery reads on a damaged data directory
// (store_marks.h, run_files.h), without starting any process.
//
// The input describes a data directory. Byte 0 holds flags; the rest is split on "\n==\n"
// into up to four sections:
//   0  airtime.db: its raw bytes (flag kRawDb), or else changes to a valid store built once
//      per process (3 bytes each: offset high, offset low, a byte XORed in at that offset
//      modulo the file size)
//   1  store-marks text (flag kGoldenMarks: the valid store's own marks instead)
//   2  run directories, one a line: "N" (an empty one), "N claim|exit|workload TEXT", or
//      "N fifo|zero claim|exit|workload" (a FIFO, or a link to /dev/zero, as that file)
//   3  airtime.db-wal bytes (flag kWal)
// Flag kNoDb removes airtime.db altogether.
//
// What it checks: OpenAndCheckStore and the reads recovery does (workloads, runs,
// submissions, demand histories, each run directory's claim, exit and owner) come back as a
// Status, never a crash, a hang or a leak; and accepting the loss (raised id floors, new
// marks, as --accept-store-loss does) leaves a data directory that the check finds consistent.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/strings.h"
#include "airtime/exec/run_files.h"
#include "airtime/store/store_marks.h"
#include "fuzz_one.h"

namespace {

namespace fs = std::filesystem;
using namespace airtime;

enum Flags : uint8_t { kRawDb = 1, kGoldenMarks = 2, kWal = 4, kNoDb = 8 };
constexpr std::string_view kSeparator = "\n==\n";
constexpr int kMaxRunDirs = 64;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void Spit(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

[[noreturn]] void Fail(const std::string& why) {
  std::fprintf(stderr, "store_recovery: %s\n", why.c_str());
  std::abort();
}

// A scratch directory for this process, emptied before each input.
const std::string& Scratch() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/airtime_fuzz_store_XXXXXX";
    if (!mkdtemp(tmpl)) Fail("mkdtemp failed");
    return std::string(tmpl);
  }();
  return dir;
}

void Reset(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
}

struct Golden {
  std::string db;
  StoreMarks marks;
};

// A valid store as a daemon leaves it: two submissions, three workloads, four runs (one per
// state), meta with a ledger record; checkpointed into airtime.db by the close.
const Golden& GoldenStore() {
  static const Golden golden = [] {
    const std::string dir = Scratch() + "/golden";
    Reset(dir);
    Golden g;
    {
      auto store = Store::Open(dir);
      if (!store.ok()) Fail("golden store: " + store.status().message());
      Store& s = **store;
      const Status st = s.Transaction([&]() -> Status {
        for (int sub = 1; sub <= 2; ++sub) {
          auto sid = s.AddSubmission({0, "team", "{name: w, kind: batch}", "request", 1000});
          if (!sid.ok()) return sid.status();
          for (int k = 0; k < (sub == 1 ? 1 : 2); ++k) {
            WorkloadRow w;
            w.submission_id = *sid;
            w.index = k;
            w.name = "w" + std::to_string(sub) + "-" + std::to_string(k);
            w.tenant = "team";
            w.kind = k == 1 ? "realtime" : "batch";
            w.state = sub == 1 ? "succeeded" : "queued";
            auto wid = s.AddWorkload(w);
            if (!wid.ok()) return wid.status();
            for (const char* state : {"exited", "running"}) {
              if (sub == 2 && k == 1 && std::string(state) == "exited") continue;
              RunRow r;
              r.workload_id = *wid;
              r.gpus = {"GPU-fake-0000-h100-00"};
              r.state = state;
              r.run_dir = dir + "/runs/x";
              auto rid = s.AddRun(r);
              if (!rid.ok()) return rid.status();
            }
          }
        }
        AIRTIME_RETURN_IF_ERROR(s.SetMeta("ledger", "{\"since\": 1}"));
        return s.BumpSequence().status();
      });
      if (!st.ok()) Fail("golden store: " + st.message());
      auto extent = s.Extent();
      if (!extent.ok()) Fail("golden extent: " + extent.status().message());
      g.marks = MarksOf(*extent);
    }
    g.db = Slurp(dir + "/airtime.db");
    if (g.db.empty()) Fail("golden store: empty airtime.db");
    return g;
  }();
  return golden;
}

std::vector<std::string_view> Sections(std::string_view rest) {
  std::vector<std::string_view> out;
  while (out.size() < 3) {
    const size_t at = rest.find(kSeparator);
    if (at == std::string_view::npos) break;
    out.push_back(rest.substr(0, at));
    rest.remove_prefix(at + kSeparator.size());
  }
  out.push_back(rest);
  while (out.size() < 4) out.emplace_back();
  return out;
}

std::string MutatedDb(std::string_view changes) {
  std::string db = GoldenStore().db;
  for (size_t i = 0; i + 3 <= changes.size(); i += 3) {
    const size_t offset =
        (static_cast<uint8_t>(changes[i]) << 8 | static_cast<uint8_t>(changes[i + 1]));
    db[offset % db.size()] ^= changes[i + 2];
  }
  return db;
}

// "N", "N claim TEXT", "N exit TEXT", "N workload TEXT": makes runs/N and the file.
void MakeRunDirs(const std::string& dir, std::string_view lines) {
  int made = 0;
  for (std::string_view line : Split(lines, '\n')) {
    if (++made > kMaxRunDirs) break;
    const size_t space = line.find(' ');
    const std::string_view id = line.substr(0, space);
    if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const std::string run = dir + "/runs/" + std::string(id);
    std::error_code ec;
    fs::create_directories(run, ec);
    if (space == std::string_view::npos) continue;
    std::string_view rest = line.substr(space + 1);
    const size_t second = rest.find(' ');
    const std::string_view file = rest.substr(0, second);
    const std::string_view text =
        second == std::string_view::npos ? std::string_view() : rest.substr(second + 1);
    if (file == "claim" || file == "exit" || file == "workload") {
      // A later line for the same file replaces it: writing through a FIFO an earlier line
      // made would block the harness itself, and through the /dev/zero link would be moot.
      const std::string path = run + "/" + std::string(file);
      fs::remove(path, ec);
      Spit(path, text);
    } else if (file == "fifo" || file == "zero") {
      // A FIFO, or /dev/zero, in place of a run file: reads must neither block nor grow.
      const std::string name = text == "exit" || text == "workload" ? std::string(text) : "claim";
      const std::string path = run + "/" + name;
      fs::remove(path, ec);
      if (file == "fifo") {
        (void)mkfifo(path.c_str(), 0600);
      } else {
        fs::create_symlink("/dev/zero", path, ec);
      }
    }
  }
}

// The reads of a daemon's recovery, on an open store.
void ReadLikeRecovery(Store& store, const std::string& dir, const std::vector<int64_t>& run_dirs) {
  auto workloads = store.LoadWorkloads(/*active_only=*/false);
  if (workloads.ok()) {
    int asked = 0;
    for (const WorkloadRow& w : *workloads) {
      if (++asked > 16) break;
      (void)store.GetSubmission(w.submission_id);
      (void)store.RunsOf(w.id);
      (void)store.DemandOf(w.id, 0);
      (void)store.ClassDemandOf(w.id);
      (void)store.ClassDemandHistoryOf(w.id, 0);
    }
  }
  (void)store.LoadRuns(/*active_only=*/true);
  (void)store.GetMeta("ledger");
  for (int64_t id : run_dirs) {
    const std::string run = dir + "/runs/" + std::to_string(id);
    (void)ReadClaim(run);
    (void)ReadExitFile(run);
    (void)ReadRunOwner(run);
  }
}

}  // namespace

int FuzzOne(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Golden& golden = GoldenStore();
  const std::string dir = Scratch() + "/data";
  Reset(dir);
  const uint8_t flags = data[0];
  const std::vector<std::string_view> sec =
      Sections(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  if (!(flags & kNoDb))
    Spit(dir + "/airtime.db", (flags & kRawDb) ? std::string(sec[0]) : MutatedDb(sec[0]));
  if (flags & kGoldenMarks) {
    (void)WriteStoreMarks(dir, golden.marks);
  } else if (!sec[1].empty()) {
    Spit(dir + "/" + kStoreMarksFile, sec[1]);
  }
  MakeRunDirs(dir, sec[2]);
  if (flags & kWal) Spit(dir + "/airtime.db-wal", sec[3]);

  auto check = OpenAndCheckStore(dir);
  if (!check.ok()) return 0;  // a store that cannot be opened is an error, not a crash
  (void)StoreDamageMessage(dir, check->damage);
  if (!check->store) {  // missing or empty: --accept-store-loss opens a new one
    auto store = Store::Open(dir);
    if (!store.ok()) return 0;
    check->store = std::move(*store);
  }
  Store& store = *check->store;
  ReadLikeRecovery(store, dir, check->run_dirs);
  if (check->damage.problems.empty()) return 0;

  // Accept the loss as the daemon does; the data directory must then be consistent.
  const StoreDamage& d = check->damage;
  if (!store.RaiseIdFloors(d.submission_high, d.workload_high, d.run_high).ok()) return 0;
  auto extent = store.Extent();
  if (!extent.ok()) return 0;
  if (!WriteStoreMarks(dir, MarksOf(*extent)).ok()) return 0;
  check->store.reset();
  auto again = OpenAndCheckStore(dir);
  if (!again.ok()) return 0;
  if (!again->damage.problems.empty())
    Fail("still inconsistent after accepting the loss: " + StoreDamageMessage(dir, again->damage));
  return 0;
}

#ifdef AIRTIME_STORE_RECOVERY_SEEDS
// Writes the seed corpus into argv[1] (fuzz/corpus/store_recovery/): build this file with
// -DAIRTIME_STORE_RECOVERY_SEEDS and the sources of airtime_store, run_files.cc and
// airtime_base (strings.cc, status.cc), link -lsqlite3, run it with the corpus folder.
int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string out = argv[1];
  const Golden& g = GoldenStore();
  auto seed = [&](const std::string& name, uint8_t flags, std::vector<std::string> sections) {
    std::string bytes(1, static_cast<char>(flags));
    for (size_t i = 0; i < sections.size(); ++i)
      bytes += (i ? std::string(kSeparator) : "") + sections[i];
    Spit(out + "/" + name, bytes);
  };
  const std::string marks = FormatStoreMarks(g.marks);
  const std::string runs =
      "1 claim started 1 1\n1 exit exit 0\n1 workload 1 w1-0\n2\n3 claim abandoned\n4 claim "
      "started 999999 5 boot\n4 exit signal 9\n";
  seed("healthy", kGoldenMarks, {"", "", runs});
  seed("fifo_and_zero", kGoldenMarks, {"", "", "1 fifo claim\n2 zero exit\n3 zero workload\n"});
  seed("other_store_marks", 0, {"", marks, runs});
  seed("lost_runs", kGoldenMarks, {"", "", runs + "5 workload 3 w2-1\n5 exit exit 0\n7\n"});
  seed("no_marks_legacy", 0, {"", "", runs});
  seed("emptied_db", kRawDb | kGoldenMarks, {"", "", runs});
  seed("missing_db", kNoDb, {"", marks, runs});
  seed("mutated_header", kGoldenMarks,
       {std::string("\x00\x10\x55\x00\x12\xff\x00\x1c\x01", 9), "", runs});
  seed("marks_ahead", 0,
       {"",
        "airtime-store-marks 1\nstore_id " + g.marks.store_id +
            "\nsequence 9\nsubmission 9\nworkload 9\nrun 9\n",
        runs});
  seed("marks_garbled", 0, {"", "airtime-store-marks 1\nstore_id xyz\nrun -1\n", runs});
  seed("raw_truncated_db", kRawDb | kGoldenMarks, {g.db.substr(0, 100), "", runs});
  seed("raw_db_two_pages", kRawDb,
       {g.db.substr(0, std::min<size_t>(g.db.size() / 2, 8192)), marks, runs});
  seed("garbage_wal", kGoldenMarks | kWal,
       {"", "", runs, std::string("\x37\x7f\x06\x82\x00\x2d\xe2\x18garbage", 15)});
  return 0;
}
#endif
