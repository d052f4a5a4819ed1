#!/usr/bin/env bash
# The Go module, as a Go user gets it (tools/package runs it; usable alone):
#   DIST/go/trainwatch/                    the module folder (go.mod, sources, README, LICENSE), for a
#                                          `replace trainwatch.dev/trainwatch => /path/to/it` directive;
#   DIST/go/proxy/trainwatch.dev/trainwatch/@v/  a file-system module proxy holding v<version> (.info,
#                                          .mod, .zip in the module zip layout), for
#                                          GOPROXY=file://DIST/go/proxy GONOSUMDB=trainwatch.dev go get trainwatch.dev/trainwatch@v<version>.
# The module carries no C library: cgo finds the installed one through `pkg-config trainwatch`.
# Tests that read the repository (the parity trace) stay out; the example test goes in.
# usage: tools/package.d/go.sh [DIST]   (default: dist/ of the repository)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dist="$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)"
header="$root/include/trainwatch/common.h"
part() { sed -n "s/^#define TW_VERSION_$1 \([0-9]*\)$/\1/p" "$header"; }
version="v$(part MAJOR).$(part MINOR).$(part PATCH)"
module="trainwatch.dev/trainwatch"

folder="$dist/go/trainwatch"
rm -rf "$folder" "$dist/go/proxy"
mkdir -p "$folder"
(cd "$root/bindings/go" && for f in go.mod README.md *.go *.c *.h; do
  case "$f" in *_test.go) [ "$f" = example_test.go ] || continue ;; esac
  cp "$f" "$folder/"
done)
cp "$root/LICENSE" "$folder/LICENSE"

proxy="$dist/go/proxy/$module/@v"
mkdir -p "$proxy"
cp "$folder/go.mod" "$proxy/$version.mod"
printf '{"Version":"%s","Time":"%s"}\n' "$version" "$(date -u -d "@${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)}" +%Y-%m-%dT%H:%M:%SZ)" \
  > "$proxy/$version.info"
echo "$version" > "$proxy/list"
# The module zip: every file under "<module>@<version>/" (golang.org/x/mod/zip's layout).
/usr/bin/python3 - "$folder" "$proxy/$version.zip" "$module@$version" <<'PY'
import os, sys, zipfile
folder, out, prefix = sys.argv[1:]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(os.listdir(folder)):
        info = zipfile.ZipInfo(f"{prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        with open(os.path.join(folder, name), "rb") as f:
            z.writestr(info, f.read(), zipfile.ZIP_DEFLATED)
PY
echo "go: $folder, $proxy/$version.zip"
