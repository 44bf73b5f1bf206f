#!/usr/bin/env python3
"""A plain multi-threaded dataset reader: what a PyTorch map-style Dataset does per sample.

dataset_reader.py DIR --workers W --runtime S [--seed N] [--noatime]

Lists the regular files under DIR with their sizes (os.scandir and a stat per file, as iogate's
scan stats the files it samples), shuffles them, then W threads each take the next path and
open -> read it whole -> posix_fadvise(DONTNEED) -> close, until the list is read or S seconds
have passed (--noatime: O_NOATIME, as iogate opens files where permitted, so neither dirties
inodes with atime updates). Only the reading is timed. Prints one JSON object: workers, files_read, bytes_read,
elapsed_s, samples_per_s, bytes_per_s.
"""
import argparse
import json
import os
import random
import threading
import time


def list_files(root):
    out, stack = [], [root]
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.is_file(follow_symlinks=False):
                    out.append((e.path, e.stat(follow_symlinks=False).st_size))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--runtime", type=float, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--noatime", action="store_true")
    a = ap.parse_args()
    files = list_files(a.dir)
    random.Random(a.seed).shuffle(files)
    lock = threading.Lock()
    state = {"next": 0, "files": 0, "bytes": 0}
    deadline = [0.0]
    flags = os.O_RDONLY | os.O_NOFOLLOW | (os.O_NOATIME if a.noatime else 0)

    def worker():
        files_read = bytes_read = 0
        while time.monotonic() < deadline[0]:
            with lock:
                i = state["next"]
                state["next"] = i + 1
            if i >= len(files):
                break
            path = files[i][0]
            fd = os.open(path, flags)
            try:
                with os.fdopen(fd, "rb", buffering=0, closefd=False) as f:
                    data = f.read()
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
            files_read += 1
            bytes_read += len(data)
        with lock:
            state["files"] += files_read
            state["bytes"] += bytes_read

    threads = [threading.Thread(target=worker) for _ in range(a.workers)]
    start = time.monotonic()
    deadline[0] = start + a.runtime
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    print(json.dumps({"workers": a.workers, "files_read": state["files"], "bytes_read": state["bytes"],
                      "elapsed_s": elapsed, "samples_per_s": state["files"] / elapsed,
                      "bytes_per_s": state["bytes"] / elapsed}))


if __name__ == "__main__":
    main()
