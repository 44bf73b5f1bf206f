#include "probe/probe.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/clock.h"
#include "base/units.h"
#include "device/diskstats.h"
#include "device/storage_stack.h"
#include "probe/job.h"
#include "probe/probe_target.h"

namespace iogate {
namespace {

// An early stop ends the window at least this far ahead of the monitor's clock, so that no job
// can have counted a completion after the new end before it saw it (see JobControl). Far longer
// than the two instructions between reading the clock and publishing the end.
constexpr uint64_t kStopLeadNs = 5'000'000;

// Where an early stop ends the window: the first sample boundary at least kStopLeadNs ahead, so
// the window is a whole number of sample intervals. A device that serves in bursts (a cgroup
// throttle releases a slice's worth every 100 ms, some cloud volumes per token refill) then gets
// one burst per interval, as its samples did; ending a few ms past a boundary instead counted one
// burst too many, +5% on a 2 s window at 3,000 IOPS.
uint64_t early_window_end(uint64_t window_start, uint64_t tick, uint64_t now, uint64_t limit) {
  uint64_t ticks = (now + kStopLeadNs - window_start + tick - 1) / tick;
  return std::min(limit, window_start + ticks * tick);
}

// 53 bits: the seed travels in JSON, and jq and JavaScript read numbers as doubles.
uint64_t fresh_seed() {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = monotonic_ns() ^ (uint64_t(getpid()) << 32);
  return seed & ((uint64_t{1} << 53) - 1);
}

CpuUsage process_cpu() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto ns = [](const timeval& tv) { return uint64_t(tv.tv_sec) * 1000000000ULL + uint64_t(tv.tv_usec) * 1000ULL; };
  return {ns(ru.ru_utime), ns(ru.ru_stime)};
}

void sleep_until_ns(uint64_t t) {
  uint64_t now = monotonic_ns();
  if (t > now) std::this_thread::sleep_for(std::chrono::nanoseconds(t - now));
}

// Samples one device's diskstats at the window's start, each second, and its end.
class DiskStatsWindow {
 public:
  DiskStatsWindow(uint32_t major, uint32_t minor, std::string proc_root)
      : major_(major), minor_(minor), proc_root_(std::move(proc_root)) {}

  void start(uint64_t now) {
    if (major_ == 0) return;
    auto s = read_diskstats_for(major_, minor_, proc_root_);
    if (!s.ok()) return;
    first_ = last_ = *s;
    first_ns_ = last_ns_ = now;
    ok_ = true;
  }
  void tick(uint64_t now) {
    if (!ok_ || now < last_ns_ + 1000000000ULL) return;
    auto s = read_diskstats_for(major_, minor_, proc_root_);
    if (!s.ok()) return;
    per_second_.push_back(iostat_between(last_, *s, double(now - last_ns_) / 1e9).util_percent);
    last_ = *s;
    last_ns_ = now;
  }
  DiskStatsSummary finish(uint64_t now) {
    DiskStatsSummary out;
    if (!ok_) return out;
    auto s = read_diskstats_for(major_, minor_, proc_root_);
    if (!s.ok()) return out;
    double interval = double(now - first_ns_) / 1e9;
    IostatFigures f = iostat_between(first_, *s, interval);
    out.available = true;
    out.device = s->name;
    out.major = major_;
    out.minor = minor_;
    out.interval_s = interval;
    out.util_percent = f.util_percent;
    out.reads_per_s = f.reads_per_s;
    out.writes_per_s = f.writes_per_s;
    out.read_bytes_per_s = f.read_bytes_per_s;
    out.write_bytes_per_s = f.write_bytes_per_s;
    out.r_await_ns = f.r_await_ns;
    out.w_await_ns = f.w_await_ns;
    out.avg_queue_size = f.avg_queue_size;
    out.util_percent_per_second = per_second_;
    return out;
  }

