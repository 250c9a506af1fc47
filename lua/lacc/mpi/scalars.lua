-- lacc.mpi.scalars: values of distributed programs as scalars (lacc.mpi).
-- Owns: `lacc.the(d)` of a rank-0 distributed program, `lacc.shape(d)` and `lacc.size(d)`
-- of a distributed array or program, where no run has them yet (outside a function, in
-- an awhile's condition and body): a deferred scalar that stands for the expression, made
-- when the run has the program's value (inside a function, or each turn of a loop), and
-- the combinators that take one as an argument (unit, fill, generate, take, ...), which
-- become programs every rank computes alike. A distributed array already run has its
-- global shape on every rank: its extents are constants.
-- Must not: run anything while a program is built (every value waits for its run), or
-- let a function that every rank computes alike read a distributed array's rows (base's
-- read_value refuses).
local C = require "lacc.mpi.base"
local exp, fail, is_dist, plain, record = C.exp, C.fail, C.is_dist, C.plain, C.record
local pack, stand, total, unpack, util = C.pack, C.stand, C.total, C.unpack, C.util
local is_da = C.is_da

local M = {}
local DS = {}   -- metatable of deferred scalars: { build = function(env) -> Exp, t = type }
local function is_ds(x) return getmetatable(x) == DS end
M.is_ds = is_ds

