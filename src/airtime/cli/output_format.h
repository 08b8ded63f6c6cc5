// OutputFormat: how a client command prints the daemon's answer (`-o`), as kubectl's -o.
//
//   table  the command's aligned text (the default)
//   wide   the table with more columns, and nothing cut (reasons whole)
//   json   the daemon's JSON answer, indented (`--json` is the same)
//   yaml   the same document as YAML
//   name   one name per line (workloads, GPUs by UUID), for scripts and xargs
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "airtime/base/status.h"

namespace airtime {

enum class OutputFormat { kTable, kWide, kJson, kYaml, kName };

// "table", "wide", "json", "yaml" or "name"; anything else is an error naming the value and
// the choices.
StatusOr<OutputFormat> ParseOutputFormat(std::string_view text);
// The words ParseOutputFormat takes, space-separated (for help text and completion).
const char* OutputFormatChoices();

// `doc` as a YAML document (block style; strings quoted where YAML would read them as
// something else), ending with a newline.
std::string JsonToYaml(const nlohmann::json& doc);

// One name per line: each element's `key` of the array `doc[list]` ("workloads"/"name",
// "gpus"/"uuid"); a single object's `key` when `list` is absent. Missing names are skipped.
std::string NamesOf(const nlohmann::json& doc, const char* list, const char* key);

}  // namespace airtime
