// Submission: body parsing and the text rules for what a tenant sends.
#include "airtime/server/submission.h"

#include <cstdio>

#include "airtime/api/bounded_json.h"
#include "airtime/base/utf8.h"
#include "airtime/config/workload_yaml.h"

namespace airtime {
namespace {

bool LooksLikeJson(std::string_view body) {
  const size_t first = body.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (body[first] == '{' || body[first] == '[');
}

// A body that starts like JSON and is JSON: its surrogate pairs are rewritten for the YAML
// parser (which refuses each half); a lone surrogate is refused here with a clear message.
// Anything else (YAML, flow style, broken JSON) goes to the YAML parser as it is.
StatusOr<std::string> PrepareBody(std::string_view body, std::string_view origin) {
  if (!LooksLikeJson(body) || body.find("\\u") == std::string_view::npos) return std::string(body);
  auto parsed = ParseBoundedJson(body, origin, {body.size(), 64});
  if (parsed.ok()) return RewriteSurrogatePairs(body);
  if (parsed.status().message().find("surrogate") != std::string::npos) return parsed.status();
  return std::string(body);
}

// A body is read as YAML, of which JSON is a part; a JSON body with a syntax error would be
// told only what the YAML parser saw ("YAML syntax error: did not find expected ',' or
// '}'"). Such a body also gets the JSON parser's account, which a JSON client expects.
Status NameJsonSyntax(std::string_view body, std::string_view origin, const Status& yaml) {
  if (!LooksLikeJson(body) || yaml.message().find("YAML syntax error") == std::string::npos)
    return yaml;
  auto json = ParseBoundedJson(body, origin, {body.size(), 64});
  // Only a syntax error: one nested too deep or with a key given twice is JSON's syntax still.
  if (json.ok() || json.status().message().find("not valid JSON") == std::string::npos) return yaml;
  return InvalidArgument(json.status().message() + " (read as YAML: " + yaml.message() + ")");
}

Status FieldProblem(const WorkloadSpec& s, const std::string& field, const std::string& problem) {
  return InvalidArgument(s.SourceOf(field) + ": workload '" + ReplaceInvalidUtf8(s.name) +
                         "': field '" + field + "': " + problem);
}

}  // namespace

std::string TextProblem(std::string_view s) {
  if (s.find('\0') != std::string_view::npos) return "contains a NUL byte";
  const size_t bad = FindInvalidUtf8(s);
  if (bad != std::string_view::npos) return "not valid UTF-8 (byte " + std::to_string(bad) + ")";
  return "";
}

std::string LabelProblem(std::string_view label) {
  if (std::string p = TextProblem(label); !p.empty()) return p;
  if (label.empty()) return "empty";
  if (label.size() > kMaxWorkloadNameBytes)
    return "longer than " + std::to_string(kMaxWorkloadNameBytes) + " bytes";
  for (size_t i = 0; i < label.size();) {
    uint32_t cp = 0;
    const size_t n = Utf8SequenceAt(label, i, &cp);
    if (IsControlCodePoint(cp)) {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", cp);
      return std::string("contains a control character (") + code + ") at byte " +
             std::to_string(i);
    }
    i += n;
  }
  return "";
}

std::string NameProblem(std::string_view name) {
  if (std::string p = LabelProblem(name); !p.empty()) return p;
  if (name.find_first_not_of("0123456789") == std::string_view::npos)
    return "'" + std::string(name) +
           "' would read as a workload id (the API looks up an all-digit key as an id); add a "
           "letter";
  return "";
}

Status CheckSubmittedText(const WorkloadSpec& s) {
  if (std::string p = NameProblem(s.name); !p.empty()) return FieldProblem(s, "name", p);
  const auto check = [&](const std::string& field, const std::string& value) -> Status {
    if (std::string p = TextProblem(value); !p.empty()) return FieldProblem(s, field, p);
    return OkStatus();
  };
  // A tenant and a class name are shown and exported wherever the workload is (lists,
  // explanations, /metrics labels): labels, as a name is.
  if (std::string p = LabelProblem(s.tenant); !p.empty()) return FieldProblem(s, "tenant", p);
  for (size_t c = 0; c < s.realtime.classes.size(); ++c)
    if (std::string p = LabelProblem(s.realtime.classes[c].name); !p.empty())
      return FieldProblem(s, "classes[" + std::to_string(c) + "].name", p);
  const auto check_command =
      [&](const std::string& at, const std::vector<std::string>& argv,
          const std::vector<std::pair<std::string, std::string>>& env) -> Status {
    for (size_t i = 0; i < argv.size(); ++i)
      AIRTIME_RETURN_IF_ERROR(check(at + "command[" + std::to_string(i) + "]", argv[i]));
    for (const auto& [key, value] : env) {
      if (std::string p = TextProblem(key); !p.empty())
        return FieldProblem(s, at + "env", "a variable name " + p);
      AIRTIME_RETURN_IF_ERROR(check(at + "env." + key, value));
    }
    return OkStatus();
  };
  AIRTIME_RETURN_IF_ERROR(check_command("", s.exec.argv, s.exec.env));
  for (size_t v = 0; v < s.realtime.variants.size(); ++v) {
    const ModelVariant& mv = s.realtime.variants[v];
    const std::string at = "variants[" + std::to_string(v) + "]";
    // A variant's name ends its members' names ("<service>/<variant>"), which the API reaches.
    if (std::string p = NameProblem(s.name + "/" + mv.name); !p.empty())
      return FieldProblem(s, at + ".name",
                          "the member's name '" + s.name + "/" + mv.name + "' " + p);
    AIRTIME_RETURN_IF_ERROR(check_command(at + ".", mv.command, mv.env));
  }
  AIRTIME_RETURN_IF_ERROR(check("workdir", s.exec.workdir));
  AIRTIME_RETURN_IF_ERROR(check("metrics.path", s.exec.metrics_path));
  AIRTIME_RETURN_IF_ERROR(check("metrics.class_label", s.exec.demand_class_label));
  for (size_t i = 0; i < s.exec.demand_metrics.size(); ++i)
    AIRTIME_RETURN_IF_ERROR(
        check("metrics.demand[" + std::to_string(i) + "]", s.exec.demand_metrics[i]));
  AIRTIME_RETURN_IF_ERROR(check("mig", s.shape.mig_profile));
  AIRTIME_RETURN_IF_ERROR(check("family", s.family));
  return OkStatus();
}

StatusOr<Submission> ParseSubmission(const Caller& caller, std::string_view body,
                                     std::string_view origin) {
  auto text = PrepareBody(body, origin);
  if (!text.ok()) return text.status();
  auto scenario = ParseSubmissionYaml(*text, origin);
  if (!scenario.ok()) return NameJsonSyntax(body, origin, scenario.status());
  if (!scenario->events.empty() || !scenario->traces.empty())
    return InvalidArgument(std::string(origin) +
                           ": events, traces and demand_trace are for the simulator; submit "
                           "workloads (report demand with POST /v1/workloads/ID/demand)");
  if (scenario->workloads.empty())
    return InvalidArgument(std::string(origin) + ": no workload in the request");
  for (WorkloadSpec& spec : scenario->workloads) {
    AIRTIME_RETURN_IF_ERROR(CheckSubmittedText(spec));
    if (!caller.admin) {
      if (spec.tenant != "default" && spec.tenant != caller.tenant)
        return Status(StatusCode::kPermissionDenied,
                      spec.SourceOf("tenant") + ": workload '" + spec.name +
                          "': field 'tenant': '" + spec.tenant +
                          "' is not your tenant (your token is for '" + caller.tenant + "')");
      spec.tenant = caller.tenant;
    }
  }
  // A service with variants runs as its members, one workload each (the store's rows follow
  // this order, and a restart expands the stored text the same way).
  return Submission{ExpandAllVariants(std::move(scenario->workloads)), std::move(*text)};
}

StatusOr<Scenario> ParseStoredSubmission(std::string_view body, std::string_view origin) {
  auto sc = ParseSubmissionYaml(body, origin);
  if (sc.ok()) sc->workloads = ExpandAllVariants(std::move(sc->workloads));
  return sc;
}

}  // namespace airtime
