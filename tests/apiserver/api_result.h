// A value or the Kubernetes Status error that replaces it: the test server's errors travel as
// values up to the HTTP front, which writes them as `kind: Status` bodies.
#pragma once

#include <utility>
#include <variant>

#include "api_status.h"

namespace iogate::apiserver {

template <typename T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T value) : v_(std::move(value)) {}
  ApiResult(ApiError error) : v_(std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  const ApiError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, ApiError> v_;
};

}  // namespace iogate::apiserver
