// Explanations: why a workload waits, in words a user can act on.
#include <algorithm>
#include <cstdio>

#include "airtime/base/strings.h"
#include "airtime/engine/engine.h"

namespace airtime {
namespace {

std::string GpuList(const Cluster& c, const std::vector<GpuIndex>& gpus) {
  std::vector<std::string> names;
  for (size_t i = 0; i < gpus.size() && i < 8; ++i) names.push_back(c.gpu_name(gpus[i]));
  std::string s = Join(names, ", ");
  if (gpus.size() > 8) s += " and " + std::to_string(gpus.size() - 8) + " more";
  return s;
}

}  // namespace

std::string Engine::FilteredOut(const Job& job) const {
  // The first filter that turns away a node with room names the policy's reason.
  for (size_t n = 0; n < cluster_->node_count(); ++n) {
    const auto node = static_cast<NodeIndex>(n);
    if (!state_.FitsOnNode(job.s().shape, node)) continue;
    for (const auto& f : policy_.filters)
      if (!f->Allows(job, node, *this))
        return "it would fit now on " + cluster_->node(node).name + ", which policy '" +
               policy_.name + "' keeps from it (filter '" + std::string(f->name()) + "')";
  }
  return "it would fit now if policy '" + policy_.name + "' allowed it";
}

std::string Engine::UnproducedNote(const RealtimeProfile& rt) const {
  const ModelVariant& mv = rt.variants[static_cast<size_t>(rt.variant)];
  if (mv.produced_by.empty())
    return "variant '" + mv.name + "' of '" + rt.group +
           "' runs only once a quantize or finetune job has produced it; none names it yet";
  const std::optional<WorkloadId> producer = FindByName(mv.produced_by);
  std::string state = "which has not arrived";
  if (producer) {
    const Job& p = job(*producer);
    state = p.phase == JobPhase::kCancelled ? "which was cancelled: the variant will not run"
            : p.phase == JobPhase::kRunning ? "which is running"
            : p.failures > 0                ? "which failed and waits to run again"
                                            : "which waits to start";
  }
  return "variant '" + mv.name + "' of '" + rt.group + "' runs only once job '" + mv.produced_by +
         "' has produced it, " + state;
}

std::string Engine::Explain(WorkloadId id) const {
  if (id < 0 || static_cast<size_t>(id) >= jobs_.size()) return "unknown workload";
  const Job& job = jobs_[static_cast<size_t>(id)];
  const WorkloadSpec& spec = job.s();
  const std::string shape = spec.shape.Describe(catalog());
  char buf[256];
  const RealtimeProfile& rt = spec.realtime;
  if (job.phase != JobPhase::kCancelled && rt.is_member() &&
      !VariantAvailable(rt, static_cast<size_t>(rt.variant)))
    return UnproducedNote(rt);
  switch (job.phase) {
    case JobPhase::kDone:
      return "finished at " + FormatTime(job.finished);
    case JobPhase::kCancelled:
      return "cancelled at " + FormatTime(job.finished);
    case JobPhase::kRunning:
    case JobPhase::kPending:
      if (job.is_service() && job.live_replicas() < job.target_replicas) break;  // explain wait
      // Not scaled yet (no cycle since it came, or the engine is paused): its target means
      // nothing yet, and the wait says so.
      if (job.is_service() && !job.scaled) break;
      if (job.is_service()) {
        // A service at its target, none included (a model variant its mix gives no replica).
        if (job.live_replicas() == 0)
          std::snprintf(buf, sizeof buf, "no replica: its target is 0 (demand %.1f req/s)",
                        job.demand_rps);
        else
          std::snprintf(buf, sizeof buf, "serving %.1f req/s with %d replica(s) (target %d)",
                        job.demand_rps, job.live_replicas(), job.target_replicas);
        const std::string why = policy_.scale ? policy_.scale->WhyTarget(job, *this) : "";
        return why.empty() ? std::string(buf) : std::string(buf) + ": " + why;
      }
      if (job.phase == JobPhase::kPending) break;
      {
        const Allocation* a = allocation(job.allocations.front());
        std::string s = "running on " + GpuList(*cluster_, a->placement.gpus) + " since " +
                        FormatTime(a->started);
        if (a->expected_end != kNever)
          s += ", expected to finish at " + FormatTime(a->expected_end);
        return s;
      }
  }
  const WaitInfo& w = job.wait;
  std::string prefix = job.is_service()
                           ? "needs " + std::to_string(job.target_replicas - job.live_replicas()) +
                                 " more replica(s) of " + shape
                           : "waits for " + shape;
  switch (w.reason) {
    case WaitReason::kNone:
      return prefix + "; not yet considered by a decision cycle";
    case WaitReason::kNoSuchHardware: {
      std::vector<std::string> installed;
      for (size_t t = 0; t < catalog().size(); ++t)
        if (cluster_->gpus_per_type()[t] > 0)
          installed.push_back(catalog().type(static_cast<GpuTypeId>(t)).name);
      return prefix + "; no installed GPU can ever take it (the cluster has " +
             Join(installed, ", ") + "): change gpu_type, memory_gb or mig";
    }
    case WaitReason::kTooLarge:
      return prefix + "; no node or " + LocalityName(spec.shape.locality) +
             " domain has that many GPUs of an allowed type: ask for fewer GPUs or a wider "
             "locality (nvlink, rack, any)";
    case WaitReason::kBehindHead: {
      const std::string head =
          w.blocker >= 0 ? jobs_[static_cast<size_t>(w.blocker)].s().name : "?";
      std::string s = prefix + "; queued behind '" + head + "' in " + policy_.name + " order";
      if (w.fits_in_policy) return s + " although it would fit now (head-of-line blocking)";
      if (w.fits_now) return s + "; " + FilteredOut(job);
      return s + " and would not fit now either";
    }
    case WaitReason::kPolicy: {
      std::vector<std::string> why;
      for (const auto& p : policy_.permits) {
        std::string w = p->WhyHeld(job, *this);
        if (!w.empty()) why.push_back(std::move(w));
      }
      if (why.empty())
        for (const auto& p : policy_.permits) why.push_back(std::string(p->name()));
      return prefix + "; a place was free but policy '" + policy_.name +
             "' held it back: " + Join(why, "; ") + PermitNotes(job) + OrderNote(job);
    }
    case WaitReason::kBackoff: {
      const std::string last = job.is_service() ? "its replicas' last run" : "its last run";
      return prefix + "; " + last + " failed (" + std::to_string(job.failed_in_a_row) +
             " time(s) in a row): not started again before " + FormatTime(job.restart_at) +
             ", a backoff that doubles with each failure in a row (a command that fails at "
             "once is not restarted in a tight loop)";
    }
    case WaitReason::kNoFit:
      break;
  }
  // A host-only task (no GPU) waits for host CPU and memory: GPUs are no part of its account.
  const bool host_only = spec.shape.gpu_count == 0;
  std::string s = prefix;
  if (!host_only) {
    std::snprintf(buf, sizeof buf,
                  "; %d whole GPU(s) of an allowed type free (%.2f GPUs of capacity)",
                  w.free_compatible, static_cast<double>(w.free_compatible_milli) / 1000.0);
    s += buf;
  }
  if (w.fits_now) {
    s += "; " + FilteredOut(job);
  } else if (const std::string host = HostShortNote(job); !host.empty()) {
    s += "; " + host;
  } else if (!host_only && spec.shape.mode == ShareMode::kWhole &&
             w.free_compatible >= spec.shape.gpu_count) {
    s += ": enough by count but not in one place (fragmentation)";
  }
  // Who holds what it could use (GPUs of its types; for a host-only task, host CPU and
  // memory), and when the first of them is expected to free up.
  const Allocation* next = nullptr;
  int holders = 0;
  for (const auto& [aid, a] : allocations_) {
    const bool holds = host_only
                           ? a.placement.host_node >= 0 &&
                                 (a.placement.cpu_milli > 0 || a.placement.memory_mib > 0)
                           : !a.placement.gpus.empty() &&
                                 spec.shape.AllowsType(cluster_->gpu_type(a.placement.gpus[0]));
    if (!holds) continue;
    ++holders;
    if (a.expected_end != kNever && (!next || a.expected_end < next->expected_end)) next = &a;
  }
  if (holders > 0) {
    s += "; " + std::to_string(holders) + " allocation(s) hold " +
         (host_only ? "host CPU or memory" : "GPUs it could use");
    if (next) {
      const Job& h = jobs_[static_cast<size_t>(next->workload)];
      const std::string where = host_only ? cluster_->node(next->placement.host_node).name
                                          : GpuList(*cluster_, next->placement.gpus);
      s += "; the next to free up is '" + h.s().name + "' (" + KindName(h.s().kind) +
           ", priority " + std::to_string(h.priority) + ") on " + where + ", expected at " +
           FormatTime(next->expected_end);
    }
  }
  s += PermitNotes(job);
  if (job.preempt_retry_at > now_)
    s += "; room made for it by preemption went unused (the policy held it back there), so "
         "no work is stopped for it again before " +
         FormatTime(job.preempt_retry_at);
  return s + OrderNote(job);
}

std::string Engine::HostShortNote(const Job& job) const {
  // One node at a time: a gang that spans nodes, or one that waits for its GPUs in one place,
  // keeps the account of GPUs (fragmentation, or too few free).
  const Shape& shape = job.s().shape;
  if (shape.cpu_milli <= 0 && shape.memory_mib <= 0) return "";
  Shape gpus_only = shape;
  gpus_only.cpu_milli = 0;
  gpus_only.memory_mib = 0;
  int nodes = 0;
  std::string first;
  for (size_t i = 0; i < cluster_->node_count(); ++i) {
    const auto n = static_cast<NodeIndex>(i);
    if (!NodeAllowed(job, n) || !state_.FitsOnNode(gpus_only, n) || state_.FitsOnNode(shape, n))
      continue;
    if (++nodes > 1) continue;
    const Node& node = cluster_->node(n);
    const NodeSummary& free = state_.node(n);
    std::vector<std::string> short_of;
    char buf[160];
    if (node.cpu_milli > 0 && shape.cpu_milli > free.cpu_free) {
      std::snprintf(buf, sizeof buf, "%.4g of the %.4g CPUs it asks are free",
                    static_cast<double>(free.cpu_free) / 1000.0,
                    static_cast<double>(shape.cpu_milli) / 1000.0);
      short_of.emplace_back(buf);
    }
    if (node.memory_mib > 0 && shape.memory_mib > free.memory_free) {
      std::snprintf(buf, sizeof buf, "%.4g of the %.4g GiB of memory it asks are free",
                    static_cast<double>(free.memory_free) / 1024.0,
                    static_cast<double>(shape.memory_mib) / 1024.0);
      short_of.emplace_back(buf);
    }
    first = node.name + ", " + Join(short_of, " and ");
  }
  if (nodes == 0) return "";
  const std::string others =
      nodes > 1 ? ", and so on " + std::to_string(nodes - 1) + " other node(s)" : "";
  if (shape.gpu_count == 0)
    return "it needs no GPU, and no node it may use has the host resources it asks free: on " +
           first + others;
  return "the GPUs it asks for are free, but not the host resources: on " + first + others +
         " (host CPU or memory, not GPUs, keeps it waiting)";
}

std::string Engine::PermitNotes(const Job& job) const {
  std::string s;
  for (const auto& p : policy_.permits) {
    std::string note = p->WaitNote(job, *this);
    if (!note.empty()) s += "; " + note;
  }
  return s;
}

std::string Engine::OrderNote(const Job& job) const {
  const std::string note = policy_.queue_sort->Note(job);
  return note.empty() ? note : "; " + note;
}

}  // namespace airtime
