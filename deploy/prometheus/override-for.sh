#!/usr/bin/env bash
# Writes a copy of a Prometheus rules file with every alert's `for:` set to
# one duration. This is the only sanctioned way to shorten `for:` for a test
# (the end-to-end testbed case uses it); the shipped rules file is never
# edited for a test, and the copy goes wherever the caller says.
#   deploy/prometheus/override-for.sh DURATION [SRC] > OUT
#   DURATION: a Prometheus duration (5s, 0s, 1m); SRC defaults to the shipped
#   deploy/prometheus/pathwise-rules.yml.
set -euo pipefail
if (($# < 1 || $# > 2)) || ! [[ $1 =~ ^[0-9]+(ms|s|m|h)$ ]]; then
  echo "usage: $0 DURATION [RULES_FILE] > OUT   (DURATION like 5s)" >&2
  exit 2
fi
src=${2:-$(dirname "$(readlink -f "$0")")/pathwise-rules.yml}
# Every `for:` key in the file, whatever its indentation; nothing else.
sed -E "s/^([[:space:]]*)for:[[:space:]]*[0-9a-z]+[[:space:]]*$/\1for: $1/" "$src"
