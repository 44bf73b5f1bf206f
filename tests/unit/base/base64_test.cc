#include <doctest/doctest.h>

#include "base/base64.h"

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

TEST_CASE("base64: encoding, RFC 4648 test vectors and a round trip of every byte") {
  CHECK(encode_base64("") == "");
  CHECK(encode_base64("f") == "Zg==");
  CHECK(encode_base64("fo") == "Zm8=");
  CHECK(encode_base64("foo") == "Zm9v");
  CHECK(encode_base64("foob") == "Zm9vYg==");
  CHECK(encode_base64("fooba") == "Zm9vYmE=");
  CHECK(encode_base64("foobar") == "Zm9vYmFy");
  CHECK(encode_base64(std::string("\xff\xef")) == "/+8=");
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= all.size(); n += 37)
    CHECK(decode_base64(encode_base64(all.substr(0, n))) == all.substr(0, n));
}

}  // namespace
}  // namespace iogate
