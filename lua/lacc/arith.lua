-- lacc.arith: arrays in arithmetic, as NumPy and Torch users write it.
-- Owns: the Lua operators on arrays and array programs (+ - * / % ^ //, unary minus, and
-- on Lua 5.4 the bitwise ones), NumPy's broadcasting of shapes, the promotion of element
-- types between arrays, the scalar functions of lacc applied element-wise when an argument
-- is an array, the reductions as methods (a:sum(d), a:mean(d), ...), a.T, and the
-- constructors zeros, ones, full, arange, linspace and eye. Everything builds the graphs
-- the combinators build (map, zipWith, replicate, generate, fold, scanl1), so a chain of
-- operators fuses as a chain of zipWiths does.
-- Must not: define combinators or scalar operations (combinators.lua, exp.lua do), or
-- change what a function does when no argument is an array.
local util = require "lacc.util"
local types = require "lacc.types"
local exp = require "lacc.exp"
local array = require "lacc.array"
local accs = require "lacc.acc"
local fail, show = util.fail, util.show
local unpack = table.unpack or unpack

local M = {}
local F = {}   -- what this module adds to lacc (the constructors)
local lacc

local is_acc = accs.is_acc
local function is_arrayish(x) return is_acc(x) or array.is_array(x) end

-- Shapes known while the program is built (lacc.acc's: host arrays and what is made of
-- them) are broadcast now; others when the program runs.
local function static_shape(x) return accs.static_shape(x, "arithmetic") end
local remember, to_acc = accs.remember, accs.to_acc

