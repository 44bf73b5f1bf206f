// Bytes that the requests of a listener hold at once, across its worker threads: each request
// takes its share before it holds them (a body it reads, a tree it parses) and gives it back when
// it is answered, so that however many connections are served at once, together they hold at most
// the capacity. A request that finds no room waits, in arrival order (a large request is not
// starved by a stream of small ones), up to a time its caller chooses, and is then refused.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

namespace iogate {

class ByteBudget {
 public:
  class Lease;

  explicit ByteBudget(size_t capacity) : capacity_(capacity) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // `bytes` of the budget, waiting at most `wait` for room behind the requests that came first. A
  // lease that is not held() when the wait ran out, or at once for more than the capacity (it would
  // never fit: the caller refuses such a request for its size, not for being busy). 0 bytes: held.
  Lease acquire(size_t bytes, std::chrono::milliseconds wait);

  size_t capacity() const { return capacity_; }
  size_t in_use() const;
  size_t waiting() const;  // requests waiting for room

 private:
  void release(size_t bytes);

  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable room_;
  size_t used_ = 0;
  uint64_t next_ticket_ = 0;
  std::deque<uint64_t> waiting_;  // tickets, oldest first: only the first may take room
};

// A share of a ByteBudget, given back when destroyed.
class ByteBudget::Lease {
 public:
  Lease() = default;
  ~Lease() { reset(); }
  Lease(Lease&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) { other.budget_ = nullptr; }
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  bool held() const { return budget_ != nullptr; }
  size_t bytes() const { return budget_ ? bytes_ : 0; }
  void reset();  // gives the share back now

 private:
  friend class ByteBudget;
  Lease(ByteBudget* budget, size_t bytes) : budget_(budget), bytes_(bytes) {}
  ByteBudget* budget_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace iogate
