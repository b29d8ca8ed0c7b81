#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The SPDX licence line every source file carries, checked and added.

    scripts/check-spdx [PATH...]   list the tracked source files without the line
                                   in their first 5 lines; exit 1 if there is one
    scripts/add-spdx [PATH...]     add the line to those files

With PATHs, only the tracked source files at or under them; without, every one.
Source files: .swift .c .h .qml .js .py .sh, Makefile, mk/*.mk, and any other tracked
file that starts with a #! line (.ci/run, debian/rules, maintainer scripts).

The line goes first, in the file's comment syntax (`//` for Swift and C, `#`
otherwise), except after what must stay first: a #! line, a Python coding
line after it, and Package.swift's `// swift-tools-version:` line."""
import os
import pathlib
import re
import subprocess
import sys

LICENSE = "Apache-2.0"
TAG = f"SPDX-License-Identifier: {LICENSE}"
LOOK = 5  # the line must be within the first LOOK lines
SLASH_SLASH = (".swift", ".c", ".h", ".qml", ".js")
HASH = (".py", ".sh", ".mk")
CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")


def repo_root():
    here = pathlib.Path(__file__).resolve().parent
    r = subprocess.run(["git", "-C", str(here), "rev-parse", "--show-toplevel"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("spdx: not inside a git checkout: " + r.stderr.strip())
    return pathlib.Path(r.stdout.strip())


def tracked(root, paths):
    """Tracked files (relative paths) at or under `paths` (all when empty)."""
    args = ["git", "-C", str(root), "ls-files", "-z", "--"]
    args += [os.path.relpath(os.path.abspath(p), root) for p in paths]
    r = subprocess.run(args, capture_output=True, check=True)
    return [n for n in r.stdout.decode().split("\0") if n]


def comment_for(root, name):
    """'//' or '#' for a source file, None for a file that is not one."""
    path = pathlib.PurePosixPath(name)
    if path.suffix in SLASH_SLASH:
        return "//"
    if path.suffix in HASH or path.name == "Makefile":
        return "#"
    full = root / name
    if full.is_symlink() or not full.is_file():
        return None
    with open(full, "rb") as f:
        if f.read(2) == b"#!":
            return "#"
    return None


def has_tag(data):
    return any(TAG.encode() in line for line in data.splitlines()[:LOOK])


def sources(root, paths):
    """(name, comment) for every tracked source file under `paths`."""
    out = []
    for name in tracked(root, paths):
        comment = comment_for(root, name)
        if comment is not None and (root / name).is_file():
            out.append((name, comment))
    return out


def missing(root, paths):
    return [(n, c) for n, c in sources(root, paths) if not has_tag((root / n).read_bytes())]


def with_tag(data, comment):
    """`data` with the tag line inserted after what must stay first."""
    lines = data.splitlines(keepends=True)
    keep = 0
    if lines and lines[0].startswith(b"#!"):
        keep = 1
        if len(lines) > 1 and comment == "#" and CODING.match(lines[1]):
            keep = 2
    elif lines and CODING.match(lines[0]):
        keep = 1
    elif lines and lines[0].startswith(b"// swift-tools-version"):
        keep = 1
    eol = b"\r\n" if lines and lines[0].endswith(b"\r\n") else b"\n"
    if keep and not lines[keep - 1].endswith((b"\n", b"\r")):
        lines[keep - 1] += eol
    tag = f"{comment} {TAG}".encode() + eol
    return b"".join(lines[:keep] + [tag] + lines[keep:])


def check(paths):
    root = repo_root()
    lacking = missing(root, paths)
    for name, _ in lacking:
        print(name)
    if lacking:
        print(f"{len(lacking)} source file(s) lack '{TAG}' in their first {LOOK} lines; "
              "scripts/add-spdx adds it.", file=sys.stderr)
        return 1
    return 0


def add(paths):
    root = repo_root()
    for name, comment in missing(root, paths):
        full = root / name
        mode = full.stat().st_mode
        tmp = full.with_name(full.name + ".spdx-tmp")
        tmp.write_bytes(with_tag(full.read_bytes(), comment))
        os.chmod(tmp, mode & 0o7777)
        os.replace(tmp, full)
        print(f"added: {name}")
    return 0


def main(argv):
    if len(argv) < 2 or argv[1] not in ("check", "add"):
        sys.exit("usage: spdx.py check|add [PATH...]")
    for p in argv[2:]:
        if not os.path.exists(p):
            sys.exit(f"spdx: no such file or directory: {p}")
    return (check if argv[1] == "check" else add)(argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
