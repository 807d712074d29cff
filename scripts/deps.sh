#!/bin/sh
# Installs every Debian package the project needs that is missing, and the
# npm test tools, pinned in package.json, into ./node_modules.
if [ -f package.json ]; then
	stamp=node_modules/.porthole-deps
	if [ ! -f $stamp ] || [ package.json -nt $stamp ]; then
		echo "make deps: npm install (project-local)" >&2
		npm install --no-audit --no-fund --loglevel=error >&2
		touch $stamp
	fi
fi
