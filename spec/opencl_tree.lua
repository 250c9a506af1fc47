-- Run by opencl_spec.lua in a process of its own with LACC_CL_TREE=1: folds on the opencl
-- backend take the GPU path (many short chunks, their partials combined by a work-group
-- in local memory) on whatever device there is. Prints "ok" or what differed.
local lacc = require "lacc"
local H = require "helper"
local cl, cpu = { backend = "opencl" }, { backend = "cpu" }
local bad = {}
local function idiv(a, b) return math.floor(a / b) end
local function check(what, want, got)
  if not H.same(want, got) then bad[#bad + 1] = ("%s: want %s, got %s"):format(what, tostring(want), tostring(got)) end
end

-- The order the GPU path combines in, in plain Lua: chunk c of P = min(n / 256, 65536)
-- folds elements [n c / P, n (c + 1) / P); item l of G folds partials [P l / G,
-- P (l + 1) / G) (divisions rounded down); then rounds s = 1, 2, 4, ...: item l (a multiple of 2s) takes item l + s.
local function tree_order(f, x, n, G)
  local P = math.min(idiv(n, 256), 65536)
  local part = {}
  for c = 0, P - 1 do
    local lo, hi = idiv(n * c, P), idiv(n * (c + 1), P)
    local acc = x[lo + 1]
    for j = lo + 1, hi - 1 do acc = f(acc, x[j + 1]) end
    part[c] = acc
  end
  local item = {}
  for l = 0, G - 1 do
    local lo, hi = idiv(P * l, G), idiv(P * (l + 1), G)
    local acc = part[lo]
    for c = lo + 1, hi - 1 do acc = f(acc, part[c]) end
    item[l] = acc
  end
  local s = 1
  while s < G do
    for l = 0, G - 1, 2 * s do
      if l + s < G then item[l] = f(item[l], item[l + s]) end
    end
    s = 2 * s
  end
  return item[0]
end

-- a non-associative function shows the order: it must be the tree's, not the sequence's
do
  local n = 300007
  local x = {}
  for i = 1, n do x[i] = (i * 7919) % 1000 - 500 end
  local xs = lacc.fromtable(x, "i64")
  local got = H.num(lacc.run(lacc.fold1(function(a, b) return a - b end, xs), cl):get())
  local seq = x[1]
  for i = 2, n do seq = seq - x[i] end
  local matched = false
  local G = 256
  while G >= 2 do
    if got == tree_order(function(a, b) return a - b end, x, n, G) then matched = true end
    G = G / 2
  end
  if got == seq or not matched then bad[#bad + 1] = "fold1 (-) was not combined by the work-group tree: " .. got end
end

-- associative folds against plain Lua and the cpu backend, at and around the sizes where
-- the work-group path starts (n / 256 >= 256 partials)
for _, n in ipairs { 65535, 65536, 65537, 300007, 1000003 } do
  local x = {}
  local want = 0
  for i = 1, n do
    x[i] = (i * 7919) % 1000 - 500
    want = want + x[i]
  end
  local xs = lacc.fromtable(x, "i64")
  check("sum i64 " .. n, want, lacc.run(lacc.sum(xs), cl):get())
  check("fold z " .. n, want + 1000, lacc.run(lacc.fold(function(a, b) return a + b end, 1000, xs), cl):get())
  local mn = lacc.run(lacc.minimum(lacc.map(function(v) return lacc.cast(v, "i32") end, xs)), cl):get()
  check("minimum i32 " .. n, -500, mn)
  -- an affine map composed in order: associative, not commutative, a tuple accumulator
  local aff = lacc.map(function(v) return lacc.tuple(v, lacc.constant(3, "i64")) end, xs)
  local f = function(a, b) return lacc.tuple(a[1] * b[2] + b[1], a[2] * b[2]) end
  local c1 = lacc.run(lacc.fold1(f, aff), cl):get()
  local c2 = lacc.run(lacc.fold1(f, aff), cpu):get()
  check("affine[1] " .. n, H.num(c2[1]), c1[1])
  check("affine[2] " .. n, H.num(c2[2]), c1[2])
  -- u8 sums wrap; f64 with a NaN; bool all
  local u = lacc.run(lacc.sum(lacc.map(function(v) return lacc.cast(v + 500, "u8") end, xs)), cl):get()
  local uw = 0
  for i = 1, n do uw = (uw + (x[i] + 500) % 256) % 256 end
  check("sum u8 " .. n, uw, u)
  local nan = lacc.run(lacc.sum(lacc.generate({ n }, function(i)
    return lacc.cond(lacc.eq(i, n - 7), 0 / 0, lacc.cast(i, "f64"))
  end)), cl):get()
  check("sum with NaN " .. n, 0 / 0, nan)
  check("all " .. n, true, lacc.run(lacc.all(function(v) return lacc.ge(v, -500) end, xs), cl):get())
  check("any " .. n, false, lacc.run(lacc.any(function(v) return lacc.gt(v, 499) end, xs), cl):get())
end

-- a sum type in the accumulator: the first Left, in every layout
do
  local T = lacc.Either("i32", "f32")
  local n = 200003
  for _, layout in ipairs { "unboxed", "rtu", "compact" } do
    local opts = { backend = "opencl", layout = layout }
    local ms = lacc.generate({ n }, function(i)
      return lacc.cond(lacc.eq(i % 99991, 77), T.Left(lacc.cast(i, "i32")), T.Right(lacc.cast(i, "f32")))
    end)
    local first = lacc.fold1(function(a, b)
      return lacc.match(a, { Left = function() return a end, Right = function() return b end })
    end, ms)
    local got = lacc.run(first, opts):get()
    if not (got.tag == "Left" and H.num(got[1]) == 77) then
      bad[#bad + 1] = layout .. ": first Left is " .. tostring(got.tag) .. " " .. tostring(got[1])
    end
  end
end

io.write(#bad == 0 and "ok" or table.concat(bad, "\n"))