 private:
  uint32_t major_, minor_;
  std::string proc_root_;
  bool ok_ = false;
  DiskStats first_, last_;
  uint64_t first_ns_ = 0, last_ns_ = 0;
  std::vector<double> per_second_;
};

// The share of the queue slots waiting for their refill above which the probe's thread, not the
// device, set the pace (20%: a device given 4 of 5 slots is measured at a depth it was not asked).
constexpr double kProbeBoundAwaitingShare = 0.2;
// Below this share of a core per job, refills that waited were blocked in io_submit, not computed.
constexpr double kBlockedSubmitCpuShare = 0.5;

void add_result_warnings(const Workload& w, const OpenTarget& target, ProbeResult& r) {
  if (r.target.page_cache) {
    r.warnings.push_back(
        fmt::format("{} is {}: these are page-cache (memory) results, not storage; O_DIRECT "
                    "is accepted there but bypasses nothing",
                    r.target.mount_point.empty() ? r.target.path : r.target.mount_point, r.target.fs_type));
  }
  // O_DIRECT skips this client's cache only: a server holds what iogate has just written to it.
  if (r.storage.device_class == DeviceClass::kNetworkFs && (r.target.test_file_created || r.target.test_file_reused)) {
    r.warnings.push_back(fmt::format(
        "{} is a network file system ({}): the test file iogate wrote there may be read from the server's memory, "
        "which a dataset larger than that memory is not; `iogate probe --mode dataset` on the dataset itself measures "
        "what training reads",
        r.target.mount_point.empty() ? r.target.path : r.target.mount_point, r.target.fs_type));
  }
  if (w.direct && !target.direct) {
    r.warnings.push_back(
        fmt::format("O_DIRECT was refused by {} ({}): buffered I/O was used, so reads may come "
                    "from the page cache and the figures may be optimistic",
                    r.target.path, r.target.fs_type));
  }
  if (!w.direct) {
    r.warnings.push_back("buffered I/O (--direct=0): reads may come from the page cache");
  }
  if (!target.direct && w.iodepth > 1) {
    r.warnings.push_back(
        fmt::format("buffered I/O: queue depth {} is {} threads per job doing blocking "
                    "pread/pwrite (libaio would run synchronously)",
                    w.iodepth, w.iodepth));
  }
  const DiskStatsSummary& d = r.diskstats;
  if (d.available) {
    if (d.r_await_ns > 20e6 || d.w_await_ns > 20e6) {
      r.warnings.push_back(
          fmt::format("{}: await is high (r_await {}, w_await {} > 20 ms): requests queue "
                      "in the device; latency-sensitive loaders will stall",
                      d.device, format_duration_ns(d.r_await_ns), format_duration_ns(d.w_await_ns)));
    }
    if (d.util_percent >= 99.0) {
      r.warnings.push_back(
          fmt::format("{}: busy {:.0f}% of the time: the device was saturated (by this probe, "
                      "or by other I/O sharing it)",
                      d.device, d.util_percent));
    }
  } else if (!r.target.page_cache) {
    r.warnings.push_back(fmt::format("no /proc/diskstats for {} ({}): device utilisation and await unknown",
                                     r.target.source.empty() ? r.target.path : r.target.source, r.target.fs_type));
  }
  // Refills that wait are slots the device did not have: the submitting thread, not the device,
  // set the pace. Said only where they wait for the thread (batch 1), not for a batch to fill.
  const double slots = double(w.iodepth) * double(w.numjobs);
  const JobResult all = r.aggregate();
  const double awaiting = mean_awaiting_refill(all);
  const double submit_share = submit_share_of_latency(all);
  const bool synchronous = r.ioengine == "libaio" && w.iodepth > 1 && submit_share >= kSynchronousSubmitShare;
  if (synchronous) {
    const double held = mean_in_flight(all);
    r.warnings.push_back(fmt::format(
        "libaio ran synchronously on {} ({}): an io_submit call took {:.0f}% of an I/O's completion latency on "
        "average, returning only once its I/O was done, so the kernel held {:.1f} of the {:g} I/Os asked for: these "
        "are the figures of a queue depth of about {:.0f} (fio's libaio engine meets the same; --direct=0 runs one "
        "thread per queue slot, concurrency the file system can serve)",
        r.target.path, r.target.fs_type, 100 * submit_share, held, slots, std::max(1.0, held)));
  } else if (w.iodepth > 1 && w.iodepth_batch == 1 && awaiting >= kProbeBoundAwaitingShare * slots) {
    const double held = mean_in_flight(all);
    // Refills wait either for the probe's CPU or inside io_submit, blocked: the CPU it used tells.
    const double cpu_share =
        r.measured_ns ? double(r.cpu.user_ns + r.cpu.sys_ns) / (double(r.measured_ns) * double(w.numjobs)) : 1.0;
    if (r.ioengine == "libaio" && cpu_share < kBlockedSubmitCpuShare && all.submit_calls) {
      const bool fuse = r.target.fs_type.starts_with("fuse");
      r.warnings.push_back(fmt::format(
          "the kernel held {:.1f} of the {:g} I/Os asked for on average; {:.1f} waited in io_submit, which blocked "
          "{} a call while the probe used {:.0f}% of a CPU: {} ({}) takes only so many asynchronous requests at "
          "once{}, so these are its figures at a depth of about {:.0f}, not {:g}",
          held, slots, awaiting, format_duration_ns(double(all.submit_ns) / double(all.submit_calls)), 100 * cpu_share,
          r.target.path, r.target.fs_type,
          fuse ? " (a FUSE connection queues at most its max_background, 12 by default, see "
                 "/sys/fs/fuse/connections/*/max_background)"
               : "",
          held, slots));
    } else {
      r.warnings.push_back(fmt::format(
          "the kernel held {:.1f} of the {:g} I/Os asked for on average; {:.1f} waited for the probe to submit them "
          "again: its CPU, not the device, set the pace, so these are the device's figures at a depth of about "
          "{:.0f}, not {:g} (more --numjobs at the same total depth spreads the submissions over more cores)",
          held, slots, awaiting, held, slots));
    }
  }
  if (r.stop_reason == StopReason::kSignal)
    r.warnings.push_back("interrupted: the figures cover only part of --runtime");
  const Convergence& c = r.convergence;
  if (c.early_stop.enabled && r.stop_reason == StopReason::kRuntime) {
    r.warnings.push_back(
        c.ci.trusted ? fmt::format("did not settle within --runtime: the {:g}% interval of the mean IOPS is ±{:.1f}%, "
                                   "wider than the ±{:g}% tolerance",
                                   c.ci.confidence * 100, c.ci.relative_half_width * 100, c.early_stop.tolerance * 100)
                     : fmt::format("did not settle within --runtime: IOPS drifted through the run (successive "
                                   "{}-sample means still correlated), so its interval ±{:.1f}% is not to be trusted",
                                   c.ci.batch_size, c.ci.relative_half_width * 100));
  }
  // A volume far below what its class usually serves performs like a slower class: say which.
  IopsRange expected = typical_randread_iops(r.storage.device_class);
  double iops = r.measured_ns ? double(r.total_ios()) / (double(r.measured_ns) / 1e9) : 0;
  if (w.rw == RwMode::kRandRead && w.block_size == 4096 && w.iodepth * w.numjobs >= 16 && expected.low && iops > 0 &&
      iops < double(expected.low)) {
    r.warnings.push_back(
        fmt::format("{:.0f} IOPS is below the {}–{} a {} volume typically serves at 4k QD{}: it performs "
                    "like {}",
                    iops, format_count(double(expected.low)), format_count(double(expected.high)),
                    device_class_name(r.storage.device_class), w.iodepth * w.numjobs,
                    device_class_name(class_for_randread_iops(iops))));
  }
}

}  // namespace

