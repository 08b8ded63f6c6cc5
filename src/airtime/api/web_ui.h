// The answers to the dashboard's paths (/, /index.html, /assets/..., /favicon.svg): the
// embedded files of web_assets.h with their Content-Type, an ETag (a matching If-None-Match
// is a 304), caching (content-hashed assets/ for a year, the rest revalidated), and a strict
// Content-Security-Policy; in a build without the UI, / is a page saying how to build it.
// No token: the files are the same for everyone, and the page asks for one for the data.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace airtime {

// script-src 'self' and no inline anything: the page's scripts are Vite's external modules,
// and nothing the API returns can become script. form-action 'none': the token form is read
// by script and never submitted, so a token cannot land in a URL.
inline constexpr std::string_view kDashboardCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

struct WebAnswer {
  int status = 404;
  std::string content_type;
  std::string_view body;  // an embedded file, or owned_body
  std::string owned_body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// Whether `path` (without the query) is one of the dashboard's: "/", "/index.html",
// "/assets/NAME", "/NAME.svg|.ico|.png|.txt|.webmanifest".
bool IsWebUiPath(std::string_view path);

// The answer to GET `path`; `if_none_match` is the request's If-None-Match header ("" if
// none). 404 (with the JSON error of the API) for a path the build does not hold.
WebAnswer AnswerWebUi(std::string_view path, std::string_view if_none_match);

}  // namespace airtime
