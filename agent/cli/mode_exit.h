// How every mode ends the process, the one place its outcome (base/mode_outcome.h) is printed and
// mapped to an exit code (base/exit_codes.h): an Error is one line "iogate MODE: message" on
// stderr and its kind's code; a result is its report on stdout, if any, and its status's code.
#pragma once

#include <iostream>

#include "base/mode_outcome.h"

namespace iogate {

// `json`: the report as JSON (--output-format json), else human. The streams are for tests.
int finish_mode(const char* mode, const ModeOutcome& outcome, bool json, std::ostream& out = std::cout,
                std::ostream& err = std::cerr);

}  // namespace iogate