-- The expression a value stands for where the run is now (base's tracing): on the
-- stand-ins while a node is recorded, else from the run's values (noted as read, so
-- that a program built from them is built again when they change: an awhile's turns).
-- Outside both, nothing to build it from.
local NOT_NOW = "a value of a distributed program (lacc.the, lacc.shape or lacc.size of " ..
  "one, lacc.mpi) used where no program of lacc.mpi can wait for its run"
-- (typing alone: nothing noted)
local env_typing = {
  the = function(x) return plain.the(stand(x)) end,
  extent = function(x, d) return plain.shape(stand(x))[d] end,
}
local env_record = {
  the = function(x)
    C.read_value(x, "the")
    return env_typing.the(x)
  end,
  extent = function(x, d)
    C.read_value(x, "shape")
    return env_typing.extent(x, d)
  end,
}
local env_run = {
  the = function(x)
    local v = C.read_value(x, "the")
    return plain.the(v.acc)
  end,
  extent = function(x, d)
    local v = C.read_value(x, "shape")
    if d == 1 and v.counts then return exp.constant(total(v.counts), "i64") end
    local a = v.acc
    if C.array.is_array(a) then return exp.constant(a:shape()[d], "i64") end
    return plain.shape(a)[d]
  end,
}
local function env_now()
  local how = C.tracing_mode()
  if how == nil then return nil end
  return how == "record" and env_record or env_run
end

-- (outside any run an error, which the wrappers below recognise: they record the call
-- as a program of its own, whose functions are traced again when it runs)
local function resolve(x)
  local env = env_now()
  if env == nil then
    fail("%s: run that program first (lacc.run) and use its result, or give the value to " ..
         "the combinator as an argument", NOT_NOW)
  end
  return x.build(env)
end
local function not_now(e) return type(e) == "string" and e:find(NOT_NOW, 1, true) ~= nil end

-- how many values were deferred outside a run (a call that made one and failed is
-- recorded as a program of its own: install)
local deferrals = 0
local function make(build)
  if env_now() == nil then deferrals = deferrals + 1 end
  local e = build(env_typing)   -- its type, and the one-process checks, now
  if not exp.is_exp(e) then
    fail("lacc.mpi: a value of a distributed program made %s, expected a scalar expression",
         util.describe(e))
  end
  return setmetatable({ build = build, t = e.t }, DS)
end

-- f(...) where some arguments are deferred: at once where the run is (the expression),
-- else deferred
local function apply(f, ...)
  local n = select("#", ...)
  local args = { ... }
  if env_now() ~= nil then
    for i = 1, n do if is_ds(args[i]) then args[i] = resolve(args[i]) end end
    return f(unpack(args, 1, n))
  end
  return make(function(env)
    local a = {}
    for i = 1, n do a[i] = is_ds(args[i]) and args[i].build(env) or args[i] end
    return f(unpack(a, 1, n))
  end)
end
M.apply = apply

DS.__lacc_apply = apply
DS.__lacc_exp = resolve
for k, op in pairs { __add = exp.add, __sub = exp.sub, __mul = exp.mul, __div = exp.div,
                     __mod = exp.imod, __pow = exp.pow, __idiv = exp.idiv, __band = exp.band,
                     __bor = exp.bor, __bxor = exp.bxor, __shl = exp.shl, __shr = exp.shr } do
  DS[k] = function(a, b) return apply(op, a, b) end
end
DS.__unm = function(a) return apply(exp.neg, a) end
DS.__bnot = function(a) return apply(exp.bnot, a) end
DS.__index = function(x, k)
  local e = exp.mt.__index
  if k == "type" then return function(self) return self.t end end
  if type(k) == "number" then return apply(function(v) return exp.prj(v, k) end, x) end
  local m = e(setmetatable({ t = rawget(x, "t") }, exp.mt), k)   -- its checks and message
  return function(self, ...) return apply(m, self, ...) end
end
DS.__tostring = function(x) return "lacc.mpi.scalar<" .. x.t .. ">" end
DS.__lacc_what = "a value of a distributed program (lacc.mpi: lacc.the, lacc.shape or lacc.size of one)"
DS.__eq = exp.mt.__eq
DS.__lt, DS.__le, DS.__call = exp.mt.__lt, exp.mt.__le, exp.mt.__call

-- args (a node's, or a call's) with each deferred value the expression it is now, in
-- plain tables too (a slice's ranges, a shape)
local function resolved(args, n, depth)
  local out
  for i = 1, n do
    local a, r = args[i], args[i]
    if is_ds(a) then r = resolve(a)
    elseif (depth or 0) < 3 and type(a) == "table" and getmetatable(a) == nil then
      r = resolved(a, #a, (depth or 0) + 1)
    end
    if not rawequal(r, a) then
      out = out or { unpack(args, 1, n) }
      out[i] = r
    end
  end
  return out or args
end
C.resolved = function(args, n) return resolved(args, n) end

local function has_ds(args, n, depth)
  for i = 1, n do
    local a = args[i]
    if is_ds(a) then return true end
    if (depth or 0) < 3 and type(a) == "table" and getmetatable(a) == nil and has_ds(a, #a, (depth or 0) + 1) then
      return true
    end
  end
  return false
end
M.has_ds = has_ds

-- a scalar expression where the combinators of lacc.mpi take one (a count, an extent)
function C.scalar_exp(x) return exp.is_exp(x) or is_ds(x) end

-- name(args) of no distributed array but with values of distributed programs (in its
-- arguments, or met inside its functions): a program every rank computes alike, or
-- where the result is a scalar, a deferred one
local function deferred_call(name, f, args, n)
  local nodes = { record(name, nil, f, args, n) }
  if nodes[1] == nil then return apply(f, unpack(args, 1, n)) end   -- a scalar
  for i = 1, #nodes do
    if not (type(nodes[i].stand) == "table" and rawget(nodes[i].stand, "rank")) then
      fail("%s: of a value of a distributed program (lacc.mpi: lacc.the, lacc.shape or " ..
           "lacc.size of one): not yet distributed; run that program first (lacc.run)", name)
    end
    nodes[i].replicated, nodes[i].fn = true, f
  end
  return unpack(nodes, 1, #nodes)
end

-- unit(e) of an expression or a deferred value (for lacc.mpi's own wrappers: a condition)
function C.unit_of(e)
  if is_ds(e) then return deferred_call("unit", plain.unit, { e }, 1) end
  return plain.unit(e)
end

-- lacc's functions that are not combinators, or have wrappers of their own
local SKIP = { run = true, explain = true, compile = true, config = true, tuning = true,
               tiers = true, memory = true, transfers = true, devices = true,
               device_memory = true, set_layout = true, set_int64 = true, layout = true,
               load = true, save = true, read_png = true, write_png = true, fromtable = true,
               frombytes = true, fromptr = true, array = true, use = true, the = true,
               shape = true, size = true, is_collection = true, ignore = true, index = true,
               grad = true, jvp = true, vjp = true, value_and_grad = true }
for _, name in ipairs(exp.surface) do SKIP[name] = true end
SKIP.constant = nil

-- name's function f: where its arguments hold values of distributed programs, or it
-- met one inside its functions (a deferred result, or one that could not wait), a
-- program every rank computes alike (or a deferred scalar); the calls it makes of
-- lacc's functions inside go straight through (depth)
local depth = 0
local function deferring(name, f)
  return function(...)
    if depth > 0 or not C.live then return f(...) end
    local n = select("#", ...)
    local args = { ... }
    if C.dist_in(args, n) then return f(...) end
    if has_ds(args, n) then return deferred_call(name, plain[name], args, n) end
    local before = deferrals
    depth = 1
    local res = pack(pcall(f, ...))
    depth = 0
    if res[1] then return unpack(res, 2, res.n) end
    if deferrals > before or not_now(res[2]) then return deferred_call(name, plain[name], args, n) end
    error(res[2], 0)
  end
end

function M.install(lacc)
  local names = {}
  for name, f in pairs(lacc) do
    if type(f) == "function" and not SKIP[name] and plain[name] then names[#names + 1] = name end
  end
  for _, name in ipairs(names) do lacc[name] = deferring(name, lacc[name]) end
  local unit = lacc.unit
  lacc.unit = function(e, ...)
    if is_dist(e) then
      fail("unit: expected a scalar expression or a number, got %s (lacc.the(d) of a rank-0 " ..
           "one is a scalar)", util.describe(e))
    end
    return unit(e, ...)
  end
  local the, shape, size = lacc.the, lacc.shape, lacc.size
  lacc.the = function(x)
    if not is_dist(x) then return the(x) end
    if x.rank ~= 0 then fail("the: expected an array of rank 0, got rank %d", x.rank) end
    if C.tracing_mode() ~= nil then return x:at() end
    return make(function(env) return env.the(x) end)
  end
  local function extent(x, d)
    if is_da(x) then return exp.constant(x:shape()[d], "i64") end
    local env = env_now()
    if env then return env.extent(x, d) end
    return make(function(e) return e.extent(x, d) end)
  end
  lacc.shape = function(x)
    if not is_dist(x) then return shape(x) end
    local r = {}
    for d = 1, x.rank do r[d] = extent(x, d) end
    return r
  end
  lacc.size = function(x)
    if not is_dist(x) then return size(x) end
    if x.rank == 0 then return exp.constant(1, "i64") end
    local function product(get)
      local p = get(1)
      for d = 2, x.rank do p = p * get(d) end
      return p
    end
    if is_da(x) or env_now() then return product(function(d) return extent(x, d) end) end
    return make(function(e) return product(function(d) return e.extent(x, d) end) end)
  end
end

return M
