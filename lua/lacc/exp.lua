-- lacc.exp: scalar expressions inside lambdas.
-- Owns: Exp values (a core node plus its type), operator overloading, Lua numbers as
-- weak constants that take the other operand's type, the scalar functions of the guide,
-- and tracing a Lua function once with fresh variables. Must not: know combinators.
local types = require "lacc.types"
local util = require "lacc.util"
local core, where, fail, describe = util.core, util.where, util.fail, util.describe
local MAX_RANK = util.limits.rank

local M = {}
local E = {}          -- metatable of Exp values
local methods = {}
M.mt = E

local function is_exp(x) return getmetatable(x) == E end
M.is_exp = is_exp

local function wrap(node)
  local _, t = core.node_info(node)
  return setmetatable({ node = node, t = t }, E)
end
M.wrap = wrap

-- A constant of type t from a Lua value (number, boolean, or int64 cdata on LuaJIT), made
-- at w (the caller's place, where() when nil: an operator finds it once for its node and
-- its constants, each walk of the stack a good part of building a small program).
local function constant_at(v, t, w)
  if t == nil and type(v) == "boolean" then t = "bool" end
  if is_exp(v) then
    if v.t ~= t then return M.cast(v, t) end
    return v
  end
  if not types.is_scalar[t] then fail("constant: expected a scalar type, got %s", tostring(t)) end
  return wrap(core.node_const(t, v, w or where()))
end
function M.constant(v, t) return constant_at(v, t) end

local function is_plain(x)
  local tx = type(x)
  -- on LuaJIT host arrays are cdata too: only the 64-bit integer boxes are plain values
  return tx == "number" or tx == "boolean" or (tx == "cdata" and not core.is_array(x))
end

-- What an array program where a scalar belongs means, and how to write it instead.
local NESTED = " (array combinators cannot run inside a scalar function: lacc has no nested parallelism;" ..
               " for a reduction per element, generate the rank-2 array of (element, other) pairs and" ..
               " fold its inner dimension)"

-- A value of another module that stands for a scalar expression not made yet (lacc.mpi's
-- values of distributed programs, known when their program runs), or nil: its
-- metatable's __lacc_apply(f, ...) applies an operation to it (at once, or deferred) and
-- __lacc_exp(x) gives the expression it is now (or raises).
local function deferred(x)
  if type(x) ~= "table" then return nil end
  local mt = getmetatable(x)
  if mt ~= E and mt ~= nil and mt.__lacc_apply ~= nil then return mt end
  return nil
end
M.deferred = deferred

-- Lift a value to an Exp, taking type t for plain Lua values (a constant made at w).
local function lift_at(x, t, what, w)
  if is_exp(x) then return x end
  local d = deferred(x)
  if d then return lift_at(d.__lacc_exp(x), t, what, w) end
  if is_plain(x) then
    if not t then
      if type(x) == "boolean" then t = "bool"
      else fail("%s: a Lua number has no element type here; use lacc.constant(v, type)", what or "value") end
    end
    if types.is_scalar[t] and (t == "bool") ~= (type(x) == "boolean") then
      fail("%s: expected %s for %s, got %s", what or "value",
        t == "bool" and "a boolean" or "a number", t, type(x))
    end
    if type(x) == "number" and types.is_scalar[t] and types.is_int(t)
        and not util.is_integer(x) then
      fail("%s: %s is not a value of %s (cast the other operand?)", what or "value",
        util.show(x), t)
    end
    return constant_at(x, t, w)
  end
  fail("%s: expected a scalar expression or a number, got %s%s", what or "value", describe(x),
    describe(x):find("array", 1, true) and NESTED or "")
end
function M.lift(x, t, what, w) return lift_at(x, t, what, w) end

-- A Lua boolean where lacc needs a bool expression is almost always a comparison Lua
-- made before lacc saw it (x == 0.5 is false for every expression x): an error.
local function no_lua_boolean(v, what)
  if type(v) == "boolean" then
    fail("%s: got the Lua boolean %s, computed before lacc saw it: compare expressions with " ..
         "lacc.eq, lacc.lt, lacc.le, ... (== gives false and < an error for an expression); a " ..
         "constant condition is lacc.constant(%s), a choice while tracing Lua's if", what,
         tostring(v), tostring(v))
  end
  return v
end
M.no_lua_boolean = no_lua_boolean

-- Wrappers lacc makes around user functions, and the functions they wrap (for places).
local wrapped = setmetatable({}, { __mode = "k" })

