-- lacc.acc: array programs (Acc) and host arrays as values of the surface.
-- Owns: the Acc value (a core node with its element type and rank) and its metatable,
-- lifting host arrays with `use`, shape, size and indexing inside lambdas, the methods of
-- programs and host arrays (xs:map(f) == lacc.map(f, xs)), write_png of a program.
-- Must not: define combinators (combinators.lua and the modules beside it do).
local util = require "lacc.util"
local exp = require "lacc.exp"
local array = require "lacc.array"
local core, where, fail = util.core, util.where, util.fail
local unpack = table.unpack or unpack

local M = {}
local F = {}   -- what this module adds to lacc
-- lacc itself (M.install): methods call through it, so they meet collection.lua's wrappers.
local lacc

local A = {}            -- metatable of array programs
local amethods = {}

local function is_acc(x) return getmetatable(x) == A end
M.is_acc = is_acc

local function wrap(node)
  local _, t, rank = core.node_info(node)
  return setmetatable({ node = node, t = t, rank = rank }, A)
end
M.wrap = wrap

local use_cache = setmetatable({}, { __mode = "k" })

-- (w: the place its combinator found already, else where())
local function use_at(a, w)
  if is_acc(a) then return a end
  if not array.is_array(a) then fail("use: expected a host array, got %s", util.describe(a)) end
  array.alive(a, "use")
  local hit = use_cache[a]
  if hit then return hit end
  local r = M.remember(wrap(core.node_use(a, w or where())), a:shape())
  use_cache[a] = r
  return r
end
function F.use(a) return use_at(a) end

-- An array program of x (a program, or a host array lifted with use), else an error
-- naming the caller (at w, where its caller found its place already).
function M.to_acc(x, what, w)
  if is_acc(x) then return x end
  if array.is_array(x) then return use_at(array.alive(x, what), w) end
  fail("%s: expected an array, got %s", what, util.describe(x))
end
local to_acc = M.to_acc

-- The shapes known while the program is built: a host array's own, and that of a program
-- built from known shapes (arithmetic, maps and folds of them, constructors of numeric
-- extents). Others are known only when the program runs. A program traced for
-- lacc.compile reads parameters, whose shapes are never known: nothing here outlives the
-- arrays it was built from.
local known = setmetatable({}, { __mode = "k" })
function M.static_shape(x, what)
  if array.is_array(x) then return array.alive(x, what or "shape"):shape() end
  return known[x]
end
function M.remember(p, shape)
  known[p] = shape
  return p
end

-- A table of numeric extents, else nil.
function M.numeric_shape(sh)
  if type(sh) == "number" then sh = { sh } end
  if type(sh) ~= "table" or exp.is_exp(sh) then return nil end
  local r = {}
  for d = 1, #sh do
    local e = sh[d]
    if type(e) ~= "number" or e ~= math.floor(e) or e < 0 then return nil end
    r[d] = math.floor(e)
  end
  return r
end

-- A core combinator node op of args (nodes), as an array program.
-- (acc_at: at w, the place its combinator found already)
function M.acc_at(w, op, ...) return wrap(core.node_acc(op, w, ...)) end
function M.acc(op, ...) return M.acc_at(where(), op, ...) end

-- The programs that are a transpose of their input's last two dimensions (lacc.transpose,
-- a.T, a gradient's), by their object: matmul reads such a right-hand side through a
-- compute, where its tiles' lanes would otherwise each read a row of their own.
M.transposed = setmetatable({}, { __mode = "k" })

