#!/bin/sh
# The LuaRocks check of `make test`: the rockspecs agree with the tree (version, Lua
# files), then `luarocks make` for Lua 5.4 and for Lua 5.1 (LuaJIT's route) into temporary
# trees (no network: the rockspec builds this checkout), and examples/dotp.lua run from
# each tree, outside the checkout: lua5.4 on the first (the C module), luajit on the second
# (the FFI over the installed liblacc.so); and the C API installed in each tree (lacc.h,
# liblacc.so, lacc.pc): examples/c/saxpy.c built with pkg-config and run. Prints "rock: ok"
# or what failed; exits non-zero on failure.
LUA54=${LUA54:-lua5.4}
LUAJIT=${LUAJIT:-luajit}
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scm=rockspec/lacc-scm-1.rockspec
# one source of the version: lacc.h; the versioned rockspec is the scm one with it
v=$(sed -n 's/.*LACC_VERSION_MAJOR = \([0-9]*\), LACC_VERSION_MINOR = \([0-9]*\), LACC_VERSION_PATCH = \([0-9]*\).*/\1.\2.\3/p' core/include/lacc.h)
if [ -z "$v" ]; then echo "rock: no version in core/include/lacc.h"; exit 1; fi
sed "s/^version = \"scm-1\"/version = \"$v-1\"/" "$scm" > "$tmp/want.rockspec"
if ! cmp -s "$tmp/want.rockspec" "rockspec/lacc-$v-1.rockspec"; then
  echo "rock: rockspec/lacc-$v-1.rockspec is not $scm with version $v-1 (lacc.h's version):"
  diff -u "$tmp/want.rockspec" "rockspec/lacc-$v-1.rockspec" | head -n 20
  exit 1
fi
stale=$(ls rockspec | grep -v "^lacc-scm-1.rockspec$" | grep -v "^lacc-$v-1.rockspec$")
if [ -n "$stale" ]; then echo "rock: rockspecs of another version: $stale"; exit 1; fi
# every Lua file of the module is installed
missing=""
for f in lua/lacc/*.lua lua/lacc/*/*.lua; do
  grep -q "\"$f\"" "$scm" || missing="$missing $f"
done
if [ -n "$missing" ]; then echo "rock: $scm does not install:$missing"; exit 1; fi
if ! command -v luarocks >/dev/null 2>&1; then
  echo "rock: luarocks not found (sh tools/deps.sh installs it)"
  exit 1
fi
status=0
for route in "5.4 $LUA54" "5.1 $LUAJIT"; do
  set -- $route
  tree="$tmp/tree-$1"
  if ! luarocks --lua-version "$1" --tree "$tree" make "$scm" >"$tmp/make.log" 2>&1; then
    tail -n 30 "$tmp/make.log"
    echo "rock: luarocks --lua-version $1 make failed"
    exit 1
  fi
  paths=$(luarocks --lua-version "$1" --tree "$tree" path --lr-path)
  cpaths=$(luarocks --lua-version "$1" --tree "$tree" path --lr-cpath)
  # from /, with only the tree on the paths: nothing of the checkout is found
  out=$(cd / && env -u LACC_LIB LUA_PATH="$paths;;" LUA_CPATH="$cpaths;;" "$2" "$root/examples/dotp.lua" 2>&1)
  case $out in
    *"dot product of 1000 elements: 1000"*"(expected 1000)"*) echo "rock: $2 ran examples/dotp.lua from the Lua $1 tree" ;;
    *) echo "$out" | tail -n 10; echo "rock: $2 failed from the Lua $1 tree"; status=1 ;;
  esac
  [ -f "$tree/lib/luarocks/rocks-$1/lacc/scm-1/types/lacc.lua" ] ||
    { echo "rock: the Lua $1 tree lacks types/lacc.lua"; status=1; }
  # the C API from the tree alone: the shipped examples/c/saxpy.c built with pkg-config's
  # flags (lacc.pc: the tree's include/ and lib/), outside the checkout, then run
  ex="$tree/lib/luarocks/rocks-$1/lacc/scm-1/examples/c/saxpy.c"
  if flags=$(PKG_CONFIG_PATH="$tree/lib/pkgconfig" pkg-config --cflags --libs lacc 2>&1) &&
     (cd / && ${CC:-cc} -o "$tmp/saxpy-$1" "$ex" $flags) >"$tmp/cc.log" 2>&1; then
    out=$(cd / && env -u LD_LIBRARY_PATH "$tmp/saxpy-$1" 2>&1)
    case $out in
      *"saxpy[4] = 8.5 (expected 8.5); sum = 1249750.0 (expected 1249750.0)"*) echo "rock: examples/c/saxpy.c built and ran from the Lua $1 tree (pkg-config lacc)" ;;
      *) echo "$out" | tail -n 5; echo "rock: saxpy from the Lua $1 tree failed"; status=1 ;;
    esac
  else
    echo "$flags"; tail -n 10 "$tmp/cc.log"; echo "rock: examples/c/saxpy.c does not build from the Lua $1 tree"
    status=1
  fi
done
# luarocks make builds under build/rock: nothing is left in the checkout's own folders
left=$(git status --porcelain --ignored 2>/dev/null | grep -v ' build' | grep '^!!' | head -n 3)
if [ -n "$left" ]; then echo "rock: luarocks make left files in the checkout: $left"; status=1; fi
[ $status -eq 0 ] && echo "rock: ok"
exit $status
