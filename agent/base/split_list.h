// A list as people write one value of several: "1,2,4,8" (--workers), "cpu=1,memory=256Mi"
// (--preflight-limits), a mount's options.
#pragma once

#include <string_view>
#include <vector>

namespace iogate {

// The items between separators, empty ones kept: "" is one empty item and "a,,b" has three, so
// each caller's own check refuses them.
std::vector<std::string_view> split_list(std::string_view text, char separator = ',');

}  // namespace iogate
