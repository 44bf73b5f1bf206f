#!/usr/bin/env python3
"""Many preflight initContainers on one PVC at once, each its own pod, against a real apiserver
with its audit log on (tests/e2e/cluster_lib.sh, CLUSTER_AUDIT_LOG). Shared by the ctest guard
(tests/e2e/test_preflight_cases.sh) and bench/stampede.sh. Three steps:

  stampede.py tokens OUT NS SA POD...
      a kubeconfig OUT/POD.kubeconfig per pod, to CLUSTER_SERVER, holding a token of SA bound to
      that pod (TokenRequest with boundObjectRef, as the kubelet projects one), so the least-reach
      policy admits its writes and the audit log names the pod (user.extra pod-name). Asked of the
      apiserver as cluster admin (CLUSTER_DIR/pki/admin.*) on one connection: 512 `kubectl create
      token` would take minutes.
  stampede.py run OUT PIDS -- CMD...
      one CMD per OUT/*.kubeconfig, forked first and held at a pipe, then all let go at once by
      closing it; env KUBECONFIG, POD_NAME (the file's stem), POD_NAMESPACE, NODE_NAME and
      CONTAINER_NAME as the kubelet sets them; stdout OUT/POD.json, stderr OUT/POD.log. PIDS
      ("apiserver=123,etcd=45") are processes whose CPU time over the stampede is reported.
      Prints JSON: start and end (epoch s), each pod's exit code and wall s (release to exit),
      the CPU s of each PIDS process and of all preflights together.
  stampede.py audit LOG RUN_JSON NS SA
      the audit log's requests (one per auditID) during the run, per pod of RUN_JSON: its
      requests by verb and resource; "beyond" = all of them but its own pod PATCH (the verdict
      annotation; one successful) and its Event POSTs, and for the pod that probed, also its lock
      renewals (each a GET and a PATCH of the PVC between taking the lock and recording the
      result: 2 per third of a lease, as long as its probe lasts, whatever the waiters do). Prints
      JSON: per pod, the distribution of "beyond", the apiserver's total and 429s.
"""
import collections
import datetime
import http.client
import json
import os
import ssl
import sys
import time
import urllib.parse


def die(msg):
    print(f"stampede.py: {msg}", file=sys.stderr)
    sys.exit(2)


def admin_conn():
    server = urllib.parse.urlsplit(os.environ["CLUSTER_SERVER"])
    pki = os.path.join(os.environ["CLUSTER_DIR"], "pki")
    ctx = ssl.create_default_context(cafile=os.environ["CLUSTER_CA"])
    ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
    return http.client.HTTPSConnection(server.hostname, server.port, context=ctx)


def call(conn, method, path, body=None):
    conn.request(method, path, body=None if body is None else json.dumps(body),
                 headers={"Content-Type": "application/json", "Accept": "application/json"})
    resp = conn.getresponse()
    data = resp.read()
    if resp.status >= 300:
        die(f"{method} {path}: {resp.status} {data[:300]!r}")
    return json.loads(data)


