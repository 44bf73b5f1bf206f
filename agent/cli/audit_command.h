// `iogate audit`: what enforce mode would block in the cluster, from what the agents and
// preflights recorded (audit/audit.h); read-only. Exit 0 with the report, 2 usage, 3 API failure.
#pragma once

#include <string>
#include <vector>

namespace iogate {

int run_audit_command(const std::vector<std::string>& args);

}  // namespace iogate
