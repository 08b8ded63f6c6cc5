#include "airtime/slurm/json_fields.h"

#include <limits>

namespace airtime::slurm {

std::string JsonTypeName(const nlohmann::json& v) {
  if (v.is_number_float()) return "a fractional number";
  if (v.is_number()) return "an integer";
  return v.type_name();
}

JsonFields::JsonFields(const nlohmann::json& obj, std::string where)
    : obj_(obj), where_(std::move(where)) {
  if (!obj_.is_object())
    status_ = InvalidArgument(where_ + ": expected an object, got " + JsonTypeName(obj_));
}

void JsonFields::Fail(std::string_view key, const std::string& why) {
  if (status_.ok()) status_ = InvalidArgument(where_ + "." + std::string(key) + ": " + why);
}

void JsonFields::Merge(const Status& nested) {
  if (status_.ok() && !nested.ok()) status_ = nested;
}

const nlohmann::json* JsonFields::Find(std::string_view key, bool required) {
  if (!status_.ok()) return nullptr;
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) {
    if (required) Fail(key, "missing");
    return nullptr;
  }
  return &*it;
}

std::string JsonFields::String(std::string_view key) {
  const nlohmann::json* v = Find(key, true);
  if (v == nullptr) return "";
  if (!v->is_string()) {
    Fail(key, "expected a string, got " + JsonTypeName(*v));
    return "";
  }
  return v->get<std::string>();
}

std::string JsonFields::OptionalString(std::string_view key, std::string fallback) {
  const nlohmann::json* v = Find(key, false);
  if (v == nullptr) return fallback;
  if (!v->is_string()) {
    Fail(key, "expected a string, got " + JsonTypeName(*v));
    return fallback;
  }
  return v->get<std::string>();
}

namespace {

// An integral JSON number as int64, refusing fractions and values out of range.
bool ToInt64(const nlohmann::json& v, int64_t* out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true;
  }
  return false;
}

}  // namespace

int64_t JsonFields::Int(std::string_view key) {
  const nlohmann::json* v = Find(key, true);
  if (v == nullptr) return 0;
  int64_t out = 0;
  if (!ToInt64(*v, &out)) Fail(key, "expected an integer, got " + JsonTypeName(*v));
  return out;
}

int64_t JsonFields::OptionalInt(std::string_view key, int64_t fallback) {
  const nlohmann::json* v = Find(key, false);
  if (v == nullptr) return fallback;
  int64_t out = fallback;
  if (!ToInt64(*v, &out)) Fail(key, "expected an integer, got " + JsonTypeName(*v));
  return out;
}

int64_t JsonFields::OptionalNoValInt(std::string_view key, int64_t fallback) {
  const nlohmann::json* v = Find(key, false);
  if (v == nullptr) return fallback;
  int64_t out = fallback;
  if (ToInt64(*v, &out)) return out;
  if (!v->is_object()) {
    Fail(key, "expected an integer or {set, infinite, number}, got " + JsonTypeName(*v));
    return fallback;
  }
  JsonFields inner(*v, where_ + "." + std::string(key));
  const nlohmann::json* set = inner.Find("set", false);
  const nlohmann::json* infinite = inner.Find("infinite", false);
  const int64_t number = inner.OptionalInt("number", fallback);
  if (set != nullptr && !set->is_boolean())
    inner.Fail("set", "expected a boolean, got " + JsonTypeName(*set));
  if (infinite != nullptr && !infinite->is_boolean())
    inner.Fail("infinite", "expected a boolean, got " + JsonTypeName(*infinite));
  if (!inner.status().ok()) {
    Merge(inner.status());
    return fallback;
  }
  const bool is_set = set == nullptr || set->get<bool>();
  const bool is_infinite = infinite != nullptr && infinite->get<bool>();
  return is_set && !is_infinite ? number : fallback;
}

std::vector<std::string> JsonFields::OptionalStringArray(std::string_view key) {
  std::vector<std::string> out;
  const nlohmann::json* v = Find(key, false);
  if (v == nullptr) return out;
  if (!v->is_array()) {
    Fail(key, "expected an array, got " + JsonTypeName(*v));
    return out;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& e = (*v)[i];
    if (!e.is_string()) {
      Fail(std::string(key) + "[" + std::to_string(i) + "]",
           "expected a string, got " + JsonTypeName(e));
      return {};
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

const nlohmann::json* JsonFields::Array(std::string_view key) {
  const nlohmann::json* v = Find(key, true);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) {
    Fail(key, "expected an array, got " + JsonTypeName(*v));
    return nullptr;
  }
  return v;
}

}  // namespace airtime::slurm
