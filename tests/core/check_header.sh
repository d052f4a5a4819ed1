#!/usr/bin/env bash
# The public header compiles alone as strict C99 and as C++ (TAP output).
# usage: check_header.sh INCLUDE_DIR
set -u
inc=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '#include <trainwatch.h>\nint main(void) { return tw_version_number() == TW_VERSION_NUMBER ? 0 : 1; }\n' > "$tmp/t.c"
cp "$tmp/t.c" "$tmp/t.cc"
echo "1..2"
if gcc -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$inc" "$tmp/t.c" 2> "$tmp/c.err"; then
  echo "ok 1 - header compiles with gcc -std=c99 -pedantic -Wall -Wextra -Werror"
else
  echo "not ok 1 - header compiles as C99"; sed 's/^/# /' "$tmp/c.err"
fi
if g++ -std=c++11 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$inc" "$tmp/t.cc" 2> "$tmp/cxx.err"; then
  echo "ok 2 - header compiles with g++ -std=c++11 -pedantic -Wall -Wextra -Werror"
else
  echo "not ok 2 - header compiles as C++"; sed 's/^/# /' "$tmp/cxx.err"
fi
