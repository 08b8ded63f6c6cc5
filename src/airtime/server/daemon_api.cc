// Daemon: the ControlPlane calls (submissions, queries, changes) and their JSON views.
#include <chrono>
#include <cmath>
#include <future>
#include <unordered_set>

#include "airtime/base/strings.h"
#include "airtime/config/workload_yaml.h"
#include "airtime/exec/log_cap.h"
#include "airtime/exec/run_files.h"
#include "airtime/server/daemon.h"
#include "airtime/server/live_spec.h"
#include "airtime/server/log_read.h"
#include "airtime/server/submission.h"

namespace airtime {

TimeMs WallNow();

using nlohmann::json;

struct Daemon::PendingSubmit {
  Caller caller;
  std::string body;
  std::string origin;
  std::vector<WorkloadSpec> specs;
  TimeMs received = 0;
  std::chrono::steady_clock::time_point received_steady;
  std::promise<StatusOr<json>> done;
};

namespace {

json OptionalJson(const std::optional<TimeMs>& v) { return v ? json(*v) : json(nullptr); }
json OptionalJson(const std::optional<int32_t>& v) { return v ? json(*v) : json(nullptr); }

// A member's request classes and the rate each sees now, by name.
json ClassRates(const Job& job) {
  json out = json::object();
  const std::vector<RequestClass>& classes = job.s().realtime.classes;
  for (size_t c = 0; c < classes.size(); ++c)
    out[classes[c].name] = c < job.class_rps.size() ? job.class_rps[c] : 0.0;
  return out;
}

}  // namespace

StatusOr<json> Daemon::Submit(const Caller& caller, std::string_view body,
                              std::string_view origin) {
  // Stateless: parsed and checked on the caller's thread, before anything is committed.
  auto parsed = ParseSubmission(caller, body, origin);
  if (!parsed.ok()) return parsed.status();
  for (const WorkloadSpec& spec : parsed->specs) AIRTIME_RETURN_IF_ERROR(CheckRunnable(spec));
  auto p = std::make_shared<PendingSubmit>();
  p->caller = caller;
  p->body = std::move(parsed->body);
  p->origin = std::string(origin);
  p->specs = std::move(parsed->specs);
  p->received = WallNow();
  p->received_steady = std::chrono::steady_clock::now();
  auto future = p->done.get_future();
  if (!running_) {
    CommitSubmissions({p});
  } else {
    {
      std::lock_guard<std::mutex> lock(inbox_mu_);
      submits_.push_back(p);
    }
    actuator_->Wake();
  }
  return future.get();
}

// Commits a batch of submissions in one transaction (each all or nothing), answers them,
// then hands the new workloads to a paused engine and runs one decision cycle for the lot.
void Daemon::CommitSubmissions(std::vector<std::shared_ptr<PendingSubmit>> batch) {
  std::unordered_set<std::string> names;
  std::vector<std::shared_ptr<PendingSubmit>> ok;
  std::vector<std::vector<VariantClaim>> claims;  // ok's, each submission's
  std::map<std::string, std::string> claimed;
  std::map<std::string, int64_t> adding;  // workloads of ok's, by tenant
  // A service with variants takes its own name too: it reaches its members.
  const auto taken = [&](const std::string& name) { return names.count(name) || NameInUse(name); };
  for (auto& p : batch) {
    Status st;
    std::unordered_set<std::string> mine, services;
    for (const WorkloadSpec& s : p->specs) {
      const std::string& service = s.realtime.group;
      const bool new_service = s.realtime.is_member() && services.insert(service).second;
      if (taken(s.name) || !mine.insert(s.name).second ||
          (new_service && (taken(service) || !mine.insert(service).second))) {
        const std::string name = taken(s.name) || !new_service ? s.name : service;
        st = Status(StatusCode::kAlreadyExists,
                    s.SourceOf("name") + ": workload '" + name + "': field 'name': already taken");
        break;
      }
    }
    // Within each tenant's --max-active-per-tenant, with what the batch accepted before it.
    std::map<std::string, int64_t> adding_too = adding;
    for (const WorkloadSpec& s : p->specs) ++adding_too[s.tenant];
    for (const auto& [tenant, n] : adding_too) {
      if (!st.ok() || options_.max_active_per_tenant <= 0) break;
      const auto it = active_of_tenant_.find(tenant);
      const int64_t active = it == active_of_tenant_.end() ? 0 : it->second;
      if (active + n <= options_.max_active_per_tenant) continue;
      const int64_t mine = n - (adding.count(tenant) ? adding.at(tenant) : 0);
      st = Status(StatusCode::kPermissionDenied,
                  "tenant '" + tenant + "' has " + std::to_string(active + n - mine) +
                      " workloads queued or running; these " + std::to_string(mine) +
                      " would make " + std::to_string(active + n) + ", more than the " +
                      std::to_string(options_.max_active_per_tenant) +
                      " the daemon accepts of one tenant (--max-active-per-tenant): none was "
                      "accepted; submit them again once some have ended, or cancel some");
    }
    // Its jobs that produce a variant of a service accepted before.
    std::map<std::string, std::string> claimed_too = claimed;
    StatusOr<std::vector<VariantClaim>> mine_claims(std::vector<VariantClaim>{});
    if (st.ok()) {
      mine_claims = CheckClaims(p->caller, p->specs, &claimed_too);
      st = mine_claims.status();
    }
    if (!st.ok()) {
      p->done.set_value(st);
      continue;
    }
    names.insert(mine.begin(), mine.end());
    adding = std::move(adding_too);
    claimed = std::move(claimed_too);
    claims.push_back(std::move(*mine_claims));
    ok.push_back(p);
  }
  if (ok.empty()) return;
  const TimeMs now = std::max(WallNow(), engine_->now());
  std::vector<std::vector<WorkloadRow>> rows(ok.size());
  StoreMarks marks = marks_;
  Status st = store_->Transaction([&]() -> Status {
    for (size_t i = 0; i < ok.size(); ++i) {
      auto sid = store_->AddSubmission({0, ok[i]->caller.tenant, ok[i]->body, ok[i]->origin, now});
      if (!sid.ok()) return sid.status();
      marks.submission = std::max(marks.submission, *sid);
      for (size_t k = 0; k < ok[i]->specs.size(); ++k) {
        const WorkloadSpec& s = ok[i]->specs[k];
        WorkloadRow row;
        row.submission_id = *sid;
        row.index = static_cast<int32_t>(k);
        row.name = s.name;
        row.tenant = s.tenant;
        row.kind = KindName(s.kind);
        row.priority = s.priority;
        row.submitted_at = now;
        auto id = store_->AddWorkload(row);
        if (!id.ok()) return id.status();
        row.id = *id;
        marks.workload = std::max(marks.workload, *id);
        rows[i].push_back(std::move(row));
      }
    }
    auto seq = store_->BumpSequence();
    if (!seq.ok()) return seq.status();
    marks.sequence = *seq;
    return OkStatus();
  });
  if (!st.ok()) {
    for (auto& p : ok)
      p->done.set_value(
          Status(StatusCode::kUnavailable, "the submission could not be stored: " + st.message()));
    return;
  }
  // The marks follow the commit before anyone hears of it (store_marks.h).
  marks_ = marks;
  SaveMarks();
  engine_->SetPaused(true);
  for (size_t i = 0; i < ok.size(); ++i) {
    for (const VariantClaim& c : claims[i]) ApplyClaim(c, ok[i]->specs[c.job].name);
    json accepted = json::array();
    for (size_t k = 0; k < rows[i].size(); ++k) {
      WorkloadRec w;
      w.row = std::move(rows[i][k]);
      w.spec = LiveSpec(std::move(ok[i]->specs[k]), now);
      accepted.push_back({{"id", w.row.id}, {"name", w.row.name}});
      const CycleResult& r = engine_->Handle(Event::Arrival(now, w.spec));
      books_->Observe(r);
      w.eid = r.arrived;
      by_engine_id_[w.eid] = w.row.id;
      const int64_t id = w.row.id;
      workloads_.emplace(id, std::move(w));
      IndexName(workloads_.at(id));
      CountActive(workloads_.at(id));
      ++submissions_total_;
    }
    latencies_.submit_commit.Add(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - ok[i]->received_steady)
            .count());
    ok[i]->done.set_value(json{{"accepted", accepted}});
  }
  engine_->SetPaused(false);
  Feed(Event::Timer(now), ok.front()->received_steady);
}