-- f as a predicate: its result may not be a Lua boolean.
function M.predicate(f, what)
  if type(f) ~= "function" then return f end
  local g = function(...) return no_lua_boolean(f(...), what .. ": the predicate returned") end
  wrapped[g] = f
  return g
end

-- A constant that, like a Lua number, takes the type of the other operand of an
-- operation (lacc.ignore: index 0 of whatever integer type the other branch has).
function M.weak_constant(v, t)
  local e = M.constant(v, t)
  return setmetatable({ node = e.node, t = e.t, _weak = v }, E)
end

-- A value that, like a Lua number, takes the type of the other operand where it meets one
-- (a scalar argument of a compiled function, f64 where nothing says otherwise): a cast
-- there; on_integer() is told when that type is an integer.
function M.weak_value(x, on_integer)
  return setmetatable({ node = x.node, t = x.t, _weakv = on_integer }, E)
end

local function meet(w, other)
  if not is_exp(w) or not rawget(w, "_weakv") or not is_exp(other) or rawget(other, "_weakv")
      or other.t == w.t or not types.is_scalar[other.t] or other.t == "bool" then
    return w
  end
  if types.is_int(other.t) then rawget(w, "_weakv")() end
  return M.cast(setmetatable({ node = w.node, t = w.t }, E), other.t)
end

-- Two operands: plain values (and weak constants) take the type of the other (constants
-- made at w).
local function lift2(a, b, what, w)
  a, b = meet(a, b), meet(b, a)
  local wa, wb = is_exp(a) and rawget(a, "_weak"), is_exp(b) and rawget(b, "_weak")
  if wa and is_exp(b) and not wb and b.t ~= a.t and types.is_scalar[b.t] and types.is_int(b.t) then
    a = constant_at(wa, b.t, w)
  elseif wb and is_exp(a) and not wa and a.t ~= b.t and types.is_scalar[a.t] and types.is_int(a.t) then
    b = constant_at(wb, a.t, w)
  end
  local ta = is_exp(a) and a.t or nil
  local tb = is_exp(b) and b.t or nil
  return lift_at(a, tb, what, w), lift_at(b, ta, what, w)
end

local function op(name, ...)
  return wrap(core.node_op(name, where(), ...))
end

