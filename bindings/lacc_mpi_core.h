/* lacc_mpi_core.h: what the files of the Lua 5.4 module lacc.mpi_core share
 * (lacc_mpi_core.c: the byte collectives and the module; mpi_entries.c: the plain entry
 * points, generated from mpi/entries.def). */
#ifndef LACC_BINDING_MPI_CORE_H
#define LACC_BINDING_MPI_CORE_H

#include <lauxlib.h>
#include <lua.h>
#include "lacc_mpi.h"

#define LM_HIDDEN __attribute__((visibility("hidden")))
/* lacc_mpi_error's message as a Lua error. */
LM_HIDDEN int lm_raise(lua_State *L);
LM_HIDDEN extern const luaL_Reg lm_entry_funcs[];

#endif
