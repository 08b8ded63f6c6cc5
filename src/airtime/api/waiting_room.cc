// WaitingRoom: the reactor that holds connections until their headers are complete
// (waiting_room.h).
#include "airtime/api/waiting_room.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace airtime {
namespace {

using std::chrono::milliseconds;

bool WouldBlock(int e) { return e == EAGAIN || e == EWOULDBLOCK || e == EINTR; }

// Reads and drops what the client sent (at most 64 KiB a call, so that one client cannot
// keep the reactor here). False when the client closed or the connection failed.
bool Drain(int sock) {
  char buf[4096];
  for (int i = 0; i < 16; ++i) {
    const ssize_t n = ::recv(sock, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) continue;
    return n < 0 && WouldBlock(errno);
  }
  return true;
}

}  // namespace

WaitingRoom::WaitingRoom(Options options, Serve serve, Release release)
    : options_(std::move(options)),
      serve_(std::move(serve)),
      release_(std::move(release)),
      peek_(options_.max_header_bytes + 1) {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_;
  if (epoll_ >= 0 && wake_ >= 0 && ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev) != 0) {
    ::close(wake_);
    wake_ = -1;
  }
}

WaitingRoom::~WaitingRoom() {
  Close();
  if (wake_ >= 0) ::close(wake_);
  if (epoll_ >= 0) ::close(epoll_);
}

void WaitingRoom::Open(httplib::TaskQueue* pool) {
  if (epoll_ < 0 || wake_ < 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  pool_ = pool;
  open_ = true;
  if (!reactor_.joinable()) reactor_ = std::thread([this] { Run(); });
}

void WaitingRoom::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
    pool_ = nullptr;
  }
  if (reactor_.joinable()) {
    Wake();
    reactor_.join();
  }
  // The reactor is gone: its seats are ours now, and no guest enters any more.
  while (!seats_.empty()) CloseSeat(seats_.begin());
  timers_.clear();
  std::vector<std::pair<Guest, bool>> inbox;
  {
    std::lock_guard<std::mutex> lock(mu_);
    inbox.swap(inbox_);
  }
  for (const auto& [guest, linger] : inbox) {
    --size_;
    CloseGuest(guest);
  }
}

bool WaitingRoom::Enter(const Guest& guest) { return Admit(guest, false); }

bool WaitingRoom::Linger(const Guest& guest) { return Admit(guest, true); }

bool WaitingRoom::Admit(const Guest& guest, bool linger) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!open_) return false;
    inbox_.emplace_back(guest, linger);
    ++size_;
  }
  Wake();
  return true;
}

WaitingRoom::Peeked WaitingRoom::Peek(int sock, size_t max_header_bytes) {
  char buf[4096];
  const ssize_t n = ::recv(sock, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return Peeked::kGone;
  if (n < 0) return WouldBlock(errno) ? Peeked::kWaiting : Peeked::kGone;
  HeaderScan scan(max_header_bytes);
  size_t used = 0;
  return scan.Feed(buf, static_cast<size_t>(n), &used) == HeaderScan::Result::kMore
             ? Peeked::kWaiting
             : Peeked::kReady;
}

void WaitingRoom::Wake() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_, &one, sizeof one);
}

void WaitingRoom::Run() {
  std::vector<epoll_event> events(256);
  for (;;) {
    int timeout = -1;
    if (!timers_.empty()) {
      const auto left = std::chrono::ceil<milliseconds>(timers_.begin()->first - Clock::now());
      timeout = static_cast<int>(std::clamp<int64_t>(left.count(), 0, 60'000));
    }
    const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), timeout);
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_) {
        uint64_t count = 0;
        [[maybe_unused]] const ssize_t r = ::read(wake_, &count, sizeof count);
      } else {
        OnEvent(events[i].data.fd, events[i].events);
      }
    }
    if (!TakeInbox()) return;
    Expire(Clock::now());
  }
}

