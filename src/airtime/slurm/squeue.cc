#include "airtime/slurm/squeue.h"

#include <cctype>
#include <optional>

#include "airtime/base/strings.h"

namespace airtime::slurm {
namespace {

// In this order: each field is followed by '|' (a field without a size is not padded).
// Reason is last: it may be Slurm's free text (a job's state_desc), so it is the rest of the
// line, '|' included.
constexpr const char* kFields[] = {"JobID",        "State",    "RestartCnt", "exit_code",
                                   "PriorityLong", "UserName", "Reason"};
constexpr size_t kFieldCount = sizeof kFields / sizeof kFields[0];

// A Slurm word (a state, a user name): letters, digits, '_', '-', '.', '@'.
bool Word(std::string_view s) {
  if (s.size() > 256) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' &&
        c != '@')
      return false;
  return true;
}

Status LineError(size_t line, std::string_view text, const std::string& what) {
  return InvalidArgument("squeue output line " + std::to_string(line) + " ('" +
                         std::string(text.substr(0, 120)) + "'): " + what);
}

// squeue's exit_code as a wait status. 22.05 prints the wait status itself ("768"); from
// 23.11 on it prints EXIT:SIGNAL ("3:0", "0:9"), and nothing for a job without one yet.
std::optional<int64_t> ExitCodeField(std::string_view text) {
  if (text.empty()) return 0;
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return ParseInt(text);
  auto exit = ParseInt(text.substr(0, colon));
  auto signal = ParseInt(text.substr(colon + 1));
  if (!exit || !signal || *exit < 0 || *exit > 255 || *signal < 0 || *signal > 127)
    return std::nullopt;
  return *signal > 0 ? *signal : *exit << 8;
}

}  // namespace

std::vector<std::string> SqueueBriefArgs() {
  std::string format;
  for (const char* f : kFields) {
    if (!format.empty()) format += ",";
    format += std::string(f) + ":|";
  }
  return {"--noheader", "--states=all", "--Format=" + format};
}

StatusOr<std::vector<SlurmJob>> ParseSqueueBrief(std::string_view out) {
  std::vector<SlurmJob> jobs;
  size_t line_no = 0;
  for (std::string_view line : Split(out, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    // Every field ends with '|'; the last, Reason, is the rest of the line.
    if (line.back() != '|') return LineError(line_no, line, "does not end with '|'");
    std::vector<std::string_view> f = Split(line.substr(0, line.size() - 1), '|');
    if (f.size() < kFieldCount)
      return LineError(line_no, line, "fewer than " + std::to_string(kFieldCount) + " fields");
    std::string_view reason = line.substr(0, line.size() - 1);
    for (size_t i = 0; i + 1 < kFieldCount; ++i) reason.remove_prefix(f[i].size() + 1);
    SlurmJob j;
    auto id = ParseInt(f[0]);
    if (!id || *id <= 0) return LineError(line_no, line, "JobID is not a positive integer");
    j.id = *id;
    if (f[1].empty() || !Word(f[1])) return LineError(line_no, line, "State is not a word");
    j.state = std::string(f[1]);
    auto restarts = ParseInt(f[2]);
    if (!restarts || *restarts < 0) return LineError(line_no, line, "RestartCnt is not a count");
    j.restarts = *restarts;
    auto exit = ExitCodeField(f[3]);
    if (!exit)
      return LineError(line_no, line,
                       "exit_code is neither a wait status (22.05) nor EXIT:SIGNAL (23.11 on)");
    j.exit_code = *exit;
    auto priority = ParseInt(f[4]);
    if (!priority || *priority < 0)
      return LineError(line_no, line, "PriorityLong is not a non-negative integer");
    j.priority = *priority;
    if (!Word(f[5])) return LineError(line_no, line, "UserName is not a word");
    j.user = std::string(f[5]);
    j.state_reason = std::string(reason.substr(0, 1024));
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace airtime::slurm
