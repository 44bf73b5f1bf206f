// An owned libaio context with completion reaping from the kernel's shared ring.
//
// The kernel maps each aio context's completion ring into the process (the context id is its
// address). Reading completions straight from it saves one io_getevents syscall per batch, as
// fio's userspace_reap does; io_getevents is used only to wait when the ring is empty.
#pragma once

#include <libaio.h>

#include <cstdint>

#include "base/result.h"

namespace iogate {

class AioContext {
 public:
  // Fails with a message naming fs.aio-max-nr when the system-wide aio limit is exhausted.
  static Result<AioContext> create(unsigned max_events);

  AioContext(const AioContext&) = delete;
  AioContext& operator=(const AioContext&) = delete;
  AioContext(AioContext&& o) noexcept;
  AioContext& operator=(AioContext&& o) noexcept;
  ~AioContext();

  io_context_t get() const { return ctx_; }

  // Copies up to max ready completions without a syscall; returns how many.
  // Returns 0 when the ring is empty or cannot be read from user space.
  int reap_from_ring(io_event* events, int max);

  // Waits up to timeout_ns for at least one completion; returns the count or -errno.
  int wait(io_event* events, int max, int64_t timeout_ns);

  bool ring_readable() const { return ring_ok_; }

 private:
  explicit AioContext(io_context_t ctx);
  io_context_t ctx_ = nullptr;
  bool ring_ok_ = false;
};

}  // namespace iogate
