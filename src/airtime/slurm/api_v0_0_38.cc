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

#include "airtime/slurm/api_shapes.h"
#include "airtime/slurm/hostlist.h"
#include "airtime/slurm/json_fields.h"

namespace airtime::slurm {
namespace {

using nlohmann::json;

// The array `key` of a response body, or an error naming it.
StatusOr<const json*> TopArray(const json& body, const char* key, std::string_view what) {
  JsonFields top(body, std::string(what));
  const json* arr = top.Array(key);
  if (!top.status().ok()) return top.status();
  return arr;
}

// Each element of the array `key` of a response body, parsed by `parse(item, fields)` into a
// T; the first error, naming the element ("WHAT: KEY[i]..."), ends it.
template <typename T, typename Parse>
StatusOr<std::vector<T>> ParseEach(const json& body, const char* key, const std::string& what,
                                   Parse parse) {
  auto arr = TopArray(body, key, what);
  if (!arr.ok()) return arr.status();
  std::vector<T> out;
  for (size_t i = 0; i < (*arr)->size(); ++i) {
    const json& item = (**arr)[i];
    JsonFields f(item, what + ": " + key + "[" + std::to_string(i) + "]");
    StatusOr<T> one = parse(item, f);
    if (!one.ok()) return one.status();
    out.push_back(std::move(*one));
  }
  return out;
}

// A field's text parsed by `parsed`, or empty with the error recorded on `f` under `key`.
template <typename T>
T OrFail(JsonFields& f, std::string_view key, StatusOr<T> parsed) {
  if (!parsed.ok()) {
    f.Fail(key, parsed.status().message());
    return {};
  }
  return std::move(*parsed);
}

std::vector<std::string> Hostlist(JsonFields& f, std::string_view key, const std::string& text) {
  return OrFail(f, key, ExpandHostlist(text));
}

std::vector<Gres> GresField(JsonFields& f, std::string_view key, const std::string& text) {
  return OrFail(f, key, ParseGresList(text));
}

bool ValidSignal(std::string_view s) {
  if (s.empty() || s.size() > 16) return false;
  for (char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  return true;
}

class ShapesV0038 final : public ApiShapes {
 public:
  std::string_view Version() const override { return "v0.0.38"; }

  StatusOr<std::vector<SlurmNode>> ParseNodes(const json& body) const override {
    return ParseEach<SlurmNode>(
        body, "nodes", "GET /nodes", [](const json&, JsonFields& f) -> StatusOr<SlurmNode> {
          SlurmNode n;
          n.name = f.String("name");
          n.state = f.String("state");
          n.state_flags = f.OptionalStringArray("state_flags");
          n.reason = f.OptionalString("reason");
          n.partitions = f.OptionalStringArray("partitions");
          n.gres = GresField(f, "gres", f.OptionalString("gres"));
          n.gres_used = GresField(f, "gres_used", f.OptionalString("gres_used"));
          n.cpus = f.OptionalInt("cpus");
          n.real_memory_mb = f.OptionalInt("real_memory");
          if (!f.status().ok()) return f.status();
          if (n.name.empty()) return InvalidArgument(f.where() + ".name: empty");
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
          j.id = f.Int("job_id");
          j.name = f.OptionalString("name");
          j.comment = f.OptionalString("comment");
          j.state = f.String("job_state");
          j.state_reason = f.OptionalString("state_reason");
          j.partition = f.OptionalString("partition");
          j.user = f.OptionalString("user_name");
          j.nodes = Hostlist(f, "nodes", f.OptionalString("nodes"));
          j.required_nodes = Hostlist(f, "required_nodes", f.OptionalString("required_nodes"));
          j.priority = f.OptionalInt("priority");
          j.restarts = f.OptionalInt("restart_cnt");
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
          if (!detail.empty() && detail.size() != order.size())
            return InvalidArgument(f.where() + ".gres_detail: " + std::to_string(detail.size()) +
                                   " entries for " + std::to_string(order.size()) + " nodes");
          for (size_t k = 0; k < detail.size(); ++k) {
            auto list = ParseGresList(detail[k]);
            if (!list.ok())
              return InvalidArgument(f.where() + ".gres_detail[" + std::to_string(k) +
                                     "]: " + list.status().message());
            for (Gres& g : *list) {
              if (g.name == "gpu") j.gpus.push_back({order[k], g.type, std::move(g.indices), 0});
              // Shards: the GPU they came from. A count of 0 holds nothing.
              if (g.name == "shard" && g.count > 0 && !g.indices.empty())
                j.gpus.push_back({order[k], "", std::move(g.indices), g.count});
            }
          }
          return j;
        });
  }

  std::string ParseRelease(const json& body) const override {
    if (!body.is_object()) return "";
    auto meta = body.find("meta");
    if (meta == body.end() || !meta->is_object()) return "";
    auto slurm = meta->find("Slurm");
    if (slurm == meta->end() || !slurm->is_object()) return "";
    auto release = slurm->find("release");
    return release != slurm->end() && release->is_string() ? release->get<std::string>() : "";
  }

  Status ResponseErrors(const json& body, std::string_view what) const override {
    if (!body.is_object()) return InvalidArgument(std::string(what) + ": expected an object");
    auto errors = body.find("errors");
    if (errors == body.end() || errors->is_null()) return OkStatus();
    if (!errors->is_array())
      return InvalidArgument(std::string(what) + ": errors: expected an array, got " +
                             JsonTypeName(*errors));
    std::string message;
    for (const json& e : *errors) {
      if (!e.is_object()) continue;
      std::string text;
      for (const char* key : {"error", "description"}) {
        auto v = e.find(key);
        if (v != e.end() && v->is_string() && !v->get<std::string>().empty())
          text += (text.empty() ? "" : ": ") + v->get<std::string>();
      }
      for (const char* key : {"error_number", "error_code"}) {
        auto v = e.find(key);
        if (v != e.end() && v->is_number_integer())
          text += " (" + std::string(key) + " " + std::to_string(v->get<int64_t>()) + ")";
      }
      if (text.empty()) text = e.dump().substr(0, 200);
      message += (message.empty() ? "" : "; ") + text;
    }
    if (message.empty()) return OkStatus();
    return FailedPrecondition(std::string(what) + ": slurmrestd: " + message);
  }

  StatusOr<json> SubmitBody(const JobRequest& r) const override {
    if (r.script.rfind("#!", 0) != 0)
      return InvalidArgument("job '" + r.name + "': the script must start with #!");
    if (r.nodes < 1) return InvalidArgument("job '" + r.name + "': nodes must be at least 1");
    if (r.gpus_per_node < 0)
      return InvalidArgument("job '" + r.name + "': gpus_per_node must not be negative");
    json job = {
        {"name", r.name},
        {"comment", r.comment},
        {"hold", r.hold},
        {"requeue", r.requeue},
        {"nodes", std::to_string(r.nodes)},  // a string: [n, n] is taken as one node
        {"current_working_directory", r.working_directory},
        {"environment", json::object()},
    };
    // slurmrestd gives a job no environment of its own: PATH at least.
    job["environment"]["PATH"] = "/usr/local/bin:/usr/bin:/bin";
    for (const auto& [k, v] : r.environment) job["environment"][k] = v;
    if (!r.partition.empty()) job["partition"] = r.partition;
    if (r.shards_per_node < 0)
      return InvalidArgument("job '" + r.name + "': shards_per_node must not be negative");
    if (r.gpus_per_node > 0 && r.shards_per_node > 0)
      return InvalidArgument("job '" + r.name +
                             "': whole GPUs and shards in one job (Slurm gives a GPU as one "
                             "or the other)");
    if (r.gpus_per_node > 0) {
      job["gres"] =
          "gpu:" + (r.gpu_type.empty() ? "" : r.gpu_type + ":") + std::to_string(r.gpus_per_node);
    }
    // Shards take no type (Slurm ignores a shard's Type; the node's GPUs give it).
    if (r.shards_per_node > 0) job["gres"] = "shard:" + std::to_string(r.shards_per_node);
    if (!r.required_nodes.empty()) {
      for (const std::string& n : r.required_nodes)
        if (!ValidNodeName(n))
          return InvalidArgument("job '" + r.name + "': node name '" + n.substr(0, 100) +
                                 "' is not [A-Za-z0-9._-]");
      std::string list;
      for (const std::string& n : r.required_nodes) list += (list.empty() ? "" : ",") + n;
      job["nodelist"] = list;  // "required_nodes" is a disabled key here
    }
    if (!r.standard_output.empty()) {
      job["standard_output"] = r.standard_output;
      // Opened for appending (slurmstepd adds O_APPEND), as the local shim opens its logs: a
      // requeued run adds to its log, and a cut over --max-log-mib (log_cap.h) that empties
      // it leaves the next write at the new end, not at the old offset past a hole.
      job["open_mode"] = "append";
    }
    if (r.grace_signal) {
      if (!ValidSignal(r.grace_signal->signal) || r.grace_signal->seconds_before < 0 ||
          r.grace_signal->seconds_before > 65535)
        return InvalidArgument("job '" + r.name + "': grace signal '" + r.grace_signal->signal +
                               "@" + std::to_string(r.grace_signal->seconds_before) +
                               "' is not NAME@SECONDS (0-65535)");
      job["signal"] = r.grace_signal->signal + "@" + std::to_string(r.grace_signal->seconds_before);
    }
    if (r.time_limit_minutes) job["time_limit"] = *r.time_limit_minutes;
    return json{{"script", r.script}, {"job", std::move(job)}};
  }

  StatusOr<int64_t> ParseSubmitted(const json& body) const override {
    JsonFields f(body, "POST job/submit");
    const int64_t id = f.OptionalInt("job_id", -1);
    if (!f.status().ok()) return f.status();
    if (id <= 0) {
      Status errors = ResponseErrors(body, "POST job/submit");
      if (!errors.ok()) return errors;
      return InvalidArgument("POST job/submit: no job_id in the answer");
    }
    return id;
  }

  json HoldBody() const override { return {{"hold", true}}; }
  // begin_time takes Slurm's time words, not a number ("Unable to parse time").
  json ReleaseBody() const override { return {{"hold", false}, {"begin_time", "now"}}; }
  json PriorityBody(int64_t priority) const override {
    return {{"priority", std::to_string(priority)}};
  }
  bool CanUpdateRequiredNodes() const override { return false; }
};

}  // namespace

std::unique_ptr<ApiShapes> MakeShapesV0038() { return std::make_unique<ShapesV0038>(); }

}  // namespace airtime::slurm
