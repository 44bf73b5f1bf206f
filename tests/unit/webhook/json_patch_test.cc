#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "webhook/json_patch.h"

namespace iogate {
namespace {

using nlohmann::json;

TEST_CASE("json patch: pointers escape '~' and '/' in each token") {
  CHECK(pointer({"metadata", "annotations", "iogate.io/node-requirements"}) ==
        "/metadata/annotations/iogate.io~1node-requirements");
  CHECK(pointer_token("a~b/c") == "a~0b~1c");
  CHECK(patch_copy("/a/0", "/a/1") == json{{"op", "copy"}, {"from", "/a/0"}, {"path", "/a/1"}});
}

TEST_CASE("json patch: json_text_bytes is the length of the compact dump, counted without writing it") {
  std::string invalid_utf8 = "a\xff\xfe z";
  for (const json& v :
       {json(nullptr), json(true), json(false), json(0), json(-1234567890123LL), json(18446744073709551615ULL),
        json(1.5), json(-2.5e-300), json("plain"),
        json("quote \" backslash \\ newline \n tab \t control \x01 del \x7f"), json("é ∀ 😀"), json(invalid_utf8),
        json::array(), json::object(), json::parse(R"({"a":[1,{"b":null,"c":[true,"x"]}],"d":{},"e":[[]]})")}) {
    CAPTURE(v.dump(-1, ' ', false, json::error_handler_t::replace));
    CHECK(json_text_bytes(v) == v.dump(-1, ' ', false, json::error_handler_t::replace).size());
  }
}

}  // namespace
}  // namespace iogate
