#!/bin/sh
# Install the Debian packages lacc needs, only those that are missing.
set -e
pkgs="lua5.4 liblua5.4-dev luajit libluajit-5.1-dev lua-busted ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo luarocks gcc make pkg-config libpng-dev python3 python3-numpy binutils lua-check cppcheck tcc openmpi-bin libopenmpi-dev"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
