#!/usr/bin/env bash
# Throwaway PostgreSQL cluster for tests and local development.
#
#   scripts/pg.sh start     initialise (first time) and start the cluster; no-op if running
#   scripts/pg.sh stop      stop the cluster; no-op if not running
#   scripts/pg.sh url       print the connection URL (postgresql://canasta@127.0.0.1:PORT/canasta_test)
#   scripts/pg.sh status    say whether it is running
#   scripts/pg.sh destroy   stop it and delete its files
#
#   scripts/pg.sh replica-start    a streaming hot standby of the cluster (started first):
#                                  made with pg_basebackup into .pg/replica, started on its own
#                                  port, returns once it streams; a stopped one is made afresh
#   scripts/pg.sh replica-url      print its URL (same role and database, its own port)
#   scripts/pg.sh replica-stop     stop it; no-op if not running
#   scripts/pg.sh replica-status   say whether it is running
#   scripts/pg.sh replica-destroy  stop it and delete its files
#
# The standby (docs/scaling.md) serves CANASTA_READ_DATABASE_URL in the tests (make test sets
# TEST_READ_DATABASE_URL). Its port is $PGPORT_REPLICA (default: the first free one of
# 55452-55461). `stop` and `destroy` stop (and delete) the standby too.
#
# The cluster lives in $REPO/.pg/ (gitignored). It listens on 127.0.0.1 only, on port
# $PGPORT_TEST (default 55432; when that port is taken by something else and PGPORT_TEST is not
# set, the next free one of the following nine is used). Its unix socket is in .pg/run.
# Authentication is "trust": role "canasta" (superuser, no password) owns database
# "canasta_test". PostgreSQL refuses to run as root, so when run as root the server runs as the
# "postgres" OS user. If PostgreSQL is not installed it is installed with apt-get.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
PGLINK="$REPO/.pg"
DB_ROLE="canasta"
DB_NAME="canasta_test"
DEFAULT_PORT=55432
REPLICA_DEFAULT_PORT=55452
PG_OS_USER="${PG_OS_USER:-postgres}"

