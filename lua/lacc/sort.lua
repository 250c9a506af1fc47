-- lacc.sort, lacc.argsort, lacc.sort_by_key: stable sorts of each row (innermost
-- dimension), on the core's sortperm (the stable order of each row of u32 or u64 radix
-- keys; core/base/sort.c).
-- Owns: the radix key of each element type (unsigned: itself; signed: the sign bit
-- flipped; floats: NaN after every number, -0 before +0, so negative numbers have every
-- bit flipped and the others their sign bit; descending: every bit flipped, which keeps
-- equal keys in order), tuple keys compared field by field (a stable sort by each field,
-- the last first), and the gathers that apply an order.
-- Must not: sort anything itself: the core does.
local types = require "lacc.types"
local util = require "lacc.util"
local exp = require "lacc.exp"
local accs = require "lacc.acc"
local fail = util.fail
local to_acc, acc = accs.to_acc, accs.acc
local unpack = table.unpack or unpack

local M = {}
local F = {}
local lacc

-- The radix key (u32 or u64) of x, a scalar expression of type t, ascending or not.
local function radix_key(x, t, descending)
  local k
  if t == "bool" or t == "u8" or t == "u16" or t == "u32" then
    k = exp.cast(x, "u32")
  elseif t == "u64" then
    k = x
  elseif t == "i8" or t == "i16" or t == "i32" then
    k = exp.bxor(exp.bitcast(exp.cast(x, "i32"), "u32"), exp.constant(0x80000000, "u32"))
  elseif t == "i64" then
    k = exp.bxor(exp.bitcast(x, "u64"), exp.shl(exp.constant(1, "u64"), 63))
  else   -- f32, f64
    local it = t == "f32" and "u32" or "u64"
    local b = exp.bitcast(x, it)
    local sign = exp.shl(exp.constant(1, it), t == "f32" and 31 or 63)
    local ones = exp.bnot(exp.constant(0, it))
    k = exp.cond(exp.isnan(x), ones,
                 exp.cond(exp.ne(exp.band(b, sign), 0), exp.bnot(b), exp.bxor(b, sign)))
  end
  if descending then k = exp.bnot(k) end
  return k
end

-- The scalar types of a key type: the type itself, or a tuple's fields (flat, in order).
local function key_fields(what, t)
  local p = types.parse(t)
  local out = {}
  local function walk(q)
    if q.kind == "scalar" then out[#out + 1] = q.name
    elseif q.kind == "tuple" then for _, f in ipairs(q.fields) do walk(f) end
    else fail("%s: keys must be numbers, bools or tuples of them, got %s", what, t) end
  end
  walk(p)
  if #out == 0 then fail("%s: keys must be numbers, bools or tuples of them, got %s", what, t) end
  return out
end

-- Field j (of the flattened fields) of a key value.
local function field(k, t, j)
  local p = types.parse(t)
  if p.kind == "scalar" then return k end
  local idx = 0
  local function walk(v, q)
    if q.kind == "scalar" then
      idx = idx + 1
      if idx == j then return v end
      return nil
    end
    for i, f in ipairs(q.fields) do
      local r = walk(v[i], f)
      if r ~= nil then return r end
    end
    return nil
  end
  return walk(k, p)
end

-- The value of type t whose radix key is k (radix_key's inverse; every NaN comes back as
-- one quiet NaN).
local function from_key(k, t, descending)
  if descending then k = exp.bnot(k) end
  if t == "bool" then return exp.ne(k, 0) end
  if t == "u8" or t == "u16" or t == "u32" then return exp.cast(k, t) end
  if t == "u64" then return k end
  if t == "i8" or t == "i16" or t == "i32" then
    return exp.cast(exp.bitcast(exp.bxor(k, exp.constant(0x80000000, "u32")), "i32"), t)
  end
  if t == "i64" then return exp.bitcast(exp.bxor(k, exp.shl(exp.constant(1, "u64"), 63)), "i64") end
  local it = t == "f32" and "u32" or "u64"
  local sign = exp.shl(exp.constant(1, it), t == "f32" and 31 or 63)
  return exp.bitcast(exp.cond(exp.ne(exp.band(k, sign), 0), exp.bxor(k, sign), exp.bnot(k)), t)
end

-- xs with each row's elements in the order perm gives (1-based positions, perm of xs's
-- shape): a backpermute, so it fuses into what reads it.
local function in_order(xs, perm)
  local r = xs.rank
  return lacc.backpermute(lacc.shape(xs), exp.own(function(...)
    local ix = { ... }
    ix[r] = perm:at(...)
    return unpack(ix, 1, r)
  end), xs)
