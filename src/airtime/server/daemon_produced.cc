// Daemon: variants that a later submission's job produces (docs/server.md, "Model variants").
//
// A service may declare a variant `awaits_producer: true`: a quantize or finetune job makes
// it, and that job may come in a later submission. Such a job's `produces` names a service
// the daemon accepted earlier; the parser leaves it unlinked (ParseSubmissionYaml) and the
// daemon links it here: the job becomes the variant's producer in every member's spec, as
// the same submission's job would have been at parse time. A restart links it again from
// the stored texts (Recover).
#include "airtime/config/workload_yaml.h"
#include "airtime/server/daemon.h"

namespace airtime {

namespace {

// "SOURCE: workload 'job': field 'produces.<field>': <message>", a 400.
Status ClaimError(const WorkloadSpec& job, const std::string& field, const std::string& message) {
  const std::string& where =
      field == "service" ? job.produces.service_source : job.produces.variant_source;
  return InvalidArgument((where.empty() ? job.source : where) + ": workload '" + job.name +
                         "': field 'produces." + field + "': " + message);
}

}  // namespace

StatusOr<std::vector<Daemon::VariantClaim>> Daemon::CheckClaims(
    const Caller& caller, const std::vector<WorkloadSpec>& specs,
    std::map<std::string, std::string>* claimed) const {
  std::vector<VariantClaim> claims;
  for (size_t k = 0; k < specs.size(); ++k) {
    const WorkloadSpec& job = specs[k];
    const ProducedVariant& p = job.produces;
    if (p.empty()) continue;
    // A service of the same submission was linked at parse time.
    bool here = false;
    for (const WorkloadSpec& s : specs) here |= s.realtime.group == p.service;
    if (here) continue;
    auto visible = [&](const WorkloadRec* w) {
      return caller.admin || w->row.tenant == caller.tenant;
    };
    const std::vector<WorkloadRec*> members = MembersOf(p.service);
    if (members.empty() || !visible(members.front())) {
      std::string found = "'" + p.service + "'";
      if (const WorkloadRec* w = Lookup(p.service); w && visible(w)) {
        found += w->spec->is_service() ? ", a realtime service without variants"
                                       : ", a " + w->row.kind + " job";
      }
      return ClaimError(job, "service",
                        "expected a realtime service with variants, of this submission or "
                        "accepted before, found " +
                            found);
    }
    std::vector<const WorkloadRec*> recs;
    const WorkloadRec* live = nullptr;
    for (const WorkloadRec* m : members) {
      recs.push_back(m);
      if (!live && !IsFinalState(recs.back()->row.state)) live = recs.back();
    }
    if (!live)
      return ClaimError(job, "service",
                        "service '" + p.service + "' has ended (" + recs.front()->row.state +
                            "): none of its variants will run");
    const RealtimeProfile& rt = live->spec->realtime;
    const StatusOr<size_t> found = FindProducedVariant(rt, p);
    if (!found.ok()) return ClaimError(job, "variant", found.status().message());
    const size_t v = *found;
    const ModelVariant& mv = rt.variants[v];
    const std::string key = p.service + "/" + p.variant;
    if (auto done = produced_variants_.find(key); done != produced_variants_.end())
      return ClaimError(
          job, "variant",
          "variant '" + key + "' has been produced already, by job '" + done->second + "'");
    if (auto other = claimed->find(key); other != claimed->end())
      return ClaimError(job, "variant",
                        "variant '" + key + "' is already claimed by job '" + other->second +
                            "' of this submission; one job makes each variant");
    if (mv.produced_by.empty() && !mv.awaits_producer)
      return ClaimError(job, "variant",
                        "variant '" + key +
                            "' is not one a job produces: it runs from the start (a variant "
                            "that a later job produces is declared with awaits_producer: true)");
    if (!mv.produced_by.empty()) {
      // Its producer: one that completed made it; a live one is making it; one that failed
      // or was cancelled left it waiting, and this job may take its place.
      const WorkloadRec* named = Lookup(mv.produced_by);
      const std::string state = named ? named->row.state : "";
      if (state == "succeeded")
        return ClaimError(
            job, "variant",
            "variant '" + key + "' has been produced already, by job '" + mv.produced_by + "'");
      if (!IsFinalState(state))
        return ClaimError(job, "variant",
                          "variant '" + key + "' is already claimed by job '" + mv.produced_by +
                              "' (" + (state.empty() ? "not submitted yet" : state) +
                              "); one job makes each variant");
    }
    claimed->emplace(key, job.name);
    claims.push_back(VariantClaim{p.service, v, k});
  }
  return claims;
}

void Daemon::ApplyClaim(const VariantClaim& claim, const std::string& job) {
  for (int64_t id : members_of_.at(claim.service)) {
    WorkloadRec& m = workloads_.at(id);
    if (m.eid != kNoWorkload) {
      auto spec = engine_->SetVariantProducer(m.eid, claim.variant, job);
      if (spec.ok()) {
        m.spec = *spec;
        continue;
      }
    }
    auto spec = std::make_shared<WorkloadSpec>(*m.spec);
    spec->realtime.variants[claim.variant].produced_by = job;
    m.spec = std::move(spec);
  }
}

}  // namespace airtime