-- The programs that are a matrix product (lacc.matmul's), by their object: {a, b}, the
-- operands as read. A sum of such a product along its rows or columns is a product of a
-- sum (lacc.sum's rewrite).
M.products = setmetatable({}, { __mode = "k" })

-- The shape of an array as a table of i64 extents, for use inside programs.
function F.shape(xs)
  xs = to_acc(xs, "shape")
  local sh = exp.wrap(core.node_op("shape", where(), xs.node))
  if xs.rank == 1 then return { sh } end
  local r = {}
  for d = 1, xs.rank do r[d] = exp.prj(sh, d) end
  return r
end

function F.size(xs)
  xs = to_acc(xs, "size")
  return exp.wrap(core.node_op("size", where(), xs.node))
end

-- xs[i] / xs:at(i, j, ...) inside a lambda: 1-based indices.
local function index(xs, ...)
  xs = to_acc(xs, "index")
  local n = select("#", ...)
  if n ~= xs.rank then
    fail("index: expected %d indices for an array of rank %d, got %d", xs.rank, xs.rank, n)
  end
  local ix = exp.index_exp({ ... }, "index")
  if xs.rank == 0 then ix = exp.wrap(core.node_op("tuple", where())) end
  return exp.wrap(core.node_op("index", where(), xs.node, ix.node))
end
F.index = index

-- write_png(path, a): a host array (or a program, run first) as a PNG image.
function F.write_png(path, a)
  if type(path) ~= "string" then fail("write_png: expected a file name, got %s", type(path)) end
  if not array.is_array(a) then
    if not is_acc(a) then
      fail("write_png: expected a host array or an array program, got %s", util.describe(a))
    end
    a = lacc.run(a)
  end
  array.methods.write_png(a, path)
end

-- ---- methods: xs:map(f) == lacc.map(f, xs)

-- The array last, after the other arguments.
for _, name in ipairs { "map", "imap", "fold", "fold1", "sum", "product", "maximum", "minimum",
                        "scanl", "scanl1", "scanr", "scanr1", "scanl_", "scanr_", "and_", "or_", "compute", "awhile",
                        "backpermute", "reshape", "replicate", "transpose", "reverse", "rotate",
                        "flatten", "unzip" } do
  amethods[name] = function(self, ...)
    local n = select("#", ...)
    local args = { ... }
    args[n + 1] = self
    return lacc[name](unpack(args, 1, n + 1))
  end
end
-- xs:filter(p [, opts]) == lacc.filter(p, xs [, opts])
amethods.filter = function(self, p, opts) return lacc.filter(p, self, opts) end
-- The array first: xs:zip(ys), xs:zipWith(f, ys) == lacc.zipWith(f, xs, ys).
amethods.zip = function(self, ...) return lacc.zip(self, ...) end
for _, name in ipairs { "zipWith", "zipWith3", "zipWith4", "zipWith5", "zipWith6", "zipWith7",
                        "zipWith8", "zipWith9" } do
  amethods[name] = function(self, f, ...) return lacc[name](f, self, ...) end
end
amethods.slice = function(self, spec) return lacc.slice(self, spec) end
amethods.at = index
amethods.run = function(self, opts) return lacc.run(self, opts) end
amethods.explain = function(self) return lacc.explain(self) end

-- Fields computed from the array (a.T: arith.lua's), beside the methods.
local properties = {}

A.__index = function(xs, k)
  if type(k) == "number" or exp.is_exp(k) then return index(xs, k) end
  local p = properties[k]
  if p then return p(xs) end
  local m = amethods[k]
  if m == nil and array.methods[k] ~= nil then
    -- a host array's method on a program: the program has not run
    return function()
      fail("%s is a method of host arrays, and this is an array program: run it first, " ..
           "lacc.run(p):%s(...)", k, k)
    end
  end
  return m
end
A.__len = function()
  fail("# of an array program: it has no elements until it runs (lacc.size(p) is its size " ..
       "as an expression; #lacc.run(p) the result's element count)")
end
A.__tostring = function(xs) return ("lacc.acc<%s, rank %d>"):format(xs.t, xs.rank) end
A.__concat = function(a, b) return lacc.append(a, b) end

-- Host arrays answer to their own methods and to those of array programs.
local hmeta
local function host_metatable()
  hmeta = core.array_metatable()
  hmeta.__index = function(a, k)
    if type(k) == "number" then
      local v = core.array_get1(a, k)   -- a rank-1 scalar array's element, at once
      if v ~= nil then return v end
      v = array.row_get(a, k)   -- a tuple of scalars, at once
      if v ~= nil then return v end
      -- a[#a + 1] of a rank-1 array is nil, where Lua 5.4's ipairs stops
      if core.array_alive(a) and k == core.array_size(a) + 1 and #core.array_shape(a) == 1 then
        return nil
      end
      return array.methods.get(a, k)
    end
    if exp.is_exp(k) then return index(a, k) end
    local p = properties[k]
    if p then return p(a) end
    return array.methods[k] or amethods[k]
  end
  hmeta.__newindex = function(a, k, v)
    if type(k) ~= "number" then fail("cannot set field '%s' of an array", tostring(k)) end
    array.methods.set(a, k, v)
  end
  hmeta.__len = function(a) return array.methods.size(a) end
  hmeta.__pairs = array.methods.values
  hmeta.__ipairs = function(a)   -- LuaJIT's ipairs (Lua 5.4's goes through __index)
    if core.array_alive(a) and #core.array_shape(a) ~= 1 then
      fail("ipairs: expected an array of rank 1, got rank %d (a:values() and pairs(a) give " ..
           "every element with its linear index)", #core.array_shape(a))
    end
    return array.methods.values(a)
  end
  hmeta.__tostring = array.tostring
  hmeta.__concat = function(a, b) return lacc.append(a, b) end
  hmeta.__close = function(a) core.array_free(a) end
  hmeta.__name = "lacc.array"
end

-- More methods, fields and operators for programs and host arrays alike (arith.lua's:
-- reductions as methods, a.T, + - * / ...).
function M.extend(more_methods, more_properties, operators)
  for k, f in pairs(more_methods) do amethods[k] = f end
  for k, f in pairs(more_properties) do properties[k] = f end
  for k, f in pairs(operators) do
    A[k] = f
    hmeta[k] = f
  end
end

local install = util.installer(F, function(l) lacc = l end)
function M.install(l)
  install(l)
  host_metatable()
end

return M
