#!/usr/bin/env bash
# What the agent CLI suites (test/agents) need beyond node_modules: Debian's tmux, in which an
# interactive Claude Code session sits idle until a handoff wakes it. The CLIs themselves
# (Claude Code, Codex, Gemini CLI) are devDependencies from npm.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
setup_begin setup-agents
if command -v tmux >/dev/null; then
  setup_done "tmux $(tmux -V | cut -d' ' -f2) already installed"
  exit 0
fi
step "apt-get install tmux" apt_ensure tmux
setup_done "installed Debian's tmux $(tmux -V | cut -d' ' -f2)"
