// Tests of GuardedServer in this process, over loopback sockets: the waiting room holds
// connections without a worker until their headers are complete, answers late ones 408,
// hands long ones to a worker for the 431, keeps idle keep-alive connections, counts them
// against their address, and closes them all when the server stops.
#include "airtime/api/connection_guard.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace airtime {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::string kGet = "GET /x HTTP/1.1\r\nHost: x\r\n\r\n";
const std::string kPartial = "GET /x HTTP/1.1\r\nHost: x\r\n";

// A GuardedServer listening on 127.0.0.1 with one route, GET /x; stopped on destruction.
class Guarded {
 public:
  explicit Guarded(ConnectionLimits limits) : server_(std::make_unique<GuardedServer>(limits)) {
    server_->Get("/x", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok", "text/plain");
    });
    server_->Get("/sleep", [](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(500ms);
      res.set_content("ok", "text/plain");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    server_->Deepen(128);  // as HttpApi does: the tests connect dozens at once
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::sleep_for(1ms);
  }
  ~Guarded() { Stop(); }
  void Stop() {
    if (!thread_.joinable()) return;
    server_->stop();
    thread_.join();
  }
  GuardedServer& server() { return *server_; }

  // A connection from `source` (a loopback address); -1 on error.
  int Connect(const std::string& source = "127.0.0.1") const {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in from{}, to{};
    from.sin_family = to.sin_family = AF_INET;
    inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    to.sin_port = htons(static_cast<uint16_t>(port_));
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
        connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      if (fd >= 0) close(fd);
      return -1;
    }
    return fd;
  }

 private:
  std::unique_ptr<GuardedServer> server_;
  int port_ = 0;
  std::thread thread_;
};

void Send(int fd, const std::string& s) { send(fd, s.data(), s.size(), MSG_NOSIGNAL); }

