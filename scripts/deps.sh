#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make deps: installs every Debian package the project needs that is
# missing (one `apt-get update` first, only when something is missing), and
# the npm test tools pinned in package.json into ./node_modules.  Every make
# entry point runs it, so it must be quick when there is nothing to do.
# Not root: prints the exact command instead.
set -eu
cd "$(dirname "$0")/.."

# Compilers and fuzzing runtime; the libraries of DESIGN.md section 7 (SQLite,
# zlib, libdeflate for iotrace's gzip writer, zstd, libcurl, civetweb,
# libyaml, libdw for the agent's symbolizer, jansson for tests only); the
# tools the tests drive: python3 (test scripts), pkg-config (the agent's .pc
# file), Node.js + npm (the MCP SDK and Playwright clients), Chromium (the
# page's browser tests); the aarch64 cross compiler, qemu to run what it
# builds, and musl-gcc (docs/building.md).
PKGS="gcc make clang libclang-rt-14-dev clang-format pkg-config
  libsqlite3-dev zlib1g-dev libdeflate-dev libzstd-dev zstd
  libcurl4-openssl-dev
  libcivetweb-dev libyaml-dev libdw-dev libjansson-dev
  python3 chromium
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static musl-tools"
# The arm64 pass (make cross ARCH=aarch64): the same libraries for arm64,
# through Debian's multiarch, beside the native ones.
ARM64_PKGS="libsqlite3-dev zlib1g-dev libdeflate-dev libzstd-dev
  libcurl4-openssl-dev libcivetweb-dev libyaml-dev libdw-dev libjansson-dev"
for p in $ARM64_PKGS; do
	PKGS="$PKGS $p:arm64"
done

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
# Node.js: a machine may bring its own (with npm inside, from another
# packager); Debian's nodejs and npm only when there is none.
command -v node > /dev/null || missing="$missing nodejs"
command -v npm > /dev/null || missing="$missing npm"
if [ -n "$missing" ]; then
	cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends$missing"
	if [ "$(id -u)" != 0 ]; then
		echo "make deps: missing packages:$missing" >&2
		echo "make deps: run as root:  $cmd" >&2
		exit 1
	fi
	echo "make deps: installing$missing" >&2
	# packages for arm64 need the architecture known to dpkg first
	dpkg --print-foreign-architectures | grep -qx arm64 ||
		dpkg --add-architecture arm64
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $missing >&2
fi

# npm test tools, pinned in package.json, into ./node_modules.
if [ -f package.json ]; then
	stamp=node_modules/.porthole-deps
	if [ ! -f $stamp ] || [ package.json -nt $stamp ]; then
		echo "make deps: npm install (project-local)" >&2
		npm install --no-audit --no-fund --loglevel=error >&2
		touch $stamp
	fi
fi