-- The operators and scalar functions below, which make nodes and call nothing of the
-- user's: traced as a combinator's function (sum's add), their nodes take the place the
-- trace found for the combinator (trace, combining_op), not a walk of the stack each.
local primitive = setmetatable({}, { __mode = "k" })

-- f, a function of lacc's own that a composite combinator (filter, matmul, ...) gives to
-- the combinators it is built of, marked as the operators are: traced, its nodes take
-- the place of the combinator's caller, found once (util.at_place), not a walk each.
-- The user's functions it passes on are traced as theirs (their own lines).
function M.own(f)
  primitive[f] = true
  return f
end
-- g, which wraps f (adapting its arguments or results), marked as f is.
function M.own_as(f, g)
  if primitive[f] then primitive[g] = true end
  return g
end

-- (the operators below find their caller's place once: `where()` right in them sees the
-- same first frame outside lacc as it would from op or constant_at)
local function binop(name)
  local f
  f = function(a, b)
    local d = deferred(a) or deferred(b)
    if d then return d.__lacc_apply(f, a, b) end
    local w = where()
    local x, y = lift2(a, b, name, w)
    return wrap(core.node_op(name, w, x.node, y.node))
  end
  primitive[f] = true
  return f
end

local function unop(name)
  local f
  f = function(a)
    local d = deferred(a)
    if d then return d.__lacc_apply(f, a) end
    local w = where()
    return wrap(core.node_op(name, w, lift_at(a, nil, name, w).node))
  end
  primitive[f] = true
  return f
end

function M.cast(x, t)
  if not types.is_scalar[t] then fail("cast: expected a scalar type, got %s", tostring(t)) end
  x = M.lift(x, t, "cast")
  if x.t == t then return x end
  return wrap(core.node_cast(t, x.node, where()))
end

-- Lua's / and ^ give floats: integer operands become f64 first.
local function floaty(name)
  local f
  f = function(a, b)
    local d = deferred(a) or deferred(b)
    if d then return d.__lacc_apply(f, a, b) end
    local w = where()
    local x, y = lift2(a, b, name, w)
    if not types.is_float(x.t) then x = M.cast(x, "f64") end
    if not types.is_float(y.t) then y = M.cast(y, "f64") end
    return wrap(core.node_op(name, w, x.node, y.node))
  end
  primitive[f] = true
  return f
end

M.add, M.sub, M.mul = binop("add"), binop("sub"), binop("mul")
M.div, M.pow = floaty("div"), floaty("pow")
M.idiv, M.imod = binop("idiv"), binop("mod")
M.quot, M.rem = binop("quot"), binop("rem")
M.band, M.bor, M.bxor = binop("band"), binop("bor"), binop("bxor")
M.shl, M.shr = binop("shl"), binop("shr")
M.bnot, M.neg = unop("bnot"), unop("neg")
M.eq, M.ne, M.lt, M.le, M.gt, M.ge =
  binop("eq"), binop("ne"), binop("lt"), binop("le"), binop("gt"), binop("ge")
local function logic(name, f)
  local g = function(a, b)
    no_lua_boolean(a, name)
    if name ~= "lnot" then no_lua_boolean(b, name) end
    return f(a, b)
  end
  primitive[g] = true
  return g
end
M.land, M.lor, M.lnot = logic("land", binop("land")), logic("lor", binop("lor")), logic("lnot", unop("lnot"))
M.min, M.max, M.atan2 = binop("min"), binop("max"), binop("atan2")
for _, f in ipairs { "abs", "signum", "sqrt", "exp", "log", "sin", "cos", "tan", "asin",
                     "acos", "atan", "floor", "ceil", "round", "truncate", "isnan", "isinf",
                     "isfinite", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "log2",
                     "log10", "log1p", "expm1", "exp2", "cbrt", "round_even" } do
  M[f] = unop(f)
end
M.hypot = binop("hypot")
M.ipow = binop("ipow")

-- fma(a, b, c) = a * b + c with one rounding; plain numbers take the type of an Exp.
function M.fma(a, b, c)
  if not is_exp(a) and not is_exp(b) and not is_exp(c) and is_plain(a) and is_plain(b)
      and is_plain(c) then
    return core.fma(a, b, c)
  end
  local t = is_exp(a) and a.t or is_exp(b) and b.t or c.t
  local x, y, z = M.lift(a, t, "fma"), M.lift(b, t, "fma"), M.lift(c, t, "fma")
  return op("fma", x.node, y.node, z.node)
end

function M.bitcast(x, t)
  if not types.is_scalar[t] then fail("bitcast: expected a scalar type, got %s", tostring(t)) end
  x = M.lift(x, nil, "bitcast")
  return wrap(core.node_bitcast(t, x.node, where()))
end

-- Plain Lua numbers for the functions Lua 5.4's math lacks (C's libm semantics at the
-- ends: infinities, NaN, -0); the same formulas as the guide's reference spec.
local HUGE = math.huge
local function log1p(x)
  if x ~= x or x == HUGE then return x end
  if x == 0 then return x end
  local u = 1 + x
  if u == 1 then return x end
  return math.log(u) * x / (u - 1)   -- corrects the rounding of 1 + x
end
local function expm1(x)
  if x ~= x or x == HUGE then return x end
  if x == 0 then return x end
  local u = math.exp(x)
  if u == 1 then return x end
  if u - 1 == -1 then return -1 end
  return (u - 1) * x / math.log(u)
