#!/usr/bin/env python3
"""Clients that push on the webhook's bounds, over real TLS; each prints one JSON object.

webhook_client.py ADDR CA endless-header [--max-bytes N]
    One request whose header line never ends, sent until the server answers or closes (or N bytes).
webhook_client.py ADDR CA many-headers [--count N]
    A request with N short header lines.
webhook_client.py ADDR CA endless-chunk [--max-bytes N]
    A chunked POST whose chunk-size line never ends.
webhook_client.py ADDR CA big-body --length N [--send N]
    A POST /mutate declaring Content-Length N, then sending up to --send bytes of it.
webhook_client.py ADDR CA reviews --count N --bytes B [--kind KIND] [--mutate-only]
    N AdmissionReviews of a GPU pod padded to B bytes, all at once, one connection and thread each,
    half to /mutate, half to /validate (all to /mutate with --mutate-only); each answer is checked
    (200, the uid echoed, allowed, the node-affinity patch for /mutate); "statuses" counts the
    answers' HTTP statuses, "messages" the distinct refusals (status.message, or the text of a
    non-200 answer), "patch_bytes" the largest patch. A 503 "busy" (the webhook shedding load, with
    Retry-After) is sent again for up to --busy-retry-s seconds (60), as a client honouring
    Retry-After would; "busy_retries" counts those.

The status of an answer is taken as soon as it arrives, while the client is still sending: a
server that answers early and then stops reading must not be mistaken for one that never answered.
"""
import argparse
import base64
import json
import select
import socket
import ssl
import sys
import threading
import time


class Conn:
    """One TLS connection, and what the server has written on it so far."""

    def __init__(self, addr, ca):
        host, port = addr.rsplit(":", 1)
        ctx = ssl.create_default_context(cafile=ca)
        raw = socket.create_connection((host, int(port)), timeout=60)
        self.sock = ctx.wrap_socket(raw, server_hostname=host)
        self.data = b""
        self.ended = False

    def sendall(self, data):
        self.sock.settimeout(60)
        self.sock.sendall(data)

    def answered(self):
        """Whether the server has written application data or ended the connection; never waits.
        (A readable socket is not enough: TLS 1.3 servers send session tickets after the handshake.)"""
        if self.data or self.ended:
            return True
        self.sock.setblocking(False)
        try:
            chunk = self.sock.recv(65536)
            self.data += chunk
            self.ended = not chunk
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            pass
        except (ConnectionError, ssl.SSLError, OSError):
            self.ended = True
        return bool(self.data) or self.ended

    def read_answer(self, timeout=10.0):
        """The status line and the body of one answer (None when the connection ends without one)."""
        end = time.monotonic() + timeout
        self.sock.settimeout(1.0)
        while time.monotonic() < end:
            if b"\r\n\r\n" in self.data:
                head, _, rest = self.data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if len(rest) >= length:
                    return head.split(b"\r\n")[0].decode(), rest[:length]
            if self.ended:
                break
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except (ConnectionError, ssl.SSLError, OSError):
                break
            if not chunk:
                break
            self.data += chunk
        if self.data:
            return self.data.split(b"\r\n")[0].decode(errors="replace"), b""
        return None, b""


def repeated(piece, total):
    """piece, as many times as it takes to reach total bytes."""
    sent = 0
    while sent < total:
        yield piece
        sent += len(piece)


def send_until_answered(sock, head, pieces, tail=b""):
    """Sends head, then each of pieces, then tail; stops as soon as the server writes or closes.
    The answer's status line or None, and the bytes sent."""
    sent = 0
    try:
        sock.sendall(head)
        sent += len(head)
        for piece in pieces:
            if sock.answered():
                break
            sock.sendall(piece)
            sent += len(piece)
        if not sock.answered():
            sock.sendall(tail)
            sent += len(tail)
    except (ConnectionError, ssl.SSLError, OSError):
        pass
    status, body = sock.read_answer()
    return {"status": status, "body": body.decode(errors="replace")[:200], "sent": sent}


