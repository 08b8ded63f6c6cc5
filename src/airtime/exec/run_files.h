// Run directory files: the on-disk protocol between the executor, the shim and a restarted
// daemon.
//
// Every run has a directory chosen by the daemon (e.g. DATA/runs/17). Its files:
//   claim       who owns the run. Created exactly once, atomically and complete (the text
//               is written to a private temporary file, fsynced, then link()ed to the name
//               "claim", which fails if the name exists). Either the shim wins
//               ("started <pid> <start_ticks> <boot_id>") and runs the workload, or a
//               restarted daemon wins ("abandoned") and the shim refuses. Never both.
//   exit        how the workload ended, written by the shim after the workload was reaped:
//               "exit <code>" or "signal <N>" (exit.tmp + fsync + rename: never partial).
//   stdout.log, stderr.log   the workload's output (appended).
//   shim.log    the shim's own diagnostics (appended).
// These helpers use only the file system; they are safe to call from any process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "airtime/base/status.h"

namespace airtime {

inline constexpr char kClaimFile[] = "claim";
inline constexpr char kExitFile[] = "exit";
inline constexpr char kStdoutLog[] = "stdout.log";
inline constexpr char kStderrLog[] = "stderr.log";
inline constexpr char kShimLog[] = "shim.log";
// "WORKLOAD_ID NAME": whose run it is, written by the daemon before the run starts (a store
// that lost the run's row can still be told what ran; see store_marks.h).
inline constexpr char kRunOwnerFile[] = "workload";

std::string RunPath(const std::string& run_dir, const char* name);

struct Claim {
  enum class Kind { kStarted, kAbandoned };
  Kind kind = Kind::kAbandoned;
  // For kStarted: the shim's identity. boot_id is empty in claims written without it.
  pid_t pid = 0;
  int64_t start_ticks = 0;
  std::string boot_id;
};

std::string FormatClaim(const Claim& claim);
std::optional<Claim> ParseClaim(const std::string& text);

// Creates DIR/claim with `claim` unless it exists. kAlreadyExists when another party holds
// the claim; other errors name the path and errno text.
Status WriteClaim(const std::string& run_dir, const Claim& claim);
// NotFound when there is no claim file; InvalidArgument when it cannot be parsed.
StatusOr<Claim> ReadClaim(const std::string& run_dir);

struct ExitRecord {
  bool signaled = false;  // true: "signal <value>"; false: "exit <value>"
  int value = 0;
  // The conventional shell code: value, or 128 + signal.
  int Code() const { return signaled ? 128 + value : value; }
};

std::string FormatExit(const ExitRecord& record);
std::optional<ExitRecord> ParseExit(const std::string& text);
// Writes DIR/exit atomically (DIR/exit.tmp, fsync, rename, fsync of DIR).
Status WriteExitFile(const std::string& run_dir, const ExitRecord& record);
// NotFound when there is no exit file; InvalidArgument when it cannot be parsed.
StatusOr<ExitRecord> ReadExitFile(const std::string& run_dir);

// The whole of a small file (run files, /proc files). NotFound when it (or the process a
// /proc file belongs to) does not exist; InvalidArgument when it holds more than
// kMaxSmallFileBytes (a damaged run directory: /dev/zero in place of a claim); other errors
// name the path and errno text. Never blocks on a FIFO.
inline constexpr size_t kMaxSmallFileBytes = 1 << 20;
StatusOr<std::string> ReadSmallFile(const std::string& path);

// DIR/workload: whose run it is.
struct RunOwner {
  int64_t workload_id = 0;
  std::string name;
};
std::string FormatRunOwner(const RunOwner& owner);
// nullopt when the file is missing, larger than 4 KiB or not "ID NAME" with ID > 0.
std::optional<RunOwner> ReadRunOwner(const std::string& run_dir);

// ENOSPC or EDQUOT: the file system (or the user's quota) is full. The writers above then
// return kResourceExhausted.
bool NoSpaceErrno(int err);

// "what: strerror(errno)", for messages that concern a path or program.
std::string ErrnoMessage(const std::string& what, int err);

// Writes all of `text` to `fd`, retrying on EINTR and short writes. Returns errno or 0.
int WriteAll(int fd, std::string_view text);

}  // namespace airtime
