// Errors as values at module edges. A module returns Result<T>; the CLI maps the
// error's kind to an exit code, so a deep function never decides how the process ends.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace iogate {

enum class ErrorKind {
  kUsage,    // bad flag, bad value, bad policy: the user can fix the command line (exit 2)
  kRuntime,  // I/O failure, kernel refusal, missing resource (exit 3)
};

struct Error {
  ErrorKind kind = ErrorKind::kRuntime;
  std::string message;  // one line, names the flag, field or path concerned
  int os_errno = 0;     // the errno behind a system call failure, for callers that fall back on it
};

inline Error usage_error(std::string message) { return {ErrorKind::kUsage, std::move(message)}; }
inline Error runtime_error(std::string message) { return {ErrorKind::kRuntime, std::move(message)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// For operations with nothing to return but success.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace iogate