StatusOr<Daemon::WorkloadRec*> Daemon::Find(const Caller& caller, std::string_view id_or_name) {
  WorkloadRec* w = Lookup(id_or_name);
  if (!w || (!caller.admin && w->row.tenant != caller.tenant))
    return NotFound("no workload '" + std::string(id_or_name) + "'" +
                    (caller.admin ? "" : " of tenant '" + caller.tenant + "'"));
  return w;
}

void Daemon::IndexName(const WorkloadRec& w) {
  by_name_[w.row.name] = w.row.id;
  if (w.spec->realtime.is_member()) members_of_[w.spec->realtime.group].push_back(w.row.id);
}

StatusOr<Daemon::Target> Daemon::Resolve(const Caller& caller, std::string_view id_or_name) {
  auto w = Find(caller, id_or_name);
  if (w.ok()) return Target{(*w)->row.name, false, {*w}};
  const std::string name(id_or_name);
  std::vector<WorkloadRec*> members = MembersOf(name);
  if (members.empty()) return w.status();
  Target t{name, true, {}};
  for (WorkloadRec* m : members) {
    if (!caller.admin && m->row.tenant != caller.tenant) return w.status();
    t.recs.push_back(m);
  }
  return t;
}

std::string Daemon::MixOf(const WorkloadRec& member) const {
  const RealtimeProfile& rt = member.spec->realtime;
  if (!rt.is_member() || member.eid == kNoWorkload || IsFinalState(member.row.state)) return "";
  // The policy's own words where it chooses a mix (the airtime policy: what `describe` shows
  // in each member's explanation), without the lead that names the service.
  if (const ScalePlugin* scale = engine_->policy().scale.get()) {
    std::string why = scale->WhyTarget(engine_->job(member.eid), *engine_);
    const std::string lead = "the mix of '" + rt.group + "': ";
    if (why.rfind(lead, 0) == 0) return why.substr(lead.size());
  }
  // A policy that knows nothing of variants serves every class with its best variant.
  std::string out;
  for (size_t c = 0; c < rt.classes.size(); ++c) {
    const int v = rt.DefaultVariantFor(static_cast<int>(c));
    out += (c ? "; " : "") + rt.classes[c].name + ": " +
           (v < 0 ? std::string("none") : "100% " + rt.variants[static_cast<size_t>(v)].name);
  }
  return out + " (the best variant for each class: policy " + engine_->policy().name +
         " chooses no mix)";
}

