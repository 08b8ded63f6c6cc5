// Tokens: parsing the token file, generating a default one, constant-time authentication.
#include "airtime/api/tokens.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "airtime/base/strings.h"

namespace airtime {
namespace {

constexpr size_t kMinTokenLength = 16;
constexpr size_t kMaxTokenLength = 256;

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("._~+/=-", c) != nullptr;
}

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

// Equal in time that depends only on the lengths, not on where the strings differ.
bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? a[i] : 0;
    const unsigned char y = i < b.size() ? b[i] : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

Status CheckEntry(std::string_view name, std::string_view token) {
  for (char c : name) {
    if (!IsNameChar(c))
      return InvalidArgument("name '" + std::string(name) +
                             "': expected letters, digits, '-', '_' or '.'");
  }
  if (token.size() < kMinTokenLength || token.size() > kMaxTokenLength) {
    return InvalidArgument("token for '" + std::string(name) + "': expected 16 to 256 characters");
  }
  for (char c : token) {
    if (!IsTokenChar(c)) {
      return InvalidArgument("token for '" + std::string(name) +
                             "': expected only letters, digits and ._~+/=-");
    }
  }
  return OkStatus();
}

Status LineError(std::string_view origin, int line, const std::string& what) {
  return InvalidArgument(std::string(origin) + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

StatusOr<Tokens> Tokens::Parse(std::string_view text, std::string_view origin) {
  Tokens out;
  std::unordered_set<std::string> seen;
  int line_no = 0;
  for (std::string_view raw : Split(text, '\n')) {
    ++line_no;
    const std::string_view line = Trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const auto f = Fields(line);
    if (f.size() != 2) {
      return LineError(origin, line_no, "expected 'NAME TOKEN' (NAME a tenant or admin)");
    }
    const Status st = CheckEntry(f[0], f[1]);
    if (!st.ok()) return LineError(origin, line_no, st.message());
    if (!seen.insert(std::string(f[1])).second) {
      return LineError(origin, line_no, "this token appears on an earlier line");
    }
    out.entries_.push_back({std::string(f[0]), std::string(f[1])});
  }
  if (out.entries_.empty()) return InvalidArgument(std::string(origin) + ": no tokens");
  return out;
}

StatusOr<Tokens> Tokens::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open token file: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Internal(path + ": cannot read token file");
  return Parse(ss.str(), path);
}

StatusOr<std::string> RandomToken() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!in.read(reinterpret_cast<char*>(bytes), sizeof bytes)) {
    return Internal("/dev/urandom: cannot read random bytes");
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

namespace {

Status WriteNewTokenFile(const std::string& path, const std::string& token) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return OkStatus();  // another process made it first: load that one
    return Internal(path + ": cannot create token file: " + std::strerror(errno));
  }
  const std::string text =
      "# airtime API tokens, one 'NAME TOKEN' a line (NAME a tenant, or admin).\n"
      "# Keep this file mode 0600.\n"
      "admin " +
      token + "\n";
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int saved = errno;
  ::close(fd);
  if (!ok) return Internal(path + ": cannot write token file: " + std::strerror(saved));
  return OkStatus();
}

}  // namespace

StatusOr<Tokens> Tokens::GenerateDefault(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    auto token = RandomToken();
    if (!token.ok()) return token.status();
    AIRTIME_RETURN_IF_ERROR(WriteNewTokenFile(path, *token));
  }
  return Load(path);
}

StatusOr<Caller> Tokens::Authenticate(std::string_view header) const {
  constexpr std::string_view kBearer = "bearer ";  // the scheme is case-insensitive
  if (Trim(header).empty()) {
    return Status(StatusCode::kUnauthenticated,
                  "missing 'Authorization: Bearer TOKEN' header (set AIRTIME_TOKEN or --token)");
  }
  if (header.size() <= kBearer.size() || ToLower(header.substr(0, kBearer.size())) != "bearer ") {
    return Status(StatusCode::kUnauthenticated,
                  "malformed Authorization header: expected 'Bearer TOKEN'");
  }
  const std::string_view token = Trim(header.substr(kBearer.size()));
  const Entry* match = nullptr;
  for (const Entry& e : entries_) {  // no early exit: every entry costs the same
    if (ConstantTimeEqual(e.token, token) && match == nullptr) match = &e;
  }
  if (match == nullptr) return Status(StatusCode::kUnauthenticated, "invalid token");
  if (match->name == "admin") return Caller{"", true};
  return Caller{match->name, false};
}

std::string Tokens::AdminToken() const {
  for (const Entry& e : entries_) {
    if (e.name == "admin") return e.token;
  }
  return "";
}

}  // namespace airtime
