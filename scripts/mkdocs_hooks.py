# SPDX-License-Identifier: Apache-2.0
"""MkDocs hooks for pathwise's docs site (mkdocs.yml: hooks).

MkDocs 1.4 (Debian bookworm) with --strict fails on a link to a missing
page, but only logs at INFO a page left out of the nav, and checks neither
anchors nor links that leave docs/ (to bpf/README.md, deploy/...). These
hooks make each of those a warning, which --strict turns into a failed
build:

- a page under docs/ that the nav does not list;
- a link out of docs/ (../X) to a file or folder that does not exist in the
  repository; in the site it becomes the repository path as code, since the
  site holds no copy of the file;
- a link to an anchor (#id) that the target page does not have;
- README.md: a relative link to a file that does not exist, or into docs/
  with an anchor the page does not have;
- an alert in deploy/prometheus/pathwise-rules.yml whose runbook_url is not
  docs/alerts.md#<its anchor>, or whose anchor alerts.md lacks.
"""

import logging
import os
import posixpath
import re

log = logging.getLogger("mkdocs.hooks.pathwise")

# [text](target) outside code; images too (![alt](target)).
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_ID = re.compile(r'\bid="([^"]+)"')
_RUNBOOK_PREFIX = "docs/alerts.md#"

_state = {}


def _repo_root(config):
    return os.path.dirname(os.path.abspath(config["config_file_path"]))


def _outside_code(markdown):
    """Yields (line_no, line) of the lines not inside fenced code blocks."""
    fenced = False
    for n, line in enumerate(markdown.split("\n"), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def _strip_code_spans(line):
    return re.sub(r"`[^`]*`", "", line)


def on_config(config):
    _state.clear()
    _state["ids"] = {}  # page src_uri -> set of ids
    _state["links"] = []  # (page src_uri, target src_uri, anchor)
    return config


def on_nav(nav, config, files):
    in_nav = {p.file.src_uri for p in nav.pages}
    for f in files.documentation_pages():
        if f.src_uri not in in_nav:
            log.warning(f"page '{f.src_uri}' is not in mkdocs.yml's nav")
    return nav


def on_page_markdown(markdown, page, config, files):
    root = _repo_root(config)
    docs_dir = os.path.abspath(config["docs_dir"])
    page_dir = os.path.dirname(os.path.join(docs_dir, page.file.src_path))
    out = markdown.split("\n")
    for n, line in _outside_code(markdown):
        def rewrite(m):
            bang, text, target = m.group(1), m.group(2), m.group(3)
            if line[:m.start()].count("`") % 2:  # inside a code span
                return m.group(0)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                return m.group(0)
            path, _, anchor = target.partition("#")
            if not path:  # same page
                _state["links"].append((page.file.src_uri, page.file.src_uri, anchor))
                return m.group(0)
            real = os.path.normpath(os.path.join(page_dir, path))
            if real == docs_dir or real.startswith(docs_dir + os.sep):
                if path.endswith(".md"):
                    rel = os.path.relpath(real, docs_dir).replace(os.sep, "/")
                    _state["links"].append((page.file.src_uri, rel, anchor))
                return m.group(0)  # MkDocs checks the file itself
            if not (real == root or real.startswith(root + os.sep)):
                log.warning(f"{page.file.src_uri}:{n}: link '{target}' leaves the repository")
                return m.group(0)
            if not os.path.exists(real):
                log.warning(
                    f"{page.file.src_uri}:{n}: link '{target}' names "
                    f"{os.path.relpath(real, root)}, which does not exist")
                return m.group(0)
            shown = os.path.relpath(real, root) + (os.sep if os.path.isdir(real) else "")
            if bang:
                log.warning(f"{page.file.src_uri}:{n}: image '{target}' is outside docs/")
            return f"{text} (`{shown}` in the repository)" if text.strip("`") != shown.rstrip("/") else f"`{shown}`"
        out[n - 1] = _LINK.sub(rewrite, line)
    return "\n".join(out)


def on_page_content(html, page, config, files):
    _state["ids"][page.file.src_uri] = set(_ID.findall(html))
    return html


def _check_readme(root, ids):
    readme = os.path.join(root, "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    for n, line in _outside_code(text):
        for m in _LINK.finditer(_strip_code_spans(line)):
            target = m.group(3)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            path, _, anchor = target.partition("#")
            if not path:
                continue
            real = os.path.normpath(os.path.join(root, path))
            if not os.path.exists(real):
                log.warning(f"README.md:{n}: link '{target}' names a file that does not exist")
                continue
            rel = os.path.relpath(real, root).replace(os.sep, "/")
            if anchor and rel.startswith("docs/") and rel.endswith(".md"):
                page = rel[len("docs/"):]
                if anchor not in ids.get(page, set()):
                    log.warning(f"README.md:{n}: link '{target}': {rel} has no anchor '#{anchor}'")


def _check_runbooks(root, ids):
    rules = os.path.join(root, "deploy", "prometheus", "pathwise-rules.yml")
    with open(rules, encoding="utf-8") as f:
        lines = f.read().split("\n")
    alert = None
    seen = {}
    for line in lines:
        m = re.match(r"^\s*- alert:\s*(\S+)", line)
        if m:
            alert = m.group(1)
            seen[alert] = None
            continue
        m = re.match(r"^\s*runbook_url:\s*\"?([^\"\s]+)\"?", line)
        if m and alert:
            seen[alert] = m.group(1)
    alert_ids = ids.get("alerts.md", set())
    for alert, url in seen.items():
        want = _RUNBOOK_PREFIX + alert.lower()
        if url is None:
            log.warning(f"pathwise-rules.yml: {alert} has no runbook_url")
        elif url != want:
            log.warning(f"pathwise-rules.yml: {alert}: runbook_url '{url}', expected '{want}'")
        elif alert.lower() not in alert_ids:
            log.warning(f"pathwise-rules.yml: {alert}: docs/alerts.md has no anchor '#{alert.lower()}'")


def on_post_build(config):
    ids = _state["ids"]
    for src, target, anchor in _state["links"]:
        if anchor and target in ids and anchor not in ids[target]:
            log.warning(f"{src}: link to '{target}#{anchor}': no such anchor")
    root = _repo_root(config)
    _check_readme(root, ids)
    _check_runbooks(root, ids)