json Daemon::View(const WorkloadRec& w, bool full) const {
  json v = {{"id", w.row.id},
            {"name", w.row.name},
            {"tenant", w.row.tenant},
            {"kind", w.row.kind},
            {"state", w.row.state},
            {"priority", w.row.priority},
            {"submitted_at", w.row.submitted_at},
            {"started_at", OptionalJson(w.row.started_at)},
            {"finished_at", OptionalJson(w.row.finished_at)},
            {"exit_code", OptionalJson(w.row.exit_code)},
            {"preemptions", w.row.preemptions},
            {"demand_rps", w.row.demand_rps}};
  if (w.spec->realtime.is_member()) {
    const RealtimeProfile& rt = w.spec->realtime;
    v["service"] = rt.group;
    v["variant"] = rt.variants[static_cast<size_t>(rt.variant)].name;
    if (w.eid != kNoWorkload && !IsFinalState(w.row.state))
      v["class_rps"] = ClassRates(engine_->job(w.eid));
    if (std::string mix = MixOf(w); !mix.empty()) v["mix"] = mix;
  }
  json gpus = json::array();
  std::vector<const RunRec*> live;
  for (const auto& [id, r] : runs_)
    if (r.row.workload_id == w.row.id && !r.stopping) live.push_back(&r);
  for (const RunRec* r : live)
    for (const std::string& g : r->row.gpus) gpus.push_back(g);
  v["gpus"] = gpus;
  std::string reason = w.row.message;
  if (w.eid != kNoWorkload && !IsFinalState(w.row.state)) {
    const Job& job = engine_->job(w.eid);
    if (job.is_service())
      v["replicas"] = {{"running", job.live_replicas()}, {"target", job.target_replicas}};
    std::string explanation = engine_->Explain(w.eid);
    if (!start_pause_.empty() && job.phase == JobPhase::kPending)
      explanation = start_pause_ + "\n" + explanation;
    reason = explanation.substr(0, explanation.find('\n'));
    if (full) v["explanation"] = explanation;
  } else if (full) {
    v["explanation"] = w.row.message;
  }
  v["reason"] = reason;
  if (full) {
    json runs = json::array();
    auto rows = store_->RunsOf(w.row.id);
    if (rows.ok()) {
      for (const RunRow& r : *rows) {
        runs.push_back(
            {{"id", r.id},
             {"replica", r.replica},
             {"attempt", r.attempt},
             {"state", r.state},
             {"pid", r.pid},
             {"slurm_job", r.slurm_job ? json(r.slurm_job) : json(nullptr)},
             {"gpus", r.gpus},
             {"share_milli", r.share_milli},
             {"port", r.port},
             {"host", r.port > 0 ? json(actuator_->ServiceAddress(r.gpus)) : json(nullptr)},
             {"started_at", r.started_at},
             {"ended_at", OptionalJson(r.ended_at)},
             {"exit_code", OptionalJson(r.exit_code)},
             {"log_dir", r.run_dir},
             {"stop_reason", r.stop_reason}});
      }
    }
    v["runs"] = runs;
  }
  return v;
}

