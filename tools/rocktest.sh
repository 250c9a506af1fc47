#!/bin/sh
# `luarocks test` (rockspec/lacc-scm-1.rockspec): build, then busted on Lua 5.4 and LuaJIT
# with the system's busted (no download) and .busted's paths. make test runs more.
set -e
make -s all
busted --lua=lua5.4 "$@"
busted --lua=luajit "$@"
