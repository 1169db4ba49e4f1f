#!/usr/bin/env bash
# What the Agent Host suite (test/vscode/agentHost.test.ts) needs beyond the VS Code server: the
# Claude Agent SDK from npm, which VS Code's Agent Host loads from the folder named by
# VSCODE_AGENT_HOST_CLAUDE_SDK_ROOT (the SDK brings its own `claude` binary in an optional
# dependency). Not a devDependency: 475 MB that nothing but this suite uses.
#
#   bash .ci/setup-agent-host.sh   # idempotent; one line on stderr; the log in $HANDOFF_TOOLS/logs
#
# Layout: $HANDOFF_TOOLS/claude-agent-sdk-<version>/node_modules/@anthropic-ai/claude-agent-sdk
#         $HANDOFF_TOOLS/claude-agent-sdk-<version>/.handoff-ok   written only after verification
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"

SDK_VERSION="${HANDOFF_CLAUDE_AGENT_SDK_VERSION:-0.3.336}"
SDK_DIR="$TOOLS/claude-agent-sdk-$SDK_VERSION"
CLAUDE_BIN="$SDK_DIR/node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude"
MARKER="$SDK_DIR/.handoff-ok"

mkdir -p "$TOOLS"
exec 9>"$TOOLS/.setup-agent-host.lock"
flock 9
setup_begin setup-agent-host

verify() {
  [ -f "$SDK_DIR/node_modules/@anthropic-ai/claude-agent-sdk/package.json" ] || { echo "verify: no claude-agent-sdk package"; return 1; }
  [ -x "$CLAUDE_BIN" ] || { echo "verify: no claude binary at $CLAUDE_BIN"; return 1; }
  "$CLAUDE_BIN" --version
}

if [ -f "$MARKER" ] && verify >>"$SETUP_LOG" 2>&1; then
  setup_done "Claude Agent SDK $SDK_VERSION already installed in $SDK_DIR; checked"
  exit 0
fi

rm -rf "$SDK_DIR"; mkdir -p "$SDK_DIR"
echo '{"private":true}' >"$SDK_DIR/package.json"
cd "$SDK_DIR"
step "npm install @anthropic-ai/claude-agent-sdk@$SDK_VERSION" with_retries 3 600 npm install --no-save --no-package-lock --no-audit --no-fund "@anthropic-ai/claude-agent-sdk@$SDK_VERSION"
step "verify the Claude Agent SDK's claude binary" verify
{ echo "claude-agent-sdk $SDK_VERSION"; "$CLAUDE_BIN" --version; date -u +%FT%TZ; } >"$MARKER"
setup_done "installed the Claude Agent SDK $SDK_VERSION ($("$CLAUDE_BIN" --version)) into $SDK_DIR"
