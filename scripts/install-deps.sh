#!/usr/bin/env bash
# Installs, from Debian 12, every package mlasim builds against. Idempotent: does nothing when all are present.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config clang-format git
  qt6-base-dev qt6-charts-dev qt6-svg-dev libgl-dev libqt6opengl6-dev libxkbcommon-dev
  libboost-graph-dev libeigen3-dev libcli11-dev libfmt-dev nlohmann-json3-dev libtbb-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  hipcc libamdhip64-dev
  clang-15 libclang-common-15-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
