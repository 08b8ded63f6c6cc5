// GuardedServer: the connection loop with per-phase deadlines, the per-address cap and the
// elastic worker pool.
#include "airtime/api/connection_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <thread>

#include "airtime/api/bounded_json.h"
#include "airtime/api/errors.h"

namespace airtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How often a wait looks whether the server is stopping.
constexpr milliseconds kStopCheck{100};

std::string Seconds(milliseconds d) {
  const double s = static_cast<double>(d.count()) / 1000;
  std::string out = std::to_string(s);
  out.erase(out.find_last_not_of('0') + 1);
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out + " s";
}

// Polls `sock` for `events` until `deadline`, waking every kStopCheck to ask `stopping`.
// True when the socket is ready (or has an error or hang-up to report).
bool WaitFor(int sock, short events, Clock::time_point deadline,
             const std::function<bool()>& stopping) {
  while (!stopping()) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{sock, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min(left, kStopCheck).count()) + 1);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
  return false;
}

std::string AddressText(const sockaddr_storage& a, int* port) {
  char buf[INET6_ADDRSTRLEN] = "";
  *port = 0;
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &v4.sin_addr, buf, sizeof buf);
    *port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &v6.sin6_addr, buf, sizeof buf);
    *port = ntohs(v6.sin6_port);
  }
  return buf;
}

std::string PeerAddress(int sock, int* port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    *port = 0;
    return "";
  }
  return AddressText(a, port);
}

std::string LocalAddress(int sock, int* port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getsockname(sock, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    *port = 0;
    return "";
  }
  return AddressText(a, port);
}

// A whole answer written without waiting (it is small; a client that does not read gets a
// short one), then the write side shut, and what the client sent meanwhile drained so that
// close() does not reset the connection before the answer is read.
void AnswerAndClose(int sock, int status, const std::string& reason, const Status& why,
                    const std::function<bool()>& stopping) {
  const std::string body = DumpJson(ErrorJson(why)) + "\n";
  const std::string head =
      "HTTP/1.1 " + std::to_string(status) + " " + reason +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n";
  const std::string all = head + body;
  ::send(sock, all.data(), all.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(sock, SHUT_WR);
  const auto until = Clock::now() + milliseconds(200);
  char buf[4096];
  while (WaitFor(sock, POLLIN, until, stopping)) {
    if (::recv(sock, buf, sizeof buf, MSG_DONTWAIT) <= 0) break;
  }
}

// The connection as cpp-httplib reads and writes it, with a deadline for each phase.
// The library reads the request line and headers a byte at a time, so the stream sees where
// the headers end (the first empty line) and starts the body's deadline there.
class DeadlineStream : public httplib::Stream {
 public:
  enum class Failure { kNone, kTimeout, kHeadersTooLarge };

  DeadlineStream(int sock, const ConnectionLimits& limits, std::function<bool()> stopping)
      : sock_(sock), limits_(limits), stopping_(std::move(stopping)) {}

  // A new request may begin: its headers must be complete by `header_deadline`.
  void BeginRequest(Clock::time_point header_deadline) {
    in_headers_ = true;
    header_bytes_ = 0;
    line_length_ = 0;
    read_deadline_ = header_deadline;
    writing_ = false;
  }
  Failure failure() const { return failure_; }
  bool Buffered() const { return pos_ < len_; }

  bool is_readable() const override {
    return pos_ < len_ || WaitFor(sock_, POLLIN, read_deadline_, stopping_);
  }
  bool is_writable() const override {
    return WaitFor(sock_, POLLOUT,
                   writing_ ? write_deadline_ : Clock::now() + limits_.write_timeout, stopping_);
  }

  ssize_t read(char* ptr, size_t size) override {
    if (failure_ != Failure::kNone) return -1;
    if (pos_ == len_) {
      if (!WaitFor(sock_, POLLIN, read_deadline_, stopping_)) {
        if (!stopping_()) failure_ = Failure::kTimeout;
        return -1;
      }
      const ssize_t n = ::recv(sock_, buf_, sizeof buf_, 0);
      if (n <= 0) return n;
      pos_ = 0;
      len_ = static_cast<size_t>(n);
    }
    size_t n = std::min(size, len_ - pos_);
    if (in_headers_) n = Headers(n);
    if (failure_ != Failure::kNone) return -1;
    std::copy(buf_ + pos_, buf_ + pos_ + n, ptr);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (failure_ != Failure::kNone) return static_cast<ssize_t>(size);  // answered by the loop
    if (!writing_) {
      writing_ = true;
      write_deadline_ = Clock::now() + limits_.write_timeout;
    }
    if (!WaitFor(sock_, POLLOUT, write_deadline_, stopping_)) return -1;
    return ::send(sock_, ptr, size, MSG_NOSIGNAL);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = PeerAddress(sock_, &port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = LocalAddress(sock_, &port);
  }
  socket_t socket() const override { return sock_; }

 private:
  // Of the next `n` buffered bytes, those up to and including the end of the headers; past
  // it, the body's deadline starts.
  size_t Headers(size_t n) {
    for (size_t k = 0; k < n; ++k) {
      const char c = buf_[pos_ + k];
      if (++header_bytes_ > limits_.max_header_bytes) {
        failure_ = Failure::kHeadersTooLarge;
        return 0;
      }
      if (c == '\n') {
        if (line_length_ == 0 && header_bytes_ > 2) {  // an empty line ends the headers
          in_headers_ = false;
          read_deadline_ = Clock::now() + limits_.body_timeout;
          return k + 1;
        }
        line_length_ = 0;
      } else if (c != '\r') {
        ++line_length_;
      }
    }
    return n;
  }

  const int sock_;
  const ConnectionLimits& limits_;
  std::function<bool()> stopping_;
  char buf_[4096];
  size_t pos_ = 0, len_ = 0;
  bool in_headers_ = true;
  size_t header_bytes_ = 0, line_length_ = 0;
  Clock::time_point read_deadline_ = Clock::now();
  bool writing_ = false;
  Clock::time_point write_deadline_ = Clock::now();
  Failure failure_ = Failure::kNone;
};

// Worker threads that grow on demand up to `max` and shrink back to `min` when idle.
class ElasticPool : public httplib::TaskQueue {
 public:
  ElasticPool(size_t min, size_t max) : min_(std::max<size_t>(1, min)), max_(std::max(min_, max)) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < min_; ++i) Spawn();
  }
  ~ElasticPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(fn));
    if (idle_ < jobs_.size() && threads_ < max_) Spawn();
    work_.notify_one();
  }

  void shutdown() override {
    std::unique_lock<std::mutex> lock(mu_);
    shutdown_ = true;
    work_.notify_all();
    gone_.wait(lock, [&] { return threads_ == 0; });
  }

 private:
  void Spawn() {
    ++threads_;
    std::thread([this] { Work(); }).detach();
  }

  void Work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ++idle_;
      const bool woke = work_.wait_for(lock, std::chrono::seconds(60),
                                       [&] { return shutdown_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty() && (shutdown_ || (!woke && threads_ > min_))) break;
      if (jobs_.empty()) continue;
      std::function<void()> fn = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      fn();
      fn = nullptr;
      lock.lock();
    }
    // Last touch of the pool, under its lock: shutdown() may destroy it once this returns.
    --threads_;
    gone_.notify_all();
  }

  const size_t min_, max_;
  std::mutex mu_;
  std::condition_variable work_, gone_;
  std::deque<std::function<void()>> jobs_;
  size_t threads_ = 0, idle_ = 0;
  bool shutdown_ = false;
};

}  // namespace

