#!/usr/bin/env python3
"""Writes a synthetic dataset for the dataset-probe tests and benchmark, in one process.

make_dataset.py DIR [--files N] [--dirs D] [--subdirs S] [--min-kib A] [--max-kib B] [--large K]
                    [--large-mib M] [--seed X] [--truth FILE] [--sparse]

N files spread over D leaf directories, in S top-level groups (DIR/gNN/dNNNN/fNNNNNN.bin),
sizes uniform in [A, B] KiB (to the byte), plus K files of M MiB in
DIR/large/. --truth writes a JSON object with the exact count, total bytes and size percentiles
(nearest rank, as iogate computes them) for the test to compare with. --sparse sets each file's
size without writing data (holes): the same tree shape and sizes in no time and no disk space,
for tests of the scan and the walk rather than of the storage.
"""
import argparse
import json
import math
import os
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--dirs", type=int, default=200)
    ap.add_argument("--subdirs", type=int, default=10)
    ap.add_argument("--min-kib", type=int, default=16)
    ap.add_argument("--max-kib", type=int, default=200)
    ap.add_argument("--large", type=int, default=3)
    ap.add_argument("--large-mib", type=int, default=8)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--truth")
    ap.add_argument("--sparse", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    block = os.urandom(a.max_kib * 1024)
    sizes = []
    per_group = max(1, a.dirs // a.subdirs)
    for i in range(a.files):
        d = i % a.dirs
        path = os.path.join(a.dir, "g%02d" % (d // per_group), "d%04d" % d)
        if i < a.dirs:
            os.makedirs(path, exist_ok=True)
        size = rng.randint(a.min_kib * 1024, a.max_kib * 1024)
        fd = os.open(os.path.join(path, "f%06d.bin" % i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        if a.sparse:
            os.ftruncate(fd, size)
        else:
            os.write(fd, block[:size])
        os.close(fd)
        sizes.append(size)
    if a.large:
        os.makedirs(os.path.join(a.dir, "large"), exist_ok=True)
        chunk = os.urandom(1 << 20)
        for k in range(a.large):
            with open(os.path.join(a.dir, "large", "big%02d.bin" % k), "wb") as f:
                if a.sparse:
                    f.truncate(a.large_mib << 20)
                else:
                    for _ in range(a.large_mib):
                        f.write(chunk)
            sizes.append(a.large_mib << 20)
    if a.truth:
        s = sorted(sizes)

        def rank(q):
            r = math.ceil(q / 100 * len(s))
            return s[min(max(r, 1), len(s)) - 1]

        with open(a.truth, "w") as f:
            json.dump({"files": len(s), "bytes": sum(s), "p10": rank(10), "p50": rank(50), "p90": rank(90),
                       "p99": rank(99)}, f)


if __name__ == "__main__":
    main()
