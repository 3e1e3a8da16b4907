# Sourced by scripts/chromium.sh and scripts/nginx.sh: their messages, and Debian packages
# installed with apt-get when a tool the tests need is missing. Set TOOL (the script's name)
# before sourcing.

log() { echo "$TOOL: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# apt_install PACKAGE...: as root, without questions; reads the package lists again only if
# the first try fails (a fresh machine has none).
apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "$@" >&2 || {
        apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "$@" >&2
    }
}

# need_program PATH PACKAGE: installs PACKAGE when PATH is not an executable, and checks it is then.
need_program() {
    local path="$1" package="$2"
    [ -x "$path" ] && return 0
    [ "$(id -u)" -eq 0 ] || die "$path is missing and I am not root: apt-get install $package"
    log "$path not found; installing $package with apt-get..."
    apt_install "$package"
    [ -x "$path" ] || die "$path still missing after apt-get install $package"
    log "installed $path"
}
