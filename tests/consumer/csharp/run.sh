#!/usr/bin/env bash
# The C# artifact as a user gets it: the NuGet package's contents (tools/package.d/csharp.sh) in a
# Mono application folder outside the repository — TrainWatch.dll and its .config beside the program,
# the native libraries in runtimes/linux-x64/native as the package has them (or all beside the
# assembly) — run with no LD_LIBRARY_PATH and no MONO_PATH. Prints "PASS case" / "FAIL case: why" per case.
#
# usage: tests/consumer/csharp/run.sh NUPKG
set -uo pipefail
nupkg=$(realpath "$1")
source=$(realpath "$(dirname "$0")/TrainLoop.cs")
source "$(dirname "$0")/../cases.sh"  # $work, case_, $status
unset LD_LIBRARY_PATH MONO_PATH MONO_CONFIG
cd "$work"
mkdir package app
unzip -q "$nupkg" -d package

version=$(sed -n 's|.*<version>\(.*\)</version>.*|\1|p' package/TrainWatch.nuspec 2>/dev/null)
metadata() {
  [ -n "$version" ] || { echo "no version in TrainWatch.nuspec"; return 1; }
  for f in TrainWatch.nuspec lib/netstandard2.0/TrainWatch.dll lib/netstandard2.0/TrainWatch.dll.config runtimes/linux-x64/native/libtrainwatch_csharp.so \
           runtimes/linux-x64/native/libtrainwatch.so.0; do
    [ -f "package/$f" ] || { echo "no $f in the package"; return 1; }
  done
}

# An application folder as NuGet lays one out: the assembly beside the program, runtimes/ kept.
cp package/lib/netstandard2.0/* app/
cp -r package/runtimes app/
case_ csharp-nupkg-metadata metadata
case_ csharp-consumer-compiles mcs -nologo -warnaserror+ -out:app/TrainLoop.exe -r:app/TrainWatch.dll "$source"
assembly_version() {  # the assembly's version is the package's (major.minor.patch.0)
  local assembly
  assembly=$(mono app/TrainLoop.exe --version) || return 1
  [ "$assembly" = "$version.0" ] || { echo "TrainWatch.dll is version $assembly, the package $version"; return 1; }
}
case_ csharp-assembly-version-is-the-package-version assembly_version

# run FOLDER ARGS…: the program of that folder; checks that libtrainwatch and every library bundled
# with it (libhwy, libzstd) came from the folder.
run() {
  local folder=$1 out; shift
  out=$(mono "$folder/TrainLoop.exe" "$@") || { echo "$out"; return 1; }
  grep -q "^loaded: $folder/.*libtrainwatch.so.0$" <<< "$out" && ! grep "^loaded: " <<< "$out" | grep -v "^loaded: $folder/" ||
    { echo "libraries not loaded from $folder: $out"; return 1; }
}
case_ csharp-consumer-trains-100-steps run "$work/app" "$work/ckpt" 100 0
case_ csharp-consumer-resumes run "$work/app" "$work/ckpt" 150 100
case_ csharp-consumer-nan-loss-stops run "$work/app" "$work/nan" 100 0 40

# The native libraries flattened beside the assembly, without the .config mapping them into runtimes/,
# load by the runtime's own search of the assembly's folder.
mkdir flat
cp app/TrainLoop.exe app/TrainWatch.dll app/runtimes/linux-x64/native/* flat/
case_ csharp-consumer-flat-folder run "$work/flat" "$work/flat-ckpt" 100 0

# missing FILE NEEDER: without FILE, the error names it and the library that needs it (not only the
# glue, which is all the runtime's DllNotFoundException would say). A dependency of libtrainwatch is
# made missing by adding one that no system has (the real ones are installed on a build machine).
missing() {
  local file=$1 needer=$2 out native=broken/runtimes/linux-x64/native
  rm -rf broken && cp -r app broken
  if [ -f "$native/$file" ]; then rm "$native/$file"; else patchelf --add-needed "$file" "$native/$needer"; fi
  if out=$(mono broken/TrainLoop.exe "$work/broken-ckpt" 1 0 2>&1); then
    echo "ran without $file"; return 1
  fi
  grep -qF "$file not found (needed by $needer" <<< "$out" || { echo "$out"; return 1; }
}
case_ csharp-missing-libtrainwatch-is-named missing libtrainwatch.so.0 libtrainwatch_csharp.so
case_ csharp-missing-dependency-is-named missing libtrainwatch-absent-dependency.so.1 libtrainwatch.so.0
exit $status
