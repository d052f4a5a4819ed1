#!/usr/bin/env bash
# The Java artifact as a user gets it: a copy of the jar (tools/package.d/java.sh) in a fresh folder
# outside the repository, a program compiled and run with only that jar on the class path, no
# LD_LIBRARY_PATH and no -Djava.library.path. Prints "PASS case" / "FAIL case: why" per case.
#
# usage: tests/consumer/java/run.sh JAR
set -uo pipefail
jar=$(realpath "$1")
source=$(realpath "$(dirname "$0")/TrainLoop.java")
source "$(dirname "$0")/../cases.sh"  # $work, case_, $status
unset LD_LIBRARY_PATH JAVA_TOOL_OPTIONS
cd "$work"
mkdir lib classes
cp "$jar" lib/trainwatch.jar

metadata() {
  local version
  version=$(unzip -p lib/trainwatch.jar META-INF/maven/org.trainwatch/trainwatch/pom.properties |
            sed -n 's/^version=//p') || return 1
  unzip -p lib/trainwatch.jar META-INF/maven/org.trainwatch/trainwatch/pom.xml |
    grep -q "<version>$version</version>" || { echo "pom.xml does not state version $version"; return 1; }
  unzip -p lib/trainwatch.jar META-INF/native/linux-x86_64/libraries.txt | grep -qx libtrainwatch_jni.so ||
    { echo "no libtrainwatch_jni.so in libraries.txt"; return 1; }
}

case_ java-jar-metadata metadata
case_ java-consumer-compiles javac -cp lib/trainwatch.jar -d classes "$source"
run() { java -cp lib/trainwatch.jar:classes TrainLoop "$@"; }
case_ java-consumer-trains-100-steps run "$work/ckpt" 100 0
case_ java-consumer-resumes run "$work/ckpt" 150 100
case_ java-consumer-nan-loss-stops run "$work/nan" 100 0 40
# The libraries come from the jar, extracted into a private folder that the JVM removes at exit.
extracted() {
  local out
  mkdir -p "$work/tmp"
  out=$(java -Dorg.trainwatch.tmpdir="$work/tmp" -cp lib/trainwatch.jar:classes TrainLoop "$work/ckpt2" 1 0) || return 1
  # libtrainwatch and every library bundled with it (libhwy, libzstd) come from the extracted copies.
  grep -q "^loaded: $work/tmp/trainwatch-native-[^/]*/libtrainwatch.so.0$" <<< "$out" &&
    ! grep "^loaded: " <<< "$out" | grep -v "^loaded: $work/tmp/trainwatch-native-[^/]*/[^/]*$" ||
    { echo "libraries not loaded from the jar's extracted copies: $out"; return 1; }
  [ -z "$(ls -A "$work/tmp")" ] || { echo "left behind: $(ls -A "$work/tmp")"; return 1; }
}
case_ java-natives-extracted-from-jar-and-removed extracted
exit $status
