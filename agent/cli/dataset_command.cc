#include "cli/dataset_command.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "base/exit_codes.h"
#include "cli/signals.h"
#include "measure/measurement_from.h"
#include "policy/evaluate.h"
#include "report/dataset_report.h"

namespace iogate {

int run_dataset_probe_command(const DatasetRequest& request, const std::optional<Demand>& demand, int gpus, bool json) {
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
  std::optional<DemandOutcome> judged;
  if (demand) {
    judged = judge_demand(*demand, gpus, demand_delivered_samples_per_s(*demand, measurement_from_dataset(*result)));
  }
  if (json) {
    nlohmann::json j = dataset_probe_to_json(*result);
    if (judged) {
      j["demand"] = {{"workload", demand->workload},
                     {"accelerator", demand->accelerator},
                     {"samples_per_s_per_accelerator", demand->samples_per_s},
                     {"accelerators", judged->accelerators},
                     {"samples_per_s_needed", judged->samples_per_s_needed},
                     {"samples_per_s_delivered", judged->samples_per_s_delivered},
                     {"predicted_au", judged->predicted_au},
                     {"min_au", judged->min_au},
                     {"accelerators_sustained", judged->accelerators_sustained},
                     {"passed", judged->passed}};
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << render_dataset_human(*result, isatty(STDOUT_FILENO));
    if (judged) {
      std::cout << fmt::format("\n{} (MLPerf Storage)\n  {:.0f} samples/s delivered: {}\n", demand_summary(*demand),
                               judged->samples_per_s_delivered, demand_outcome_text(*judged));
    }
  }
  std::cout.flush();
  if (result->stop_reason == StopReason::kSignal) {
    std::fprintf(stderr, "iogate probe: interrupted by signal %d; partial report\n", signals.signal_number());
    return kExitRuntime;
  }
  return kExitOk;
}

}  // namespace iogate
