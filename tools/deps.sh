#!/bin/sh
# Install the Debian packages lacc needs, only those that are missing. Opt-in, never by
# default: `LACC_PEERS=1 sh tools/deps.sh` or `sh tools/deps.sh --peers` adds the libraries
# of the benchmarks' peer rows (issue 45, bench/peers/: PyTorch, Numba with its BLAS, Halide
# 14), which lacc itself never uses.
set -e
pkgs="lua5.4 liblua5.4-dev luajit libluajit-5.1-dev lua-busted ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo luarocks gcc make pkg-config libpng-dev python3 python3-numpy binutils lua-check cppcheck tcc openmpi-bin libopenmpi-dev"
[ "${1:-}" = --peers ] && LACC_PEERS=1
[ "${LACC_PEERS:-0}" = 1 ] && pkgs="$pkgs g++ python3-torch python3-numba libopenblas0-pthread libhalide14-0-dev"
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