end

local function options(what, opts)
  if opts == nil then return {} end
  if type(opts) ~= "table" or getmetatable(opts) ~= nil then
    fail("%s: expected an options table, got %s", what, util.show(opts))
  end
  for k in pairs(opts) do
    if k ~= "by" and k ~= "descending" then
      fail("%s: unknown option '%s' (expected by, descending)", what, tostring(k))
    end
  end
  if opts.by ~= nil and type(opts.by) ~= "function" then
    fail("%s: by must be a function, got %s", what, type(opts.by))
  end
  if opts.descending ~= nil and type(opts.descending) ~= "boolean" then
    fail("%s: descending must be true or false, got %s", what, util.show(opts.descending))
  end
  return opts
end

-- The stable order (1-based positions, i64) of each row of xs by its keys.
local function order(what, xs, opts)
  xs = to_acc(xs, what)
  opts = options(what, opts)
  if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", what) end
  local keys = opts.by and lacc.map(opts.by, xs) or xs
  local kt = keys.t
  local fields = key_fields(what, kt)
  local desc = opts.descending == true
  local function key_array(j, src)
    return lacc.map(exp.own(function(k) return radix_key(field(k, kt, j), fields[j], desc) end), src)
  end
  -- the last field first; each earlier one sorts stably what the later ones ordered
  local perm = acc("sortperm", key_array(#fields, keys).node)
  for j = #fields - 1, 1, -1 do
    local p = acc("sortperm", key_array(j, in_order(keys, perm)).node)
    perm = in_order(perm, p)
  end
  return perm, xs
end

-- argsort(xs [, opts]): each row's positions (1-based, i64) in sorted order.
F.argsort = util.composite(function(xs, opts) return (order("argsort", xs, opts)) end)

-- sort(xs [, opts]): each row in order. Numbers sorted by themselves move only their keys
-- (sortkeys), turned back into values; other sorts gather the elements by their order.
F.sort = util.composite(function(xs, opts)
  local a = to_acc(xs, "sort")
  local o = options("sort", opts)
  if o.by == nil and types.is_scalar[a.t] and a.rank >= 1 then
    local desc = o.descending == true
    local keys = lacc.map(exp.own(function(x) return radix_key(x, a.t, desc) end), a)
    return lacc.map(exp.own(function(k) return from_key(k, a.t, desc) end), acc("sortkeys", keys.node))
  end
  local perm = order("sort", a, opts)
  return in_order(a, perm)
end)

-- sort_by_key(keys, values): both arrays (of one shape) with each row in the keys' order.
F.sort_by_key = util.composite(function(keys, values, opts)
  keys, values = to_acc(keys, "sort_by_key"), to_acc(values, "sort_by_key")
  if keys.rank ~= values.rank then
    fail("sort_by_key: the keys (rank %d) and the values (rank %d) differ in rank", keys.rank,
         values.rank)
  end
  local perm = order("sort_by_key", keys, opts)
  return in_order(keys, perm), in_order(values, perm)
end)

-- (lacc.mpi splits a distributed sort by the same keys: each field's radix keys, an array
-- of u32 or u64 each, compared field by field)
M.radix_key = radix_key
function M.radix_keys(what, keys, descending)
  local kt = keys.t
  local fields, out, kts = key_fields(what, kt), {}, {}
  for j = 1, #fields do
    out[j] = lacc.map(function(k) return radix_key(field(k, kt, j), fields[j], descending) end, keys)
    kts[j] = (fields[j] == "u64" or fields[j] == "i64" or fields[j] == "f64") and "u64" or "u32"
  end
  return out, kts
end

M.install = util.installer(F, function(l) lacc = l end)

return M
