// slurmrestd's openapi/v0.0.38 (Slurm 22.05), as recorded from Debian 12's slurmrestd in
// testdata/v0.0.38/. What this version does that the others may not:
//   - numbers are plain JSON integers; a job's "nodes" and "required_nodes" are hostlist
//     strings;
//   - a job's GPU indices are in "gres_detail", one string per allocated node, in the order
//     of job_resources.allocated_nodes ("gpu:h100:2(IDX:0-1)"; shards: "shard:500(IDX:0)",
//     untyped, with the GPU they came from);
//   - a submission's answer lists "Job is in held state" (error_code 2042) among its
//     "errors" while succeeding: the job id decides;
//   - a submission's "nodes" must be a string ("2"): the array form [2,2] is taken as 1 node;
//   - "signal" refuses the batch-shell form "B:USR1@60" ("Invalid SIGNAL specification");
//   - a submission and an update refuse "required_nodes" ("Disabled key"); a submission
//     takes the nodes it must run on as "nodelist" (a hostlist string: Slurm's ReqNodeList,
//     sbatch -w), an update not at all (scontrol does it); an update refuses a priority while
//     held;
//     "begin_time" takes Slurm's time words ("now"), not a Unix time.
#include <memory>
#include <optional>

#include "airtime/slurm/api_shapes.h"
#include "airtime/slurm/api_shapes_util.h"

namespace airtime::slurm {
namespace {

using nlohmann::json;
using shapes::Hostlist;
using shapes::ParseEach;

class ShapesV0038 final : public ApiShapes {
 public:
  std::string_view Version() const override { return "v0.0.38"; }

  StatusOr<std::vector<SlurmNode>> ParseNodes(const json& body) const override {
    return ParseEach<SlurmNode>(body, "nodes", "GET /nodes",
                                [](const json&, JsonFields& f) -> StatusOr<SlurmNode> {
                                  SlurmNode n;
                                  n.name = f.String("name");
                                  n.state = f.String("state");
                                  n.state_flags = f.OptionalStringArray("state_flags");
                                  shapes::ReadNodeFields(f, n);
                                  if (!f.status().ok()) return f.status();
                                  if (n.name.empty())
                                    return InvalidArgument(f.where() + ".name: empty");
                                  return n;
                                });
  }

  StatusOr<std::vector<SlurmPartition>> ParsePartitions(const json& body) const override {
    return ParseEach<SlurmPartition>(
        body, "partitions", "GET /partitions",
        [](const json&, JsonFields& f) -> StatusOr<SlurmPartition> {
          SlurmPartition p;
          p.name = f.String("name");
          p.nodes = Hostlist(f, "nodes", f.OptionalString("nodes"));
          p.priority_tier = f.OptionalInt("priority_tier");
          for (const std::string& flag : f.OptionalStringArray("flags"))
            if (flag == "default") p.is_default = true;
          p.state = f.OptionalString("state");
          if (!f.status().ok()) return f.status();
          return p;
        });
  }

  StatusOr<std::vector<SlurmJob>> ParseJobs(const json& body) const override {
    return ParseEach<SlurmJob>(
        body, "jobs", "GET /jobs", [](const json& item, JsonFields& f) -> StatusOr<SlurmJob> {
          SlurmJob j;
          shapes::ReadJobFields(f, j);
          j.state = f.String("job_state");
          j.priority = f.OptionalInt("priority");
          j.submit_time = f.OptionalInt("submit_time");
          j.start_time = f.OptionalInt("start_time");
          j.exit_code = f.OptionalInt("exit_code");
          const std::vector<std::string> detail = f.OptionalStringArray("gres_detail");
          // The node order of gres_detail: job_resources.allocated_nodes, else "nodes".
          std::vector<std::string> order = j.nodes;
          if (item.is_object() && item.contains("job_resources") &&
              item["job_resources"].is_object()) {
            JsonFields res(item["job_resources"], f.where() + ".job_resources");
            if (const json* alloc = item["job_resources"].contains("allocated_nodes")
                                        ? res.Array("allocated_nodes")
                                        : nullptr) {
              std::vector<std::string> names;
              for (size_t k = 0; k < alloc->size(); ++k) {
                JsonFields node((*alloc)[k],
                                res.where() + ".allocated_nodes[" + std::to_string(k) + "]");
                names.push_back(node.String("nodename"));
                if (!node.status().ok()) return node.status();
                if (names.back().empty()) return InvalidArgument(node.where() + ".nodename: empty");
              }
              if (!names.empty()) order = std::move(names);
            }
            if (!res.status().ok()) return res.status();
          }
          if (!f.status().ok()) return f.status();
          AIRTIME_RETURN_IF_ERROR(shapes::AddGresDetail(detail, order, f.where(), j));
          return j;
        });
  }

  std::string ParseRelease(const json& body) const override {
    return shapes::NestedString(body, "meta", "Slurm", "release");
  }

  StatusOr<json> SubmitBody(const JobRequest& r) const override {
    AIRTIME_RETURN_IF_ERROR(shapes::CheckRequest(r));
    json job = {
        {"name", r.name},
        {"comment", r.comment},
        {"hold", r.hold},
        {"requeue", r.requeue},
        {"nodes", std::to_string(r.nodes)},  // a string: [n, n] is taken as one node
        {"current_working_directory", r.working_directory},
        {"environment", json::object()},
    };
    for (const auto& [k, v] : shapes::JobEnvironment(r)) job["environment"][k] = v;
    if (!r.partition.empty()) job["partition"] = r.partition;
    if (const std::string gres = shapes::GresPerNode(r); !gres.empty()) job["gres"] = gres;
    // "required_nodes" is a disabled key here: "nodelist" is Slurm's ReqNodeList.
    if (!r.required_nodes.empty()) job["nodelist"] = shapes::NodeList(r.required_nodes);
    if (!r.standard_output.empty()) {
      job["standard_output"] = r.standard_output;
      // Opened for appending (slurmstepd adds O_APPEND), as the local shim opens its logs: a
      // requeued run adds to its log, and a cut over --max-log-mib (log_cap.h) that empties
      // it leaves the next write at the new end, not at the old offset past a hole.
      job["open_mode"] = "append";
    }
    if (r.grace_signal)
      job["signal"] = r.grace_signal->signal + "@" + std::to_string(r.grace_signal->seconds_before);
    if (r.time_limit_minutes) job["time_limit"] = *r.time_limit_minutes;
    return json{{"script", r.script}, {"job", std::move(job)}};
  }

  json HoldBody() const override { return {{"hold", true}}; }
  // begin_time takes Slurm's time words, not a number ("Unable to parse time").
  json ReleaseBody() const override { return {{"hold", false}, {"begin_time", "now"}}; }
  json PriorityBody(int64_t priority) const override {
    return {{"priority", std::to_string(priority)}};
  }
  // "Disabled key: required_nodes": the client uses scontrol.
  std::optional<json> RequiredNodesBody(const std::vector<std::string>&) const override {
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<ApiShapes> MakeShapesV0038() { return std::make_unique<ShapesV0038>(); }

}  // namespace airtime::slurm
