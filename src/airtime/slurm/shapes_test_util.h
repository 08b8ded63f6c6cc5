// For the API shapes' tests: hostile values in every field of a recorded answer.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace airtime::slurm {

// One value of each JSON type, and the awkward ones (an open hostlist, a huge number).
inline std::vector<nlohmann::json> EveryJsonType() {
  using json = nlohmann::json;
  return {nullptr,
          true,
          -1,
          1.5,
          "",
          "n[1-",
          json::array(),
          json::object(),
          json::array({1, "a"}),
          18446744073709551615ULL};
}

struct MutationOutcome {
  int errors = 0;  // answers the parser refused
  int parsed = 0;  // answers it read
};

// Each field of each element of base[key] (with `nested`, also each field of each object
// in it: an exit code, a NO_VAL number, job_resources...) replaced by each of
// EveryJsonType() in turn, and the result handed to `parse`, which returns whether it was
// read. The parser must answer, never throw or crash.
template <typename Parse>
MutationOutcome MutateEveryField(const nlohmann::json& base, const std::string& key, bool nested,
                                 Parse parse) {
  using json = nlohmann::json;
  MutationOutcome out;
  for (size_t i = 0; i < base[key].size(); ++i) {
    std::vector<json::json_pointer> paths;
    for (const auto& [field, v] : base[key][i].items()) {
      json::json_pointer p("/" + key + "/" + std::to_string(i) + "/" + field);
      paths.push_back(p);
      if (nested && v.is_object())
        for (const auto& [inner, _] : v.items()) paths.push_back(p / inner);
    }
    for (const auto& p : paths) {
      for (const json& v : EveryJsonType()) {
        json mutated = base;
        mutated[p] = v;
        parse(mutated) ? ++out.parsed : ++out.errors;
      }
    }
  }
  return out;
}

}  // namespace airtime::slurm
