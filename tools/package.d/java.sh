#!/usr/bin/env bash
# Builds the Java artifact, DIST/trainwatch-<version>.jar (Maven coordinates org.trainwatch:trainwatch):
# the classes of BUILD's trainwatch.jar; the JNI library with libtrainwatch and the libraries it needs
# beyond glibc and libstdc++ in META-INF/native/linux-x86_64/ (bundle.py: $ORIGIN run paths, and
# libraries.txt giving the order NativeLibraries.java loads them in after extracting them); the bundled
# libraries' licenses in META-INF/licenses/; pom.xml and pom.properties in
# META-INF/maven/org.trainwatch/trainwatch/.
#
# usage: tools/package.d/java.sh [BUILD_DIR [DIST_DIR]]   (defaults: build, dist; BUILD_DIR configured
#        with -Djava=enabled). Prints the jar's path.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/package.d/binding.bash
binding_package_setup java bindings/java/trainwatch.jar bindings/java/libtrainwatch_jni.so -- "$@"
native=$stage/META-INF/native/linux-x86_64
mkdir -p "$native"
/usr/bin/python3 tools/package.d/bundle.py "$native" "$build/bindings/java/libtrainwatch_jni.so" \
  "$build/src/libtrainwatch.so" --licenses "$stage/META-INF/licenses" --order "$native/libraries.txt" \
  > /dev/null
cp LICENSE "$stage/META-INF/LICENSE"
(cd "$stage" && unzip -q "$build/bindings/java/trainwatch.jar" -x META-INF/MANIFEST.MF)

maven=$stage/META-INF/maven/org.trainwatch/trainwatch
mkdir -p "$maven"
sed "s/@VERSION@/$version/" bindings/java/package/pom.xml.in > "$maven/pom.xml"
printf 'groupId=org.trainwatch\nartifactId=trainwatch\nversion=%s\n' "$version" > "$maven/pom.properties"
printf '%s\n' "Implementation-Title: trainwatch" "Implementation-Version: $version" \
  "Automatic-Module-Name: org.trainwatch" > "$stage/manifest.txt"

jar="$dist/trainwatch-$version.jar"
rm -f "$jar"
# A fixed date: the same sources give the same jar.
jar --create --file "$jar" --manifest "$stage/manifest.txt" --date=1980-01-02T00:00:00Z -C "$stage" META-INF \
  -C "$stage" org
echo "$jar"
