// Store marks and the start-up check: see store_marks.h.
#include "airtime/store/store_marks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "airtime/base/strings.h"

namespace airtime {
namespace {

constexpr char kHeader[] = "airtime-store-marks 2";
constexpr char kHeaderV1[] = "airtime-store-marks 1";
constexpr size_t kMaxMarksBytes = 4096;  // a marks file is about 120 bytes

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

int WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// "N run directories: 4, 5, 9" with at most 10 ids shown.
std::string IdList(const std::vector<int64_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < 10; ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  if (ids.size() > 10) out += " and " + std::to_string(ids.size() - 10) + " more";
  return out;
}

std::string Short(const std::string& id) { return id.empty() ? "(none)" : id.substr(0, 12); }

}  // namespace

std::string FormatStoreMarks(const StoreMarks& m) {
  std::string out = kHeader;
  out += "\nstore_id " + m.store_id;
  out += "\nsequence " + std::to_string(m.sequence);
  out += "\nsubmission " + std::to_string(m.submission);
  out += "\nworkload " + std::to_string(m.workload);
  out += "\nrun " + std::to_string(m.run);
  out += "\nrun_reserved " + std::to_string(m.run_reserved) + "\n";
  return out;
}

StatusOr<StoreMarks> ParseStoreMarks(std::string_view text) {
  if (text.size() > kMaxMarksBytes)
    return InvalidArgument("larger than " + std::to_string(kMaxMarksBytes) + " bytes");
  std::vector<std::string_view> lines = Split(text, '\n');
  const bool v1 = !lines.empty() && Trim(lines[0]) == kHeaderV1;
  if (lines.empty() || (Trim(lines[0]) != kHeader && !v1))
    return InvalidArgument(std::string("line 1: expected '").append(kHeader).append("'"));
  StoreMarks m;
  std::map<std::string, int64_t*> counts = {{"sequence", &m.sequence},
                                            {"submission", &m.submission},
                                            {"workload", &m.workload},
                                            {"run", &m.run}};
  if (!v1) counts["run_reserved"] = &m.run_reserved;
  std::set<std::string> seen;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(i + 1) + ": ";
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) return InvalidArgument(where + "expected 'KEY VALUE'");
    const std::string key(line.substr(0, space));
    const std::string_view value = Trim(line.substr(space + 1));
    if (!seen.insert(key).second) return InvalidArgument(where + "'" + key + "' given twice");
    if (key == "store_id") {
      if (!IsStoreId(value))
        return InvalidArgument(where + "store_id: expected up to 64 hex digits");
      m.store_id = std::string(value);
      continue;
    }
    auto it = counts.find(key);
    if (it == counts.end()) return InvalidArgument(where + "unknown key '" + key + "'");
    std::optional<int64_t> v = ParseInt(value);
    if (!v || *v < 0) return InvalidArgument(where + key + ": expected a count");
    *it->second = *v;
  }
  for (const char* key : {"store_id", "sequence", "submission", "workload", "run"})
    if (!seen.count(key)) return InvalidArgument(std::string("'") + key + "' is missing");
  if (v1) {
    m.run_reserved = m.run;
  } else if (!seen.count("run_reserved")) {
    return InvalidArgument("'run_reserved' is missing");
  } else if (m.run_reserved < m.run) {
    return InvalidArgument("run_reserved " + std::to_string(m.run_reserved) + " is below run " +
                           std::to_string(m.run));
  }
  return m;
}

