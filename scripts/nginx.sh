#!/usr/bin/env bash
# Makes sure nginx is installed for the deployment tests (tests/e2e/test_deploy.py), which run the
# project's own site file (deploy/nginx/canasta.conf) in front of a test server.
#
#   scripts/nginx.sh          install Debian's nginx-light with apt-get when missing (as root); print its path
#
# The path is $CANASTA_NGINX when set, else /usr/sbin/nginx (tests/e2e/nginx.py reads the same
# variable). Installing the package starts no server here: the tests run their own, in the
# foreground, with their own configuration.
set -euo pipefail

NGINX="${CANASTA_NGINX:-/usr/sbin/nginx}"

log() { echo "nginx.sh: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if [ ! -x "$NGINX" ]; then
    [ "$(id -u)" -eq 0 ] || die "$NGINX is missing and I am not root: apt-get install nginx-light"
    log "nginx not found; installing nginx-light with apt-get..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends nginx-light >&2 || {
        apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends nginx-light >&2
    }
    [ -x "$NGINX" ] || die "$NGINX still missing after apt-get install nginx-light"
    # Debian's package may start its own server on port 80: the tests need none of it.
    if command -v service >/dev/null 2>&1; then service nginx stop >/dev/null 2>&1 || true; fi
    log "installed $NGINX"
fi
echo "$NGINX"
