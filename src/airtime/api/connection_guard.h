// GuardedServer: cpp-httplib's server with a deadline for each phase of a connection, a cap
// on connections per client address, and a waiting room in front of its workers, so that
// slow or idle clients cannot hold the API.
//
// cpp-httplib 0.11.4 gives each connection a worker thread from its accept to its close, and
// its read timeout applies to each recv(): a client that sends a header byte every second
// never times out, so 64 such clients once held all 64 workers. GuardedServer takes over the
// connection loop (it overrides process_and_close_socket and calls the library's
// process_request with a stream of its own) and:
//   - keeps each connection in a waiting room (waiting_room.h: one epoll thread, no worker)
//     until a whole request's headers have arrived, and between two requests on a
//     keep-alive connection. A worker serves a request from its complete headers to its
//     answer; only pipelined requests (already read into the worker's buffer) stay with it.
//     So clients that trickle their headers, however many and from however many addresses,
//     cost a socket each, not a thread.
//   - gives the request line and headers `header_timeout` in total, from the connection's
//     accept or from the first byte of a later request; a body `body_timeout` in total from
//     the end of its headers; an idle keep-alive connection `keepalive_timeout`; the writes of
//     one answer `write_timeout` in total. Past a read deadline the client gets a 408 and the
//     connection is closed (a connection that sent nothing is closed without a word);
//     headers over max_header_bytes get a 431.
//   - admits at most `max_per_address` connections at once from one client address, waiting
//     or served: the next one is answered 429 and closed at once.
//   - serves requests from a pool that grows from `min_threads` up to `max_threads` on
//     demand (idle threads beyond the minimum exit after a minute).
// Answers that end a connection (408, 429, 431) are written without waiting; the room then
// drains what the client still sends for 200 ms before it closes the socket, so no worker
// waits for that either.
// Internal to the API (http_api.cc); a header of its own so the policy reads in one place.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "airtime/api/waiting_room.h"

namespace airtime {

namespace connection_guard_internal {
constexpr bool SameText(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
}  // namespace connection_guard_internal
// process_and_close_socket and process_request are the library's internals: a new version
// must be checked before it is used here.
static_assert(connection_guard_internal::SameText(CPPHTTPLIB_VERSION, "0.11.4"),
              "GuardedServer overrides cpp-httplib 0.11.4's connection loop; check it against "
              "this version's Server::process_and_close_socket before changing the version");

struct ConnectionLimits {
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds body_timeout{60'000};
  std::chrono::milliseconds keepalive_timeout{5'000};
  std::chrono::milliseconds write_timeout{10'000};
  size_t max_header_bytes = 64 * 1024;
  int max_per_address = 64;  // <= 0: no cap
  int min_threads = 16;
  int max_threads = 1024;
};

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(ConnectionLimits limits = {});
  ~GuardedServer() override;
  // Listens again on the bound socket with a longer queue (the library's backlog is 5).
  bool Deepen(int backlog);
  // Connections admitted and still open, waiting or being served (for tests and metrics).
  int open_connections() const;
  // Of those, the ones in the waiting room (waiting for headers, idle, or lingering).
  int waiting_connections() const;

 private:
  bool process_and_close_socket(socket_t sock) override;
  // Serves the guest's requests on this worker until it is closed or goes back to the room.
  void Serve(WaitingRoom::Guest guest);
  // Writes `answer` without waiting, shuts the write side and leaves the socket to linger.
  void AnswerAndClose(const WaitingRoom::Guest& guest, const std::string& answer);
  bool Admit(const std::string& peer);
  void Release(const std::string& peer);
  bool Stopping() const { return svr_sock_ == INVALID_SOCKET; }

  const ConnectionLimits limits_;
  mutable std::mutex mu_;
  std::map<std::string, int> per_address_;
  int open_ = 0;
  // Last: destroyed (and its reactor joined) first, while the members above still exist.
  std::unique_ptr<WaitingRoom> room_;
};

}  // namespace airtime
