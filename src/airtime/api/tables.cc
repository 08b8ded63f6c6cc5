// Tables: formatting API answers as aligned text for the CLI.
#include "airtime/api/tables.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>

#include "airtime/base/utf8.h"
#include "airtime/ledger/cost_json.h"
#include "airtime/ledger/hold_json.h"

namespace airtime {
namespace {

using nlohmann::json;

constexpr size_t kReasonWidth = 60;
constexpr const char* kBucketOrder[] = {
    "useful",         "idle_held", "low_value_busy", "lost",   "stranded", "reserved_headroom",
    "free_no_demand", "blocked",   "down",           "foreign"};

const json& Field(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

// Every string a table shows comes through here: shown as a terminal may show it
// (PrintableText), whoever wrote it, on one line (a cell's newline would forge a row);
// `lines`: a text of several lines (an explanation).
std::string Text(const json& v, bool lines = false) {
  if (v.is_null()) return "-";
  if (v.is_string()) return PrintableText(v.get<std::string>(), lines);
  return v.dump();
}

std::string Str(const json& j, const char* key) { return Text(Field(j, key)); }
// A text that may run over lines (a reason, a message, an explanation), its newlines kept
// for the caller to cut at or join (Cut, OneLine) or to show.
std::string Lines(const json& j, const char* key) { return Text(Field(j, key), true); }

std::optional<double> Num(const json& j, const char* key) {
  const json& v = Field(j, key);
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Cut(const std::string& s, size_t width) {
  std::string one = s.substr(0, s.find('\n'));
  if (one.size() <= width) return one;
  return one.substr(0, width - 3) + "...";
}

// "2024-05-01 12:00:00 UTC (3m05s ago)" for a time in ms since the epoch.
std::string When(const json& j, const char* key, TimeMs now) {
  auto ms = Num(j, key);
  if (!ms) return "-";
  const std::time_t secs = static_cast<std::time_t>(*ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return std::string(buf) + " (" + FormatDuration(now - static_cast<TimeMs>(*ms)) + " ago)";
}

std::string Since(const json& j, const char* key, TimeMs now, const char* suffix = "") {
  auto ms = Num(j, key);
  if (!ms) return "-";
  return FormatDuration(now - static_cast<TimeMs>(*ms)) + suffix;
}

std::string AgeOrWait(const json& w, TimeMs now) {
  const std::string state = Str(w, "state");
  if (state == "queued") return Since(w, "submitted_at", now);
  if (state == "running") return Since(w, "started_at", now);
  if (Num(w, "finished_at")) return Since(w, "finished_at", now, " ago");
  return Since(w, "submitted_at", now);
}

std::string GpuCount(const json& w) {
  const json& gpus = Field(w, "gpus");
  std::string out = std::to_string(gpus.is_array() ? gpus.size() : 0);
  const json& r = Field(w, "replicas");
  if (r.is_object()) out += " r" + Str(r, "running") + "/" + Str(r, "target");
  return out;
}

std::string JoinStrings(const json& arr) {
  if (!arr.is_array() || arr.empty()) return "-";
  std::string out;
  for (const json& v : arr) out += (out.empty() ? "" : ", ") + Text(v);
  return out;
}

std::vector<std::string> WorkloadRow(const json& w, TimeMs now) {
  return {
      Str(w, "id"),    Str(w, "name"), Str(w, "tenant"),  Str(w, "kind"),
      Str(w, "state"), GpuCount(w),    AgeOrWait(w, now), Cut(Lines(w, "reason"), kReasonWidth)};
}

// The whole reason, its lines joined: a table row stays one line.
std::string OneLine(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out;
}

std::vector<std::string> WideWorkloadRow(const json& w, TimeMs now) {
  auto demand = Num(w, "demand_rps");
  return {Str(w, "id"),
          Str(w, "name"),
          Str(w, "tenant"),
          Str(w, "kind"),
          Str(w, "state"),
          Str(w, "priority"),
          GpuCount(w),
          AgeOrWait(w, now),
          Str(w, "preemptions"),
          demand && Str(w, "kind") == "realtime" ? Fixed(*demand, 1) + " rps" : "-",
          JoinStrings(Field(w, "gpus")),
          OneLine(Lines(w, "reason"))};
}

std::string GpuType(const json& g) {
  std::string t = Str(g, "type");
  if (Field(g, "mig_mode").is_boolean() && Field(g, "mig_mode").get<bool>()) t += " MIG";
  if (Field(g, "fake").is_boolean() && Field(g, "fake").get<bool>()) t += " (fake)";
  return t;
}

std::string GpuMemory(const json& g) {
  auto used = Num(g, "memory_used_mib");
  auto total = Num(g, "memory_mib");
  return (used ? Fixed(*used / 1024, 1) : "-") + "/" + (total ? Fixed(*total / 1024, 1) : "-") +
         " GiB";
}

std::string GpuWorkloads(const json& g) {
  const json& allocs = Field(g, "allocations");
  if (!allocs.is_array() || allocs.empty()) return "-";
  std::string out;
  for (const json& a : allocs) {
    std::string one = Str(a, "name") + "(" + Str(a, "workload") + ")";
    auto milli = Num(a, "milli");
    if (milli && *milli < 1000) one += "@" + Fixed(*milli / 1000, 2);
    out += (out.empty() ? "" : ", ") + one;
  }
  return out;
}

std::vector<std::string> GpuRow(const json& g) {
  auto util = Num(g, "utilization");
  auto power = Num(g, "power_w");
  return {Str(g, "index"), GpuType(g),
          Str(g, "uuid"),  util ? Fixed(*util * 100, 0) + "%" : "-",
          GpuMemory(g),    power ? Fixed(*power, 0) + " W" : "-",
          GpuWorkloads(g)};
}

std::vector<std::string> BucketNames(const json& buckets) {
  std::vector<std::string> names;
  for (const char* b : kBucketOrder) {
    if (buckets.contains(b)) names.push_back(b);
  }
  for (const auto& [key, value] : buckets.items()) {
    if (std::find(names.begin(), names.end(), key) == names.end()) names.push_back(key);
  }
  return names;
}

std::string RunsTable(const json& runs, TimeMs now) {
  std::vector<std::vector<std::string>> rows;
  for (const json& r : runs) {
    rows.push_back({Str(r, "id"), Str(r, "replica"), Str(r, "attempt"), Str(r, "state"),
                    Str(r, "pid"), JoinStrings(Field(r, "gpus")), Since(r, "started_at", now),
                    Since(r, "ended_at", now, " ago"), Str(r, "exit_code"), Str(r, "stop_reason"),
                    Str(r, "log_dir")});
  }
  return RenderTable({"RUN", "REPLICA", "ATTEMPT", "STATE", "PID", "GPUS", "STARTED", "ENDED",
                      "EXIT", "STOP REASON", "LOG DIR"},
                     rows);
}

std::string Indent(const std::string& text) {
  std::string out = "  ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out + "\n";
}

}  // namespace

std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  };
  measure(header);
  for (const auto& r : rows) measure(r);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) out += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header);
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string RenderWorkloads(const json& list, TimeMs now, const WorkloadTable& how) {
  std::vector<std::vector<std::string>> rows;
  const json& ws = Field(list, "workloads");
  if (ws.is_array()) {
    for (const json& w : ws)
      rows.push_back(how.wide ? WideWorkloadRow(w, now) : WorkloadRow(w, now));
  }
  const std::vector<std::string> header =
      how.wide ? std::vector<std::string>{"ID",          "NAME",     "TENANT",  "KIND",
                                          "STATE",       "PRIORITY", "GPUS",    "AGE/WAIT",
                                          "PREEMPTIONS", "DEMAND",   "GPU IDS", "REASON"}
               : std::vector<std::string>{"ID",    "NAME", "TENANT",   "KIND",
                                          "STATE", "GPUS", "AGE/WAIT", "REASON"};
  std::string table = RenderTable(header, rows);
  return how.header ? table : table.substr(table.find('\n') + 1);
}

std::string RenderEvents(const json& events) {
  std::vector<std::vector<std::string>> rows;
  const json& list = Field(events, "events");
  if (list.is_array()) {
    for (const json& e : list) {
      auto at = Num(e, "at");
      rows.push_back({at ? FormatTime(static_cast<TimeMs>(*at)) : "-", Str(e, "kind"),
                      Str(e, "run"), OneLine(Lines(e, "message"))});
    }
  }
  return RenderTable({"TIME", "KIND", "RUN", "MESSAGE"}, rows);
}

std::string RenderWorkloadDetail(const json& w, TimeMs now) {
  std::vector<std::vector<std::string>> rows = {{"ID:", Str(w, "id")},
                                                {"Name:", Str(w, "name")},
                                                {"Tenant:", Str(w, "tenant")},
                                                {"Kind:", Str(w, "kind")},
                                                {"State:", Str(w, "state")},
                                                {"Priority:", Str(w, "priority")},
                                                {"Submitted:", When(w, "submitted_at", now)},
                                                {"Started:", When(w, "started_at", now)},
                                                {"Finished:", When(w, "finished_at", now)},
                                                {"Exit code:", Str(w, "exit_code")},
                                                {"GPUs:", JoinStrings(Field(w, "gpus"))}};
  const json& r = Field(w, "replicas");
  if (r.is_object()) rows.push_back({"Replicas:", Str(r, "running") + "/" + Str(r, "target")});
  if (auto rps = Num(w, "demand_rps")) rows.push_back({"Demand:", Fixed(*rps, 1) + " rps"});
  rows.push_back({"Preemptions:", Str(w, "preemptions")});
  rows.push_back({"Reason:", Str(w, "reason")});
  // A service with model variants: which variants serve each class (a member: its service's).
  if (Field(w, "mix").is_string()) rows.push_back({"Mix:", Str(w, "mix")});
  std::string table = RenderTable({"", ""}, rows);
  std::string out = table.substr(table.find('\n') + 1);  // no header row
  // A service with model variants: its members, one workload per variant.
  const json& members = Field(w, "members");
  if (members.is_array() && !members.empty()) {
    std::vector<std::vector<std::string>> m;
    for (const json& v : members) {
      const json& r = Field(v, "replicas");
      m.push_back({Str(v, "id"), Str(v, "name"), Str(v, "state"),
                   r.is_object() ? Str(r, "running") + "/" + Str(r, "target") : "-",
                   Str(v, "reason")});
    }
    out += "\nMembers:\n" + Indent(RenderTable({"ID", "NAME", "STATE", "REPLICAS", "REASON"}, m));
  }
  const json& runs = Field(w, "runs");
  out += "\nRuns:\n";
  if (runs.is_array() && !runs.empty() && Field(runs[0], "workload").is_string()) {
    // A service's runs are its members': each says whose it is.
    std::vector<std::vector<std::string>> r;
    for (const json& run : runs)
      r.push_back({Str(run, "workload"), Str(run, "id"), Str(run, "state"), Str(run, "pid"),
                   JoinStrings(Field(run, "gpus")), Since(run, "started_at", now),
                   Since(run, "ended_at", now, " ago"), Str(run, "stop_reason")});
    out += Indent(RenderTable(
        {"MEMBER", "RUN", "STATE", "PID", "GPUS", "STARTED", "ENDED", "STOP REASON"}, r));
  } else {
    out += runs.is_array() && !runs.empty() ? Indent(RunsTable(runs, now)) : "  none\n";
  }
  out += "\nExplanation:\n" + Indent(Lines(w, "explanation"));
  return out;
}

// What a backend other than the local one says about itself ("" for the local one): its
// state, how often its own choice of GPUs differed from the engine's, and the GPUs others'
// work holds.
static std::string BackendLines(const json& backend) {
  if (!backend.is_object() || Str(backend, "kind") == "local" || Str(backend, "kind").empty())
    return "";
  std::string out = "backend: " + Str(backend, "state") + "\n";
  const json& p = Field(backend, "placements");
  if (p.is_object()) {
    out += "GPU choice (the backend's against the engine's): " + Str(p, "as_decided") +
           " as decided, " + Str(p, "moved") + " moved, " + Str(p, "unmoved") + " not movable";
    const std::string last = Str(p, "last_unmoved");
    out += (last.empty() || last == "-" ? std::string() : " (last: " + last + ")") + "\n";
  }
  const json& foreign = Field(backend, "foreign");
  if (foreign.is_array() && !foreign.empty()) {
    std::map<std::string, std::vector<std::string>> by_owner;
    for (const json& f : foreign) by_owner[Str(f, "owner")].push_back(Str(f, "gpu"));
    out += "foreign (not airtime's, cannot be moved):\n";
    for (const auto& [owner, gpus] : by_owner) {
      std::string list;
      for (const std::string& g : gpus) list += (list.empty() ? "" : ", ") + g;
      out += "  " + owner + ": " + list + "\n";
    }
  }
  return out;
}

std::string RenderGpus(const json& gpus) {
  std::vector<std::vector<std::string>> rows;
  const json& gs = Field(gpus, "gpus");
  if (gs.is_array()) {
    for (const json& g : gs) rows.push_back(GpuRow(g));
  }
  return RenderTable({"INDEX", "TYPE", "UUID", "UTIL", "MEM USED/TOTAL", "POWER", "WORKLOADS"},
                     rows) +
         BackendLines(Field(gpus, "backend"));
}

std::string RenderLedger(const json& ledger) {
  const double installed = Num(ledger, "installed_gpu_seconds").value_or(0);
  const json& buckets = Field(ledger, "buckets");
  std::vector<std::vector<std::string>> rows;
  if (buckets.is_object()) {
    for (const std::string& b : BucketNames(buckets)) {
      const double s = Num(buckets, b.c_str()).value_or(0);
      if (b == "foreign" && s == 0) continue;  // only a Slurm cluster has others' work
      rows.push_back({b, Fixed(s / 3600, 2), installed > 0 ? Fixed(100 * s / installed, 1) : "-"});
    }
  }
  rows.push_back({"installed", Fixed(installed / 3600, 2), installed > 0 ? "100.0" : "-"});
  std::string out = RenderTable({"BUCKET", "GPU-HOURS", "% INSTALLED"}, rows);
  auto since = Num(ledger, "since");
  auto now = Num(ledger, "now");
  if (since && now) {
    out += "window: " + FormatDuration(static_cast<DurationMs>(*now - *since));
    const double unobserved = Num(ledger, "unobserved_seconds").value_or(0);
    if (unobserved > 0)
      out += " (" + FormatDuration(static_cast<DurationMs>(unobserved * 1000)) +
             " of it not counted: daemon restarts)";
    out += "\n";
  }
  out +=
      "value: " + (Num(ledger, "value") ? Fixed(*Num(ledger, "value"), 2) : "-") +
      "  return per GPU-hour: " +
      (Num(ledger, "return_per_gpu_hour") ? Fixed(*Num(ledger, "return_per_gpu_hour"), 3) : "-") +
      "\n";
  // What the GPUs cost over the window, and the margin (an airtime before costs: none).
  if (const std::string costs = CostsTable(Field(ledger, "costs")); !costs.empty())
    out += "costs (every installed GPU-hour at its type's hourly cost; docs/costs.md):\n" + costs;
  return out + BackendLines(Field(ledger, "backend"));
}

std::string RenderHolds(const json& holds) {
  std::map<std::string, HoldSummary> summaries;
  const json& services = Field(holds, "services");
  if (services.is_object())
    for (const auto& item : services.items())
      if (auto h = HoldSummaryFromJson(item.value()); h.ok()) summaries[item.key()] = *h;
  std::vector<ScoredHold> calls;
  const json& list = Field(holds, "decisions");
  if (list.is_array())
    for (const json& c : list)
      if (auto s = HoldFromJson(c); s.ok()) calls.push_back(std::move(*s));
  if (summaries.empty() && calls.empty())
    return "no hold-or-hand-off calls yet (a service's headroom: replicas kept beyond what its "
           "demand needs, or handed off to waiting work)\n";
  std::string out =
      "3 a.m. report: replicas held beyond what the current demand needs, each call scored "
      "against the demand that came (requests: served within the SLO by the held replicas "
      "while new ones would have been loading)\n" +
      HoldsTable(summaries);
  if (calls.empty()) return out;
  const auto kept = Num(holds, "decisions_kept");
  out += "\nthe latest " + std::to_string(calls.size()) + " call(s)" +
         (kept && *kept > static_cast<double>(calls.size())
              ? " of " + Fixed(*kept, 0) + " kept (--limit N for more)"
              : "") +
         ", oldest first:\n";
  std::vector<std::vector<std::string>> rows;
  for (const ScoredHold& s : calls) {
    const HoldDecision& d = s.decision;
    rows.push_back({FormatTime(d.at), d.name, d.hold() ? "hold" : "hand-off",
                    std::to_string(d.needed) + "/" + std::to_string(d.held),
                    Fixed(d.demand_rps, 1) + "/" + Fixed(d.forecast_rps, 1),
                    Fixed(d.hold_value, 2) + "/" + Fixed(d.handoff_value, 2), s.came ? "yes" : "no",
                    Fixed(s.regret, 2), d.why});
  }
  out += RenderTable({"TIME", "SERVICE", "CHOICE", "NEEDED/HELD", "DEMAND/FORECAST RPS",
                      "HOLD/HAND-OFF VALUE", "CAME", "REGRET", "WHY"},
                     rows);
  return out;
}

std::string RenderTopFrame(const json& gpus, const json& workloads, const json& ledger,
                           TimeMs now) {
  const json& gs = Field(gpus, "gpus");
  const json& ws = Field(workloads, "workloads");
  std::string out = "airtime top: " + std::to_string(gs.is_array() ? gs.size() : 0) + " GPUs, " +
                    std::to_string(ws.is_array() ? ws.size() : 0) + " active workloads\n\n";
  out += RenderGpus(gpus) + "\n" + RenderWorkloads(workloads, now) + "\n" + RenderLedger(ledger);
  return out;
}

}  // namespace airtime
