// Tokens: who may call the HTTP API, read from a token file.
//
// The file holds one token a line, "NAME TOKEN": NAME is a tenant, or the word `admin` for
// an admin token (sees and changes every tenant's workloads). Blank lines and lines that
// start with '#' are skipped. A token is 16 to 256 characters of [A-Za-z0-9._~+/=-]; a
// tenant may have several tokens (rotation), one token may not appear twice. Example:
//
//   # airtime tokens: keep this file mode 0600
//   admin  4f0c...e1                      (64 hex digits from GenerateDefault)
//   team-a 9b1d...77
//
// A request authenticates with the header "Authorization: Bearer TOKEN". Tokens are
// compared in constant time against every entry. Immutable after loading: safe to share
// between the server's threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "airtime/api/control_plane.h"
#include "airtime/base/status.h"

namespace airtime {

// The token file's name inside the daemon's data directory.
inline constexpr const char* kTokensFileName = "tokens";

class Tokens {
 public:
  struct Entry {
    std::string name;  // tenant name, or "admin"
    std::string token;
  };

  Tokens() = default;
  // Parses the file at `path`; errors name the path and line ("tokens:3: ...").
  static StatusOr<Tokens> Load(const std::string& path);
  // Parses `text`; `origin` names it in errors.
  static StatusOr<Tokens> Parse(std::string_view text, std::string_view origin);
  // Loads `path`; when it does not exist, first creates it (mode 0600) with one admin token
  // of 32 random bytes from /dev/urandom, as 64 hex digits.
  static StatusOr<Tokens> GenerateDefault(const std::string& path);

  // "Bearer TOKEN" -> the caller; kUnauthenticated when the header is missing, malformed
  // or names no known token.
  StatusOr<Caller> Authenticate(std::string_view authorization_header) const;

  // The first admin token ("" when none): what a local client uses with --data DIR.
  std::string AdminToken() const;
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

// 32 random bytes from /dev/urandom as 64 lowercase hex digits.
StatusOr<std::string> RandomToken();

}  // namespace airtime
