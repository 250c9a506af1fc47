-- lacc's rockspec. lacc-0.1.0-1.rockspec is this file with its version line changed (the
-- version is lacc.h's; tools/rockcheck.sh checks both). Both build this checkout:
--   luarocks --lua-version 5.4 make rockspec/lacc-scm-1.rockspec   (lacc.core and liblacc)
--   luarocks --lua-version 5.1 make rockspec/lacc-scm-1.rockspec   (LuaJIT: liblacc, FFI)
rockspec_format = "3.0"
package = "lacc"
version = "scm-1"
source = { url = "git+file://." }
description = {
  summary = "Accelerate for Lua: a data-parallel array language",
  detailed = [[
    Collective array combinators with scalar functions written in Lua, traced into a typed
    AST in a C core that recovers sharing, fuses and runs the result on a multithreaded
    CPU backend or OpenCL. Lua 5.4 (a C module) and LuaJIT (the FFI over the same library).
  ]],
  license = "MIT",
}
-- Lua 5.4, or Lua 5.1's API for LuaJIT (under PUC Lua 5.1 `require "lacc"` says it needs
-- LuaJIT or 5.4: LuaRocks cannot tell the two 5.1 interpreters apart in a dependency).
dependencies = { "lua >= 5.1, < 5.5, ~= 5.2, ~= 5.3" }
-- No external_dependencies: LuaRocks would make each one mandatory, and both of lacc's are
-- optional. The build takes libpng (write_png, read_png) and the OpenCL headers (the
-- opencl backend; libOpenCL.so.1 is opened at run time) where their headers are found, and
-- without them builds a lacc that says what it lacks (Debian: libpng-dev, opencl-headers);
-- with mpicc (Open MPI: openmpi-bin, libopenmpi-dev) also lacc.mpi's library.
build = {
  type = "make",
  -- the Makefile's rock and rock-install targets: the core compiled once, into liblacc.so
  build_target = "rock",
  build_variables = { CFLAGS = "$(CFLAGS)", LUA = "$(LUA)", LUA_INCDIR = "$(LUA_INCDIR)" },
  install_target = "rock-install",
  install_variables = { LIBDIR = "$(LIBDIR)", LUA_INCDIR = "$(LUA_INCDIR)" },
  install = {
    lua = {
      lacc = "lua/lacc/init.lua",
      ["lacc.acc"] = "lua/lacc/acc.lua",
      ["lacc.arith"] = "lua/lacc/arith.lua",
      ["lacc.grad"] = "lua/lacc/grad.lua",
      ["lacc.array"] = "lua/lacc/array.lua",
      ["lacc.cdef"] = "lua/lacc/cdef.lua",
      ["lacc.collection"] = "lua/lacc/collection.lua",
      ["lacc.combinators"] = "lua/lacc/combinators.lua",
      ["lacc.exp"] = "lua/lacc/exp.lua",
      ["lacc.ffi_core"] = "lua/lacc/ffi_core.lua",
      ["lacc.ffi_entries"] = "lua/lacc/ffi_entries.lua",
      ["lacc.mpi_entries"] = "lua/lacc/mpi_entries.lua",
      ["lacc.mpi"] = "lua/lacc/mpi.lua",
      ["lacc.mpi.base"] = "lua/lacc/mpi/base.lua",
      ["lacc.mpi.control"] = "lua/lacc/mpi/control.lua",
      ["lacc.mpi.scalars"] = "lua/lacc/mpi/scalars.lua",
      ["lacc.mpi.grads"] = "lua/lacc/mpi/grads.lua",
      ["lacc.mpi.simulated"] = "lua/lacc/mpi/simulated.lua",
      ["lacc.mpi.segments"] = "lua/lacc/mpi/segments.lua",
      ["lacc.mpi.data"] = "lua/lacc/mpi/data.lua",
      ["lacc.mpi.folds"] = "lua/lacc/mpi/folds.lua",
      ["lacc.mpi.gather"] = "lua/lacc/mpi/gather.lua",
      ["lacc.mpi.rows"] = "lua/lacc/mpi/rows.lua",
      ["lacc.mpi.stencil"] = "lua/lacc/mpi/stencil.lua",
      ["lacc.mpi_cdef"] = "lua/lacc/mpi_cdef.lua",
      ["lacc.mpi_ffi"] = "lua/lacc/mpi_ffi.lua",
      ["lacc.permutations"] = "lua/lacc/permutations.lua",
      ["lacc.random"] = "lua/lacc/random.lua",
      ["lacc.run"] = "lua/lacc/run.lua",
      ["lacc.segments"] = "lua/lacc/segments.lua",
      ["lacc.sort"] = "lua/lacc/sort.lua",
      ["lacc.stencil"] = "lua/lacc/stencil.lua",
      ["lacc.sums"] = "lua/lacc/sums.lua",
      ["lacc.types"] = "lua/lacc/types.lua",
      ["lacc.util"] = "lua/lacc/util.lua",
    },
  },
  -- the guide, the examples and the LuaLS definitions (types/lacc.lua) go with the rock
  copy_directories = { "docs", "examples", "types" },
}
-- luarocks test: the busted suite, offline, with the system's busted. Not type "busted":
-- LuaRocks would install busted as a rock (a download) when none is in its trees.
-- tools/rocktest.sh builds the checkout and runs what make test runs.
test = { type = "command", command = "sh tools/rocktest.sh" }
