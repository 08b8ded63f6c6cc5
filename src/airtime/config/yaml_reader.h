// YamlFile and MapReader: typed, validated reading of yaml-cpp nodes with "FILE:LINE: " errors.
//
// Internal to airtime_config (the public loaders are cluster_yaml.h and workload_yaml.h).
// YamlFile knows the file name and turns a node's position into "file:12" (1-based lines);
// it also parses the text, so that a syntax error carries its line too. MapReader wraps one
// YAML mapping that describes a thing (a node, a workload, an event): it rejects unknown
// and duplicate keys (suggesting the nearest known key within edit distance 2) and reads each
// field as a string, integer, number, boolean or duration, checking its range. Every error
// is an InvalidArgument of the form
//   "FILE:LINE: <subject>: field '<name>': expected <what>, found <what was there>".
// Absent fields leave the output untouched, so callers set defaults first. Not thread-safe;
// a reader lives for the parse of one mapping.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/base/time.h"
#include "airtime/config/yaml_budget.h"
#include "airtime/model/gpu_catalog.h"

namespace airtime::yaml_internal {

// Levenshtein distance between two strings.
int EditDistance(std::string_view a, std::string_view b);
// " (did you mean 'X'?)" for the candidate nearest `word` (case-insensitive) within edit
// distance 2 and shorter than the candidate itself, else "".
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);
// What a node holds, for "found ..." in messages: "'abc'", "a list", "a mapping", "nothing".
std::string DescribeFound(const YAML::Node& node);

class YamlFile {
 public:
  explicit YamlFile(std::string filename);

  const std::string& name() const { return name_; }
  // 1-based line of a node; `fallback` when yaml-cpp has no position for it.
  int Line(const YAML::Node& node, int fallback = 0) const;
  // "file:12".
  std::string Where(int line) const;
  // InvalidArgument("file:12: message").
  Status ErrorAt(int line, std::string_view message) const;
  // Parses every document of `text` within `budget` (yaml_budget.h: libyaml checks the text
  // before yaml-cpp sees it); a syntax error gives "file:LINE: YAML syntax error: ...", an
  // exceeded budget "file:LINE: YAML too large: ...".
  StatusOr<std::vector<YAML::Node>> LoadAll(std::string_view text,
                                            const YamlBudget& budget = {}) const;
  // `path` relative to the directory of this file (unchanged when absolute or when the file
  // name has no directory).
  std::string ResolvePath(std::string_view path) const;

 private:
  std::string name_;
};

// The whole content of the file at `path`, for the Load* functions: a regular file of at most
// YamlBudget::max_bytes (file_read.h); NotFound names the path. `what` names the kind of file
// in messages.
StatusOr<std::string> ReadFileToString(const std::string& path,
                                       std::string_view what = "YAML file");

