// JsonFields: defensive reads of one JSON object from Slurm.
//
// Every value slurmrestd sends is untrusted. A JsonFields reads fields of one object and
// remembers the first problem, naming the field by its path ("nodes[2].gres: expected a
// string, got number"); the caller reads every field it needs, then checks status() once.
// Reads after an error return empty values. Never throws, whatever the JSON.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "airtime/base/status.h"

namespace airtime::slurm {

class JsonFields {
 public:
  // `where` is the object's path for messages ("jobs[4]"); `obj` must outlive this.
  JsonFields(const nlohmann::json& obj, std::string where);

  // Required fields: absent, null or of another type is an error.
  std::string String(std::string_view key);
  int64_t Int(std::string_view key);
  // Optional fields: absent or null give the fallback; another type is still an error.
  std::string OptionalString(std::string_view key, std::string fallback = "");
  int64_t OptionalInt(std::string_view key, int64_t fallback = 0);
  std::vector<std::string> OptionalStringArray(std::string_view key);
  // A number that slurmrestd v0.0.40 and later may write as {"set": bool, "infinite": bool,
  // "number": N} (Slurm's NO_VAL and INFINITE): N when set and finite, else the fallback.
  // A plain integer is taken as it is.
  int64_t OptionalNoValInt(std::string_view key, int64_t fallback = 0);
  // A required array or object member, or nullptr (with the error recorded).
  const nlohmann::json* Array(std::string_view key);

  // Records a problem found by the caller about `key` (kept only if it is the first).
  void Fail(std::string_view key, const std::string& why);
  // Records the error of a nested object's reader, whose message names its own path (kept
  // only if it is the first).
  void Merge(const Status& nested);
  const Status& status() const { return status_; }
  const std::string& where() const { return where_; }

 private:
  const nlohmann::json* Find(std::string_view key, bool required);

  const nlohmann::json& obj_;
  std::string where_;
  Status status_;
};

// The JSON type's name for messages ("string", "number", "object"...).
std::string JsonTypeName(const nlohmann::json& v);

}  // namespace airtime::slurm
