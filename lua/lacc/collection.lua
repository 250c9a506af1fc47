-- lacc.collection: variant-wise collections ("Variant Types in Data-Parallel Array Languages" §2.3.2, §3.1.3, §6.1).
-- Owns: collections (groups of elements stored apart, each with the original positions
-- of its elements), partition (element-wise -> variant-wise) and merge (back), and the
-- combinators that accept a collection: map (split or joined), the folds, run.
-- Must not: touch the core directly; everything here is built from lacc's combinators,
-- so a collection runs on every backend.
local types = require "lacc.types"
local exp = require "lacc.exp"
local util = require "lacc.util"
local fail = util.fail
local MAX_ARGS = util.limits.args
local unpack = table.unpack or unpack

local M = {}

-- A collection of element type t: groups { con = c | nil, data = array | nil, pos = array }.
-- A group with con c holds the payloads of constructor c of t (one array of the payload:
-- its field, or a tuple of its fields; none for a constructor without fields), a group
-- without con holds elements of t as they are. pos (i64, rank 1) gives each element's
-- 0-based position in the element-wise array. Groups may repeat a constructor.
local C = {}
C.__index = C
C.__tostring = function(c)
  local parts = {}
  for i, g in ipairs(c.groups) do
    parts[i] = g.con and types.parse(c.type).constructors[g.con].name or "element-wise"
  end
  return ("lacc.collection<%s: %s>"):format(c.type, table.concat(parts, ", "))
end

function M.is(x) return getmetatable(x) == C end

local function new(t, groups) return setmetatable({ type = t, groups = groups }, C) end

local L   -- lacc itself (install)
local to_acc   -- an array program of a host array or a program, or an error naming the caller

-- The array that gives a group its length.
local function spine(g) return g.data or g.pos end

