#include "http/byte_budget.h"

#include <algorithm>
#include <utility>

namespace iogate {

ByteBudget::Lease ByteBudget::acquire(size_t bytes, std::chrono::milliseconds wait) {
  if (bytes > capacity_) return Lease();
  if (bytes == 0) return Lease(this, 0);
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t ticket = next_ticket_++;
  waiting_.push_back(ticket);
  bool room = room_.wait_for(lock, wait, [&] { return waiting_.front() == ticket && used_ + bytes <= capacity_; });
  waiting_.erase(std::find(waiting_.begin(), waiting_.end(), ticket));
  if (room) used_ += bytes;
  // Whether it took room or gave up, the next in line may now go.
  room_.notify_all();
  return room ? Lease(this, bytes) : Lease();
}

size_t ByteBudget::in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

size_t ByteBudget::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_.size();
}

void ByteBudget::release(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    used_ -= bytes;
  }
  room_.notify_all();
}

ByteBudget::Lease& ByteBudget::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    reset();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = other.bytes_;
  }
  return *this;
}

void ByteBudget::Lease::reset() {
  if (budget_) std::exchange(budget_, nullptr)->release(bytes_);
}

}  // namespace iogate
