-- lacc: data-parallel arrays for Lua (the surface every user sees).
-- Owns: assembling the lacc table from the modules beside it: array programs and host
-- arrays (acc.lua, array.lua), the combinators of the guide, functions first, arrays last
-- (combinators.lua, permutations.lua, segments.lua, stencil.lua, collection.lua), the
-- scalar language (exp.lua), element and sum types (sums.lua, types.lua), and running
-- (run.lua), arithmetic on arrays (arith.lua), arrays over MPI ranks (mpi.lua). Must not: define anything itself.
local util = require "lacc.util"
local types = require "lacc.types"
local exp = require "lacc.exp"
local array = require "lacc.array"
local accs = require "lacc.acc"

local major, minor, patch = util.core.version()
local lacc = { _VERSION = ("lacc %d.%d.%d"):format(major, minor, patch), binding = util.core.binding }
lacc.version = util.readonly({ major = major, minor = minor, patch = patch }, "lacc.version")

for _, s in ipairs(types.scalars) do lacc[s] = s end
lacc.limits = util.readonly(util.limits, "lacc.limits")
lacc.fromtable = array.fromtable
lacc.frombytes, lacc.fromptr, lacc.load = array.frombytes, array.fromptr, array.load
lacc.read_png, lacc.set_int64 = array.read_png, array.set_int64
lacc.array = array.new
for _, name in ipairs(exp.surface) do lacc[name] = exp[name] end

-- The modules define their functions when loaded and call each other through lacc.
for _, module in ipairs { "acc", "combinators", "permutations", "segments", "stencil", "run",
                          "sums", "random", "sort" } do
  require("lacc." .. module).install(lacc)
end

-- Arithmetic on arrays (operators, the scalar functions element-wise, reductions as
-- methods, the constructors): after the combinators it builds on, before the wrappers.
require("lacc.arith").install(lacc)

-- Derivatives (vjp, grad, value_and_grad, jvp): they watch the calls a function makes
-- through lacc while it is traced.
require("lacc.grad").install(lacc)

-- Variant-wise collections: partition, merge, and the combinators that accept them
-- (last: it wraps lacc.map, lacc.fold, lacc.run, ...).
require("lacc.collection").install(lacc, accs.to_acc)

-- Arrays distributed over MPI ranks (last: it wraps the combinators for distributed
-- arguments; MPI itself is loaded by lacc.mpi.init).
require("lacc.mpi").install(lacc)

return lacc
