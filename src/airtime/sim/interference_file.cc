#include "airtime/sim/interference_file.h"

#include <filesystem>
#include <vector>

#include "airtime/base/strings.h"
#include "airtime/traces/csv_reader.h"

namespace airtime {
namespace {

StatusOr<InterferenceModel> Read(CsvReader& csv) {
  AIRTIME_RETURN_IF_ERROR(csv.ReadHeader());
  auto family_col = csv.RequireColumn("family");
  if (!family_col.ok()) return family_col.status();
  auto other_col = csv.RequireColumn("other");
  if (!other_col.ok()) return other_col.status();
  auto factor_col = csv.RequireColumn("factor");
  if (!factor_col.ok()) return factor_col.status();
  std::vector<InterferenceModel::Pair> pairs;
  std::vector<int> lines;  // of each pair, for "listed twice"
  std::vector<std::string> spelled;
  double default_factor = 1.0;
  int default_line = 0;
  // One spelling per family, whatever the case.
  auto spelling = [&](std::string_view name, size_t col) -> StatusOr<std::string> {
    if (name.empty()) return csv.FieldError(col, "a model family");
    for (const std::string& s : spelled) {
      if (s == name) return s;
      if (EqualsIgnoreCase(s, name))
        return csv.ColumnError(col, "family '" + std::string(name) + "' is spelled '" + s +
                                        "' on an earlier line; use one spelling");
    }
    spelled.emplace_back(name);
    return spelled.back();
  };
  while (csv.Next()) {
    AIRTIME_RETURN_IF_ERROR(csv.CheckFieldCount());
    auto factor = csv.Double(*factor_col);
    if (!factor.ok()) return factor.status();
    if (*factor <= 0 || *factor > 1) return csv.FieldError(*factor_col, "a speed factor in (0, 1]");
    const std::string_view a = csv.field(*family_col), b = csv.field(*other_col);
    if (a == "*" || b == "*") {
      if (a != b)
        return csv.Error("'*' stands for every family only as '*,*' (the default factor)");
      if (default_line > 0)
        return csv.Error("the default '*,*' is already set on line " +
                         std::to_string(default_line));
      default_factor = *factor;
      default_line = csv.line();
      continue;
    }
    auto fa = spelling(a, *family_col);
    if (!fa.ok()) return fa.status();
    auto fb = spelling(b, *other_col);
    if (!fb.ok()) return fb.status();
    for (size_t i = 0; i < pairs.size(); ++i)
      if (pairs[i].a == *fa && pairs[i].b == *fb)
        return csv.Error("pair " + *fa + "," + *fb + " is already listed on line " +
                         std::to_string(lines[i]));
    pairs.push_back({*fa, *fb, *factor});
    lines.push_back(csv.line());
  }
  if (pairs.empty())
    return InvalidArgument(csv.file() + ": no pairs (expected rows of family,other,factor)");
  return InterferenceModel(std::move(pairs), default_factor);
}

}  // namespace

StatusOr<InterferenceModel> ParseInterferenceCsv(std::string text, std::string_view filename) {
  CsvReader csv = CsvReader::FromText(std::move(text), std::string(filename));
  return Read(csv);
}

StatusOr<InterferenceModel> LoadInterferenceFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || std::filesystem::is_directory(path, ec))
    return NotFound("interference file '" + path + "' not found" +
                    (std::filesystem::is_directory(path, ec) ? " (it is a folder)" : ""));
  auto csv = CsvReader::Open(path, "interference file");  // refuses /dev/zero, FIFOs, huge files
  if (!csv.ok()) return csv.status();
  return Read(*csv);
}

}  // namespace airtime
