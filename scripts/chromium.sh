#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the browser tests (tests/web): Playwright
# drives it with executable_path, since Playwright's own browsers cannot be downloaded here.
#
#   scripts/chromium.sh          install chromium with apt-get when missing (as root); print its path
#
# Also installs a font with Chinese characters (fonts-noto-cjk), one with Thai letters
# (fonts-thai-tlwg) and one with Cyrillic (fonts-dejavu-core) when fontconfig knows none for that
# language: the pages' Chinese, Thai and Russian catalogues (app/web/i18n/zh.json, th.json,
# ru.json) would show as empty boxes in the screenshots.
#
# The path is $CANASTA_CHROMIUM when set, else /usr/bin/chromium (tests/web/conftest.py reads the
# same variable).
set -euo pipefail
TOOL=chromium.sh
. "$(dirname "$0")/apt.sh"

CHROMIUM="${CANASTA_CHROMIUM:-/usr/bin/chromium}"

need_program "$CHROMIUM" chromium
# font_for LANG PACKAGE WHAT: installs PACKAGE when fontconfig knows no font for LANG.
font_for() {
    command -v fc-list >/dev/null 2>&1 || return 0
    [ -z "$(fc-list ":lang=$1" family)" ] || return 0
    if [ "$(id -u)" -eq 0 ]; then
        log "no font with $3; installing $2 with apt-get..."
        apt_install "$2"
    else
        log "warning: no font with $3 (apt-get install $2)"
    fi
}
font_for zh fonts-noto-cjk "Chinese characters"
font_for th fonts-thai-tlwg "Thai letters"
font_for ru fonts-dejavu-core "Cyrillic letters"
echo "$CHROMIUM"
