#include "airtime/sim/from_data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <utility>

#include "airtime/base/strings.h"
#include "airtime/config/cluster_yaml.h"
#include "airtime/config/workload_yaml.h"
#include "airtime/sim/from_data_classes.h"
#include "airtime/store/store.h"
#include "airtime/traces/datetime.h"

namespace airtime {
namespace {

constexpr size_t kMaxNameBytes = 128;     // as the daemon's submission rules
constexpr size_t kMaxMessageBytes = 300;  // of a parser's message quoted in a warning

// `text` safe to print on a terminal: control bytes become '?', cut at `max` bytes.
std::string Printable(std::string_view text, size_t max = kMaxMessageBytes) {
  std::string out;
  for (char c : text.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    out += u < 0x20 || u == 0x7f ? '?' : c;
  }
  if (text.size() > max) out += "...";
  return out;
}

// A name as the daemon accepts it: 1..128 bytes, no control byte. The store may have been
// damaged or written by hand, so it is checked again.
bool IsPlainName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxNameBytes &&
         std::none_of(name.begin(), name.end(), [](char c) {
           const auto u = static_cast<unsigned char>(c);
           return u < 0x20 || u == 0x7f;
         });
}

std::string Quoted(std::string_view name) { return "'" + Printable(name, kMaxNameBytes) + "'"; }

// Everything read from the store, in one snapshot.
struct Snapshot {
  std::vector<WorkloadRow> workloads;
  std::vector<RunRow> runs;
  std::vector<DaemonStartRow> starts;
  std::vector<NodeEventRow> node_events;
  std::map<int64_t, SubmissionRow> submissions;                       // by id
  std::map<int64_t, std::vector<std::pair<int64_t, double>>> demand;  // by workload id
  std::map<int64_t, std::vector<ClassDemandRow>> class_demand;        // by workload id
  std::map<int64_t, std::vector<ClassDemandRow>> class_steps;         // by workload id
  std::string ledger;
};

StatusOr<Snapshot> ReadSnapshot(Store& store) {
  Snapshot s;
  Status st = store.Transaction([&]() -> Status {
    auto workloads = store.LoadWorkloads(false);
    if (!workloads.ok()) return workloads.status();
    s.workloads = std::move(*workloads);
    auto runs = store.LoadRuns(false);
    if (!runs.ok()) return runs.status();
    s.runs = std::move(*runs);
    auto starts = store.DaemonStarts();
    if (!starts.ok()) return starts.status();
    s.starts = std::move(*starts);
    auto events = store.NodeEvents();
    if (!events.ok()) return events.status();
    s.node_events = std::move(*events);
    for (const WorkloadRow& w : s.workloads) {
      if (!s.submissions.count(w.submission_id)) {
        auto sub = store.GetSubmission(w.submission_id);
        // A missing submission is the workload's problem (a warning later), not the store's.
        if (sub.ok()) {
          s.submissions.emplace(w.submission_id, std::move(*sub));
        } else if (sub.status().code() != StatusCode::kNotFound) {
          return sub.status();
        }
      }
      if (w.kind == "realtime") {
        // A history's steps, then the last report where it came after the newest step
        // began: the daemon joins reports close together into one step at their highest
        // rate and keeps the last one as the rate in force (DemandRecorder).
        auto demand = store.DemandOf(w.id, 0);
        if (!demand.ok()) return demand.status();
        if (!demand->empty() && w.demand_at > demand->back().first)
          demand->emplace_back(w.demand_at, w.demand_rps);
        s.demand[w.id] = std::move(*demand);
        auto classes = store.ClassDemandOf(w.id);
        if (!classes.ok()) return classes.status();
        auto steps = store.ClassDemandHistoryOf(w.id, 0);
        if (!steps.ok()) return steps.status();
        for (const ClassDemandRow& last : *classes) {
          TimeMs newest = -1;
          for (const ClassDemandRow& r : *steps)
            if (r.request_class == last.request_class) newest = std::max(newest, r.at);
          if (newest >= 0 && last.at > newest) steps->push_back(last);
        }
        if (!classes->empty()) s.class_demand[w.id] = std::move(*classes);
        if (!steps->empty()) s.class_steps[w.id] = std::move(*steps);
      }
    }
    s.ledger = store.GetMeta("ledger").value_or("");
    return OkStatus();
  });
  if (!st.ok()) return Status(st.code(), "cannot read store " + store.path() + ": " + st.message());
  return s;
}

// When the daemon last saved its ledger (ledger_record.h's saved_at), if it did.
std::optional<TimeMs> LedgerSavedAt(const Snapshot& s) {
  if (s.ledger.empty()) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(s.ledger, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("saved_at") && j["saved_at"].is_number_integer())
    return j["saved_at"].get<int64_t>();
  return std::nullopt;
}

// The latest moment the store records anything.
TimeMs LatestRecorded(const Snapshot& s) {
  TimeMs latest = 0;
  auto see = [&](TimeMs t) { latest = std::max(latest, t); };
  for (const WorkloadRow& w : s.workloads) {
    see(w.submitted_at);
    if (w.finished_at) see(*w.finished_at);
    see(w.demand_at);
  }
  for (const RunRow& r : s.runs) {
    see(r.started_at);
    if (r.ended_at) see(*r.ended_at);
  }
  for (const DaemonStartRow& d : s.starts) see(d.at);
  for (const NodeEventRow& e : s.node_events) see(e.at);
  for (const auto& [id, points] : s.demand)
    for (const auto& p : points) see(p.first);
  if (std::optional<TimeMs> saved = LedgerSavedAt(s)) see(*saved);
  return latest;
}

TimeMs EarliestRecorded(const Snapshot& s) {
  std::optional<TimeMs> earliest;
  auto see = [&](TimeMs t) { earliest = earliest ? std::min(*earliest, t) : t; };
  for (const DaemonStartRow& d : s.starts) see(d.at);
  for (const WorkloadRow& w : s.workloads) see(w.submitted_at);
  return earliest.value_or(0);
}

// GPU UUID -> the GPU type it had, over every daemon start whose cluster can be read.
struct RecordedTypes {
  std::unordered_map<std::string, GpuTypeId> of_uuid;
};

// The cluster of one daemon start, as its cluster file.
StatusOr<ClusterFile> ParseStartCluster(const DaemonStartRow& start, const std::string& store) {
  const std::string where = store + " (the cluster recorded at " + FormatTime(start.at) + ")";
  auto file = ParseClusterFile(start.cluster, where);
  if (!file.ok()) return file.status();
  if (file->cluster.gpu_count() != start.gpus.size())
    return InvalidArgument(where + ": " + std::to_string(file->cluster.gpu_count()) +
                           " GPUs in the cluster but " + std::to_string(start.gpus.size()) +
                           " GPU ids recorded");
  return file;
}

// The deadline of `spec` (relative to its submit_at, as parsed) on the wall clock.
std::optional<TimeMs> WallDeadline(const WorkloadSpec& spec, TimeMs submitted_at) {
  if (!spec.deadline) return std::nullopt;
  return *spec.deadline - spec.submit_at + submitted_at;
}

// Wall time a run held its GPUs within [from, to] (0 for a run that never started).
DurationMs RunTimeWithin(const RunRow& r, TimeMs from, TimeMs to) {
  if (r.state != "running" && r.state != "exited") return 0;
  const TimeMs start = std::max(r.started_at, from);
  const TimeMs end = std::min(r.ended_at.value_or(to), to);
  return std::max<DurationMs>(0, end - start);
}

class Converter {
 public:
  Converter(const Snapshot& snap, const FromDataOptions& options, const std::string& store_path)
      : snap_(snap), options_(options), store_path_(store_path) {}

