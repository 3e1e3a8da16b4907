#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the browser tests (tests/web): Playwright
# drives it with executable_path, since Playwright's own browsers cannot be downloaded here.
#
#   scripts/chromium.sh          install chromium with apt-get when missing (as root); print its path
#
# Also installs a font with Chinese characters (fonts-noto-cjk) when fontconfig knows none: the
# pages' Chinese catalogue (app/web/i18n/zh.json) would show as empty boxes in the screenshots.
#
# The path is $CANASTA_CHROMIUM when set, else /usr/bin/chromium (tests/web/conftest.py reads the
# same variable).
set -euo pipefail

CHROMIUM="${CANASTA_CHROMIUM:-/usr/bin/chromium}"

log() { echo "chromium.sh: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if [ ! -x "$CHROMIUM" ]; then
    [ "$(id -u)" -eq 0 ] || die "$CHROMIUM is missing and I am not root: apt-get install chromium"
    log "chromium not found; installing it with apt-get (takes a minute)..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends chromium >&2
    [ -x "$CHROMIUM" ] || die "$CHROMIUM still missing after apt-get install chromium"
    log "installed $CHROMIUM"
fi
if command -v fc-list >/dev/null 2>&1 && [ -z "$(fc-list :lang=zh family)" ]; then
    if [ "$(id -u)" -eq 0 ]; then
        log "no font with Chinese characters; installing fonts-noto-cjk with apt-get..."
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends fonts-noto-cjk >&2 || {
            apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends fonts-noto-cjk >&2
        }
    else
        log "warning: no font with Chinese characters (apt-get install fonts-noto-cjk)"
    fi
fi
echo "$CHROMIUM"
