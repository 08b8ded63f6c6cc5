// GuardedServer: the connection loop with per-phase deadlines, the per-address cap, the
// waiting room in front of the workers and the elastic worker pool (connection_guard.h).
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
#include <utility>

#include "airtime/api/bounded_json.h"
#include "airtime/api/errors.h"
#include "airtime/api/header_scan.h"
#include "airtime/api/request_framing.h"

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
// True when the socket is ready (or has an error or hang-up to report). Past the deadline
// it still looks once without waiting: bytes that came in time (a request that waited for
// a free worker) are read, and only a wait beyond the deadline fails.
bool WaitFor(int sock, short events, Clock::time_point deadline,
             const std::function<bool()>& stopping) {
  while (!stopping()) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    const int wait =
        left.count() <= 0 ? 0 : static_cast<int>(std::min(left, kStopCheck).count()) + 1;
    pollfd p{sock, events, 0};
    const int r = ::poll(&p, 1, wait);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
    if (wait == 0) return false;
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

// A whole answer that closes the connection: small, so that it is written without waiting.
std::string Answer(int status, const std::string& reason, const Status& why) {
  const std::string body = DumpJson(ErrorJson(why)) + "\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

std::string TimeoutAnswer(const ConnectionLimits& limits) {
  return Answer(
      408, "Request Timeout",
      Status(StatusCode::kUnavailable, "request timeout: the headers are due within " +
                                           Seconds(limits.header_timeout) + " and a body within " +
                                           Seconds(limits.body_timeout) + " after them"));
}

// The connection as cpp-httplib reads and writes it, with a deadline for each phase.
// The library reads the request line and headers a byte at a time, so the stream sees where
// the headers end (the first empty line) and starts the body's deadline there.
class DeadlineStream : public httplib::Stream {
 public:
  enum class Failure { kNone, kTimeout, kHeadersTooLarge };

  DeadlineStream(int sock, const ConnectionLimits& limits, std::function<bool()> stopping)
      : sock_(sock),
        limits_(limits),
        stopping_(std::move(stopping)),
        scan_(limits.max_header_bytes) {}

  // A new request may begin: its headers must be complete by `header_deadline`.
  void BeginRequest(Clock::time_point header_deadline) {
    in_headers_ = true;
    scan_.Reset();
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
    size_t used = 0;
    switch (scan_.Feed(buf_ + pos_, n, &used)) {
      case HeaderScan::Result::kMore:
        break;
      case HeaderScan::Result::kEnd:
        in_headers_ = false;
        read_deadline_ = Clock::now() + limits_.body_timeout;
        break;
      case HeaderScan::Result::kTooLarge:
        failure_ = Failure::kHeadersTooLarge;
        return 0;
    }
    return used;
  }

  const int sock_;
  const ConnectionLimits& limits_;
  std::function<bool()> stopping_;
  char buf_[4096];
  size_t pos_ = 0, len_ = 0;
  bool in_headers_ = true;
  HeaderScan scan_;
  Clock::time_point read_deadline_ = Clock::now();
  bool writing_ = false;
  Clock::time_point write_deadline_ = Clock::now();
  Failure failure_ = Failure::kNone;
};

// Worker threads that grow on demand up to `max` and shrink back to `min` when idle.
// `before_shutdown` runs once, first thing in shutdown(): the waiting room stops enqueuing.
class ElasticPool : public httplib::TaskQueue {
 public:
  ElasticPool(size_t min, size_t max, std::function<void()> before_shutdown)
      : min_(std::max<size_t>(1, min)),
        max_(std::max(min_, max)),
        before_shutdown_(std::move(before_shutdown)) {
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

  // listen_internal calls it on the thread that made the pool, and the destructor again.
  void shutdown() override {
    if (before_shutdown_) std::exchange(before_shutdown_, nullptr)();
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
  std::function<void()> before_shutdown_;
  std::mutex mu_;
  std::condition_variable work_, gone_;
  std::deque<std::function<void()>> jobs_;
  size_t threads_ = 0, idle_ = 0;
  bool shutdown_ = false;
};

}  // namespace

GuardedServer::GuardedServer(ConnectionLimits limits) : limits_(limits) {
  WaitingRoom::Options room;
  room.header_timeout = limits_.header_timeout;
  room.max_header_bytes = limits_.max_header_bytes;
  room.timeout_answer = TimeoutAnswer(limits_);
  room_ = std::make_unique<WaitingRoom>(
      std::move(room), [this](WaitingRoom::Guest g) { Serve(std::move(g)); },
      [this](const WaitingRoom::Guest& g) { Release(g.peer); });
  const auto min = static_cast<size_t>(std::max(1, limits_.min_threads));
  const auto max = static_cast<size_t>(std::max(limits_.min_threads, limits_.max_threads));
  // listen_internal makes the pool, enqueues each accepted socket on it, and shuts it down
  // when the accept loop ends (after stop()); the room serves on it until then.
  new_task_queue = [this, min, max] {
    auto* pool = new ElasticPool(min, max, [this] { room_->Close(); });
    room_->Open(pool);
    return pool;
  };
}

GuardedServer::~GuardedServer() { room_->Close(); }

bool GuardedServer::Deepen(int backlog) { return ::listen(svr_sock_, backlog) == 0; }

int GuardedServer::open_connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

int GuardedServer::waiting_connections() const { return room_->size(); }

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

void GuardedServer::AnswerAndClose(const WaitingRoom::Guest& guest, const std::string& answer) {
  ::send(guest.sock, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(guest.sock, SHUT_WR);
  if (room_->Linger(guest)) return;
  // The server is stopping: close at once.
  ::close(guest.sock);
  if (guest.admitted) Release(guest.peer);
}

// Runs in a worker for each accepted socket: admits it, then leaves it to the waiting room
// (or serves it at once when its headers are already here).
bool GuardedServer::process_and_close_socket(socket_t sock) {
  WaitingRoom::Guest guest;
  guest.sock = sock;
  guest.deadline = Clock::now() + limits_.header_timeout;
  guest.requests_left = std::max<size_t>(1, keep_alive_max_count_);
  int port = 0;
  guest.peer = PeerAddress(sock, &port);
  if (!Admit(guest.peer)) {
    AnswerAndClose(guest, Answer(429, "Too Many Requests",
                                 Status(StatusCode::kResourceExhausted,
                                        "too many connections from " + guest.peer + " (at most " +
                                            std::to_string(limits_.max_per_address) +
                                            " at once per client address; close idle ones or "
                                            "retry)")));
    return false;
  }
  guest.admitted = true;
  // A closed room (the server is stopping, or epoll failed) leaves it to this worker.
  if (WaitingRoom::Peek(sock, limits_.max_header_bytes) != WaitingRoom::Peeked::kWaiting ||
      !room_->Enter(guest)) {
    Serve(std::move(guest));
  }
  return true;
}

void GuardedServer::Serve(WaitingRoom::Guest guest) {
  const std::function<bool()> stopping = [this] { return Stopping(); };
  const int sock = guest.sock;
  DeadlineStream strm(sock, limits_, stopping);
  while (!Stopping()) {
    if (guest.idle) {
      // Only when the room is closed: wait here for the next request's first byte.
      if (!WaitFor(sock, POLLIN, guest.deadline, stopping)) break;
      guest.idle = false;
      guest.deadline = Clock::now() + limits_.header_timeout;
    }
    strm.BeginRequest(guest.deadline);
    bool closed = false;
    // The body's length settled before it is read (request_framing.h). A request answered
    // without its body read (marked), or before its headers were (`framed` never set: the
    // library's own 400 and 414), closes the connection after its answer, draining what the
    // client still sends: what follows is not a request, and a close with unread data would
    // reset the connection before the client read its answer.
    bool unread = false, framed = false;
    const std::function<void(httplib::Request&)> frame = [&](httplib::Request& req) {
      framed = true;
      unread = FrameRequest(req, payload_max_length_);
      if (unread) {
        req.headers.erase("Connection");  // the client's keep-alive must not be answered
        req.set_header("Connection", "close");
      }
    };
    const bool ret = process_request(strm, guest.requests_left == 1, closed, frame);
    if (strm.failure() == DeadlineStream::Failure::kTimeout) {
      AnswerAndClose(guest, TimeoutAnswer(limits_));
      return;
    }
    if (strm.failure() == DeadlineStream::Failure::kHeadersTooLarge) {
      AnswerAndClose(guest,
                     Answer(431, "Request Header Fields Too Large",
                            Status(StatusCode::kInvalidArgument,
                                   "request headers longer than " +
                                       std::to_string(limits_.max_header_bytes) + " bytes")));
      return;
    }
    if (unread || (!framed && ret)) {
      ::shutdown(sock, SHUT_WR);
      if (room_->Linger(guest)) return;
      break;
    }
    if (!ret || closed || --guest.requests_left == 0) break;
    // The next request: its headers are due header_timeout from now if it is here already
    // (pipelined into the stream's buffer, or whole in the socket's), so serve it now.
    guest.deadline = Clock::now() + limits_.header_timeout;
    if (strm.Buffered()) continue;
    const WaitingRoom::Peeked next = WaitingRoom::Peek(sock, limits_.max_header_bytes);
    if (next == WaitingRoom::Peeked::kGone) break;
    if (next == WaitingRoom::Peeked::kReady) continue;
    // Not yet: the connection waits in the room for keepalive_timeout, without this worker.
    guest.idle = true;
    guest.deadline = Clock::now() + limits_.keepalive_timeout;
    if (room_->Enter(guest)) return;
  }
  Release(guest.peer);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

}  // namespace airtime
