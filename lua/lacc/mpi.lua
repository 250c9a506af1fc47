-- lacc.mpi: arrays distributed over MPI ranks, SPMD (every rank runs the same script,
-- `mpirun -n 4 lua5.4 prog.lua`).
-- Owns: distributed arrays (blocks of consecutive rows of the outermost dimension, one
-- per rank, any row counts), distributed programs (the combinators of lacc applied to
-- them, recorded, then run by `lacc.run` with backend "mpi"), and what each combinator
-- costs in communication: element-wise work stays on each rank, where a combinator needs
-- other ranks' rows the run materialises the rank's part (lacc's cpu backend, fused as
-- usual), exchanges bytes (lacc.mpi_core / lacc.mpi_ffi), and goes on locally. A failure
-- on any rank before an exchange or at the end of a run becomes the same error on every
-- rank (they agree first, on what each is about to do too: ranks out of step all raise).
-- Must not: run a combinator on gathered data behind the user's back (what is not
-- distributed is an error naming it), or reorder a fold's operands (partials are
-- combined in rank order: associativity only, as everywhere in lacc).
-- Its parts, in lua/lacc/mpi/: base.lua (MPI, agreement, distributions, distributed
-- arrays and programs, running them), then a file per family of combinators, each
-- filling base's handler table: folds.lua (folds, scans), segments.lua (segmented
-- folds and scans), stencil.lua, gather.lua
-- (backpermute, gather, permute, scatter, filter), rows.lua (reshape, transpose, row-wise
-- combinators, sorts), data.lua (scatter, from_blocks, load), control.lua (acond,
-- awhile), scalars.lua (lacc.the, lacc.shape, lacc.size of distributed programs where no
-- run has them yet), grads.lua (gradients of sums over distributed rows). This file
-- installs them.
local C = require "lacc.mpi.base"
local scalars = require "lacc.mpi.scalars"
for _, part in ipairs { "folds", "segments", "stencil", "gather", "rows", "data", "control" } do
  require("lacc.mpi." .. part)
end
local M, any_dist, explain_dist, fail, has_dist = C.M, C.any_dist, C.explain_dist, C.fail, C.has_dist
local is_dist, local_opts, plain, record, run_dist = C.is_dist, C.local_opts, C.plain, C.record, C.run_dist
local stand, unpack, wrapped = C.stand, C.unpack, C.wrapped

-- ---- install: lacc's combinators learn distributed arguments

local NOT_YET = { "partition", "iota", "vjp", "jvp" }

local function not_yet(name)
  return function()
    fail("%s: not yet distributed (lacc.mpi): gather the array first (a:allgather(), or " ..
         "lacc.run it and use :gather()); see the guide's \"Many machines: MPI\"", name)
  end
end

-- ---- arithmetic and lacc's scalar functions on distributed arrays

local exp = C.exp
local NOT_ELEMENTWISE = { constant = true, iterate = true, while_ = true }

local rank_of = C.rank_of
local arrayish = C.arrayish

