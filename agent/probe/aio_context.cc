#include "probe/aio_context.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace iogate {
namespace {

// The layout of the kernel's struct aio_ring (fs/aio.c), stable since 2.6.
struct KernelAioRing {
  unsigned id;
  unsigned nr;
  unsigned head;
  unsigned tail;
  unsigned magic;
  unsigned compat_features;
  unsigned incompat_features;
  unsigned header_length;
  io_event events[];
};
constexpr unsigned kAioRingMagic = 0xa10a10a1;

}  // namespace

Result<AioContext> AioContext::create(unsigned max_events) {
  io_context_t ctx = nullptr;
  int rc = io_setup(static_cast<int>(max_events), &ctx);
  if (rc == -EAGAIN) {
    return runtime_error(fmt::format(
        "io_setup({}): the system-wide limit of in-flight aio requests is reached; raise sysctl fs.aio-max-nr "
        "(see /proc/sys/fs/aio-nr and fs.aio-max-nr) or lower --iodepth/--numjobs",
        max_events));
  }
  if (rc < 0) {
    return runtime_error(fmt::format("io_setup({}): {}", max_events, std::strerror(-rc)));
  }
  return AioContext(ctx);
}

AioContext::AioContext(io_context_t ctx) : ctx_(ctx) {
  auto* ring = reinterpret_cast<KernelAioRing*>(ctx_);
  ring_ok_ = ring && ring->magic == kAioRingMagic && ring->incompat_features == 0 && ring->nr > 0;
}

AioContext::AioContext(AioContext&& o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)), ring_ok_(o.ring_ok_) {}

AioContext& AioContext::operator=(AioContext&& o) noexcept {
  if (this != &o) {
    if (ctx_) io_destroy(ctx_);
    ctx_ = std::exchange(o.ctx_, nullptr);
    ring_ok_ = o.ring_ok_;
  }
  return *this;
}

AioContext::~AioContext() {
  if (ctx_) io_destroy(ctx_);
}

int AioContext::reap_from_ring(io_event* events, int max) {
  if (!ring_ok_) return 0;
  auto* ring = reinterpret_cast<KernelAioRing*>(ctx_);
  unsigned head = ring->head;
  unsigned tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
  int n = 0;
  while (head != tail && n < max) {
    events[n++] = ring->events[head];
    head = (head + 1) % ring->nr;
  }
  if (n) __atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
  return n;
}

int AioContext::wait(io_event* events, int max, int64_t timeout_ns) {
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000), static_cast<long>(timeout_ns % 1000000000)};
  int rc;
  do {
    rc = io_getevents(ctx_, 1, max, events, &ts);
  } while (rc == -EINTR);
  return rc;
}

}  // namespace iogate
