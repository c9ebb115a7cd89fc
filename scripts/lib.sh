# Shared helpers for scripts/*.sh: install a Debian package only when its command is missing.
# Sourced, not run.

# Every `say` starts a timed step. The steps of a script and of the scripts it calls go to one
# log (the first script to source this file makes it), and that script prints them at the end
# (print_step_times), so a slow first start shows where its minutes went.
if [ -z "${OVERSOLD_STEP_LOG:-}" ]; then
  OVERSOLD_STEP_LOG=$(mktemp "${TMPDIR:-/tmp}/oversold-steps.XXXXXX")
  export OVERSOLD_STEP_LOG
  _owns_step_log=1
  trap print_step_times EXIT # also when a step fails: the timings up to it
else
  _owns_step_log=0
fi

say() {
  printf '%s\t%s\n' "$(date +%s)" "$*" >>"$OVERSOLD_STEP_LOG"
  if [ -t 1 ]; then printf '\033[1m==> %s\033[0m\n' "$*"; else printf '==> %s\n' "$*"; fi
}

# print_step_times: each step's seconds (until the next step began, or now), then the total.
# Only the script that made the log prints it, once.
print_step_times() {
  [ "$_owns_step_log" -eq 1 ] && [ -s "$OVERSOLD_STEP_LOG" ] || return 0
  printf '%s\t(end)\n' "$(date +%s)" >>"$OVERSOLD_STEP_LOG"
  printf '==> step timings\n'
  awk -F '\t' 'NR > 1 { printf "  %5d s  %s\n", $1 - t, name; total += $1 - t }
                { t = $1; name = $2 }
                END { printf "  %5d s  total\n", total }' "$OVERSOLD_STEP_LOG"
  rm -f "$OVERSOLD_STEP_LOG"
  _owns_step_log=0
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

_apt_updated=0
apt_install() {
  command -v apt-get >/dev/null || { echo "need $*, and apt-get is not available: install it by hand" >&2; exit 1; }
  if [ "$_apt_updated" -eq 0 ]; then
    as_root apt-get update -qq
    _apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

# ensure_wasm_target: the page's compile target. rust-toolchain.toml names it, but rustup only
# adds listed targets when it installs the toolchain itself; a machine whose 1.95 toolchain was
# put there another way (a link to `stable`, say) has the host target alone.
ensure_wasm_target() {
  if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "rust: wasm32-unknown-unknown present"
  else
    say "adding the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
  fi
}

# ensure_redis_tools: redis-server and redis-cli on PATH (tests start private servers from them).
ensure_redis_tools() {
  if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
    say "redis: $(redis-server --version | cut -d' ' -f1-3)"
  else
    say "installing redis-server and redis-tools"
    apt_install redis-server redis-tools
  fi
}

# ensure_postgres: a PostgreSQL the `postgres` strategy's tests can use; exports DATABASE_URL.
# Uses $DATABASE_URL if it answers, else the local server (starting it, or installing it).
ensure_postgres() {
  local url=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
  command -v psql >/dev/null || apt_install postgresql-client
  if psql "$url" -qtAc 'select 1' >/dev/null 2>&1; then
    export DATABASE_URL=$url
    say "postgres: $url answers"
    return
  fi
  if ! command -v pg_lsclusters >/dev/null; then
    say "installing postgresql"
    apt_install postgresql
  fi
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  say "starting PostgreSQL $version"
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null || true
  for _ in $(seq 50); do pg_isready -q -h 127.0.0.1 && break; sleep 0.2; done
  if psql "$url" -qtAc 'select 1' >/dev/null 2>&1; then
    export DATABASE_URL=$url
  else
    # A stock Debian cluster wants a password over TCP: give the postgres role one for the tests.
    as_root su postgres -c "psql -qc \"ALTER USER postgres PASSWORD 'oversold'\"" >/dev/null
    export DATABASE_URL=postgres://postgres:oversold@127.0.0.1:5432/postgres
  fi
  psql "$DATABASE_URL" -qtAc 'select 1' >/dev/null
  say "postgres: $DATABASE_URL answers"
}
