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
TOOL=chromium.sh
. "$(dirname "$0")/apt.sh"

CHROMIUM="${CANASTA_CHROMIUM:-/usr/bin/chromium}"

need_program "$CHROMIUM" chromium
if command -v fc-list >/dev/null 2>&1 && [ -z "$(fc-list :lang=zh family)" ]; then
    if [ "$(id -u)" -eq 0 ]; then
        log "no font with Chinese characters; installing fonts-noto-cjk with apt-get..."
        apt_install fonts-noto-cjk
    else
        log "warning: no font with Chinese characters (apt-get install fonts-noto-cjk)"
    fi
fi
echo "$CHROMIUM"
