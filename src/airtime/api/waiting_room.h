// WaitingRoom: where a connection waits, without a worker thread, until a whole request's
// headers have arrived; then a worker of the pool serves it.
//
// One reactor thread watches every waiting socket with epoll (edge-triggered: an event for
// each arrival). On each it peeks at the bytes the kernel holds (recv with MSG_PEEK, which
// leaves them for the worker) and scans only the new ones with a HeaderScan. The guest is
// handed to the pool when its headers are complete, or longer than max_header_bytes (the
// worker answers 431), or the peer shut its side after sending something (the worker reads
// what is there and answers as it always did). A peer that closes or fails with nothing
// sent is closed here. Past its deadline a guest that sent part of a request gets
// `timeout_answer` (a 408) from the room; one that sent nothing (a new connection, or one
// idle between two requests) is closed without a word.
//
// An answered connection lingers: its write side is shut, and what the client still sends is
// read and dropped for `linger`, so that close() does not reset the connection before the
// client has read the answer. The room does this without waiting, for the worker's 408 and
// 431 and the accept's 429 as well as its own 408.
//
// A peek copies what the client has sent so far (at most max_header_bytes + 1 bytes) at each
// arrival: a client that sends its headers in many small pieces costs one such copy each.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "airtime/api/header_scan.h"

namespace airtime {

class WaitingRoom {
 public:
  using Clock = std::chrono::steady_clock;

  // A connection between the room and the workers.
  struct Guest {
    int sock = -1;
    std::string peer;          // the client's address
    bool admitted = false;     // counted against its address: `release` is called at its close
    size_t requests_left = 1;  // of cpp-httplib's keep-alive count
    // Between two requests, before the next one's first byte: `deadline` is the keep-alive
    // one, and the headers are due header_timeout after that first byte.
    bool idle = false;
    // When the room gives up on the guest; when it is served, when its headers are due.
    Clock::time_point deadline;
  };

  struct Options {
    std::chrono::milliseconds header_timeout{10'000};
    size_t max_header_bytes = 64 * 1024;
    std::chrono::milliseconds linger{200};
    std::string timeout_answer;  // a whole HTTP answer, for a guest whose headers are late
  };

  // Runs on a worker: the guest's headers are complete (see above); it owns the socket now.
  using Serve = std::function<void(Guest)>;
  // The room closed an admitted guest's socket.
  using Release = std::function<void(const Guest&)>;

  WaitingRoom(Options options, Serve serve, Release release);
  ~WaitingRoom();
  WaitingRoom(const WaitingRoom&) = delete;
  WaitingRoom& operator=(const WaitingRoom&) = delete;

  // Starts the reactor; guests are served on `pool` until Close(). Without epoll (the
  // kernel refused it) the room stays closed.
  void Open(httplib::TaskQueue* pool);
  // Forgets the pool, stops the reactor and closes every socket in the room (each admitted
  // guest released). Open() may start it again.
  void Close();
  // Takes the guest's socket (true), or leaves it to the caller when the room is closed.
  bool Enter(const Guest& guest);
  // Takes a socket whose answer is written and whose write side is shut, and closes it after
  // `linger` or when the client closes; false (the caller keeps it) when the room is closed.
  bool Linger(const Guest& guest);
  // Connections in the room (waiting or lingering).
  int size() const { return size_.load(); }

  enum class Peeked { kReady, kWaiting, kGone };
  // Without waiting: whether a whole request's headers (or more than `max_header_bytes`)
  // are already buffered in the first 4 KiB on `sock` (kReady), not yet (kWaiting), or the
  // peer closed or failed with nothing buffered (kGone).
  static Peeked Peek(int sock, size_t max_header_bytes);

 private:
  struct Seat {
    Guest guest;
    HeaderScan scan;
    bool lingering = false;
  };
  using Seats = std::unordered_map<int, Seat>;

  bool Admit(const Guest& guest, bool linger);
  void Wake();
  void Run();
  bool TakeInbox();
  void OnEvent(int fd, uint32_t events);
  void Expire(Clock::time_point now);
  void Reschedule(Seat& seat, Clock::time_point deadline);
  void Handover(Seats::iterator it);
  void Dispatch(Guest guest);
  void CloseSeat(Seats::iterator it);
  void CloseGuest(const Guest& guest);

  const Options options_;
  const Serve serve_;
  const Release release_;
  int epoll_ = -1, wake_ = -1;
  std::atomic<int> size_{0};

  mutable std::mutex mu_;
  bool open_ = false;
  httplib::TaskQueue* pool_ = nullptr;
  std::vector<std::pair<Guest, bool>> inbox_;  // guests to seat, and whether they linger
  std::thread reactor_;

  // The reactor's own (and Close()'s once the reactor is joined).
  Seats seats_;
  std::set<std::pair<Clock::time_point, int>> timers_;
  std::vector<char> peek_;
};

}  // namespace airtime
