#!/bin/sh
# The LuaRocks check of `make test` (issue 8): `luarocks make` into a temporary tree (no
# network: the rockspec builds from this checkout), then examples/dotp.lua run from that
# tree, outside the checkout, under Lua 5.4 (the C module) and LuaJIT (the FFI over the
# installed liblacc.so). Prints "rock: ok" or what failed; exits non-zero on failure.
LUA54=${LUA54:-lua5.4}
LUAJIT=${LUAJIT:-luajit}
root=$(pwd)
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
# every source of the library is in the rockspec (a missing one links, then fails to load)
missing=""
for f in core/*.c core/base/*.c core/front/*.c core/ast/*.c core/kir/*.c core/cpu/*.c opencl/*.c; do
  grep -q "\"$f\"" rockspec/lacc-scm-1.rockspec || missing="$missing $f"
done
if [ -n "$missing" ]; then
  echo "rock: rockspec/lacc-scm-1.rockspec lacks:$missing"
  exit 1
fi
if ! command -v luarocks >/dev/null 2>&1; then
  echo "rock: luarocks not found (sh tools/deps.sh installs it)"
  exit 1
fi
if ! luarocks --lua-version 5.4 --tree "$tree" make rockspec/lacc-scm-1.rockspec >"$tree/make.log" 2>&1; then
  tail -n 30 "$tree/make.log"
  echo "rock: luarocks make failed"
  exit 1
fi
paths=$(luarocks --lua-version 5.4 --tree "$tree" path --lr-path)
cpaths=$(luarocks --lua-version 5.4 --tree "$tree" path --lr-cpath)
status=0
for vm in "$LUA54" "$LUAJIT"; do
  # from /, with only the tree on the paths: nothing of the checkout is found
  out=$(cd / && env -u LACC_LIB LUA_PATH="$paths;;" LUA_CPATH="$cpaths;;" "$vm" "$root/examples/dotp.lua" 2>&1)
  case $out in
    *"dot product of 1000 elements: 1000"*"(expected 1000)"*) echo "rock: $vm ran examples/dotp.lua from the installed rock" ;;
    *) echo "$out" | tail -n 10; echo "rock: $vm failed from the installed rock"; status=1 ;;
  esac
done
[ $status -eq 0 ] && echo "rock: ok"
exit $status
