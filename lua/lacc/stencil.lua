-- lacc.stencil: stencil and stencil2, neighbourhoods of each element.
-- Owns: checking windows and boundaries; stencil as one core node (so the cpu backend
-- keeps boundary code off the interior), stencil2 as a generate over both neighbourhoods.
-- Must not: type-check beyond what gives a better message (the core checks).
local types = require "lacc.types"
local util = require "lacc.util"
local exp = require "lacc.exp"
local accs = require "lacc.acc"
local fail, where = util.fail, util.where
local to_acc, acc_at = accs.to_acc, accs.acc_at
local unpack = table.unpack or unpack
local MAX_RANK, MAX_WINDOW = util.limits.stencil_rank, util.limits.window

local M = {}
local F = {}   -- what this module adds to lacc
-- lacc itself (M.install): calls go through it, so they meet collection.lua's wrappers.
local lacc

-- stencil(f, boundary, xs [, window]) and stencil2(f, b1, xs, b2, ys [, window]): for
-- each element, f gets its neighbourhood (odd window sizes 1 to 9 per dimension, default
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
    if type(k) ~= "number" or k % 2 ~= 1 or k < 1 or k > MAX_WINDOW then
      fail("%s: window sizes must be odd, 1 to %d (dimension %d: %s)", what, MAX_WINDOW, d,
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

M.neighbours, M.check_window, M.check_boundary = neighbours, check_window, check_boundary

local boundary_code = { clamp = 0, mirror = 1, wrap = 2 }

-- A stencil of a stencil whose windows lie along different dimensions (a separable filter
-- written as two 1-D stencils: {1, 5} then {5, 1}), with the same clamp, mirror or wrap
-- boundary, is one stencil over the product window: per dimension the boundary maps each
-- index alone, so the outer one's neighbour o of the inner one's neighbour k is the input
-- element at o along the outer one's dimensions and k along the inner one's, and the
-- values are the two passes' bit for bit. One pass reads the input once and stores no
-- intermediate; it computes the inner values again for each outer neighbour, so it is
-- taken while that costs at most COMPOSE_TAPS window reads an element (5x5: 5 x 5 + 5;
-- a 7x7 filter's 56 lost to the two passes' 14 plus an array written and read).
-- composed[node] = { f, boundary, input, window, taps } of each stencil built here.
local composed = setmetatable({}, { __mode = "k" })
local COMPOSE_TAPS = 32

local function compose(f, b, xs, w)
  local inner = composed[xs.node]
  if inner == nil or inner.b ~= b or type(b) ~= "string" or os.getenv("LACC_STENCIL_FUSE") == "0" then
    return nil
  end
  local rank, W, nout = xs.rank, {}, 1
  for d = 1, rank do
    if w[d] > 1 and inner.w[d] > 1 then return nil end
    W[d] = math.max(w[d], inner.w[d])
    nout = nout * w[d]
  end
  local taps = nout * inner.taps + nout
  if taps > COMPOSE_TAPS then return nil end
  local t = xs.t
  -- the product window's element at (0-based) multi-index c, row-major in W
  local function at(c)
    local lin = 0
    for d = 1, rank do lin = lin * W[d] + c[d] end
    return lin + 1
  end
  local function each(win, fn)   -- fn(o) for each 0-based multi-index o of win, row-major
    local o = {}
    local function walk(d)
      if d > rank then return fn(o) end
      for k = 0, win[d] - 1 do o[d] = k; walk(d + 1) end
    end
    walk(1)
  end
  local function g(...)
    local v, outer = { ... }, {}
    each(w, function(o)
      local args = {}
      each(inner.w, function(k)
        local c = {}
        for d = 1, rank do c[d] = w[d] > 1 and o[d] or k[d] end
        args[#args + 1] = v[at(c)]
      end)
      outer[#outer + 1] = exp.result(t, "stencil", inner.f(unpack(args, 1, #args)))
    end)
    return f(unpack(outer, 1, #outer))
  end
  return g, inner.x, W, taps
end

-- stencil: a core node, so the cpu backend keeps boundary code off the interior.
function F.stencil(f, boundary, xs, window)
  local here = where()   -- (once: the array's, the lambda's and the node's place)
  xs = to_acc(xs, "stencil", here)
  if type(f) ~= "function" then fail("stencil: expected a function, got %s", type(f)) end
  if xs.rank < 1 or xs.rank > MAX_RANK then
    fail("stencil: expected an array of rank 1 to %d, got rank %d", MAX_RANK, xs.rank)
  end
  local w = check_window("stencil", window, xs.rank)
  local b = check_boundary("stencil", boundary, xs.t)
  local user_f, user_xs, user_w, taps, flag = f, xs, w, nil, 0
  do
    local g, x, W, n = compose(f, b, xs, w)
    if g then f, xs, w, taps, flag = g, x, W, n, 2 ^ 16 end
  end
  local spec, count = (type(b) == "string" and boundary_code[b] or 3) + flag, 1
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
  end, "stencil", here)
  local spec_node = exp.lift(math.floor(spec), "i64", "stencil", here).node
  if type(b) ~= "string" then return acc_at(here, "stencil", lam, xs.node, spec_node, b.node) end
  local r = acc_at(here, "stencil", lam, xs.node, spec_node)
  -- what a stencil of this one composes with: the user's own function, input and window
  -- (the composed form where this one was composed, with its cost)
  composed[r.node] = taps and { f = f, b = b, x = xs, w = w, taps = taps }
    or { f = user_f, b = b, x = user_xs, w = user_w, taps = count }
  return r
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
