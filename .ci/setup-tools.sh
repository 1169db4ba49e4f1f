#!/usr/bin/env bash
# `npm test` runs this first (pretest). It installs what the suites need outside node_modules into
# a cache outside the repo (${HANDOFF_TOOLS:-$HOME/.cache/handoff-tools}): the VS Code server
# (code-server on Node 24) with Debian's Chromium, Synapse, tmux for the agent CLI suites, the
# Claude Agent SDK for VS Code's Agent Host, and the agent CLIs' other versions for the version
# suite. Idempotent, and quick once installed.
#
# Under CI=true a failed install fails the run. Elsewhere the run goes on without the tool and
# says here which suites will not be tested; those suites then skip, naming the failed install.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
mkdir -p "$TOOLS"

declare -A untested=(
  [setup-vscode]="the editor suites (test/vscode), the npm start smoke test and the end-to-end suites (test/e2e)"
  [setup-synapse]="the Matrix suites (test/matrix), the editor's Matrix suite and the Connect Matrix end-to-end test"
  [setup-agents]="the idle sessions in tmux (test/agents/wake.test.ts, test/integration/wake.test.ts)"
  [setup-agent-host]="the Claude Agent Host session in VS Code (test/vscode/agentHost.test.ts)"
  [setup-agent-versions]="the agent CLIs' oldest supported and newest versions (test/agents/versions.test.ts)"
)
# Both at once: the VS Code server's native builds keep the CPU busy, Synapse mostly downloads.
declare -A pids
for s in setup-vscode setup-synapse setup-agents setup-agent-host setup-agent-versions; do
  bash "$here/$s.sh" >/dev/null &
  pids[$s]=$!
done
failed=()
for s in setup-vscode setup-synapse setup-agents setup-agent-host setup-agent-versions; do
  wait "${pids[$s]}" || failed+=("$s")
done
[ "${#failed[@]}" -eq 0 ] && exit 0

for s in "${failed[@]}"; do
  if [ "${CI:-}" = "true" ]; then
    printf '\n!!! %s FAILED (see above). Under CI=true that fails the run: %s must be tested.\n' "$s" "${untested[$s]}" >&2
  else
    printf '\n!!! %s FAILED (see above): %s will NOT be tested in this run. Retry: %sbash %s/%s.sh\n' "$s" "${untested[$s]}" "${HANDOFF_TOOLS:+HANDOFF_TOOLS=$TOOLS }" "$here" "$s" >&2
  fi
done
echo >&2
[ "${CI:-}" = "true" ] && exit 1
exit 0
