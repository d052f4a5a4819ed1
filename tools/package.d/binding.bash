# Sourced by java.sh and csharp.sh: what a binding's package step starts with. Named .bash, not .sh,
# because tools/package runs every tools/package.d/*.sh as a step.
# shellcheck shell=bash disable=SC2034  # build, dist, version, stage: read by the sourcing step

# binding_package_setup OPTION TARGET… -- BUILD_DIR DIST_DIR: sets $build and $dist (absolute; defaults
# build and dist), $version (the header's), builds the TARGETs (paths under BUILD_DIR, the first the
# one that tells whether the build has the binding: else a clear error naming -DOPTION=enabled) and
# makes $stage, a scratch folder removed at exit.
binding_package_setup() {
  local option=$1 targets=()
  shift
  while [ "$1" != -- ]; do targets+=("$1"); shift; done
  shift
  build=$(realpath "${1:-build}")
  mkdir -p "${2:-dist}"
  dist=$(realpath "${2:-dist}")
  version=$(sed -n 's/^#define TW_VERSION_STRING "\(.*\)"$/\1/p' include/trainwatch/common.h)
  ninja -C "$build" -t query "${targets[0]}" > /dev/null 2>&1 ||
    { echo "$0: $build has no ${targets[0]}: configure it with -D$option=enabled" >&2; exit 1; }
  ninja -C "$build" "${targets[@]}" > /dev/null
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
}
