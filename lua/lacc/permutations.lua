-- lacc.permutations: combinators that rearrange arrays, derived from the core's.
-- Owns: transpose, reverse, rotate, replicate and slice (backpermutes), and the push
-- arrays append (also xs .. ys), interleave and concat, which reverse and rotate keep
-- push arrays. Must not: type-check beyond what gives a better message (the core checks).
local util = require "lacc.util"
local exp = require "lacc.exp"
local accs = require "lacc.acc"
local fail = util.fail
local to_acc, acc = accs.to_acc, accs.acc
local unpack = table.unpack or unpack

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

function F.concat(list)
  if type(list) ~= "table" or getmetatable(list) ~= nil or #list == 0 then
    fail("concat: expected a non-empty table of arrays")
  end
  local function build(lo, hi)
    if lo == hi then return to_acc(list[lo], "concat") end
    local mid = math.floor((lo + hi) / 2)
    return lacc.append(build(lo, mid), build(mid + 1, hi))
  end
  return build(1, #list)
end

function F.transpose(xs)
  xs = to_acc(xs, "transpose")
  if xs.rank ~= 2 then fail("transpose: expected an array of rank 2, got rank %d", xs.rank) end
  local s = lacc.shape(xs)
  return lacc.backpermute({ s[2], s[1] }, function(i, j) return j, i end, xs)
end

-- reverse and rotate act on the innermost dimension.
local function along_inner(what, xs, g)
  xs = to_acc(xs, what)
  if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", what) end
  local s = lacc.shape(xs)
  local n = s[xs.rank]
  return lacc.backpermute(s, function(...)
    local ix = { ... }
    ix[xs.rank] = g(ix[xs.rank], n)
    return unpack(ix, 1, xs.rank)
  end, xs)
end

-- Elements lo + 1 .. lo + len of each row (innermost dimension) of xs.
local function inner_slice(xs, lo, len)
  local s = lacc.shape(xs)
  local r = xs.rank
  s[r] = len
  return lacc.backpermute(s, function(...)
    local ix = { ... }
    ix[r] = ix[r] + lo
    return unpack(ix, 1, r)
  end, xs)
end

local function inner_extent(xs) return lacc.shape(xs)[xs.rank] end

-- reverse and rotate of a push array stay push arrays ("Defunctionalizing Push Arrays"): the parts reversed or
-- cut and reordered, so that materialising the result still writes each part in a loop
-- of its own, with no test per element.
function F.reverse(xs)
  xs = to_acc(xs, "reverse")
  local p = xs._push
  if p and p[1] == "append" then return lacc.append(lacc.reverse(p[3]), lacc.reverse(p[2])) end
  if p then   -- interleave: the pairs in reverse order, each pair swapped
    local m = exp.min(inner_extent(p[2]), inner_extent(p[3]))
    return lacc.interleave(lacc.reverse(inner_slice(p[3], 0, m)), lacc.reverse(inner_slice(p[2], 0, m)))
  end
  return along_inner("reverse", xs, function(i, n) return n - i + 1 end)
end

-- rotate(k, xs): result[i] = xs[(i - 1 + k) mod n + 1], so rotate(1, {1,2,3}) = {2,3,1}.
function F.rotate(k, xs)
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
end

-- replicate(spec, xs): spec lists the result's dimensions, outermost first: lacc.all
-- takes the next dimension of xs, an extent adds a new dimension.
function F.replicate(spec, xs)
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
  return lacc.backpermute(shape, function(...)
    local ix, src = { ... }, {}
    for d, e in ipairs(spec) do
      if rawequal(e, lacc.all) then src[#src + 1] = ix[d] end
    end
    return unpack(src, 1, #src)
  end, xs)
end

-- slice(xs, spec): one entry per dimension of xs: lacc.all keeps it, an index fixes it.
function F.slice(xs, spec)
  xs = to_acc(xs, "slice")
  if type(spec) ~= "table" or #spec ~= xs.rank then
    fail("slice: expected a spec of %d entries", xs.rank)
  end
  for d, e in ipairs(spec) do
    if not rawequal(e, lacc.all) and not exp.is_exp(e) and
       not util.is_integer(e) then
      fail("slice: entry %d of the spec must be lacc.all or an index, got %s", d, util.show(e))
    end
  end
  local s = lacc.shape(xs)
  local shape = {}
  for d, e in ipairs(spec) do
    if rawequal(e, lacc.all) then shape[#shape + 1] = s[d] end
  end
  return lacc.backpermute(shape, function(...)
    local ix, src, k = { ... }, {}, 0
    for d, e in ipairs(spec) do
      if rawequal(e, lacc.all) then
        k = k + 1
        src[d] = ix[k]
      else
        src[d] = e
      end
    end
    return unpack(src, 1, xs.rank)
  end, xs)
end

M.install = util.installer(F, function(l) lacc = l end)

return M
