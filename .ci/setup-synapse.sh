#!/usr/bin/env bash
# Install Synapse (the reference Matrix homeserver) from PyPI into a venv cached OUTSIDE the repo:
#
#   ${HANDOFF_TOOLS:-$HOME/.cache/handoff-tools}/synapse-1.163.2
#
# Idempotent: a marker file (.handoff-ok) is written only after a verified install; without it the
# venv is wiped and rebuilt, so a half-done install is retried. Safe as root with CI=true and no
# stdin. One line on stderr; the steps' output goes to $HANDOFF_TOOLS/logs/setup-synapse.log.
# Prints the venv directory on stdout.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SYNAPSE_VERSION="${SYNAPSE_VERSION:-1.163.2}"
VENV="$TOOLS/synapse-$SYNAPSE_VERSION"
MARKER="$VENV/.handoff-ok"

mkdir -p "$TOOLS"
exec 9>"$TOOLS/.setup-synapse.lock"
flock 9
setup_begin setup-synapse

verify() {
  "$VENV/bin/python" - "$SYNAPSE_VERSION" <<'PY'
import sys
import synapse, synapse.app.homeserver  # noqa: F401  (pulls in the rust extension too)
import synapse.synapse_rust  # noqa: F401
want = sys.argv[1]
got = synapse.__version__
assert got == want, f"synapse {got} installed, wanted {want}"
print(f"synapse {got} OK")
PY
}

if [[ -f "$MARKER" ]] && verify >>"$SETUP_LOG" 2>&1; then
  setup_done "Synapse $SYNAPSE_VERSION already installed in $VENV; checked"
  echo "$VENV"
  exit 0
fi

# venv support + what pip needs if it must build a wheel from source.
step "apt-get install python3-venv and build packages" apt_ensure \
  python3 python3-venv python3-dev build-essential libffi-dev libssl-dev \
  libjpeg-dev zlib1g-dev libxml2-dev libxslt1-dev pkg-config

# The distro Python (stable path, has venv); else whatever python3 is on PATH.
PY=""
for cand in /usr/bin/python3 "$(command -v python3 || true)"; do
  if [[ -n "$cand" && -x "$cand" ]] && "$cand" -c 'import venv, ensurepip, sys; assert sys.version_info >= (3, 10)' 2>/dev/null; then
    PY="$cand"; break
  fi
done
[[ -n "$PY" ]] || setup_fail "find python3 >= 3.10 with venv" "/usr/bin/python3 -c 'import venv, ensurepip'" 1

rm -rf "$VENV"
step "python3 -m venv $VENV" "$PY" -m venv "$VENV"
step "pip install --upgrade pip setuptools wheel" "$VENV/bin/python" -m pip install -q --upgrade pip setuptools wheel
# pip's own read timeout and retries cover a stalled download; the limit is for anything else.
step "pip install matrix-synapse==$SYNAPSE_VERSION" with_retries 2 900 "$VENV/bin/python" -m pip install --prefer-binary "matrix-synapse==$SYNAPSE_VERSION"
step "verify synapse imports" verify

printf 'installed_at=%s\ninstall_seconds=%s\npython=%s\n' \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$((SECONDS - SETUP_START))" "$("$VENV/bin/python" --version 2>&1)" >"$MARKER.tmp"
mv "$MARKER.tmp" "$MARKER"
setup_done "installed Synapse $SYNAPSE_VERSION from PyPI into $VENV"
echo "$VENV"
