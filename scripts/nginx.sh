#!/usr/bin/env bash
# Makes sure nginx is installed for the deployment tests (tests/e2e/test_deploy.py,
# tests/web/test_behind_nginx.py), which run the project's own site file
# (deploy/nginx/canasta.conf) in front of a test server.
#
#   scripts/nginx.sh          install Debian's nginx-light with apt-get when missing (as root); print its path
#
# The path is $CANASTA_NGINX when set, else /usr/sbin/nginx (tests/e2e/nginx.py reads the same
# variable). The tests run their own nginx, in the foreground, with their own configuration.
set -euo pipefail
TOOL=nginx.sh
. "$(dirname "$0")/apt.sh"

NGINX="${CANASTA_NGINX:-/usr/sbin/nginx}"
if [ ! -x "$NGINX" ]; then
    need_program "$NGINX" nginx-light
    # Debian's package may start a server of its own on port 80: the tests need none of it.
    if command -v service >/dev/null 2>&1; then service nginx stop >/dev/null 2>&1 || true; fi
fi
echo "$NGINX"