-- scalar(args) element by element where some are distributed arrays: arrays of rank 0 (a
-- distributed fold's result, the same on every rank) read as scalars inside the function,
-- the others zipped (aligned: of one outer extent). No shapes broadcast beyond that.
local function dist_elementwise(lacc, scalar, args, n)
  local xs, slot, zero = {}, {}, {}
  for i = 1, n do
    if arrayish(args[i]) then
      if rank_of(args[i]) == 0 then zero[i] = true else xs[#xs + 1] = args[i]; slot[i] = #xs end
    end
  end
  if #xs == 0 then   -- every array of rank 0: zipped
    for i = 1, n do if zero[i] then xs[#xs + 1] = args[i]; slot[i] = #xs; zero[i] = nil end end
  end
  local fn = function(...)
    local vals, call = { ... }, {}
    for i = 1, n do
      if slot[i] then call[i] = vals[slot[i]]
      elseif zero[i] then call[i] = lacc.the(args[i])
      else call[i] = args[i] end
    end
    return scalar(unpack(call, 1, n))
  end
  if #xs == 1 then return lacc.map(fn, xs[1]) end
  return lacc.zipWith(fn, unpack(xs, 1, #xs))
end

local function install_arith(lacc)
  for _, name in ipairs(exp.surface) do
    local f = lacc[name]
    if f and not NOT_ELEMENTWISE[name] then
      lacc[name] = function(...)
        if not C.live then return f(...) end
        local n = select("#", ...)
        local args = { ... }
        if not any_dist(args, n) then
          if scalars.has_ds(args, n) then return scalars.apply(f, ...) end
          return f(...)
        end
        -- lacc.max(a) / lacc.min(a) of one array: its largest (smallest) element
        if n == 1 and (name == "max" or name == "min") then
          return name == "max" and lacc.maximum(...) or lacc.minimum(...)
        end
        return dist_elementwise(lacc, f, args, n)
      end
    end
  end
  local ops = { __add = exp.add, __sub = exp.sub, __mul = exp.mul, __div = exp.div, __mod = exp.imod,
                __pow = exp.pow, __idiv = exp.idiv }
  for _, mt in ipairs { C.DN, C.DA } do
    for k, op in pairs(ops) do mt[k] = function(a, b) return dist_elementwise(lacc, op, { a, b }, 2) end end
    mt.__unm = function(a) return dist_elementwise(lacc, exp.neg, { a }, 1) end
  end
end

-- ---- compile: a compiled function called with distributed arrays

-- The function of lacc.compile(fn, opts) (made by `compile`, one process's) called with a
-- distributed array among its arguments: fn applied to them as a distributed program
-- and run as lacc.run runs one (with opts: its backend "mpi" or "cpu", run's options),
-- its numbers given to fn as the one-process function gives them (rank-0 values of the
-- type opts.args declares, else bool, i64 for a 64-bit cdata, f64 taking the type of
-- what it meets, which must then be an integer). Each such call builds the distributed
-- program again (its ranks' kernels found in the caches); its results are distributed
-- arrays or, where replicated, host arrays, as lacc.run's.
local pack = C.pack
local function compiled(lacc, compile)
  local A = require("lacc.run").compile_args
  return function(fn, opts)
    local cf = compile(fn, opts)   -- its checks of fn and opts, and the one-process calls
    local declared = type(opts) == "table" and type(opts.args) == "table" and opts.args or {}
    local runopts
    if type(opts) == "table" then
      runopts = {}
      for k, v in pairs(opts) do if k ~= "args" then runopts[k] = v end end
    end
    return function(...)
      if not C.live then return cf(...) end
      local n = select("#", ...)
      local args = { ... }
      if not any_dist(args, n) then return cf(...) end
      local given, integral = {}, {}
      for i = 1, n do
        local a = args[i]
        if A.is_scalar(a) then
          local t = A.scalar_type(a, declared[i])
          given[i] = lacc.the(A.boxed(i, a, t))
          if not declared[i] and t == "f64" then
            given[i] = exp.weak_value(given[i], function() integral[i] = true end)
          end
        elseif is_dist(a) or C.array.is_array(a) then
          given[i] = a
        else
          fail("compiled function: argument %d is %s, expected a host array, a distributed array " ..
               "(lacc.mpi) or a number", i, C.util.describe(a))
        end
      end
      local res = pack(fn(unpack(given, 1, n)))
      if res.n == 0 then fail("compile: the function returned nothing; return array programs") end
      A.check_integral(integral, n, ...)
      return lacc.run(res.n > 1 and { unpack(res, 1, res.n) } or res[1], runopts)
    end
  end
end

function M.install(lacc)
  C.set_lacc(lacc)
  for k, v in pairs(lacc) do plain[k] = v end
  lacc.mpi = M
  -- element-wise: all arrays aligned, no communication
  local function element(name)
    local f = lacc[name]
    lacc[name] = function(...)
      if not C.live then return f(...) end
      local n = select("#", ...)
      local args = { ... }
      if not any_dist(args, n) then return f(...) end
      return record(name, 1, f, args, n)
    end
  end
  for _, name in ipairs { "map", "imap", "zipWith", "zip", "where", "compute" } do element(name) end
  for k = 3, 9 do element("zipWith" .. k) end
  local unzip = lacc.unzip
  lacc.unzip = function(xs, ...)
    if not C.live or not is_dist(xs) then return unzip(xs, ...) end
    local k = #{ plain.unzip(stand(xs)) }
    return record("unzip", k, unzip, { xs }, 1)
  end
  for name, w in pairs(wrapped) do
    local f = lacc[name]
    local call = function(...)
      if not C.live then return f(...) end
      local n = select("#", ...)
      local args = { ... }
      -- lists of arrays (concat's parts, acond's branches, awhile's arrays) count too
      if C.dist_in(args, n) then
        local r = { w(args, n) }
        if r[1] ~= nil then return unpack(r) end
      end
      return f(...)
    end
    if name == "all" then
      local mt = getmetatable(f)
      local old = mt.__call
      mt.__call = function(self, ...)
        if not C.live then return old(self, ...) end
        local n = select("#", ...)
        local args = { ... }
        if any_dist(args, n) then return w(args, n) end
        return old(self, ...)
      end
    else
      lacc[name] = call
    end
  end
  local function denying(name, f)
    local deny = not_yet(name)
    return function(...)
      if C.live and C.dist_in({ ... }, select("#", ...)) then deny() end
      return f(...)
    end
  end
  for _, name in ipairs(NOT_YET) do
    if lacc[name] then lacc[name] = denying(name, lacc[name]) end
  end
  -- gradients: the function grad and value_and_grad give, called with distributed arrays
  -- (a sum over their rows: lacc.mpi.grads)
  for name, with_value in pairs { grad = false, value_and_grad = true } do
    local f = lacc[name]
    lacc[name] = function(fn, argnums)
      local g = f(fn, argnums)   -- (its checks)
      local ks = type(argnums) == "number" and { argnums } or argnums or { 1 }
      return function(...)
        if not C.live then return g(...) end
        local n = select("#", ...)
        local args = { ... }
        if not any_dist(args, n) then return g(...) end
        -- (loaded at the first gradient of distributed arrays: not at every start)
        local out = require("lacc.mpi.grads").gradient(name, fn, ks, args, n)
        return unpack(out, with_value and 1 or 2, #out)
      end
    end
  end
  local write_png = lacc.write_png
  lacc.write_png = function(path, a)
    if is_dist(a) then return C.write_png(path, a, write_png) end
    return write_png(path, a)
  end
  install_arith(lacc)
  scalars.install(lacc)
  lacc.compile = compiled(lacc, lacc.compile)
  local run, explain = lacc.run, lacc.explain
  lacc.run = function(p, opts)
    if C.live and has_dist(p) then return run_dist(p, opts) end
    if type(opts) == "table" and opts.backend == "mpi" then
      return run(p, local_opts(opts))
    end
    return run(p, opts)
  end
  lacc.explain = function(p, opts)
    if C.live and has_dist(p) then return explain_dist(p) end
    return explain(p, opts)
  end
end

return M