end
local mathx = {
  isinf = function(x) return x == HUGE or x == -HUGE end,
  isfinite = function(x) return x == x and x ~= HUGE and x ~= -HUGE end,
  log1p = log1p, expm1 = expm1,
  sinh = function(x)
    if x == 0 or x ~= x then return x end
    local a = math.abs(x)
    local r = a < 1 and (expm1(a) + expm1(a) / (expm1(a) + 1)) / 2 or (math.exp(a) - math.exp(-a)) / 2
    return x < 0 and -r or r
  end,
  cosh = function(x) local a = math.abs(x); return (math.exp(a) + math.exp(-a)) / 2 end,
  tanh = function(x)
    if x == 0 or x ~= x then return x end
    local a = math.abs(x)
    local r = a > 22 and 1 or (function() local e = expm1(2 * a); return e / (e + 2) end)()
    return x < 0 and -r or r
  end,
  asinh = function(x)
    if x == 0 or x ~= x or x == HUGE or x == -HUGE then return x end
    local a = math.abs(x)
    local r = a > 1e8 and math.log(a) + math.log(2) or log1p(a + a * a / (1 + math.sqrt(1 + a * a)))
    return x < 0 and -r or r
  end,
  acosh = function(x)
    if x < 1 or x ~= x then return 0 / 0 end
    if x > 1e8 then return math.log(x) + math.log(2) end
    return log1p(x - 1 + math.sqrt((x - 1) * (x + 1)))
  end,
  atanh = function(x)
    if x == 0 or x ~= x then return x end
    local a = math.abs(x)
    local r = a > 1 and 0 / 0 or 0.5 * log1p(2 * a / (1 - a))
    return x < 0 and -r or r
  end,
  log2 = function(x) return math.log(x, 2) end,
  exp2 = function(x) return 2.0 ^ x end,
  log10 = function(x) return math.log(x, 10) end,
  cbrt = function(x)
    if x == 0 or x ~= x or x == HUGE or x == -HUGE then return x end
    local a = math.abs(x)
    local r = a ^ (1 / 3)
    r = r - (r * r * r - a) / (3 * r * r)   -- one Newton step
    return x < 0 and -r or r
  end,
  hypot = function(x, y)
    if x == HUGE or x == -HUGE or y == HUGE or y == -HUGE then return HUGE end
    if x ~= x or y ~= y then return 0 / 0 end
    local a, b = math.abs(x), math.abs(y)
    if a < b then a, b = b, a end
    if a == 0 then return 0 end
    local q = b / a
    return a * math.sqrt(1 + q * q)
  end,
  round_even = function(x)
    if x ~= x or x == HUGE or x == -HUGE then return x end
    local f = math.floor(x) + 0.0
    local d = x - f
    local r = (d > 0.5 or (d == 0.5 and f % 2 == 1)) and f + 1 or f
    if r == 0 and (x < 0 or 1 / x < 0) then return -0.0 end
    return r
  end,
}
M.mathx = mathx

-- n // 2 exactly on Lua 5.4's 64-bit integers (LuaJIT's numbers are doubles).
local half = load("return function(n) return n // 2 end")
half = half and half() or function(n) return math.floor(n / 2) end

-- Plain Lua fallbacks when no operand is an Exp.
local plain = {
  min = math.min, max = math.max, abs = math.abs, sqrt = math.sqrt, exp = math.exp,
  log = math.log, sin = math.sin, cos = math.cos, tan = math.tan, asin = math.asin,
  acos = math.acos, atan = function(y) return math.atan(y) end, floor = math.floor,
  ceil = math.ceil, pow = function(a, b) return a ^ b end,
  atan2 = function(y, x) return math.atan2 and math.atan2(y, x) or math.atan(y, x) end,
  isnan = function(x) return x ~= x end,
  isinf = mathx.isinf, isfinite = mathx.isfinite, sinh = mathx.sinh, cosh = mathx.cosh,
  tanh = mathx.tanh, asinh = mathx.asinh, acosh = mathx.acosh, atanh = mathx.atanh,
  log2 = mathx.log2, log10 = mathx.log10, log1p = mathx.log1p, expm1 = mathx.expm1, exp2 = mathx.exp2,
  cbrt = mathx.cbrt, hypot = mathx.hypot, round_even = mathx.round_even,
  eq = function(a, b) return a == b end, ne = function(a, b) return a ~= b end,
  lt = function(a, b) return a < b end, le = function(a, b) return a <= b end,
  gt = function(a, b) return a > b end, ge = function(a, b) return a >= b end,
  ipow = function(x, n)
    if not util.is_integer(x) or not util.is_integer(n) then
      fail("ipow: expected integers, got %s and %s", util.show(x), util.show(n))
    end
    if n < 0 then
      return x == 1 and 1 or x == -1 and (n % 2 == 0 and 1 or -1)
        or x == 0 and fail("ipow: integer division by zero (0 to a negative power)") or 0
    end
    local r = 1
    while n > 0 do
      if n % 2 == 1 then r = r * x end
      x, n = x * x, half(n)
    end
    return r
  end,
}
for name, f in pairs(plain) do
  local sym = M[name]
  M[name] = function(a, b)
    if not is_exp(a) and not is_exp(b) and is_plain(a) and (b == nil or is_plain(b)) then
      return f(a, b)
    end
    return sym(a, b)
  end
end

function M.cond(c, t, e)
  c = M.lift(no_lua_boolean(c, "cond"), "bool", "cond")
  local x, y = lift2(t, e, "cond")
  return op("cond", c.node, x.node, y.node)
end

