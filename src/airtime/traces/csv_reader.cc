#include "airtime/traces/csv_reader.h"

#include <charconv>
#include <cmath>
#include <filesystem>

#include "airtime/base/file_read.h"
#include "airtime/base/strings.h"
#include "airtime/base/utf8.h"

namespace airtime {
namespace {

bool IsBlank(std::string_view s) { return Trim(s).empty(); }

// A field or column name as a message quotes it: its first 40 bytes (a garbled line does
// not flood the log), shown as a terminal may show them (a binary file's bytes are
// escapes, not control sequences).
std::string Quoted(std::string_view s) {
  constexpr size_t kMax = 40;
  // Built by appending: GCC 12 -O3 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string out(1, '\'');
  out.append(PrintableText(s.substr(0, kMax)));
  out.append(s.size() <= kMax ? "'" : "...'");
  return out;
}

}  // namespace

CsvReader::CsvReader(std::string text, std::string file)
    : file_(std::move(file)), text_(std::make_unique<const std::string>(std::move(text))) {
  if (text_->starts_with("\xEF\xBB\xBF")) pos_ = 3;  // UTF-8 byte-order mark
}

StatusOr<CsvReader> CsvReader::Open(const std::string& path, std::string_view what) {
  const std::string named = std::string(what) + " '" + path + "'";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(named + " not found");
  if (std::filesystem::is_directory(path, ec)) return InvalidArgument(named + " is a directory");
  auto text = ReadFileBounded(path, kMaxTraceFileBytes, what);
  if (!text.ok()) return text.status();
  return CsvReader(std::move(*text), path);
}

CsvReader CsvReader::FromText(std::string text, std::string display_name) {
  return CsvReader(std::move(text), std::move(display_name));
}

std::string_view CsvReader::base_name() const {
  std::string_view f = file_;
  size_t slash = f.find_last_of('/');
  return slash == std::string_view::npos ? f : f.substr(slash + 1);
}

bool CsvReader::Next() {
  const std::string& t = *text_;
  while (pos_ < t.size()) {
    size_t end = t.find('\n', pos_);
    if (end == std::string::npos) end = t.size();
    std::string_view line(t.data() + pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line_ = next_line_++;
    pos_ = end + 1;
    if (IsBlank(line)) continue;
    raw_ = line;
    problem_.clear();
    bad_quote_ = false;
    if (line.size() > kMaxTraceLineBytes) {
      problem_ = "line of " + std::to_string(line.size()) + " bytes, longer than the " +
                 std::to_string(kMaxTraceLineBytes) + "-byte limit for a trace line";
      raw_ = line.substr(0, 80);
      fields_.clear();
      return true;
    }
    bad_quote_ = !SplitRecord();
    if (line.find('\0') != std::string_view::npos) {
      size_t col = 0;
      while (col < fields_.size() && fields_[col].find('\0') == std::string_view::npos) ++col;
      problem_ = col < fields_.size() ? "column '" + ColumnName(col) + "': NUL byte in the field"
                                      : std::string("NUL byte in the line");
    }
    return true;
  }
  pos_ = t.size();
  fields_.clear();
  raw_ = {};
  problem_.clear();
  return false;
}

bool CsvReader::SplitRecord() {
  fields_.clear();
  unescaped_.clear();
  std::string_view s = raw_;
  size_t i = 0;
  while (true) {
    // Skip leading spaces to see whether the field is quoted.
    size_t j = i;
    while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
    if (j < s.size() && s[j] == '"') {
      std::string value;
      bool doubled = false;
      size_t k = j + 1;
      for (;; ++k) {
        if (k >= s.size()) return false;  // unterminated quote
        if (s[k] != '"') continue;
        if (k + 1 < s.size() && s[k + 1] == '"') {
          doubled = true;
          ++k;
          continue;
        }
        break;
      }
      std::string_view inner = s.substr(j + 1, k - j - 1);
      if (doubled) {
        for (size_t m = 0; m < inner.size(); ++m) {
          value += inner[m];
          if (inner[m] == '"') ++m;  // "" -> "
        }
        unescaped_.push_back(std::move(value));
        fields_.push_back(unescaped_.back());
      } else {
        fields_.push_back(inner);
      }
      size_t comma = s.find(',', k + 1);
      if (!Trim(s.substr(k + 1,
                         comma == std::string_view::npos ? std::string_view::npos : comma - k - 1))
               .empty())
        return false;  // text after the closing quote
      if (comma == std::string_view::npos) return true;
      i = comma + 1;
      continue;
    }
    size_t comma = s.find(',', i);
    if (comma == std::string_view::npos) {
      fields_.push_back(Trim(s.substr(i)));
      return true;
    }
    fields_.push_back(Trim(s.substr(i, comma - i)));
    i = comma + 1;
  }
}

Status CsvReader::ReadHeader() {
  if (!Next()) return InvalidArgument(file_ + ": empty file, expected a header line");
  if (!problem_.empty()) return Error("malformed header: " + problem_);
  if (bad_quote_) return Error("malformed header (unterminated quote)");
  header_line_ = line_;
  columns_.clear();
  for (std::string_view f : fields_) {
    std::string name(f);
    for (const auto& c : columns_)
      if (c == name) return Error("header repeats column '" + name + "'");
    columns_.push_back(std::move(name));
  }
  return OkStatus();
}

void CsvReader::SetColumns(std::vector<std::string> names) { columns_ = std::move(names); }

std::optional<size_t> CsvReader::Column(std::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i)
    if (columns_[i] == name) return i;
  return std::nullopt;
}

StatusOr<size_t> CsvReader::RequireColumn(std::string_view name) const {
  if (auto c = Column(name)) return *c;
  std::vector<std::string> found;
  for (size_t i = 0; i < columns_.size() && i < 12; ++i)
    found.push_back(PrintableText(columns_[i].substr(0, 40)) +
                    (columns_[i].size() > 40 ? "..." : ""));
  if (columns_.size() > 12) found.push_back("...");
  return InvalidArgument(file_ + ":" + std::to_string(header_line_) + ": missing column '" +
                         std::string(name) + "' (columns: " + Join(found, ", ") + ")");
}

Status CsvReader::CheckFieldCount() const {
  if (!problem_.empty()) return Error(problem_);
  if (bad_quote_) return Error("malformed quoted field");
  if (fields_.size() == columns_.size()) return OkStatus();
  return Error("expected " + std::to_string(columns_.size()) + " fields (" + Join(columns_, ",") +
               "), got " + std::to_string(fields_.size()));
}

std::string CsvReader::ColumnName(size_t col) const {
  if (col < columns_.size()) return columns_[col];
  std::string name(1, '#');
  name.append(std::to_string(col + 1));
  return name;
}

Status CsvReader::Error(std::string_view what) const {
  return InvalidArgument(file_ + ":" + std::to_string(line_) + ": " + std::string(what));
}

Status CsvReader::ColumnError(size_t col, std::string_view what) const {
  return Error("column " + Quoted(ColumnName(col)) + ": " + std::string(what));
}

Status CsvReader::FieldError(size_t col, std::string_view expected) const {
  std::string_view got = col < fields_.size() ? fields_[col] : std::string_view();
  return ColumnError(col, "expected " + std::string(expected) + ", got " + Quoted(got));
}

StatusOr<int64_t> CsvReader::Int(size_t col) const {
  if (col >= fields_.size()) return FieldError(col, "an integer");
  std::string_view s = fields_[col];
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size())
    return FieldError(col, "an integer");
  return v;
}

StatusOr<double> CsvReader::Double(size_t col) const {
  if (col >= fields_.size()) return FieldError(col, "a number");
  std::string_view s = fields_[col];
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
    return FieldError(col, "a number");
  return v;
}

StatusOr<int64_t> CsvReader::WholeNumber(size_t col) const {
  if (col >= fields_.size()) return FieldError(col, "a whole number");
  std::string_view s = fields_[col];
  int64_t i = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (!s.empty() && ec == std::errc() && p == s.data() + s.size()) return i;
  double v = 0;
  auto [q, ec2] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec2 != std::errc() || q != s.data() + s.size() || !std::isfinite(v) ||
      v != std::floor(v) || std::fabs(v) > 9e15)
    return FieldError(col, "a whole number");
  return static_cast<int64_t>(v);
}

}  // namespace airtime
