#include "airtime/cli/from_data_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "airtime/server/ledger_record.h"

namespace airtime {
namespace {

// The replay's counterparts of RecordedWindow's figures: jobs (every kind but realtime).
struct ReplayFigures {
  double allocation = 0;
  size_t completed = 0;
  double completion_value = 0;
  double value = 0;
};

ReplayFigures FiguresOf(const SimResult& r) {
  ReplayFigures f;
  f.allocation = r.allocation_rate();
  f.value = r.metrics.value;
  for (int k = 0; k < kWorkloadKindCount; ++k) {
    if (static_cast<WorkloadKind>(k) == WorkloadKind::kRealtime) continue;
    f.completed += r.metrics.kinds[static_cast<size_t>(k)].completed;
    f.completion_value += r.metrics.kinds[static_cast<size_t>(k)].value;
  }
  return f;
}

std::optional<LedgerRecord> SavedLedger(const FromData& data, std::string* problem) {
  if (data.ledger.empty()) {
    *problem = "the store holds no saved ledger";
    return std::nullopt;
  }
  StatusOr<LedgerRecord> r = DecodeLedgerRecord(data.ledger);
  if (!r.ok()) {
    *problem = "the saved ledger cannot be read: " + r.status().message().substr(0, 200);
    return std::nullopt;
  }
  return *r;
}

double LedgerAllocation(const LedgerRecord& r) {
  return r.totals.installed_milli_ms > 0 ? static_cast<double>(r.totals.allocated_milli_ms()) /
                                               static_cast<double>(r.totals.installed_milli_ms)
                                         : 0;
}

// How the ledger's span compares with the window: the ledger is saved every 10 s while the
// daemon runs, so on a live store it ends up to 10 s before the window does.
std::string LedgerSpanNote(const LedgerRecord& l, const RecordedWindow& w) {
  const DurationMs window = w.to - w.from;
  const DurationMs off = std::max(std::abs(l.since - w.from), std::abs(l.saved_at - w.to));
  if (off <= kSecond) return ", the replay's window";
  if (off * 100 <= window) return ", within 1% of the replay's window";
  return "; not the replay's window (" + FormatDuration(off) +
         " apart; a running daemon saves it every 10 s): compare with care";
}

std::string Row(const char* label, const std::string& recorded, const std::string& replay) {
  char line[160];
  std::snprintf(line, sizeof line, "  %-34s %14s %14s\n", label, recorded.c_str(), replay.c_str());
  return line;
}

std::string Fixed(double v, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

}  // namespace

namespace {

// The report's parts, shared by the terminal and the HTML page.
struct RecordedParts {
  std::string title;                           // "What the daemon did from ..."
  std::vector<std::vector<std::string>> rows;  // label, daemon, replay
  std::vector<std::string> lines;              // the ledger, the cluster note
};

RecordedParts PartsOf(const FromData& data, const SimResult* replay, bool same_cluster) {
  RecordedParts p;
  const RecordedWindow& w = data.recorded;
  p.title = "What the daemon did from " + FormatTime(w.from) + " to " + FormatTime(w.to) + " (" +
            FormatDuration(w.to - w.from) + ")" +
            (replay ? ", beside the replay of its policy (" + replay->policy + ")"
                    : " (its policy is unknown: no replay beside it)");
  std::optional<ReplayFigures> f;
  if (replay) f = FiguresOf(*replay);
  auto rep = [&](auto get) { return f ? get(*f) : std::string("-"); };
  p.rows.push_back(
      {"GPU allocation (held / installed)", Fixed(100 * w.allocation_rate(), "%.1f%%"),
       rep([](const ReplayFigures& x) { return Fixed(100 * x.allocation, "%.1f%%"); })});
  p.rows.push_back({"jobs completed", std::to_string(w.completed),
                    rep([](const ReplayFigures& x) { return std::to_string(x.completed); })});
  p.rows.push_back({"value of completed jobs", Fixed(w.completion_value, "%.2f"),
                    rep([](const ReplayFigures& x) { return Fixed(x.completion_value, "%.2f"); })});
  p.rows.push_back({"jobs failed / workloads cancelled",
                    std::to_string(w.failed) + " / " + std::to_string(w.cancelled), "-"});
  p.rows.push_back({"queued or running at the end", std::to_string(w.unfinished),
                    replay ? std::to_string(replay->waiting_at_end_count) + " waiting" : "-"});
  std::string problem;
  if (std::optional<LedgerRecord> l = SavedLedger(data, &problem)) {
    const double h = l->totals.installed_gpu_hours();
    std::string line = "The daemon's own ledger, " + FormatTime(l->since) + " to " +
                       FormatTime(l->saved_at) + " (" + FormatDuration(l->unobserved) +
                       " of it not observed" + LedgerSpanNote(*l, w) + "): allocation " +
                       Fixed(100 * LedgerAllocation(*l), "%.1f%%") + ", value " +
                       Fixed(l->value, "%.2f") + ", return " +
                       Fixed(h > 0 ? l->value / h : 0, "%.3f") + " per installed GPU-h";
    if (replay)
      line += " (replay: value " + Fixed(replay->metrics.value, "%.2f") + ", return " +
              Fixed(replay->return_per_gpu_hour(), "%.3f") + ")";
    p.lines.push_back(line);
  } else {
    p.lines.push_back("The daemon's own ledger: " + problem);
  }
  if (replay && !same_cluster)
    p.lines.push_back(
        "The replay ran on another cluster than the daemon's (--cluster or --add-nodes): the "
        "difference is what the change makes, not the replay's error.");
  return p;
}

}  // namespace

std::string RecordedReport(const FromData& data, const SimResult* replay, bool same_cluster) {
  const RecordedParts p = PartsOf(data, replay, same_cluster);
  std::string out = p.title + ":\n" + Row("", "daemon", "replay");
  for (const auto& r : p.rows) out += Row(r[0].c_str(), r[1], r[2]);
  for (const auto& line : p.lines) out += line + "\n";
  return out;
}

void AddRecordedSection(HtmlPage& page, const FromData& data, const SimResult* replay,
                        bool same_cluster) {
  const RecordedParts p = PartsOf(data, replay, same_cluster);
  page.Heading(3, "What the daemon did");
  page.Paragraph(p.title + ".");
  page.Table({"", "daemon", "replay"}, p.rows);
  for (const auto& line : p.lines) page.Paragraph(line);
  for (const auto& w : data.warnings) page.Paragraph("warning: " + w);
}

nlohmann::json RecordedJson(const FromData& data, const SimResult* replay) {
  const RecordedWindow& w = data.recorded;
  nlohmann::json j = {{"store", data.store_path},
                      {"from", w.from},
                      {"to", w.to},
                      {"daemon_policy", data.policy},
                      {"recorded_cluster", data.recorded_cluster},
                      {"recorded",
                       {{"gpus", w.gpus},
                        {"installed_gpu_hours", w.installed_gpu_hours},
                        {"allocated_gpu_hours", w.allocated_gpu_hours},
                        {"allocation_rate", w.allocation_rate()},
                        {"submitted", w.submitted},
                        {"completed", w.completed},
                        {"failed", w.failed},
                        {"cancelled", w.cancelled},
                        {"unfinished", w.unfinished},
                        {"completion_value", w.completion_value}}},
                      {"ledger", nullptr},
                      {"replay_of_daemon_policy", nullptr},
                      {"warnings", data.warnings}};
  std::string problem;
  if (std::optional<LedgerRecord> l = SavedLedger(data, &problem)) {
    const double h = l->totals.installed_gpu_hours();
    j["ledger"] = {{"since", l->since},
                   {"saved_at", l->saved_at},
                   {"unobserved_seconds", static_cast<double>(l->unobserved) / 1000},
                   {"allocation_rate", LedgerAllocation(*l)},
                   {"value", l->value},
                   {"return_per_gpu_hour", h > 0 ? l->value / h : 0.0}};
  }
  if (replay) {
    const ReplayFigures f = FiguresOf(*replay);
    j["replay_of_daemon_policy"] = {{"policy", replay->policy},
                                    {"allocation_rate", f.allocation},
                                    {"completed", f.completed},
                                    {"completion_value", f.completion_value},
                                    {"value", f.value},
                                    {"return_per_gpu_hour", replay->return_per_gpu_hour()},
                                    {"waiting_at_end", replay->waiting_at_end_count}};
  }
  return j;
}

}  // namespace airtime
