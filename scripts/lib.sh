# Shared helpers for scripts/*.sh: install a Debian package only when its command is missing.
# Sourced, not run.

say() {
  if [ -t 1 ]; then printf '\033[1m==> %s\033[0m\n' "$*"; else printf '==> %s\n' "$*"; fi
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
