// Raw sockets against a server listening on 127.0.0.1, for the listeners' tests (node_http,
// webhook_server): a connection that sends nothing, whether the server still holds one open, and
// the server's own ends of what it accepted (this process's sockets on the port).
#pragma once

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "base/unique_fd.h"

namespace iogate {

// A plain TCP connection to 127.0.0.1:port that sends nothing: no ClientHello, no request.
inline UniqueFd idle_connection(int port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  REQUIRE(connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// Neither data nor EOF nor a reset waits on `fd`: the server still holds the connection open.
inline bool still_open(const UniqueFd& fd) {
  pollfd p{fd.get(), POLLIN, 0};
  return poll(&p, 1, 0) == 0;
}

// The server's own ends of the connections accepted on `port` (this process's sockets bound to the
// port that are not the listener), with whether TCP_NODELAY is set on each.
inline std::vector<bool> accepted_nodelay(int port) {
  std::vector<bool> found;
  DIR* dir = opendir("/proc/self/fd");
  REQUIRE(dir);
  while (dirent* e = readdir(dir)) {
    int fd = atoi(e->d_name);
    sockaddr_in local{};
    socklen_t len = sizeof local;
    int listening = 0;
    socklen_t ilen = sizeof listening;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 || local.sin_family != AF_INET) continue;
    if (ntohs(local.sin_port) != port) continue;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ilen) != 0 || listening) continue;
    int nodelay = 0;
    ilen = sizeof nodelay;
    REQUIRE(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &ilen) == 0);
    found.push_back(nodelay != 0);
  }
  closedir(dir);
  return found;
}

}  // namespace iogate
