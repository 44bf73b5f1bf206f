#!/usr/bin/python3
"""A real PyTorch DataLoader feeding emulated accelerators: the measured accelerator utilisation (AU)
that iogate's predicted AU is held to.

/usr/bin/python3 tests/lib/dataloader_au.py DIR --accelerators N --samples-per-s S
        [--workers W] [--batch B] [--runtime SECONDS] [--min-steps K] [--max-runtime SECONDS] [--seed X]
        [--shards]

MLPerf Storage's method (DLIO's PyTorch reader and its emulated accelerators), on one client:
  - the Dataset is map-style over the regular files under DIR, listed by name as torchvision's
    ImageFolder and DLIO list them (os.scandir, the type from the directory entry, no stat), so
    each file's first open pays its lookup, as iogate's dataset probe's does; --stat-listing stats
    each file while listing (its metadata then cached for the first epoch, for as long as the file
    system keeps it: iogate's warm-metadata epoch); __getitem__ opens one file, reads it
    whole, drops its pages (posix_fadvise DONTNEED, so a later epoch reads the device again),
    closes it and returns a small fixed tensor (its size), not the bytes: the workers' IPC is not
    the cost, as in DLIO, whose reader returns a preallocated array.
  - torch.utils.data.DataLoader with W worker processes, shuffled (a fresh permutation each
    epoch, as many epochs as the run takes), the default prefetch factor (2 batches per worker).
  - N accelerators, data-parallel: each step takes one global batch of N x B samples (B per
    accelerator) and then sleeps one step's compute time, B / S seconds (all N compute at once).
    One global batch, not N loader batches of B: the loader prefetches 2 batches per worker, and
    with batches of B, 2 x W < N of them would leave the storage idle through each step's compute
    (measured: 8 accelerators, 2 workers, on tmpfs, AU 0.61 at 1,220 samples/s, where the same
    loader reads 3,250 samples/s); a worker now assembles a whole global batch, and W of them are
    in flight, as W loaders would be, one per rank, in DLIO.
  - AU = compute time / wall time over every step but the first (DLIO excludes the first: worker
    start-up and the empty prefetch queue).
With --shards the samples are records streamed out of tar shards, as WebDataset reads them: an
IterableDataset over the *.tar files under DIR, each worker taking every W-th shard of a fresh
shuffle of them each epoch (WebDataset's split_by_worker and shardshuffle), opening one at a time
and reading it front to back with Python's tarfile in stream mode ("r|"), one sample per member;
each shard is dropped from the page cache before and after it is read. `bytes` then counts the
records' bytes.
The run ends after the step that passes RUNTIME seconds (measured from the end of the first step)
once at least K steps are measured, or after MAX_RUNTIME seconds whatever the count.
Prints one JSON line: accelerators, workers, batch, steps (measured), samples (measured), bytes,
wall_s, compute_s, au, samples_per_s (measured steps' samples over their wall time), and
samples_per_s_needed (N x S), and where the wall time went: wait_s (in the loader, waiting for a
batch) and slept_s (the compute sleeps as they lasted: more than compute_s by the wake-up lag).

Differences from DLIO kept on purpose: one loader with W workers serves all N accelerators (DLIO
runs one loader per accelerator rank, so N x W readers), because the concurrency then equals the
`--workers W` that iogate's dataset probe is given; and no decode, no transfer to a device.
"""
import argparse
import json
import os
import sys
import time

try:
    import torch
    from torch.utils.data import DataLoader, Dataset, IterableDataset, RandomSampler, get_worker_info
except ImportError:
    sys.exit("dataloader_au.py: PyTorch is missing: run it with /usr/bin/python3 (Debian's python3-torch; "
             "bash scripts/install-deps.sh)")

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | (os.O_NOATIME if os.geteuid() == 0 else 0)


def list_files(root, stat):
    out, stack = [], [root]
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.is_file(follow_symlinks=False) and not e.name.startswith(".iogate-probe-"):
                    if stat:
                        e.stat(follow_symlinks=False)
                    out.append(e.path)
    out.sort()
    return out


class FileDataset(Dataset):
    """One sample per file: open, read whole, drop from the page cache, close."""

    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        fd = os.open(self.paths[i], _FLAGS)
        try:
            # Dropped before too: a page another run (or the dataset's writer) left cached is not read.
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            n = 0
            with os.fdopen(fd, "rb", buffering=0, closefd=False) as f:
                n = len(f.read())
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        return torch.tensor(n, dtype=torch.int64)