GuardedServer::GuardedServer(ConnectionLimits limits) : limits_(limits) {
  const auto min = static_cast<size_t>(std::max(1, limits_.min_threads));
  const auto max = static_cast<size_t>(std::max(limits_.min_threads, limits_.max_threads));
  new_task_queue = [min, max] { return new ElasticPool(min, max); };
}

bool GuardedServer::Deepen(int backlog) { return ::listen(svr_sock_, backlog) == 0; }

int GuardedServer::open_connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

bool GuardedServer::Admit(const std::string& peer) {
  std::lock_guard<std::mutex> lock(mu_);
  int& n = per_address_[peer];
  if (limits_.max_per_address > 0 && n >= limits_.max_per_address) {
    if (n == 0) per_address_.erase(peer);
    return false;
  }
  ++n;
  ++open_;
  return true;
}

void GuardedServer::Release(const std::string& peer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = per_address_.find(peer);
  if (it != per_address_.end() && --it->second <= 0) per_address_.erase(it);
  --open_;
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  const auto accepted = Clock::now();
  const std::function<bool()> stopping = [this] { return Stopping(); };
  int port = 0;
  const std::string peer = PeerAddress(sock, &port);
  if (!Admit(peer)) {
    AnswerAndClose(sock, 429, "Too Many Requests",
                   Status(StatusCode::kResourceExhausted,
                          "too many connections from " + peer + " (at most " +
                              std::to_string(limits_.max_per_address) +
                              " at once per client address; close idle ones or retry)"),
                   stopping);
    ::close(sock);
    return false;
  }
  DeadlineStream strm(sock, limits_, stopping);
  bool ret = false;
  size_t count = std::max<size_t>(1, keep_alive_max_count_);
  for (bool first = true; count > 0 && !Stopping(); first = false, --count) {
    // The first request's headers are due header_timeout after the accept; a later request
    // may begin within keepalive_timeout, and its headers are due header_timeout after that.
    const auto wait_until =
        first ? accepted + limits_.header_timeout : Clock::now() + limits_.keepalive_timeout;
    if (!strm.Buffered() && !WaitFor(sock, POLLIN, wait_until, stopping)) break;
    strm.BeginRequest(first ? accepted + limits_.header_timeout
                            : Clock::now() + limits_.header_timeout);
    bool closed = false;
    ret = process_request(strm, count == 1, closed, nullptr);
    if (strm.failure() == DeadlineStream::Failure::kTimeout) {
      AnswerAndClose(
          sock, 408, "Request Timeout",
          Status(StatusCode::kUnavailable,
                 "request timeout: the headers are due within " + Seconds(limits_.header_timeout) +
                     " and a body within " + Seconds(limits_.body_timeout) + " after them"),
          stopping);
      ret = false;
      break;
    }
    if (strm.failure() == DeadlineStream::Failure::kHeadersTooLarge) {
      AnswerAndClose(sock, 431, "Request Header Fields Too Large",
                     Status(StatusCode::kInvalidArgument,
                            "request headers longer than " +
                                std::to_string(limits_.max_header_bytes) + " bytes"),
                     stopping);
      ret = false;
      break;
    }
    if (!ret || closed) break;
  }
  Release(peer);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

}  // namespace airtime