StatusOr<std::optional<StoreMarks>> ReadStoreMarks(const std::string& data_dir) {
  const std::string path = data_dir + "/" + kStoreMarksFile;
  // O_NONBLOCK: a FIFO in its place must not block the start.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT) return std::optional<StoreMarks>();
  if (fd < 0) return FailedPrecondition(Errno("cannot open " + path, errno));
  std::string text;
  char buf[1024];
  while (text.size() <= kMaxMarksBytes) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return FailedPrecondition(Errno("cannot read " + path, err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  StatusOr<StoreMarks> marks = ParseStoreMarks(text);
  if (!marks.ok()) return FailedPrecondition(path + ": " + marks.status().message());
  return std::optional<StoreMarks>(*marks);
}

Status WriteStoreMarks(const std::string& data_dir, const StoreMarks& marks) {
  const std::string path = data_dir + "/" + kStoreMarksFile, tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Internal(Errno("create " + tmp, errno));
  int err = WriteAll(fd, FormatStoreMarks(marks));
  if (err == 0 && fsync(fd) != 0) err = errno;
  close(fd);
  if (err == 0 && rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());
    return Internal(Errno("write " + path, err));
  }
  const int dir = open(data_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    fsync(dir);
    close(dir);
  }
  return OkStatus();
}

StoreMarks MarksOf(const StoreExtent& e) {
  const int64_t run = std::max(e.max_run, e.run_floor);
  return StoreMarks{e.store_id,
                    e.sequence,
                    std::max(e.max_submission, e.submission_floor),
                    std::max(e.max_workload, e.workload_floor),
                    run,
                    run};
}

StatusOr<std::vector<int64_t>> ScanRunDirs(const std::string& data_dir) {
  namespace fs = std::filesystem;
  const fs::path runs = fs::path(data_dir) / "runs";
  std::vector<int64_t> ids;
  std::error_code ec;
  if (!fs::exists(runs, ec)) return ids;
  fs::directory_iterator it(runs, ec), end;
  if (ec) return FailedPrecondition("cannot list " + runs.string() + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return FailedPrecondition("cannot list " + runs.string() + ": " + ec.message());
    const std::string name = it->path().filename().string();
    if (name.empty() || name.size() > 18 || name[0] == '0' ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    std::error_code dir_ec;
    if (!it->is_directory(dir_ec)) continue;
    ids.push_back(*ParseInt(name));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

StoreDamage FindStoreDamage(const std::string& data_dir, const StoreExtent& e, bool created,
                            const StatusOr<std::optional<StoreMarks>>& marks,
                            const std::vector<int64_t>& run_dirs) {
  StoreDamage d;
  const std::string db = data_dir + "/airtime.db", marks_path = data_dir + "/" + kStoreMarksFile;
  const StoreMarks have = MarksOf(e);
  d.highest_run_dir = run_dirs.empty() ? 0 : run_dirs.back();
  d.submission_high = have.submission;
  d.workload_high = have.workload;
  d.run_high = std::max(have.run, d.highest_run_dir);
  if (!marks.ok()) {
    d.problems.push_back(marks.status().message());
  } else if (marks->has_value()) {
    const StoreMarks& m = **marks;
    d.submission_high = std::max(d.submission_high, m.submission);
    d.workload_high = std::max(d.workload_high, m.workload);
    d.run_high = std::max(d.run_high, m.run_reserved);
    if (m.store_id != e.store_id)
      d.problems.push_back(db + " is store " + Short(e.store_id) + ", but " + marks_path +
                           " was written for store " + Short(m.store_id) +
                           (created ? " (the database file was missing or empty)"
                                    : " (the database was replaced, or lost its WAL before "
                                      "its first checkpoint)"));
    if (e.sequence < m.sequence)
      d.problems.push_back("the store's sequence is " + std::to_string(e.sequence) + ", but " +
                           marks_path + " says " + std::to_string(m.sequence) + ": " +
                           std::to_string(m.sequence - e.sequence) +
                           " commit(s) are missing (a lost " + db + "-wal loses the last ones)");
    struct Count {
      const char* what;
      int64_t store, mark;
    };
    for (const Count& c :
         {Count{"submission", have.submission, m.submission},
          Count{"workload", have.workload, m.workload}, Count{"run", have.run, m.run}})
      if (c.store < c.mark)
        d.problems.push_back("the store's highest " + std::string(c.what) + " id is " +
                             std::to_string(c.store) + ", but " + marks_path + " says " +
                             std::to_string(c.mark));
  } else if (created && !run_dirs.empty()) {
    d.problems.push_back(db + " was missing or empty, but " + data_dir + "/runs holds " +
                         std::to_string(run_dirs.size()) + " run director" +
                         (run_dirs.size() == 1 ? "y" : "ies") + " (highest " +
                         std::to_string(d.highest_run_dir) + ") and there is no " + marks_path);
  }
  for (int64_t id : run_dirs)
    if (id > e.run_floor && !std::binary_search(e.run_ids.begin(), e.run_ids.end(), id))
      d.unknown_run_dirs.push_back(id);
  if (!d.unknown_run_dirs.empty())
    d.problems.push_back(data_dir + "/runs holds " + std::to_string(d.unknown_run_dirs.size()) +
                         " run director" + (d.unknown_run_dirs.size() == 1 ? "y" : "ies") +
                         " the store does not know: " + IdList(d.unknown_run_dirs) +
                         " (the store's highest run id is " + std::to_string(e.max_run) + ")");
  return d;
}

std::string StoreDamageMessage(const std::string& data_dir, const StoreDamage& d) {
  const std::string db = data_dir + "/airtime.db";
  std::string out =
      "the store " + db + " does not match the data directory: it was damaged or replaced.\n";
  for (const std::string& p : d.problems) out += "  - " + p + "\n";
  out +=
      "Starting on it would lose accepted workloads, run finished work again and reuse run "
      "ids. To recover, either:\n"
      "  - stop, restore " +
      db + " together with its " + db + "-wal from a backup (leave " + data_dir +
      "/runs as it is), and start again; or\n"
      "  - start once with --accept-store-loss: airtime records the loss in " +
      data_dir +
      "/store-loss.log, carries on with what the store holds, stops runs the store no longer "
      "knows, marks done the workloads whose lost runs finished (runs/N/exit), and gives new "
      "runs ids above " +
      std::to_string(d.run_high) + " and new workloads ids above " +
      std::to_string(d.workload_high) + ". Workloads the store lost entirely are not run again.";
  return out;
}

StatusOr<StoreCheck> OpenAndCheckStore(const std::string& data_dir) {
  StoreCheck check;
  struct stat st {};
  const std::string db = data_dir + "/airtime.db";
  if (stat(db.c_str(), &st) != 0 || st.st_size == 0) {
    // A missing or empty database where a store was: refuse before Open writes a new schema
    // into it (a second look would then find a store that merely looks replaced).
    auto run_dirs = ScanRunDirs(data_dir);
    if (!run_dirs.ok()) return run_dirs.status();
    check.run_dirs = std::move(*run_dirs);
    check.damage = FindStoreDamage(data_dir, StoreExtent{}, /*created=*/true,
                                   ReadStoreMarks(data_dir), check.run_dirs);
    if (!check.damage.problems.empty()) return check;
  }
  auto store = Store::Open(data_dir);
  if (!store.ok()) return store.status();
  check.store = std::move(*store);
  StatusOr<StoreExtent> extent = check.store->Extent();
  if (!extent.ok())
    return Status(extent.status().code(),
                  "cannot read store " + check.store->path() + ": " + extent.status().message());
  auto run_dirs = ScanRunDirs(data_dir);
  if (!run_dirs.ok()) return run_dirs.status();
  check.run_dirs = std::move(*run_dirs);
  check.damage = FindStoreDamage(data_dir, *extent, check.store->created(),
                                 ReadStoreMarks(data_dir), check.run_dirs);
  return check;
}

}  // namespace airtime
