// The dashboard's files (web/: TypeScript built by Vite), embedded in the binary at build
// time by web/CMakeLists.txt (cmake/embed_web.cmake writes them as byte arrays), so that
// `airtime server` serves its UI at / without any file or network at run time.
//
// A build without npm and node (or configured with -DAIRTIME_WEB=OFF) embeds no file:
// WebAssetsMissing() then says why, and the API answers / with a page that says how to
// build the UI (http_api.cc).
#pragma once

#include <cstddef>
#include <string_view>

namespace airtime {

struct WebAsset {
  std::string_view path;          // "/index.html", "/assets/index-3qKV-4qf.css"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view etag;          // "\"<16 hex digits of the SHA-256>\""
  const unsigned char* data;
  size_t size;
  bool immutable;  // a content-hashed name (Vite's assets/): cacheable for ever
};

// The asset served at `path` ("/" is "/index.html"), or nullptr.
const WebAsset* FindWebAsset(std::string_view path);
// "" when the UI was built and embedded; else why not, in one sentence.
std::string_view WebAssetsMissing();

}  // namespace airtime
