#!/usr/bin/env bash
# `npm run bench:peers` runs this first. It installs the message buses Handoff is compared with,
# each pinned, into its own folder of the tool cache (nothing in the repo, nothing global):
#
#   $TOOLS/peers/mcp-agent-mail-0.1.0   a venv: MCP Agent Mail from PyPI
#   $TOOLS/peers/agent-mailbox-0.8.2    a venv: agent-mailbox from PyPI
#   $TOOLS/peers/agent-relay-9.1.6      an npm prefix: Agent Relay from npm
#
# Idempotent: a folder counts as installed only with its .handoff-ok marker (written after the
# install checked out), so a half-done install is wiped and retried. One line per peer on stderr;
# the steps' output goes to $TOOLS/logs/setup-peers-<peer>.log. A peer that fails to install
# leaves $TOOLS/setup-peers-<peer>.failed, which the bench prints instead of that peer's numbers.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"

AGENT_MAIL_VERSION=0.1.0
MAILBOX_VERSION=0.8.2
RELAY_VERSION=9.1.6
PEERS="$TOOLS/peers"
mkdir -p "$PEERS"
exec 9>"$TOOLS/.setup-peers.lock"
flock 9

python_venv() {
  local dir="$1" spec="$2" check="$3"
  if [[ -f "$dir/.handoff-ok" ]] && "$dir/bin/python" -c "$check" >>"$SETUP_LOG" 2>&1; then
    setup_done "$spec already installed in $dir; checked"
    return 0
  fi
  rm -rf "$dir"
  step "python3 -m venv $dir" /usr/bin/python3 -m venv "$dir"
  step "pip install $spec" with_retries 2 900 "$dir/bin/python" -m pip install -q --prefer-binary "$spec"
  step "check $spec imports" "$dir/bin/python" -c "$check"
  date -u +%FT%TZ >"$dir/.handoff-ok"
  setup_done "installed $spec from PyPI into $dir"
}

npm_prefix() {
  local dir="$1" spec="$2"
  if [[ -f "$dir/.handoff-ok" ]]; then
    setup_done "$spec already installed in $dir"
    return 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  # An npm started from `npm run` inherits the outer npm's npm_* settings; this is a separate prefix.
  step "npm install $spec" with_retries 2 900 env -u npm_config_prefix -u npm_config_global \
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=warn "$spec"
  date -u +%FT%TZ >"$dir/.handoff-ok"
  setup_done "installed $spec from npm into $dir"
}

# Each in a subshell: a failed step exits only that peer's install.
(
  setup_begin setup-peers-agent-mail
  # litellm (a dependency) fetches a price list at import unless told to use its bundled one.
  export LITELLM_LOCAL_MODEL_COST_MAP=True
  step "apt-get install python3-venv" apt_ensure python3-venv
  python_venv "$PEERS/mcp-agent-mail-$AGENT_MAIL_VERSION" "mcp-agent-mail==$AGENT_MAIL_VERSION" 'import mcp_agent_mail.app'
)
(
  setup_begin setup-peers-agent-mailbox
  step "apt-get install python3-venv" apt_ensure python3-venv
  python_venv "$PEERS/agent-mailbox-$MAILBOX_VERSION" "agent-mailbox==$MAILBOX_VERSION" 'import agent_mailbox.mailbox_mcp'
)
(
  setup_begin setup-peers-agent-relay
  npm_prefix "$PEERS/agent-relay-$RELAY_VERSION" "agent-relay@$RELAY_VERSION"
)
# strace counts the fsyncs a send costs, in every system alike.
(
  setup_begin setup-peers-strace
  command -v strace >/dev/null || step "apt-get install strace" apt_ensure strace
  setup_done "strace $(strace -V | head -1 | awk '{print $NF}')"
)
exit 0
