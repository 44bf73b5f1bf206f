// One HTTP(S) listener's life: parse --listen, bind, serve on a thread of its own, stop and join.
// The node agent's endpoints (node/node_http.h) and the webhook's (webhook/webhook_server.h) are
// each a configured Pooled server (http/pooled_server.h) handed to HttpListener::start; their
// routes, methods and limits are theirs, the binding rules are these:
//   - SO_REUSEADDR without SO_REUSEPORT: a restart binds over TIME_WAIT sockets, but a second
//     server cannot bind the same port and take half the connections;
//   - an address in use is an error at start, naming --listen, not later;
//   - the listen backlog is widened after binding (http/pooled_server.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "base/result.h"

namespace httplib {
class Server;
class SSLServer;
}  // namespace httplib

namespace iogate {

template <class Base>
class Pooled;  // http/pooled_server.h

// What a route answers; each server turns it into its response.
struct HttpAnswer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// ":9560" → {"0.0.0.0", 9560}; "127.0.0.1:0" (any free port); "[::1]:9560". Errors name `flag`.
Result<std::pair<std::string, int>> parse_listen_address(std::string_view text, std::string_view flag = "--listen");

class HttpListener {
 public:
  // Binds `listen` with `server` (its routes set, not yet bound) and serves it on a thread of its
  // own; returns once it accepts. Errors name `flag`, the flag `listen` came from.
  static Result<std::unique_ptr<HttpListener>> start(std::string_view listen,
                                                     std::unique_ptr<Pooled<httplib::Server>> server,
                                                     std::string_view flag = "--listen");
  static Result<std::unique_ptr<HttpListener>> start(std::string_view listen,
                                                     std::unique_ptr<Pooled<httplib::SSLServer>> server,
                                                     std::string_view flag = "--listen");
  ~HttpListener();  // stops serving and joins
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  std::string address() const { return address_; }  // "127.0.0.1:8443", the port as bound
  int port() const { return port_; }

 private:
  HttpListener() = default;
  template <class Base>
  static Result<std::unique_ptr<HttpListener>> bind_and_serve(std::string_view listen,
                                                              std::unique_ptr<Pooled<Base>> server,
                                                              std::string_view flag);

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string address_;
  int port_ = 0;
};

}  // namespace iogate
