#!/usr/bin/env bash
# Install Synapse (the reference Matrix homeserver) into a venv cached OUTSIDE the repo.
#
#   ${HANDOFF_TOOLS:-$HOME/.cache/handoff-tools}/synapse-1.163.2
#
# Idempotent: a marker file (.handoff-ok) is written only after a verified install; without it the
# venv is wiped and rebuilt, so a half-done install is retried. Safe as root with CI=true and no
# stdin. Prints the venv directory on its last line of stdout.
set -euo pipefail

SYNAPSE_VERSION="${SYNAPSE_VERSION:-1.163.2}"
TOOLS="${HANDOFF_TOOLS:-${HOME:-/root}/.cache/handoff-tools}"
VENV="$TOOLS/synapse-$SYNAPSE_VERSION"
MARKER="$VENV/.handoff-ok"

log() { echo "[setup-synapse] $*" >&2; }

verify() {
  "$VENV/bin/python" - "$SYNAPSE_VERSION" <<'PY' >&2
import sys
import synapse, synapse.app.homeserver  # noqa: F401  (pulls in the rust extension too)
import synapse.synapse_rust  # noqa: F401
want = sys.argv[1]
got = synapse.__version__
assert got == want, f"synapse {got} installed, wanted {want}"
print(f"synapse {got} OK")
PY
}

if [[ -f "$MARKER" ]] && verify; then
  log "already installed: $VENV"
  echo "$VENV"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive

# Debian packages: venv support + what pip needs if it must build a wheel from source.
# Installed only if missing; apt-get update runs once, only when something is missing.
need_pkgs=(python3 python3-venv python3-dev build-essential libffi-dev libssl-dev
           libjpeg-dev zlib1g-dev libxml2-dev libxslt1-dev pkg-config)
missing=()
for p in "${need_pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    if [[ $(id -u) -ne 0 ]]; then SUDO="sudo -n"; fi
    log "installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -q </dev/null >&2
    $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >&2
  else
    log "WARNING: missing ${missing[*]} and no apt-get; trying anyway"
  fi
fi

# Prefer the distro Python (stable path, has venv); fall back to whatever python3 is on PATH.
PY=""
for cand in /usr/bin/python3 "$(command -v python3 || true)"; do
  if [[ -n "$cand" && -x "$cand" ]] && "$cand" -c 'import venv, ensurepip, sys; assert sys.version_info >= (3, 10)' 2>/dev/null; then
    PY="$cand"; break
  fi
done
[[ -n "$PY" ]] || { log "no usable python3 (>= 3.10 with venv/ensurepip)"; exit 1; }

install_start=$SECONDS
log "building venv $VENV with $PY ($("$PY" --version 2>&1))"
rm -rf "$VENV"
mkdir -p "$TOOLS"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip setuptools wheel </dev/null >&2
"$VENV/bin/python" -m pip install --prefer-binary "matrix-synapse==$SYNAPSE_VERSION" </dev/null >&2

verify
printf 'installed_at=%s\ninstall_seconds=%s\npython=%s\n' \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$((SECONDS - install_start))" "$("$VENV/bin/python" --version 2>&1)" > "$MARKER.tmp"
mv "$MARKER.tmp" "$MARKER"
log "installed: $VENV"
echo "$VENV"
