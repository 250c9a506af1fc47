#!/bin/sh
# `luarocks test` (rockspec/*.rockspec): the suite of `make test`, offline, with the
# system's busted on Lua 5.4 and LuaJIT (tools/runtests.sh: busted's TAP output counted,
# the OpenCL runs sampled as in make test). Arguments are ignored.
set -e
make -s --no-print-directory all
sh tools/runtests.sh
