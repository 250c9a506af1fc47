#!/bin/sh
# Print a header's declarations, preprocessed, for ffi.cdef: lua/lacc/cdef.lua from
# core/include/lacc.h (the default), lua/lacc/mpi_cdef.lua from mpi/lacc_mpi.h.
# Standard headers are replaced by the typedefs LuaJIT already knows.
set -e
hdr=${1:-core/include/lacc.h}
echo "-- Generated from $hdr by tools/gen_cdef.sh: do not edit."
echo 'return [['
sed -e '/#include/d' "$hdr" | ${CC:-cc} -E -P -x c - | sed -e '/^[[:space:]]*$/d'
echo ']]'