log() { echo "pg.sh: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

is_root() { [ "$(id -u)" -eq 0 ]; }

# Runs a command as the OS user that owns the cluster, from a directory it can read.
as_pg() {
    if is_root; then
        (cd / && runuser -u "$PG_OS_USER" -- "$@")
    else
        (cd / && "$@")
    fi
}

find_bindir() {
    local d
    if [ -x /usr/lib/postgresql/15/bin/initdb ]; then
        echo /usr/lib/postgresql/15/bin
        return 0
    fi
    if command -v initdb >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
        return 0
    fi
    for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V -r); do
        if [ -x "$d/initdb" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

ensure_installed() {
    if BINDIR="$(find_bindir)"; then
        return 0
    fi
    is_root || die "PostgreSQL is not installed and I am not root: apt-get install postgresql"
    log "PostgreSQL not found; installing it with apt-get (takes a minute)..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends postgresql >&2
    BINDIR="$(find_bindir)" || die "PostgreSQL still not found after apt-get install"
    log "installed PostgreSQL in $BINDIR"
}

ensure_os_user() {
    is_root || return 0
    if ! id -u "$PG_OS_USER" >/dev/null 2>&1; then
        log "creating OS user $PG_OS_USER to run PostgreSQL (it refuses to run as root)"
        useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_OS_USER"
    fi
}

# Sets PGDIR to the real directory holding the cluster. Normally that is $REPO/.pg itself; if
# the PostgreSQL OS user cannot reach the repository, or the socket path would be too long
# (the limit is 107 bytes), .pg is a symlink to a directory under /tmp instead.
resolve_pgdir() {
    local create="${1:-no}"
    if [ -L "$PGLINK" ]; then
        PGDIR="$(readlink -f "$PGLINK" || true)"
        if [ -n "$PGDIR" ] && [ -d "$PGDIR" ]; then
            return 0
        fi
        [ "$create" = yes ] || { PGDIR=""; return 0; }
        log "removing dangling symlink $PGLINK"
        rm -f "$PGLINK"
    elif [ -d "$PGLINK" ]; then
        PGDIR="$PGLINK"
        return 0
    fi
    [ "$create" = yes ] || { PGDIR=""; return 0; }

    local sock_path="$PGLINK/run/.s.PGSQL.$DEFAULT_PORT"
    if { ! is_root || as_pg test -x "$REPO"; } && [ "${#sock_path}" -le 100 ]; then
        mkdir -p "$PGLINK"
        PGDIR="$PGLINK"
    else
        PGDIR="$(mktemp -d /tmp/canasta-pg.XXXXXX)"
        chmod 755 "$PGDIR"
        ln -s "$PGDIR" "$PGLINK"
        log "$PG_OS_USER cannot use $REPO/.pg directly; cluster in $PGDIR (symlinked from .pg)"
    fi
}

is_running() {
    [ -n "${PGDIR:-}" ] && [ -f "$PGDIR/data/PG_VERSION" ] || return 1
    as_pg "$BINDIR/pg_ctl" -D "$PGDIR/data" status >/dev/null 2>&1
}

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# stored_port FILE VAR DEFAULT: the port a cluster was started on (FILE), else $VAR or DEFAULT.
stored_port() {
    local var=$2
    if [ -n "${PGDIR:-}" ] && [ -f "$1" ]; then
        cat "$1"
    else
        echo "${!var:-$3}"
    fi
}

# free_port VAR FIRST: $VAR if it is set (and free), else the first free port of FIRST..FIRST+9.
free_port() {
    local var=$1 first=$2 p
    if [ -n "${!var:-}" ]; then
        port_in_use "${!var}" && die "port ${!var} ($var) is already in use"
        echo "${!var}"
        return 0
    fi
    for p in $(seq "$first" $((first + 9))); do
        if ! port_in_use "$p"; then
            echo "$p"
            return 0
        fi
        log "port $p is in use, trying the next one"
    done
    die "no free port in $first-$((first + 9)); set $var"
}

current_port() { stored_port "${PGDIR:-}/port" PGPORT_TEST "$DEFAULT_PORT"; }
choose_port() { free_port PGPORT_TEST "$DEFAULT_PORT"; }

cmd_start() {
    ensure_installed
    ensure_os_user
    resolve_pgdir yes
    if is_running; then
        log "already running on 127.0.0.1:$(current_port) (data in $PGDIR/data)"
        return 0
    fi
    mkdir -p "$PGDIR/run"
    if is_root; then
        chown -R "$PG_OS_USER:" "$PGDIR"
    fi

    if [ ! -f "$PGDIR/data/PG_VERSION" ]; then
        log "initialising a new cluster in $PGDIR/data ($("$BINDIR/postgres" --version))"
        rm -rf "$PGDIR/data"
        as_pg "$BINDIR/initdb" --pgdata="$PGDIR/data" --username="$DB_ROLE" --auth=trust \
            --encoding=UTF8 --no-locale >"$PGDIR/initdb.log" 2>&1 ||
            { cat "$PGDIR/initdb.log" >&2; die "initdb failed"; }
        cat >>"$PGDIR/data/postgresql.conf" <<EOF

# Added by scripts/pg.sh: throwaway test cluster.
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PGDIR/run'
# A streaming standby may be made from it (scripts/pg.sh replica-start).
wal_level = replica
max_wal_senders = 10
EOF
    fi

    local port attempt
    for attempt in 1 2 3 4 5; do
        port="$(choose_port)"
        log "starting PostgreSQL on 127.0.0.1:$port (log: $PGDIR/postgres.log)"
        if as_pg "$BINDIR/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/postgres.log" -w -t 60 \
            -o "-p $port -c max_connections=300" start >/dev/null; then
            break
        fi
        # Another process may have taken the port between the check and the bind.
        if [ "$attempt" -lt 5 ] && grep -q "Address already in use" "$PGDIR/postgres.log"; then
            log "port $port was taken meanwhile; trying again"
            : >"$PGDIR/postgres.log"
            PGPORT_TEST="" DEFAULT_PORT=$((port + 1))
            continue
        fi
        tail -n 30 "$PGDIR/postgres.log" >&2 || true
        die "PostgreSQL failed to start"
    done
    echo "$port" >"$PGDIR/port"

    local psql=("$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U "$DB_ROLE")
    if [ "$(as_pg "${psql[@]}" -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" != "1" ]; then
        log "creating database $DB_NAME"
        as_pg "${psql[@]}" -d postgres -c "CREATE DATABASE $DB_NAME OWNER $DB_ROLE"
    fi
    log "ready: $(url)"
}

cmd_stop() {
    cmd_replica_stop
    resolve_pgdir
    if [ -z "$PGDIR" ] || [ ! -f "$PGDIR/data/PG_VERSION" ]; then
        log "not running (no cluster in $PGLINK)"
        return 0
    fi
    BINDIR="$(find_bindir)" || { log "not running (PostgreSQL not installed)"; return 0; }
    if ! is_running; then
        log "not running"
        return 0
    fi
    log "stopping PostgreSQL on 127.0.0.1:$(current_port)"
    as_pg "$BINDIR/pg_ctl" -D "$PGDIR/data" -m fast -w -t 60 stop >/dev/null
    log "stopped"
}

cmd_status() {
    resolve_pgdir
    BINDIR="$(find_bindir)" || { echo "not installed"; return 3; }
    if is_running; then
        echo "running: $(url)"
    else
        echo "not running"
        return 3
    fi
}

cmd_destroy() {
    cmd_replica_destroy
    cmd_stop
    resolve_pgdir
    if [ -L "$PGLINK" ]; then
        [ -n "$PGDIR" ] && rm -rf "$PGDIR"
        rm -f "$PGLINK"
    else
        rm -rf "$PGLINK"
    fi
    log "removed $PGLINK"
}

url() {
    echo "postgresql://$DB_ROLE@127.0.0.1:$(current_port)/$DB_NAME"
}

cmd_url() {
    resolve_pgdir
    url
}

# --- the streaming standby -------------------------------------------------------------------

replica_dir() { echo "$PGDIR/replica"; }

replica_is_running() {
    [ -n "${PGDIR:-}" ] && [ -f "$(replica_dir)/data/PG_VERSION" ] || return 1
    as_pg "$BINDIR/pg_ctl" -D "$(replica_dir)/data" status >/dev/null 2>&1
}

replica_port() { stored_port "$(replica_dir)/port" PGPORT_REPLICA "$REPLICA_DEFAULT_PORT"; }
choose_replica_port() { free_port PGPORT_REPLICA "$REPLICA_DEFAULT_PORT"; }

# What a standby needs of the primary: WAL for replicas, WAL senders, and a replication line in
# pg_hba.conf (trust from 127.0.0.1, like the rest of this throwaway cluster). initdb's defaults
# have them; a cluster made otherwise is fixed here (restarted if wal_level was minimal).
ensure_primary_replicates() {
    local port="$1"
    local psql=("$BINDIR/psql" -X -q -h 127.0.0.1 -p "$port" -U "$DB_ROLE" -d postgres -tA)
    local hba="$PGDIR/data/pg_hba.conf"
    if ! grep -Eq '^[[:space:]]*host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$hba"; then
        log "adding a replication line to $hba"
        echo "host    replication     all             127.0.0.1/32            trust" >>"$hba"
        as_pg "${psql[@]}" -c "SELECT pg_reload_conf()" >/dev/null
    fi
    if [ "$(as_pg "${psql[@]}" -c "SHOW wal_level")" = "minimal" ] ||
        [ "$(as_pg "${psql[@]}" -c "SHOW max_wal_senders")" = "0" ]; then
        log "the primary needs wal_level=replica and WAL senders: restarting it"
        printf '\nwal_level = replica\nmax_wal_senders = 10\n' >>"$PGDIR/data/postgresql.conf"
        as_pg "$BINDIR/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/postgres.log" -w -t 60 \
            -o "-p $port -c max_connections=300" restart >/dev/null
    fi
}

cmd_replica_start() {
    ensure_installed
    resolve_pgdir
    is_running || die "the primary is not running: scripts/pg.sh start first"
    if replica_is_running; then
        log "replica already running on 127.0.0.1:$(replica_port)"
        return 0
    fi
    local port rdir rport attempt
    port="$(current_port)"
    rdir="$(replica_dir)"
    ensure_primary_replicates "$port"
    # A standby that was stopped may need WAL the primary has recycled since: made afresh.
    rm -rf "$rdir"
    mkdir -p "$rdir/run"
    if is_root; then
        chown -R "$PG_OS_USER:" "$rdir"
    fi
    log "making a standby with pg_basebackup from 127.0.0.1:$port into $rdir/data"
    # -R writes standby.signal and primary_conninfo; -X stream copies the WAL it needs.
    as_pg "$BINDIR/pg_basebackup" -h 127.0.0.1 -p "$port" -U "$DB_ROLE" -D "$rdir/data" \
        -R -X stream -c fast >"$rdir/basebackup.log" 2>&1 ||
        { cat "$rdir/basebackup.log" >&2; die "pg_basebackup failed"; }
    cat >>"$rdir/data/postgresql.conf" <<EOF

# Added by scripts/pg.sh replica-start: a streaming hot standby of the throwaway cluster.
unix_socket_directories = '$rdir/run'
hot_standby = on
hot_standby_feedback = on
EOF
    for attempt in 1 2 3 4 5; do
        rport="$(choose_replica_port)"
        log "starting the standby on 127.0.0.1:$rport (log: $rdir/postgres.log)"
        if as_pg "$BINDIR/pg_ctl" -D "$rdir/data" -l "$rdir/postgres.log" -w -t 60 \
            -o "-p $rport -c max_connections=300" start >/dev/null; then
            break
        fi
        if [ "$attempt" -lt 5 ] && grep -q "Address already in use" "$rdir/postgres.log"; then
            : >"$rdir/postgres.log"
            PGPORT_REPLICA="" REPLICA_DEFAULT_PORT=$((rport + 1))
            continue
        fi
        tail -n 30 "$rdir/postgres.log" >&2 || true
        die "the standby failed to start"
    done
    echo "$rport" >"$rdir/port"
    local i status=""
    for i in $(seq 1 300); do
        status="$(as_pg "$BINDIR/psql" -X -q -h 127.0.0.1 -p "$rport" -U "$DB_ROLE" -d postgres \
            -tAc "SELECT status FROM pg_stat_wal_receiver" 2>/dev/null || true)"
        [ "$status" = "streaming" ] && break
        sleep 0.1
    done
    [ "$status" = "streaming" ] || die "the standby does not stream (see $rdir/postgres.log)"
    log "replica ready: $(replica_url)"
}

cmd_replica_stop() {
    resolve_pgdir
    if [ -z "$PGDIR" ] || [ ! -f "$(replica_dir)/data/PG_VERSION" ]; then
        return 0
    fi
    BINDIR="$(find_bindir)" || return 0
    replica_is_running || return 0
    log "stopping the standby on 127.0.0.1:$(replica_port)"
    as_pg "$BINDIR/pg_ctl" -D "$(replica_dir)/data" -m fast -w -t 60 stop >/dev/null
}

cmd_replica_status() {
    resolve_pgdir
    BINDIR="$(find_bindir)" || { echo "not installed"; return 3; }
    if replica_is_running; then
        echo "running: $(replica_url)"
    else
        echo "not running"
        return 3
    fi
}

cmd_replica_destroy() {
    cmd_replica_stop
    resolve_pgdir
    if [ -n "$PGDIR" ]; then
        rm -rf "$(replica_dir)"
    fi
}

replica_url() {
    echo "postgresql://$DB_ROLE@127.0.0.1:$(replica_port)/$DB_NAME"
}

cmd_replica_url() {
    resolve_pgdir
    replica_url
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    url) cmd_url ;;
    status) cmd_status ;;
    destroy) cmd_destroy ;;
    replica-start) cmd_replica_start ;;
    replica-stop) cmd_replica_stop ;;
    replica-url) cmd_replica_url ;;
    replica-status) cmd_replica_status ;;
    replica-destroy) cmd_replica_destroy ;;
    *)
        echo "usage: $0 start|stop|url|status|destroy|replica-start|replica-stop|replica-url|replica-status|replica-destroy" >&2
        exit 2
        ;;
esac
