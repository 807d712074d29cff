#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make demo: porthole capture around porthole-sample's checkout scenario,
# then the report, in text and as an HTML page next to the capture.
# Ends by itself (the scenario runs 10 s).
set -eu
build=${1:-build}
cd "$(dirname "$0")/.."
bin=$build/bin
out=$build/demo
mkdir -p "$out"

# UI=1: the live timeline in the browser on the running sample instead; the
# UI starts the sample itself (so its restart button works) and runs until
# Ctrl-C.
if [ "${UI:-}" = 1 ]; then
	echo "== porthole ui -- porthole-sample --scenario checkout (Ctrl-C ends it)"
	PORTHOLE_PROJECT_ROOT=$(pwd) exec "$bin/porthole" ui \
		--application-id dev.porthole.sample -- "$bin/porthole-sample" \
		--scenario checkout --seconds 86400 --data-dir "$out/sample-data"
fi

echo "== porthole capture --scenario checkout -- porthole-sample --scenario checkout --seconds 10"
PORTHOLE_PROJECT_ROOT=$(pwd) PORTHOLE_SESSIONS=0 \
	"$bin/porthole" capture --scenario checkout --out "$out/checkout.json" \
	-- "$bin/porthole-sample" --scenario checkout --seconds 10 \
	--data-dir "$out/sample-data" 2>"$out/sample.log" || true
echo
echo "== porthole report $out/checkout.json"
"$bin/porthole" report "$out/checkout.json" --html "$out/checkout.html"
echo
echo "HTML report: $out/checkout.html"
