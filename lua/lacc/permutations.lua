-- lacc.permutations: combinators that rearrange arrays, derived from the core's.
-- Owns: transpose, reverse, rotate, replicate, slice, take and drop (backpermutes), gather
-- and scatter (a map and a permute over indices in an array), and the push
-- arrays append (also xs .. ys), interleave and concat, which reverse and rotate keep
-- push arrays. Must not: type-check beyond what gives a better message (the core checks).
local util = require "lacc.util"
local types = require "lacc.types"
local exp = require "lacc.exp"
local accs = require "lacc.acc"
local fail = util.fail
local to_acc, acc = accs.to_acc, accs.acc
local unpack = table.unpack or unpack
local own, composite = exp.own, util.composite

local M = {}
local F = {}   -- what this module adds to lacc
-- lacc itself (M.install): calls go through it, so they meet collection.lua's wrappers.
local lacc

-- Push arrays ("Defunctionalizing Push Arrays"): append(xs, ys) (also xs .. ys), interleave(xs, ys) and
-- concat{...} along the innermost dimension, outer dimensions intersected. Pulled by a
-- consumer, an element is a test on its index; materialised, each part is written by a
-- loop of its own.
local function push(name)
  return function(xs, ys)
    xs, ys = to_acc(xs, name), to_acc(ys, name)
    local r = acc(name, xs.node, ys.node)
    r._push = { name, xs, ys }   -- reverse and rotate rewrite over the parts
    return r
  end
end
F.append, F.interleave = push("append"), push("interleave")