  StatusOr<FromData> Run(const ClusterFile* cluster);

 private:
  Status ChooseWindow();
  Status ChooseCluster(const ClusterFile* given);
  void ConvertWorkloads();
  const StatusOr<Scenario>& SubmissionOf(int64_t id, const SubmissionRow& sub);
  std::optional<WorkloadSpec> Convert(const WorkloadRow& row, const std::vector<RunRow>& runs);
  // A service's stored demand, each point a request rate (others dropped with a warning).
  WallCurve StoredDemand(const WorkloadRow& row);
  void ConvertVariantDemand();
  void LinkLaterProducers();
  void SettleProducers();
  void DeriveWork(const WorkloadRow& row, const std::vector<RunRow>& runs, bool has_command,
                  WorkloadSpec& spec);
  void ConvertDemand(const WorkloadRow& row, WorkloadSpec& spec);
  std::vector<DemandPoint> OnReplayClock(const WallCurve& wall) const;
  void ConvertNodeEvents();
  void Recount();
  double SpeedOfRun(const RunRow& r, const WorkloadSpec& spec) const;
  void Warn(std::string text) { out_.warnings.push_back(std::move(text)); }

  const Snapshot& snap_;
  const FromDataOptions& options_;
  std::string store_path_;
  FromData out_;
  std::vector<WorkloadSpec> workloads_;
  std::vector<const WorkloadRow*> rows_;  // the row of each of workloads_
  std::vector<ScenarioEvent> events_;
  std::map<int64_t, StatusOr<Scenario>> parsed_;  // by submission id
  std::map<int64_t, std::vector<RunRow>> runs_of_;
  RecordedTypes types_;
  std::optional<ClusterFile> recorded_;  // the daemon's cluster in the window, when readable
  size_t derived_ = 0;                   // durations taken from runs
};

StatusOr<TimeMs> ResolveWindowTime(const std::string& flag, const std::string& text,
                                   TimeMs latest) {
  auto t = ParseWindowTime(text, latest);
  if (!t.ok()) return InvalidArgument(flag + ": " + t.status().message());
  return t;
}

Status Converter::ChooseWindow() {
  const TimeMs latest = LatestRecorded(snap_);
  TimeMs origin = EarliestRecorded(snap_), end = latest;
  if (!options_.until.empty()) {
    auto t = ResolveWindowTime("--until", options_.until, latest);
    if (!t.ok()) return t.status();
    end = *t;
  }
  if (!options_.since.empty()) {
    auto t = ResolveWindowTime("--since", options_.since, end);
    if (!t.ok()) return t.status();
    origin = *t;
  }
  if (snap_.workloads.empty() && snap_.starts.empty())
    return FailedPrecondition(store_path_ +
                              ": the store records no daemon start and no workload: nothing to "
                              "replay");
  if (origin >= end)
    return InvalidArgument(store_path_ + ": the window from " + FormatTime(origin) + " to " +
                           FormatTime(end) + " is empty (the store records " +
                           FormatTime(EarliestRecorded(snap_)) + " to " + FormatTime(latest) + ")");
  out_.origin = origin;
  out_.end = end;
  return OkStatus();
}

Status Converter::ChooseCluster(const ClusterFile* given) {
  // The daemon's last start up to the window's end (else its first, after it).
  const DaemonStartRow* chosen = nullptr;
  std::set<std::string> clusters_in_window;
  for (const DaemonStartRow& d : snap_.starts) {
    if (d.at <= out_.end || !chosen) chosen = &d;
    if (d.at <= out_.end) clusters_in_window.insert(d.cluster);
    if (auto file = ParseStartCluster(d, store_path_); file.ok()) {
      for (size_t g = 0; g < d.gpus.size(); ++g)
        types_.of_uuid[d.gpus[g]] = file->cluster.gpu_type(static_cast<GpuIndex>(g));
    }
  }
  if (chosen) {
    out_.policy = chosen->policy;
    auto file = ParseStartCluster(*chosen, store_path_);
    if (file.ok()) {
      recorded_.emplace(std::move(*file));
    } else if (!given) {
      return Status(file.status().code(),
                    file.status().message() + "; give the cluster with --cluster FILE");
    } else {
      Warn("the recorded cluster cannot be read (" + Printable(file.status().message()) +
           "); durations derived from runs assume speed 1.0");
    }
    if (clusters_in_window.size() > 1)
      Warn("the daemon ran " + std::to_string(clusters_in_window.size()) +
           " different clusters up to the window's end; the replay uses the one started at " +
           FormatTime(chosen->at));
  } else if (!given) {
    return FailedPrecondition(store_path_ +
                              ": the store records no cluster (written by an airtime before "
                              "store schema 5); give the cluster with --cluster FILE");
  }
  if (given) {
    SimInput in = MakeSimInput(given->cluster, {}, {});
    in.costs = given->costs;
    out_.input = std::move(in);
  } else {
    out_.input = MakeSimInput(recorded_->cluster, {}, {});
    out_.input.costs = recorded_->costs;
    out_.recorded_cluster = true;
  }
  return OkStatus();
}

double Converter::SpeedOfRun(const RunRow& r, const WorkloadSpec& spec) const {
  if (r.gpus.empty()) return 1.0;
  auto it = types_.of_uuid.find(r.gpus.front());
  if (it == types_.of_uuid.end()) return 1.0;
  return spec.SpeedOn(it->second, GpuCatalog::Builtin());
}

// A job's work: as stated; else, once it ended, what its runs took (docs/what-if.md).
void Converter::DeriveWork(const WorkloadRow& row, const std::vector<RunRow>& runs,
                           bool has_command, WorkloadSpec& spec) {
  auto work_of = [&](const RunRow& r) {
    return ToSeconds(RunTimeWithin(r, r.started_at, r.ended_at.value_or(out_.end))) *
           SpeedOfRun(r, spec);
  };
  double total = 0;
  for (const RunRow& r : runs) total += work_of(r);
  if (row.state == "failed") {
    // It earned nothing; in the replay it holds GPUs as long as its attempts did.
    if (total > 0) {
      spec.work_seconds = total;
      spec.work_estimated = false;
    }
    spec.value.on_completion = 0;
    return;
  }
  // A stated duration is what the planner was told; with a command it is only an estimate,
  // and the run shows what the job needed.
  if (!spec.work_estimated && !has_command) return;
  if (row.state == "succeeded") {
    // The run that succeeded did the work; a job that resumes from checkpoints did it over
    // all its runs.
    double work = 0;
    if (spec.checkpoint_interval > 0) {
      work = total;
    } else {
      for (auto r = runs.rbegin(); r != runs.rend(); ++r) {
        if (r->state == "exited" && r->exit_code.value_or(1) == 0) {
          work = work_of(*r);
          break;
        }
      }
    }
    if (work > 0) {
      spec.work_seconds = work;
      spec.work_estimated = false;
      ++derived_;
    }
    return;
  }
  // Still queued or running (or cancelled): the estimate, or what it has run so far if more.
  if (total > spec.work_seconds) {
    spec.work_seconds = total;
    spec.work_estimated = false;
  }
}

WallCurve Converter::StoredDemand(const WorkloadRow& row) {
  WallCurve out;
  auto it = snap_.demand.find(row.id);
  if (it == snap_.demand.end()) return out;
  size_t dropped = 0;
  for (const auto& [at, rps] : it->second) {
    if (std::isfinite(rps) && rps >= 0) {
      out.emplace_back(at, rps);
    } else if (++dropped == 1) {
      Warn("workload " + Quoted(row.name) + " (id " + std::to_string(row.id) +
           "): its demand recorded at " + FormatTime(at) + " (" + std::to_string(rps) +
           ") is not a request rate; left out");
    }
  }
  if (dropped > 1)
    Warn("workload " + Quoted(row.name) + " (id " + std::to_string(row.id) +
         "): " + std::to_string(dropped) + " recorded demand points in all are not request rates");
  return out;
}

// Wall-clock points on the replay's clock, up to the window's end: what was in force as
// the window opened at its time 0.
std::vector<DemandPoint> Converter::OnReplayClock(const WallCurve& wall) const {
  std::vector<DemandPoint> curve;
  for (const auto& [at, rps] : wall) {
    if (at > out_.end) break;
    const TimeMs t = std::max<TimeMs>(0, at - out_.origin);
    if (!curve.empty() && curve.back().at == t) {
      curve.back().rps = rps;  // a later change at the same moment (or before the window)
    } else {
      curve.push_back(DemandPoint{t, rps});
    }
  }
  return curve;
}

void Converter::ConvertDemand(const WorkloadRow& row, WorkloadSpec& spec) {
  const WallCurve stored = StoredDemand(row);
  if (stored.empty()) {
    // No demand recorded: a curve given in the submission, placed on the replay's clock.
    for (DemandPoint& p : spec.realtime.demand) p.at += row.submitted_at - out_.origin;
    return;
  }
  spec.realtime.demand = OnReplayClock(stored);
  spec.realtime.history.clear();
}

// A stored submission read back as the daemon read it (ParseSubmission): a job that produces
// a variant of a service of an earlier submission stays unlinked (LinkLaterProducers links
// it), and each service with variants is expanded into its members, which the rows index.
const StatusOr<Scenario>& Converter::SubmissionOf(int64_t id, const SubmissionRow& sub) {
  auto it = parsed_.find(id);
  if (it != parsed_.end()) return it->second;
  const std::string origin =
      "submission " + std::to_string(id) + " (" + Printable(sub.origin, 64) + ")";
  StatusOr<Scenario> sc =
      ParseSubmissionYaml(sub.body, origin, GpuCatalog::Builtin(), options_.families);
  if (sc.ok()) sc->workloads = ExpandAllVariants(std::move(sc->workloads));
  return parsed_.emplace(id, std::move(sc)).first->second;
}

std::optional<WorkloadSpec> Converter::Convert(const WorkloadRow& row,
                                               const std::vector<RunRow>& runs) {
  const std::string who = "workload " + Quoted(row.name) + " (id " + std::to_string(row.id) + ")";
  auto sub = snap_.submissions.find(row.submission_id);
  if (sub == snap_.submissions.end()) {
    Warn("skipped " + who + ": its submission " + std::to_string(row.submission_id) +
         " is not in the store");
    return std::nullopt;
  }
  const StatusOr<Scenario>& sc = SubmissionOf(row.submission_id, sub->second);
  if (!sc.ok()) {
    Warn("skipped " + who +
         ": its submission cannot be read back: " + Printable(sc.status().message()));
    return std::nullopt;
  }
  if (row.index < 0 || static_cast<size_t>(row.index) >= sc->workloads.size()) {
    Warn("skipped " + who + ": its submission holds " + std::to_string(sc->workloads.size()) +
         " workload(s), not one at index " + std::to_string(row.index));
    return std::nullopt;
  }
  WorkloadSpec spec = sc->workloads[static_cast<size_t>(row.index)];
  if (!IsPlainName(row.name)) {
    spec.name = "workload-" + std::to_string(row.id);
    Warn(who + " is replayed as '" + spec.name + "': its name is not printable");
  } else {
    spec.name = row.name;
  }
  if (IsPlainName(row.tenant)) {
    spec.tenant = row.tenant;
  } else {
    spec.tenant = "tenant-unprintable";
    Warn(who + ": its tenant's name is not printable; replayed as tenant '" + spec.tenant + "'");
  }
  if (KindName(spec.kind) != row.kind)
    Warn(who + ": the store says kind " + Quoted(row.kind) + ", its submission " +
         KindName(spec.kind) + "; replayed as " + KindName(spec.kind));
  spec.priority = row.priority;  // the current priority (changes carry no time in the store)
  const bool has_command = !spec.exec.empty();
  spec.exec = ExecSpec{};  // the replay runs nothing
  spec.source = store_path_ + ": workload " + std::to_string(row.id);
  const std::optional<TimeMs> deadline = WallDeadline(spec, row.submitted_at);
  spec.submit_at = std::max<TimeMs>(0, row.submitted_at - out_.origin);
  if (deadline) spec.deadline = *deadline - out_.origin;
  if (spec.realtime.is_member()) {
    // Its demand, and its classes', once all its service's members are in
    // (ConvertVariantDemand); the curves stay relative to the submission until then.
  } else if (spec.is_service()) {
    ConvertDemand(row, spec);
  } else {
    DeriveWork(row, runs, has_command, spec);
  }
  if (Status st = ValidateSpec(spec, GpuCatalog::Builtin()); !st.ok()) {
    Warn("skipped " + who + ": " + Printable(st.message()));
    return std::nullopt;
  }
  return spec;
}

void Converter::ConvertWorkloads() {
  for (const RunRow& r : snap_.runs) runs_of_[r.workload_id].push_back(r);
  std::set<std::string> names;
  for (const WorkloadRow& row : snap_.workloads) {
    if (row.submitted_at >= out_.end) continue;
    if (row.finished_at && *row.finished_at < out_.origin) continue;
    std::optional<WorkloadSpec> spec = Convert(row, runs_of_[row.id]);
    if (!spec) continue;
    if (!names.insert(spec->name).second) {
      Warn("skipped workload " + Quoted(spec->name) + " (id " + std::to_string(row.id) +
           "): another workload of the window has that name");
      continue;
    }
    if (row.state == "cancelled" && row.finished_at && *row.finished_at <= out_.end) {
      ScenarioEvent e;
      e.at = std::max<TimeMs>(spec->submit_at, *row.finished_at - out_.origin);
      e.type = ScenarioEvent::kCancel;
      e.target = spec->name;
      e.source = spec->source;
      events_.push_back(e);
    }
    workloads_.push_back(std::move(*spec));
    rows_.push_back(&row);
  }
  LinkLaterProducers();
  SettleProducers();
  ConvertVariantDemand();
}

// Jobs of later submissions that produce a variant of a service of an earlier one (the
// daemon's CheckClaims accepted them in this order, each replacing one that had failed or
// been cancelled): the newest is the variant's producer in every member's spec, as the
// daemon links it (ApplyClaim, and Recover after a restart). Named by the job's stored
// name; SettleProducers puts it on the replay's terms.
void Converter::LinkLaterProducers() {
  std::map<std::string, std::map<size_t, std::string>> producers;  // service -> variant -> job
  for (const WorkloadRow& row : snap_.workloads) {
    if (row.submitted_at >= out_.end) continue;
    auto sub = snap_.submissions.find(row.submission_id);
    if (sub == snap_.submissions.end()) continue;
    const StatusOr<Scenario>& sc = SubmissionOf(row.submission_id, sub->second);
    if (!sc.ok() || row.index < 0 || static_cast<size_t>(row.index) >= sc->workloads.size())
      continue;  // warned about where it is replayed
    const ProducedVariant& p = sc->workloads[static_cast<size_t>(row.index)].produces;
    if (p.empty()) continue;
    bool here = false;  // linked as its submission was parsed
    for (const WorkloadSpec& s : sc->workloads) here |= s.realtime.group == p.service;
    if (here) continue;
    auto member = std::find_if(workloads_.begin(), workloads_.end(), [&](const WorkloadSpec& m) {
      return m.realtime.is_member() && m.realtime.group == p.service;
    });
    if (member == workloads_.end()) continue;  // the service is not replayed: nothing to make
    const std::string who = "workload " + Quoted(row.name) + " (id " + std::to_string(row.id) + ")";
    const StatusOr<size_t> v = FindProducedVariant(member->realtime, p);
    if (!v.ok()) {
      Warn(who + ": field 'produces.variant': " + Printable(v.status().message()) +
           "; it produces nothing in the replay");
      continue;
    }
    const ModelVariant& mv = member->realtime.variants[*v];
    if (!mv.awaits_producer && mv.produced_by.empty()) {
      Warn(who + ": field 'produces.variant': variant " + Quoted(p.service + "/" + p.variant) +
           " runs from the start, no job produces it; it produces nothing in the replay");
      continue;
    }
    producers[p.service][*v] = row.name;
  }
  for (WorkloadSpec& m : workloads_) {
    if (!m.realtime.is_member()) continue;
    auto it = producers.find(m.realtime.group);
    if (it == producers.end()) continue;
    for (const auto& [v, job] : it->second)
      if (v < m.realtime.variants.size()) m.realtime.variants[v].produced_by = job;
  }
}

// Each variant's producer on the replay's terms: a replayed job by its replayed name; one
// that completed before the window opened made the variant already (it runs from the start,
// as the daemon's recovery makes it); any other waits as it did, for a job that had not
// made it by the window's end.
void Converter::SettleProducers() {
  std::map<std::string, std::string> replayed_as;  // stored name -> replayed name
  for (size_t i = 0; i < workloads_.size(); ++i) replayed_as[rows_[i]->name] = workloads_[i].name;
  std::map<std::string, const WorkloadRow*> by_name;
  for (const WorkloadRow& row : snap_.workloads) by_name[row.name] = &row;
  std::set<std::string> warned;
  for (WorkloadSpec& m : workloads_) {
    if (!m.realtime.is_member()) continue;
    for (ModelVariant& v : m.realtime.variants) {
      if (v.produced_by.empty()) continue;
      if (auto r = replayed_as.find(v.produced_by); r != replayed_as.end()) {
        v.produced_by = r->second;
        continue;
      }
      auto row = by_name.find(v.produced_by);
      if (row == by_name.end() || row->second->state != "succeeded" || !row->second->finished_at ||
          *row->second->finished_at > out_.end)
        continue;
      if (*row->second->finished_at < out_.origin) {
        v.produced_by.clear();
        v.awaits_producer = false;
      } else if (warned.insert(m.realtime.group + "/" + v.name).second) {
        Warn("variant " + Quoted(m.realtime.group + "/" + v.name) + " waits all the replay: job " +
             Quoted(row->second->name) + ", which produced it at " +
             FormatTime(*row->second->finished_at) + ", is not replayed");
      }
    }
  }
}

// The demand of each service with variants, for all its members at once: each class's
// curve rebuilt from the members' stored demand, the classes' recorded rates and their last
// ones (RebuildClassCurves), and each member's own demand the sum of the classes it serves by
// default, as ExpandVariants makes it.
void Converter::ConvertVariantDemand() {
  // (name, submission) -> its members in workloads_ (a store written by hand may hold two
  // services of one name)
  std::map<std::pair<std::string, int64_t>, std::vector<size_t>> services;
  for (size_t i = 0; i < workloads_.size(); ++i)
    if (workloads_[i].realtime.is_member())
      services[{workloads_[i].realtime.group, rows_[i]->submission_id}].push_back(i);
  for (const auto& [key, members] : services) {
    const std::string& service = key.first;
    const RealtimeProfile& rt = workloads_[members.front()].realtime;
    std::map<int, WallCurve> history, steps;
    std::map<int, std::pair<TimeMs, double>> last;
    std::set<std::string> unknown;
    int64_t bad_steps = 0;
    // A stored class rate's class index, or -1 (warned once per class name, for an unknown
    // class; for a rate that is not one, each last rate and the steps all together).
    auto class_of = [&](const WorkloadRow& row, const ClassDemandRow& r, bool is_last) {
      auto c = std::find_if(rt.classes.begin(), rt.classes.end(),
                            [&](const RequestClass& rc) { return rc.name == r.request_class; });
      const std::string what = "workload " + Quoted(row.name) + " (id " + std::to_string(row.id) +
                               "): the " + (is_last ? "last rate" : "rates") + " of class " +
                               Quoted(r.request_class);
      if (c == rt.classes.end()) {
        if (unknown.insert(r.request_class).second)
          Warn(what + (is_last ? " is" : " are") + " recorded, but service " + Quoted(service) +
               " has no such class; left out");
        return -1;
      }
      if (!std::isfinite(r.rps) || r.rps < 0) {
        if (is_last)
          Warn(what + " (" + std::to_string(r.rps) + ") is not a request rate; left out");
        else
          ++bad_steps;
        return -1;
      }
      return static_cast<int>(c - rt.classes.begin());
    };
    for (size_t i : members) {
      const WorkloadRow& row = *rows_[i];
      if (WallCurve stored = StoredDemand(row); !stored.empty())
        history[workloads_[i].realtime.variant] = std::move(stored);
      if (auto rates = snap_.class_demand.find(row.id); rates != snap_.class_demand.end())
        for (const ClassDemandRow& r : rates->second)
          if (const int k = class_of(row, r, true); k >= 0)
            if (auto l = last.find(k); l == last.end() || r.at > l->second.first)
              last[k] = {r.at, r.rps};
      // Each class's recorded rates (every member records each report).
      if (auto rows = snap_.class_steps.find(row.id); rows != snap_.class_steps.end())
        for (const ClassDemandRow& r : rows->second)
          if (const int k = class_of(row, r, false); k >= 0) steps[k].emplace_back(r.at, r.rps);
    }
    if (bad_steps > 0)
      Warn("service " + Quoted(service) + ": " + std::to_string(bad_steps) +
           " recorded class rates are not request rates; left out");
    // By time; of the copies at one time (one per member), RebuildClassCurves takes the last.
    for (auto& [k, curve] : steps)
      std::stable_sort(curve.begin(), curve.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
    const ClassCurves curves =
        RebuildClassCurves(rt, rows_[members.front()]->submitted_at, history, last, steps);
    if (curves.estimated_until > 0) {
      std::vector<std::string> names;
      for (int c : curves.estimated) names.push_back(rt.classes[static_cast<size_t>(c)].name);
      Warn("service " + Quoted(service) + ": classes " + Printable(Join(names, ", ")) +
           " share the variant that serves them by default, and the store holds only their "
           "sum and each one's last rate for the reports before it recorded each class's "
           "rates: their rates up to " +
           FormatTime(curves.estimated_until) + " are estimated in proportion to those");
    }
    std::vector<std::vector<DemandPoint>> on_clock;
    for (const WallCurve& c : curves.classes) on_clock.push_back(OnReplayClock(c));
    for (size_t i : members) {
      RealtimeProfile& m = workloads_[i].realtime;
      std::vector<const std::vector<DemandPoint>*> own;
      for (size_t c = 0; c < m.classes.size() && c < on_clock.size(); ++c) {
        m.classes[c].demand = on_clock[c];
        if (m.DefaultVariantFor(static_cast<int>(c)) == m.variant) own.push_back(&on_clock[c]);
      }
      m.demand = SumCurves(own);
      m.history.clear();
    }
  }
}

void Converter::ConvertNodeEvents() {
  const Cluster& cluster = out_.input.cluster;
  std::set<std::string> known;
  for (const Node& n : cluster.nodes()) known.insert(n.name);
  std::map<std::string, bool> down_before;  // a node's state as the window opens
  std::set<std::string> unknown;
  for (const NodeEventRow& e : snap_.node_events) {
    if (e.at > out_.end) break;
    if (e.state != "down" && e.state != "up") {
      Warn("skipped a node event of node " + Quoted(e.node) + " at " + FormatTime(e.at) +
           ": state " + Quoted(e.state) + " is neither down nor up");
      continue;
    }
    if (!known.count(e.node)) {
      if (unknown.insert(e.node).second)
        Warn("skipped the events of node " + Quoted(e.node) + ": not in the replay's cluster");
      continue;
    }
    if (e.at < out_.origin) {
      down_before[e.node] = e.state == "down";
      continue;
    }
    ScenarioEvent ev;
    ev.at = e.at - out_.origin;
    ev.type = e.state == "down" ? ScenarioEvent::kNodeDown : ScenarioEvent::kNodeUp;
    ev.target = e.node;
    ev.source = store_path_ + ": node event at " + FormatTime(e.at);
    events_.push_back(ev);
  }
  for (const auto& [node, down] : down_before) {
    if (!down) continue;
    ScenarioEvent ev;
    ev.at = 0;
    ev.type = ScenarioEvent::kNodeDown;
    ev.target = node;
    ev.source = store_path_ + ": node down before the window";
    events_.push_back(ev);
  }
}

// What happened in the window, from the rows (RecordedWindow).
void Converter::Recount() {
  RecordedWindow& w = out_.recorded;
  w.from = out_.origin;
  w.to = out_.end;
  // The daemon's GPUs; unknown (an older store), those of the cluster given instead.
  w.gpus = recorded_ ? recorded_->cluster.gpu_count() : out_.input.cluster.gpu_count();
  w.installed_gpu_hours = static_cast<double>(w.gpus) * ToSeconds(w.to - w.from) / 3600;
  for (const RunRow& r : snap_.runs) {
    const double share =
        static_cast<double>(r.gpus.size()) * std::clamp(r.share_milli, 0, 1000) / 1000.0;
    w.allocated_gpu_hours += share * ToSeconds(RunTimeWithin(r, w.from, w.to)) / 3600;
  }
  for (const WorkloadRow& row : snap_.workloads) {
    if (row.submitted_at >= w.to) continue;
    if (row.submitted_at >= w.from) ++w.submitted;
    const bool ended_in = row.finished_at && *row.finished_at >= w.from && *row.finished_at <= w.to;
    if (!row.finished_at || *row.finished_at > w.to) ++w.unfinished;
    if (!ended_in) continue;
    if (row.state == "failed") ++w.failed;
    if (row.state == "cancelled") ++w.cancelled;
    if (row.state != "succeeded") continue;
    ++w.completed;
    auto sc = parsed_.find(row.submission_id);
    if (sc == parsed_.end() || !sc->second.ok() || row.index < 0 ||
        static_cast<size_t>(row.index) >= sc->second->workloads.size())
      continue;
    const WorkloadSpec& spec = sc->second->workloads[static_cast<size_t>(row.index)];
    if (spec.is_service()) continue;
    w.completion_value +=
        spec.value.CompletionValue(*row.finished_at, WallDeadline(spec, row.submitted_at));
  }
}

StatusOr<FromData> Converter::Run(const ClusterFile* cluster) {
  out_.store_path = store_path_;
  out_.ledger = snap_.ledger;
  AIRTIME_RETURN_IF_ERROR(ChooseWindow());
  AIRTIME_RETURN_IF_ERROR(ChooseCluster(cluster));
  ConvertWorkloads();
  ConvertNodeEvents();
  Recount();
  SimInput in = MakeSimInput(out_.input.cluster, std::move(workloads_), std::move(events_));
  in.costs = std::move(out_.input.costs);
  out_.input = std::move(in);
  out_.input.notes.push_back("store " + store_path_ + ": " + FormatTime(out_.origin) + " to " +
                             FormatTime(out_.end) + " (" + FormatDuration(out_.end - out_.origin) +
                             ")");
  if (derived_ > 0)
    out_.input.notes.push_back(std::to_string(derived_) +
                               " job duration(s) taken from the runs that completed them");
  return std::move(out_);
}

}  // namespace

StatusOr<TimeMs> ParseWindowTime(const std::string& text, TimeMs latest) {
  const std::string t(Trim(text));
  if (auto d = ParseDurationMs(t); d && *d >= 0) return latest - *d;
  std::string stamp = t;
  if (!stamp.empty() && (stamp.back() == 'Z' || stamp.back() == 'z')) stamp.pop_back();
  if (stamp.size() == 10) stamp += " 00:00:00";  // a date
  if (stamp.size() == 16) stamp += ":00";        // minutes
  if (auto ms = ParseDateTimeMs(stamp)) return *ms;
  return InvalidArgument(
      "expected a UTC time such as 2026-12-01 or 2026-12-01 08:00:00, or a "
      "duration before the store's end such as 7d; got '" +
      Printable(t, 64) + "'");
}

StatusOr<FromData> LoadFromData(const std::string& dir, const FromDataOptions& options,
                                const ClusterFile* cluster) {
  auto store = Store::OpenReadOnly(dir);
  if (!store.ok()) return store.status();
  auto snap = ReadSnapshot(**store);
  if (!snap.ok()) return snap.status();
  Converter converter(*snap, options, (*store)->path());
  return converter.Run(cluster);
}

Status AddNodes(const std::string& spec, SimInput* input) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("--add-nodes '" + Printable(spec, 64) + "': " + why +
                           " (expected COUNTxTYPE[:GPUS], e.g. 2xH100:8)");
  };
  const size_t x = spec.find_first_of("xX");
  if (x == std::string::npos || x == 0) return bad("no COUNTx");
  auto count = ParseInt(spec.substr(0, x));
  if (!count || *count < 1 || *count > 10000) return bad("COUNT must be 1 to 10000");
  std::string type_name = spec.substr(x + 1);
  int gpus = 8;
  if (const size_t colon = type_name.rfind(':'); colon != std::string::npos) {
    auto g = ParseInt(type_name.substr(colon + 1));
    if (!g || *g < 1 || *g > 64) return bad("GPUS must be 1 to 64");
    gpus = static_cast<int>(*g);
    type_name.resize(colon);
  }
  const GpuCatalog& catalog = input->cluster.catalog();
  auto type = catalog.Find(type_name);
  if (!type.ok()) return bad(type.status().message());
  std::vector<Node> nodes = input->cluster.nodes();
  std::set<std::string> names;
  for (const Node& n : nodes) names.insert(n.name);
  const std::string prefix = "added-" + ToLower(catalog.type(*type).name) + "-";
  int next = 0;
  for (int64_t i = 0; i < *count; ++i) {
    Node n;
    while (names.count(prefix + std::to_string(next))) ++next;
    n.name = prefix + std::to_string(next++);
    names.insert(n.name);
    n.gpu_type = *type;
    n.gpu_count = gpus;
    nodes.push_back(std::move(n));
  }
  auto cluster = Cluster::Build(input->cluster.name(), std::move(nodes), catalog);
  if (!cluster.ok()) return bad(cluster.status().message());
  input->cluster = std::move(*cluster);
  input->notes.push_back("added " + std::to_string(*count) + " node(s) of " + std::to_string(gpus) +
                         " x " + catalog.type(*type).name);
  return OkStatus();
}

Status OverrideGpuCost(const std::string& spec, SimInput* input) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("--gpu-cost '" + Printable(spec, 64) + "': " + why +
                           " (expected TYPE=PER_HOUR, e.g. H100=2.5)");
  };
  const size_t eq = spec.find('=');
  if (eq == std::string::npos) return bad("no '='");
  const GpuCatalog& catalog = input->cluster.catalog();
  auto type = catalog.Find(Trim(spec.substr(0, eq)));
  if (!type.ok()) return bad(type.status().message());
  auto per_hour = ParseDouble(std::string(Trim(spec.substr(eq + 1))));
  if (!per_hour || !(*per_hour >= 0) || *per_hour > 100000)
    return bad("PER_HOUR must be 0 to 100,000");
  if (input->costs.size() < catalog.size()) input->costs.resize(catalog.size());
  GpuCost& c = input->costs[static_cast<size_t>(*type)];
  c.priced = true;
  c.per_hour = *per_hour;
  input->notes.push_back("cost of a " + catalog.type(*type).name + " set to " +
                         Printable(std::string(Trim(spec.substr(eq + 1))), 32) + " per hour");
  return OkStatus();
}

}  // namespace airtime