json Daemon::ServiceView(const Target& t, bool full) const {
  const WorkloadRow& first = t.recs.front()->row;
  json v = {{"id", nullptr},
            {"name", t.name},
            {"tenant", first.tenant},
            {"kind", first.kind},
            {"priority", first.priority},
            {"submitted_at", first.submitted_at},
            {"preemptions", 0},
            {"demand_rps", 0.0}};
  json members = json::array(), gpus = json::array(), runs = json::array();
  std::optional<TimeMs> started, finished;
  int running = 0, target = 0, preemptions = 0;
  bool any_running = false, any_active = false, any_failed = false, any_cancelled = false;
  std::string reason, explanation;
  for (const WorkloadRec* m : t.recs) {
    json mv = View(*m, full);
    const std::string& state = m->row.state;
    any_running |= state == "running";
    any_active |= !IsFinalState(state);
    any_failed |= state == "failed";
    any_cancelled |= state == "cancelled";
    if (m->row.started_at && (!started || *m->row.started_at < *started))
      started = m->row.started_at;
    if (m->row.finished_at && (!finished || *m->row.finished_at > *finished))
      finished = m->row.finished_at;
    preemptions += m->row.preemptions;
    v["demand_rps"] = std::max(v["demand_rps"].get<double>(), m->row.demand_rps);
    // Every member hears each class's rate: the first live member's are the service's.
    if (!v.contains("class_rps") && mv.contains("class_rps")) v["class_rps"] = mv["class_rps"];
    for (const json& g : mv["gpus"]) gpus.push_back(g);
    int r = 0, tg = 0;
    if (mv.contains("replicas")) {
      r = mv["replicas"]["running"].get<int>();
      tg = mv["replicas"]["target"].get<int>();
      running += r;
      target += tg;
    }
    reason += std::string(reason.empty() ? "" : ", ") + m->row.name + " " + std::to_string(r) +
              "/" + std::to_string(tg);
    if (full) {
      for (json run : mv["runs"]) {
        run["workload"] = m->row.name;
        runs.push_back(std::move(run));
      }
      explanation += m->row.name + ": " + mv.value("explanation", std::string()) + "\n";
      mv.erase("runs");
      mv.erase("explanation");
    }
    members.push_back(std::move(mv));
  }
  // Running while any member runs; queued while any waits; then how the members ended.
  v["state"] = any_running     ? "running"
               : any_active    ? "queued"
               : any_failed    ? "failed"
               : any_cancelled ? "cancelled"
                               : "succeeded";
  v["started_at"] = started ? json(*started) : json(nullptr);
  v["finished_at"] = any_active || !finished ? json(nullptr) : json(*finished);
  v["exit_code"] = nullptr;
  v["preemptions"] = preemptions;
  v["gpus"] = gpus;
  if (any_active) v["replicas"] = {{"running", running}, {"target", target}};
  v["reason"] = "model variants (replicas running/target): " + reason;
  for (const WorkloadRec* m : t.recs) {
    if (IsFinalState(m->row.state) || m->eid == kNoWorkload) continue;
    if (std::string mix = MixOf(*m); !mix.empty()) v["mix"] = mix;
    break;
  }
  v["members"] = members;
  if (full) {
    std::stable_sort(runs.begin(), runs.end(), [](const json& a, const json& b) {
      return a["started_at"] < b["started_at"];
    });
    v["runs"] = runs;
    v["explanation"] = explanation;
  }
  return v;
}