-- A program p standing for x (lacc.grad's copy of an argument) with x's known shape; the
-- shape known of x (a table of extents), or nil.
function M.shape_as(p, x) remember(p, static_shape(x)) end
M.static_shape = static_shape

local function shape_text(s)
  local parts = {}
  for d = 1, #s do parts[d] = tostring(s[d]) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function is_number_type(t) return types.is_scalar[t] and t ~= "bool" end
local function bits(t) return tonumber(t:sub(2)) end

-- The element type two operands meet at: the same type stays; a float beats an integer
-- (i32 + f32 is f32, as in PyTorch); the wider float or the wider integer of one
-- signedness; a signed and an unsigned integer meet at the signed type wide enough for
-- both (u8 + i8 is i16, u32 + i32 is i64), and u64 with a signed type has none.
local function promote(what, ta, tb)
  if ta == tb then return ta end
  if ta == "bool" or tb == "bool" then
    fail("%s: a bool array or value meets %s: cast it first (lacc.cast(a, type))", what,
         ta == "bool" and tb or ta)
  end
  local fa, fb = types.is_float(ta), types.is_float(tb)
  if fa or fb then
    if fa and fb then return bits(ta) >= bits(tb) and ta or tb end
    return fa and ta or tb
  end
  local sa, sb = ta:sub(1, 1) == "i", tb:sub(1, 1) == "i"
  if sa == sb then return bits(ta) >= bits(tb) and ta or tb end
  local s, u = sa and ta or tb, sa and tb or ta
  local need = math.max(bits(s), 2 * bits(u))
  if need > 64 then
    fail("%s: %s and %s have no common integer type: cast one of them first (lacc.cast(a, type))",
         what, ta, tb)
  end
  return "i" .. need
end
M.promote = promote

-- NumPy's broadcasting: shapes aligned at their last dimension; an extent of 1 stretches
-- to the other; a missing leading dimension counts as 1; other extents must agree.
local function broadcast(what, shapes)
  local R = 0
  for _, s in ipairs(shapes) do R = math.max(R, #s) end
  local S, from = {}, {}
  for d = 1, R do
    S[d] = 1
    for k, s in ipairs(shapes) do
      local e = s[d - (R - #s)]
      if e ~= nil and e ~= 1 then
        if S[d] == 1 then
          S[d], from[d] = e, k
        elseif S[d] ~= e then
          fail("%s: the shapes %s and %s do not broadcast (dimension %d of the result: %d against %d)",
               what, shape_text(shapes[from[d]]), shape_text(s), d, S[d], e)
        end
      end
    end
  end
  return S
end
M.broadcast = broadcast

local function same_shape(a, b)
  if #a ~= #b then return false end
  for d = 1, #a do if a[d] ~= b[d] then return false end end
  return true
end

-- x (of shape s) stretched to shape S: its extents of 1 that stretch dropped (a reshape,
-- which keeps the order of the elements), then replicated along the new dimensions.
local function expand(x, s, S)
  if same_shape(s, S) then return x end
  local R, r = #S, #s
  local spec, kept = {}, {}
  for d = 1, R do
    local e = s[d - (R - r)]
    if e ~= nil and e == S[d] then
      spec[d] = lacc.all
      kept[#kept + 1] = e
    else
      spec[d] = S[d]
    end
  end
  if #kept ~= r then x = lacc.reshape(kept, x) end
  return remember(lacc.replicate(spec, x), S)
end

-- Extents known only when the program runs: the result's extent of each dimension, and
-- each array read where its own extent is 1 at index 1. Extents that do not agree make
-- the result as large as the larger, so the smaller array is read out of bounds: an error
-- when the program runs (as lacc.matmul's).
local function meet_extent(e, x)
  if e == 1 then return x end
  if x == 1 or rawequal(x, e) then return e end
  if type(e) == "number" and type(x) == "number" then return math.max(e, x) end
  if type(e) == "number" then e = exp.constant(e, "i64") end
  if type(x) == "number" then x = exp.constant(x, "i64") end
  return exp.cond(exp.eq(e, 1), x, exp.cond(exp.eq(x, 1), e, exp.max(e, x)))
end

local function dynamic(what, elem, xs, shapes)
  local R = 0
  for _, x in ipairs(xs) do R = math.max(R, x.rank) end
  local ext = {}
  for k, x in ipairs(xs) do
    ext[k] = shapes[k] or (x.rank > 0 and lacc.shape(x) or {})
  end
  local S = {}
  for d = 1, R do
    local e = 1
    for k, x in ipairs(xs) do
      local xe = ext[k][d - (R - x.rank)]
      if xe ~= nil then e = meet_extent(e, xe) end
    end
    S[d] = e
  end
  if R == 0 then
    local vals = {}
    for k, x in ipairs(xs) do vals[k] = x:at() end
    return lacc.unit(elem(unpack(vals, 1, #xs)))
  end
  -- one array of rank past 0, the others rank 0 (alpha * p): the result has its shape,
  -- a map of it reading the others' one value (a generate's reads through indices, each
  -- extent tested for a stretch, ran a conjugate-gradient turn 2.8x slower)
  local wide
  for k, x in ipairs(xs) do
    if x.rank > 0 then
      if wide then wide = false; break end
      wide = k
    end
  end
  if wide then
    return lacc.map(function(v)
      local vals = {}
      for k, x in ipairs(xs) do vals[k] = k == wide and v or x:at() end
      return elem(unpack(vals, 1, #xs))
    end, xs[wide])
  end
  return lacc.generate(S, function(...)
    local ix, vals = { ... }, {}
    for k, x in ipairs(xs) do
      local at = {}
      for d = 1, x.rank do
        local e, i = ext[k][d], ix[d + (R - x.rank)]
        if type(e) == "number" then at[d] = e == 1 and 1 or i
        else at[d] = exp.cond(exp.eq(e, 1), 1, i) end
      end
      vals[k] = x:at(unpack(at, 1, x.rank))
    end
    return elem(unpack(vals, 1, #xs))
  end)
end

-- f applied element by element to args[1 .. n], where some are arrays: the arrays (and
-- scalar expressions among promoted arguments) cast to the type they meet at, Lua numbers
-- left for f to type as it does for scalars (they take the other operand's type), the
-- shapes broadcast. promoted(i): whether argument i takes part in the promotion.
local function elementwise(what, f, args, n, promoted)
  local xs, slot, T = {}, {}, nil
  for i = 1, n do
    local x = args[i]
    if is_arrayish(x) then
      -- the same array twice (x * x) is one: read at one place, nothing to broadcast
      local p, seen = to_acc(x, what), nil
      for k = 1, #xs do if rawequal(xs[k], p) then seen = k end end
      if not seen then xs[#xs + 1] = p end
      slot[i] = seen or #xs
      local t = p.t
      if promoted(i) then
        if not types.is_scalar[t] then
          fail("%s: expected an array of numbers, got an array of %s (arithmetic on arrays is "
               .. "element-wise on scalar types; use lacc.map for tuples)", what, t)
        end
        T = T and promote(what, T, t) or t
      end
    end
  end
  for i = 1, n do
    if not slot[i] and promoted(i) and exp.is_exp(args[i]) and types.is_scalar[args[i].t] then
      T = T and promote(what, T, args[i].t) or args[i].t
    end
  end
  local function elem(...)
    local vals, call = { ... }, {}
    for i = 1, n do
      local v = args[i]
      if slot[i] then v = vals[slot[i]] end
      if T and promoted(i) and exp.is_exp(v) and v.t ~= T then v = exp.cast(v, T) end
      call[i] = v
    end
    return f(unpack(call, 1, n))
  end
  local shapes, static = {}, true
  for i, k in pairs(slot) do
    shapes[k] = static_shape(args[i])
    if shapes[k] == nil then static = false end
  end
  -- one array: nothing to broadcast, whatever its shape
  if #xs == 1 then return remember(lacc.map(elem, xs[1]), shapes[1]) end
  if not static then return dynamic(what, elem, xs, shapes) end
  local S = broadcast(what, shapes)
  for k = 1, #xs do xs[k] = expand(xs[k], shapes[k], S) end
  return remember(lacc.zipWith(elem, unpack(xs, 1, #xs)), S)
end
M.elementwise = elementwise

local function all_args() return true end

-- ---- the operators

local function binary(what, f)
  return function(a, b) return elementwise(what, f, { a, b }, 2, all_args) end
end

local operators = {
  __add = binary("add", exp.add), __sub = binary("sub", exp.sub), __mul = binary("mul", exp.mul),
  __div = binary("div", exp.div), __mod = binary("imod", exp.imod), __pow = binary("pow", exp.pow),
  __idiv = binary("idiv", exp.idiv),
  __band = binary("band", exp.band), __bor = binary("bor", exp.bor), __bxor = binary("bxor", exp.bxor),
  __shl = binary("shl", exp.shl), __shr = binary("shr", exp.shr),
  __unm = function(a) return elementwise("neg", exp.neg, { a }, 1, all_args) end,
  __bnot = function(a) return elementwise("bnot", exp.bnot, { a }, 1, all_args) end,
}
M.operators = operators

-- ---- lacc's scalar functions on arrays

-- Functions whose every argument is a scalar value; cast and bitcast take a type second,
-- cond's first argument is the bool condition (not promoted).
local NOT_ELEMENTWISE = { constant = true, iterate = true, while_ = true }
local function wrap_scalar(name, scalar)
  local promoted = all_args
  if name == "cond" then promoted = function(i) return i > 1 end end
  if name == "cast" or name == "bitcast" then
    return function(x, t)
      if not is_arrayish(x) then return scalar(x, t) end
      return elementwise(name, function(v) return scalar(v, t) end, { x }, 1, function() return false end)
    end
  end
  return function(...)
    local n = select("#", ...)
    for i = 1, n do
      if is_arrayish((select(i, ...))) then
        -- lacc.max(a) / lacc.min(a) of one array: its largest (smallest) element, as np.max
        if n == 1 and (name == "max" or name == "min") then
          return name == "max" and lacc.maximum(...) or lacc.minimum(...)
        end
        return elementwise(name, scalar, { ... }, n, promoted)
      end
    end
    return scalar(...)
  end
end

-- ---- methods: reductions, scans, a.T, element-wise functions

local methods, properties = {}, {}

local function numeric_acc(what, x)
  x = to_acc(x, what)
  if not is_number_type(x.t) then fail("%s: expected an array of numbers, got %s", what, x.t) end
  return x
end

local function float_acc(what, x)
  x = numeric_acc(what, x)
  if types.is_float(x.t) then return x, static_shape(x) end
  local s = static_shape(x)
  return remember(lacc.map(function(v) return exp.cast(v, "f64") end, x), s), s
end

-- The number of elements a reduction along d (or of everything) combines, as a value of
-- type t: a number where the shape is known, else an expression.
local function count(x, s, d, t)
  if s then
    local n = 1
    if d == nil then for k = 1, #s do n = n * s[k] end else n = s[d] end
    return exp.constant(n, t)
  end
  if d == nil then return exp.cast(lacc.size(x), t) end
  return exp.cast(lacc.shape(x)[d], t)
end

local function reduced_shape(s, d)
  if s == nil then return nil end
  if d == nil then return {} end
  local r = {}
  for k = 1, #s do if k ~= d then r[#r + 1] = s[k] end end
  return r
end

local function check_dim(what, x, d)
  if d ~= nil and (not util.is_integer(d) or d < 1 or d > x.rank) then
    fail("%s: the dimension must be an integer from 1 to %d (the array's rank), got %s", what,
         x.rank, show(d))
  end
end

-- Reductions with the array first: a:sum(d) == lacc.sum(a, d).
for name, fn in pairs { sum = "sum", product = "product", prod = "product", maximum = "maximum",
                        minimum = "minimum", max = "maximum", min = "minimum", argmax = "argmax",
                        argmin = "argmin" } do
  methods[name] = function(self, d)
    return remember(lacc[fn](self, d), reduced_shape(static_shape(self), d))
  end
end

-- mean, var, std: in the array's float type (f64 for integers), along d or of everything;
-- var is the population variance (NumPy's ddof = 0), from the deviations from the mean.
function methods.mean(self, d)
  local x, s = float_acc("mean", self)
  check_dim("mean", x, d)
  local total = methods.sum(x, d)
  return remember(elementwise("mean", exp.div, { total, count(x, s, d, x.t) }, 2, all_args),
                  reduced_shape(s, d))
end

function methods.var(self, d)
  local x, s = float_acc("var", self)
  check_dim("var", x, d)
  local m = methods.mean(x, d)
  if d ~= nil then   -- the mean, back along d: the shape of x
    local spec = {}
    for k = 1, x.rank do spec[k] = lacc.all end
    spec[d] = s and s[d] or lacc.shape(x)[d]
    m = remember(lacc.replicate(spec, m), s)
  end
  local dev = elementwise("var", exp.sub, { x, m }, 2, all_args)
  local sq = elementwise("var", exp.mul, { dev, dev }, 2, all_args)
  return methods.mean(sq, d)
end

function methods.std(self, d)
  local v = methods.var(self, d)
  return remember(elementwise("std", exp.sqrt, { v }, 1, all_args), static_shape(v))
end

-- cumsum / cumprod: running totals along d (of the flattened array without d, as NumPy).
local function running(what, f)
  return function(self, d)
    local x = numeric_acc(what, self)
    local s = static_shape(x)
    if d == nil then
      if x.rank == 0 then fail("%s: an array of rank 0 has no dimension to run along", what) end
      local n = 1
      if s then for k = 1, #s do n = n * s[k] end end
      return remember(lacc.scanl1(f, lacc.flatten(x)), s and { n } or nil)
    end
    check_dim(what, x, d)
    return remember(lacc.scanl1(f, x, d), s)
  end
end
methods.cumsum, methods.cumprod = running("cumsum", exp.add), running("cumprod", exp.mul)

-- a.T: the dimensions in reverse order (a matrix's transpose; rank 0 and 1 unchanged).
function properties.T(self)
  local x = to_acc(self, "T")
  local s = static_shape(self)
  if x.rank < 2 then return x end
  local r = {}
  if s then for k = 1, #s do r[k] = s[#s + 1 - k] end end
  if x.rank == 2 then return remember(lacc.transpose(x), s and r or nil) end
  local sh, rev = lacc.shape(x), {}
  for k = 1, x.rank do rev[k] = sh[x.rank + 1 - k] end
  return remember(lacc.backpermute(rev, function(...)
    local ix, out = { ... }, {}
    for k = 1, #ix do out[k] = ix[#ix + 1 - k] end
    return unpack(out, 1, #out)
  end, x), s and r or nil)
end

-- ---- constructors

local function type_or(what, t, default, numbers_only)
  t = t or default
  if not types.is_scalar[t] or (numbers_only and t == "bool") then
    fail("%s: expected %s element type, got %s", what, numbers_only and "a numeric" or "an", show(t))
  end
  return t
end

local function static_extents(what, shape)
  if util.is_integer(shape) then shape = { shape } end
  if type(shape) ~= "table" or exp.is_exp(shape) then
    fail("%s: expected a shape (an extent or a table of extents), got %s", what, show(shape))
  end
  local s = {}
  for d = 1, #shape do
    local e = shape[d]
    if not util.is_integer(e) or e < 0 then
      fail("%s: extent %d of the shape must be an integer, 0 or more, got %s", what, d, show(e))
    end
    s[d] = e
  end
  return s
end

local function filled(what, shape, v, t)
  local s = static_extents(what, shape)
  local c = exp.constant(v, t)
  if #s == 0 then return remember(lacc.unit(c), s) end
  return remember(lacc.fill(s, c), s)
end

function F.zeros(shape, t) return filled("zeros", shape, 0, type_or("zeros", t, "f64", true)) end
function F.ones(shape, t) return filled("ones", shape, 1, type_or("ones", t, "f64", true)) end
function F.full(shape, v, t)
  if type(v) ~= "number" and type(v) ~= "boolean" then
    fail("full: expected a number or a boolean to fill with, got %s", show(v))
  end
  t = type_or("full", t, type(v) == "boolean" and "bool" or "f64")
  if (t == "bool") ~= (type(v) == "boolean") then
    fail("full: %s is not a value of %s", show(v), t)
  end
  if types.is_int(t) and not util.is_integer(v) then fail("full: %s is not a value of %s", show(v), t) end
  return filled("full", shape, v, t)
end

-- arange(stop) / arange(start, stop [, step]) [, type]: start, start + step, ... before
-- stop (0-based, as NumPy's); i64 where every bound is a whole number, else f64.
function F.arange(...)
  local args = { ... }
  local t
  if type(args[#args]) == "string" then t = table.remove(args) end
  for k, v in ipairs(args) do
    if type(v) ~= "number" then fail("arange: argument %d must be a number, got %s", k, show(v)) end
  end
  local start, stop, step
  if #args == 1 then start, stop, step = 0, args[1], 1
  elseif #args == 2 or #args == 3 then start, stop, step = args[1], args[2], args[3] or 1
  else fail("arange: expected arange(stop) or arange(start, stop [, step]), got %d numbers", #args) end
  if step == 0 then fail("arange: the step must not be 0") end
  local whole = util.is_integer(start) and util.is_integer(stop) and util.is_integer(step)
  t = type_or("arange", t, whole and "i64" or "f64", true)
  if types.is_int(t) and not whole then
    fail("arange: %s needs whole-number bounds and step, got %s, %s, %s", t, show(start), show(stop), show(step))
  end
  local n = math.max(0, math.ceil((stop - start) / step))
  return remember(lacc.generate({ n }, function(i)
    return exp.constant(start, t) + exp.cast(i - 1, t) * exp.constant(step, t)
  end), { n })
end

-- linspace(start, stop, n [, type]): n values from start to stop, both included (f64).
function F.linspace(start, stop, n, t)
  if type(start) ~= "number" or type(stop) ~= "number" then
    fail("linspace: expected numbers for start and stop, got %s and %s", show(start), show(stop))
  end
  if not util.is_integer(n) or n < 0 then
    fail("linspace: expected a count (an integer, 0 or more), got %s", show(n))
  end
  t = type_or("linspace", t, "f64", true)
  if not types.is_float(t) then fail("linspace: expected f32 or f64, got %s", t) end
  local step = n > 1 and (stop - start) / (n - 1) or 0
  return remember(lacc.generate({ n }, function(i)
    local v = exp.constant(start, t) + exp.cast(i - 1, t) * exp.constant(step, t)
    return exp.cond(exp.eq(i, n), exp.constant(n > 1 and stop or start, t), v)
  end), { n })
end

-- eye(n [, m] [, type]): ones on the diagonal of an n x m matrix (f64).
function F.eye(n, m, t)
  if type(m) == "string" then m, t = nil, m end
  m = m or n
  for _, e in ipairs { n, m } do
    if not util.is_integer(e) or e < 0 then
      fail("eye: expected extents (integers, 0 or more), got %s", show(e))
    end
  end
  t = type_or("eye", t, "f64", true)
  return remember(lacc.generate({ n, m }, function(i, j)
    return exp.cond(exp.eq(i, j), exp.constant(1, t), exp.constant(0, t))
  end), { n, m })
end

-- ---- installing

local UNARY_METHODS = { "abs", "signum", "sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos",
                        "atan", "floor", "ceil", "round", "truncate", "isnan", "isinf", "isfinite",
                        "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "log2", "log10", "log1p",
                        "expm1", "exp2", "cbrt", "round_even", "lnot", "bnot" }
local BINARY_METHODS = { "eq", "ne", "lt", "le", "gt", "ge", "land", "lor", "pow", "atan2", "hypot",
                         "idiv", "imod", "quot", "rem", "band", "bor", "bxor", "shl", "shr", "ipow" }

function M.install(l)
  lacc = l
  for name, f in pairs(F) do lacc[name] = f end
  for _, name in ipairs(exp.surface) do
    if not NOT_ELEMENTWISE[name] then lacc[name] = wrap_scalar(name, lacc[name]) end
  end
  for _, name in ipairs(UNARY_METHODS) do
    methods[name] = function(self) return lacc[name](self) end
  end
  for _, name in ipairs(BINARY_METHODS) do
    methods[name] = function(self, y) return lacc[name](self, y) end
  end
  methods.cast = function(self, t) return lacc.cast(self, t) end
  accs.extend(methods, properties, operators)
end

return M
