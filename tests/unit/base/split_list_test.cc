#include "base/split_list.h"

#include <doctest/doctest.h>

#include <string_view>
#include <vector>

using namespace iogate;
using Items = std::vector<std::string_view>;

TEST_CASE("a list splits at each separator and keeps empty items for the caller to refuse") {
  CHECK(split_list("1,2,4,8") == Items{"1", "2", "4", "8"});
  CHECK(split_list("cpu=1") == Items{"cpu=1"});
  CHECK(split_list("") == Items{""});
  CHECK(split_list("a,,b,") == Items{"a", "", "b", ""});
  CHECK(split_list("/a:/b", ':') == Items{"/a", "/b"});
}
