#include "node/node_http.h"

namespace iogate {

Result<std::unique_ptr<NodeHttpServer>> NodeHttpServer::start(const std::string& listen, NodeHttpHandlers handlers,
                                                              NodeHttpOptions options) {
  auto server = GetServer::start(listen, "iogate node",
                                 {{"/metrics", std::move(handlers.metrics)},
                                  {"/healthz", std::move(handlers.healthz)},
                                  {"/readyz", std::move(handlers.readyz)},
                                  {"/report", std::move(handlers.report)}},
                                 options);
  if (!server.ok()) return server.error();
  std::unique_ptr<NodeHttpServer> s(new NodeHttpServer());
  s->server_ = std::move(*server);
  return s;
}

}  // namespace iogate
