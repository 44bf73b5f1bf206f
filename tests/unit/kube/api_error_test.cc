#include <doctest/doctest.h>

#include "kube/api_error.h"

namespace iogate {
namespace {

TEST_CASE("api error: a kind: Status body gives reason and message") {
  ApiError e = api_error_from_response(
      "PATCH /api/v1/nodes/n1", 409,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
      R"("message":"Operation cannot be fulfilled on nodes \"n1\": the object has been modified",)"
      R"("reason":"Conflict","code":409})");
  CHECK(e.conflict());
  CHECK(e.reason == "Conflict");
  CHECK(e.summary() ==
        "PATCH /api/v1/nodes/n1: 409 Conflict: Operation cannot be fulfilled on nodes \"n1\": the object has been "
        "modified");
}

TEST_CASE("api error: a plain-text 429 from priority-and-fairness") {
  ApiError e = api_error_from_response("GET /api/v1/pods", 429, "Too many requests, please try again later.\n");
  CHECK(e.reason == "TooManyRequests");
  CHECK(e.summary() == "GET /api/v1/pods: 429 TooManyRequests: Too many requests, please try again later.");
}

TEST_CASE("api error: an empty or huge body stays one line") {
  CHECK(api_error_from_response("GET /x", 503, "").summary() == "GET /x: 503 ServiceUnavailable");
  ApiError big = api_error_from_response("GET /x", 502, "<html>\n" + std::string(5000, 'a'));
  CHECK(big.summary() == "GET /x: 502 ServerError: <html>");
  ApiError long_line = api_error_from_response("GET /x", 500, std::string(5000, 'b'));
  CHECK(long_line.message.size() == 200);
}

TEST_CASE("api result converts to Result and Status") {
  ApiResult<int> good = 5;
  Result<int> r = good;
  CHECK(r.ok());
  CHECK(*r == 5);
  ApiStatus bad = ApiError{"GET /p", 404, "NotFound", "pods \"p\" not found"};
  CHECK(bad.error().not_found());
  Status s = bad;
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message == "GET /p: 404 NotFound: pods \"p\" not found");
}

}  // namespace
}  // namespace iogate
