#include "cli/dataset_command.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "base/exit_codes.h"
#include "cli/signals.h"
#include "report/dataset_report.h"

namespace iogate {

int run_dataset_probe_command(const DatasetRequest& request, bool json) {
  StopSignals signals;
  const bool tty = isatty(STDERR_FILENO);
  DatasetProgressCallback progress;
  if (tty) {
    progress = [](const DatasetProgress& p) {
      std::string text = p.phase == "scan"    ? "iogate: scanning the dataset…"
                         : p.phase == "limit" ? "iogate: finding what limits the reads…"
                                              : fmt::format("iogate: reading samples with {} workers…", p.workers);
      std::fprintf(stderr, "\r\033[K%s", text.c_str());
    };
  }
  auto result = run_dataset_probe(request, signals.stop(), progress);
  if (tty) std::fputs("\r\033[K", stderr);
  if (!result.ok()) {
    std::fprintf(stderr, "iogate probe: %s\n", result.error().message.c_str());
    return exit_code_for(result.error());
  }
  if (json) {
    std::cout << dataset_probe_to_json(*result).dump(2) << "\n";
  } else {
    std::cout << render_dataset_human(*result, isatty(STDOUT_FILENO));
  }
  std::cout.flush();
  if (result->stop_reason == StopReason::kSignal) {
    std::fprintf(stderr, "iogate probe: interrupted by signal %d; partial report\n", signals.signal_number());
    return kExitRuntime;
  }
  return kExitOk;
}

}  // namespace iogate