StatusOr<json> Daemon::List(const Caller& caller, const ListFilter& filter) {
  if (!caller.admin && !filter.tenant.empty() && filter.tenant != caller.tenant)
    return Status(StatusCode::kPermissionDenied,
                  "tenant '" + filter.tenant + "': a tenant token lists only its own workloads");
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    // Newest first: the page is the `limit` matches after the `offset` newest; every match
    // is counted for "total" (views are made for the page only). The store holds every
    // workload and answers the filter and the page; a workload the daemon holds is shown
    // from its record (what the engine says of it now), one it let go from the store.
    WorkloadQuery q;
    q.tenant = caller.admin ? filter.tenant : caller.tenant;
    q.kind = filter.kind;
    q.state = filter.state;
    q.offset = filter.offset;
    q.limit = filter.limit;
    auto page = store_->ListWorkloads(q);
    if (!page.ok()) return page.status();
    json out = json::array();
    for (WorkloadRow& row : page->rows) {
      auto it = workloads_.find(row.id);
      out.push_back(View(it != workloads_.end() ? it->second : *Stored(std::move(row)), false));
    }
    std::reverse(out.begin(), out.end());
    return json{{"workloads", out}, {"total", page->total}};
  });
}

StatusOr<json> Daemon::Get(const Caller& caller, std::string_view id_or_name) {
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    auto t = Resolve(caller, id_or_name);
    if (!t.ok()) return t.status();
    return t->service ? ServiceView(*t, true) : View(*t->recs.front(), true);
  });
}

std::string Daemon::Target::ServiceNote(const std::string& what) const {
  std::vector<std::string> names;
  for (const WorkloadRec* m : recs) names.push_back(m->row.name);
  return "'" + name + "' is a service with model variants, run as its members " +
         Join(names, ", ") + ": " + what;
}

namespace {

// What a run's end was: a preemption, another stop by airtime (a cancel, a scale-down, a
// node lost), or the process's own exit.
std::string RunEndKind(const RunRow& r) {
  if (r.stop_reason.rfind("preempted", 0) == 0) return "preempted";
  if (!r.stop_reason.empty() && r.stop_reason.rfind("exited", 0) != 0) return "stopped";
  return "exited";
}

}  // namespace

StatusOr<json> Daemon::EventsOf(const WorkloadRec& w) const {
  auto rows = store_->RunsOf(w.row.id);
  if (!rows.ok()) return rows.status();
  json events = json::array();
  auto add = [&](TimeMs at, const std::string& kind, int64_t run, const std::string& message) {
    events.push_back({{"at", at},
                      {"kind", kind},
                      {"run", run > 0 ? json(run) : json(nullptr)},
                      {"message", message}});
  };
  add(w.row.submitted_at, "submitted", 0,
      "submitted by tenant '" + w.row.tenant + "'; priority now " + std::to_string(w.row.priority));
  for (const RunRow& r : *rows) {
    std::string where = r.placed;
    if (where.empty())
      where = "started on " + (r.gpus.empty() ? std::string("no GPU") : Join(r.gpus, ", "));
    if (r.slurm_job > 0) where += " (Slurm job " + std::to_string(r.slurm_job) + ")";
    add(r.started_at, "started", r.id, where);
    if (r.ended_at) {
      std::string why = r.stop_reason;
      if (why.empty())
        why = r.exit_code ? "exited with status " + std::to_string(*r.exit_code) : "ended";
      add(*r.ended_at, RunEndKind(r), r.id, why);
    }
  }
  if (IsFinalState(w.row.state)) {
    add(w.row.finished_at.value_or(w.row.submitted_at), w.row.state, 0, w.row.message);
  } else {
    json view = View(w, false);
    add(WallNow(), w.row.state == "queued" ? "waiting" : "running", 0,
        view.value("reason", std::string()));
  }
  return events;
}

StatusOr<json> Daemon::Events(const Caller& caller, std::string_view id_or_name) {
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    auto t = Resolve(caller, id_or_name);
    if (!t.ok()) return t.status();
    // A service's events are its members', each message led by the member's name.
    json events = json::array();
    for (const WorkloadRec* w : t->recs) {
      auto mine = EventsOf(*w);
      if (!mine.ok()) return mine.status();
      for (json& e : *mine) {
        if (t->service) e["message"] = w->row.name + ": " + e["message"].get<std::string>();
        events.push_back(std::move(e));
      }
    }
    // Scraped samples that counted for no class (a service with a class label): counted,
    // the latest scrape's in words.
    if (auto s = skipped_samples_.find(t->name); t->service && s != skipped_samples_.end())
      events.push_back({{"at", s->second.last},
                        {"kind", "warning"},
                        {"run", nullptr},
                        {"message", "scraped demand: " + std::to_string(s->second.samples) +
                                        " sample(s) in " + std::to_string(s->second.scrapes) +
                                        " scrape(s) since " + FormatTime(s->second.first) +
                                        " counted for no class and were skipped; the latest: " +
                                        s->second.last_text}});
    std::stable_sort(events.begin(), events.end(),
                     [](const json& a, const json& b) { return a["at"] < b["at"]; });
    return json{{"events", events}};
  });
}

