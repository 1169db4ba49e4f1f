#!/usr/bin/env bash
# Installs what the test suites need outside node_modules, into a cache outside the repo
# (${HANDOFF_TOOLS:-$HOME/.cache/handoff-tools}): the VS Code server (code-server) with Node 24
# and Debian's Chromium, and Synapse. Idempotent and fast when already installed.
# A failed install does not stop the run: the suites that need it then skip LOUDLY, naming it.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
status=0
for step in setup-vscode setup-synapse; do
  if ! bash "$here/$step.sh" >/dev/null; then
    status=1
    printf '\n!!! %s FAILED: the tests that need it will be SKIPPED (see the log above).\n\n' "$step" >&2
  fi
done
exit 0
