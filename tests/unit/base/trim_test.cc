#include "base/trim.h"

#include <doctest/doctest.h>

using namespace iogate;

TEST_CASE("trim_space takes ASCII whitespace off both ends and nothing else") {
  CHECK(trim_space("token\n") == "token");
  CHECK(trim_space(" \t\r\n\v\f 42 kB \n") == "42 kB");
  CHECK(trim_space("a b") == "a b");
  CHECK(trim_space(" \n\t ") == "");
  CHECK(trim_space("") == "");
  CHECK(trim_space("\xc2\xa0x") == "\xc2\xa0x");  // a non-breaking space is not ASCII's
}