StatusOr<LogChunk> Daemon::Logs(const Caller& caller, std::string_view id_or_name,
                                const LogQuery& query) {
  // The run is looked up on the loop; its file is read here, off it (up to kMaxLogLimit).
  struct Found {
    int64_t run = 0;
    std::string path;
    bool ended = false;
  };
  auto found = OnLoop<StatusOr<Found>>([&]() -> StatusOr<Found> {
    auto t = Resolve(caller, id_or_name);
    if (!t.ok()) return t.status();
    if (t->service)
      return FailedPrecondition(t->ServiceNote("each has its own logs; ask for one of them"));
    WorkloadRec* const* w = &t->recs.front();
    auto rows = store_->RunsOf((*w)->row.id);
    if (!rows.ok()) return rows.status();
    const RunRow* pick = nullptr;
    for (const RunRow& r : *rows) {
      if (query.run == 0 ? (pick == nullptr || r.id > pick->id) : r.id == query.run) pick = &r;
    }
    const std::string name = (*w)->row.name;
    if (pick == nullptr && query.run == 0) return Found{};  // not run yet: no log, so far
    if (pick == nullptr) {
      return NotFound("workload '" + name + "' has no run " + std::to_string(query.run) +
                      " (`airtime describe` lists its runs)");
    }
    return Found{
        pick->id, RunPath(pick->run_dir, query.stderr_log ? kStderrLog : kStdoutLog),
        pick->ended_at.has_value() || pick->state == "exited" || pick->state == "abandoned"};
  });
  if (!found.ok()) return found.status();
  if (found->run == 0) return LogChunk{};
  const std::string cut = LogCutMark(found->path);
  auto range = ReadLogRange(found->path, query.offset, query.limit);
  if (!range.ok()) {
    // A run that has not written yet has an empty log, not an error.
    if (range.status().code() != StatusCode::kNotFound) return range.status();
    range = LogRange{};
  }
  LogChunk chunk{found->run,   range->offset,          range->size,
                 found->ended, std::move(range->data), LogCutMark(found->path)};
  // Cut while it was read: the bytes may be the new log's at the old offset. None, and the
  // new mark, so that a follower starts again from the log's new start.
  if (chunk.cut != cut) chunk.data.clear();
  return chunk;
}

Status Daemon::Cancel(const Caller& caller, std::string_view id_or_name) {
  return OnLoop<Status>([&]() -> Status {
    auto t = Resolve(caller, id_or_name);
    if (!t.ok()) return t.status();
    const WorkloadRec& first = *t->recs.front();
    // The mix of a service's variants is airtime's to choose: a member goes with its service.
    if (first.spec->realtime.is_member() && !t->service)
      return FailedPrecondition("workload '" + first.row.name + "' is a member of service '" +
                                first.spec->realtime.group +
                                "' (one of its model variants): cancel the service");
    std::vector<WorkloadRec*> live;
    for (WorkloadRec* w : t->recs)
      if (!IsFinalState(w->row.state)) live.push_back(w);
    if (live.empty())
      return FailedPrecondition(
          "workload '" + t->name + "' has already " +
          (first.row.state == "cancelled" ? "been cancelled" : first.row.state));
    return EndWorkloads(live, "cancelled",
                        "cancelled by " + (caller.admin ? std::string("the admin") : caller.tenant),
                        std::max(WallNow(), engine_->now()));
  });
}

Status Daemon::EndWorkloads(const std::vector<WorkloadRec*>& live, const std::string& state,
                            const std::string& message, TimeMs now) {
  std::vector<WorkloadRow> before;
  for (WorkloadRec* w : live) {
    before.push_back(w->row);
    w->row.state = state;
    w->row.finished_at = now;
    w->row.message = message;
  }
  int64_t sequence = 0;
  // The rows alone in the transaction; what Persist does beside them for an ended workload
  // (the backend lets it go; it stops counting against its tenant's limit) once they are
  // stored, so that a failed commit leaves the workloads as they were.
  Status st = store_->Transaction([&]() -> Status {
    for (WorkloadRec* w : live) AIRTIME_RETURN_IF_ERROR(store_->UpdateWorkload(w->row));
    auto seq = store_->BumpSequence();
    if (!seq.ok()) return seq.status();
    sequence = *seq;
    return OkStatus();
  });
  if (!st.ok()) {
    for (size_t i = 0; i < live.size(); ++i) live[i]->row = before[i];
    return st;
  }
  for (WorkloadRec* w : live) LetGoIfEnded(*w);
  marks_.sequence = sequence;
  SaveMarks();
  std::vector<Event> events;
  for (WorkloadRec* w : live) events.push_back(Event::Cancel(now, w->eid));
  FeedTogether(events);
  return OkStatus();
}

