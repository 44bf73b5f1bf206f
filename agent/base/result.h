// Errors as values at module edges. A module returns Result<T>; the CLI maps the
// error's kind to an exit code, so a deep function never decides how the process ends (a mode
// returns a ModeOutcome, base/mode_outcome.h, which cli/mode_exit.h alone prints and maps).
#pragma once

#include <string>
#include <type_traits>
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

// A value or an error. E is Error everywhere but at the Kubernetes client's edge (kube's
// ApiError keeps the HTTP status and reason); a result whose error says how it reads as an Error
// (E2::to_error()) converts to Result<T>, so callers that only need "did it work" never unpack it.
template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}
  template <typename E2, typename = std::enable_if_t<!std::is_same_v<E2, E> &&
                                                     std::is_same_v<decltype(std::declval<const E2&>().to_error()), E>>>
  Result(const Result<T, E2>& other)
      : v_(other.ok() ? Variant(std::in_place_index<0>, other.value())
                      : Variant(std::in_place_index<1>, other.error().to_error())) {}
  template <typename E2, typename = std::enable_if_t<!std::is_same_v<E2, E> &&
                                                     std::is_same_v<decltype(std::declval<const E2&>().to_error()), E>>>
  Result(Result<T, E2>&& other)
      : v_(other.ok() ? Variant(std::in_place_index<0>, std::move(other.value()))
                      : Variant(std::in_place_index<1>, other.error().to_error())) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const E& error() const { return std::get<1>(v_); }

 private:
  using Variant = std::variant<T, E>;
  Variant v_;
};

// For operations with nothing to return but success.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace iogate
