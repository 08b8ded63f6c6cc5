// What the ApiShapes implementations (api_v0_0_38.cc, api_v0_0_40.cc) share: walking a
// response's arrays, the hostlist and GRES strings inside them, a job's GPUs from its
// gres_detail, the errors list, and the checks and strings of a submission that every version
// writes alike. Internal to airtime_slurm_parse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "airtime/base/status.h"
#include "airtime/slurm/gres.h"
#include "airtime/slurm/job_request.h"
#include "airtime/slurm/json_fields.h"
#include "airtime/slurm/records.h"

namespace airtime::slurm::shapes {

// The array `key` of a response body, or an error naming it.
StatusOr<const nlohmann::json*> TopArray(const nlohmann::json& body, const char* key,
                                         std::string_view what);

// Each element of the array `key` of a response body, parsed by `parse(item, fields)` into a
// T; the first error, naming the element ("WHAT: KEY[i]..."), ends it.
template <typename T, typename Parse>
StatusOr<std::vector<T>> ParseEach(const nlohmann::json& body, const char* key,
                                   const std::string& what, Parse parse) {
  auto arr = TopArray(body, key, what);
  if (!arr.ok()) return arr.status();
  std::vector<T> out;
  for (size_t i = 0; i < (*arr)->size(); ++i) {
    const nlohmann::json& item = (**arr)[i];
    JsonFields f(item, what + ": " + key + "[" + std::to_string(i) + "]");
    StatusOr<T> one = parse(item, f);
    if (!one.ok()) return one.status();
    out.push_back(std::move(*one));
  }
  return out;
}

// A hostlist or GRES string field, expanded; empty with the error recorded on `f` under `key`.
std::vector<std::string> Hostlist(JsonFields& f, std::string_view key, const std::string& text);
std::vector<Gres> GresField(JsonFields& f, std::string_view key, const std::string& text);

// The fields of a node that every version writes alike: reason, address, partitions, gres,
// gres_used, cpus, real_memory (errors on `f`).
void ReadNodeFields(JsonFields& f, SlurmNode& n);

// The fields of a job that every version writes alike: job_id, name, comment, state_reason,
// partition, user_name, nodes, required_nodes, restart_cnt (errors on `f`).
void ReadJobFields(JsonFields& f, SlurmJob& j);

// Fills `job.gpus` from its gres_detail strings, one per node of `order` (the job's allocated
// nodes in Slurm's order): whole GPUs with their type, shards with the GPU they came from.
Status AddGresDetail(const std::vector<std::string>& detail, const std::vector<std::string>& order,
                     const std::string& where, SlurmJob& job);

// The "errors" array of an answer as one Status (OK when empty): each entry's "error" and
// "description", with its "error_number" or "error_code". `what` names the call.
Status ErrorsOf(const nlohmann::json& body, std::string_view what);

// The job id of a submission's answer, or its errors (or that it has no id).
StatusOr<int64_t> SubmittedId(const nlohmann::json& body);

// A string at body[outer][inner][key] ("" when any part is missing or not so typed).
std::string NestedString(const nlohmann::json& body, const char* outer, const char* inner,
                         const char* key);

// What every version refuses in a request: no "#!", fewer than 1 node, negative counts,
// whole GPUs with shards, a node name that is not one name, a bad grace signal.
Status CheckRequest(const JobRequest& r);
// The GRES a request asks for per node, Slurm's --gres form ("gpu:a100:2", "gpu:2",
// "shard:500"); "" for none.
std::string GresPerNode(const JobRequest& r);
// "n1,n2".
std::string NodeList(const std::vector<std::string>& nodes);
// "PATH=..." first (slurmrestd gives a job no environment of its own), then the request's.
std::vector<std::pair<std::string, std::string>> JobEnvironment(const JobRequest& r);

}  // namespace airtime::slurm::shapes
