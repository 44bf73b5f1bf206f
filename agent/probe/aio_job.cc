// The libaio engine. The loop keeps every slot in flight: each reaped completion immediately
// becomes the next submission. Completions are read from the kernel's user-space ring (an
// io_getevents only to wait when it is empty); refills go to io_submit one by one by default, or
// --iodepth-batch at a time. The loop allocates nothing; the clock is read once per reap batch
// and once per io_submit.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/rng.h"
#include "probe/aio_context.h"
#include "probe/aligned_buffer.h"
#include "probe/job.h"

namespace iogate {

namespace {

void run_aio_loop(const JobPlan& plan, JobControl& control, JobOutcome& out) {
  const Workload& w = *control.workload;
  const IoLayout& layout = *control.layout;
  const int depth = w.iodepth;
  const uint64_t bs = w.block_size;

  // Setup, before the common start: failures are reported after `go` so no one waits forever.
  // Buffers first: the context's destructor (io_destroy) waits for in-flight I/O, so it must
  // run before the buffers the kernel may still be writing to are unmapped.
  AlignedBuffer buffers(static_cast<size_t>(bs) * static_cast<size_t>(depth));
  auto ctx = AioContext::create(static_cast<unsigned>(depth));
  FastRng rng(plan.seed);
  if (ctx.ok() && buffers.valid()) {
    // Incompressible, non-zero payload for writes (and harmless for reads).
    auto* words = reinterpret_cast<uint64_t*>(buffers.data());
    for (size_t i = 0; i < buffers.size() / 8; ++i) words[i] = rng.next() | 1;
  }
  std::vector<iocb> iocbs(static_cast<size_t>(depth));
  std::vector<iocb*> batch(static_cast<size_t>(depth));
  std::vector<io_event> events(static_cast<size_t>(depth));
  std::vector<uint64_t> submit_ns(static_cast<size_t>(depth));
  std::vector<uint64_t> seen_ns(static_cast<size_t>(depth),
                                0);  // when the slot's last completion was seen, in the window
  std::vector<uint8_t> is_write(static_cast<size_t>(depth));
  SequentialCursor cursor(plan.seq_begin, plan.seq_end);
  const bool random = rw_mode_random(w.rw);

  control.ready->count_down();
  control.go->wait();
  if (!ctx.ok()) {
    out.error = ctx.error();
    return;
  }
  if (!buffers.valid()) {
    out.error = runtime_error(fmt::format("job {}: cannot map {} bytes of I/O buffers", plan.job_id, bs * depth));
    return;
  }

  JobResult& result = out.result;
  result.job_id = plan.job_id;
  result.iops_per_second.assign(timeline_length(control.ramp_end_ns, control.end_ns), 0);
  CompletionRecorder recorder{&result, control.ramp_end_ns.load(), control.end_ns.load(), bs};

  auto prepare = [&](int slot) {
    IoLayout::Location loc = random ? layout.random(rng) : layout.locate(cursor.next());
    bool write = next_is_write(w, rng);
    is_write[slot] = write;
    uint8_t* buf = buffers.data() + static_cast<size_t>(slot) * bs;
    if (write) {
      io_prep_pwrite(&iocbs[slot], loc.fd, buf, bs, static_cast<long long>(loc.offset));
    } else {
      io_prep_pread(&iocbs[slot], loc.fd, buf, bs, static_cast<long long>(loc.offset));
    }
    iocbs[slot].data = reinterpret_cast<void*>(static_cast<uintptr_t>(slot));
  };

  int in_flight = 0;
  // Submits batch[0, n); returns how many went in, or sets out.error.
  auto submit = [&](int n) -> int {
    uint64_t t = monotonic_ns();
    for (int i = 0; i < n; ++i) {
      auto slot = reinterpret_cast<uintptr_t>(batch[i]->data);
      submit_ns[slot] = t;
      if (seen_ns[slot]) result.refill_wait_ns += t - std::exchange(seen_ns[slot], 0);
    }
    int done = 0;
    while (done < n) {
      uint64_t t_call = monotonic_ns();
      int rc = io_submit(ctx->get(), n - done, batch.data() + done);
      result.submit_ns += monotonic_ns() - t_call;
      ++result.submit_calls;
      if (rc > 0) {
        done += rc;
      } else if (rc == -EAGAIN && in_flight + done > 0) {
        break;  // the kernel is full; the rest goes in after the next completions
      } else if (rc == -EINTR) {
        continue;
      } else {
        out.error = runtime_error(fmt::format("io_submit: {}", std::strerror(rc < 0 ? -rc : EIO)));
        break;
      }
    }
    return done;
  };

  // Prepared but not yet accepted by the kernel, at batch[0, pending). A refill goes in as soon as
  // `submit_batch` of them are prepared: with the default of 1 every completion is replaced at
  // once, as fio's defaults do, so the device keeps iodepth I/Os; larger batches save syscalls but
  // leave the device short of the refills still waiting for their batch.
  const int submit_batch = std::min(w.iodepth_batch, depth);
  int pending = 0;
  auto flush = [&] {
    if (pending == 0 || out.error) return;
    int n = submit(pending);
    if (out.error) return;
    in_flight += n;
    if (n < pending) std::memmove(batch.data(), batch.data() + n, sizeof(iocb*) * static_cast<size_t>(pending - n));
    pending -= n;
  };
  for (int slot = 0; slot < depth && !out.error; ++slot) {
    prepare(slot);
    batch[pending++] = &iocbs[slot];
    if (pending >= submit_batch) flush();
  }
  flush();

  uint64_t last_seen = recorder.ramp_end_ns;
  uint64_t measured = 0;
  while (!out.error) {
    if (in_flight == 0) {
      if (pending == 0) break;
      flush();  // only after the kernel said EAGAIN with nothing of ours in flight
      continue;
    }

    int got = ctx->reap_from_ring(events.data(), depth);
    if (got == 0) {
      got = ctx->wait(events.data(), depth, 250'000'000);
      ++result.reap_calls;
      if (got < 0) {
        out.error = runtime_error(fmt::format("io_getevents: {}", std::strerror(-got)));
        break;
      }
    }
    uint64_t now = monotonic_ns();
    last_seen = now;
    recorder.end_ns = control.end_ns.load(std::memory_order_acquire);  // after the clock: see JobControl
    const bool keep_going = now < recorder.end_ns && !control.stop->load(std::memory_order_relaxed);
    for (int i = 0; i < got; ++i) {
      const io_event& ev = events[i];
      int slot = static_cast<int>(reinterpret_cast<uintptr_t>(ev.data));
      long res = static_cast<long>(ev.res);
      if (res != static_cast<long>(bs)) {
        const iocb* cb = &iocbs[slot];
        out.error = runtime_error(res < 0 ? fmt::format("{} at offset {}: {}", is_write[slot] ? "write" : "read",
                                                        cb->u.c.offset, std::strerror(static_cast<int>(-res)))
                                          : fmt::format("short {} at offset {}: {} of {} bytes",
                                                        is_write[slot] ? "write" : "read", cb->u.c.offset, res, bs));
      }
      --in_flight;
      measured += recorder.record(is_write[slot], submit_ns[slot], now);
      if (keep_going && !out.error) {
        if (now >= recorder.ramp_end_ns) seen_ns[slot] = now;
        prepare(slot);
        batch[pending++] = &iocbs[slot];
        if (pending >= submit_batch) flush();
      }
    }
    flush();
    out.completed.store(measured, std::memory_order_relaxed);
  }
  // Drain whatever is still in flight after an error, so buffers outlive the kernel's use of them.
  while (in_flight > 0) {
    int got = ctx->wait(events.data(), depth, 1'000'000'000);
    if (got <= 0) break;
    in_flight -= got;
  }
  uint64_t window_end = std::min(last_seen, control.end_ns.load());
  result.runtime_ns = window_end > recorder.ramp_end_ns ? window_end - recorder.ramp_end_ns : 0;
}

}  // namespace

void run_aio_job(const JobPlan& plan, JobControl& control, JobOutcome& out) {
  run_aio_loop(plan, control, out);
  if (out.error) control.stop->store(true);  // one failed job fails the run: the others stop too
}

}  // namespace iogate
