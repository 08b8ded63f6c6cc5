// CatalogTypeForModel: the NVML name -> catalogue type table (see model_names.h).
#include "airtime/gpu/model_names.h"

#include <cctype>
#include <vector>

#include "airtime/base/strings.h"

namespace airtime {
namespace {

// Upper-cased words of the name after the vendor prefix, split at spaces and dashes.
std::vector<std::string> Words(std::string_view name) {
  std::vector<std::string> words;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) words.push_back(cur);
    cur.clear();
  };
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_') {
      flush();
    } else {
      cur.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
  }
  flush();
  while (!words.empty() && (words[0] == "NVIDIA" || words[0] == "TESLA"))
    words.erase(words.begin());
  return words;
}

bool HasWord(const std::vector<std::string>& words, std::string_view w) {
  for (const auto& x : words)
    if (x == w) return true;
  return false;
}

// The larger of a family's two sizes: by memory when known (with room for the few hundred
// MiB the driver keeps), else by the name's size word.
bool IsLargeVariant(const std::vector<std::string>& words, int64_t memory_mib,
                    int64_t threshold_mib, std::string_view large_word) {
  if (memory_mib > 0) return memory_mib >= threshold_mib;
  return HasWord(words, large_word);
}

std::string FamilyType(const std::vector<std::string>& words, int64_t memory_mib) {
  const std::string& f = words[0];
  if (f == "H200" || f == "H100" || f == "L40S" || f == "L4" || f == "T4" || f == "P100" ||
      f == "K80")
    return f;
  if (f == "A10" || f == "A10G") return "A10";
  if (f == "A100")
    return IsLargeVariant(words, memory_mib, 60 * 1024, "80GB") ? "A100-80GB" : "A100-40GB";
  if (f == "V100" || f == "V100S")
    return IsLargeVariant(words, memory_mib, 24 * 1024, "32GB") ? "V100" : "V100-16GB";
  return "";
}

}  // namespace

std::string CatalogTypeForModel(std::string_view nvml_name, int64_t memory_mib,
                                const GpuCatalog& catalog) {
  std::vector<std::string> words = Words(Trim(nvml_name));
  if (words.empty()) return "";
  std::string type = FamilyType(words, memory_mib);
  if (type.empty()) return "";
  auto id = catalog.Find(type);
  return id.ok() ? catalog.type(*id).name : "";
}

}  // namespace airtime
