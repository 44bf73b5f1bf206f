#!/usr/bin/env python3
"""Concurrent writers on a Node of the e2e cluster, for tests/e2e/test_node_agent.sh.

  node_race.py writer --server URL --ca CA --cert CRT --key KEY --node N --stop FILE --out FILE
                      [--pause SECONDS]
      A well-behaved second controller, as cluster admin, in a tight loop (--pause between rounds,
      default 0) until FILE --stop exists: each round sets the label writer.example.com/seq=<i> (merge patch of its key only),
      sets the value of its taint example.com/writer (PreferNoSchedule) to v<i> by
      read-modify-write with the resourceVersion (re-read on 409), and sets its condition
      ExampleWriter (strategic merge patch of nodes/status). Writes a JSON summary to --out: the
      rounds, the last value of each, and the 409s it met.

  node_race.py proxy --server URL --ca CA --cert CRT --key KEY --tls-cert C --tls-key K
                     --node N --port-file FILE --log FILE
      An HTTPS pass-through in front of the real kube-apiserver that changes nothing it forwards:
      every request goes upstream as sent (the caller's token included) and every answer comes
      back as the apiserver gave it. It only orders one write: before forwarding the first PATCH
      of /api/v1/nodes/N that carries metadata.resourceVersion (a read-modify-write of the
      taints), it adds the taint example.com/racer=interleaved:PreferNoSchedule to the Node as
      admin (a JSON patch), so that write lands between the caller's GET and its PATCH and the
      apiserver itself answers 409. Logs "METHOD PATH STATUS" per request and "racer ..." lines.
"""
import argparse
import http.client
import http.server
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse


def client_context(args):
    ctx = ssl.create_default_context(cafile=args.ca)
    ctx.load_cert_chain(args.cert, args.key)
    return ctx


class Api:
    """One keep-alive connection to the apiserver as admin."""

    def __init__(self, args):
        u = urllib.parse.urlsplit(args.server)
        self.host, self.port, self.ctx = u.hostname, u.port, client_context(args)
        self.conn = None

    def call(self, method, path, body=None, content_type="application/json"):
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
            try:
                headers = {"Accept": "application/json"}
                data = None
                if body is not None:
                    data = json.dumps(body).encode()
                    headers["Content-Type"] = content_type
                self.conn.request(method, path, body=data, headers=headers)
                r = self.conn.getresponse()
                text = r.read()
                return r.status, (json.loads(text) if text else None)
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")


def writer(args):
    api = Api(args)
    node = f"/api/v1/nodes/{args.node}"
    rounds = conflicts = 0
    last = {}

    def must(status, body, what):
        if status // 100 != 2:
            sys.exit(f"writer: {what}: HTTP {status}: {json.dumps(body)[:300]}")

    while not os.path.exists(args.stop):
        rounds += 1
        seq = str(rounds)
        must(*api.call("PATCH", node, {"metadata": {"labels": {"writer.example.com/seq": seq}}},
                       "application/merge-patch+json"), "label")
        last["label"] = seq
        while True:
            status, current = api.call("GET", node)
            must(status, current, "GET node")
            taints = [t for t in current.get("spec", {}).get("taints") or [] if t.get("key") != "example.com/writer"]
            taints.append({"key": "example.com/writer", "value": "v" + seq, "effect": "PreferNoSchedule"})
            patch = {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"]}, "spec": {"taints": taints}}
            status, body = api.call("PATCH", node, patch, "application/merge-patch+json")
            if status == 409:
                conflicts += 1
                continue
            must(status, body, "taint")
            break
        last["taint"] = "v" + seq
        must(*api.call("PATCH", node + "/status", {"status": {"conditions": [{
            "type": "ExampleWriter", "status": "True", "reason": "WriterRound", "message": "round " + seq}]}},
            "application/strategic-merge-patch+json"), "condition")
        last["condition_message"] = "round " + seq
        time.sleep(args.pause)
    with open(args.out + ".tmp", "w") as f:
        json.dump({"rounds": rounds, "conflicts": conflicts, "last": last}, f)
    os.rename(args.out + ".tmp", args.out)


def proxy(args):
    u = urllib.parse.urlsplit(args.server)
    upstream_ctx = ssl.create_default_context(cafile=args.ca)
    racer = Api(args)
    lock = threading.Lock()
    state = {"raced": False}
    log = open(args.log, "a", buffering=1)
    node = f"/api/v1/nodes/{args.node}"

    def race():
        status, body = racer.call("PATCH", node, [{"op": "add", "path": "/spec/taints/-", "value": {
            "key": "example.com/racer", "value": "interleaved", "effect": "PreferNoSchedule"}}],
            "application/json-patch+json")
        log.write(f"racer PATCH {node} {status} resourceVersion {body.get('metadata', {}).get('resourceVersion')}\n")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            if self.command == "PATCH" and self.path == node and body:
                try:
                    rv = json.loads(body).get("metadata", {}).get("resourceVersion")
                except ValueError:
                    rv = None
                with lock:
                    go = rv is not None and not state["raced"]
                    state["raced"] = state["raced"] or go
                if go:
                    log.write(f"racer: the caller's PATCH carries resourceVersion {rv}; writing first\n")
                    race()
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() in ("authorization", "content-type", "accept", "user-agent")}
            conn = http.client.HTTPSConnection(u.hostname, u.port, context=upstream_ctx, timeout=60)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                r = conn.getresponse()
                data = r.read()
            finally:
                conn.close()
            log.write(f"{self.command} {self.path} {r.status}\n")
            self.send_response(r.status)
            self.send_header("Content-Type", r.getheader("Content-Type") or "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PATCH = do_POST = do_PUT = do_DELETE = forward

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(args.tls_cert, args.tls_key)
    server.socket = server_ctx.wrap_socket(server.socket, server_side=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["writer", "proxy"])
    for flag in ("--server", "--ca", "--cert", "--key", "--node"):
        p.add_argument(flag, required=True)
    p.add_argument("--stop")
    p.add_argument("--out")
    p.add_argument("--pause", type=float, default=0.0)
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    p.add_argument("--port-file")
    p.add_argument("--log")
    args = p.parse_args()
    writer(args) if args.mode == "writer" else proxy(args)


if __name__ == "__main__":
    main()
