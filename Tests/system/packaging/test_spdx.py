# SPDX-License-Identifier: Apache-2.0
"""scripts/check-spdx and scripts/add-spdx on a throwaway git repository: which
files count as sources, that the check fails and names each one lacking the
licence line, and that add-spdx puts the line where each kind of file still
works (after a #! line, after Package.swift's tools version)."""
import os
import shutil
import subprocess
import sys

import pytest

from harness.common import ROOT

TAG = "SPDX-License-Identifier: Apache-2.0"

FILES = {
    "Package.swift": "// swift-tools-version:6.1\nimport PackageDescription\n",
    "Sources/A/a.swift": "public let a = 1\n",
    "Sources/C/c.c": "/*\n * A comment.\n */\nint c(void) { return 0; }\n",
    "Sources/C/include/c.h": "int c(void);\n",
    "Tests/system/test_x.py": '"""A docstring."""\nX = 1\n',
    "scripts/tool.py": "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\nprint('tool ran')\n",
    "scripts/run.sh": "#!/bin/sh\necho shell ran\n",
    "Makefile": "all:\n\t@echo make ran\n",
    "mk/extra.mk": "EXTRA := 1\n",
    ".ci/run": "#!/usr/bin/env bash\necho ci ran\n",
    "debian/rules": "#!/usr/bin/make -f\n%:\n\t@echo rules ran $@\n",
    # Not sources: left alone and not listed.
    "README.md": "# readme\n",
    "debian/control": "Source: x\n",
    "Fuzz/corpus/record/valid": "user=alice\n",
}
SOURCES = sorted(n for n in FILES if n not in ("README.md", "debian/control", "Fuzz/corpus/record/valid"))


@pytest.fixture
def repo(tmp_path):
    """A git repository with FILES committed and this checkout's scripts in scripts/."""
    for name, text in FILES.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for name in ("scripts/tool.py", "scripts/run.sh", ".ci/run", "debian/rules"):
        (tmp_path / name).chmod(0o755)
    for name in ("spdx.py", "check-spdx", "add-spdx"):
        shutil.copy2(ROOT / "scripts" / name, tmp_path / "scripts" / name)
    (tmp_path / "untracked.py").write_text("U = 1\n")  # not tracked: never listed
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "--", *FILES, "scripts"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "files"], check=True)
    return tmp_path


def run(repo, script, *args, cwd=None):
    return subprocess.run([str(repo / "scripts" / script), *args], cwd=cwd or repo,
                          capture_output=True, text=True, timeout=60)


def test_check_spdx_names_every_source_file_without_the_line_and_fails(repo):
    r = run(repo, "check-spdx")
    assert r.returncode == 1, r.stdout + r.stderr
    # The scripts carry the line already; everything else in SOURCES lacks it.
    assert r.stdout.split() == SOURCES, r.stdout
    assert "scripts/add-spdx" in r.stderr


