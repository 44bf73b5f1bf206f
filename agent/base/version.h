#pragma once

namespace iogate {
// Set by CMake from the project version; the report carries it.
#ifndef IOGATE_VERSION
#define IOGATE_VERSION "0.0.0-dev"
#endif
inline constexpr const char* kVersion = IOGATE_VERSION;
}  // namespace iogate
