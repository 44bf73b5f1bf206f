#!/usr/bin/env python3
"""The module map in docs/design.md against #include reality.

Reads the "Modules" table of docs/design.md (folder, what it owns, what it may include) and
checks every `#include "folder/..."` under agent/ against it: a folder includes itself and what
its row allows, and a row may only allow rows above it, so the layers stay acyclic. Every folder
of agent/ must have a row and every row a folder. The table is the one statement of the rules;
this test keeps it true.

usage: check_layers.py REPO_ROOT
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
design = (root / "docs" / "design.md").read_text()
section = design.split("## Modules (`agent/`)", 1)
if len(section) != 2:
    sys.exit("check_layers: docs/design.md has no '## Modules (`agent/`)' section")

rows = []  # (folder, allowed text), in table order
for line in section[1].splitlines():
    if line.startswith("## "):
        break
    m = re.match(r"\|\s*`([a-z_]+)/`\s*\|.*\|\s*([^|]+?)\s*\|\s*$", line)
    if m:
        rows.append((m.group(1), m.group(2)))
if not rows:
    sys.exit("check_layers: no module rows in docs/design.md's Modules table")

order = [folder for folder, _ in rows]
allowed = {}
problems = []
for i, (folder, text) in enumerate(rows):
    above = order[:i]
    names = set(re.findall(r"\b([a-z_]+)/?(?=[,)\s]|$)", text))
    if text.startswith("nothing of ours"):
        allowed[folder] = set()
    elif text.startswith("everything"):
        allowed[folder] = set(order) - {folder}
    elif text.startswith("all of the above"):
        except_part = text.split("except", 1)[1] if "except" in text else ""
        except_part = except_part.split("(", 1)[0]
        excluded = set(re.findall(r"([a-z_]+)/", except_part))
        allowed[folder] = set(above) - excluded
    else:
        allowed[folder] = {n for n in names if n in order}
        unknown = {n for n in re.findall(r"[a-z_]+", text)} - set(order)
        if unknown:
            problems.append(f"docs/design.md: {folder}/ may include unknown folders {sorted(unknown)}")
    if folder != order[-1] or not text.startswith("everything"):
        higher = allowed[folder] - set(above)
        if higher:
            problems.append(f"docs/design.md: {folder}/ may include {sorted(higher)}, rows below it (a cycle waiting)")

agent = root / "agent"
folders = sorted(p.name for p in agent.iterdir() if p.is_dir())
for f in folders:
    if f not in allowed:
        problems.append(f"agent/{f}/ has no row in docs/design.md's Modules table")
for f in order:
    if f not in folders:
        problems.append(f"docs/design.md lists {f}/, which agent/ does not have")

include = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)
checked = 0
for path in sorted(agent.rglob("*")):
    if path.suffix not in (".h", ".cc"):
        continue
    folder = path.relative_to(agent).parts[0]
    for target in include.findall(path.read_text(errors="replace")):
        checked += 1
        if target == folder or target not in folders:
            continue
        if target not in allowed.get(folder, set()):
            problems.append(f"{path.relative_to(root)} includes {target}/, which docs/design.md does not let {folder}/ include")

for p in problems:
    print("FAIL:", p)
if problems:
    sys.exit(1)
print(f"ok: {checked} includes in {len(folders)} folders of agent/ follow docs/design.md's module map")
