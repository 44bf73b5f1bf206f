#include <doctest/doctest.h>

#include "kube/base64.h"

namespace iogate {
namespace {

TEST_CASE("base64: RFC 4648 test vectors, with and without padding") {
  CHECK(decode_base64("") == "");
  CHECK(decode_base64("Zg==") == "f");
  CHECK(decode_base64("Zm8=") == "fo");
  CHECK(decode_base64("Zm9v") == "foo");
  CHECK(decode_base64("Zm9vYg==") == "foob");
  CHECK(decode_base64("Zm9vYmE=") == "fooba");
  CHECK(decode_base64("Zm9vYmFy") == "foobar");
  CHECK(decode_base64("Zm9vYg") == "foob");
  CHECK(decode_base64("Zm9v\nYmFy\n") == "foobar");
  CHECK(decode_base64("/+8=") == std::string("\xff\xef"));
}

TEST_CASE("base64: malformed input") {
  CHECK_FALSE(decode_base64("Zm9v*"));
  CHECK_FALSE(decode_base64("Z"));
  CHECK_FALSE(decode_base64("Zg==Zg=="));
  CHECK_FALSE(decode_base64("Zg==="));
  CHECK_FALSE(decode_base64("Zm9=v"));
}

}  // namespace
}  // namespace iogate
