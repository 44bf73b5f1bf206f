// The I/O scheduling class of the calling thread (ioprio_set(2), as ionice sets it), so the node
// agent probes at idle priority on a node where jobs run: the kernel serves idle-class I/O only
// when no other I/O is pending on the device.
//
// A thread's priority is inherited by the threads it creates afterwards, so setting it on the
// thread that runs the probe covers the probe's job threads. It only has an effect where the
// device's I/O scheduler honours classes (bfq; mq-deadline since Linux 5.14); with "none" (the
// default for NVMe) or kyber the class is ignored, which the report should say.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace iogate {

enum class IoPriorityClass { kNone = 0, kRealtime = 1, kBestEffort = 2, kIdle = 3 };  // IOPRIO_CLASS_*

struct IoPriority {
  IoPriorityClass cls = IoPriorityClass::kNone;
  int level = 0;  // 0 (highest) .. 7, for realtime and best-effort; 0 otherwise
};

// "idle", "best-effort/4", "realtime/0", "none" (as ionice prints them, lower case).
std::string io_priority_name(IoPriority p);
// Parses "idle", "best-effort", "best-effort/N", "be/N", "none"; errors name `field`.
Result<IoPriority> parse_io_priority(std::string_view text, std::string_view field);

// ioprio_set(IOPRIO_WHO_PROCESS, 0, ...) on the calling thread. Realtime needs CAP_SYS_ADMIN.
Status set_thread_io_priority(IoPriority p);
Result<IoPriority> thread_io_priority();

// Whether an active scheduler (StackNode::scheduler: "none", "mq-deadline", "bfq", "kyber", ...)
// honours I/O priority classes.
bool scheduler_honours_io_priority(std::string_view scheduler);

}  // namespace iogate
