#!/usr/bin/env bash
# The no-Linux-powers lane (#38): the hook, attention, wake and impersonation suites and the real
# CLIs' turns, run with /proc and tmux switched off through the seam (extension/shared/platform/
# powers.ts), as on macOS and Windows, which no machine here runs. Each test that asserts a Linux
# proof asserts the weaker guarantee docs/platforms.md names instead (a stated identity, marked
# stated). `npm test` runs these files through test/helpers/suites.mjs, which reads the list below;
# on its own, after a build:
#
#   node esbuild.mjs && bash .ci/lane-no-linux-powers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export HANDOFF_POWERS_OFF=procfs,tmux
t0=$SECONDS
node --test --test-concurrency=1 \
  out/test/integration/attention.test.js \
  out/test/integration/quietHook.test.js \
  out/test/integration/editorWake.test.js \
  out/test/integration/wake.test.js \
  out/test/faults/impersonation.test.js \
  out/test/agents/turns.test.js
echo "[lane] no Linux powers (HANDOFF_POWERS_OFF=$HANDOFF_POWERS_OFF): $((SECONDS - t0))s"