def tokens(out, ns, sa, pods):
    os.makedirs(out, exist_ok=True)
    conn = admin_conn()
    uids = {p["metadata"]["name"]: p["metadata"]["uid"]
            for p in call(conn, "GET", f"/api/v1/namespaces/{ns}/pods")["items"]}
    for pod in pods:
        if pod not in uids:
            die(f"no pod {ns}/{pod}")
        req = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"expirationSeconds": 3600,
                        "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uids[pod]}}}
        token = call(conn, "POST", f"/api/v1/namespaces/{ns}/serviceaccounts/{sa}/token", req)["status"]["token"]
        # As tests/e2e/cluster_lib.sh's token_kubeconfig writes one.
        with open(os.path.join(out, f"{pod}.kubeconfig"), "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {{server: "{os.environ['CLUSTER_SERVER']}", certificate-authority: "{os.environ['CLUSTER_CA']}"}}
users:
- name: {sa}
  user: {{token: "{token}"}}
contexts:
- name: e2e
  context: {{cluster: e2e, user: {sa}, namespace: {ns}}}
current-context: e2e
""")


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def run(out, pids_arg, cmd):
    watched = dict(kv.split("=") for kv in pids_arg.split(",") if kv)
    pods = sorted(f[: -len(".kubeconfig")] for f in os.listdir(out) if f.endswith(".kubeconfig"))
    if not pods:
        die(f"no kubeconfigs in {out}")
    gate_r, gate_w = os.pipe()
    children = {}
    for pod in pods:
        env = dict(os.environ, KUBECONFIG=os.path.join(out, f"{pod}.kubeconfig"), POD_NAME=pod,
                   CONTAINER_NAME="iogate-preflight")
        stdout = os.open(os.path.join(out, f"{pod}.json"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        stderr = os.open(os.path.join(out, f"{pod}.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        pid = os.fork()
        if pid == 0:
            try:
                os.close(gate_w)
                os.dup2(stdout, 1)
                os.dup2(stderr, 2)
                os.read(gate_r, 1)  # EOF once the parent closes its end: all go at once
                os.execvpe(cmd[0], cmd, env)
            finally:
                os._exit(127)
        os.close(stdout)
        os.close(stderr)
        children[pid] = pod
    os.close(gate_r)
    cpu0 = {name: cpu_s(pid) for name, pid in watched.items()}
    start = time.time()
    t0 = time.monotonic()
    os.close(gate_w)
    result = {}
    user = system = 0.0
    while children:
        pid, status, ru = os.wait4(-1, 0)
        wall = time.monotonic() - t0
        pod = children.pop(pid)
        result[pod] = {"exit": os.waitstatus_to_exitcode(status), "wall_s": round(wall, 3)}
        user += ru.ru_utime
        system += ru.ru_stime
    end = start + (time.monotonic() - t0)
    cpu = {name: round(cpu_s(pid) - cpu0[name], 2) for name, pid in watched.items()}
    cpu["preflights"] = round(user + system, 2)
    json.dump({"start": start, "end": end, "pods": result, "cpu_s": cpu}, sys.stdout, indent=1)
    print()


def parse_time(s):
    return datetime.datetime.strptime(s.rstrip("Z")[:26], "%Y-%m-%dT%H:%M:%S.%f").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def audit(log, run_json, ns, sa):
    with open(run_json) as f:
        ran = json.load(f)
    start, end, pods = ran["start"], ran["end"], ran["pods"]
    user = f"system:serviceaccount:{ns}:{sa}"
    events = {}  # auditID -> the last stage's event (ResponseComplete after ResponseStarted)
    with open(log) as f:
        for line in f:
            e = json.loads(line)
            events[e["auditID"]] = e
    during = [e for e in events.values() if start <= parse_time(e["requestReceivedTimestamp"]) <= end]
    per_pod = {pod: [] for pod in pods}
    for e in events.values():  # the pods' tokens serve the run alone
        u = e.get("user", {})
        pod = (u.get("extra", {}).get("authentication.kubernetes.io/pod-name") or [None])[0]
        if u.get("username") == user and pod in per_pod:
            per_pod[pod].append(e)
    out_pods = {}
    for pod, evs in per_pod.items():
        evs.sort(key=lambda e: e["requestReceivedTimestamp"])
        ref = lambda e: e.get("objectRef", {})
        code = lambda e: e.get("responseStatus", {}).get("code")
        by = collections.Counter(f"{e['verb']} {ref(e).get('resource', e.get('requestURI'))}" for e in evs)
        own_patch = [e for e in evs if e["verb"] == "patch" and ref(e).get("resource") == "pods"
                     and ref(e).get("name") == pod and not ref(e).get("subresource") and code(e) == 200]
        event_posts = [e for e in evs if e["verb"] == "create" and ref(e).get("resource") == "events"]
        pvc_patches = [e for e in evs if e["verb"] == "patch" and ref(e).get("resource") == "persistentvolumeclaims"
                       and code(e) == 200]
        # The prober: its first successful PVC PATCH takes the lock, its last records the result;
        # each one between is a renewal, after a GET of its own.
        renewals = max(0, len(pvc_patches) - 2)
        beyond = len(evs) - min(1, len(own_patch)) - len(event_posts) - 2 * renewals
        out_pods[pod] = {"requests": len(evs), "beyond": beyond, "renewals": renewals,
                         "annotated": len(own_patch), "events": sum(code(e) in (200, 201) for e in event_posts),
                         "429": sum(code(e) == 429 for e in evs), "by": dict(sorted(by.items()))}
    beyond = [p["beyond"] for p in out_pods.values()]
    totals = collections.Counter()
    for p in out_pods.values():
        totals.update(p["by"])
    json.dump({
        "window_s": round(end - start, 3),
        "apiserver_requests": len(during),
        "apiserver_429": sum(e.get("responseStatus", {}).get("code") == 429 for e in during),
        "preflight_requests": sum(len(v) for v in per_pod.values()),
        "preflight_429": sum(p["429"] for p in out_pods.values()),
        "beyond_max": max(beyond),
        "beyond_hist": {str(k): v for k, v in sorted(collections.Counter(beyond).items())},
        "by": dict(sorted(totals.items())),
        "pods": out_pods,
    }, sys.stdout, indent=1)
    print()


def main(argv):
    if len(argv) >= 4 and argv[0] == "tokens":
        tokens(argv[1], argv[2], argv[3], argv[4:])
    elif len(argv) >= 5 and argv[0] == "run" and argv[3] == "--":
        run(argv[1], argv[2], argv[4:])
    elif len(argv) == 5 and argv[0] == "audit":
        audit(*argv[1:])
    else:
        die("usage: stampede.py tokens OUT NS SA POD... | run OUT PIDS -- CMD... | audit LOG RUN_JSON NS SA")


if __name__ == "__main__":
    main(sys.argv[1:])
