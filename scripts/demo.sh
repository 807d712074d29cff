#!/bin/sh
# make demo: the real thing on the embedded default, ending by itself.
# Grows with each capability; today it shows what exists, run for real.
set -eu
build=${1:-build}
cd "$(dirname "$0")/.."
bin=$build/bin

echo "== porthole version"
"$bin/porthole" version
echo
echo "== porthole help"
"$bin/porthole" help
