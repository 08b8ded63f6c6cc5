// OutputFormat: parsing `-o` and the YAML and name renderings.
#include "airtime/cli/output_format.h"

#include <yaml-cpp/yaml.h>

namespace airtime {
namespace {

using nlohmann::json;

void Emit(YAML::Emitter& out, const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out << YAML::Key << it.key() << YAML::Value;
        Emit(out, it.value());
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      out << YAML::BeginSeq;
      for (const json& e : v) Emit(out, e);
      out << YAML::EndSeq;
      break;
    case json::value_t::string: {
      // Quoted, so that "yes", "1e3" or "null" stay strings when read back.
      out << YAML::DoubleQuoted << v.get<std::string>();
      break;
    }
    case json::value_t::null:
      out << YAML::Null;
      break;
    case json::value_t::boolean:
      out << v.get<bool>();
      break;
    default:  // numbers as JSON writes them (shortest round trip)
      out << v.dump();
      break;
  }
}

}  // namespace

StatusOr<OutputFormat> ParseOutputFormat(std::string_view text) {
  if (text == "table") return OutputFormat::kTable;
  if (text == "wide") return OutputFormat::kWide;
  if (text == "json") return OutputFormat::kJson;
  if (text == "yaml") return OutputFormat::kYaml;
  if (text == "name") return OutputFormat::kName;
  return InvalidArgument("-o: expected one of " + std::string(OutputFormatChoices()) + ", got '" +
                         std::string(text) + "'");
}

const char* OutputFormatChoices() { return "table wide json yaml name"; }

std::string JsonToYaml(const json& doc) {
  YAML::Emitter out;
  out.SetIndent(2);
  Emit(out, doc);
  std::string text = out.c_str();
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

std::string NamesOf(const json& doc, const char* list, const char* key) {
  std::string out;
  auto add = [&](const json& item) {
    if (!item.is_object()) return;
    auto it = item.find(key);
    if (it == item.end() || it->is_null()) return;
    out += (it->is_string() ? it->get<std::string>() : it->dump()) + "\n";
  };
  if (doc.is_object() && doc.contains(list) && doc[list].is_array()) {
    for (const json& item : doc[list]) add(item);
  } else {
    add(doc);
  }
  return out;
}

}  // namespace airtime