Status Daemon::SetPriority(const Caller& caller, std::string_view id_or_name, int priority) {
  return OnLoop<Status>([&]() -> Status {
    auto t = Resolve(caller, id_or_name);
    if (!t.ok()) return t.status();
    std::vector<WorkloadRec*> live;
    for (WorkloadRec* w : t->recs)
      if (!IsFinalState(w->row.state)) live.push_back(w);
    if (live.empty())
      return FailedPrecondition("workload '" + t->name + "' has ended (" +
                                t->recs.front()->row.state + "); its priority no longer matters");
    const TimeMs now = std::max(WallNow(), engine_->now());
    std::vector<Event> events;
    for (WorkloadRec* w : live) {
      w->row.priority = priority;
      AIRTIME_RETURN_IF_ERROR(Persist(*w));
      events.push_back(Event::Priority(now, w->eid, priority));
    }
    FeedSoon(events);
    return OkStatus();
  });
}

std::vector<Event> Daemon::DemandEvents(const WorkloadRec& w, int c, double rps, TimeMs now) const {
  const RealtimeProfile& rt = w.spec->realtime;
  if (!rt.is_member() || c < 0) return {Event::Demand(now, w.eid, rps)};
  std::vector<double> classes = engine_->job(w.eid).class_rps;
  classes.resize(rt.classes.size(), 0.0);
  classes[static_cast<size_t>(c)] = rps;
  return {Event::ClassDemand(now, w.eid, c, rps), Event::Demand(now, w.eid, rt.OwnDemand(classes))};
}

Status Daemon::ReportDemand(const Caller& caller, std::string_view id_or_name, double rps,
                            std::string_view request_class) {
  if (!std::isfinite(rps) || rps < 0 || rps > kMaxRps)
    return InvalidArgument("field 'rps': expected a request rate from 0 to 1e9 a second, found " +
                           std::to_string(rps));
  return OnLoop<Status>([&]() -> Status {
    auto t = Resolve(caller, id_or_name);
    if (!t.ok()) return t.status();
    const WorkloadRec& first = *t->recs.front();
    if (!first.spec->is_service())
      return FailedPrecondition("workload '" + first.row.name + "' is " + first.row.kind +
                                ", not a realtime service: it has no request rate");
    // A service's demand is one for all its members (each sees the whole service's).
    if (first.spec->realtime.is_member() && !t->service)
      return FailedPrecondition("workload '" + first.row.name + "' is a member of service '" +
                                first.spec->realtime.group +
                                "' (one of its model variants): report the service's demand");
    // The class: named, or the service's only one (a service with variants and no classes
    // has one, "all"; a plain service has none and takes no class).
    const std::vector<RequestClass>& classes = first.spec->realtime.classes;
    std::vector<std::string> names;
    for (const RequestClass& rc : classes) names.push_back(rc.name);
    int c = 0;
    if (!request_class.empty()) {
      auto at = std::find(names.begin(), names.end(), request_class);
      if (names.empty())
        return InvalidArgument("field 'class': workload '" + t->name +
                               "' does not split its demand by request class; report it "
                               "without one");
      if (at == names.end())
        return InvalidArgument("field 'class': service '" + t->name + "' has no request class '" +
                               std::string(request_class) + "' (its classes: " + Join(names, ", ") +
                               ")");
      c = static_cast<int>(at - names.begin());
    } else if (names.size() > 1) {
      return InvalidArgument("field 'class': service '" + t->name +
                             "' splits its demand by request class (" + Join(names, ", ") +
                             "): name the class this rate is for");
    }
    std::vector<WorkloadRec*> live;
    for (WorkloadRec* w : t->recs)
      if (!IsFinalState(w->row.state)) live.push_back(w);
    if (live.empty())
      return FailedPrecondition("workload '" + t->name + "' has ended (" + first.row.state + ")");
    const TimeMs now = std::max(WallNow(), engine_->now());
    std::vector<Event> events;
    for (WorkloadRec* w : live) {
      const std::vector<Event> mine = DemandEvents(*w, c, rps, now);
      // Stored, what a restart feeds back: the rate where one rate is the whole demand (a
      // plain service, a service with one class); with several classes, the class's rate
      // and the member's own demand that follows (the last event's).
      if (classes.size() <= 1)
        AIRTIME_RETURN_IF_ERROR(RecordDemand(*w, rps, now));
      else
        AIRTIME_RETURN_IF_ERROR(RecordDemand(*w, mine.back().rps, now, {{names[c], rps}}));
      events.insert(events.end(), mine.begin(), mine.end());
    }
    FeedSoon(events);
    return OkStatus();
  });
}

