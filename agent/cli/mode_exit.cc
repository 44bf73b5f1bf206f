#include "cli/mode_exit.h"

#include "base/exit_codes.h"
#include "cli/command_line.h"

namespace iogate {

int finish_mode(const char* mode, const ModeOutcome& outcome, bool json, std::ostream& out, std::ostream& err) {
  if (!outcome.ok()) return report_usage_failure(mode, outcome.error(), err);
  if (const std::optional<ModeReport>& report = outcome->report) {
    if (json) {
      out << report->json.dump(2) << "\n";
    } else {
      out << report->human;
    }
    out.flush();
  }
  return exit_code_for(outcome->status);
}

}  // namespace iogate
