-- lacc.combinators: the core combinators of the guide (functions first, arrays last).
-- Owns: introduction (unit, generate, fill), element-wise (map, zipWith, zip, unzip,
-- imap), reductions and scans along the innermost dimension, whole-array reductions,
-- the matrix product, compute, acond, awhile, and the core's permutations (backpermute,
-- permute, reshape).
-- Derived combinators live beside it: permutations.lua, segments.lua, stencil.lua.
-- Must not: type-check beyond what gives a better message (the core checks).
local types = require "lacc.types"
local util = require "lacc.util"
local exp = require "lacc.exp"
local array = require "lacc.array"
local accs = require "lacc.acc"
local core, where, fail = util.core, util.where, util.fail
local to_acc, acc, acc_at, wrap, is_acc = accs.to_acc, accs.acc, accs.acc_at, accs.wrap, accs.is_acc
local static_shape, remember = accs.static_shape, accs.remember
local unpack = table.unpack or unpack
local MAX_ZIP = util.limits.zip

local M = {}
local F = {}   -- what this module adds to lacc
-- lacc itself (M.install): calls go through it, so they meet collection.lua's wrappers.
local lacc

-- ---- introduction

function F.unit(e)
  return acc("unit", exp.lift(e, nil, "unit").node)
end

function F.generate(shape, f)
  local sh = exp.shape_exp(shape, "generate")
  local rank = type(shape) == "table" and not exp.is_exp(shape) and #shape or 1
  local w = where()   -- (once: the lambda's and the node's place)
  local lam = exp.lambda(f, { sh.t }, nil, function(v) return exp.index_args(v[1], rank) end,
    "generate", w)
  return remember(acc_at(w, "generate", sh.node, lam), accs.numeric_shape(shape))
end

function F.fill(shape, e)
  e = exp.lift(e, nil, "fill")
  return lacc.generate(shape, function() return e end)
end

-- iota(n [, type]): 1, 2, ..., n (rank 1; i64 unless a numeric type is given).
function F.iota(n, t)
  t = t or "i64"
  if not types.is_scalar[t] or t == "bool" then
    fail("iota: expected a numeric element type, got %s", util.show(t))
  end
  if not exp.is_exp(n) and (not util.is_integer(n) or n < 0) then
    fail("iota: expected a count (an integer, 0 or more), got %s", util.show(n))
  end
  return lacc.generate({ n }, function(i) return exp.cast(i, t) end)
end

-- ---- element-wise

-- The shape of a map of arrays[1 .. n] (their intersection), where each's is known.
local function meet_shapes(arrays, n)
  local r
  for i = 1, n do
    local s = static_shape(arrays[i])
    if s == nil then return nil end
    if r == nil then
      r = {}
      for d = 1, #s do r[d] = s[d] end
    else
      for d = 1, #r do r[d] = math.min(r[d], s[d]) end
    end
  end
  return r
end

