#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make install and what it installs, used the way the README's quick
# start uses it: into a temporary PREFIX (and once through DESTDIR), a
# program built with `pkg-config --cflags --libs porthole` against the
# installed headers and library, its events seen by the installed
# `porthole` (capture and report, watch as the README's hook runs it, the
# MCP server), an app built against 0.1's frozen header run with the new
# library, and make uninstall.  The README's code blocks are extracted
# and run as they are written (only the app id is made unique).
. tests/lib/e2e.sh
T=$E2E_TMP
B=${PH_BUILD:-build}
CC=${CC:-gcc}
ID=e2e.install.$$
PREFIX=$T/usr
VERSION=$(sed -n 's/^#define PORTHOLE_VERSION[ \t]*"\(.*\)"$/\1/p' include/porthole.h)
# A sanitized library needs its runtime in the program that loads it.
# The README's `cc` line gets it from a cc first on PATH that adds it.
APP_CFLAGS=
MAKE_SAN=
mkdir -p "$T/cc"
if nm -D "$B/lib/libporthole.so" 2>/dev/null | grep -q __asan_init; then
	APP_CFLAGS="-fsanitize=address,undefined"
	MAKE_SAN="SAN=1"
	printf '#!/bin/sh\nexec %s %s "$@"\n' "$CC" "$APP_CFLAGS" > "$T/cc/cc"
	chmod +x "$T/cc/cc"
fi

# readme_block NAME: the fenced block after `<!-- install.sh: NAME -->`.
readme_block() {
	awk -v m="<!-- install.sh: $1 -->" '
		$0 == m { on = 1; next }
		on == 1 && /^```/ { on = 2; next }
		on == 2 && /^```/ { exit }
		on == 2 { print }' README.md | sed "s/com\.example\.app/$ID/g"
}

check "make install PREFIX=... installs" \
	make --no-print-directory O="$B" $MAKE_SAN install PREFIX="$PREFIX"
for f in bin/porthole lib/libporthole.a "lib/libporthole.so.$VERSION" \
	include/porthole.h include/porthole_noop.h lib/pkgconfig/porthole.pc; do
	check "installed $f" test -f "$PREFIX/$f"
done
check "libporthole.so.${VERSION%%.*} and libporthole.so link to the library" sh -c '
	[ "$(readlink "$0/lib/libporthole.so.${1%%.*}")" = "libporthole.so.$1" ] &&
	[ "$(readlink "$0/lib/libporthole.so")" = "libporthole.so.$1" ]' \
	"$PREFIX" "$VERSION"
check "the soname carries the major version" sh -c \
	'readelf -d "$0" | grep -q "SONAME.*\[libporthole.so.${1%%.*}\]"' \
	"$PREFIX/lib/libporthole.so.$VERSION" "$VERSION"
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
check "porthole.pc names PREFIX and the header's version, nothing in build/" sh -c '
	[ "$(pkg-config --modversion porthole)" = "$1" ] &&
	[ "$(pkg-config --variable=prefix porthole)" = "$0" ] &&
	pkg-config --cflags porthole | grep -q -- "-I$0/include" &&
	! grep -q "build/\|$(pwd)" "$0/lib/pkgconfig/porthole.pc"' \
	"$PREFIX" "$VERSION"
check "porthole version is the header's" sh -c \
	'"$0/bin/porthole" version | grep -q "^porthole $1 "' "$PREFIX" "$VERSION"

# --- the README's quick start ------------------------------------------------
mkdir -p "$T/qs"
readme_block app.c > "$T/qs/app.c"
readme_block commands > "$T/qs/commands.sh"
readme_block hook.sh > "$T/qs/hook.sh"
check "the README has the quick start's three blocks" sh -c \
	'grep -q porthole_start "$0/app.c" && grep -q "porthole capture" "$0/commands.sh" && grep -q "porthole watch" "$0/hook.sh"' \
	"$T/qs"
# Its commands, as written, with the installed tools first on PATH.
(cd "$T/qs" && PATH="$PREFIX/bin:$T/cc:$PATH" LD_LIBRARY_PATH="$PREFIX/lib" \
	PORTHOLE_PROJECT_ROOT="$T/qs" \
	sh -ex ./commands.sh > "$T/qs.out" 2> "$T/qs.err"; echo $? > "$T/qs.rc")
check "the quick start's commands all succeed" sh -c \
	'[ "$(cat "$0.rc")" -eq 0 ] || { tail -20 "$0.err"; false; }' "$T/qs"
