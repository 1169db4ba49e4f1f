#!/usr/bin/env bash
# The agent CLIs' other versions for the version suite (test/agents/versions.test.ts): the oldest
# supported and the newest of each CLI where it differs from the devDependency in node_modules (which
# every other agent suite runs). From npm, each in a folder of its own under $HANDOFF_TOOLS; the suite
# runs what it finds there and says which versions it ran.
#
#   bash .ci/setup-agent-versions.sh   # idempotent; one line on stderr; the log in $HANDOFF_TOOLS/logs
#
# Layout: $HANDOFF_TOOLS/agent-clis/<package name with / as +>@<version>/node_modules/<package>
#         …/.handoff-ok   written only after `<cli> --version` answered
# HANDOFF_AGENT_VERSIONS overrides the list (space-separated package@version).
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"

# Keep in step with docs/agents.md › Versions and the plan in test/agents/versions.test.ts.
VERSIONS="${HANDOFF_AGENT_VERSIONS:-@anthropic-ai/claude-code@2.1.197 @anthropic-ai/claude-code@2.1.211 @anthropic-ai/claude-code@2.1.337}"

mkdir -p "$TOOLS/agent-clis"
exec 9>"$TOOLS/.setup-agent-versions.lock"
flock 9
setup_begin setup-agent-versions

verify() {
  local dir="$1" pkg="$2" bin
  bin="$(node -e "const p=require('$dir/node_modules/$pkg/package.json'); const b=typeof p.bin==='string'?p.bin:Object.values(p.bin)[0]; console.log(require('path').join('$dir/node_modules/$pkg',b))")"
  [ -e "$bin" ] || { echo "verify: no bin at $bin"; return 1; }
  case "$bin" in *.js|*.mjs|*.cjs) node "$bin" --version ;; *) "$bin" --version ;; esac
}

installed=()
for spec in $VERSIONS; do
  pkg="${spec%@*}"; version="${spec##*@}"
  dir="$TOOLS/agent-clis/${pkg//\//+}@$version"
  if [ -f "$dir/.handoff-ok" ] && verify "$dir" "$pkg" >>"$SETUP_LOG" 2>&1; then
    installed+=("$spec (already)")
    continue
  fi
  rm -rf "$dir"; mkdir -p "$dir"
  echo '{"private":true}' >"$dir/package.json"
  (cd "$dir" && step "npm install $spec" with_retries 3 600 npm install --no-save --no-package-lock --no-audit --no-fund "$spec")
  step "verify $spec" verify "$dir" "$pkg"
  { echo "$spec"; verify "$dir" "$pkg"; date -u +%FT%TZ; } >"$dir/.handoff-ok"
  installed+=("$spec")
done
setup_done "agent CLI versions in $TOOLS/agent-clis: ${installed[*]}"
