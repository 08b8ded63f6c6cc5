#include "airtime/slurm/api_shapes_util.h"

#include "airtime/slurm/hostlist.h"

namespace airtime::slurm::shapes {

using nlohmann::json;

namespace {

// A field's text parsed by `parsed`, or empty with the error recorded on `f` under `key`.
template <typename T>
T OrFail(JsonFields& f, std::string_view key, StatusOr<T> parsed) {
  if (!parsed.ok()) {
    f.Fail(key, parsed.status().message());
    return {};
  }
  return std::move(*parsed);
}

bool ValidSignal(std::string_view s) {
  if (s.empty() || s.size() > 16) return false;
  for (char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  return true;
}

}  // namespace

StatusOr<const json*> TopArray(const json& body, const char* key, std::string_view what) {
  JsonFields top(body, std::string(what));
  const json* arr = top.Array(key);
  if (!top.status().ok()) return top.status();
  return arr;
}

std::vector<std::string> Hostlist(JsonFields& f, std::string_view key, const std::string& text) {
  return OrFail(f, key, ExpandHostlist(text));
}

std::vector<Gres> GresField(JsonFields& f, std::string_view key, const std::string& text) {
  return OrFail(f, key, ParseGresList(text));
}

void ReadNodeFields(JsonFields& f, SlurmNode& n) {
  n.reason = f.OptionalString("reason");
  n.address = f.OptionalString("address");
  n.partitions = f.OptionalStringArray("partitions");
  n.gres = GresField(f, "gres", f.OptionalString("gres"));
  n.gres_used = GresField(f, "gres_used", f.OptionalString("gres_used"));
  n.cpus = f.OptionalInt("cpus");
  n.real_memory_mb = f.OptionalInt("real_memory");
}

void ReadJobFields(JsonFields& f, SlurmJob& j) {
  j.id = f.Int("job_id");
  j.name = f.OptionalString("name");
  j.comment = f.OptionalString("comment");
  j.state_reason = f.OptionalString("state_reason");
  j.partition = f.OptionalString("partition");
  j.user = f.OptionalString("user_name");
  j.nodes = Hostlist(f, "nodes", f.OptionalString("nodes"));
  j.required_nodes = Hostlist(f, "required_nodes", f.OptionalString("required_nodes"));
  j.restarts = f.OptionalInt("restart_cnt");
}

Status AddGresDetail(const std::vector<std::string>& detail, const std::vector<std::string>& order,
                     const std::string& where, SlurmJob& job) {
  if (!detail.empty() && detail.size() != order.size())
    return InvalidArgument(where + ".gres_detail: " + std::to_string(detail.size()) +
                           " entries for " + std::to_string(order.size()) + " nodes");
  for (size_t k = 0; k < detail.size(); ++k) {
    auto list = ParseGresList(detail[k]);
    if (!list.ok())
      return InvalidArgument(where + ".gres_detail[" + std::to_string(k) +
                             "]: " + list.status().message());
    for (Gres& g : *list) {
      if (g.name == "gpu") job.gpus.push_back({order[k], g.type, std::move(g.indices), 0});
      // Shards: the GPU they came from. A count of 0 holds nothing.
      if (g.name == "shard" && g.count > 0 && !g.indices.empty())
        job.gpus.push_back({order[k], "", std::move(g.indices), g.count});
    }
  }
  return OkStatus();
}

Status ErrorsOf(const json& body, std::string_view what) {
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

StatusOr<int64_t> SubmittedId(const json& body) {
  JsonFields f(body, "POST job/submit");
  const int64_t id = f.OptionalInt("job_id", -1);
  if (!f.status().ok()) return f.status();
  if (id <= 0) {
    Status errors = ErrorsOf(body, "POST job/submit");
    if (!errors.ok()) return errors;
    return InvalidArgument("POST job/submit: no job_id in the answer");
  }
  return id;
}

std::string NestedString(const json& body, const char* outer, const char* inner, const char* key) {
  if (!body.is_object()) return "";
  auto a = body.find(outer);
  if (a == body.end() || !a->is_object()) return "";
  auto b = a->find(inner);
  if (b == a->end() || !b->is_object()) return "";
  auto c = b->find(key);
  return c != b->end() && c->is_string() ? c->get<std::string>() : "";
}

Status CheckRequest(const JobRequest& r) {
  if (r.script.rfind("#!", 0) != 0)
    return InvalidArgument("job '" + r.name + "': the script must start with #!");
  if (r.nodes < 1) return InvalidArgument("job '" + r.name + "': nodes must be at least 1");
  if (r.gpus_per_node < 0)
    return InvalidArgument("job '" + r.name + "': gpus_per_node must not be negative");
  if (r.shards_per_node < 0)
    return InvalidArgument("job '" + r.name + "': shards_per_node must not be negative");
  if (r.gpus_per_node > 0 && r.shards_per_node > 0)
    return InvalidArgument("job '" + r.name +
                           "': whole GPUs and shards in one job (Slurm gives a GPU as one "
                           "or the other)");
  for (const std::string& n : r.required_nodes)
    if (!ValidNodeName(n))
      return InvalidArgument("job '" + r.name + "': node name '" + n.substr(0, 100) +
                             "' is not [A-Za-z0-9._-]");
  if (r.grace_signal &&
      (!ValidSignal(r.grace_signal->signal) || r.grace_signal->seconds_before < 0 ||
       r.grace_signal->seconds_before > 65535))
    return InvalidArgument("job '" + r.name + "': grace signal '" + r.grace_signal->signal + "@" +
                           std::to_string(r.grace_signal->seconds_before) +
                           "' is not NAME@SECONDS (0-65535)");
  return OkStatus();
}

std::string GresPerNode(const JobRequest& r) {
  if (r.gpus_per_node > 0)
    return "gpu:" + (r.gpu_type.empty() ? "" : r.gpu_type + ":") + std::to_string(r.gpus_per_node);
  // Shards take no type (Slurm ignores a shard's Type; the node's GPUs give it).
  if (r.shards_per_node > 0) return "shard:" + std::to_string(r.shards_per_node);
  return "";
}

std::string NodeList(const std::vector<std::string>& nodes) {
  std::string list;
  for (const std::string& n : nodes) list += (list.empty() ? "" : ",") + n;
  return list;
}

std::vector<std::pair<std::string, std::string>> JobEnvironment(const JobRequest& r) {
  std::vector<std::pair<std::string, std::string>> env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
  for (const auto& [k, v] : r.environment) {
    if (k == "PATH")
      env[0].second = v;
    else
      env.emplace_back(k, v);
  }
  return env;
}

}  // namespace airtime::slurm::shapes
