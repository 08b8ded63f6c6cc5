// HttpJson: JSON over HTTP to slurmrestd, authenticated with a JWT
// (X-SLURM-USER-NAME, X-SLURM-USER-TOKEN), with time limits and a bound on what it reads.
//
// An answer that is not JSON, larger than the bound, or refused for authentication is an
// error naming the call; an answer with Slurm's own "errors" is returned as it is (the
// version's ApiShapes reads those). Not thread-safe: one per thread, or a lock around it.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "airtime/base/status.h"

namespace httplib {
class Client;
}

namespace airtime::slurm {

struct RestOptions {
  std::string url;    // "http://127.0.0.1:6820"
  std::string user;   // X-SLURM-USER-NAME: the operator account airtime acts as
  std::string token;  // X-SLURM-USER-TOKEN: a JWT (scontrol token) for that user
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds timeout{15000};
  size_t max_body_bytes = size_t{256} << 20;
};

class HttpJson {
 public:
  explicit HttpJson(RestOptions options);
  ~HttpJson();
  HttpJson(const HttpJson&) = delete;
  HttpJson& operator=(const HttpJson&) = delete;

  StatusOr<nlohmann::json> Get(const std::string& path);
  StatusOr<nlohmann::json> Post(const std::string& path, const nlohmann::json& body);
  StatusOr<nlohmann::json> Delete(const std::string& path);

 private:
  StatusOr<nlohmann::json> Call(std::string_view method, const std::string& path,
                                const nlohmann::json* body);
  // A new connection for the next call.
  void Reconnect();

  RestOptions options_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace airtime::slurm
