#include "probe/io_priority.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

namespace iogate {

namespace {

// From include/uapi/linux/ioprio.h; glibc has no wrapper and no header for them.
constexpr int kIoprioClassShift = 13;
// Only the low 3 bits are the level: Linux 6.5 put hints in bits 3 to 12.
constexpr int kIoprioLevelMask = 7;
constexpr int kIoprioWhoProcess = 1;  // IOPRIO_WHO_PROCESS: with who = 0, the calling thread

int encode(IoPriority p) { return (static_cast<int>(p.cls) << kIoprioClassShift) | p.level; }

bool has_level(IoPriorityClass c) { return c == IoPriorityClass::kRealtime || c == IoPriorityClass::kBestEffort; }

IoPriority decode(int value) {
  IoPriority p;
  p.cls = static_cast<IoPriorityClass>(value >> kIoprioClassShift);
  // Level 0 outside realtime and best-effort, whatever the kernel keeps there: ionice sets idle/7,
  // and kernels before 5.15 report a thread never set as none/4.
  if (has_level(p.cls)) p.level = value & kIoprioLevelMask;
  return p;
}

const char* class_name(IoPriorityClass c) {
  switch (c) {
    case IoPriorityClass::kNone: return "none";
    case IoPriorityClass::kRealtime: return "realtime";
    case IoPriorityClass::kBestEffort: return "best-effort";
    case IoPriorityClass::kIdle: return "idle";
  }
  return "?";
}

Error errno_error(std::string what, int err) {
  Error e = runtime_error(fmt::format("{}: {}", what, std::strerror(err)));
  e.os_errno = err;
  return e;
}

}  // namespace

std::string io_priority_name(IoPriority p) {
  if (has_level(p.cls)) return fmt::format("{}/{}", class_name(p.cls), p.level);
  return class_name(p.cls);
}

Result<IoPriority> parse_io_priority(std::string_view text, std::string_view field) {
  auto bad = [&](std::string_view why) {
    return usage_error(
        fmt::format("{}: \"{}\": {} (expected idle, best-effort[/0-7], realtime[/0-7] or none)", field, text, why));
  };
  std::string_view cls = text, level;
  bool has_slash = false;
  if (size_t slash = text.find('/'); slash != std::string_view::npos) {
    cls = text.substr(0, slash);
    level = text.substr(slash + 1);
    has_slash = true;
  }
  IoPriority p;
  if (cls == "idle") p.cls = IoPriorityClass::kIdle;
  else if (cls == "best-effort" || cls == "be") p.cls = IoPriorityClass::kBestEffort;
  else if (cls == "realtime" || cls == "rt") p.cls = IoPriorityClass::kRealtime;
  else if (cls == "none") p.cls = IoPriorityClass::kNone;
  else return bad("unknown I/O scheduling class");
  if (!has_slash) {
    // As ionice: a class without a level gets the middle one, 4 (IOPRIO_NORM).
    if (has_level(p.cls)) p.level = 4;
    return p;
  }
  if (!has_level(p.cls)) return bad("only best-effort and realtime take a level");
  int n = -1;
  auto [ptr, ec] = std::from_chars(level.data(), level.data() + level.size(), n);
  if (ec != std::errc() || ptr != level.data() + level.size() || n < 0 || n > 7) {
    return bad("the level must be 0 to 7");
  }
  p.level = n;
  return p;
}

Status set_thread_io_priority(IoPriority p) {
  if (p.level < 0 || p.level > 7) {
    return usage_error(fmt::format("I/O priority level must be 0 to 7, got {}", p.level));
  }
  if (!has_level(p.cls)) p.level = 0;
  if (::syscall(SYS_ioprio_set, kIoprioWhoProcess, 0, encode(p)) != 0) {
    return errno_error(fmt::format("ioprio_set {}", io_priority_name(p)), errno);
  }
  return ok_status();
}

Result<IoPriority> thread_io_priority() {
  long value = ::syscall(SYS_ioprio_get, kIoprioWhoProcess, 0);
  if (value < 0) return errno_error("ioprio_get", errno);
  return decode(static_cast<int>(value));
}

bool scheduler_honours_io_priority(std::string_view scheduler) {
  // bfq schedules by class; mq-deadline has had per-class queues since Linux 5.14. none and kyber
  // dispatch without looking at it.
  return scheduler == "bfq" || scheduler == "mq-deadline";
}

}  // namespace iogate
