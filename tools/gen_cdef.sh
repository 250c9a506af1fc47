#!/bin/sh
# Print lua/lacc/cdef.lua: the declarations of lacc.h, preprocessed, for ffi.cdef.
# Standard headers are replaced by the typedefs LuaJIT already knows.
set -e
hdr=${1:-core/include/lacc.h}
echo '-- Generated from core/include/lacc.h by tools/gen_cdef.sh: do not edit.'
echo 'return [['
sed -e '/#include/d' "$hdr" | ${CC:-cc} -E -P -x c - | sed -e '/^[[:space:]]*$/d'
echo ']]'