F.concat = composite(function(list)
  if type(list) ~= "table" or getmetatable(list) ~= nil or #list == 0 then
    fail("concat: expected a non-empty table of arrays")
  end
  local function build(lo, hi)
    if lo == hi then return to_acc(list[lo], "concat") end
    local mid = math.floor((lo + hi) / 2)
    return lacc.append(build(lo, mid), build(mid + 1, hi))
  end
  return build(1, #list)
end)

F.transpose = composite(function(xs)
  xs = to_acc(xs, "transpose")
  if xs.rank ~= 2 then fail("transpose: expected an array of rank 2, got rank %d", xs.rank) end
  local s = lacc.shape(xs)
  local r = lacc.backpermute({ s[2], s[1] }, own(function(i, j) return j, i end), xs)
  accs.transposed[r] = true
  return r
end)

-- reverse and rotate act on the innermost dimension.
local function along_inner(what, xs, g)
  xs = to_acc(xs, what)
  if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", what) end
  local s = lacc.shape(xs)
  local n = s[xs.rank]
  return lacc.backpermute(s, own(function(...)
    local ix = { ... }
    ix[xs.rank] = g(ix[xs.rank], n)
    return unpack(ix, 1, xs.rank)
  end), xs)
end

-- Elements lo + 1 .. lo + len of each row (innermost dimension) of xs.
local function inner_slice(xs, lo, len)
  local s = lacc.shape(xs)
  local r = xs.rank
  s[r] = len
  return lacc.backpermute(s, own(function(...)
    local ix = { ... }
    ix[r] = ix[r] + lo
    return unpack(ix, 1, r)
  end), xs)
end

local function inner_extent(xs) return lacc.shape(xs)[xs.rank] end

-- reverse and rotate of a push array stay push arrays ("Defunctionalizing Push Arrays"): the parts reversed or
-- cut and reordered, so that materialising the result still writes each part in a loop
-- of its own, with no test per element.
F.reverse = composite(function(xs)
  xs = to_acc(xs, "reverse")
  local p = xs._push
  if p and p[1] == "append" then return lacc.append(lacc.reverse(p[3]), lacc.reverse(p[2])) end
  if p then   -- interleave: the pairs in reverse order, each pair swapped
    local m = exp.min(inner_extent(p[2]), inner_extent(p[3]))
    return lacc.interleave(lacc.reverse(inner_slice(p[3], 0, m)), lacc.reverse(inner_slice(p[2], 0, m)))
  end
  return along_inner("reverse", xs, function(i, n) return n - i + 1 end)
end)

-- rotate(k, xs): result[i] = xs[(i - 1 + k) mod n + 1], so rotate(1, {1,2,3}) = {2,3,1}.
F.rotate = composite(function(k, xs)
  xs = to_acc(xs, "rotate")
  if not exp.is_exp(k) and not util.is_integer(k) then
    fail("rotate: expected an integer amount (a number or an expression), got %s", util.show(k))
  end
  local kk = exp.is_exp(k) and k:cast("i64") or k
  local p = xs._push
  if p and p[1] == "append" then
    -- xs = a .. b rotated by k' = k mod (n1 + n2): the a and b after k', then those before
    local a, b = p[2], p[3]
    local n1, n2 = inner_extent(a), inner_extent(b)
    local k0 = exp.imod(kk, exp.max(n1 + n2, 1))
    local k1, k2 = exp.min(k0, n1), exp.max(k0 - n1, 0)
    return lacc.concat { inner_slice(a, k1, n1 - k1), inner_slice(b, k2, n2 - k2),
                         inner_slice(a, 0, k1), inner_slice(b, 0, k2) }
  end
  if p and type(k) == "number" and k == math.floor(k) then
    -- an interleave of the first m of a and b: rotating by an even k rotates both by k/2;
    -- by an odd k, b (rotated by (k-1)/2) comes first, then a (rotated by (k+1)/2)
    local m = exp.min(inner_extent(p[2]), inner_extent(p[3]))
    local a, b = inner_slice(p[2], 0, m), inner_slice(p[3], 0, m)
    if k % 2 == 0 then return lacc.interleave(lacc.rotate(k / 2, a), lacc.rotate(k / 2, b)) end
    return lacc.interleave(lacc.rotate((k - 1) / 2, b), lacc.rotate((k + 1) / 2, a))
  end
  return along_inner("rotate", xs, function(i, n) return exp.imod(i - 1 + kk, n) + 1 end)
end)

-- replicate(spec, xs): spec lists the result's dimensions, outermost first: lacc.all
-- takes the next dimension of xs, an extent adds a new dimension.
F.replicate = composite(function(spec, xs)
  xs = to_acc(xs, "replicate")
  if type(spec) ~= "table" then fail("replicate: expected a table spec, got %s", type(spec)) end
  for d, e in ipairs(spec) do
    if not rawequal(e, lacc.all) and not exp.is_exp(e) and
       (not util.is_integer(e) or e < 0) then
      fail("replicate: entry %d of the spec must be lacc.all or an extent, got %s", d, util.show(e))
    end
  end
  local s = lacc.shape(xs)
  local shape, alls = {}, 0
  for d, e in ipairs(spec) do
    if rawequal(e, lacc.all) then
      alls = alls + 1
      shape[d] = s[alls]
    else
      shape[d] = e
    end
  end
  if alls ~= xs.rank then
    fail("replicate: the spec has %d lacc.all entries, the array has rank %d", alls, xs.rank)
  end
  return lacc.backpermute(shape, own(function(...)
    local ix, src = { ... }, {}
    for d, e in ipairs(spec) do
      if rawequal(e, lacc.all) then src[#src + 1] = ix[d] end
    end
    return unpack(src, 1, #src)
  end), xs)
end)

-- slice(xs, spec): one entry per dimension of xs: lacc.all keeps it, an index fixes it
-- (the dimension goes), a range {from, to [, step]} keeps the elements from, from + step,
-- ... up to to (inclusive; a negative step counts down; none when from is past to). A
-- backpermute: it fuses into what reads it, and an index outside xs is an index error
-- when the program runs.
local function is_index(e) return exp.is_exp(e) or util.is_integer(e) end

local function range_of(d, e)
  local from, to, step = e[1], e[2], e[3]
  if step == nil then step = 1 end
  if not is_index(from) or not is_index(to) or not is_index(step) or e[4] ~= nil then
    fail("slice: entry %d of the spec: a range is {from, to [, step]} of integers, got %s", d,
         util.show(e))
  end
  if step == 0 then fail("slice: entry %d of the spec: the step of a range cannot be 0", d) end
  if not exp.is_exp(step) and not exp.is_exp(from) and not exp.is_exp(to) then
    return from, step, math.max(0, math.floor((to - from) / step) + 1)
  end
  local f, t, st = exp.constant(from, "i64"), exp.constant(to, "i64"), exp.constant(step, "i64")
  return f, st, exp.max(exp.idiv(t - f, st) + 1, 0)
end

F.slice = composite(function(xs, spec)
  xs = to_acc(xs, "slice")
  if type(spec) ~= "table" or #spec ~= xs.rank then
    fail("slice: expected a spec of %d entries", xs.rank)
  end
  local ranges = {}
  for d, e in ipairs(spec) do
    if type(e) == "table" and not exp.is_exp(e) and not rawequal(e, lacc.all) and
       getmetatable(e) == nil then
      ranges[d] = { range_of(d, e) }
    elseif not rawequal(e, lacc.all) and not is_index(e) then
      fail("slice: entry %d of the spec must be lacc.all, an index or a range {from, to [, " ..
           "step]}, got %s", d, util.show(e))
    end
  end
  local s = lacc.shape(xs)
  local shape = {}
  for d, e in ipairs(spec) do
    if rawequal(e, lacc.all) then shape[#shape + 1] = s[d]
    elseif ranges[d] then shape[#shape + 1] = ranges[d][3] end
  end
  return lacc.backpermute(shape, own(function(...)
    local ix, src, k = { ... }, {}, 0
    for d, e in ipairs(spec) do
      if rawequal(e, lacc.all) then
        k = k + 1
        src[d] = ix[k]
      elseif ranges[d] then
        k = k + 1
        src[d] = ranges[d][1] + (ix[k] - 1) * ranges[d][2]
      else
        src[d] = e
      end
    end
    return unpack(src, 1, xs.rank)
  end), xs)
end)

-- take(n, xs) / drop(n, xs): the first n elements of each row (innermost dimension), or
-- all but them; n is clamped to 0 .. the row's length.
local function take_drop(what, n, xs, drop)
  xs = to_acc(xs, what)
  if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", what) end
  if not is_index(n) then fail("%s: expected an integer count, got %s", what, util.show(n)) end
  local len = inner_extent(xs)
  local k = exp.max(exp.min(exp.is_exp(n) and n:cast("i64") or n, len), 0)
  if drop then return inner_slice(xs, k, len - k) end
  return inner_slice(xs, 0, k)
end
F.take = composite(function(n, xs) return take_drop("take", n, xs, false) end)
F.drop = composite(function(n, xs) return take_drop("drop", n, xs, true) end)

-- The element of xs that idx names: an integer for xs of rank 1, else a tuple of xs.rank
-- integers (1-based).
local function is_integer_type(t) return t.kind == "scalar" and types.is_int(t.name) end
local function index_parts(what, ix, rank)
  local t = types.parse(ix.t)
  if rank == 1 and is_integer_type(t) then return { ix } end
  if rank > 1 and t.kind == "tuple" and #t.fields == rank then
    local parts = {}
    for d = 1, rank do
      if not is_integer_type(t.fields[d]) then parts = nil; break end
      parts[d] = ix[d]
    end
    if parts then return parts end
  end
  fail("%s: the indices must be %s, got %s", what,
       rank == 1 and "integers" or ("tuples of " .. rank .. " integers"), ix.t)
end

-- gather(idx, xs): an array of idx's shape holding xs at each index of idx (1-based; an
-- integer for xs of rank 1, a tuple of integers otherwise); an index outside xs is an
-- index error.
function F.gather(idx, xs)
  idx, xs = to_acc(idx, "gather"), to_acc(xs, "gather")
  if xs.rank < 1 then fail("gather: expected an array of rank 1 or more to read, got rank 0") end
  return lacc.map(function(i)
    return xs:at(unpack(index_parts("gather", i, xs.rank), 1, xs.rank))
  end, idx)
end

-- scatter(xs, idx, defaults): a copy of defaults with each element of xs written at the
-- index idx holds at its position (idx has xs's shape; indices as in gather; 0 in every
-- dimension drops the element). Where several elements go to one place the last (the
-- highest position in xs, row-major) wins, on every backend: a permute that keeps the
-- largest position.
function F.scatter(xs, idx, defaults)
  xs, idx = to_acc(xs, "scatter"), to_acc(idx, "scatter")
  defaults = to_acc(defaults, "scatter")
  if defaults.rank < 1 then fail("scatter: expected defaults of rank 1 or more, got rank 0") end
  if idx.rank ~= xs.rank then
    fail("scatter: the indices (rank %d) and the values (rank %d) differ in rank", idx.rank, xs.rank)
  end
  local r, sh = xs.rank, lacc.shape(xs)
  local pos = lacc.generate(sh, function(...)
    local ix, p = { ... }, 0
    for d = 1, r do p = p * sh[d] + (ix[d] - 1) end
    return p + 1
  end)
  local tagged = lacc.zip(xs, pos)
  local base = lacc.map(function(v) return v, exp.constant(0, "i64") end, defaults)
  local out = lacc.permute(function(new, old)
    local later = exp.gt(new[2], old[2])
    return exp.cond(later, new[1], old[1]), exp.cond(later, new[2], old[2])
  end, base, function(...)
    return unpack(index_parts("scatter", idx:at(...), defaults.rank), 1, defaults.rank)
  end, tagged)
  return lacc.map(function(p) return p[1] end, out)
end

M.install = util.installer(F, function(l) lacc = l end)

return M
