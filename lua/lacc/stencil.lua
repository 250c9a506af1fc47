-- lacc.stencil: stencil and stencil2, neighbourhoods of each element.
-- Owns: checking windows and boundaries; stencil as one core node (so the cpu backend
-- keeps boundary code off the interior), stencil2 as a generate over both neighbourhoods.
-- Must not: type-check beyond what gives a better message (the core checks).
local types = require "lacc.types"
local util = require "lacc.util"
local exp = require "lacc.exp"
local accs = require "lacc.acc"
local fail = util.fail
local to_acc, acc = accs.to_acc, accs.acc
local unpack = table.unpack or unpack
local MAX_RANK, MAX_WINDOW = util.limits.stencil_rank, util.limits.window

local M = {}
local F = {}   -- what this module adds to lacc
-- lacc itself (M.install): calls go through it, so they meet collection.lua's wrappers.
local lacc

-- stencil(f, boundary, xs [, window]) and stencil2(f, b1, xs, b2, ys [, window]): for
-- each element, f gets its neighbourhood (odd window sizes 3 to 9 per dimension, default
-- 3) as separate arguments in row-major order, the centre in the middle; neighbours
-- outside the array come from the boundary: "clamp" (the nearest element), "mirror"
-- (reflected, the edge not repeated), "wrap" (periodic) or lacc.constant(v).
local function check_window(what, window, rank)
  if window ~= nil and type(window) ~= "number" and type(window) ~= "table" then
    fail("%s: window must be a size or a table of sizes, got %s", what, type(window))
  end
  local w = {}
  for d = 1, rank do
    local k = window == nil and 3 or (type(window) == "number" and window or window[d])
    if type(k) ~= "number" or k % 2 ~= 1 or k < 3 or k > MAX_WINDOW then
      fail("%s: window sizes must be odd, 3 to %d (dimension %d: %s)", what, MAX_WINDOW, d,
           tostring(k))
    end
    w[d] = k
  end
  return w
end

local function check_boundary(what, b, t)
  if b == "clamp" or b == "mirror" or b == "wrap" then return b end
  if exp.is_exp(b) then
    if b.t ~= t then fail("%s: a constant boundary of type %s for elements of %s", what, b.t, t) end
    return b
  end
  if type(b) == "number" then return exp.lift(b, t, what) end
  fail("%s: boundary must be \"clamp\", \"mirror\", \"wrap\" or lacc.constant(v), got %s",
       what, tostring(b))
end

-- The neighbourhood of the element at 1-based ix, in row-major window order.
local function neighbours(xs, sh, b, w, ix, out)
  local rank = #w
  local one = exp.lift(1, "i64", "stencil")
  local function fetch(idx)
    local at, inside = {}, nil
    for d = 1, rank do
      local k, n = idx[d], sh[d]
      if b == "clamp" then
        k = lacc.min(lacc.max(k, one), n)
      elseif b == "mirror" then
        k = lacc.cond(lacc.lt(k, one), 2 - k, lacc.cond(lacc.gt(k, n), 2 * n - k, k))
        k = lacc.min(lacc.max(k, one), n)
      elseif b == "wrap" then
        k = lacc.imod(k - 1, n) + 1
      else
        local ok = lacc.land(lacc.ge(k, one), lacc.le(k, n))
        inside = inside and lacc.land(inside, ok) or ok
        k = lacc.min(lacc.max(k, one), n)
      end
      at[d] = k
    end
    local v = xs:at(unpack(at, 1, rank))
    if inside then v = lacc.cond(inside, v, b) end
    return v
  end
  local idx = {}
  local function walk(d)
    if d > rank then
      out[#out + 1] = fetch(idx)
      return
    end
    local h = (w[d] - 1) / 2
    for off = -h, h do
      idx[d] = ix[d] + off
      walk(d + 1)
    end
  end
  walk(1)
end

local boundary_code = { clamp = 0, mirror = 1, wrap = 2 }

-- stencil: a core node, so the cpu backend keeps boundary code off the interior.
function F.stencil(f, boundary, xs, window)
  xs = to_acc(xs, "stencil")
  if type(f) ~= "function" then fail("stencil: expected a function, got %s", type(f)) end
  if xs.rank < 1 or xs.rank > MAX_RANK then
    fail("stencil: expected an array of rank 1 to %d, got rank %d", MAX_RANK, xs.rank)
  end
  local w = check_window("stencil", window, xs.rank)
  local b = check_boundary("stencil", boundary, xs.t)
  local spec, count = type(b) == "string" and boundary_code[b] or 3, 1
  for d = 1, xs.rank do
    spec = spec + w[d] * 2 ^ (4 * d)
    count = count * w[d]
  end
  local fields = {}
  for i = 1, count do fields[i] = xs.t end
  local lam = exp.lambda(f, { types.tuple(unpack(fields, 1, count)) }, nil, function(v)
    local parts = {}
    for i = 1, count do parts[i] = exp.prj(v[1], i) end
    return unpack(parts, 1, count)
  end, "stencil")
  local spec_node = exp.lift(math.floor(spec), "i64", "stencil").node
  if type(b) == "string" then return acc("stencil", lam, xs.node, spec_node) end
  return acc("stencil", lam, xs.node, spec_node, b.node)
end

function F.stencil2(f, b1, xs, b2, ys, window)
  xs, ys = to_acc(xs, "stencil2"), to_acc(ys, "stencil2")
  if type(f) ~= "function" then fail("stencil2: expected a function, got %s", type(f)) end
  if xs.rank ~= ys.rank or xs.rank < 1 or xs.rank > MAX_RANK then
    fail("stencil2: expected two arrays of one rank, 1 to %d, got ranks %d and %d", MAX_RANK,
         xs.rank, ys.rank)
  end
  local w = check_window("stencil2", window, xs.rank)
  b1, b2 = check_boundary("stencil2", b1, xs.t), check_boundary("stencil2", b2, ys.t)
  local s1, s2 = lacc.shape(xs), lacc.shape(ys)
  local sh = {}
  for d = 1, xs.rank do sh[d] = lacc.min(s1[d], s2[d]) end
  return lacc.generate(sh, function(...)
    local args = {}
    neighbours(xs, s1, b1, w, { ... }, args)
    neighbours(ys, s2, b2, w, { ... }, args)
    return f(unpack(args, 1, #args))
  end)
end

M.install = util.installer(F, function(l) lacc = l end)

return M
