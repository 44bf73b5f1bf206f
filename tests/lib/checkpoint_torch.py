#!/usr/bin/python3
"""A real PyTorch checkpoint save and restore, timed as MLPerf Storage times them.

N rank processes each build a state dict of --rank-bytes (float32 tensors in layer-sized pieces),
meet at a barrier, then torch.save it to their own file in DIR and os.fsync it; a save's time is
the slowest rank's (MLPerf Storage's checkpointing: "the metric for duration is the maximum time
across all processes"). The restore drops each file from the page cache (posix_fadvise
DONTNEED: clean after fsync, so the kernel drops it) and torch.load's it, the ranks again at
once. One JSON line on stdout:
  {"ranks", "rank_bytes", "file_bytes", "saves": [s, ...], "restores": [s, ...],
   "save_seconds", "restore_seconds"}   (the medians of --rounds rounds)
The files are removed at the end, also when a rank fails. Debian's python3-torch (1.13, CPU).
"""
import argparse
import json
import multiprocessing as mp
import os
import statistics
import sys
import time

import torch

LAYER_BYTES = 16 << 20  # a state dict of many tensors, as a model's is; 16 MiB each


def state_dict(rank_bytes, seed):
    g = torch.Generator().manual_seed(seed)
    out, left, i = {}, rank_bytes, 0
    while left > 0:
        n = min(LAYER_BYTES, left) // 4
        if n == 0:
            break
        out[f"layers.{i}.weight"] = torch.rand(n, generator=g)
        left -= n * 4
        i += 1
    return out


def rank_main(rank, args, barrier, results):
    torch.set_num_threads(1)
    sd = state_dict(args.rank_bytes, 1000 + rank)
    path = os.path.join(args.dir, f".ckpt-torch-rank{rank}.pt")
    saves, restores = [], []
    try:
        for _ in range(args.rounds):
            barrier.wait()
            t0 = time.monotonic()
            with open(path, "wb") as f:
                torch.save(sd, f)
                f.flush()
                os.fsync(f.fileno())
            saves.append(time.monotonic() - t0)
            size = os.path.getsize(path)
            if args.restore:
                fd = os.open(path, os.O_RDONLY)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                os.close(fd)
                barrier.wait()
                t0 = time.monotonic()
                loaded = torch.load(path)
                restores.append(time.monotonic() - t0)
                del loaded
            os.unlink(path)
        results.put((rank, saves, restores, size, None))
    except BaseException as e:  # a failed rank must not leave the others at the barrier
        barrier.abort()
        results.put((rank, saves, restores, 0, repr(e)))
    finally:
        if os.path.exists(path):
            os.unlink(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--rank-bytes", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--restore", action="store_true")
    args = ap.parse_args()
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(args.ranks)
    results = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, args, barrier, results)) for r in range(args.ranks)]
    for p in procs:
        p.start()
    got = [results.get() for _ in procs]
    for p in procs:
        p.join()
    errors = [f"rank {r}: {e}" for r, _, _, _, e in got if e]
    if errors:
        print("checkpoint_torch: " + "; ".join(errors), file=sys.stderr)
        return 1
    # Per round, the slowest rank.
    saves = [max(g[1][i] for g in got) for i in range(args.rounds)]
    restores = [max(g[2][i] for g in got) for i in range(args.rounds)] if args.restore else []
    print(json.dumps({
        "ranks": args.ranks,
        "rank_bytes": args.rank_bytes,
        "file_bytes": max(g[3] for g in got),
        "saves": [round(s, 4) for s in saves],
        "restores": [round(s, 4) for s in restores],
        "save_seconds": round(statistics.median(saves), 4),
        "restore_seconds": round(statistics.median(restores), 4) if restores else None,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
