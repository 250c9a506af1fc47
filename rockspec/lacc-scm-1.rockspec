rockspec_format = "3.0"
package = "lacc"
version = "scm-1"
source = { url = "git+file://." }
description = {
  summary = "Accelerate for Lua: a data-parallel array language",
  detailed = [[
    Collective array combinators with scalar functions written in Lua, traced into a typed
    AST in a C core that recovers sharing and runs the result. Lua 5.4 and LuaJIT.
  ]],
  license = "MIT",
}
dependencies = { "lua >= 5.1" }
local core_sources = {
  -- the core, part by part (docs/architecture.md)
  "core/run.c", "core/config.c", "core/base/array.c", "core/base/bulk.c", "core/base/ctx.c",
  "core/base/diskcache.c", "core/base/npy.c",
  "core/base/errors.c", "core/base/interrupt.c", "core/base/layout.c", "core/base/loop.c",
  "core/base/nodes.c", "core/base/png.c", "core/base/prim.c", "core/base/settings.c",
  "core/base/sha256.c", "core/base/text.c", "core/base/type.c", "core/front/awhile.c",
  "core/front/graph.c", "core/ast/explain.c", "core/ast/fusion.c", "core/ast/interp.c",
  "core/ast/sharing.c", "core/ast/simplify.c", "core/kir/checks.c", "core/kir/emit_c.c",
  "core/kir/exec.c", "core/kir/explain_plan.c", "core/kir/lower.c",
  "core/kir/bounds.c", "core/kir/hoist.c", "core/kir/lower_control.c", "core/kir/lower_elem.c", "core/kir/lower_fold.c",
  "core/kir/lower_ir.c", "core/kir/lower_pull.c", "core/kir/lower_push.c",
  "core/kir/lower_scalar.c", "core/kir/lower_scan.c", "core/kir/lower_tile.c", "core/kir/plan.c",
  "core/kir/ranges.c", "core/cpu/cpu.c",
  "core/cpu/pool.c",
  -- the OpenCL backend: built against Debian's opencl-headers when they are there (else
  -- without it: opencl/none.c), libOpenCL.so.1 opened at run time (no link dependency)
  "opencl/clrt.c", "opencl/exec.c", "opencl/hostfn.c", "opencl/none.c",
}
local lacc_core_sources = { "bindings/lacc_core.c" }
for i = 1, #core_sources do lacc_core_sources[i + 1] = core_sources[i] end
local defines = { "_DEFAULT_SOURCE", "_POSIX_C_SOURCE=200809L" }
local libraries = { "png16", "m", "dl", "pthread" }
build = {
  type = "builtin",
  copy_directories = { "docs", "examples", "types" },
  modules = {
    -- the C library for LuaJIT's FFI (found through package.cpath as liblacc.so)
    liblacc = { sources = core_sources, incdirs = { "core", "core/include" },
                defines = defines, libraries = libraries },
    -- the Lua 5.4 module, with the core linked in
    ["lacc.core"] = { sources = lacc_core_sources, incdirs = { "core", "core/include" },
                      defines = defines, libraries = libraries },
    lacc = "lua/lacc/init.lua",
    ["lacc.acc"] = "lua/lacc/acc.lua",
    ["lacc.array"] = "lua/lacc/array.lua",
    ["lacc.cdef"] = "lua/lacc/cdef.lua",
    ["lacc.collection"] = "lua/lacc/collection.lua",
    ["lacc.combinators"] = "lua/lacc/combinators.lua",
    ["lacc.exp"] = "lua/lacc/exp.lua",
    ["lacc.ffi_core"] = "lua/lacc/ffi_core.lua",
    ["lacc.permutations"] = "lua/lacc/permutations.lua",
    ["lacc.run"] = "lua/lacc/run.lua",
    ["lacc.segments"] = "lua/lacc/segments.lua",
    ["lacc.stencil"] = "lua/lacc/stencil.lua",
    ["lacc.sums"] = "lua/lacc/sums.lua",
    ["lacc.types"] = "lua/lacc/types.lua",
    ["lacc.util"] = "lua/lacc/util.lua",
  },
}
-- luarocks test: the busted suite, offline, with the system's busted (tools/rocktest.sh
-- builds the tree's library first; the .busted file gives the paths)
test = { type = "command", command = "sh tools/rocktest.sh" }
