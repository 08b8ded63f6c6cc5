// slurmrestd's openapi/slurmctld API of Slurm 23.11 to 25.11: v0.0.40 (23.11 to 25.05),
// v0.0.41 (24.05 to 25.11), v0.0.42 (24.11 to 25.11), v0.0.43 (25.05, 25.11) and v0.0.44
// (25.11). One implementation, since they write alike every field airtime reads or writes.
// Written from Slurm's own data_parser source (src/plugins/data_parser/v0.0.4N/parsers.c at
// slurm-23-11-11-1, slurm-24-05-8-1, slurm-24-11-6-1 and master) and its slurmctld handlers
// (src/slurmrestd/plugins/openapi/slurmctld/jobs.c), not recorded from a running server: the
// lab's Slurm is Debian 12's 22.05 (docs/slurm.md says what that leaves untested). Against
// v0.0.38 (api_v0_0_38.cc):
//   - numbers that may be unset or infinite are {"set","infinite","number"} objects
//     (priority, submit_time, start_time); the rest stay plain integers (job_id,
//     restart_cnt, cpus);
//   - a job's state is an array of Slurm's state words, the base state ("RUNNING") and its
//     flags ("COMPLETING", "REQUEUED"); a node's state is one array too (["IDLE", "DRAIN"]);
//   - a job's exit code is {"status": [...], "return_code": N, "signal": {"id": N}};
//   - a job's allocated nodes, in gres_detail's order, are job_resources.allocated_nodes[]
//     .nodename in v0.0.40 and job_resources.nodes.allocation[].name from v0.0.41;
//   - a partition reports no "default" flag (the flags are not written);
//   - the ping's release is in meta.slurm.release (meta.Slurm in v0.0.38);
//   - a submission carries its script in "job" (a top-level "script" is deprecated from
//     v0.0.41), its GRES as "tres_per_node" ("gres/gpu:h100:2"), its nodes as
//     "required_nodes", its environment as an array of NAME=VALUE, open_mode and the warning
//     signal as Slurm's flags and words; a held submission's notice is a warning, not an error;
//   - an update takes "required_nodes" (no scontrol needed to steer a pending job);
//   - DELETE job/{id}?signal=NAME signals every process of the job (KILL_FULL_JOB), as in
//     v0.0.38.
#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>

#include "airtime/base/strings.h"
#include "airtime/slurm/api_shapes.h"
#include "airtime/slurm/api_shapes_util.h"