// A MapReader refers to its YamlFile, which must outlive it.
class MapReader {
 public:
  struct Entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
  };

  // Checks that `node` is a mapping with unique scalar keys, all in `known`. YAML's merge key
  // is read: `<<: *defaults` (or a list of such mappings) gives the fields of those mappings
  // that this one does not give itself, the earlier mapping first. `subject` names
  // the thing in messages ("workload 'chat'"); `field` is the field path this mapping sits
  // under ("slo"), empty for a top-level thing; `line_hint` is used when `node` has no
  // position (a null value).
  static StatusOr<MapReader> Open(const YamlFile& file, const YAML::Node& node, std::string subject,
                                  std::string field, const std::vector<std::string>& known,
                                  int line_hint = 0);
  // As Open, but any (unique, scalar) key is accepted: for open-ended option mappings.
  static StatusOr<MapReader> OpenAnyKeys(const YamlFile& file, const YAML::Node& node,
                                         std::string subject, std::string field, int line_hint = 0);

  // The mapping under `key` (absent: an empty reader), with fields named "key.x".
  StatusOr<MapReader> Sub(std::string_view key, const std::vector<std::string>& known) const;
  StatusOr<MapReader> SubAnyKeys(std::string_view key) const;

  const YamlFile& file() const { return *file_; }
  const std::string& subject() const { return subject_; }
  void set_subject(std::string subject) { subject_ = std::move(subject); }
  int line() const { return line_; }
  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  // The value under `key`; a null node when absent.
  YAML::Node Get(std::string_view key) const;
  // Line of the value under `key` (its key's line when the value is null; the mapping's line
  // when absent).
  int LineOf(std::string_view key) const;
  // "subject: field 'prefix.key'" for messages.
  std::string FieldName(std::string_view key) const;

  // "FILE:LINE: subject: field 'key': <message>" at the key's value.
  Status FieldError(std::string_view key, std::string_view message) const;
  // "... field 'key': expected <expected>, found <what is there><hint>".
  Status Expected(std::string_view key, std::string_view expected,
                  std::string_view hint = "") const;
  // "FILE:LINE: subject: missing required field 'key'" at the mapping.
  Status Missing(std::string_view key, std::string_view hint = "") const;
  Status Require(std::string_view key, std::string_view hint = "") const;
  // Error when both synonyms are present.
  Status OneOf(std::string_view a, std::string_view b) const;

  Status String(std::string_view key, std::string* out) const;  // non-empty scalar
  Status Int(std::string_view key, int64_t* out, int64_t lo,
             int64_t hi = std::numeric_limits<int64_t>::max()) const;
  Status Int(std::string_view key, int* out, int64_t lo,
             int64_t hi = std::numeric_limits<int>::max()) const;
  // A finite number in [lo, hi] (or (lo, hi] with lo_open).
  Status Number(std::string_view key, double* out, double lo, double hi,
                bool lo_open = false) const;
  Status Bool(std::string_view key, bool* out) const;
  Status Duration(std::string_view key, DurationMs* out) const;
  // A scalar or a list of scalars (each a non-empty string), with the line of each.
  Status StringList(std::string_view key, std::vector<std::pair<std::string, int>>* out) const;

 private:
  MapReader() = default;
  static StatusOr<MapReader> OpenImpl(const YamlFile& file, const YAML::Node& node,
                                      std::string subject, std::string field,
                                      const std::vector<std::string>* known, int line_hint);
  StatusOr<MapReader> SubImpl(std::string_view key, const std::vector<std::string>* known) const;
  // Adds the fields of the merge key's `value` (at `line`) that `seen` does not hold yet.
  // `depth`: merges within merged mappings; `budget`: fields read through merges so far.
  Status Merge(const YAML::Node& value, int line, std::unordered_map<std::string, size_t>* seen,
               const std::vector<std::string>* known, int depth, size_t* budget);
  Status AddEntry(std::string key, const YAML::Node& key_node, const YAML::Node& value, int line,
                  std::unordered_map<std::string, size_t>* seen,
                  const std::vector<std::string>* known);
  const Entry* Find(std::string_view key) const;
  std::string Prefix() const;

  const YamlFile* file_ = nullptr;
  std::string subject_;
  std::string field_;
  int line_ = 0;
  std::vector<Entry> entries_;
};

// Messages shared by the loaders.
inline constexpr std::string_view kDurationExpected =
    "a duration such as 90s, 15m, 2h, 1d or a number of seconds, from 0 to 1e12 s";

// "workload 'x'" when `node` is a mapping with a scalar `name`, else "workload #<index+1>":
// the subject of messages about the index-th thing of a list.
std::string NamedSubject(const YAML::Node& node, std::string_view kind, size_t index);

// Looks `name` up in the catalogue; the error text (no position) says what was expected
// and what was found, with a did-you-mean hint: "expected a GPU type (known: ...), found 'X'".
StatusOr<GpuTypeId> FindGpuType(const GpuCatalog& catalog, std::string_view name);

}  // namespace airtime::yaml_internal