-- The map of f over arrays[1..n] (what names the caller for messages).
local function zipwith(what, f, arrays, n)
  n = n or #arrays
  if n == 0 then fail("%s: expected at least one array", what) end
  -- the map node holds the function and the arrays: limits.args kids at most
  if n > MAX_ZIP then
    fail("%s: at most %d arrays, got %d (zip some into tuples first)", what, MAX_ZIP, n)
  end
  local w = where()   -- (once: the arrays', the lambda's and the node's place)
  local nodes, ts = {}, {}
  local rank
  for i = 1, n do
    local xs = to_acc(arrays[i], what, w)
    rank = rank or xs.rank
    if xs.rank ~= rank then
      fail("%s: arrays of one rank expected, got ranks %d and %d", what, rank, xs.rank)
    end
    nodes[i], ts[i] = xs.node, xs.t
  end
  local lam = exp.lambda(f, ts, nil, nil, what, w)
  return remember(acc_at(w, "map", lam, unpack(nodes, 1, n)), meet_shapes(arrays, n))
end
M.zipwith = zipwith

function F.map(f, xs) return zipwith("map", f, { xs }, 1) end

function F.zipWith(f, ...)
  local n = select("#", ...)
  if n < 2 then fail("zipWith: expected two arrays or more, got %d", n) end
  return zipwith("zipWith", f, { ... }, n)
end
for n = 3, 9 do
  F["zipWith" .. n] = function(f, ...)
    local got = select("#", ...)
    if got ~= n then fail("zipWith%d: expected %d arrays, got %d", n, n, got) end
    return zipwith("zipWith" .. n, f, { ... }, n)
  end
end

function F.zip(...)
  return zipwith("zip", function(...) return exp.tuple(...) end, { ... }, select("#", ...))
end

function F.unzip(xs)
  xs = to_acc(xs, "unzip")
  local t = types.parse(xs.t)
  if t.kind ~= "tuple" then fail("unzip: expected an array of tuples, got %s", xs.t) end
  local r = {}
  for i = 1, #t.fields do r[i] = lacc.map(function(p) return p[i] end, xs) end
  return unpack(r, 1, #t.fields)
end

-- imap(f, xs): f receives the 1-based indices, then the element.
function F.imap(f, xs)
  xs = to_acc(xs, "imap")
  if type(f) ~= "function" then fail("imap: expected a function, got %s", type(f)) end
  if xs.rank == 0 then return lacc.map(f, xs) end
  -- the positions zipped with the elements rather than xs[i]: a zip reads the element
  -- with no bounds check, so its code can stay branch-free (folds in strips)
  local r = xs.rank
  local pos = lacc.generate(lacc.shape(xs), function(...)
    if r == 1 then return (...) end
    return lacc.tuple(...)
  end)
  return lacc.zipWith(function(ix, x)
    local args = {}
    for d = 1, r do args[d] = r == 1 and ix or ix[d] end
    args[r + 1] = x
    return f(unpack(args, 1, r + 1))
  end, pos, xs)
end

-- ---- dimensions: 1 is the outermost, xs.rank the innermost (the default)

-- The dimension of an options table ({dim = d}) or a number, checked against xs.
local function dimension(what, xs, opts, default)
  local d = opts
  if type(opts) == "table" and not exp.is_exp(opts) and getmetatable(opts) == nil then
    for k in pairs(opts) do
      if k ~= "dim" then fail("%s: unknown option '%s' (expected dim)", what, tostring(k)) end
    end
    d = opts.dim
  end
  if d == nil then return default end
  if not util.is_integer(d) or d < 1 or d > xs.rank then
    fail("%s: the dimension must be an integer from 1 to %d (the array's rank), got %s", what,
         xs.rank, util.show(d))
  end
  return d
end

-- xs with its dimension `from` moved to position `to`, the others in order: a backpermute,
-- so the fold or scan that reads it pulls its elements (the lowering tiles a fold whose
-- rows lie side by side in memory: an outer-dimension fold keeps one accumulator per
-- column).
local function move_dim(xs, from, to)
  if from == to then return xs end
  local r, s = xs.rank, lacc.shape(xs)
  local order = {}   -- order[k]: the dimension of xs at the result's position k
  for e = 1, r do if e ~= from then order[#order + 1] = e end end
  table.insert(order, to, from)
  local shape = {}
  for k = 1, r do shape[k] = s[order[k]] end
  return lacc.backpermute(shape, function(...)
    local ix, src = { ... }, {}
    for k = 1, r do src[order[k]] = ix[k] end
    return unpack(src, 1, r)
  end, xs)
end
local function innermost(xs, d) return move_dim(xs, d, xs.rank) end
local function from_innermost(ys, d) return move_dim(ys, ys.rank, d) end

-- ---- reductions along a dimension (the innermost unless opts.dim says otherwise)

-- The shape known of xs without dimension d, or nil.
local function without_dim(xs, d)
  local s = static_shape(xs)
  if s == nil then return nil end
  local r = {}
  for k = 1, #s do if k ~= d then r[#r + 1] = s[k] end end
  return r
end

function F.fold(f, z, xs, opts)
  local w = where()   -- (once: the array's, the start's, the lambda's and the node's place)
  xs = to_acc(xs, "fold", w)
  if xs.rank < 1 then fail("fold: expected an array of rank 1 or more, got rank 0") end
  local d = dimension("fold", xs, opts, xs.rank)
  local shape = without_dim(xs, d)
  xs = innermost(xs, d)
  local zz = exp.lift(z, xs.t, "fold", w)
  local lam = exp.lambda(f, { xs.t, xs.t }, xs.t, nil, "fold", w)
  return remember(acc_at(w, "fold", lam, zz.node, xs.node), shape)
end

function F.fold1(f, xs, opts)
  local w = where()
  xs = to_acc(xs, "fold1", w)
  if xs.rank < 1 then fail("fold1: expected an array of rank 1 or more, got rank 0") end
  local d = dimension("fold1", xs, opts, xs.rank)
  local shape = without_dim(xs, d)
  xs = innermost(xs, d)
  local lam = exp.lambda(f, { xs.t, xs.t }, xs.t, nil, "fold1", w)
  return remember(acc_at(w, "fold1", lam, xs.node), shape)
end

-- ---- scans along the innermost dimension (left: acc = f(acc, x); right: f(x, acc))

-- With {dim = d} a scan runs along dimension d: the scan of xs with d moved innermost, its
-- result moved back.
local function scan_with_z(name)
  return function(f, z, xs, opts)
    local w = where()
    xs = to_acc(xs, name, w)
    if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", name) end
    local d = dimension(name, xs, opts, xs.rank)
    xs = innermost(xs, d)
    local zz = exp.lift(z, xs.t, name, w)
    local lam = exp.lambda(f, { xs.t, xs.t }, xs.t, nil, name, w)
    return from_innermost(acc_at(w, name, lam, zz.node, xs.node), d)
  end
end

local function scan1(name)
  return function(f, xs, opts)
    local w = where()
    xs = to_acc(xs, name, w)
    if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", name) end
    local d = dimension(name, xs, opts, xs.rank)
    xs = innermost(xs, d)
    local lam = exp.lambda(f, { xs.t, xs.t }, xs.t, nil, name, w)
    return from_innermost(acc_at(w, name, lam, xs.node), d)
  end
end

F.scanl, F.scanr = scan_with_z("scanl"), scan_with_z("scanr")
F.scanl1, F.scanr1 = scan1("scanl1"), scan1("scanr1")

-- scanl_ / scanr_ (Accelerate's scanl' / scanr'): the exclusive scan, n elements per
-- row, and the rows' totals, from one scan of n + 1 elements.
local function scan_split(name, scan, right)
  return function(f, z, xs)
    xs = to_acc(xs, name)
    if type(f) ~= "function" then fail("%s: expected a function, got %s", name, type(f)) end
    if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", name) end
    local s = scan(f, exp.lift(z, xs.t, name), xs)
    local sh = lacc.shape(xs)
    local r = xs.rank
    local values = lacc.backpermute(sh, function(...)
      local ix = { ... }
      if right then ix[r] = ix[r] + 1 end
      return unpack(ix, 1, r)
    end, s)
    local outer = {}
    for d = 1, r - 1 do outer[d] = sh[d] end
    local totals = lacc.backpermute(outer, function(...)
      local ix = { ... }
      ix[r] = right and 1 or sh[r] + 1
      return unpack(ix, 1, r)
    end, s)
    return values, totals
  end
end
F.scanl_ = scan_split("scanl_", F.scanl, false)
F.scanr_ = scan_split("scanr_", F.scanr, true)

-- compute(xs): xs materialised in its own kernel; producers fuse into it, consumers
-- read the array (what Accelerate's `compute` does).
function F.compute(xs)
  xs = to_acc(xs, "compute")
  return acc("compute", xs.node)
end

local function pack(...) return { n = select("#", ...), ... } end

-- A list of arrays (a loop's or a branch's several arrays), as opposed to one array.
local function is_list(x)
  return type(x) == "table" and not is_acc(x) and not array.is_array(x)
end
M.is_list = is_list

-- The condition of acond or awhile: a Lua boolean (acond), a bool expression or a rank-0
-- bool array, as a bool expression (acond) or a rank-0 bool array (awhile).
local function condition(what, c)
  if is_acc(c) or array.is_array(c) then
    -- a rank-0 bool array stands for its element
    c = to_acc(c, what)
    if c.rank ~= 0 then
      fail("%s: expected a bool expression or a rank-0 bool array as the condition, got rank %d",
        what, c.rank)
    end
    c = lacc.the(c)
  end
  return exp.lift(c, "bool", what)
end

-- acond(c, a, b): the array a if the scalar condition c holds, else b (c may read
-- arrays, e.g. lacc.the(xs) or xs:at(i)). Only the branch taken is computed. A Lua
-- boolean picks a branch while the program is built. With lists of arrays for a and b
-- (as many, of the same types and ranks) it gives that many arrays, each from the branch
-- taken.
function F.acond(c, a, b)
  if is_list(a) or is_list(b) then
    if not (is_list(a) and is_list(b)) or #a ~= #b or #a == 0 then
      fail("acond: expected two arrays or two lists of as many arrays, got %s and %s",
        is_list(a) and ("a list of " .. #a) or "an array", is_list(b) and ("a list of " .. #b) or "an array")
    end
    if type(c) == "boolean" then
      local r = {}
      for i = 1, #a do r[i] = to_acc(c and a[i] or b[i], "acond") end
      return unpack(r, 1, #a)
    end
    local cc, r = condition("acond", c), {}
    for i = 1, #a do
      local x, y = to_acc(a[i], "acond"), to_acc(b[i], "acond")
      r[i] = acc("acond", cc.node, x.node, y.node)
    end
    return unpack(r, 1, #a)
  end
  if type(c) == "boolean" then return to_acc(c and a or b, "acond") end
  a, b = to_acc(a, "acond"), to_acc(b, "acond")
  return acc("acond", condition("acond", c).node, a.node, b.node)
end

-- What awhile's condition gave (a bool expression or a rank-0 bool array), as an array.
local function loop_condition(c)
  exp.no_lua_boolean(c, "awhile: the condition")
  if exp.is_exp(c) then c = lacc.unit(exp.lift(c, "bool", "awhile")) end
  return to_acc(c, "awhile: the condition")
end

-- The loop of awhile over a list of arrays: cond and body get the arrays as arguments,
-- body returns as many (or one list of them); the arrays after the loop are returned.
local function awhile_list(cond, body, init)
  local m = #init
  if m == 0 then fail("awhile: expected an array or a list of arrays to start from, got an empty list") end
  if m > util.limits.fields then
    fail("awhile: at most %d arrays in a loop, got %d", util.limits.fields, m)
  end
  local inits, xs, vars = {}, {}, {}
  for i = 1, m do
    inits[i] = to_acc(init[i], "awhile")
    xs[i] = wrap(core.node_param(0, inits[i].t, inits[i].rank, "unboxed", where()))
    vars[i] = xs[i].node
  end
  local c = loop_condition(cond(unpack(xs, 1, m)))
  local rs = pack(body(unpack(xs, 1, m)))
  if rs.n == 1 and is_list(rs[1]) then rs = pack(unpack(rs[1], 1, #rs[1])) end
  if rs.n ~= m then
    fail("awhile: the body must return as many arrays as the loop has (%d), got %d", m, rs.n)
  end
  local args = {}
  for i = 1, m do
    local r = to_acc(rs[i], "awhile: the body")
    if r.t ~= inits[i].t or r.rank ~= inits[i].rank then
      fail("awhile: the body's array %d must keep the type and rank of the loop's (%s, rank %d), got %s, rank %d",
        i, inits[i].t, inits[i].rank, r.t, r.rank)
    end
    args[i], args[m + i], args[2 * m + 1 + i] = inits[i].node, vars[i], r.node
  end
  args[2 * m + 1] = c.node
  local loop = acc("awhile", unpack(args, 1, 3 * m + 1))
  local out = { loop }
  for i = 2, m do out[i] = acc("awhile", loop.node, exp.lift(i - 1, "i64", "awhile").node) end
  return unpack(out, 1, m)
end

-- awhile(cond, body, init): apply body to init while cond holds. cond and body are Lua
-- functions of an array program, traced once: cond gives a rank-0 bool array (or a
-- bool expression), body an array of init's type and rank (its shape may change). What
-- they read from outside the loop is computed once, before it. init may be a list of
-- arrays of any types and ranks: cond and body then take them as arguments, body
-- returns as many, and awhile returns the arrays the loop ends with.
function F.awhile(cond, body, init)
  if type(cond) ~= "function" or type(body) ~= "function" then
    fail("awhile: expected two functions and an array, got %s, %s", type(cond), type(body))
  end
  if is_list(init) then return awhile_list(cond, body, init) end
  init = to_acc(init, "awhile")
  -- the loop's array: a parameter node (its layout is decided when the loop is planned)
  local x = wrap(core.node_param(0, init.t, init.rank, "unboxed", where()))
  local c = loop_condition(cond(x))
  local b = to_acc(body(x), "awhile: the body")
  return acc("awhile", init.node, x.node, c.node, b.node)
end

-- the(xs): the element of a rank-0 array, as a scalar expression.
function F.the(xs)
  xs = to_acc(xs, "the")
  if xs.rank ~= 0 then fail("the: expected an array of rank 0, got rank %d", xs.rank) end
  return xs:at()
end

function F.flatten(xs)
  xs = to_acc(xs, "flatten")
  if xs.rank == 1 then return xs end
  local s, n = static_shape(xs), 1
  for d = 1, s and #s or 0 do n = n * s[d] end
  -- a count known now, unless past the largest array (xs's own error comes first then)
  if s == nil or n > 2 ^ 40 then return lacc.reshape({ lacc.size(xs) }, xs) end
  return lacc.reshape({ n }, xs)
end

-- xs checked for `what`, and how to reduce it: flattened (no dimension: the whole array,
-- a rank-0 result) or along dimension d (the array itself, and {dim = d}).
local function reducible(what, xs, d, ok, expected)
  xs = to_acc(xs, what)
  if not ok(xs.t) then fail("%s: expected an array of %s, got %s", what, expected, xs.t) end
  if d == nil then return lacc.flatten(xs) end
  if xs.rank < 1 then fail("%s: a dimension of an array of rank 0", what) end
  return xs, { dim = dimension(what, xs, d) }
end
local function is_number(t) return types.is_scalar[t] and t ~= "bool" end
local function numeric(what, xs, d) return reducible(what, xs, d, is_number, "numbers") end

-- The sum of a matrix product (or a batch of them) along its rows, or its columns, as
-- a product of a sum: sum_i (a b)[i, j] = ((sum_i a[i, :]) b)[j], so n x k x m multiplies
-- become n x k adds and k x m multiplies (a gradient's sum over points of a product's
-- cotangent: GMM's mean, 2 GFLOP a call). Nil where xs is not a product of ranks 2 and 2
-- or 3 and 3, or d is its batch dimension. The sum reassociates, as parallel folds do.
local function sum_of_product(xs, d)
  local ab = accs.products[xs]
  if ab == nil or d == nil or xs.rank < 2 or d < xs.rank - 1 then return nil end
  local a, b = ab[1], ab[2]
  if a.rank ~= xs.rank or b.rank ~= xs.rank then return nil end
  if xs.rank == 2 then
    if d == 1 then return lacc.matmul(lacc.sum(a, 1), b) end
    return lacc.matmul(a, lacc.sum(b, 2))
  end
  -- a batch: the summed side as one row (column) of each product
  local sa, sb = lacc.shape(a), lacc.shape(b)
  if d == 2 then
    local row = lacc.reshape({ sa[1], 1, sa[3] }, lacc.sum(a, 2))
    return lacc.reshape({ sa[1], sb[3] }, lacc.matmul(row, b))
  end
  local col = lacc.reshape({ sb[1], sb[2], 1 }, lacc.sum(b, 3))
  return lacc.reshape({ sa[1], sa[2] }, lacc.matmul(a, col))
end

-- Reductions of the whole array (rank 0), or along dimension d (its extent removed).
function F.sum(xs, d)
  local a, o = numeric("sum", xs, d)
  return o and sum_of_product(a, o.dim) or lacc.fold(exp.add, 0, a, o)
end
function F.product(xs, d)
  local a, o = numeric("product", xs, d)
  return lacc.fold(exp.mul, 1, a, o)
end
function F.maximum(xs, d)
  local a, o = numeric("maximum", xs, d)
  return lacc.fold1(exp.max, a, o)
end
function F.minimum(xs, d)
  local a, o = numeric("minimum", xs, d)
  return lacc.fold1(exp.min, a, o)
end

-- argmax(xs [, d]) / argmin: the 1-based position of the largest (smallest) element: in
-- the whole array (a linear, row-major position; rank 0) or along dimension d (i64, xs's
-- shape without d). The first position wins a tie, and a NaN wins over every number in
-- both (the first NaN is the answer, as in NumPy). Every backend combines a fold's
-- chunks in order (folds need only an associative function), so the pair p always holds
-- earlier positions than q: q wins only by being strictly better ("keep the leftmost
-- best" is associative, which is all the fold asks), and no position is compared (along
-- rows of 8, 2.0 -> 1.6-1.9 times the time of a fold of (f32, i32) pairs; the cpu
-- backend's strided tiles, lower_tile.c, then 1.0-1.3). An empty array or dimension is
-- an error (fold1 of nothing).
-- The fold's function over (value, position) pairs of type t, p before q.
local function extreme_pick(larger, t)
  local float = types.is_float(t)
  return function(p, q)
    local vp, vq = p[1], q[1]
    local wins
    if float then
      -- q not on p's losing side (true for a NaN q: comparisons with NaN are false),
      -- and p not a NaN (nothing beats the first NaN)
      local beats = exp.lnot(larger and exp.le(vq, vp) or exp.ge(vq, vp))
      wins = exp.land(exp.eq(vp, vp), beats)
    else
      wins = larger and exp.gt(vq, vp) or exp.lt(vq, vp)
    end
    return exp.cond(wins, vq, vp), exp.cond(wins, q[2], p[2])
  end
end
M.extreme_pick = extreme_pick

local function arg_extreme(what, larger)
  return function(xs, d)
    local a, o = numeric(what, xs, d)
    local r = a.rank
    local inner = innermost(a, o and o.dim or r)
    local pos = lacc.generate(lacc.shape(inner), function(...)
      return (select(r, ...))
    end)
    local best = lacc.fold1(extreme_pick(larger, a.t), lacc.zip(inner, pos))
    return lacc.map(function(p) return p[2] end, best)
  end
end
F.argmax = util.composite(arg_extreme("argmax", true))
F.argmin = util.composite(arg_extreme("argmin", false))

-- where(mask, a, b): a where mask holds, else b, element by element (arrays of one rank
-- whose shapes intersect, as zipWith's; a or b may be a scalar, taking the other's type).
-- where's arrays (the mask, then a and b where they are arrays) and its element
-- function: the zipWith it means (gradients retrace it so).
local function where_parts(mask, a, b)
  mask = to_acc(mask, "where")
  if mask.t ~= "bool" then fail("where: expected a mask of bool, got %s", mask.t) end
  local arrays, slots = { mask }, {}
  for k, x in ipairs({ a, b }) do
    if is_acc(x) or array.is_array(x) then
      arrays[#arrays + 1] = to_acc(x, "where")
      slots[k] = #arrays
    end
  end
  local ta = slots[1] and arrays[slots[1]].t
  local tb = slots[2] and arrays[slots[2]].t
  local function value(k, x, args, other)
    if slots[k] then return args[slots[k]] end
    return exp.lift(x, other, "where")
  end
  return function(...)
    local args = { ... }
    return exp.cond(args[1], value(1, a, args, tb), value(2, b, args, ta))
  end, arrays
end
M.where_parts = where_parts

function F.where(mask, a, b)
  local f, arrays = where_parts(mask, a, b)
  return zipwith("where", f, arrays)
end

-- matmul(a, b): the matrix product, c[.., i, j] = the sum over k of a[.., i, k] * b[.., k, j],
-- for ranks 2 and 2 (n x k times k x m), 3 and 3 (a batch of products, batch first), 2 and
-- 1 (matrix times vector) and 1 and 2 (vector times matrix). Built as the contraction the
-- backends recognise (a generate of the products, folded along k), so it runs as fast as
-- either formulation written by hand. Extents that should agree and do not are an error:
-- at once for host arrays, else when the program runs (an index out of bounds in matmul).
local MATMUL_RANKS = { ["2,2"] = true, ["3,3"] = true, ["2,1"] = true, ["1,2"] = true }
F.matmul = util.composite(function(a, b)
  local ha, hb = array.is_array(a) and a:shape(), array.is_array(b) and b:shape()
  a, b = to_acc(a, "matmul"), to_acc(b, "matmul")
  for _, x in ipairs({ a, b }) do
    if not types.is_scalar[x.t] or x.t == "bool" then
      fail("matmul: expected arrays of numbers, got %s", x.t)
    end
  end
  if a.t ~= b.t then fail("matmul: the arrays' element types differ (%s and %s)", a.t, b.t) end
  local ra, rb = a.rank, b.rank
  if not MATMUL_RANKS[ra .. "," .. rb] then
    fail("matmul: expected ranks 2 and 2, 3 and 3, 2 and 1 or 1 and 2, got %d and %d", ra, rb)
  end
  if ha and hb then   -- host arrays: the extents that must agree are known now
    local ka, kb = ha[ra], hb[rb == 1 and 1 or rb - 1]
    if ka ~= kb then fail("matmul: a's last extent (%d) is not b's %s (%d)", ka,
                          rb == 1 and "extent" or "second last extent", kb) end
    if ra == 3 and ha[1] ~= hb[1] then
      fail("matmul: the batch extents differ (%d and %d)", ha[1], hb[1])
    end
  end
  -- a transposed right-hand side (a @ b.T, a gradient's y @ bT) is read through a compute:
  -- read in place, each of a tile's lanes reads a row of its own, and the cpu backend
  -- folds it in the plain loop (1024 f32: 925 ms; 16.7 with the compute, 13.7 for a @ b)
  if ra >= 2 and rb >= 2 and accs.transposed[b] then b = lacc.compute(b) end
  local sa, sb = lacc.shape(a), lacc.shape(b)
  local prod
  -- k runs to the larger of the two extents, so that a mismatch reads out of bounds
  if ra == 2 and rb == 2 then
    prod = lacc.generate({ sa[1], sb[2], exp.max(sa[2], sb[1]) },
                         exp.own(function(i, j, k) return a:at(i, k) * b:at(k, j) end))
  elseif ra == 3 then
    prod = lacc.generate({ exp.max(sa[1], sb[1]), sa[2], sb[3], exp.max(sa[3], sb[2]) },
                         exp.own(function(t, i, j, k) return a:at(t, i, k) * b:at(t, k, j) end))
  elseif ra == 2 then
    prod = lacc.generate({ sa[1], exp.max(sa[2], sb[1]) },
                         exp.own(function(i, k) return a:at(i, k) * b:at(k) end))
  else
    prod = lacc.generate({ sb[2], exp.max(sa[1], sb[1]) },
                         exp.own(function(j, k) return a:at(k) * b:at(k, j) end))
  end
  local r = lacc.fold(exp.add, 0, prod)
  accs.products[r] = { a, b }
  return r
end)

-- all(p, xs) / any(p, xs): whether p holds for every / some element (rank 0; all of an
-- empty array is true); and_ / or_ of an array of bools.
local function is_bool(t) return t == "bool" end
local function booleans(what, xs, d) return reducible(what, xs, d, is_bool, "bool") end
function F.and_(xs, d) local a, o = booleans("and_", xs, d); return lacc.fold(exp.land, true, a, o) end
function F.or_(xs, d) local a, o = booleans("or_", xs, d); return lacc.fold(exp.lor, false, a, o) end
local function predicate(what, p, xs)
  if type(p) ~= "function" then fail("%s: expected a function, got %s", what, type(p)) end
  xs = to_acc(xs, what)
  local m = zipwith(what, exp.predicate(p, what), { xs }, 1)
  local mt = m.t
  if mt ~= "bool" then fail("%s: the predicate must return bool, got %s", what, mt) end
  return m
end
local function all(p, xs, d) return lacc.and_(predicate("all", p, xs), d) end
function F.any(p, xs, d) return lacc.or_(predicate("any", p, xs), d) end

-- lacc.all is both the "whole dimension" marker of replicate and slice specs and, called,
-- the reduction all(p, xs).
F.all = setmetatable({}, { __tostring = function() return "lacc.all" end,
                              __call = function(_, p, xs, d) return all(p, xs, d) end })

-- ---- permutations and reshaping

-- A traced index function: f gets 1-based indices of a shape of rank `rank` and returns
-- `out_rank` 1-based indices; the core sees 0-based shapes on both sides.
local function index_fn(what, f, sh, rank, out_rank)
  if type(f) ~= "function" then fail("%s: expected a function, got %s", what, type(f)) end
  return exp.lambda(exp.own_as(f, function(...)
    local res = { f(...) }
    if #res ~= out_rank then
      fail("%s: the index function must return %d indices, got %d", what, out_rank, #res)
    end
    if out_rank == 0 then return exp.wrap(core.node_op("tuple", where())) end
    return exp.index_exp(res, what)
  end), { sh.t }, nil, function(v) return exp.index_args(v[1], rank) end, what)
end

local function shape_rank(shape)
  if exp.is_exp(shape) then
    local t = types.parse(shape.t)
    return t.kind == "tuple" and #t.fields or 1
  end
  return type(shape) == "table" and #shape or 0
end

-- backpermute(shape, f, xs): result[ix] = xs[f(ix)] (a gather).
function F.backpermute(shape, f, xs)
  xs = to_acc(xs, "backpermute")
  local sh = exp.shape_exp(shape, "backpermute")
  local lam = index_fn("backpermute", f, sh, shape_rank(shape), xs.rank)
  return acc("backpermute", sh.node, lam, xs.node)
end

-- permute(combine, defaults, f, xs): a copy of defaults into which each element x of xs
-- is combined at f(ix): out[f(ix)] = combine(x, out[f(ix)]). f returns lacc.ignore (index
-- 0 in every dimension) to drop an element; other targets outside defaults are errors.
F.ignore = exp.weak_constant(0, "i64")

function F.permute(combine, defaults, f, xs)
  defaults = to_acc(defaults, "permute")
  xs = to_acc(xs, "permute")
  if type(f) ~= "function" then fail("permute: expected a function, got %s", type(f)) end
  local r = defaults.rank
  local g = exp.own_as(f, function(...)
    local res = { f(...) }
    if #res == 1 and rawequal(res[1], lacc.ignore) and r > 1 then
      for d = 2, r do res[d] = lacc.ignore end
    end
    return unpack(res, 1, #res)
  end)
  local lam = index_fn("permute", g, { t = exp.shape_type(xs.rank) }, xs.rank, r)
  local comb = exp.lambda(combine, { defaults.t, defaults.t }, defaults.t, nil, "permute")
  return acc("permute", comb, defaults.node, lam, xs.node)
end

function F.reshape(shape, xs)
  xs = to_acc(xs, "reshape")
  return remember(acc("reshape", exp.shape_exp(shape, "reshape").node, xs.node), accs.numeric_shape(shape))
end

M.install = util.installer(F, function(l) lacc = l end)

return M
