#!/usr/bin/env bash
# Builds the C# artifact, DIST/TrainWatch.<version>.nupkg (a zip): TrainWatch.nuspec,
# lib/netstandard2.0/TrainWatch.dll (assembly version = the library's) with TrainWatch.dll.config (Mono's
# dllmap to the glue in runtimes/linux-x64/native under the assembly's folder), and in
# runtimes/linux-x64/native/ the glue libtrainwatch_csharp.so with libtrainwatch and the libraries it
# needs beyond glibc and libstdc++ (bundle.py; $ORIGIN run paths: they find each other wherever the
# folder is), with the bundled libraries' licenses in licenses/.
#
# usage: tools/package.d/csharp.sh [BUILD_DIR [DIST_DIR]]   (defaults: build, dist; BUILD_DIR
#        configured with -Dcsharp=enabled). Prints the package's path.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/package.d/binding.bash
binding_package_setup csharp bindings/csharp/TrainWatch.dll bindings/csharp/libtrainwatch_csharp.so -- "$@"
mkdir -p "$stage/lib/netstandard2.0" "$stage/runtimes/linux-x64/native"
cp "$build/bindings/csharp/TrainWatch.dll" bindings/csharp/package/TrainWatch.dll.config "$stage/lib/netstandard2.0/"
/usr/bin/python3 tools/package.d/bundle.py "$stage/runtimes/linux-x64/native" \
  "$build/bindings/csharp/libtrainwatch_csharp.so" "$build/src/libtrainwatch.so" \
  --licenses "$stage/licenses" > /dev/null
cp LICENSE "$stage/LICENSE.txt"
sed "s/@VERSION@/$version/" bindings/csharp/package/TrainWatch.nuspec.in > "$stage/TrainWatch.nuspec"
# The package's parts as Open Packaging Conventions list them: one default content type per extension.
{
  echo '<?xml version="1.0" encoding="utf-8"?>'
  echo '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
  find "$stage" -type f -name '*.*' | sed 's/.*\.//' | sort -u |
    sed 's|.*|  <Default Extension="&" ContentType="application/octet" />|'
  echo '</Types>'
} > "$stage/[Content_Types].xml"

nupkg="$dist/TrainWatch.$version.nupkg"
rm -f "$nupkg"
# A fixed date: the same sources give the same package.
find "$stage" -exec touch -h -d 1980-01-02T00:00:00Z {} +
(cd "$stage" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | zip -X -q -D "$nupkg" -@)
echo "$nupkg"