namespace airtime::slurm {
namespace {

using nlohmann::json;
using shapes::Hostlist;
using shapes::ParseEach;

// Slurm's job state words: the base states, and the flags that job_state_string() (what
// squeue and v0.0.38 print) names before the base state, in its order.
constexpr std::array<std::string_view, 12> kJobBaseStates = {
    "PENDING", "RUNNING",   "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED",
    "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY"};
// (EXPEDITING: 25.11 on.)
constexpr std::array<std::string_view, 13> kJobShownFlags = {
    "COMPLETING", "STAGE_OUT",     "CONFIGURING",  "EXPEDITING",   "RESIZING",
    "REQUEUED",   "REQUEUE_FED",   "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED",
    "REVOKED",    "RESV_DEL_HOLD", "SIGNALING"};
constexpr std::array<std::string_view, 8> kNodeBaseStates = {
    "UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE", "INVALID"};

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& words, const std::string& w) {
  for (std::string_view x : words)
    if (x == w) return true;
  return false;
}

// The one word a state array stands for, as job_state_string() writes it: the first flag of
// kJobShownFlags it has, else its base state. "" (with the error on `f`) when it has none.
std::string JobState(JsonFields& f, const std::vector<std::string>& words) {
  for (std::string_view flag : kJobShownFlags)
    for (const std::string& w : words)
      if (w == flag) return w;
  for (const std::string& w : words)
    if (OneOf(kJobBaseStates, w)) return w;
  if (f.status().ok())
    f.Fail("job_state",
           words.empty() ? "missing or empty" : "no base state in [" + Join(words, ", ") + "]");
  return "";
}

// A wait status (what v0.0.38 and squeue report) from v0.0.40's exit code object, so that
// the actuator reads both alike: the signal in the low 7 bits, else the return code << 8.
int64_t WaitStatus(const json& item, JsonFields& f) {
  auto it = item.find("exit_code");
  if (it == item.end() || it->is_null()) return 0;
  if (it->is_number_integer()) return f.OptionalInt("exit_code");
  if (!it->is_object()) {
    f.Fail("exit_code", "expected an object or an integer, got " + JsonTypeName(*it));
    return 0;
  }
  JsonFields code(*it, f.where() + ".exit_code");
  const std::vector<std::string> status = code.OptionalStringArray("status");
  const int64_t rc = code.OptionalNoValInt("return_code", -1);
  int64_t sig = 0;
  if (auto s = it->find("signal"); s != it->end() && !s->is_null()) {
    JsonFields signal(*s, code.where() + ".signal");
    sig = signal.OptionalNoValInt("id", 0);
    code.Merge(signal.status());
  }
  f.Merge(code.status());
  if (!code.status().ok()) return 0;
  // -1 (ExitCodeOf: unknown) where the object does not say: a signal without its number, a
  // return code not set or out of range, an INVALID status.
  auto has = [&](const char* word) {
    return std::find(status.begin(), status.end(), word) != status.end();
  };
  if (has("SIGNALED") || has("CORE_DUMPED")) return sig >= 1 && sig <= 127 ? sig : -1;
  if (has("PENDING") || (status.empty() && rc == 0)) return 0;
  if (has("INVALID") || rc < 0 || rc > 255) return -1;
  return rc << 8;
}

// One node: its state array is its base state (the first base word; INVALID, Slurm's word
// for an unset state, read as unknown) and its flags.
StatusOr<SlurmNode> ReadNode(JsonFields& f) {
  SlurmNode n;
  n.name = f.String("name");
  for (const std::string& w : f.OptionalStringArray("state")) {
    if (n.state.empty() && OneOf(kNodeBaseStates, w))
      n.state = w == "INVALID" ? "unknown" : ToLower(w);
    else
      n.state_flags.push_back(w);
  }
  shapes::ReadNodeFields(f, n);
  if (!f.status().ok()) return f.status();
  if (n.name.empty()) return InvalidArgument(f.where() + ".name: empty");
  if (n.state.empty()) return InvalidArgument(f.where() + ".state: no base state");
  return n;
}

class ShapesV0040 final : public ApiShapes {
 public:
  // `allocation`: the job_resources of v0.0.41 and later (nodes.allocation[].name).
  ShapesV0040(std::string version, bool allocation)
      : version_(std::move(version)), allocation_(allocation) {}

  std::string_view Version() const override { return version_; }

  StatusOr<std::vector<SlurmNode>> ParseNodes(const json& body) const override {
    return ParseEach<SlurmNode>(body, "nodes", "GET /nodes",
                                [](const json&, JsonFields& f) { return ReadNode(f); });
  }

  StatusOr<std::vector<SlurmPartition>> ParsePartitions(const json& body) const override {
    return ParseEach<SlurmPartition>(
        body, "partitions", "GET /partitions",
        [](const json& item, JsonFields& f) -> StatusOr<SlurmPartition> {
          SlurmPartition p;
          p.name = f.String("name");
          if (!f.status().ok()) return f.status();
          // "nodes": {"configured": "n[1-4]"}, "priority": {"tier": 10},
          // "partition": {"state": ["UP"]}.
          for (const char* key : {"nodes", "priority", "partition"}) {
            auto it = item.find(key);
            if (it == item.end() || it->is_null()) continue;
            JsonFields sub(*it, f.where() + "." + key);
            if (std::string_view(key) == "nodes")
              p.nodes = Hostlist(sub, "configured", sub.OptionalString("configured"));
            else if (std::string_view(key) == "priority")
              p.priority_tier = sub.OptionalNoValInt("tier");
            else if (const auto states = sub.OptionalStringArray("state"); !states.empty())
              p.state = states.front();
            if (!sub.status().ok()) return sub.status();
          }
          return p;
        });
  }

  StatusOr<std::vector<SlurmJob>> ParseJobs(const json& body) const override {
    return ParseEach<SlurmJob>(
        body, "jobs", "GET /jobs", [this](const json& item, JsonFields& f) -> StatusOr<SlurmJob> {
          SlurmJob j;
          shapes::ReadJobFields(f, j);
          j.state = JobState(f, f.OptionalStringArray("job_state"));
          // Unset or infinite: not 0, which would read as held.
          j.priority = f.OptionalNoValInt("priority", -1);
          j.submit_time = f.OptionalNoValInt("submit_time");
          j.start_time = f.OptionalNoValInt("start_time");
          j.exit_code = WaitStatus(item, f);
          const std::vector<std::string> detail = f.OptionalStringArray("gres_detail");
          if (!f.status().ok()) return f.status();
          // The node order of gres_detail: the allocation's, else "nodes".
          auto order = AllocatedNodes(item, f.where());
          if (!order.ok()) return order.status();
          if (order->empty()) *order = j.nodes;
          AIRTIME_RETURN_IF_ERROR(shapes::AddGresDetail(detail, *order, f.where(), j));
          return j;
        });
  }

