#!/usr/bin/env bash
# The Python package: a portable wheel and an sdist in dist/.
# The wheel: meson-python builds it (pyproject.toml), then repair_wheel.py does what `auditwheel
# repair` does — bundles the libraries libtrainwatch needs beyond glibc, libstdc++ and libgcc
# (Highway, zstd) under trainwatch/_libs with $ORIGIN run paths, and tags it manylinux_2_X_x86_64, X
# the newest glibc symbol version any file in it needs. The sdist: `python3 -m build --sdist`
# (Debian's python3-build), which builds the library from source on install.
set -euo pipefail
build=$TW_PACKAGE_ROOT/build-package-python raw=$TW_PACKAGE_ROOT/build-package-python-wheel
rm -rf "$raw"
# The build folder and its arguments are tools/check-pip-install's too, which then rebuilds nothing.
/usr/bin/python3 -m pip wheel --no-build-isolation --no-deps --no-index --quiet -w "$raw" \
  --config-settings=builddir="$build" --config-settings=setup-args=--werror "$TW_PACKAGE_ROOT" > "$build.log" 2>&1 || { tail -30 "$build.log"; exit 1; }
rm -f "$TW_PACKAGE_DIST"/trainwatch-*.whl
/usr/bin/python3 "$TW_PACKAGE_ROOT/tools/package.d/repair_wheel.py" "$raw"/trainwatch-*.whl "$TW_PACKAGE_DIST" \
  --forbid "$TW_PACKAGE_ROOT"
rm -f "$TW_PACKAGE_DIST/trainwatch-$TW_PACKAGE_VERSION.tar.gz"
/usr/bin/python3 -m build --sdist --no-isolation --outdir "$TW_PACKAGE_DIST" "$TW_PACKAGE_ROOT" >> "$build.log" 2>&1 ||
  { tail -30 "$build.log"; exit 1; }
echo "dist/trainwatch-$TW_PACKAGE_VERSION.tar.gz"
