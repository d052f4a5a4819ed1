#!/usr/bin/env bash
# Each public header compiles alone as strict C99 and as C++11 and C++17, with and without the
# experimental API (TW_EXPERIMENTAL_API; trainwatch/mpi.h only with it), the experimental declarations
# are hidden without the macro, and ignoring a returned tw_status is a warning in each (TW_NODISCARD)
# (TAP output).
# usage: check_header.sh INCLUDE_DIR
set -u
inc=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mapfile -t headers < <(cd "$inc" && find . -name '*.h' | sed 's|^\./||' | sort)
compilers=("gcc -x c -std=c99" "g++ -x c++ -std=c++11" "g++ -x c++ -std=c++17")
if command -v clang > /dev/null; then compilers+=("clang -x c -std=c99" "clang++ -x c++ -std=c++17"); fi
# -c, not -fsyntax-only: GCC reports unused results only when it generates code.
flags="-pedantic -Wall -Wextra -Werror -c -o /dev/null -I$inc"
# trainwatch/mpi.h (libtrainwatch_mpi's) includes MPI's own header: its include path comes from MPI.
mpi_flags="-DOMPI_SKIP_MPICXX $( (pkg-config --cflags ompi-c 2>/dev/null || mpicc --showme:compile 2>/dev/null) | sed "s/-I/-isystem /g")"
experimental=-DTW_EXPERIMENTAL_API
echo "1..$(( (2 * ${#headers[@]} + 1) * ${#compilers[@]} ))"
n=0
for cc in "${compilers[@]}"; do
  for h in "${headers[@]}"; do
    for macro in "" "$experimental"; do
      [ "$h" = "trainwatch/mpi.h" ] && [ -z "$macro" ] && continue  # it requires the macro (an #error)
      n=$((n + 1))
      printf '#include <%s>\nint main(void) { return tw_version_string() != 0 ? 0 : 1; }\n' "$h" > "$tmp/t"
      extra=""
      [ "$h" = "trainwatch/mpi.h" ] && extra=$mpi_flags
      if $cc $flags $macro $extra "$tmp/t" 2> "$tmp/err"; then
        echo "ok $n - <$h> compiles alone with $cc $macro"
      else
        echo "not ok $n - <$h> compiles alone with $cc $macro"; sed 's/^/# /' "$tmp/err"
      fi
    done
  done
  # The experimental tier is opt-in: a program using it compiles only with the macro, defined before
  # any trainwatch header (a later include of another header still brings it in).
  n=$((n + 1))
  printf '#include <trainwatch/common.h>\n#define TW_EXPERIMENTAL_API\n#include <trainwatch.h>\nint main(void) {\n  tw_collective c = TW_COLLECTIVE_INIT;\n  tw_checkpoint_save_fn f = 0;\n  tw_status (*set)(tw_options *, const tw_collective *, void *) = tw_options_set_collective;\n  tw_device d = TW_DEVICE_INIT;\n  tw_status (*dev)(const tw_device *, void *) = tw_set_device;\n  return c.world_size + (f != 0) + (set == 0) + d.device_type + (dev == 0) - 1;\n}\n' > "$tmp/t"
  if ! $cc $flags "$tmp/t" 2> "$tmp/err"; then
    echo "not ok $n - the experimental API is declared once TW_EXPERIMENTAL_API is defined, with $cc"; sed 's/^/# /' "$tmp/err"
  elif sed -i '2d' "$tmp/t" && $cc $flags "$tmp/t" 2> "$tmp/err"; then
    echo "not ok $n - the experimental API is hidden without TW_EXPERIMENTAL_API, with $cc (it compiled)"
  else
    echo "ok $n - the experimental API is hidden without TW_EXPERIMENTAL_API and declared with it, with $cc"
  fi
  # A status nobody reads must not compile under -Werror: TW_NODISCARD is in force.
  n=$((n + 1))
  printf '#include <trainwatch.h>\nint main(void) { tw_options *o = 0; tw_options_create(&o); return 0; }\n' > "$tmp/t"
  if $cc $flags "$tmp/t" 2> "$tmp/err"; then
    echo "not ok $n - ignoring a tw_status is a warning with $cc (it compiled cleanly)"
  elif grep -q 'unused-result\|nodiscard\|warn_unused_result' "$tmp/err"; then
    echo "ok $n - ignoring a tw_status is a warning with $cc"
  else
    echo "not ok $n - ignoring a tw_status is a warning with $cc (another error)"; sed 's/^/# /' "$tmp/err"
  fi
done
