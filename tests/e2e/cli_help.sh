#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The command line's help, drawn from the commands' option tables: every
# command and subcommand `porthole help --list` names (the table itself,
# not a list kept here) answers --help, -h and `porthole help CMD` on
# stdout with exit 0, and refuses an unknown option with exit 2, naming
# it and the usage; docs/cli.md's flag tables are what the tables produce.
. tests/lib/e2e.sh
P=$(cd "$BIN" && pwd)/porthole
T=$E2E_TMP

check "help --list names the commands" sh -c "
	'$P' help --list > '$T/list' && grep -qx capture '$T/list' &&
	grep -qx 'trace analyze' '$T/list' && grep -qx 'heap dump' '$T/list' &&
	grep -qx 'iotrace attach' '$T/list'"

# One check per command, so a new one is tested without touching this file.
while IFS= read -r c; do
	check "$c: --help and help agree, on stdout, exit 0" sh -c "
		'$P' $c --help > '$T/h1' 2> '$T/e1' || exit 1
		'$P' help $c > '$T/h3' 2>> '$T/e1' || exit 1
		[ ! -s '$T/e1' ] || { cat '$T/e1'; exit 1; }
		head -1 '$T/h1' | grep -q '^usage: porthole $c' || { cat '$T/h1'; exit 1; }
		cmp '$T/h1' '$T/h3'"
	# a command of subcommands answers a bad one; the rest a bad option
	check "$c: an unknown option exits 2 naming it and the usage" sh -c "
		'$P' $c --no-such-option > '$T/o' 2> '$T/e'; rc=\$?
		[ \$rc -eq 2 ] || { echo \"exit \$rc\"; cat '$T/e'; exit 1; }
		[ ! -s '$T/o' ] || { cat '$T/o'; exit 1; }
		grep -q -- '--no-such-option' '$T/e' &&
		grep -q '^usage: porthole $c' '$T/e' || { cat '$T/e'; exit 1; }"
done < "$T/list"

# -h is --help's short form wherever an option may stand (one parser)
check "-h is --help" sh -c "
	'$P' save -h > '$T/h1' && '$P' save --help > '$T/h2' && cmp '$T/h1' '$T/h2' &&
	'$P' trace query x -h > '$T/h1' && '$P' help trace query > '$T/h2' &&
	cmp '$T/h1' '$T/h2' && '$P' -h | grep -q '^commands:'"
check "the help of a value is its value: --out --help is a file name" sh -c "
	cd '$T' && '$P' report x.json --html --help 2> '$T/e'; [ \$? -eq 2 ] &&
	grep -q 'x.json' '$T/e' && [ ! -e '$T/--help' ]"
check "capture: a --help after -- is the command's" sh -c "
	'$P' capture --scenario s --out '$T/c.json' -- sh -c 'exit 0' --help \
		> '$T/o' 2>&1; [ \$? -eq 3 ] && ! grep -q '^usage:' '$T/o'"
check "help of a command or subcommand that does not exist exits 2" sh -c "
	! '$P' help nosuch 2>/dev/null && ! '$P' help trace nosuch 2>/dev/null &&
	! '$P' trace nosuch 2>/dev/null"
check "every option has a help line" sh -c "
	'$P' help --markdown > '$T/md' && ! grep -n 'undocumented' '$T/md'"
check "docs/cli.md's flag tables are the option tables'" sh -c "
	sh scripts/cli-docs.sh '$P' docs/cli.md > '$T/cli.md' &&
	diff -u docs/cli.md '$T/cli.md' ||
	{ echo 'update it: sh scripts/cli-docs.sh $P > t && mv t docs/cli.md'; exit 1; }"
finish