StatusOr<json> Daemon::Gpus(const Caller&) {
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    std::map<std::string, json> holders;
    for (const auto& [aid, a] : engine_->allocations()) {
      auto rit = run_of_allocation_.find(aid);
      const auto wit = by_engine_id_.find(a.workload);
      if (wit == by_engine_id_.end()) continue;
      const WorkloadRec& w = workloads_.at(wit->second);
      for (GpuIndex g : a.placement.gpus)
        holders[uuid_of_gpu_[static_cast<size_t>(g)]].push_back(
            {{"workload", w.row.id},
             {"name", w.row.name},
             {"tenant", w.row.tenant},
             {"milli", a.placement.milli},
             {"run", rit == run_of_allocation_.end() ? json(nullptr) : json(rit->second)}});
    }
    // How the ledger counts each scheduled GPU now (its buckets, in milli-GPUs).
    const std::vector<GpuBuckets> buckets = ledger_->GpuBucketsNow();
    json gpus = json::array();
    for (const GpuDevice& d : devices_) {
      json g = {{"index", d.index},
                {"uuid", d.uuid},
                {"model", d.model},
                {"type", d.type},
                {"memory_mib", d.memory_mib},
                {"mig_mode", d.mig_enabled},
                {"fake", d.fake},
                {"scheduled", gpu_of_uuid_.count(d.uuid) > 0}};
      auto t = telemetry_.find(d.uuid);
      if (t != telemetry_.end()) {
        const GpuSample& s = t->second;
        g["utilization"] = s.utilization ? json(*s.utilization) : json(nullptr);
        g["memory_used_mib"] = s.memory_used_mib ? json(*s.memory_used_mib) : json(nullptr);
        g["power_w"] = s.power_w ? json(*s.power_w) : json(nullptr);
        g["processes"] = s.pids;
        g["sampled_at"] = s.at;
      }
      auto h = holders.find(d.uuid);
      g["allocations"] = h == holders.end() ? json::array() : h->second;
      g["bucket"] = nullptr;
      g["bucket_milli"] = json::object();
      if (auto gi = gpu_of_uuid_.find(d.uuid);
          gi != gpu_of_uuid_.end() && static_cast<size_t>(gi->second) < buckets.size()) {
        const GpuBuckets& b = buckets[static_cast<size_t>(gi->second)];
        g["bucket"] = BucketName(b.main());
        for (int k = 0; k < kBucketCount; ++k)
          if (b.milli[static_cast<size_t>(k)] != 0)
            g["bucket_milli"][BucketName(static_cast<Bucket>(k))] = b.milli[static_cast<size_t>(k)];
      }
      gpus.push_back(std::move(g));
    }
    return json{{"gpus", gpus}, {"backend", BackendView()}};
  });
}

StatusOr<json> Daemon::GpuHistory(const Caller&, const HistoryFilter& filter) {
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    std::vector<size_t> picked;
    std::vector<std::string> uuids;
    for (size_t i = 0; i < devices_.size(); ++i) {
      uuids.push_back(devices_[i].uuid);
      if (!filter.gpu.empty() &&
          (filter.gpu == devices_[i].uuid || filter.gpu == std::to_string(devices_[i].index)))
        picked.push_back(i);
    }
    if (!filter.gpu.empty() && picked.empty())
      return NotFound("no GPU '" + filter.gpu + "' (GET /v1/gpus lists their UUIDs and indices)");
    const TimeMs now = WallNow();
    if (!history_)
      return airtime::GpuHistory(devices_.size()).Json(now, filter.minutes, picked, uuids);
    return history_->Json(now, filter.minutes, picked, uuids);
  });
}

bool Daemon::Healthy(std::string* why) {
  if (!running_) {
    if (why) *why = "the event loop is not running";
    return false;
  }
  // The loop answers within a second when it is alive.
  auto p = std::make_shared<std::promise<void>>();
  auto f = p->get_future();
  Post([p] { p->set_value(); });
  if (f.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    if (why) *why = "the event loop has not answered for 5 s";
    return false;
  }
  return true;
}

}  // namespace airtime
