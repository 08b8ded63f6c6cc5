#include "airtime/slurm/api_shapes.h"

#include <set>

#include "airtime/base/strings.h"
#include "airtime/slurm/api_shapes_util.h"

namespace airtime::slurm {

std::unique_ptr<ApiShapes> MakeShapesV0038();                          // api_v0_0_38.cc
std::unique_ptr<ApiShapes> MakeShapesV0040(std::string_view version);  // api_v0_0_40.cc

std::string ApiShapes::Path(std::string_view endpoint) const {
  return "/slurm/" + std::string(Version()) + "/" + std::string(endpoint);
}

Status ApiShapes::ResponseErrors(const nlohmann::json& body, std::string_view what) const {
  return shapes::ErrorsOf(body, what);
}

Status ApiShapes::SignalErrors(const nlohmann::json& body, std::string_view what) const {
  AIRTIME_RETURN_IF_ERROR(ResponseErrors(body, what));
  constexpr int64_t kAlreadyDone = 2021;  // ESLURM_ALREADY_DONE
  auto status = body.find("status");
  if (status == body.end() || !status->is_array()) return OkStatus();
  for (const nlohmann::json& job : *status) {
    if (!job.is_object()) continue;
    auto error = job.find("error");
    if (error == job.end() || !error->is_object()) continue;
    auto code = error->find("code");
    if (code == error->end() || !code->is_number_integer()) continue;
    const int64_t n = code->get<int64_t>();
    if (n == 0 || n == kAlreadyDone) continue;
    std::string text;
    for (const char* key : {"string", "message"}) {
      auto v = error->find(key);
      if (v != error->end() && v->is_string() && !v->get<std::string>().empty())
        text += (text.empty() ? "" : ": ") + v->get<std::string>().substr(0, 200);
    }
    return FailedPrecondition(std::string(what) +
                              ": slurmrestd: " + (text.empty() ? "failed" : text) +
                              " (error code " + std::to_string(n) + ")");
  }
  return OkStatus();
}

StatusOr<int64_t> ApiShapes::ParseSubmitted(const nlohmann::json& body) const {
  return shapes::SubmittedId(body);
}

std::vector<std::string> SupportedApiVersions() {
  return {"v0.0.44", "v0.0.43", "v0.0.42", "v0.0.41", "v0.0.40", "v0.0.38"};
}

std::unique_ptr<ApiShapes> ShapesFor(std::string_view version) {
  if (version == "v0.0.38") return MakeShapesV0038();
  return MakeShapesV0040(version);
}

StatusOr<std::string> ChooseApiVersion(const nlohmann::json& openapi) {
  if (!openapi.is_object() || !openapi.contains("paths") || !openapi["paths"].is_object())
    return InvalidArgument("GET /openapi: expected an object with \"paths\"");
  std::set<std::string> offered;
  for (const auto& [path, _] : openapi["paths"].items()) {
    constexpr std::string_view kPrefix = "/slurm/";
    if (path.rfind(kPrefix, 0) != 0) continue;
    const size_t end = path.find('/', kPrefix.size());
    if (end == std::string::npos) continue;
    offered.insert(path.substr(kPrefix.size(), end - kPrefix.size()));
  }
  for (const std::string& v : SupportedApiVersions())
    if (offered.count(v) > 0) return v;
  std::vector<std::string> names(offered.begin(), offered.end());
  return FailedPrecondition("slurmrestd offers " +
                            (names.empty() ? "no /slurm/ API" : Join(names, ", ")) +
                            "; this build speaks " + Join(SupportedApiVersions(), ", ") +
                            " (Slurm 22.05 to 25.11; see docs/slurm.md)");
}

}  // namespace airtime::slurm
