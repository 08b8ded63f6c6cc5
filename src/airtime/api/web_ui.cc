// The dashboard's files over HTTP: see web_ui.h.
#include "airtime/api/web_ui.h"

#include <regex>

#include "airtime/api/bounded_json.h"
#include "airtime/api/errors.h"
#include "airtime/api/web_assets.h"
#include "airtime/html/escape.h"

namespace airtime {
namespace {

// Whether `etag` is among the entity tags of an If-None-Match header ("*" matches all).
bool EtagMatches(std::string_view header, std::string_view etag) {
  if (header.empty()) return false;
  if (header.find('*') != std::string_view::npos) return true;
  return header.find(etag) != std::string_view::npos;
}

void AddCommonHeaders(WebAnswer& a) {
  a.headers.emplace_back("Content-Security-Policy", std::string(kDashboardCsp));
  a.headers.emplace_back("X-Content-Type-Options", "nosniff");
  a.headers.emplace_back("X-Frame-Options", "DENY");
  a.headers.emplace_back("Referrer-Policy", "no-referrer");
}

WebAnswer NotBuiltPage(std::string_view why) {
  WebAnswer a;
  a.status = 200;
  a.content_type = "text/html; charset=utf-8";
  a.owned_body =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>airtime: dashboard not built</title></head><body>\n"
      "<h1>The airtime dashboard was not built into this binary</h1>\n<p>Why: " +
      EscapeText(why) +
      ".</p>\n<p>To build it: install Node.js and npm (on Debian 12, "
      "<code>apt-get install nodejs npm</code>, or run <code>scripts/install-deps.sh</code>), "
      "then rebuild airtime with <code>scripts/build.sh</code>. The build runs "
      "<code>npm ci</code> and <code>vite build</code> in <code>web/</code> and embeds the "
      "result in the binary (docs/dashboard.md).</p>\n"
      "<p>The API works without it: <code>/v1/workloads</code>, <code>/v1/gpus</code>, "
      "<code>/v1/ledger</code>, <code>/v1/holds</code>, <code>/metrics</code> "
      "(docs/api.md), and the <code>airtime</code> client commands.</p>\n</body></html>\n";
  a.body = a.owned_body;
  a.headers.emplace_back("Cache-Control", "no-store");
  AddCommonHeaders(a);
  return a;
}

}  // namespace

bool IsWebUiPath(std::string_view path) {
  static const std::regex kPattern(
      R"(/|/index\.html|/assets/[A-Za-z0-9_.-]+|/[A-Za-z0-9_-]+\.(svg|ico|png|txt|webmanifest))");
  return std::regex_match(path.begin(), path.end(), kPattern);
}

WebAnswer AnswerWebUi(std::string_view path, std::string_view if_none_match) {
  const std::string_view missing = WebAssetsMissing();
  if (!missing.empty() && (path == "/" || path == "/index.html")) return NotBuiltPage(missing);
  const WebAsset* asset = FindWebAsset(path);
  WebAnswer a;
  if (asset == nullptr) {
    a.status = 404;
    a.content_type = "application/json";
    a.owned_body =
        DumpJson(ErrorJson(NotFound(
            "no route " + std::string(path) +
            (missing.empty() ? ""
                             : " (the dashboard was not built: " + std::string(missing) + ")")))) +
        "\n";
    a.body = a.owned_body;
    return a;
  }
  a.headers.emplace_back("ETag", std::string(asset->etag));
  a.headers.emplace_back("Cache-Control",
                         asset->immutable ? "public, max-age=31536000, immutable" : "no-cache");
  AddCommonHeaders(a);
  if (EtagMatches(if_none_match, asset->etag)) {
    a.status = 304;
    return a;
  }
  a.status = 200;
  a.content_type = std::string(asset->content_type);
  a.body = std::string_view(reinterpret_cast<const char*>(asset->data), asset->size);
  return a;
}

}  // namespace airtime