  std::string ParseRelease(const json& body) const override {
    return shapes::NestedString(body, "meta", "slurm", "release");
  }

  StatusOr<json> SubmitBody(const JobRequest& r) const override {
    AIRTIME_RETURN_IF_ERROR(shapes::CheckRequest(r));
    json env = json::array();
    for (const auto& [k, v] : shapes::JobEnvironment(r)) env.push_back(k + "=" + v);
    json job = {
        {"script", r.script},
        {"name", r.name},
        {"comment", r.comment},
        {"hold", r.hold},
        {"requeue", r.requeue},
        {"nodes", std::to_string(r.nodes)},
        {"current_working_directory", r.working_directory},
        {"environment", std::move(env)},
    };
    if (!r.partition.empty()) job["partition"] = r.partition;
    // sbatch --gres=X sets tres_per_node to gres/X.
    if (const std::string gres = shapes::GresPerNode(r); !gres.empty())
      job["tres_per_node"] = "gres/" + gres;
    if (!r.required_nodes.empty()) job["required_nodes"] = shapes::NodeList(r.required_nodes);
    if (!r.standard_output.empty()) {
      job["standard_output"] = r.standard_output;
      job["open_mode"] = json::array({"APPEND"});  // as v0.0.38's "append" (api_v0_0_38.cc)
    }
    if (r.grace_signal) {
      // sbatch --signal=NAME@SECONDS: to the job's steps, as v0.0.38's "signal" sends it.
      job["kill_warning_signal"] = r.grace_signal->signal;
      job["kill_warning_delay"] = r.grace_signal->seconds_before;
    }
    if (r.time_limit_minutes) job["time_limit"] = *r.time_limit_minutes;
    return json{{"job", std::move(job)}};
  }

  json HoldBody() const override { return {{"hold", true}}; }
  // begin_time: a string is read as Slurm's time words, as in v0.0.38 ("now").
  json ReleaseBody() const override { return {{"hold", false}, {"begin_time", "now"}}; }
  json PriorityBody(int64_t priority) const override { return {{"priority", priority}}; }
  std::optional<json> RequiredNodesBody(const std::vector<std::string>& nodes) const override {
    return json{{"required_nodes", shapes::NodeList(nodes)}};
  }

 private:
  // The job's allocated node names in Slurm's order (empty when it has none yet: a pending
  // job's job_resources is {} or absent).
  StatusOr<std::vector<std::string>> AllocatedNodes(const json& item,
                                                    const std::string& where) const {
    std::vector<std::string> names;
    auto res = item.find("job_resources");
    if (res == item.end() || res->is_null()) return names;
    JsonFields r(*res, where + ".job_resources");
    if (!r.status().ok()) return r.status();
    const json* list = nullptr;
    std::string list_where;
    const char* name_key = allocation_ ? "name" : "nodename";
    if (allocation_) {
      auto nodes = res->find("nodes");
      if (nodes == res->end() || nodes->is_null()) return names;
      JsonFields n(*nodes, r.where() + ".nodes");
      if (!n.status().ok()) return n.status();
      if (!nodes->contains("allocation")) return names;
      list = n.Array("allocation");
      if (!n.status().ok()) return n.status();
      list_where = n.where() + ".allocation";
    } else {
      if (!res->contains("allocated_nodes")) return names;
      list = r.Array("allocated_nodes");
      if (!r.status().ok()) return r.status();
      list_where = r.where() + ".allocated_nodes";
    }
    for (size_t k = 0; k < list->size(); ++k) {
      JsonFields node((*list)[k], list_where + "[" + std::to_string(k) + "]");
      names.push_back(node.String(name_key));
      if (!node.status().ok()) return node.status();
      if (names.back().empty()) return InvalidArgument(node.where() + "." + name_key + ": empty");
    }
    return names;
  }

  std::string version_;
  bool allocation_;
};

}  // namespace

std::unique_ptr<ApiShapes> MakeShapesV0040(std::string_view version) {
  if (version == "v0.0.40") return std::make_unique<ShapesV0040>(std::string(version), false);
  for (std::string_view v : {"v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44"})
    if (version == v) return std::make_unique<ShapesV0040>(std::string(version), true);
  return nullptr;
}

}  // namespace airtime::slurm
