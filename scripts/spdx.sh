#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# spdx.sh: every source file of the project carries one license line, an
# SPDX identifier ($LINE below) in its language's comment, as its first
# line or right after its shebang (and a Python coding line).  The files: git's tracked C sources and
# headers, shell, Python, JavaScript modules, SQL and the Makefile, and
# extensionless scripts with a shebang; minus SKIP below.
#
#   scripts/spdx.sh          adds the line to each file that lacks it
#   scripts/spdx.sh --check  lists the files that lack it and prints
#                            "[spdx] N passed, N failed" (exit 1 if any)
#
# Run it from the top of the work tree.  Adding is idempotent: run it again
# after a merge brings in new files.
set -eu

LINE='SPDX-License-Identifier: Apache-2.0'
# Files that are not ours to label: a copy kept byte for byte, or a
# recorded input a golden test replays.  Extended regular expressions,
# matched against the whole path.
SKIP='^(tests/golden/.*/(cmd|expected)|tests/fuzz/corpus/.*)$'

mode=add
case ${1:-} in
--check) mode=check ;;
'') ;;
*) echo "usage: scripts/spdx.sh [--check]" >&2; exit 2 ;;
esac
[ -d .git ] || [ -f .git ] || {
	echo "spdx.sh: run it from the top of the work tree" >&2
	exit 2
}

# The files to label, one a line.
sources() {
	git ls-files -z | tr '\0' '\n' | grep -Ev "$SKIP" | while IFS= read -r f; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		case $f in
		*.c | *.h | *.sh | *.py | *.mjs | *.sql | Makefile | */Makefile)
			echo "$f" ;;
		*/*.* | *.*) ;;
		*)	# extensionless: a script when it starts with a shebang
			[ "$(head -c 2 "$f")" = '#!' ] && echo "$f" ;;
		esac
	done
}

# comment FILE: the line as FILE's language writes a comment.
comment() {
	case $1 in
	*.c | *.h) echo "/* $LINE */" ;;
	*.mjs) echo "// $LINE" ;;
	*.sql) echo "-- $LINE" ;;
	*) echo "# $LINE" ;;
	esac
}

# The line may follow a shebang and a coding line, so it is looked for
# in the first three lines.
has_line() {
	head -n 3 "$1" | grep -qF "$LINE"
}

# add FILE: the line after the shebang and coding line, else first.
add() {
	awk -v c="$(comment "$1")" '
		!done && NR == 1 && /^#!/ { print; next }
		!done && NR <= 2 && /^#.*coding[:=]/ { print; next }
		!done { print c; done = 1 }
		{ print }
		END { if (!done) print c }' "$1" > "$1.spdx.tmp"
	# keep the file's mode (scripts stay executable)
	cat "$1.spdx.tmp" > "$1"
	rm -f "$1.spdx.tmp"
}

# The work is one function called on the script's last line: the shell
# has read the whole script before it runs, so adding the line to this
# file itself cannot pull the text from under the running shell.
main() {
passed=0
failed=0
for f in $(sources); do
	if has_line "$f"; then
		passed=$((passed + 1))
	elif [ $mode = check ]; then
		echo "no SPDX line: $f (scripts/spdx.sh adds it)"
		failed=$((failed + 1))
	else
		add "$f"
		echo "added: $f"
		passed=$((passed + 1))
	fi
done
if [ $mode = check ]; then
	echo "[spdx] $passed passed, $failed failed"
	[ $failed -eq 0 ]
fi
}

main; exit $?