// What the server sends on `fd` within `limit`, until it closes (*closed) or has sent
// `answers` whole answers (0: read until closed or the time is up).
std::string Read(int fd, std::chrono::milliseconds limit, bool* closed, int answers = 0) {
  std::string got;
  *closed = false;
  const auto until = Clock::now() + limit;
  auto count = [&] {
    int n = 0;
    for (size_t at = got.find("\r\n\r\nok"); at != std::string::npos;
         at = got.find("\r\n\r\nok", at + 1))
      ++n;
    return n;
  };
  while (Clock::now() < until && (answers == 0 || count() < answers)) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 10) <= 0) continue;
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      *closed = true;
      break;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds limit = 3000ms) {
  const auto until = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

ConnectionLimits OneWorker() {
  ConnectionLimits l;
  l.min_threads = l.max_threads = 1;
  return l;
}

TEST(GuardedServer, ConnectionsWaitingForTheirHeadersHoldNoWorker) {
  Guarded g(OneWorker());
  std::vector<int> slow;
  for (int i = 0; i < 20; ++i) {
    slow.push_back(g.Connect());
    ASSERT_GE(slow.back(), 0);
    Send(slow.back(), kPartial);
  }
  ASSERT_TRUE(WaitUntil([&] { return g.server().waiting_connections() == 20; }))
      << g.server().waiting_connections();
  EXPECT_EQ(g.server().open_connections(), 20);
  // The one worker is free for a whole request.
  const int fast = g.Connect();
  Send(fast, "GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  bool closed = false;
  EXPECT_NE(Read(fast, 2000ms, &closed).find("200 OK"), std::string::npos);
  EXPECT_TRUE(closed);
  close(fast);
  // The slow ones end their headers a byte at a time, and are served.
  for (char c : std::string("\r\n"))
    for (int fd : slow) Send(fd, std::string(1, c));
  for (int fd : slow) {
    EXPECT_NE(Read(fd, 2000ms, &closed, 1).find("200 OK"), std::string::npos);
    close(fd);
  }
  EXPECT_TRUE(WaitUntil([&] { return g.server().open_connections() == 0; }));
  EXPECT_EQ(g.server().waiting_connections(), 0);
}

TEST(GuardedServer, LateHeadersGet408AndSilentConnectionsAreClosed) {
  ConnectionLimits l = OneWorker();
  l.header_timeout = 300ms;
  Guarded g(l);
  const int partial = g.Connect(), silent = g.Connect();
  Send(partial, kPartial);
  const auto t0 = Clock::now();
  bool closed = false;
  const std::string said = Read(partial, 3000ms, &closed);
  const auto waited = Clock::now() - t0;
  EXPECT_TRUE(closed);
  EXPECT_EQ(said.rfind("HTTP/1.1 408 Request Timeout\r\n", 0), 0u) << said;
  EXPECT_NE(said.find("the headers are due within 0.3 s"), std::string::npos) << said;
  EXPECT_GT(waited, 250ms);
  EXPECT_LT(waited, 1500ms);
  EXPECT_EQ(Read(silent, 3000ms, &closed), "");
  EXPECT_TRUE(closed);
  close(partial);
  close(silent);
  EXPECT_TRUE(WaitUntil([&] { return g.server().open_connections() == 0; }));
}

TEST(GuardedServer, HeadersOverTheLimitGet431AndBareNewlinesEndThem) {
  ConnectionLimits l = OneWorker();
  l.max_header_bytes = 1000;
  Guarded g(l);
  const int big = g.Connect();
  Send(big, kPartial + "X-Big: " + std::string(1500, 'a'));
  bool closed = false;
  const std::string said = Read(big, 3000ms, &closed);
  EXPECT_EQ(said.rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0), 0u) << said;
  EXPECT_TRUE(closed);
  close(big);
  // Just under the limit: served.
  const int under = g.Connect();
  const std::string head = "GET /x HTTP/1.1\r\nConnection: close\r\nX-A: ";
  Send(under, head + std::string(1000 - head.size() - 4, 'a') + "\r\n\r\n");
  EXPECT_NE(Read(under, 3000ms, &closed).find("200 OK"), std::string::npos);
  close(under);
  // "\n\n" ends the headers for the room too: the worker answers (cpp-httplib wants CRLF in
  // the request line: 400) at once, not at the header deadline (10 s).
  const int bare = g.Connect();
  Send(bare, "GET /x HTTP/1.1\nHost: x\n\n");
  const std::string answer = Read(bare, 1000ms, &closed);
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
  close(bare);
}

TEST(GuardedServer, IdleKeepAliveConnectionsWaitInTheRoomUntilTheirDeadline) {
  ConnectionLimits l = OneWorker();
  l.keepalive_timeout = 400ms;
  Guarded g(l);
  const int kept = g.Connect();
  Send(kept, kGet);
  bool closed = false;
  EXPECT_NE(Read(kept, 2000ms, &closed, 1).find("200 OK"), std::string::npos);
  ASSERT_TRUE(WaitUntil([&] { return g.server().waiting_connections() == 1; }));
  // The worker is free meanwhile.
  const int other = g.Connect();
  Send(other, kGet);
  EXPECT_NE(Read(other, 2000ms, &closed, 1).find("200 OK"), std::string::npos);
  close(other);
  // The next request on the kept connection, a byte at a time, is served; then it idles
  // until its keep-alive deadline and is closed without a word.
  for (char c : kGet) Send(kept, std::string(1, c));
  EXPECT_NE(Read(kept, 2000ms, &closed, 1).find("200 OK"), std::string::npos);
  const auto t0 = Clock::now();
  EXPECT_EQ(Read(kept, 3000ms, &closed), "");
  EXPECT_TRUE(closed);
  EXPECT_GT(Clock::now() - t0, 300ms);
  close(kept);
}

// The header deadline is for the client: headers that came in time are served even when
// they wait for a worker past it.
TEST(GuardedServer, HeadersThatCameInTimeAreServedWhenAWorkerFreesLate) {
  ConnectionLimits l = OneWorker();
  l.header_timeout = 200ms;
  Guarded g(l);
  const int queued = g.Connect();
  Send(queued, kPartial);
  ASSERT_TRUE(WaitUntil([&] { return g.server().waiting_connections() == 1; }));
  const int busy = g.Connect();
  Send(busy, "GET /sleep HTTP/1.1\r\nHost: x\r\n\r\n");
  std::this_thread::sleep_for(50ms);  // the one worker sleeps 500 ms in /sleep
  Send(queued, "\r\n");               // in time; served after the deadline
  bool closed = false;
  const std::string said = Read(queued, 3000ms, &closed, 1);
  EXPECT_EQ(said.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << said;
  EXPECT_NE(Read(busy, 3000ms, &closed, 1).find("200 OK"), std::string::npos);
  close(busy);
  close(queued);
}

TEST(GuardedServer, PipelinedRequestsAreAllAnswered) {
  Guarded g(OneWorker());
  const int fd = g.Connect();
  Send(fd, kGet + kGet + "GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  bool closed = false;
  const std::string said = Read(fd, 3000ms, &closed);
  EXPECT_TRUE(closed);
  size_t answers = 0;
  for (size_t at = said.find("200 OK"); at != std::string::npos; at = said.find("200 OK", at + 1))
    ++answers;
  EXPECT_EQ(answers, 3u) << said;
  close(fd);
}

TEST(GuardedServer, ThePerAddressCapCountsWaitingConnections) {
  ConnectionLimits l = OneWorker();
  l.max_per_address = 3;
  Guarded g(l);
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(g.Connect("127.0.0.2"));
    Send(held.back(), kPartial);
  }
  ASSERT_TRUE(WaitUntil([&] { return g.server().waiting_connections() == 3; }));
  const int extra = g.Connect("127.0.0.2");
  bool closed = false;
  const std::string said = Read(extra, 2000ms, &closed);
  EXPECT_EQ(said.rfind("HTTP/1.1 429 Too Many Requests\r\n", 0), 0u) << said;
  EXPECT_TRUE(closed);
  close(extra);
  const int elsewhere = g.Connect("127.0.0.3");
  Send(elsewhere, kGet);
  EXPECT_NE(Read(elsewhere, 2000ms, &closed, 1).find("200 OK"), std::string::npos);
  close(elsewhere);
  for (int fd : held) close(fd);
  EXPECT_TRUE(WaitUntil([&] { return g.server().open_connections() == 0; }));
}

TEST(GuardedServer, StoppingClosesEveryConnectionInTheRoom) {
  Guarded g(OneWorker());
  std::vector<int> fds;
  for (int i = 0; i < 30; ++i) {
    fds.push_back(g.Connect());
    Send(fds.back(), i % 2 ? kPartial : kGet);  // waiting for headers, or idle after one
  }
  ASSERT_TRUE(WaitUntil([&] { return g.server().waiting_connections() == 30; }));
  g.Stop();
  EXPECT_EQ(g.server().waiting_connections(), 0);
  EXPECT_EQ(g.server().open_connections(), 0);
  for (int fd : fds) {
    bool closed = false;
    Read(fd, 2000ms, &closed);
    EXPECT_TRUE(closed);
    close(fd);
  }
}

}  // namespace
}  // namespace airtime