Result<ProbeResult> run_probe(const ProbeRequest& req, const std::atomic<bool>& stop,
                              const ProgressCallback& on_progress) {
  const Workload& w = req.workload;
  if (Status s = validate_workload(w); !s.ok()) return s.error();
  if (Status s = validate_early_stop(req.early_stop); !s.ok()) return s.error();

  ProbeResult result;
  result.workload = w;
  result.seed = w.seed.value_or(fresh_seed());
  result.workload.seed = result.seed;
  result.started_at = rfc3339_utc_now();

  if (on_progress) on_progress({0, 0, 0, false, true});
  auto opened = open_probe_target(req, result.seed, stop);
  if (!opened.ok()) return opened.error();
  OpenTarget& target = *opened;
  if (stop.load()) return runtime_error("interrupted before the measurement started");
  result.target = target.info;
  auto storage = req.storage && w.file.empty() ? Result<StorageStack>(*req.storage)
                                               : detect_storage_stack(target.info.path, DetectOptions{req.root});
  if (storage.ok()) {
    result.storage = std::move(*storage);
  } else {
    result.storage.path = target.info.path;
    result.storage.reason = storage.error().message;
  }
  result.direct = target.direct;
  result.ioengine = target.direct ? "libaio" : "psync";
  result.warnings = target.warnings;

  // Start cold: drop cached pages of what we are about to read (as fio's invalidate=1).
  if (target.test_file) posix_fadvise(target.test_file->fd(), 0, 0, POSIX_FADV_DONTNEED);
  for (const UniqueFd& fd : target.existing_fds) posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);

  std::atomic<bool> abort{false};
  std::latch ready(w.numjobs), go(1);
  JobControl control;
  control.layout = &target.layout;
  control.workload = &w;
  control.ready = &ready;
  control.go = &go;
  control.stop = &abort;

  const uint64_t blocks = target.layout.total_blocks();
  std::vector<std::unique_ptr<JobOutcome>> outcomes;
  std::vector<JobPlan> plans;
  for (int j = 0; j < w.numjobs; ++j) {
    JobPlan p;
    p.job_id = j;
    p.seed = mix_seed(result.seed, uint64_t(j));
    p.seq_begin = blocks * uint64_t(j) / uint64_t(w.numjobs);
    p.seq_end = blocks * uint64_t(j + 1) / uint64_t(w.numjobs);
    plans.push_back(p);
    outcomes.push_back(std::make_unique<JobOutcome>());
  }
  std::vector<std::thread> threads;
  for (int j = 0; j < w.numjobs; ++j) {
    threads.emplace_back(target.direct ? run_aio_job : run_psync_job, std::cref(plans[size_t(j)]), std::ref(control),
                         std::ref(*outcomes[size_t(j)]));
  }
  const uint64_t tick = uint64_t(req.early_stop.sample_interval.count());
  ready.wait();
  const uint64_t start = monotonic_ns();
  // The window opens half a sample interval past the ramp, so its sample boundaries fall midway
  // between the bursts of a throttle that counts its periods from the first I/O (the cgroup
  // throttle releases 100 ms' worth at once, on a grid set by the first bio). On that grid, each
  // sample caught 0, 1 or 2 bursts by the jitter of a few µs, and a 3,000 IOPS cap did not settle
  // within 10 s in one run of four.
  const uint64_t ramp_end = start + uint64_t(w.ramp.count()) + tick / 2;
  const uint64_t end = ramp_end + uint64_t(w.runtime.count());
  control.ramp_end_ns = ramp_end;
  control.end_ns = end;
  go.count_down();

  DiskStatsWindow disk(target.info.dev_major, target.info.dev_minor, req.proc_root());
  CpuUsage cpu_start{}, cpu_end{};
  bool window_started = false;
  uint64_t window_end = end;
  // The loop ticks every sample interval: progress, signals, diskstats, and after the ramp one
  // IOPS sample per tick (completions of all jobs since the last one) for the interval.
  EarlyStop early(req.early_stop);
  uint64_t last_count = 0, last_tick = start;  // for progress
  uint64_t sampled_count = 0, sampled_at = 0;  // for the interval
  for (uint64_t next = start + tick;; next += tick) {
    sleep_until_ns(std::min(next, window_started ? end : ramp_end));
    uint64_t now = monotonic_ns();
    if (!window_started && now >= ramp_end) {
      window_started = true;
      cpu_start = process_cpu();
      disk.start(now);
      next = ramp_end;  // samples on a grid from the window's start (the increment follows)
      sampled_at = ramp_end;
    }
    uint64_t count = 0;
    for (const auto& o : outcomes) count += o->completed.load(std::memory_order_relaxed);
    if (stop.load() || abort.load()) {  // a job that fails raises `abort`
      abort = true;
      result.stop_reason = stop.load() ? StopReason::kSignal : StopReason::kError;
      window_end = now;
      break;
    }
    if (window_started) disk.tick(now);
    if (on_progress) {
      double dt = double(now - last_tick) / 1e9;
      on_progress({now - start, end - start, dt > 0 ? double(count - last_count) / dt : 0, now < ramp_end, false});
    }
    last_count = count;
    last_tick = now;
    // A sample per interval; the last one, cut short by the runtime, only if it spans half a tick.
    uint64_t sample_end = std::min(now, end);
    if (window_started && sample_end >= sampled_at + tick / 2) {
      early.add_sample(double(count - sampled_count) * 1e9 / double(sample_end - sampled_at));
      sampled_count = count;
      sampled_at = sample_end;
      if (now + kStopLeadNs < end) {  // else the runtime ends it anyway
        if (StopDecision d = early.decide(); d.stop) {
          window_end = early_window_end(ramp_end, tick, monotonic_ns(), end);
          control.end_ns.store(window_end, std::memory_order_release);
          result.stop_reason = d.reason;
          sleep_until_ns(window_end);
          break;
        }
      }
    }
    if (now >= end) break;
  }
  uint64_t finish_at = std::min(monotonic_ns(), window_end);
  cpu_end = process_cpu();
  if (window_started) result.diskstats = disk.finish(finish_at);
  for (std::thread& t : threads) t.join();

  for (auto& o : outcomes) {
    if (o->error) return o->error.value();
    // An interrupted run's timeline ends where the run did.
    o->result.iops_per_second.resize(
        std::min(o->result.iops_per_second.size(), timeline_length(0, std::max<uint64_t>(o->result.runtime_ns, 1))));
    result.jobs.push_back(std::move(o->result));
  }
  if (result.stop_reason == StopReason::kNone) result.stop_reason = StopReason::kRuntime;
  result.convergence = {req.early_stop, early.interval()};
  if (window_started) {
    result.cpu = {cpu_end.user_ns - cpu_start.user_ns, cpu_end.sys_ns - cpu_start.sys_ns};
    result.measured_ns = finish_at - ramp_end;
  }
  add_result_warnings(w, target, result);
  return result;
}

}  // namespace iogate
