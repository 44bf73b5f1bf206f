// A probe's result for a person at a terminal: the headline numbers first, then the shape of the
// run (IOPS per second, latency distribution), then what the device and CPU saw, then warnings.
//
//   iogate probe /data
//   run      randread 4k  QD32 × 1 job  10 s (+1 s ramp)  libaio direct  seed 0x1f2e3d4c5b6a7988
//   target   ext4 on /dev/vda (253:0)  mounted at /  test file 1.00 GiB (created)
//   read     112.3k IOPS  438.7 MiB/s  mean 284 µs  p50 250 µs  p99 480 µs  p99.9 1.20 ms  max 5.10 ms
//   IOPS/s   ▇▇▇▇█▇▇▇▇█  min 108.0k  max 118.2k
//   latency      50 µs – 100 µs    ██▍                                         3.4%
//               100 µs – 200 µs    ████████████████████▍                      29.7%
//               …
//   device   vda  util 98.2%  aqu-sz 31.2  r/s 112.4k  r_await 280 µs
//   cpu      user 410.00 ms  sys 1.20 s  14.3 µs per I/O
//   warning  …
//
// The run's description has a line of its own: with the seed it is ~95 columns, so it cannot
// share one with the path. Mixed workloads get a "write" line and "r lat"/"w lat" charts.
//
// Lines are at most kReportColumns wide (UTF-8, counted in code points) and wrap at field
// boundaries. The JSON report (report_json.h) carries everything; this is a summary of it.
#pragma once

#include <string>

#include "probe/probe_result.h"
#include "report/text_chart.h"

namespace iogate {

// `color`: ANSI bold for the headline numbers and yellow for warnings; without it, no escape
// codes at all, so the text can be pasted or grepped.
std::string render_probe_human(const ProbeResult& r, bool color);

}  // namespace iogate