-- Tuples of expressions. Plain numbers need a type: give Exps or lacc.constant.
function M.tuple(...)
  local n = select("#", ...)
  local nodes = {}
  for i = 1, n do nodes[i] = M.lift(select(i, ...), nil, "tuple").node end
  return op("tuple", (table.unpack or unpack)(nodes, 1, n))
end

function M.prj(x, i)
  local ti = types.parse(x.t)
  if ti.kind ~= "tuple" then fail("a value of type %s has no field %s", x.t, tostring(i)) end
  return wrap(core.node_prj(i - 1, x.node, where()))
end

function methods.unpack(x)
  local ti = types.parse(x.t)
  if ti.kind ~= "tuple" then return x end
  local r = {}
  for i = 1, #ti.fields do r[i] = M.prj(x, i) end
  return (table.unpack or unpack)(r, 1, #ti.fields)
end

function methods.cast(x, t) return M.cast(x, t) end
function methods.type(x) return x.t end
for _, name in ipairs { "eq", "ne", "lt", "le", "gt", "ge", "min", "max", "abs", "sqrt",
                        "land", "lor", "lnot", "isnan", "floor", "ceil", "round", "truncate",
                        "idiv", "imod", "quot", "rem", "band", "bor", "bxor", "bnot", "shl", "shr",
                        "isinf", "isfinite", "round_even", "ipow", "bitcast", "fma" } do
  methods[name] = M[name]
end

E.__add, E.__sub, E.__mul, E.__div, E.__pow = M.add, M.sub, M.mul, M.div, M.pow
E.__mod, E.__idiv, E.__unm = M.imod, M.idiv, M.neg
E.__band, E.__bor, E.__bxor, E.__shl, E.__shr, E.__bnot = M.band, M.bor, M.bxor, M.shl, M.shr, M.bnot
E.__index = function(x, k)
  if type(k) == "number" then return M.prj(x, k) end
  local m = methods[k]
  -- keys starting with "_" are lacc's own optional fields (_con, _fields)
  if m == nil and not (type(k) == "string" and k:sub(1, 1) == "_") then
    fail("a scalar expression (%s) has no field or method %s%s", rawget(x, "t"), tostring(k),
      type(k) == "string" and " (tuple fields are numbered: p[1])" or "")
  end
  return m
end
E.__tostring = function(x) return "lacc.exp<" .. x.t .. ">" end
E.__eq = function() fail("use lacc.eq(a, b) or a:eq(b): Lua turns == into a boolean") end
E.__lt = function() fail("use lacc.lt(a, b) or a:lt(b): Lua turns < into a boolean") end
E.__le = function() fail("use lacc.le(a, b) or a:le(b): Lua turns <= into a boolean") end
E.__call = function() fail("a scalar expression is not a function") end

-- Results of a traced function: one value, or several (a tuple).
function M.result(want, what, ...)
  what = what or "function"
  local n = select("#", ...)
  if n == 0 then fail("%s: the function returned nothing", what) end
  if n == 1 then
    local v = ...
    local dv = deferred(v)
    if dv then v = dv.__lacc_exp(v) end
    if is_plain(v) then
      local wt = want and types.parse(want)
      if not (wt and wt.kind == "scalar") then
        if type(v) == "boolean" then return M.constant(v, "bool") end
        fail("%s: the function returned a Lua %s with no element type; use lacc.constant(v, type)",
          what, type(v))
      end
      return M.constant(v, want)
    end
    if not is_exp(v) then
      local d = describe(v)
      fail("%s: the function returned %s, not a scalar expression%s", what,
        (d == "nil" or d:find("^an? ")) and d or "a " .. d,
        d:find("array", 1, true) and NESTED or "")
    end
    return v
  end
  local wt = want and types.parse(want)
  local nodes = {}
  for i = 1, n do
    local v = select(i, ...)
    local ft = wt and wt.kind == "tuple" and wt.fields[i] and wt.fields[i].sig or nil
    nodes[i] = M.lift(v, ft, what .. ": function result").node
  end
  return op("tuple", (table.unpack or unpack)(nodes, 1, n))
end

-- t[1..n] = ..., t.n = n (nils kept)
local function keep_in(t, ...)
  t.n = select("#", ...)
  for i = 1, t.n do t[i] = select(i, ...) end
end

-- Trace f once with fresh variables of the types in params; adapt(vars) turns them into
-- the Lua arguments (e.g. 1-based indices); w, the combinator's place where its caller
-- found it already (else where()). Returns what finish needs.
local function trace(f, params, adapt, what, w)
  what = what or "function"
  if type(f) ~= "function" and not (type(f) == "table" and getmetatable(f) and getmetatable(f).__call) then
    fail("%s: expected a function, got %s", what, type(f))
  end
  w = w or where()
  local vars, nodes = {}, {}
  for i, t in ipairs(params) do
    nodes[i] = core.node_var(t, w)
    vars[i] = wrap(nodes[i])
  end
  local args = vars
  if adapt then   -- (lacc's own adapting, the arguments' projections and index shifts: at w too)
    args = { n = 0 }
    keep_in(args, util.at_place(w, adapt, vars))
  end
  local out = { n = 0 }
  -- (the function's own nodes take its lines, util.where; a primitive's take w, the
  -- place a walk from inside it would find)
  local place = util.place
  util.place = primitive[f] and w or nil
  local ok, err = xpcall(function() keep_in(out, f((table.unpack or unpack)(args, 1, #args))) end,
                         function(e) return M.user_error(e, f) end)
  util.place = place
  if not ok then error(err, 0) end
  return { where = w, nodes = nodes, out = out, what = what }
end

-- An error raised while tracing f, as the user should read it: Lua's own messages about
-- a scalar expression used as a number get a hint, and a place inside lacc (LuaJIT blames
-- the caller of a tail call) becomes f's own. lacc's messages and error values other than
-- strings pass unchanged.
local HINTED = " (a scalar expression "
function M.user_error(e, f)
  if type(e) ~= "string" or e:find(HINTED, 1, true) or e:find("(comparisons of scalar", 1, true) then
    return e
  end
  local at, msg = e:match("^([^\n]-:%d+): (.*)$")
  if not at then return e end
  local hint = ""
  if msg:find("^attempt to compare") and msg:find("table") then
    hint = " (comparisons of scalar expressions are functions: lacc.lt(a, b) or a:lt(b), lacc.eq, " ..
           "lacc.le, ...: Lua compares only numbers with < and turns == into a boolean)"
  elseif msg:find("^bad argument") and msg:find("got table") then
    hint = HINTED .. "is not a Lua number: use lacc's functions, lacc.sqrt, " ..
           "lacc.exp, lacc.floor, ..., not math's)"
  elseif msg:find("^attempt to perform arithmetic") and msg:find("table") then
    hint = HINTED .. "mixes only with numbers and scalar expressions)"
  end
  if at:find(":%d+$") and util.own_file(at) then
    -- LuaJIT: the function's tail call failed, and its name is the one lacc called it by
    local info = debug.getinfo(wrapped[f] or f, "S")
    if info and info.short_src then at = info.short_src .. ":" .. (info.linedefined or 0) end
    msg = msg:gsub("^(bad argument #%d+ to )'[^']*'", "%1the function it returns the result of")
  end
  return at .. ": " .. msg .. hint
end

-- The core function node of a trace, its result converted to type want if given.
local function finish(tr, want)
  -- (the result's constants and tuples take the combinator's place, as a walk from here
  -- would find: nothing of the user's runs in between)
  local body = util.at_place(tr.where, M.result, want, tr.what, (table.unpack or unpack)(tr.out, 1, tr.out.n))
  return core.node_lam(tr.where, body.node, (table.unpack or unpack)(tr.nodes, 1, #tr.nodes)), body.t
end

-- The type of a trace's result, when it is an expression (nil for plain Lua values).
local function result_type(tr)
  if tr.out.n == 1 and is_exp(tr.out[1]) then return tr.out[1].t end
  return nil
end

function M.lambda(f, params, want, adapt, what, w)
  return finish(trace(f, params, adapt, what, w), want)
end

-- The primitive a combining function f of two elements of scalar type t is, one of ops
-- (default "add", "mul", "max", "min"), or nil: f traced once over two variables, as
-- lacc_exp_is_op sees it (either operand order).
function M.combining_op(f, t, ops)
  local w = where()
  local a = wrap(core.node_var(t, w))
  local b = wrap(core.node_var(t, w))
  -- (its nodes are only looked at, never kept, nor are its errors: one place for all)
  local ok, body = pcall(util.at_place, w, function() return M.result(nil, "fold", f(a, b)) end)
  if not ok or not is_exp(body) then return nil end
  for _, name in ipairs(ops or { "add", "mul", "max", "min" }) do
    if core.node_is_op(body.node, name, a.node, b.node) ~= 0 then return name end
  end
  return nil
end

-- Index arguments: a 0-based shape variable of rank r as r 1-based i64 values.
function M.index_args(ix, rank)
  if rank == 0 then return end
  if rank == 1 then return ix + 1 end
  local r = {}
  for d = 1, rank do r[d] = M.prj(ix, d) + 1 end
  return (table.unpack or unpack)(r, 1, rank)
end

-- A list of 1-based indices (numbers or Exps) as a 0-based shape-typed Exp.
function M.index_exp(list, what)
  local n = #list
  local parts = {}
  for d = 1, n do
    local v = list[d]
    local dv = deferred(v)
    if dv then v = dv.__lacc_exp(v) end
    if is_exp(v) then
      if not types.is_scalar[v.t] or not types.is_int(v.t) then
        fail("%s: index %d must be an integer, got %s (cast it)", what, d, v.t)
      end
      if v.t ~= "i64" then v = M.cast(v, "i64") end
    else
      if type(v) == "number" and not util.is_integer(v) then
        fail("%s: index %d is not an integer (got %s)", what, d, util.show(v))
      end
      v = M.lift(v, "i64", what)
    end
    parts[d] = v - 1
  end
  if n == 1 then return parts[1] end
  local nodes = {}
  for d = 1, n do nodes[d] = parts[d].node end
  return op("tuple", (table.unpack or unpack)(nodes, 1, n))
end

-- A shape: a table of extents (numbers or Exps) as a shape-typed Exp.
function M.shape_exp(list, what)
  if is_exp(list) then return list end
  if type(list) ~= "table" then fail("%s: expected a shape (a table of extents), got %s", what, type(list)) end
  local n = #list
  if n > MAX_RANK then fail("%s: rank %d is out of range (0 to %d)", what, n, MAX_RANK) end
  local nodes = {}
  for d = 1, n do
    local v = list[d]
    local dv = deferred(v)
    if dv then v = dv.__lacc_exp(v) end
    if is_exp(v) then
      if not types.is_scalar[v.t] or not types.is_int(v.t) then
        fail("%s: extent %d must be an integer, got %s (cast it)", what, d, v.t)
      end
      if v.t ~= "i64" then v = M.cast(v, "i64") end
    else
      if not util.is_integer(v) then
        fail("%s: extent %d is not an integer (got %s)", what, d, util.show(v))
      end
      if v < 0 then fail("%s: negative extent %d in dimension %d", what, v, d) end
      v = M.constant(v, "i64")
    end
    nodes[d] = v.node
  end
  if n == 1 then return wrap(nodes[1]) end
  return op("tuple", (table.unpack or unpack)(nodes, 1, n))
end

function M.shape_type(rank)
  if rank == 1 then return "i64" end
  local t = {}
  for d = 1, rank do t[d] = "i64" end
  return "(" .. table.concat(t, ",") .. ")"
end

-- ---- sum values

-- A constructor of sum type t (a parsed type), as a function of its fields.
function M.constructor(t, c)
  local con = t.constructors[c]
  local label = t.name and con.name or ("variant member " .. c)
  return function(...)
    local n = select("#", ...)
    local fields = con.payload.fields
    if n ~= #fields then
      fail("%s: expected %d field%s, got %d", label, #fields, #fields == 1 and "" or "s", n)
    end
    local nodes, exps = {}, {}
    for i = 1, n do
      exps[i] = M.lift(select(i, ...), fields[i].sig, label)
      nodes[i] = exps[i].node
    end
    local v = wrap(core.node_con(t.sig, c - 1, where(), (table.unpack or unpack)(nodes, 1, n)))
    v._con, v._fields = c, exps   -- known here: a match on v needs no tag test
    return v
  end
end

-- match(v, cases): cases by constructor name (by position for structural variants),
-- `_` for the rest; a bool matches as {true = ..., false = ...} or [true]/[false].
function M.match(v, cases)
  if type(cases) ~= "table" then fail("match: expected a table of cases, got %s", type(cases)) end
  no_lua_boolean(v, "match")
  if not is_exp(v) then fail("match: expected a scalar expression, got %s", type(v)) end
  if v.t == "bool" then
    for k in pairs(cases) do
      if k ~= true and k ~= false and k ~= "true" and k ~= "false" and k ~= "_" then
        fail("match: bool has no case %s (give true, false or _)", tostring(k))
      end
    end
    local t, e = cases[true] or cases["true"] or cases._, cases[false] or cases["false"] or cases._
    if not t or not e then fail("match: non-exhaustive match on bool: give true, false or _") end
    for _, c in ipairs { { "true", t }, { "false", e } } do
      if type(c[2]) ~= "function" then fail("match %s: expected a function, got %s", c[1], type(c[2])) end
    end
    return M.cond(v, M.result(nil, "match", t()), M.result(nil, "match", e()))
  end
  local t = types.parse(v.t)
  if t.kind ~= "sum" then fail("match: expected a value of a sum type, got %s", v.t) end
  -- a misspelt case first: it would also leave its constructor missing
  for k in pairs(cases) do
    local known = k == "_" or t.index[k] ~= nil or (not t.name and t.constructors[k] ~= nil)
    if not known then fail("match: %s has no constructor %s", v.t, tostring(k)) end
  end
  local alts, want, missing = {}, nil, {}
  for c, con in ipairs(t.constructors) do
    local f = cases[con.name] or (not t.name and cases[c]) or cases._
    if f == nil then missing[#missing + 1] = con.name end
    alts[c] = f
  end
  if #missing > 0 then
    fail("match: non-exhaustive match on %s: missing %s (add them or _)", v.t,
      table.concat(missing, ", "))
  end
  -- trace every alternative first: the first one with a typed result types the rest
  local traces = {}
  for c, con in ipairs(t.constructors) do
    local ptypes = {}
    for i, f in ipairs(con.payload.fields) do ptypes[i] = f.sig end
    traces[c] = trace(alts[c], ptypes, nil, "match " .. con.name)
    -- an alternative that returns nothing is the error, not the others' untyped numbers
    if traces[c].out.n == 0 then M.result(nil, traces[c].what) end
    want = want or result_type(traces[c])
  end
  -- a value made by a constructor in this program: its alternative alone, applied to the
  -- fields (pattern matching done while tracing; no case node, no tag test)
  local agree = true   -- else the case node below reports the arms' disagreement
  for c = 1, #traces do
    local rt = result_type(traces[c])
    agree = agree and (rt == nil or rt == want)
    -- every alternative returns a value, even those a known constructor skips
    M.result(want, traces[c].what, (table.unpack or unpack)(traces[c].out, 1, traces[c].out.n))
  end
  if v._con and agree then
    local c = v._con
    return M.result(want, "match " .. t.constructors[c].name,
                    alts[c]((table.unpack or unpack)(v._fields, 1, #v._fields)))
  end
  local lams = {}
  for c = 1, #traces do lams[c] = finish(traces[c], want) end
  return wrap(core.node_op("case", where(), v.node, (table.unpack or unpack)(lams, 1, #lams)))
end

-- The scalar functions of the guide that lacc offers by name (lacc.sqrt, ...).
M.surface = { "constant", "cast", "cond", "iterate", "while_", "idiv", "imod", "quot",
              "rem", "band", "bor", "bxor", "bnot", "shl", "shr", "eq", "ne", "lt",
              "le", "gt", "ge", "land", "lor", "lnot", "min", "max", "abs", "signum",
              "sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan",
              "atan2", "pow", "floor", "ceil", "round", "truncate", "isnan", "isinf",
              "isfinite", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "log2", "log10",
              "log1p", "expm1", "exp2", "cbrt", "hypot", "round_even", "ipow", "fma", "bitcast" }

-- iterate(n, f, x) and while_(c, f, x): bounded sequential loops in scalar code.
function M.iterate(n, f, x)
  if type(n) == "number" and not util.is_integer(n) then
    fail("iterate: the count must be an integer, got %s", util.show(n))
  end
  x = M.lift(x, nil, "iterate")
  n = M.lift(n, "i64", "iterate")
  if not types.is_scalar[n.t] or not types.is_int(n.t) then
    fail("iterate: the count must be an integer, got %s (cast it)", n.t)
  end
  if n.t ~= "i64" then n = M.cast(n, "i64") end
  local step = M.lambda(f, { x.t }, x.t, nil, "iterate")
  return op("iterate", n.node, step, x.node)
end

function M.while_(c, f, x)
  x = M.lift(x, nil, "while_")
  if type(c) == "function" then c = M.predicate(c, "while_") end
  local cond = M.lambda(c, { x.t }, "bool", nil, "while_")
  local step = M.lambda(f, { x.t }, x.t, nil, "while_")
  return op("while", cond, step, x.node)
end

return M
