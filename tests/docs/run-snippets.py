#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the shell snippets of README.md and docs/ that are marked to be run.

A fenced block is checked when the line before its fence (blank lines
between allowed) is one of:

  <!-- runnable -->         run it with bash -euo pipefail on this host, from
                            a copy of the repository's top level whose
                            build/ is the build directory; it must exit 0
  <!-- runnable: flags -->  for a node or the testbed only: every invocation
                            of pathwise (its subcommand's), demo/run or
                            tests/testbed/testbed in it must use only flags
                            that command's --help lists

Each runnable block runs in its own network namespace (so ports cannot
collide with anything else on the host) with a /tmp of its own, in its own
session, killed with
everything it started when it ends. `sudo` is a no-op shim (the test runs as
root). A flags block with no command it can check is an error: it would
check nothing.

  run-snippets.py --source DIR --build DIR [--list] [--verbose] [FILE...]
"""

import argparse
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

MARK = re.compile(r"^\s*<!--\s*runnable(?::\s*([a-z-]+))?\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w-]*)")
FLAG = re.compile(r"^\[?(--[A-Za-z][\w.-]*)")
SEPARATORS = {"&&", "||", "|", ";", "&"}
RUN_TIMEOUT = 300


def snippets(path, rel):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(2), m.group(3)
        start = i
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = "\n".join(lines[i + 1:j])
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = MARK.match(lines[k]) if k >= 0 else None
        if mark:
            kind = mark.group(1) or "run"
            if kind not in ("run", "flags"):
                raise SystemExit(f"{rel}:{k + 1}: unknown marker '{lines[k].strip()}'")
            if lang not in ("sh", "bash", "console", ""):
                raise SystemExit(f"{rel}:{start + 1}: a runnable block must be sh, not {lang}")
            yield dict(file=rel, line=start + 1, kind=kind, body=body)
        i = j + 1


def logical_lines(body):
    """Token lists of the block's commands: backslash continuations joined,
    and the indented lines of a synopsis that go on with more options
    ("    [--flag=X] [--other]"); comments cut per physical line."""
    out, cur, problems = [], None, []
    for line in body.split("\n"):
        cont = line.rstrip().endswith("\\")
        text = line.rstrip()[:-1] if cont else line
        try:
            tokens = shlex.split(text, comments=True)
        except ValueError as e:
            problems.append(f"cannot parse '{line.strip()}': {e}")
            tokens = []
        if cur is not None:
            cur += tokens
        elif out and tokens and re.match(r"^\s+[\[-]", line):
            out[-1] += tokens
        else:
            cur = tokens
        if not cont and cur is not None:
            out.append(cur)
            cur = None
    if cur is not None:
        out.append(cur)
    return out, problems


class Helps:
    def __init__(self, source, build):
        self.source, self.build = source, build
        self.cache = {}
        self.subcommands = None

    def _run(self, argv, cwd):
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60)
        return p.stdout + p.stderr

    def pathwise(self, sub):
        exe = os.path.join(self.build, "pathwise")
        if self.subcommands is None:
            top = self._run([exe, "--help"], self.source)
            self.subcommands = set(re.findall(r"^\s{2,}([a-z][a-z-]*)\s", top, re.M))
        if sub not in self.cache:
            self.cache[sub] = self._run([exe, sub, "--help"], self.source)
        return self.cache[sub]

    def script(self, rel):
        if rel not in self.cache:
            self.cache[rel] = self._run([os.path.join(self.source, rel), "--help"], self.source)
        return self.cache[rel]


def flag_listed(flag, text):
    return re.search(r"(^|[\s,\[])" + re.escape(flag) + r"($|[\s=,\]])", text, re.M) is not None


def check_flags(snip, helps):
    lines, problems = logical_lines(snip["body"])
    checked = 0
    for tokens in lines:
        i = 0
        while i < len(tokens):
            t = tokens[i]
            base = os.path.basename(t)
            if base == "pathwise" or t.endswith("demo/run") or t.endswith("tests/testbed/testbed"):
                args = []
                j = i + 1
                while j < len(tokens) and tokens[j] not in SEPARATORS:
                    args.append(tokens[j])
                    j += 1
                if base == "pathwise":
                    sub = "serve"
                    helps.pathwise("serve")
                    if args and not args[0].startswith("-") and not args[0].startswith("["):
                        sub = args[0]
                        if sub not in helps.subcommands:
                            problems.append(f"pathwise has no command '{sub}'")
                            i = j
                            continue
                    text, what = helps.pathwise(sub), f"pathwise {sub}"
                else:
                    rel = "demo/run" if t.endswith("demo/run") else "tests/testbed/testbed"
                    text, what = helps.script(rel), rel
                for a in args:
                    m = FLAG.match(a)
                    if m and m.group(1) != "--help" and not flag_listed(m.group(1), text):
                        problems.append(f"{what}: --help does not list {m.group(1)}")
                checked += 1
                i = j
            else:
                i += 1
    if not checked:
        problems.append("marked for a flags check, but no pathwise, demo/run or "
                        "tests/testbed/testbed command in it")
    return problems


def sandbox(source, build):
    # Under the build directory, not /tmp: each snippet gets a /tmp of its own.
    root = tempfile.mkdtemp(prefix="docs-snippets-", dir=build)
    work = os.path.join(root, "repo")
    os.mkdir(work)
    for name in os.listdir(source):
        if name in ("build", ".git"):
            continue
        os.symlink(os.path.join(source, name), os.path.join(work, name))
    os.symlink(build, os.path.join(work, "build"))
    bindir = os.path.join(root, "bin")
    os.mkdir(bindir)
    os.symlink(os.path.join(build, "pathwise"), os.path.join(bindir, "pathwise"))
    with open(os.path.join(bindir, "sudo"), "w") as f:
        f.write('#!/bin/sh\n# the docs test runs as root\nexec "$@"\n')
    os.chmod(os.path.join(bindir, "sudo"), 0o755)
    return root, work, bindir


def run(snip, work, bindir):
    env = dict(os.environ)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    # A private /tmp too: snippets write to /tmp/NAME as a reader would, and
    # two runs of this test at once must not share those files.
    script = ("mount -t tmpfs tmpfs /tmp\nip link set lo up\nset -euo pipefail\n"
              + snip["body"] + "\n")
    p = subprocess.Popen(["unshare", "--net", "--mount", "--propagation", "private", "--",
                          "bash", "-c", script], cwd=work,
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=RUN_TIMEOUT)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        rc = f"timeout after {RUN_TIMEOUT} s"
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # whatever it left in the background
        except ProcessLookupError:
            pass
    return rc, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--verbose", action="store_true", help="print every run's output")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    source, build = os.path.abspath(a.source), os.path.abspath(a.build)
    files = a.files or (["README.md"] + sorted(
        os.path.relpath(p, source) for p in glob.glob(os.path.join(source, "docs", "**", "*.md"), recursive=True)))
    snips = [s for f in files for s in snippets(os.path.join(source, f), f)]
    if a.list:
        for s in snips:
            print(f"{s['file']}:{s['line']}: {s['kind']}")
        return 0
    if not snips:
        print("no marked snippets found", file=sys.stderr)
        return 1
    if os.geteuid() != 0:
        print("run-snippets: needs root (snippets bind sysfs fixtures and use network namespaces)", file=sys.stderr)
        return 1
    helps = Helps(source, build)
    root, work, bindir = sandbox(source, build)
    failed = 0
    try:
        for s in snips:
            where = f"{s['file']}:{s['line']}"
            if s["kind"] == "flags":
                problems = check_flags(s, helps)
                if problems:
                    failed += 1
                    print(f"FAIL {where} (flags)")
                    for p in problems:
                        print(f"  {p}")
                else:
                    print(f"ok   {where} (flags)")
                continue
            rc, out = run(s, work, bindir)
            if rc != 0:
                failed += 1
                print(f"FAIL {where} (run): exit {rc}")
                print("  " + "\n  ".join(s["body"].split("\n")))
                print("  --- output (last 40 lines):")
                print("  " + "\n  ".join(out.rstrip("\n").split("\n")[-40:]))
            else:
                print(f"ok   {where} (run)")
                if a.verbose:
                    print("  " + "\n  ".join(out.rstrip("\n").split("\n")))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{len(snips) - failed} of {len(snips)} snippets ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
