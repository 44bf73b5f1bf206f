// The threads behind an HTTP listener, sized so that clients who connect and send nothing cannot
// starve the ones who do.
//
// An accepted connection first waits, costing no thread, in one poll(2) loop until its first bytes
// arrive (a TLS ClientHello, a request line); only then does a worker thread take it and serve it
// to its end. Workers are started as connections become ready, up to max_workers, and exit after
// idling a while, so a quiet listener holds one thread (the poller) and a busy one as many as its
// concurrent clients.
//
// Bounds, each with what happens there:
//   - a connection that sends nothing for first_bytes_timeout is closed;
//   - at most max_waiting connections wait, for their first bytes or for a worker; one more closes
//     the one that has waited longest for its first bytes (a client with something to say sends it
//     within a round trip), or itself when all that wait are ready ones;
//   - with max_workers busy, ready connections queue for the first worker to finish.
// Worker threads are made by the poller thread: they inherit its attributes (I/O priority), not
// those of whoever calls admit().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include "base/unique_fd.h"

namespace iogate {

struct HttpWorkerLimits {
  int max_workers = 64;
  int max_waiting = 128;
  std::chrono::milliseconds first_bytes_timeout{10'000};
  // An idle worker exits after this; a new one costs tens of microseconds.
  std::chrono::milliseconds worker_idle_exit{10'000};
};

struct HttpWorkerCounts {
  size_t workers = 0;                   // threads serving or idle, the poller not counted
  size_t busy = 0;                      // of them, serving a connection
  size_t waiting = 0;                   // connections waiting for their first bytes
  size_t ready = 0;                     // connections with bytes, waiting for a worker
  uint64_t timed_out = 0, evicted = 0;  // closed unserved: silent too long, pushed out at max_waiting
};

class HttpWorkers {
 public:
  // `serve` is called on a worker thread with a connection whose bytes have arrived; it owns the
  // descriptor from then on and closes it.
  using Serve = std::function<void(int fd)>;
  HttpWorkers(HttpWorkerLimits limits, Serve serve);
  // Closes the connections that wait and waits for the served ones to end.
  ~HttpWorkers();
  HttpWorkers(const HttpWorkers&) = delete;
  HttpWorkers& operator=(const HttpWorkers&) = delete;

  // Takes an accepted connection (and its descriptor); never blocks on the client.
  void admit(int fd);
  HttpWorkerCounts counts() const;

 private:
  struct Waiting {
    int fd;
    uint64_t id;  // fds are reused once closed: the poller matches its results by id
    std::chrono::steady_clock::time_point deadline;
  };
  void poll_loop();
  void work(std::list<std::thread>::iterator self);
  void make_ready(int fd);  // with mu_ held
  void wake_poller();

  const HttpWorkerLimits limits_;
  const Serve serve_;
  UniqueFd wake_;  // an eventfd: admit() and the destructor interrupt poll() with it

  mutable std::mutex mu_;
  std::condition_variable work_ready_;
  std::deque<Waiting> waiting_;  // oldest first
  std::deque<int> ready_;
  uint64_t next_id_ = 0;
  size_t workers_ = 0, busy_ = 0;
  uint64_t timed_out_ = 0, evicted_ = 0;
  bool stopping_ = false;
  std::list<std::thread> threads_;                        // the workers, joined when they exit
  std::vector<std::list<std::thread>::iterator> exited_;  // ended, not joined yet
  std::thread poller_;
};

}  // namespace iogate
