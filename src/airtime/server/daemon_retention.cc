// Daemon: bounded memory for ended workloads (docs/server.md "Limits").
//
// The daemon holds a record (WorkloadRec: the row, the spec, the engine's id) of every
// workload that has not ended, and of the options_.ended_kept that ended last. An older
// ended workload is let go: its record, its names in the indexes, and the engine's job
// (Engine::Forget: its spec at once, its memory once its chunk of ids is all forgotten). The
// store holds every workload, so a call that names one that was let go reads it back for
// that call alone (stored_): its row, and for a service its spec parsed from its accepted
// submission as recovery parses it (of another kind the row says all that calls ask). What
// was let go has ended for good: nothing changes it any more, so the copy read back answers
// as the record did.
//
// A service with model variants runs as its members: they are let go together, once all of
// them have ended, so that the service's name finds all of its members or none in memory.
#include <algorithm>
#include <limits>

#include "airtime/server/daemon.h"
#include "airtime/server/live_spec.h"
#include "airtime/server/submission.h"

namespace airtime {

void Daemon::CountActive(WorkloadRec& w) {
  if (w.counted_active || IsFinalState(w.row.state)) return;
  w.counted_active = true;
  ++active_of_tenant_[w.row.tenant];
}

void Daemon::NoteEnded(WorkloadRec& w) {
  if (w.ended_noted || !IsFinalState(w.row.state)) return;
  if (w.counted_active) {
    w.counted_active = false;
    auto it = active_of_tenant_.find(w.row.tenant);
    if (it != active_of_tenant_.end() && --it->second <= 0) active_of_tenant_.erase(it);
  }
  w.ended_noted = true;
  ended_.push_back(w.row.id);
}

void Daemon::TrimEnded() {
  stored_.clear();  // read back for a call that has finished
  unreadable_.clear();
  if (ended_.size() <= options_.ended_kept) return;
  // Workloads a run still refers to (a stopping process not reaped yet, a launch queued)
  // stay until it has gone.
  std::set<int64_t> busy;
  for (const auto& [id, run] : runs_) busy.insert(run.row.workload_id);
  std::vector<int64_t> later;  // could not go yet: they keep their place in the order
  while (ended_.size() > options_.ended_kept) {
    const int64_t id = ended_.front();
    ended_.pop_front();
    auto it = workloads_.find(id);
    if (it == workloads_.end()) continue;  // went with its service's other members
    const WorkloadRec& w = it->second;
    std::vector<int64_t> group = {id};
    if (w.spec->realtime.is_member()) group = members_of_.at(w.spec->realtime.group);
    const bool ready = std::all_of(group.begin(), group.end(), [&](int64_t m) {
      const WorkloadRec& r = workloads_.at(m);
      return IsFinalState(r.row.state) && !busy.count(m);
    });
    if (!ready) {
      later.push_back(id);
      continue;
    }
    if (w.spec->realtime.is_member()) members_of_.erase(w.spec->realtime.group);
    for (int64_t m : group) Evict(m);
  }
  ended_.insert(ended_.begin(), later.begin(), later.end());
}

void Daemon::Evict(int64_t id) {
  auto it = workloads_.find(id);
  if (it == workloads_.end()) return;
  const WorkloadRec& w = it->second;
  if (w.spec->is_service()) ended_specs_.Keep(w.row.submission_id, w.row.index, *w.spec);
  if (w.eid != kNoWorkload) {
    engine_->Forget(w.eid);
    by_engine_id_.erase(w.eid);
  }
  if (auto n = by_name_.find(w.row.name); n != by_name_.end() && n->second == id) by_name_.erase(n);
  counters_.erase(counters_.lower_bound({id, std::numeric_limits<int>::min()}),
                  counters_.lower_bound({id + 1, std::numeric_limits<int>::min()}));
  ++evicted_counts_[{w.row.state, w.row.kind}];
  workloads_.erase(it);
}

Daemon::WorkloadRec* Daemon::Stored(WorkloadRow row) const {
  if (auto it = stored_.find(row.id); it != stored_.end()) return &it->second;
  WorkloadRec w;
  w.row = std::move(row);
  WorkloadSpec spec;
  spec.name = w.row.name;
  if (auto kind = ParseKind(w.row.kind); kind.ok()) spec.kind = *kind;
  // What the calls read of an ended workload's spec beyond its row is a service's: its
  // classes, and whether it is a member of a service with variants (and which). It is kept
  // from when the daemon let it go; after a restart its submission is parsed back once, and
  // the services of that submission are kept (ended_service_specs.h).
  if (spec.is_service()) {
    auto kept = ended_specs_.Find(w.row.submission_id, w.row.index);
    if (!kept && !unreadable_.count(w.row.submission_id)) {
      auto sub = store_->GetSubmission(w.row.submission_id);
      auto sc = sub.ok() ? ParseStoredSubmission(sub->body, sub->origin)
                         : StatusOr<Scenario>(sub.status());
      const auto index = static_cast<size_t>(w.row.index);
      if (sc.ok() && w.row.index >= 0 && index < sc->workloads.size()) {
        // Its neighbours (a service's other members) are likely asked next; a few of them
        // are kept too, and the one asked for last, so that it is the most recent.
        for (size_t i = 0, kept_others = 0; i < sc->workloads.size() && kept_others < 64; ++i) {
          if (i == index || !sc->workloads[i].is_service()) continue;
          ended_specs_.Keep(w.row.submission_id, static_cast<int32_t>(i), sc->workloads[i]);
          ++kept_others;
        }
        ended_specs_.Keep(w.row.submission_id, w.row.index, sc->workloads[index]);
        kept = ended_specs_.Find(w.row.submission_id, w.row.index);
      } else {
        unreadable_.insert(w.row.submission_id);  // not tried again in this call
      }
    }
    if (kept) spec = *kept;
  }
  spec.tenant = w.row.tenant;
  spec.priority = w.row.priority;
  w.spec = LiveSpec(std::move(spec), w.row.submitted_at);
  const int64_t id = w.row.id;
  return &stored_.emplace(id, std::move(w)).first->second;
}

Daemon::WorkloadRec* Daemon::Lookup(std::string_view id_or_name) const {
  const std::string key(id_or_name);
  const bool numeric =
      !key.empty() && key.find_first_not_of("0123456789") == std::string::npos && key.size() < 18;
  if (numeric) {
    const int64_t id = std::stoll(key);
    if (auto it = workloads_.find(id); it != workloads_.end())
      return const_cast<WorkloadRec*>(&it->second);
    if (auto row = store_->GetWorkload(id); row.ok() && row->has_value())
      return Stored(std::move(**row));
  }
  if (auto it = by_name_.find(key); it != by_name_.end())
    return const_cast<WorkloadRec*>(&workloads_.at(it->second));
  if (auto row = store_->GetWorkloadNamed(key); row.ok() && row->has_value())
    return Stored(std::move(**row));
  return nullptr;
}

std::vector<Daemon::WorkloadRec*> Daemon::MembersOf(const std::string& service) const {
  std::vector<WorkloadRec*> out;
  if (auto it = members_of_.find(service); it != members_of_.end()) {
    for (int64_t id : it->second) out.push_back(const_cast<WorkloadRec*>(&workloads_.at(id)));
    return out;
  }
  // Let go: its members' names begin with "<service>/", and their specs say so.
  auto rows = store_->WorkloadsNamedFrom(service + "/");
  if (!rows.ok()) return out;
  for (WorkloadRow& row : *rows) {
    WorkloadRec* m = Stored(std::move(row));
    if (m->spec->realtime.is_member() && m->spec->realtime.group == service) out.push_back(m);
  }
  return out;
}

bool Daemon::NameInUse(const std::string& name) const {
  return by_name_.count(name) || members_of_.count(name) || store_->NameTaken(name) ||
         !MembersOf(name).empty();
}

}  // namespace airtime