bool WaitingRoom::TakeInbox() {
  std::vector<std::pair<Guest, bool>> inbox;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!open_) return false;
    inbox.swap(inbox_);
  }
  for (auto& [guest, linger] : inbox) {
    const int fd = guest.sock;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      // No room for it in epoll: a lingering socket is closed now, a waiting one is served
      // the way it was before the room (its worker waits for the headers).
      --size_;
      if (linger) {
        CloseGuest(guest);
      } else {
        Dispatch(std::move(guest));
      }
      continue;
    }
    if (linger) guest.deadline = Clock::now() + options_.linger;
    auto [it, inserted] =
        seats_.emplace(fd, Seat{std::move(guest), HeaderScan(options_.max_header_bytes), linger});
    timers_.emplace(it->second.guest.deadline, fd);
    // An arrival before the registration is reported by epoll all the same: a socket that
    // is readable when it is added gives an event at once.
  }
  return true;
}

void WaitingRoom::OnEvent(int fd, uint32_t events) {
  auto it = seats_.find(fd);
  if (it == seats_.end()) return;
  Seat& seat = it->second;
  if (seat.lingering) {
    if (!Drain(fd)) CloseSeat(it);
    return;
  }
  const ssize_t n = ::recv(fd, peek_.data(), peek_.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && !WouldBlock(errno))) {  // closed or failed with nothing to read
    CloseSeat(it);
    return;
  }
  if (n < 0) {
    if (events & (EPOLLERR | EPOLLHUP)) CloseSeat(it);
    return;
  }
  if (seat.guest.idle) {  // the next request's first byte: its headers are due from now
    seat.guest.idle = false;
    Reschedule(seat, Clock::now() + options_.header_timeout);
  }
  const auto have = static_cast<size_t>(n);
  HeaderScan::Result r = HeaderScan::Result::kMore;
  if (have > seat.scan.bytes()) {
    size_t used = 0;
    r = seat.scan.Feed(peek_.data() + seat.scan.bytes(), have - seat.scan.bytes(), &used);
  }
  if (r != HeaderScan::Result::kMore || (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
    Handover(it);
  }
}

void WaitingRoom::Expire(Clock::time_point now) {
  while (!timers_.empty() && timers_.begin()->first <= now) {
    auto it = seats_.find(timers_.begin()->second);
    if (it == seats_.end()) {  // cannot happen: a seat leaves with its timer
      timers_.erase(timers_.begin());
      continue;
    }
    Seat& seat = it->second;
    if (seat.lingering || seat.scan.bytes() == 0) {
      CloseSeat(it);
      continue;
    }
    // Part of a request came, not all of its headers: 408, then linger.
    const int fd = it->first;
    ::send(fd, options_.timeout_answer.data(), options_.timeout_answer.size(),
           MSG_NOSIGNAL | MSG_DONTWAIT);
    ::shutdown(fd, SHUT_WR);
    seat.lingering = true;
    Reschedule(seat, now + options_.linger);
    if (!Drain(fd)) CloseSeat(it);
  }
}

void WaitingRoom::Reschedule(Seat& seat, Clock::time_point deadline) {
  timers_.erase({seat.guest.deadline, seat.guest.sock});
  seat.guest.deadline = deadline;
  timers_.emplace(deadline, seat.guest.sock);
}

void WaitingRoom::Handover(Seats::iterator it) {
  Guest guest = std::move(it->second.guest);
  timers_.erase({guest.deadline, guest.sock});
  seats_.erase(it);
  ::epoll_ctl(epoll_, EPOLL_CTL_DEL, guest.sock, nullptr);
  --size_;
  Dispatch(std::move(guest));
}

void WaitingRoom::Dispatch(Guest guest) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pool_) {
      pool_->enqueue([this, guest = std::move(guest)]() mutable { serve_(std::move(guest)); });
      return;
    }
  }
  CloseGuest(guest);
}

void WaitingRoom::CloseSeat(Seats::iterator it) {
  const Guest guest = std::move(it->second.guest);
  timers_.erase({guest.deadline, guest.sock});
  seats_.erase(it);
  --size_;
  CloseGuest(guest);
}

void WaitingRoom::CloseGuest(const Guest& guest) {
  ::shutdown(guest.sock, SHUT_RDWR);
  ::close(guest.sock);
  if (guest.admitted) release_(guest);
}

}  // namespace airtime