check "the app was built against the installed library" sh -c \
	'LD_LIBRARY_PATH="$0/usr/lib" ldd "$0/qs/app" | grep "libporthole.so.${1%%.*} => $0/usr/lib/" || { ldd "$0/qs/app"; false; }' \
	"$T" "$VERSION"
check "the installed porthole captured the app's marks" \
	grep -q '"label":"tick"' "$T/qs/first-run.json"
check "its report names the main-thread stall" \
	grep -q 'Main thread' "$T/qs.out"

# The hook, against the app running (started here, stopped by its pid).
(cd "$T/qs" && LD_LIBRARY_PATH="$PREFIX/lib" exec ./app 300) \
	> /dev/null 2>&1 &
APP=$!
(cd "$T/qs" && PATH="$PREFIX/bin:$PATH" sh ./hook.sh > "$T/hook.out" \
	2> "$T/hook.err"; echo $? > "$T/hook.rc")
kill "$APP" 2> /dev/null
wait "$APP" 2> /dev/null
check "the README's hook fails on the app's stall" sh -c \
	'[ "$(cat "$0.rc")" -eq 1 ] && grep -q "Main thread" "$0.out" || { cat "$0.out" "$0.err"; false; }' \
	"$T/hook"

check "the installed MCP server answers initialize with its version" sh -c '
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}" |
	"$0/bin/porthole" mcp --no-link 2> /dev/null |
	grep -q "\"serverInfo\":{[^}]*\"version\":\"$1\""' "$PREFIX" "$VERSION"

# --- an app built against 0.1's header, with this library ----------------------
check "an app built against 0.1's header links the installed library" \
	$CC -std=c11 -Wall -Wextra -Werror $APP_CFLAGS -Itests/abi \
	-o "$T/app_0_1" tests/abi/app_0_1.c -L"$PREFIX/lib" -lporthole
(cd "$T" && LD_LIBRARY_PATH="$PREFIX/lib" PORTHOLE_PROJECT_ROOT="$T/abi" \
	"$PREFIX/bin/porthole" capture --scenario abi --out "$T/abi.json" -- \
	"$T/app_0_1" "$ID.abi" "$T/abi.stop" > "$T/abi.out" 2> "$T/abi.err";
	echo $? > "$T/abi.rc") &
CAP=$!
abi_mark_seen() {
	cat "$T"/abi/.porthole/sessions/*/events.ndjson 2> /dev/null |
		grep -q '"label":"abi-0.1"'
}
# Until the mark is in the session, or the capture ended without it.
wait_for 120 sh -c 'cat "$0"/abi/.porthole/sessions/*/events.ndjson 2> /dev/null | grep -q "\"label\":\"abi-0.1\"" || [ -f "$0/abi.rc" ]' "$T"
check "the installed porthole sees the 0.1 app's events" abi_mark_seen
touch "$T/abi.stop"
wait "$CAP"
check "the 0.1 app ran and exited cleanly" sh -c \
	'[ "$(cat "$0.rc")" -eq 0 ] || { cat "$0.err"; false; }' "$T/abi"
check "the 0.1 app's hello carries its version" \
	grep -q '"versionName":"abi-0.1"' "$T/abi.json"

# --- DESTDIR, and uninstall ----------------------------------------------------
check "make install DESTDIR=... PREFIX=/usr stages under DESTDIR" sh -c '
	make --no-print-directory O="$1" $2 install DESTDIR="$0" PREFIX=/usr > /dev/null &&
	test -f "$0/usr/lib/libporthole.so.$3" &&
	grep -q "^prefix=/usr$" "$0/usr/lib/pkgconfig/porthole.pc"' \
	"$T/stage" "$B" "$MAKE_SAN" "$VERSION"
check "make uninstall DESTDIR=... removes every file it installed" sh -c '
	make --no-print-directory O="$1" $2 uninstall DESTDIR="$0" PREFIX=/usr > /dev/null &&
	[ -z "$(find "$0" -type f -o -type l)" ]' "$T/stage" "$B" "$MAKE_SAN"
check "make uninstall PREFIX=... removes every file it installed" sh -c '
	make --no-print-directory O="$1" $2 uninstall PREFIX="$0" > /dev/null &&
	[ -z "$(find "$0" -type f -o -type l)" ]' "$PREFIX" "$B" "$MAKE_SAN"
finish