-- A value of every type (defaults of a scatter that overwrites every element).
local function zero_of(t)
  local p = types.parse(t)
  if p.kind == "scalar" then return exp.constant(p.name == "bool" and false or 0, p.name) end
  if p.kind == "tuple" then
    local fs = {}
    for i, f in ipairs(p.fields) do fs[i] = zero_of(f.sig) end
    return exp.tuple(unpack(fs, 1, #fs))
  end
  local fs = {}
  for i, f in ipairs(p.constructors[1].payload.fields) do fs[i] = zero_of(f.sig) end
  return exp.constructor(p, 1)(unpack(fs, 1, #fs))
end
M.zero_of = zero_of

-- An element of a group as a value of type t, from x, its element of the group's array
-- (nil for a constructor without fields): for a constructor's group the constructor
-- applied to the payload, known while tracing (a match on it takes its alternative
-- alone, with no tag test).
local function value_of(t, con, x)
  if not con then return x end
  local p = types.parse(t)
  local n = #p.constructors[con].payload.fields
  if n == 0 then return exp.constructor(p, con)() end
  if n == 1 then return exp.constructor(p, con)(x) end
  local fs = {}
  for i = 1, n do fs[i] = x[i] end
  return exp.constructor(p, con)(unpack(fs, 1, n))
end

-- Element j (1-based Exp) of group g.
local function value(t, g, j) return value_of(t, g.con, g.data and g.data[j]) end

-- partition(xs) -> a collection of xs (rank 1, of a sum type): one group per constructor,
-- in the constructors' order, each with its elements in order. A parallel partition: per
-- constructor a scan of its flags places its elements (lacc.filter).
function M.partition(xs)
  xs = to_acc(xs, "partition")
  if xs.rank ~= 1 then fail("partition: expected an array of rank 1, got rank %d", xs.rank) end
  local p = types.parse(xs.t)
  if p.kind ~= "sum" then fail("partition: expected an array of a sum type, got %s", xs.t) end
  local iota = L.generate(L.shape(xs), function(i) return i - 1 end)
  -- each element's constructor, by one match of them all: a constructor's filter compares
  -- it, so that n constructors trace one match of n alternatives, not n of them
  local tag_of = {}
  for c, con in ipairs(p.constructors) do
    tag_of[p.name and con.name or c] = function() return exp.constant(c - 1, "i32") end
  end
  local tags = L.map(function(x) return exp.match(x, tag_of) end, xs)
  local groups = {}
  for c, con in ipairs(p.constructors) do
    local key = p.name and con.name or c
    local pos = L.filter(function(k) return exp.eq(tags[k + 1], exp.constant(c - 1, "i32")) end, iota)
    local data
    local fields = con.payload.fields
    if #fields > 0 then
      data = L.map(function(k)
        return exp.match(xs[k + 1], {
          [key] = function(...) return ... end,
          _ = function()
            local z = {}
            for i, f in ipairs(fields) do z[i] = zero_of(f.sig) end
            return unpack(z, 1, #z)
          end,
        })
      end, pos)
    end
    groups[c] = { con = c, data = data, pos = pos }
  end
  return new(xs.t, groups)
end

-- Element-wise work over a collection gets, per element, its value and the elements of
-- `extra` arrays at its position: args(k, j) lists them for element j of group k.
-- extra: arrays of the collection's size (element-wise order), gathered by position;
-- with index set, the element's 1-based position comes first (imap).
local function arguments(coll, extra, index)
  local gathered = {}
  for k, g in ipairs(coll.groups) do
    gathered[k] = {}
    for e, ys in ipairs(extra) do
      gathered[k][e] = L.backpermute(L.shape(g.pos), function(j) return g.pos[j] + 1 end, ys)
    end
  end
  return function(k, j, v)
    local r = {}
    if index then r[1] = coll.groups[k].pos[j] + 1 end
    r[#r + 1] = v
    for e = 1, #extra do r[#r + 1] = gathered[k][e][j] end
    return unpack(r, 1, #r)
  end
end

-- The collection's elements as one array in group order (generate over the total count,
-- each index finding its group by the running offsets; producers, so a consumer pulls
-- them into its own kernel), with each result f(args) when f is given.
local function joined(coll, f, args)
  local offs, total = {}, exp.constant(0, "i64")
  for k, g in ipairs(coll.groups) do
    offs[k] = total
    total = total + L.size(spine(g))
  end
  local arr = L.generate({ total }, function(i)
    local function from(k)
      local j = i - offs[k]
      local v = value(coll.type, coll.groups[k], j)
      local r = f and exp.result(nil, "map", f(args(k, j, v))) or v
      if k == #coll.groups then return r end
      return exp.cond(exp.le(i, offs[k + 1]), r, from(k + 1))
    end
    return from(1)
  end)
  return arr, total
end

local function positions(coll)
  local ps = {}
  for k, g in ipairs(coll.groups) do ps[k] = g.pos end
  return #ps == 1 and ps[1] or L.concat(ps)
end

-- split: each group its own map (and kernel: computed), whose function meets only that
-- group's constructor. A result made by a known constructor keeps the group variant-wise
-- (fmap on Just stays Just), of that constructor of the result type.
local function map_split(f, coll, args)
  local groups, rt = {}, nil
  for k, g in ipairs(coll.groups) do
    local seen
    local out = L.generate(L.shape(g.pos), function(j)
      local r = exp.result(nil, "map", f(args(k, j, value(coll.type, g, j))))
      seen = { t = r.t, con = r._con, n = r._fields and #r._fields or 0 }
      if r._con and #r._fields > 0 then return unpack(r._fields, 1, #r._fields) end
      if r._con then return exp.constant(false, "bool") end   -- no payload to keep
      return r
    end)
    if rt and seen.t ~= rt then
      fail("map over a collection: the function returns %s for one group and %s for another", rt, seen.t)
    end
    rt = seen.t
    local data = L.compute(out)
    if seen.con and seen.n == 0 then data = nil end
    groups[k] = { con = seen.con, data = data, pos = g.pos }
  end
  return new(rt, groups)
end

local function strategy_of(opts, what)
  local s = opts and opts.strategy or "auto"
  if s ~= "auto" and s ~= "split" and s ~= "joined" then
    fail("%s: strategy must be \"split\", \"joined\" or \"auto\", got %s", what, tostring(s))
  end
  return s
end

-- map over a collection with args (above) [, {strategy = "split" | "joined" | "auto"}].
-- auto: split when the result of some group is made by a known constructor (only split
-- keeps it variant-wise), else joined (one kernel for every group: the thesis measured it
-- faster on CPU and GPU).
local function map_with(what, f, coll, args, opts)
  if type(f) ~= "function" then fail("%s: expected a function, got %s", what, type(f)) end
  local s = strategy_of(opts, what)
  if s == "auto" then
    s = "joined"
    for k, g in ipairs(coll.groups) do
      local one = exp.constant(1, "i64")
      local probe = exp.result(nil, what, f(args(k, one, value(coll.type, g, one))))
      if probe._con then s = "split" end
    end
  end
  if s == "split" then return map_split(f, coll, args) end
  local arr = joined(coll, f, args)
  return new(arr.t, { { data = arr, pos = positions(coll) } })
end

function M.map(f, coll, opts) return map_with("map", f, coll, arguments(coll, {}), opts) end

-- imap(f, coll [, opts]): f gets the element's 1-based position in the element-wise
-- array, then the element.
function M.imap(f, coll, opts) return map_with("imap", f, coll, arguments(coll, {}, true), opts) end

-- zipWith(f, coll, ys...) with the other arguments arrays of the collection's size, or
-- collections (merged back to arrays first): f gets the element and theirs at its
-- position. A trailing table is the options.
function M.zipWith(f, coll, ...)
  local rest, opts = { ... }, nil
  if type(rest[#rest]) == "table" and not M.is(rest[#rest]) and getmetatable(rest[#rest]) == nil then
    opts = table.remove(rest)
  end
  for i, ys in ipairs(rest) do
    if M.is(ys) then rest[i] = M.merge(ys) end
  end
  return map_with("zipWith", f, coll, arguments(coll, rest), opts)
end

-- merge(coll) -> the element-wise array, every element at its position. Up to 16
-- groups, one permute each (each its own kernel over its group's arrays); past that, one
-- permute of the groups' values concatenated (a balanced tree of appends), so that the
-- program stays shallow and its code linear in the number of constructors.
local MERGE_CHAIN = 16
function M.merge(coll)
  if not M.is(coll) then
    fail("merge: expected a collection (from lacc.partition), got %s", util.describe(coll))
  end
  local out = L.fill({ M.size(coll) }, zero_of(coll.type))
  local function values(g)
    return L.generate(L.shape(g.pos), function(j) return value(coll.type, g, j) end)
  end
  if #coll.groups > MERGE_CHAIN then
    local vals = {}
    for k, g in ipairs(coll.groups) do vals[k] = values(g) end
    local pos = positions(coll)
    return L.permute(function(x) return x end, out, function(j) return pos[j] + 1 end,
                     L.concat(vals))
  end
  for _, g in ipairs(coll.groups) do
    out = L.permute(function(x) return x end, out, function(j) return g.pos[j] + 1 end, values(g))
  end
  return out
end

-- The number of elements, as an expression.
function M.size(coll)
  local n = exp.constant(0, "i64")
  for _, g in ipairs(coll.groups) do n = n + L.size(spine(g)) end
  return n
end

-- run(coll [, opts]) -> the collection with its arrays computed (host arrays).
function M.run(coll, opts)
  local roots = {}
  for _, g in ipairs(coll.groups) do
    roots[#roots + 1] = g.pos
    if g.data then roots[#roots + 1] = g.data end
  end
  -- one run shares the partition's work among the groups; a run takes at most
  -- limits.args results, so a collection of more arrays runs in batches
  local hs = {}
  for first = 1, #roots, MAX_ARGS do
    local batch = { unpack(roots, first, math.min(#roots, first + MAX_ARGS - 1)) }
    local got = { L.run(batch, opts) }
    for i = 1, #batch do hs[first + i - 1] = got[i] end
  end
  local groups, k = {}, 0
  for i, g in ipairs(coll.groups) do
    k = k + 1
    local pos = hs[k]
    local data
    if g.data then k = k + 1; data = hs[k] end
    groups[i] = { con = g.con, data = data and L.use(data), pos = L.use(pos), host = { pos = pos, data = data } }
  end
  return new(coll.type, groups)
end

-- compile(fn) where fn takes collections: a collection argument (computed: lacc.run) is
-- passed as its arrays, and rebuilt inside from the parameters, so the compiled program
-- sees one parameter per array; its shape (element type, groups) joins the key.
local function compile_collections(compile)
  return function(fn, opts)
    local plain = compile(fn, opts)   -- checks fn and opts now; runs calls without collections
    local by_shape = {}
    return function(...)
      local args, flat, shape, any = { ... }, {}, {}, false
      for i = 1, select("#", ...) do any = any or M.is(args[i]) end
      if not any then return plain(...) end
      for i = 1, select("#", ...) do
        local a = args[i]
        if M.is(a) then
          local parts = { a.type }
          for _, g in ipairs(a.groups) do
            if not g.host then fail("compiled function: argument %d is a collection not computed yet (lacc.run it)", i) end
            flat[#flat + 1] = g.host.pos
            if g.host.data then flat[#flat + 1] = g.host.data end
            parts[#parts + 1] = tostring(g.con) .. (g.host.data and "+" or "")
          end
          shape[i] = table.concat(parts, ":")
        else
          flat[#flat + 1] = a
          shape[i] = "-"
        end
      end
      local key = table.concat(shape, " ")
      local f = by_shape[key]
      if not f then
        local n = #args
        f = compile(function(...)
          local ps, k, rebuilt = { ... }, 0, {}
          for i = 1, n do
            local a = args[i]
            if M.is(a) then
              local groups = {}
              for j, g in ipairs(a.groups) do
                k = k + 1
                local pos, data = ps[k], nil
                if g.host.data then k = k + 1; data = ps[k] end
                groups[j] = { con = g.con, data = data, pos = pos }
              end
              rebuilt[i] = new(a.type, groups)
            else
              k = k + 1
              rebuilt[i] = ps[k]
            end
          end
          return fn(unpack(rebuilt, 1, n))
        end, opts)
        by_shape[key] = f
      end
      return f(unpack(flat, 1, #flat))
    end
  end
end

function C:totable(opts) return L.run(M.merge(self), opts):totable() end
function C:map(f, opts) return M.map(f, self, opts) end
function C:imap(f, opts) return M.imap(f, self, opts) end
function C:zipWith(f, ...) return M.zipWith(f, self, ...) end
function C:merge() return M.merge(self) end
function C:size() return M.size(self) end

-- Install: lacc.partition / merge / is_collection, and the combinators that accept a
-- collection where they take an array.
function M.install(lacc, to_acc_of_lacc)
  L, to_acc = lacc, to_acc_of_lacc
  lacc.partition = M.partition
  lacc.merge = M.merge
  lacc.is_collection = M.is
  local map, imap, zipWith, run = lacc.map, lacc.imap, lacc.zipWith, lacc.run
  lacc.compile = compile_collections(lacc.compile)
  lacc.map = function(f, xs, opts)
    if M.is(xs) then return M.map(f, xs, opts) end
    return map(f, xs)
  end
  lacc.imap = function(f, xs, opts)
    if M.is(xs) then return M.imap(f, xs, opts) end
    return imap(f, xs)
  end
  lacc.zipWith = function(f, ...)
    if M.is((...)) then return M.zipWith(f, ...) end
    return zipWith(f, ...)
  end
  for n = 3, 9 do
    local plain = lacc["zipWith" .. n]
    lacc["zipWith" .. n] = function(f, ...)
      if M.is((...)) then
        if select("#", ...) ~= n then fail("zipWith%d: expected %d arrays, got %d", n, n, select("#", ...)) end
        return M.zipWith(f, ...)
      end
      return plain(f, ...)
    end
  end
  lacc.run = function(p, opts)
    if M.is(p) then return M.run(p, opts) end
    return run(p, opts)
  end
  -- folds over a collection: over its elements in group order (so the function must be
  -- commutative as well as associative), pulled into one kernel
  local function over(name, nargs)
    local plain = lacc[name]
    lacc[name] = function(...)
      local args = { ... }
      local xs = args[nargs]
      if M.is(xs) then args[nargs] = (joined(xs)) end
      return plain(unpack(args, 1, math.max(nargs, select("#", ...))))
    end
  end
  over("fold", 3)
  over("fold1", 2)
  for _, name in ipairs { "sum", "product", "maximum", "minimum", "and_", "or_" } do over(name, 1) end
  local any, amt = lacc.any, getmetatable(lacc.all)
  local all = amt.__call
  lacc.any = function(p, xs, d)
    if M.is(xs) then return lacc.or_((joined(xs, p, arguments(xs, {}))), d) end
    return any(p, xs, d)
  end
  amt.__call = function(self, p, xs, d)
    if M.is(xs) then return lacc.and_((joined(xs, p, arguments(xs, {}))), d) end
    return all(self, p, xs, d)
  end
end

return M