def endless_header(args):
    sock = Conn(args.addr, args.ca)
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: "
    return send_until_answered(sock, head, repeated(b"a" * 16384, args.max_bytes - len(head)), b"\r\n\r\n")


def many_headers(args):
    sock = Conn(args.addr, args.ca)
    lines = b"".join(b"X-H-%d: v\r\n" % i for i in range(args.count))
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
    # In pieces of 1,000 lines, watching for an early answer between them.
    pieces = (lines[i:i + 16000] for i in range(0, len(lines), 16000))
    return send_until_answered(sock, head, pieces, b"\r\n")


def endless_chunk(args):
    sock = Conn(args.addr, args.ca)
    head = (b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n1;ext=")
    return send_until_answered(sock, head, repeated(b"a" * 16384, args.max_bytes - len(head)), b"\r\n{\r\n0\r\n\r\n")


def big_body(args):
    sock = Conn(args.addr, args.ca)
    head = (b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % args.length)
    return send_until_answered(sock, head, repeated(b" " * 16384, min(args.send, args.length) - len(head)))


def review_body(uid, size, kind):
    """An AdmissionReview of a GPU pod, padded to `size` bytes: dense (many short environment
    variables, the most JSON values a byte of a real pod carries), sparse (one long annotation),
    objects (an array of empty objects: no pod has one, but it takes the most memory parsed),
    affinity (one required nodeSelectorTerm of as many short matchExpressions as fit: what /mutate
    extends) or affinity-values (one matchExpression whose values are as many node names as fit)."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"generateName": "train-", "namespace": "ml", "annotations": {}},
           "spec": {"containers": [{"name": "train", "image": "pytorch", "env": [],
                                    "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}}
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
              "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
                          "resource": {"group": "", "version": "v1", "resource": "pods"},
                          "namespace": "ml", "operation": "CREATE", "object": pod, "oldObject": None}}
    def text():
        return json.dumps(review, separators=(",", ":"))
    room = size - len(text())
    if kind == "sparse":
        pod["metadata"]["annotations"]["pad"] = "x" * (room - len('"pad":""'))
    elif kind == "objects":
        pod["spec"]["pad"] = [{}] * ((room - len(',"pad":[]')) // 3)
    elif kind in ("affinity", "affinity-values"):
        shell = ',"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":' \
                '{"nodeSelectorTerms":[{"matchExpressions":[]}]}}}'
        room -= len(shell) + 100
        if kind == "affinity":
            entry = len('{"key":"e000000","operator":"Exists"},')
            exprs = [{"key": "e%06d" % i, "operator": "Exists"} for i in range(room // entry)]
        else:
            exprs = [{"key": "kubernetes.io/hostname", "operator": "NotIn",
                      "values": ["node-%06d" % i for i in range(room // len('"node-000000",'))]}]
        pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": exprs}]}}}
        pod["metadata"]["annotations"]["pad"] = "x" * max(0, size - len(text()) - len(',"pad":""'))
    else:
        env = pod["spec"]["containers"][0]["env"]
        i = 0
        entry = len('{"name":"E000000","value":"1"},')
        while room >= entry + 40:
            env.append({"name": "E%06d" % i, "value": "1"})
            room -= entry
            i += 1
        pod["metadata"]["annotations"]["pad"] = "x" * max(0, size - len(text()) - len(',"pad":""'))
    body = text().encode()
    assert len(body) <= size, (len(body), size)
    return body


def reviews(args):
    results = [None] * args.count
    statuses = ["none"] * args.count
    messages = [None] * args.count
    patch_bytes = [0] * args.count
    busy_retries = [0] * args.count
    # One body, each request's uid put in place of the placeholder (the same length) as it is sent:
    # 64 copies of 8 MiB would be half a GiB in this client.
    template = review_body("uid-%06d" % 0, args.bytes, args.kind)
    at = template.index(b'"uid-000000"')
    prefix, suffix = memoryview(template)[:at], memoryview(template)[at + len(b'"uid-000000"'):]
    start = threading.Barrier(args.count, timeout=120)

    def send(sock, path, i):
        req = (b"POST %s?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Content-Length: %d\r\n\r\n" % (path.encode(), len(template)))
        sock.sendall(req + prefix[:65536])
        sock.sendall(prefix[65536:])
        sock.sendall(b'"uid-%06d"' % i)
        sock.sendall(suffix)
        return sock.read_answer(timeout=120)

    def one(i):
        path = "/mutate" if i % 2 == 0 or args.mutate_only else "/validate"
        try:
            sock = Conn(args.addr, args.ca)
        except Exception as e:  # noqa: BLE001 - reported, not raised
            start.abort()
            results[i] = "%s: connect: %s" % (path, e)
            return
        try:
            start.wait()
            status, body = send(sock, path, i)
            # A 503 "busy" is the webhook shedding load by design (it waited for room in its byte
            # budget, then answered with Retry-After); how often depends on how fast this machine
            # is just now. Like a client that honours Retry-After, send again, within a bound.
            give_up = time.monotonic() + args.busy_retry_s
            while status and status.split(" ")[1] == "503" and b"busy" in body and time.monotonic() < give_up:
                busy_retries[i] += 1
                time.sleep(0.2)
                sock = Conn(args.addr, args.ca)
                status, body = send(sock, path, i)
        except Exception as e:  # noqa: BLE001 - reported, not raised
            results[i] = "%s: %s" % (path, e)
            return
        statuses[i] = status.split(" ")[1] if status else "none"
        if statuses[i] != "200":
            messages[i] = body.decode(errors="replace").strip()[:200]
            results[i] = "%s: %s %s" % (path, status, body[:200])
            return
        try:
            r = json.loads(body)["response"]
        except ValueError as e:
            results[i] = "%s: not JSON: %s" % (path, e)
            return
        messages[i] = r.get("status", {}).get("message")
        patch_bytes[i] = len(base64.b64decode(r.get("patch", "")))
        if r.get("uid") != "uid-%06d" % i or r.get("allowed") is not True:
            results[i] = "%s: %s" % (path, json.dumps(r)[:200])
        elif path == "/mutate" and "randread-iops" not in base64.b64decode(r.get("patch", "")).decode():
            results[i] = "%s: no node-affinity patch: %s" % (path, json.dumps(r)[:200])
        else:
            results[i] = "ok"

    threads = [threading.Thread(target=one, args=(i,)) for i in range(args.count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [r for r in results if r != "ok"]
    return {"count": args.count, "bytes": len(template), "ok": args.count - len(failed), "failed": failed[:5],
            "statuses": {s: statuses.count(s) for s in sorted(set(statuses))},
            "messages": sorted(set(m for m in messages if m)), "patch_bytes": max(patch_bytes),
            "busy_retries": sum(busy_retries)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("addr")
    p.add_argument("ca")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("endless-header")
    s.add_argument("--max-bytes", type=int, default=256 << 20)
    s = sub.add_parser("many-headers")
    s.add_argument("--count", type=int, default=100000)
    s = sub.add_parser("endless-chunk")
    s.add_argument("--max-bytes", type=int, default=256 << 20)
    s = sub.add_parser("big-body")
    s.add_argument("--length", type=int, required=True)
    s.add_argument("--send", type=int, default=64 << 20)
    s = sub.add_parser("reviews")
    s.add_argument("--count", type=int, required=True)
    s.add_argument("--bytes", type=int, required=True)
    s.add_argument("--kind", choices=["dense", "sparse", "objects", "affinity", "affinity-values"], default="dense")
    s.add_argument("--mutate-only", action="store_true")
    s.add_argument("--busy-retry-s", type=float, default=60.0)
    args = p.parse_args()
    fn = {"endless-header": endless_header, "many-headers": many_headers, "endless-chunk": endless_chunk,
          "big-body": big_body, "reviews": reviews}[args.cmd]
    print(json.dumps(fn(args)))


if __name__ == "__main__":
    sys.exit(main())