def test_add_spdx_puts_the_line_where_each_file_still_works(repo):
    r = run(repo, "add-spdx")
    assert r.returncode == 0, r.stderr
    assert sorted(line.removeprefix("added: ") for line in r.stdout.splitlines()) == SOURCES
    check = run(repo, "check-spdx")
    assert check.returncode == 0 and check.stdout == "", check.stdout + check.stderr

    def lines(name):
        return (repo / name).read_text().splitlines()

    assert lines("Package.swift")[:2] == ["// swift-tools-version:6.1", f"// {TAG}"]
    assert lines("Sources/A/a.swift")[0] == f"// {TAG}"
    assert lines("Sources/C/c.c")[:2] == [f"// {TAG}", "/*"]
    assert lines("Sources/C/include/c.h")[0] == f"// {TAG}"
    assert lines("Tests/system/test_x.py") == [f"# {TAG}", '"""A docstring."""', "X = 1"]
    assert lines("scripts/tool.py")[:3] == ["#!/usr/bin/env python3", "# -*- coding: utf-8 -*-", f"# {TAG}"]
    assert lines("scripts/run.sh")[:2] == ["#!/bin/sh", f"# {TAG}"]
    assert lines("Makefile")[0] == f"# {TAG}"
    assert lines("mk/extra.mk")[0] == f"# {TAG}"
    assert lines(".ci/run")[:2] == ["#!/usr/bin/env bash", f"# {TAG}"]
    assert lines("debian/rules")[:2] == ["#!/usr/bin/make -f", f"# {TAG}"]
    for name in ("README.md", "debian/control", "Fuzz/corpus/record/valid", "untracked.py"):
        assert TAG not in (repo / name).read_text(), name

    # Each still runs, with its mode kept.
    assert (repo / "scripts/run.sh").stat().st_mode & 0o777 == 0o755
    assert subprocess.run([str(repo / "scripts/run.sh")], capture_output=True, text=True).stdout == "shell ran\n"
    assert subprocess.run([sys.executable, str(repo / "scripts/tool.py")], capture_output=True,
                          text=True).stdout == "tool ran\n"
    assert subprocess.run([str(repo / ".ci/run")], capture_output=True, text=True).stdout == "ci ran\n"
    # Run as from a shell, not as a sub-make of make check (which would add
    # "Entering directory" lines).
    clean_env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    assert subprocess.run(["make", "-s", "-C", str(repo)], capture_output=True, env=clean_env,
                          text=True).stdout == "make ran\n"
    assert subprocess.run([str(repo / "debian/rules"), "x"], cwd=repo, capture_output=True, env=clean_env,
                          text=True).stdout == "rules ran x\n"
    doc = subprocess.run([sys.executable, "-c", "import test_x; print(test_x.__doc__)"],
                         cwd=repo / "Tests/system", capture_output=True, text=True)
    assert doc.stdout == "A docstring.\n", doc.stderr

    # A second run changes nothing.
    before = {n: (repo / n).read_bytes() for n in FILES}
    again = run(repo, "add-spdx")
    assert again.returncode == 0 and again.stdout == ""
    assert before == {n: (repo / n).read_bytes() for n in FILES}


def test_paths_limit_both_scripts_to_the_files_under_them(repo):
    r = run(repo, "add-spdx", "scripts", "Makefile")
    assert sorted(r.stdout.split()[1::2]) == ["Makefile", "scripts/run.sh", "scripts/tool.py"], r.stdout
    assert run(repo, "check-spdx", "scripts", "Makefile").returncode == 0
    r = run(repo, "check-spdx", "Sources", cwd=repo / "Sources")  # PATHs are relative to where it runs
    assert r.returncode != 0 and "no such file or directory: Sources" in r.stderr, r.stderr
    r = run(repo, "check-spdx", ".", cwd=repo / "Sources")
    assert r.returncode == 1 and r.stdout.split() == ["Sources/A/a.swift", "Sources/C/c.c", "Sources/C/include/c.h"]
    assert (repo / "Sources/A/a.swift").read_text() == FILES["Sources/A/a.swift"]


def test_this_checkout_s_scripts_tests_and_build_files_carry_the_line():
    """What this branch may touch is done; Sources/ and the Swift tests are the
    lead's to run add-spdx on (scripts/check-spdx with no PATH checks everything)."""
    mine = ["scripts", "mk", "Makefile", ".ci", "Fuzz/run.sh", "debian"]
    mine += [str(p.relative_to(ROOT)) for p in (ROOT / "Tests/system").rglob("*")
             if p.name not in ("test_fleet.py", "test_module_through_libpam.py") and p.is_file()
             and "__pycache__" not in p.parts]
    r = subprocess.run([str(ROOT / "scripts/check-spdx"), *mine], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_add_spdx_on_a_version_swift_from_before_gives_what_version_sh_writes_now():
    """Version.swift is generated (scripts/version.sh) and compared with the
    committed one by test_deb; add-spdx's line and version.sh's must agree."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import spdx
    finally:
        sys.path.pop(0)
    generated = subprocess.run(["sh", str(ROOT / "scripts/version.sh"), "swift"], capture_output=True,
                               check=True).stdout
    line = f"// {TAG}\n".encode()
    assert generated.startswith(line)
    assert spdx.with_tag(generated.removeprefix(line), "//") == generated
