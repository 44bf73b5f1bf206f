// The buffered engine: a job's queue depth is real concurrency, iodepth threads each doing
// blocking pread/pwrite, because libaio on a buffered fd completes inside io_submit and a
// "QD32" run would really be QD1 with extra steps.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/rng.h"
#include "probe/aligned_buffer.h"
#include "probe/job.h"

namespace iogate {

namespace {

struct Lane {
  JobResult result;
  std::optional<Error> error;
  uint64_t last_seen = 0;
};

// Hands out sequential blocks to all lanes of a job in order, wrapping at the slice end.
class SharedCursor {
 public:
  SharedCursor(uint64_t begin, uint64_t end) : begin_(begin), span_(end - begin) {}
  uint64_t next() { return begin_ + counter_.fetch_add(1, std::memory_order_relaxed) % span_; }

 private:
  uint64_t begin_, span_;
  std::atomic<uint64_t> counter_{0};
};

void run_lane(int lane_id, const JobPlan& plan, JobControl& control, SharedCursor& cursor,
              std::atomic<uint64_t>& completed, Lane& lane) {
  const Workload& w = *control.workload;
  const IoLayout& layout = *control.layout;
  const uint64_t bs = w.block_size;
  FastRng rng(mix_seed(plan.seed, static_cast<uint64_t>(lane_id)));
  AlignedBuffer buffer(static_cast<size_t>(bs));
  if (!buffer.valid()) {
    lane.error = runtime_error("cannot map an I/O buffer");
    return;
  }
  auto* words = reinterpret_cast<uint64_t*>(buffer.data());
  for (size_t i = 0; i < buffer.size() / 8; ++i) words[i] = rng.next() | 1;

  const uint64_t ramp_end = control.ramp_end_ns.load();
  lane.result.iops_per_second.assign(timeline_length(ramp_end, control.end_ns.load()), 0);
  CompletionRecorder recorder{&lane.result, ramp_end, control.end_ns.load(), bs};
  const bool random = rw_mode_random(w.rw);
  uint64_t now = monotonic_ns();
  while (now < recorder.end_ns && !control.stop->load(std::memory_order_relaxed)) {
    IoLayout::Location loc = random ? layout.random(rng) : layout.locate(cursor.next());
    bool write = next_is_write(w, rng);
    uint64_t start = now;
    ssize_t rc = write ? pwrite(loc.fd, buffer.data(), bs, static_cast<off_t>(loc.offset))
                       : pread(loc.fd, buffer.data(), bs, static_cast<off_t>(loc.offset));
    ++lane.result.submit_calls;
    now = monotonic_ns();
    recorder.end_ns = control.end_ns.load(std::memory_order_acquire);  // after the clock: see JobControl
    if (rc != static_cast<ssize_t>(bs)) {
      if (rc < 0 && errno == EINTR) continue;
      lane.error = runtime_error(
          rc < 0
              ? fmt::format("{} at offset {}: {}", write ? "pwrite" : "pread", loc.offset, std::strerror(errno))
              : fmt::format("short {} at offset {}: {} of {} bytes", write ? "pwrite" : "pread", loc.offset, rc, bs));
      control.stop->store(true);
      break;
    }
    if (recorder.record(write, start, now)) completed.fetch_add(1, std::memory_order_relaxed);
  }
  lane.last_seen = now;
}

}  // namespace

void run_psync_job(const JobPlan& plan, JobControl& control, JobOutcome& out) {
  const int lanes_n = control.workload->iodepth;
  std::vector<Lane> lanes(static_cast<size_t>(lanes_n));
  SharedCursor cursor(plan.seq_begin, plan.seq_end);
  control.ready->count_down();
  control.go->wait();

  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(lanes_n));
  for (int i = 0; i < lanes_n; ++i) {
    threads.emplace_back(run_lane, i, std::cref(plan), std::ref(control), std::ref(cursor), std::ref(out.completed),
                         std::ref(lanes[static_cast<size_t>(i)]));
  }
  for (std::thread& t : threads) t.join();

  JobResult& result = out.result;
  result.job_id = plan.job_id;
  const uint64_t ramp_end = control.ramp_end_ns.load(), end = control.end_ns.load();
  uint64_t last_seen = ramp_end;
  for (Lane& lane : lanes) {
    if (lane.error && !out.error) out.error = lane.error;
    merge_job_result(result, lane.result);
    last_seen = std::max(last_seen, lane.last_seen);
  }
  uint64_t window_end = std::min(last_seen, end);
  result.runtime_ns = window_end > ramp_end ? window_end - ramp_end : 0;
}

}  // namespace iogate
