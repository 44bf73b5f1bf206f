#!/usr/bin/env python3
"""Writes tar shards as WebDataset lays them out: DIR/shard-NNNNNN.tar, each holding RECORDS members
of RECORD_BYTES of incompressible bytes (NNNNNNNNN.bin), written with Python's tarfile.

make_shards.py DIR --shards N --records R --record-bytes B [--seed X]
"""
import argparse
import io
import os
import random
import tarfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--shards", type=int, required=True)
    ap.add_argument("--records", type=int, required=True)
    ap.add_argument("--record-bytes", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    rnd = random.Random(a.seed)
    pool = rnd.randbytes(a.record_bytes * 4)
    k = 0
    for s in range(a.shards):
        with tarfile.open(os.path.join(a.dir, f"shard-{s:06d}.tar"), "w", format=tarfile.USTAR_FORMAT) as tar:
            for _ in range(a.records):
                off = rnd.randrange(0, len(pool) - a.record_bytes)
                info = tarfile.TarInfo(f"{k:09d}.bin")
                info.size = a.record_bytes
                tar.addfile(info, io.BytesIO(pool[off:off + a.record_bytes]))
                k += 1


if __name__ == "__main__":
    main()