class ShardStream(IterableDataset):
    """Records streamed out of tar shards, every W-th shard of a fresh shuffle to each worker."""

    def __init__(self, shards, seed):
        self.shards = shards
        self.seed = seed

    def __iter__(self):
        import random
        import tarfile
        info = get_worker_info()
        wid, nw = (info.id, info.num_workers) if info else (0, 1)
        epoch = 0
        while True:
            order = list(self.shards)
            random.Random(self.seed * 1000 + epoch).shuffle(order)
            for path in order[wid::nw]:
                fd = os.open(path, _FLAGS)
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    with os.fdopen(fd, "rb", closefd=False) as f, tarfile.open(fileobj=f, mode="r|") as tar:
                        for member in tar:
                            if member.isfile():
                                yield torch.tensor(len(tar.extractfile(member).read()), dtype=torch.int64)
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)
            epoch += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--accelerators", type=int, required=True)
    ap.add_argument("--samples-per-s", type=float, required=True, help="per accelerator at full utilisation")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--runtime", type=float, default=15)
    ap.add_argument("--min-steps", type=int, default=4, help="measured steps (the first is not one)")
    ap.add_argument("--max-runtime", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--stat-listing", action="store_true", help="stat each file while listing (metadata warm)")
    ap.add_argument("--shards", action="store_true", help="records streamed out of the *.tar shards under DIR")
    a = ap.parse_args()
    for name in ("accelerators", "workers", "batch", "min_steps"):
        if getattr(a, name) < (0 if name == "workers" else 1):
            sys.exit(f"dataloader_au.py: --{name.replace('_', '-')} must be at least 1, got {getattr(a, name)}")
    if a.samples_per_s <= 0:
        sys.exit(f"dataloader_au.py: --samples-per-s must be more than 0, got {a.samples_per_s}")
    paths = list_files(a.dir, a.stat_listing)
    if a.shards:
        paths = [p for p in paths if p.endswith(".tar")]
    if not paths:
        sys.exit(f"dataloader_au.py: no {'tar shards' if a.shards else 'regular files'} under {a.dir}")
    if a.shards:
        loader = DataLoader(ShardStream(paths, a.seed), batch_size=a.accelerators * a.batch, num_workers=a.workers,
                            persistent_workers=a.workers > 0)
    else:
        ds = FileDataset(paths)
        g = torch.Generator()
        g.manual_seed(a.seed)
        # Epochs back to back without the loader's restart between them: num_samples beyond the
        # dataset makes RandomSampler yield one fresh permutation after another.
        sampler = RandomSampler(ds, replacement=False, num_samples=len(ds) * 1000, generator=g)
        loader = DataLoader(ds, batch_size=a.accelerators * a.batch, sampler=sampler, num_workers=a.workers,
                            persistent_workers=a.workers > 0, drop_last=True)
    compute = a.batch / a.samples_per_s
    it = iter(loader)
    steps = samples = nbytes = 0
    compute_s = wait_s = slept_s = 0.0
    t_start = None
    while True:
        t0 = time.monotonic()
        b = next(it)
        t1 = time.monotonic()
        got = len(b)
        time.sleep(compute)
        now = time.monotonic()
        if t_start is None:  # the first step: not measured
            t_start = now
            continue
        wait_s += t1 - t0
        slept_s += now - t1
        nbytes += int(b.sum())
        steps += 1
        samples += got
        compute_s += compute
        wall = now - t_start
        if (wall >= a.runtime and steps >= a.min_steps) or wall >= a.max_runtime:
            break
    wall = time.monotonic() - t_start
    print(json.dumps({"accelerators": a.accelerators, "workers": a.workers, "batch": a.batch, "steps": steps,
                      "samples": samples, "bytes": nbytes, "wall_s": round(wall, 3), "compute_s": round(compute_s, 3),
                      "au": round(compute_s / wall, 4), "samples_per_s": round(samples / wall, 1),
                      "samples_per_s_needed": a.accelerators * a.samples_per_s,
                      "wait_s": round(wait_s, 3), "slept_s": round(slept_s, 3)}))
    del it, loader  # the workers exit before the interpreter does


if __name__ == "__main__":
    main()
