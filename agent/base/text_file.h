// Small text files read whole: service-account tokens, CA bundles, kubeconfigs, certificates.
#pragma once

#include <string>

#include "base/result.h"

namespace iogate {

// The whole file; the error names the path and says why ("No such file or directory").
Result<std::string> read_text_file(const std::string& path);

}  // namespace iogate
