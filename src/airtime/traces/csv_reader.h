// CsvReader: a small reader for the comma-separated trace files, with line numbers.
//
// The whole file is read into memory once; records are then visited one at a time and
// their fields are string_views into that buffer (no allocation per row, except for a
// quoted field with doubled quotes, which is unescaped into reader-owned storage). It
// tracks the 1-based physical line of the current record so that every error can say
// "FILE:LINE: column 'NAME': expected ..., got '...'". Blank lines (empty or whitespace
// only) are skipped, a trailing '\r' (CRLF files) and a UTF-8 byte-order mark are dropped,
// and fields are trimmed of surrounding spaces. Quoting covers the simple cases: a field
// wholly enclosed in double quotes may contain commas and "" for a quote; quoted newlines
// are not supported. The column names come from a header line (ReadHeader) or, for
// headerless files, from the caller (SetColumns); they serve both lookup by name and
// messages.
//
// Limits (a trace is outside input): Open reads only regular files of at most
// kMaxTraceFileBytes (a FIFO, /dev/zero or a directory is an error, never a hang); a line
// longer than kMaxTraceLineBytes or holding a NUL byte is a broken record that
// CheckFieldCount reports as "FILE:LINE: ..." (a NUL is never cut silently). Not thread-safe;
// one reader per file.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"

namespace airtime {

// The largest trace file Open reads: 1 GiB, some 300 times the largest trace in
// ../shared/traces (philly.csv, 3.4 MB), so a full-size public trace still loads.
inline constexpr size_t kMaxTraceFileBytes = size_t{1} << 30;
// The longest line of a trace: 1 MiB (real rows are under 200 bytes).
inline constexpr size_t kMaxTraceLineBytes = size_t{1} << 20;

class CsvReader {
 public:
  // Reads the file at `path`. NotFound names the path when it does not exist or cannot be
  // read; InvalidArgument when it is not a regular file or is larger than
  // kMaxTraceFileBytes. Messages name the file as `path` was given.
  // `what` names the kind of file in messages.
  static StatusOr<CsvReader> Open(const std::string& path, std::string_view what = "trace file");
  // A reader over in-memory text; `display_name` stands for the file in messages.
  static CsvReader FromText(std::string text, std::string display_name);

  CsvReader(CsvReader&&) = default;
  CsvReader& operator=(CsvReader&&) = default;

  // Reads the first non-blank line as the header and takes its fields as column names.
  // InvalidArgument when the file is empty or a name repeats.
  Status ReadHeader();
  // Names the columns of a headerless file.
  void SetColumns(std::vector<std::string> names);
  const std::vector<std::string>& columns() const { return columns_; }
  // Index of the column called `name` (exact match), if there is one.
  std::optional<size_t> Column(std::string_view name) const;
  // Index of a column that must exist; InvalidArgument "FILE:HEADER_LINE: missing column
  // 'NAME' (columns: a, b, c)" otherwise.
  StatusOr<size_t> RequireColumn(std::string_view name) const;

  // Advances to the next non-blank record; false at the end of the file.
  bool Next();
  // 1-based line number of the current record (of the header right after ReadHeader).
  int line() const { return line_; }
  // The file as messages name it.
  const std::string& file() const { return file_; }
  // The file name without its directories, for "philly.csv:12" source labels.
  std::string_view base_name() const;
  size_t field_count() const { return fields_.size(); }
  std::string_view field(size_t i) const { return fields_[i]; }
  // The whole current line, untrimmed, without its line ending.
  std::string_view raw_line() const { return raw_; }

  // "FILE:LINE: expected N fields (a, b, c), got M" unless the record has exactly the
  // number of named columns; also reports an unterminated quote, a NUL byte and a line over
  // kMaxTraceLineBytes.
  Status CheckFieldCount() const;

  // Typed field access; errors read "FILE:LINE: column 'NAME': expected WHAT, got 'TEXT'".
  StatusOr<int64_t> Int(size_t col) const;
  StatusOr<double> Double(size_t col) const;  // finite numbers only
  // An integer written either plainly ("8") or as a float with no fractional part ("8.0").
  StatusOr<int64_t> WholeNumber(size_t col) const;

  // "FILE:LINE: what".
  Status Error(std::string_view what) const;
  // "FILE:LINE: column 'NAME': what".
  Status ColumnError(size_t col, std::string_view what) const;
  // "FILE:LINE: column 'NAME': expected EXPECTED, got 'TEXT'".
  Status FieldError(size_t col, std::string_view expected) const;

 private:
  CsvReader(std::string text, std::string file);
  // Splits raw_ into fields_; false on an unterminated quote.
  bool SplitRecord();
  std::string ColumnName(size_t col) const;

  std::string file_;
  std::unique_ptr<const std::string> text_;  // on the heap: views survive a move
  size_t pos_ = 0;                           // offset of the next unread line in text_
  int next_line_ = 1;                        // its 1-based line number
  int line_ = 0;                             // line of the current record
  int header_line_ = 0;                      // 0: no header read
  std::string_view raw_;
  std::vector<std::string_view> fields_;
  std::deque<std::string> unescaped_;  // storage for quoted fields with "" inside
  bool bad_quote_ = false;
  std::string problem_;  // why the current record is broken (NUL, too long); empty if not
  std::vector<std::string> columns_;
};

}  // namespace airtime
