-- The distributed cases, run by spec/mpi/mpi_spec.lua under `mpirun -n P` (every rank
-- runs this file). Each case builds one program twice from the same code: over
-- distributed arrays (lacc.mpi, backend "mpi") and over the whole arrays on one process
-- (the interpreter: an independent reference). Rank 1 prints one line a case, "ok <name>"
-- or "not ok <name>: <what differed, on which ranks>", after the ranks agree, then
-- "done <P>". Checks of errors, of the communication model and of explain follow the
-- cases, each its own line too.
local lacc = require "lacc"

local M = {}
local cases = {}
local function case(name, f, opts) cases[#cases + 1] = { name = name, f = f, opts = opts } end

local EXTENTS = { 0, 1, 2, 3, 5, 7, 13 }   -- below, at and past 1..4 ranks, not multiples

-- deterministic inputs, the same on every rank and VM
local function ints(n, seed)
  local t, s = {}, seed
  for i = 1, n do
    s = ((s * 16838) % 32768 * 65536 + s * 20077 + 12345) % 2147483648   -- exact on LuaJIT too
    t[i] = s % 201 - 100
  end
  return t
end
local function reals(n, seed)
  local t = ints(n, seed)
  for i = 1, n do t[i] = t[i] / 8 + (i % 3 == 0 and 0.001 * i or 0) end
  return t
end
local function rows(n, w, seed, gen)
  local flat, t = (gen or ints)(n * w, seed), {}
  for i = 1, n do
    t[i] = {}
    for j = 1, w do t[i][j] = flat[(i - 1) * w + j] end
  end
  return t
end

-- a host array on every rank; distributed: rank 1's copy scattered
local function input(tbl, ty, dist)
  local a = lacc.fromtable(tbl, ty)
  if dist then return lacc.mpi.scatter(lacc.mpi.rank() == 1 and a or nil) end
  return a
end
local function vec(n, ty, seed, dist)
  return input((ty:sub(1, 1) == "f" and reals or ints)(n, seed), ty, dist)
end
local function mat(n, w, ty, seed, dist)
  if n == 0 then return dist and lacc.mpi.from_blocks(lacc.array(ty, { 0, w })) or lacc.array(ty, { 0, w }) end
  return input(rows(n, w, seed, ty:sub(1, 1) == "f" and reals or ints), ty, dist)
end

-- segment lengths of 0 to 4 summing to n (deterministic), an empty one first and last
local function cut(n, seed)
  local r, t, left = ints(4 * n + 8, seed), { 0 }, n
  local i = 1
  while left > 0 do
    local l = math.min(left, i > 2 * n and 4 or r[i] % 5)
    t[#t + 1] = l
    left, i = left - l, i + 1
  end
  t[#t + 1] = 0
  return t
end
-- the lengths without the empty ones (fold1Seg's segments)
local function nonempty(lens)
  local t = {}
  for _, l in ipairs(lens) do if l > 0 then t[#t + 1] = l end end
  return t
end
local add = function(a, b) return a + b end
-- associative, not commutative: the first non-zero
local first = function(a, b) return lacc.cond(lacc.ne(a, 0), a, b) end

-- the combinators that move elements between ranks by fetches (each run several
-- exchanges): at 0, 1, below and past the rank counts (make test's time)
local MOVED_AT = { [0] = true, [1] = true, [3] = true, [13] = true }

for _, n in ipairs(EXTENTS) do
  local N = tostring(n)
  -- one case for them all at each extent (each case's run has its own agreements)
  local moves = {}   -- group -> the functions (a run gives at most 16 results)
  local function moved(group, f)
    if MOVED_AT[n] then
      moves[group] = moves[group] or {}
      table.insert(moves[group], f)
    end
  end
  case("map zipWith imap n=" .. N, function(d)
    local xs, ys = vec(n, "f64", 1, d), vec(n, "f64", 2, d)
    local z = lacc.zipWith(function(a, b) return a * 2 - b end, lacc.map(function(x) return x + 1 end, xs), ys)
    return lacc.imap(function(i, x) return x * lacc.cast(i, "f64") end, z)
  end)
  case("generate fill (rank 2) n=" .. N, function(d)
    local gen = d and lacc.mpi.generate or lacc.generate
    local fill = d and lacc.mpi.fill or lacc.fill
    local g = gen({ n, 3 }, function(i, j) return i * 10 + j end)
    return lacc.zipWith(add, g, fill({ n, 3 }, lacc.constant(7, "i64")))
  end)
  case("element-wise over operands of other extents (the least kept) n=" .. N, function(d)
    local xs, ys = vec(n, "i64", 42, d), vec(n + 3, "i64", 43, d)
    local short, long = vec(5, "i64", 44, false), vec(n + 7, "i64", 45, false)
    local m, w = mat(n, 4, "i32", 46, d), mat(n + 2, 3, "i32", 47, d)
    return { lacc.zipWith(add, xs, ys), lacc.zipWith(add, ys, xs),
             lacc.zipWith3(function(a, b, c) return a * b - c end, ys, short, xs),
             lacc.zipWith(add, ys, long), lacc.imap(function(i, x) return x * i end, lacc.zipWith(add, long, ys)),
             lacc.zipWith(add, ys, short), lacc.zipWith(add, w, m), lacc.append(w, m),
             -- replicated programs whose extents are known only when they run (filters)
             lacc.zipWith(add, xs, (lacc.filter(function(x) return lacc.gt(x, 0) end, short))),
             lacc.zipWith(add, (lacc.filter(function(x) return lacc.ne(x, 0) end, long)), ys) }
  end)
  case("zip unzip where n=" .. N, function(d)
    local xs, ys = vec(n, "i32", 3, d), vec(n, "i32", 4, d)
    local a, b = lacc.unzip(lacc.zip(xs, ys))
    return lacc.where(lacc.zipWith(lacc.lt, a, b), a, b)
  end)
  case("sum maximum of everything n=" .. N, function(d)
    local xs = vec(n, "i64", 5, d)
    local s = lacc.sum(lacc.map(function(x) return x * x end, xs))
    return { s, n > 0 and lacc.maximum(xs) or lacc.sum(xs) }
  end)
  case("fold fold1 in rank order n=" .. N, function(d)
    local xs = vec(n, "i32", 6, d)
    local ys = lacc.map(function(x) return lacc.cond(lacc.gt(x, 40), x, lacc.constant(0, "i32")) end, xs)
    return { lacc.fold(first, lacc.constant(0, "i32"), ys), lacc.fold(add, lacc.constant(3, "i32"), xs),
             n > 0 and lacc.fold1(first, ys) or lacc.sum(ys) }
  end)
  case("float sum (reassociated) n=" .. N, function(d)
    return lacc.sum(vec(n, "f64", 7, d))
  end)
  case("folds of rank 2 along each dimension n=" .. N, function(d)
    local m = mat(n, 4, "i64", 8, d)
    return { lacc.sum(m, 1), lacc.sum(m, 2), lacc.fold(first, lacc.constant(0, "i64"), m, { dim = 1 }),
             lacc.fold(add, lacc.constant(1, "i64"), m), lacc.product(lacc.map(function(x) return lacc.band(x, 3) + 1 end, m), 1),
             lacc.sum(m) }
  end)
  case("combinators over a reduction's replicated result n=" .. N, function(d)
    local m = mat(n, 4, "i64", 28, d)
    local cols = lacc.sum(m, 1)   -- the same on every rank
    return { lacc.map(function(x) return x * 2 end, cols), lacc.backpermute({ 2 }, function(i) return 5 - i end, cols),
             lacc.scanl1(add, cols), lacc.zipWith(add, lacc.map(function(x) return x + 1 end, cols), cols) }
  end)
  case("arithmetic, acond and awhile n=" .. N, function(d)
    local xs, ys = vec(n, "f64", 31, d), vec(n, "i64", 32, d)
    local total = lacc.sum(xs)                       -- rank 0: a scalar in the arithmetic
    local ar = lacc.sqrt(lacc.abs(xs * 2 - 1)) + xs * total - lacc.max(xs, 0)
    -- halve until the sum of squares is at most 50 (no turn where it already is)
    local h = lacc.awhile(function(x) return lacc.gt(lacc.sum(x * x), 50) end,
                          function(x) return x / 2 end, xs)
    -- two arrays and a replicated counter: three turns
    local a, b, k = lacc.awhile(function(_, _, c) return lacc.lt(c, 3) end,
                                function(p, q, c) return p + q, -q, c + 1 end,
                                { ys, ys, lacc.unit(lacc.constant(0, "i64")) })
    -- a loop-invariant array read with this turn's scalar (the same node, each turn anew)
    local fixed = vec(n, "i64", 33, d)
    local g = lacc.awhile(function(_, t) return lacc.lt(t, 4) end,
                          function(x, t) return x + lacc.map(function(v) return v * lacc.the(t) end, fixed), t + 1 end,
                          { fixed, lacc.unit(lacc.constant(1, "i64")) })
    -- an array of the body read twice, once inside a function: run once, shared
    local sh = lacc.awhile(function(_, t) return lacc.lt(t, 3) end, function(x, t)
      local y = x * 0.5 + 1
      local tot = lacc.sum(y)
      return y - lacc.map(function(v) return v * lacc.the(tot) / 1000 end, y), t + 1
    end, { xs, lacc.unit(lacc.constant(0, "i64")) })
    local up = lacc.gt(lacc.sum(ys), 0)
    local c1 = lacc.acond(up, lacc.map(function(v) return v * 3 end, ys), ys)
    local c2, c3 = lacc.acond(lacc.lnot(up), { ys, xs }, { -ys, xs + 0.5 })
    return { ar, h, a, b, k, g, c1, c2, c3, sh }
  end)
  -- a loop's turns rebind last turn's local programs to this turn's arrays (lacc.mpi's
  -- lazy): arrays that swap roles each turn (rebound at once, not one after the other), a
  -- loop array read by index inside a function with this turn's scalar, a loop whose
  -- array changes extent (built anew), a tuple-typed loop array, a loop array whose first
  -- value another program of the body reads too
  case("awhile: arrays swapping roles, read by index, of changing extent, of tuples n=" .. N, function(d)
    local xs, ys = vec(n, "i64", 34, d), vec(n, "i64", 35, d)
    local zero = lacc.unit(lacc.constant(0, "i64"))
    local fa, fb, ft = lacc.awhile(function(_, _, t) return lacc.lt(t, 5) end,
                                   function(a, b, t) return b, lacc.zipWith(function(u, v) return u - 2 * v end, a, b), t + 1 end,
                                   { xs, ys, zero })
    local r, rt = lacc.awhile(function(_, t) return lacc.lt(t, 4) end, function(x, t)
      return lacc.imap(function(i, v) return v * 2 + x[i] * lacc.the(t) + i end, x), t + 1
    end, { xs, zero })
    local shrink = lacc.awhile(function(a) return lacc.gt(lacc.size(a), 2) end,
                               function(a) return lacc.map(function(v) return v * 3 - 1 end, lacc.drop(1, a)) end, ys)
    local pairs0 = lacc.zip(xs, ys)
    local tp, tt = lacc.awhile(function(_, t) return lacc.lt(t, 3) end, function(p, t)
      return lacc.map(function(e) return lacc.tuple(e[2] + 1, e[1] * 2) end, p), t + 1
    end, { pairs0, zero })
    -- the loop array's first value is the very array the condition reads in a program
    -- of its own (examples/mpi_cg.lua's r.r and b.b): that program stays as it is
    local fx = vec(n, "f64", 36, d)
    local s0 = lacc.sum(lacc.map(function(v) return v * v + 1 end, fx))
    -- (at most 20 turns: a stale condition is a wrong count, not a loop without end)
    local hx, hs, hk = lacc.awhile(function(_, s, k) return lacc.land(lacc.lt(k, 20), lacc.gt(s, s0 * 0.2)) end,
                                   function(x, _, k)
                                     return x * 0.5, lacc.sum(lacc.map(function(v) return v * v + 1 end, x * 0.5)) * 0.5, k + 1
                                   end, { fx, s0, zero })
    -- a replicated loop array beside a distributed one: each rank's rows of it, each turn
    local rep = lacc.generate({ n }, function(i) return i * 3 - 7 end)
    local dx, rw, rk = lacc.awhile(function(_, _, t) return lacc.lt(t, 4) end, function(x, w, t)
      return lacc.zipWith(function(u, v) return u * 2 + v end, x, w), lacc.map(function(v) return v - 1 end, w), t + 1
    end, { ys, rep, zero })
    return { fa, fb, ft, r, rt, shrink, tp, tt, hx, hs, hk, dx, rw, rk }
  end)
  -- a loop releases a turn's arrays once no program still to run reads them: a stencil's
  -- product read by a map inside a fold, by values read twice (run at once) and by a loop
  -- inside the body (run after the others); another's through acond (the branch's array
  -- itself, which the body's result reads at the turn's end) and by a value read twice
  case("awhile: a turn's arrays read again after their other readers n=" .. N, function(d)
    local xs, ys = vec(n, "i64", 37, d), vec(n, "i64", 38, d)
    local zero = lacc.unit(lacc.constant(0, "i64"))
    local x, y, t = lacc.awhile(function(_, _, k) return lacc.lt(k, 4) end, function(a, b, k)
      local s = lacc.stencil(function(l, c, r) return l - 2 * c + r + 1 end, "clamp", a)
      local s2 = lacc.stencil(function(l, c, r) return l + c * 3 - r end, "clamp", b)
      local u = lacc.zipWith(function(p, q) return p * 3 + q end, s, b)
      local dot = lacc.sum(lacc.zipWith(function(p, q) return lacc.band(p * q, 65535) end, s, u))
      local v = lacc.zipWith(function(p, q) return lacc.band(p * lacc.the(dot) + q, 65535) end, s, u)
      local z = lacc.awhile(function(_, c) return lacc.lt(c, 2) end, function(q, c)
        return lacc.zipWith(function(e, f) return e + f end, q, s), c + 1
      end, { v, zero })
      local pick = lacc.acond(lacc.gt(k, 1), s2, u)
      local e2 = lacc.zipWith(function(p, q) return p - q end, s2, u)
      local dot2 = lacc.sum(e2)
      return lacc.zipWith(function(p, q) return lacc.band(p + q, 4095) end, z, pick),
             lacc.zipWith(function(p, q) return lacc.band(p - q + lacc.the(dot2), 1023) end, e2, v), k + 1
    end, { xs, ys, zero })
    return { x, y, t }
  end)
  -- lacc.the, lacc.shape, lacc.size of distributed programs outside any function (values
  -- deferred until the run has them), in arguments, in functions, in awhile's condition
  -- and body; of a distributed array run already (its global shape, constants)
  if MOVED_AT[n] then
    case("the shape size of distributed programs outside a function n=" .. N, function(d)
      local xs, m = vec(n, "i64", 61, d), mat(n, 3, "f64", 62, d)
      local k = lacc.the(lacc.sum(xs))
      local np = lacc.size((lacc.filter(function(x) return lacc.gt(x, 0) end, xs)))
      local sh = lacc.shape(m)
      local halves = lacc.awhile(function(a) return lacc.gt(lacc.size(a), 1) end,
                                 function(a) return lacc.take(lacc.idiv(lacc.size(a), 2), a) end, xs)
      local x2, c = lacc.awhile(function(_, t) return lacc.lt(lacc.the(t), 3) end,
                                function(x, t) return x + 1, t + 1 end, { xs, lacc.unit(lacc.constant(0, "i64")) })
      return { lacc.unit(k * 2 + 1), lacc.fill({ 3 }, k), lacc.generate({ np }, function(i) return i * k end),
               lacc.map(function(x) return x + k end, xs), lacc.map(function(x) return x * lacc.cast(sh[2], "f64") end, m),
               halves, x2, c, lacc.acond(lacc.gt(k, 10), xs, -xs), lacc.iota(np),
               lacc.unit(sh[1] * 10 + sh[2] + lacc.size(m)), lacc.take(np, xs), lacc.rotate(k, xs),
               lacc.slice(xs, { { 1, np } }), lacc.replicate({ lacc.imod(np, 3), lacc.all }, xs),
               lacc.backpermute({ np }, function(i) return np + 1 - i end, xs) }
    end)
    case("the shape size inside the functions of a loop's body, and lacc.mpi.fill of one n=" .. N, function(d)
      local xs = vec(n, "f64", 66, d)
      local k = lacc.the(lacc.sum(xs))
      local fill = d and lacc.mpi.fill or lacc.fill
      local shrunk = lacc.awhile(function(a) return lacc.gt(lacc.size(a), 2) end, function(a)
        return lacc.drop(1, lacc.map(function(x) return x / lacc.cast(lacc.size(a), "f64") end, a))
      end, xs)
      local y, t = lacc.awhile(function(a, c) return lacc.lt(lacc.the(c), lacc.size(a)) end,
        function(a, c) return lacc.map(function(x) return x + lacc.cast(lacc.the(c), "f64") end, a), c + 1 end,
        { xs, lacc.unit(lacc.constant(0, "i64")) })
      return { fill({ 4 }, k / 2), shrunk, y, t, lacc.unit(lacc.max(k, 100) + lacc.fma(k, k, 1)),
               lacc.unit(lacc.cond(lacc.gt(k, 100), k, -k)), lacc.unit(k:max(3) * 2) }
    end)
    case("float gradients of a sum over the distributed rows (data-parallel) n=" .. N, function(d)
      local X, y = mat(n, 3, "f64", 74, d), vec(n, "f64", 75, d)
      local w = lacc.fromtable({ 0.25, -0.5, 0.125 }, "f64")
      local function logistic(wt, xs, ys)
        return lacc.sum(lacc.zipWith(function(z, t)
          local p = 1 / (1 + lacc.exp(-z))
          return -(t * lacc.log(p) + (1 - t) * lacc.log(1 - p))
        end, lacc.matmul(xs, wt), lacc.map(function(t) return lacc.cast(lacc.gt(t, 0), "f64") end, ys)))
      end
      local v, gw, gX = lacc.value_and_grad(logistic, { 1, 2 })(w, X, y)
      -- a replicated vector of the rows' extent (cut to each rank's rows), a fold along rows
      local c = vec(n, "f64", 76, false)
      local g2X, g2c = lacc.grad(function(xs, cs)
        return lacc.sum(lacc.zipWith(function(r, k) return r * k end,
          lacc.sum(lacc.map(function(x) return x * x end, xs), 2), cs))
      end, { 1, 2 })(X, c)
      -- functions of sums: a mean, a product of two (one of them a constant's), a log
      local g3w, g3X = lacc.grad(function(wt, xs)
        local sq = lacc.sum(lacc.map(function(z) return z * z end, lacc.matmul(xs, wt)))
        local other = lacc.sum(lacc.map(function(z) return lacc.abs(z) end, xs))
        return lacc.log(sq + 1) * (other + lacc.sum(c)) + sq / math.max(n, 1)
      end, { 1, 2 })(w, X)
      return { v, gw, gX, g2X, g2c, g3w, g3X }
    end)
    case("the shape size of arrays run already, and of values made from them n=" .. N, function(d)
      local xs = lacc.run(vec(n, "i32", 63, d))
      local ms = lacc.run(lacc.map(function(x) return x * 2 end, mat(n, 2, "i64", 64, d)))
      local big = lacc.the(lacc.maximum(lacc.map(function(x) return lacc.abs(x) end, xs) .. lacc.fromtable({ 0 }, "i32")))
      local sh = lacc.shape(ms)
      return { lacc.unit(lacc.size(xs) + sh[1] * sh[2]),
               lacc.generate({ sh[2], 2 }, function(i, j) return i + j * lacc.cast(big, "i64") end),
               lacc.map(function(x) return lacc.cast(x, "i64") * lacc.size(ms) end, xs),
               lacc.fold(function(a, b) return a + b * lacc.cast(big, "i64") end, lacc.constant(0, "i64"), ms),
               lacc.unit(lacc.tuple(big, lacc.size(xs))) }
    end)
  end
  case("all any n=" .. N, function(d)
    local xs = vec(n, "i32", 9, d)
    return { lacc.all(function(x) return lacc.lt(x, 90) end, xs), lacc.any(function(x) return lacc.gt(x, 90) end, xs) }
  end)
  case("scans n=" .. N, function(d)
    local xs = vec(n, "i64", 10, d)
    local ys = lacc.map(function(x) return lacc.cond(lacc.gt(x, 60), x, lacc.constant(0, "i64")) end, xs)
    return { lacc.scanl(add, lacc.constant(5, "i64"), xs), lacc.scanl1(add, xs), lacc.scanr(add, 2, xs),
             lacc.scanr1(add, xs), lacc.scanl1(first, ys), lacc.scanr1(first, ys) }
  end)
  -- segments of 0 to 4 elements summing to n, empty ones first, last and between: most
  -- cross a rank boundary somewhere on 2-4 ranks; tails: segments ending before n
  -- (make test's time: one run for the segments of each extent, at most 16 results)
  if MOVED_AT[n] then
    case("segmented folds and scans (cut, and ending early) n=" .. N, function(d)
      local xs = vec(n, "i32", 40, d)
      local ys = lacc.map(function(x) return lacc.cond(lacc.gt(x, 30), x, lacc.constant(0, "i32")) end, xs)
      local lens = cut(n, 41)
      local segs = lacc.fromtable(lens, "i32")
      local ex, tot = lacc.scanlSeg_(add, 2, xs, segs)
      local rex, rtot = lacc.scanrSeg_(first, 0, ys, segs)
      local short = cut(math.max(n - 2, 0), 42)
      return { lacc.foldSeg(first, 0, ys, segs), lacc.foldSeg(add, 3, xs, segs),
               lacc.fold1Seg(add, xs, lacc.fromtable(nonempty(lens), "i64")),
               lacc.scanl1Seg(first, ys, segs), lacc.scanr1Seg(first, ys, segs),
               lacc.scanlSeg(add, -4, xs, segs), lacc.scanrSeg(first, 0, ys, segs),
               lacc.scanr1Seg(add, xs, segs), ex, tot, rex, rtot,
               lacc.foldSeg(add, 3, xs, lacc.fromtable(short, "i32")),
               lacc.fold1Seg(first, ys, lacc.fromtable(nonempty(short), "i32")) }
    end)
  end
  if MOVED_AT[n] then
    case("segmented folds and scans (one segment; rank 2; distributed lengths) n=" .. N, function(d)
      local xs = vec(n, "i32", 40, d)
      local whole = lacc.fromtable({ n }, "i64")
      local m = mat(n, 7, "i64", 43, d)
      local segs = input({ 2, 0, 3, 2 }, "i64", d)
      local ex, tot = lacc.scanrSeg_(add, 1, m, segs)
      local wex, wtot = lacc.scanlSeg_(first, 0, xs, whole)
      return { lacc.foldSeg(add, 3, xs, whole), lacc.scanr1Seg(first, xs, whole), wex, wtot,
               lacc.foldSeg(first, lacc.constant(0, "i64"), m, segs), lacc.scanl1Seg(add, m, segs),
               lacc.scanrSeg(first, 0, m, segs), ex, tot,
               lacc.foldSeg(add, 0, vec(n, "i64", 44, false), input(cut(n, 45), "i32", d)) }
    end)
  end
  if MOVED_AT[n] then
    case("scanl_ scanr_ along the distributed dimension n=" .. N, function(d)
      local xs = vec(n, "i64", 47, d)
      local ys = lacc.map(function(x) return lacc.cond(lacc.gt(x, 60), x, lacc.constant(0, "i64")) end, xs)
      local a, b = lacc.scanl_(add, 5, xs)
      local c, e = lacc.scanr_(first, 0, ys)
      local g = lacc.scanl_(first, 0, ys, { dim = 1 })
      return { a, b, c, e, g }
    end)
  end
  case("scans of rank 2 along rows n=" .. N, function(d)
    local m = mat(n, 3, "i32", 11, d)
    return { lacc.scanl1(add, m), lacc.scanr(add, 1, m) }
  end)
  if MOVED_AT[n] then   -- (make test's time)
    case("scans of rank 2 and 3 along the distributed dimension n=" .. N, function(d)
      local m = mat(n, 3, "i64", 29, d)
      local f = lacc.map(function(x) return lacc.cond(lacc.gt(x, 40), x, lacc.constant(0, "i64")) end, m)
      -- quarters: sums exact in any order, as the distributed scan reassociates
      local c = lacc.reshape({ n, 2, 2 }, lacc.map(function(x) return lacc.cast(x, "f64") / 4 end, mat(n, 4, "i64", 30, d)))
      local one = { dim = 1 }
      return { lacc.scanl1(add, m, one), lacc.scanr1(add, m, one), lacc.scanl(add, lacc.constant(7, "i64"), m, one),
               lacc.scanr(add, -3, m, one), lacc.scanl1(first, f, one), lacc.scanr(first, 0, f, one),
               lacc.scanl(add, 0.5, c, one), lacc.scanr1(add, c, one) }
    end)
  end
  for _, b in ipairs { "clamp", "mirror", "wrap", "constant" } do
    case("stencil 3x3 " .. b .. " n=" .. N, function(d)
      local m = mat(n, 5, "f64", 12, d)
      local bd = b == "constant" and lacc.constant(-1.5, "f64") or b
      return lacc.stencil(function(...)
        local v = { ... }
        return v[1] - v[2] * 2 + v[5] * 3 + v[9] + v[4] * 0.5 - v[8]
      end, bd, m)
    end)
  end
  if MOVED_AT[n] then   -- (make test's time)
    -- both distributed, or one distributed and one replicated (a host array, or a program
    -- every rank runs alike: its rows around each block come from its own copy)
    for _, both in ipairs { true, false } do
    case(("stencil2 (rank 1 and 2, every boundary, inner extents that differ%s) n=%s"):format(
         both and "" or ", one replicated", N), function(d)
      local a, b = mat(n, 5, "i32", 57, d), mat(n, 4, "i32", 58, d and both)
      local u, w = vec(n, "i64", 59, d and both), vec(n, "i64", 60, d)
      local b2 = both and b or lacc.map(function(x) return x + 1 end, b)   -- a replicated program
      local f9 = function(...)
        local v = { ... }
        return v[1] - v[5] * 2 + v[9] + v[10] * 3 - v[14] + v[18]
      end
      local f5 = function(...)   -- a window of 5 along rank 1: two arrays of five
        local v = { ... }
        return v[1] * 2 - v[3] + v[5] + v[6] - v[8] * 3 + v[10]
      end
      return { lacc.stencil2(f9, "clamp", a, "mirror", b), lacc.stencil2(f9, "wrap", a, "wrap", b2),
               both and lacc.stencil2(f9, lacc.constant(-7, "i32"), a, "clamp", b)
                    or lacc.stencil2(f9, lacc.constant(-7, "i32"), b, "clamp", a),
               lacc.stencil2(f5, "mirror", u, lacc.constant(3, "i64"), w, 5),
               lacc.stencil2(f5, "wrap", u, "wrap", w, { 5 }),
               -- one boundary wrapping, the other not
               lacc.stencil2(f9, "wrap", a, "clamp", b), lacc.stencil2(f9, "mirror", a, "wrap", b2),
               lacc.stencil2(f5, lacc.constant(3, "i64"), u, "wrap", w, 5),
               lacc.stencil2(f5, "wrap", w, "mirror", u, 5) }
    end)
    end
    -- outer extents that differ: each array read under its own extent and boundary (the
    -- longer one's rows past the shorter's end real, its wrap at its own end)
    case("stencil2 of arrays of other outer extents, distributed and replicated n=" .. N, function(d)
      local a, b = mat(n, 4, "i32", 67, d), mat(n + 2, 3, "i32", 68, d)
      local long, short = mat(n + 3, 4, "i32", 69, false), mat(math.max(n - 1, 0), 4, "i32", 70, false)
      local u, w = vec(n, "i64", 71, d), vec(n + 1, "i64", 72, d)
      local rp = lacc.map(function(x) return x * 2 end, mat(n + 1, 4, "i32", 73, false))   -- a replicated program
      local f9 = function(...)
        local v = { ... }
        return v[1] - v[5] * 2 + v[9] + v[10] * 3 - v[14] + v[18]
      end
      local f5 = function(...)
        local v = { ... }
        return v[1] * 2 - v[3] + v[5] + v[6] - v[8] * 3 + v[10]
      end
      return { lacc.stencil2(f9, "clamp", a, "mirror", b), lacc.stencil2(f9, "wrap", b, "wrap", a),
               lacc.stencil2(f9, lacc.constant(-7, "i32"), a, "wrap", long), lacc.stencil2(f9, "mirror", short, "clamp", a),
               lacc.stencil2(f9, "wrap", rp, "wrap", a), lacc.stencil2(f9, "clamp", a, "clamp", long),
               lacc.stencil2(f5, "wrap", w, "clamp", u, 5), lacc.stencil2(f5, "mirror", u, "wrap", w, { 5 }),
               lacc.stencil2(f5, "wrap", u, "wrap", w, 5) }
    end)
  end
  case("stencil of tuples, mirror n=" .. N, function(d)
    local m = lacc.zip(mat(n, 3, "f64", 23, d), mat(n, 3, "i32", 24, d))
    local tm = lacc.run(m)   -- materialised: a distributed array of tuples
    return lacc.stencil(function(...)
      local v = { ... }
      return v[2][1] * 2 + lacc.cast(v[8][2], "f64") - v[5][1]
    end, "mirror", tm)
  end)
  case("stencil window 5 wrap (rank 1) n=" .. N, function(d)
    local xs = vec(n, "i32", 13, d)
    return lacc.stencil(function(a, b, c, e, f) return a + 2 * b + 3 * c + 5 * e + 7 * f end, "wrap", xs, 5)
  end)
  case("backpermute gather n=" .. N, function(d)
    local xs, m = vec(n, "f64", 14, d), mat(n, 3, "i32", 15, d)
    local rev = lacc.backpermute({ n }, function(i) return n - i + 1 end, xs)
    local tr = lacc.backpermute({ n, 2 }, function(i, j) return n - i + 1, 3 - j end, m)
    local idx = vec(n, "i64", 16, d)
    local at = lacc.map(function(k) return lacc.band(k, 1023) % math.max(n, 1) + 1 end, idx)
    return { rev, tr, lacc.gather(at, xs) }
  end)
  for _, how in ipairs { "partials", "pairs" } do
  case("permute histogram and scatter (" .. how .. ") n=" .. N, function(d)
    local xs = vec(n, "i32", 17, d)
    local ones = lacc.map(function() return lacc.constant(1, "i32") end, xs)
    local hist = lacc.permute(add, lacc.fill({ 10 }, lacc.constant(0, "i32")),
      function(i) return lacc.cast(lacc.band(xs[i] + 100, 7), "i64") + 1 end, ones)
    local dest = vec(n, "i32", 18, d)
    local idx = lacc.map(function(x) return lacc.cast(lacc.band(x + 100, 3), "i64") + 1 end, xs)
    local over = n >= 4 and lacc.scatter(xs, idx, dest) or dest
    return { hist, over }
  end, { exchange = how })
  end
  -- onto few targets, each kind of combining: a commutative primitive with an identity
  -- (seeded partials) and another function ((value, touched) pairs); targets 5 and 6 no
  -- element reaches keep their defaults' bits (-0.0, NaN, the extremes)
  for _, how in ipairs { "tree", "partials" } do
  case("permute onto few targets, each way of combining (" .. how .. ") n=" .. N, function(d)
    local xs = vec(n, "i32", 31, d)
    local function tgt(i) return lacc.cast(lacc.band(xs[i] + 100, 3), "i64") + 1 end
    local function vals(ty, f) return lacc.map(function(x) return lacc.cast(f(x), ty) end, xs) end
    local defs = lacc.fromtable({ -0.0, 0 / 0, 1.5, -0.0, -0.0, 0 / 0 }, "f64")
    local eighths = vals("f64", function(x) return lacc.cast(x, "f64") / 8 end)   -- sums exact
    local negz = vals("f64", function() return lacc.constant(-0.0, "f64") end)
    local wide = lacc.fromtable({ -1000, 5, -7, 9, -2 ^ 62, 2 ^ 62 }, "i64")
    local halves = vals("f32", function(x)   -- products exact
      return lacc.cond(lacc.gt(x, 0), lacc.constant(2, "f32"), lacc.constant(0.5, "f32"))
    end)
    local u = lacc.fromtable({ 7, 100, 3, 0, 4294967295, 0 }, "u32")
    local odd = function(a, b) return lacc.cond(lacc.gt(a, -1000), a + b, b) end   -- not a primitive
    return { lacc.permute(add, defs, tgt, eighths), lacc.permute(add, defs, tgt, negz),
             lacc.permute(lacc.max, wide, tgt, vals("i64", function(x) return -(x * x) - 1 end)),   -- all below 0
             lacc.permute(lacc.min, wide, tgt, vals("i64", function(x) return x * 3 end)),
             lacc.permute(lacc.min, u, tgt, vals("u32", function(x) return x + 100 end)),
             lacc.permute(lacc.max, u, tgt, vals("u32", function(x) return x + 100 end)),
             lacc.permute(function(a, b) return a * b end, lacc.fill({ 6 }, lacc.constant(-0.0, "f32")), tgt, halves),
             lacc.permute(add, lacc.fill({ 6 }, lacc.constant(0, "i8")), tgt, vals("i8", function(x) return x * 3 end)),
             lacc.permute(odd, defs, tgt, eighths) }
  end, { exchange = how })
  end
  case("reshape flatten transpose n=" .. N, function(d)
    local m = mat(n, 6, "i32", 25, d)
    local r = lacc.reshape({ 3, n * 2 }, m)
    local t = lacc.transpose(mat(n, 5, "f64", 26, d))
    return { r, lacc.flatten(m), lacc.reshape({ n * 6 }, lacc.map(function(x) return x + 1 end, m)), t,
             lacc.map(function(x) return x * 2 end, lacc.transpose(t)) }
  end)
  case("row-wise sort argsort take drop reverse rotate scanl_ (rank 2) n=" .. N, function(d)
    local m = mat(n, 7, "i64", 27, d)
    local ex, tot = lacc.scanl_(add, lacc.constant(1, "i64"), m)
    return { lacc.sort(m), lacc.argsort(m, { descending = true }), lacc.take(3, m), lacc.drop(2, m),
             lacc.reverse(m), lacc.rotate(2, m), ex, tot }
  end)
  moved(1, function(d)   -- reverse rotate take drop (rank 1)
    local xs = vec(n, "f64", 31, d)
    local ys = vec(n, "i32", 32, d)
    return { lacc.rotate(-3, ys), lacc.take(3, xs), lacc.drop(2, ys), lacc.take(-1, xs),
             lacc.map(function(x) return x * 2 end, lacc.reverse(lacc.map(function(x) return x + 1 end, xs))),
             lacc.sum(lacc.drop(1, lacc.reverse(ys))) }
  end)
  moved(5, function(d)   -- counts that are expressions of replicated values (rank 1)
    local xs = vec(n, "f64", 31, d)
    local ys = vec(n, "i32", 32, d)
    local h = lacc.fromtable({ 3, -2 }, "i64")
    local k3 = lacc.the(lacc.sum(lacc.take(1, h)))   -- 3, read from a host array
    local c = function(v) return lacc.constant(v, "i64") end
    local r = { lacc.take(k3, xs), lacc.drop(lacc.constant(2, "i32"), ys), lacc.rotate(k3 * -1 - 1, ys),
                lacc.take(lacc.constant(2.75, "f64"), xs), lacc.drop(lacc.the(lacc.sum(h)) * 100, xs),
                lacc.slice(xs, { { k3 - 2, c(n) } }), lacc.slice(ys, { { c(n), 1, k3 - 5 } }),
                lacc.slice(xs, { { 2, c(n - 1), k3 } }) }
    if n >= 3 then r[#r + 1] = lacc.slice(ys, { k3 }) end
    r[#r + 1] = lacc.replicate({ k3, lacc.all }, ys)
    r[#r + 1] = lacc.replicate({ k3 - 3, lacc.all }, xs)
    return r
  end)
  moved(1, function(d)   -- slice append concat interleave (rank 1)
    local xs, ys = vec(n, "f64", 33, d), vec((n * 2 + 1) % 9, "f64", 34, d)
    local r = { lacc.slice(xs, { { n, 1, -2 } }), lacc.slice(xs, { { 2, n - 1 } }),
                lacc.slice(xs, { { n - 1, 2, -1 } }), lacc.slice(ys, { lacc.all }),
                xs .. lacc.map(function(x) return -x end, ys), lacc.concat { ys, xs, ys }, lacc.interleave(ys, xs) }
    if n > 0 then r[#r + 1] = lacc.slice(xs, { n }) end
    return r
  end)
  moved(4, function(d)   -- replicated parts beside distributed ones: a host array, a program of one
    local xs, ys = vec(n, "f64", 33, d), vec((n * 2 + 1) % 9, "f64", 34, d)
    local h = vec(5, "f64", 38, false)
    local hp = lacc.map(function(x) return x * 3 end, h)
    local m = mat(n, 4, "f64", 35, d)
    return { xs .. h, lacc.concat { hp, ys, h, xs }, lacc.interleave(h, xs), lacc.interleave(ys, hp),
             lacc.append(m, mat(n, 2, "f64", 39, false)), lacc.interleave(mat(n, 3, "f64", 39, false), m) }
  end)
  moved(2, function(d)   -- slice replicate append concat interleave (rank 2)
    local m, w = mat(n, 4, "f64", 35, d), mat(n, 3, "f64", 36, d)
    return { lacc.slice(m, { lacc.all, { 4, 1, -2 } }), lacc.slice(m, { lacc.all, 2 }),
             lacc.replicate({ lacc.all, 2, lacc.all }, m), lacc.append(m, w), lacc.append(m, m),
             lacc.concat { w, m, w }, lacc.interleave(m, w),
             lacc.slice(m, { { 2, n - 1 }, lacc.all }), lacc.slice(m, { { n, 1, -3 }, { 1, 3, 2 } }),
             lacc.slice(m, { { 1, n, 2 }, 4 }), n > 0 and lacc.slice(w, { n, lacc.all }) or lacc.sum(w),
             lacc.replicate({ 3, lacc.all, lacc.all }, w), lacc.replicate({ 5, lacc.all, 2, lacc.all }, w) }
  end)
  moved(3, function(d)   -- argmax argmin (ties, NaN; rank 1 and along each dimension)
    if n == 0 then return lacc.sum(vec(n, "f64", 37, d)) end
    local xs = input((function()   -- few values: ties; a NaN past the middle
      local t = ints(n, 37)
      for i = 1, n do t[i] = t[i] % 3 end
      if n > 2 then t[n - 1] = 0 / 0 end
      return t
    end)(), "f64", d)
    local ys = vec(n, "i32", 38, d)
    local m = mat(n, 3, "f32", 39, d)
    return { lacc.argmax(xs), lacc.argmin(xs), lacc.argmax(ys), lacc.argmin(ys),
             lacc.argmax(m, 1), lacc.argmin(m, 2), lacc.argmax(lacc.map(function(x) return x % 2 end, m), 1) }
  end)
  moved(3, function(d)   -- matmul: row blocks by a replicated matrix and vector, batches alike
    local a = mat(n, 4, "f64", 40, d)
    local b, v = mat(4, 3, "f64", 41, false), vec(4, "f64", 42, false)
    local gen = d and lacc.mpi.generate or lacc.generate
    local p = gen({ n, 2, 3 }, function(i, j, k) return lacc.cast(i * 7 + j * 3 - k, "f64") * 0.5 end)
    local q = gen({ n, 3, 2 }, function(i, j, k) return lacc.cast(i - j * k, "f64") end)
    return { lacc.matmul(a, b), lacc.matmul(a, v), lacc.matmul(lacc.map(function(x) return x * 2 end, a), b),
             lacc.matmul(p, q) }
  end)
  if MOVED_AT[n] then
    case("matmul of a replicated or distributed operand by distributed rows, argmax of rank 2 n=" .. N, function(d)
      -- k = n split over the ranks: each rank's partial product, summed over the ranks;
      -- integers, so the sum is exact in any order
      local c, w = mat(3, n, "i64", 45, false), vec(n, "i64", 46, false)
      local kb, kv = mat(n, 2, "i64", 47, d), vec(n, "i64", 48, d)
      -- argmax, argmin over the whole of rank 2: the first extreme in row-major order
      local m = mat(n, 3, "i32", 49, d)
      local f = lacc.map(function(x) return lacc.cast(lacc.band(x, 3), "f64") end, m)
      -- two distributed operands: b all-gathered, each rank's rows of a times it
      local da, wa = mat(n, n, "i64", 50, d), mat(5, n, "i64", 51, d)
      local out = { lacc.matmul(c, kb), lacc.matmul(c, kv), lacc.matmul(w, kb),
                    lacc.matmul(da, kb), lacc.matmul(da, kv), lacc.matmul(wa, kb),
                    lacc.matmul(lacc.map(function(x) return x - 1 end, wa), lacc.map(function(x) return x * 3 end, kb)) }
      if n > 0 then
        -- rank 3: each row's inner dimensions as one
        local m3 = lacc.reshape({ n, 3, 2 }, mat(n, 6, "i32", 52, d))
        local f3 = lacc.map(function(x) return lacc.cast(lacc.band(x, 3), "f64") end, m3)
        for _, x in ipairs { lacc.argmax(m), lacc.argmin(m), lacc.argmax(f), lacc.argmin(f),
                             lacc.argmax(m3), lacc.argmin(f3) } do out[#out + 1] = x end
      end
      return out
    end)
  end
  moved(3, function(d)   -- sort_by_key (rank 1; equal keys keep their order)
    local keys = lacc.map(function(x) return lacc.band(x, 3) end, vec(n, "i64", 43, d))
    local vals = vec(n, "f64", 44, d)
    local k, v = lacc.sort_by_key(keys, vals)
    local k2, v2 = lacc.sort_by_key(lacc.map(function(x) return -x end, vals), keys, { descending = true })
    return { k, v, k2, v2 }
  end)
  if MOVED_AT[n] then
    case("sort_by_key of a distributed and a replicated array n=" .. N, function(d)
      -- the replicated one sliced to the other's rows
      local keys = lacc.map(function(x) return lacc.band(x, 3) end, vec(n, "i64", 43, d))
      local k3, v3 = lacc.sort_by_key(keys, vec(n, "i32", 45, false))
      local k4, v4 = lacc.sort_by_key(vec(n, "i32", 46, false), vec(n, "f64", 44, d), { descending = true })
      return { k3, v3, k4, v4 }
    end)
  end
  if MOVED_AT[n] then
    case("arrays of sum types across ranks n=" .. N, function(d)
      local gen = d and lacc.mpi.generate or lacc.generate
      local m = lacc.map(function(i)
        return lacc.cond(lacc.eq(lacc.imod(i, 3), 0), lacc.Just(lacc.cast(i * 7 % 5, "f64") * 1.5), lacc.Nothing("f64"))
      end, gen({ n }, function(i) return i end))
      local val = function(v) return lacc.match(v, { Just = function(x) return x end, Nothing = function() return -1.0 end }) end
      local pick = function(a, b) return lacc.cond(lacc.gt(val(b), val(a)), b, a) end
      local T = lacc.Either(lacc.Maybe("f64"), lacc.tuple("i8", "f32"))
      local host = {}
      for i = 1, n do
        local left = i % 3 == 0 and { tag = "Nothing" } or { tag = "Just", i * 1.25 }
        host[i] = i % 2 == 0 and { tag = "Right", { i - 5, i / 4 } } or { tag = "Left", left }
      end
      local e = input(host, T, d)   -- scattered as leaves
      local fill = d and lacc.mpi.fill or lacc.fill
      return { m, lacc.sort(m, { by = val }), lacc.fold(pick, lacc.Nothing("f64"), m), lacc.scanl1(pick, m),
               lacc.stencil(function(a, b, c) return lacc.cond(lacc.gt(val(a), val(c)), a, b) end, "clamp", m, { 3 }),
               lacc.reverse(m), lacc.rotate(2, m), lacc.backpermute({ n }, function(i) return n + 1 - i end, m),
               lacc.permute(pick, fill({ 3 }, lacc.Nothing("f64")), function(i) return lacc.imod(i, 3) + 1 end, m),
               lacc.scanl1Seg(pick, m, lacc.fromtable(cut(n, 48), "i32")), e, lacc.reverse(e),
               lacc.zip(e, m) }
    end)
  end
  case("sort_by_key of rank 2 (each row), and of NaN keys n=" .. N, function(d)
    -- ties, a NaN key; descending; by a key of the key
    local mk = mat(n, 5, "i64", 53, d)
    local fk = lacc.map(function(x)
      return lacc.cond(lacc.eq(lacc.band(x, 7), 1), lacc.constant(0 / 0, "f64"), lacc.cast(lacc.band(x, 3), "f64"))
    end, mk)
    local mv = mat(n, 5, "f64", 54, d)
    local k3, v3 = lacc.sort_by_key(fk, mv)
    local k4, v4 = lacc.sort_by_key(mk, mv, { descending = true })
    local k5, v5 = lacc.sort_by_key(mk, mv, { by = function(x) return lacc.band(x, 1) end })
    -- rank 1 with NaN keys (0 / 0: its sign bit set): the keys' bits kept, as on one process
    local nk = lacc.map(function(x)
      return lacc.cond(lacc.eq(lacc.band(x, 3), 1), lacc.constant(0 / 0, "f64"), lacc.cast(x, "f64"))
    end, vec(n, "i64", 55, d))
    local k6, v6 = lacc.sort_by_key(nk, vec(n, "i32", 56, d))
    return { k3, v3, k4, v4, k5, v5, k6, v6 }
  end)
  case("sort argsort across ranks (rank 1) n=" .. N, function(d)
    local xs = vec(n, "i64", 29, d)
    local few = lacc.map(function(x) return lacc.band(x, 3) end, xs)   -- many equal keys
    local fs = lacc.map(function(x)
      return lacc.cond(lacc.eq(lacc.band(x, 7), 1), lacc.constant(0 / 0, "f64"),
        lacc.cond(lacc.eq(lacc.band(x, 7), 2), lacc.constant(-0.0, "f64"), lacc.cast(lacc.band(x, 12), "f64")))
    end, xs)
    local us = lacc.map(function(x) return lacc.cast(x, "u8") end, xs)
    return { lacc.sort(xs), lacc.argsort(few), lacc.sort(fs), lacc.argsort(fs, { descending = true }),
             lacc.sort(us, { descending = true }), lacc.argsort(lacc.map(function(x) return lacc.cast(x, "f32") end, few)) }
  end)
  case("sort argsort by keys, of bools and tuples across ranks (rank 1) n=" .. N, function(d)
    local xs = vec(n, "i64", 31, d)
    local bs = lacc.map(function(x) return lacc.gt(x, 10) end, xs)
    local ps = lacc.zip(lacc.map(function(x) return lacc.band(x, 3) end, xs),
                        lacc.map(function(x) return lacc.cast(x, "f64") / 2 end, xs))
    local by_mod = { by = function(x) return lacc.band(x, 7) end }
    local by_two = { by = function(x) return lacc.gt(lacc.band(x, 4), 0), lacc.cast(-x, "f32") end, descending = true }
    local by_fst = { by = function(p) return p[1] end }
    return { lacc.sort(xs, by_mod), lacc.argsort(xs, by_mod), lacc.sort(xs, by_two), lacc.argsort(xs, by_two),
             lacc.sort(bs), lacc.argsort(bs, { descending = true }), lacc.sort(ps), lacc.argsort(ps, by_fst),
             lacc.sort(ps, by_fst) }
  end)
  case("filter n=" .. N, function(d)
    local xs = vec(n, "i64", 19, d)
    local v, c = lacc.filter(function(x) return lacc.gt(x, 0) end, xs)
    local m = lacc.reshape({ n, 2, 2 }, mat(n, 4, "i32", 32, d))
    local mv, mc = lacc.filter(function(x) return lacc.lt(x, 20) end, m)
    local rv, rc = lacc.filter(function(x) return lacc.gt(x, -30) end, m, { per_row = true })
    local pv, pc = lacc.filter(function(x) return lacc.gt(x, 0) end, xs, { per_row = true })
    return { lacc.map(function(x) return x * 3 end, v), c, mv, mc, rv, rc, lacc.sum(rc), pv, pc }
  end)
  for g, what in ipairs { "reverse rotate take drop slice append concat interleave (rank 1)",
                          "slice replicate append concat interleave (rank 2, rows kept)",
                          "argmax argmin matmul sort_by_key",
                          "append concat interleave of distributed and replicated parts",
                          "take drop rotate slice replicate by counts found when the program runs (rank 1)" } do
    if moves[g] then
      case(what .. " across ranks n=" .. N, function(d)
        local all = {}
        for _, f in ipairs(moves[g]) do
          local r = f(d)
          if type(r) ~= "table" or getmetatable(r) ~= nil then r = { r } end
          for _, x in ipairs(r) do all[#all + 1] = x end
        end
        return all
      end)
    end
  end
end

-- an array's type, shape and elements as bytes (of sums: the core's leaves form, as
-- lacc.mpi sends them)
local core = require("lacc.util").core
local function bytes(a) return a:type() .. ":" .. table.concat(a:shape(), ",") .. ":" .. core.array_to_leaves(a) end

-- ---- errors: the same error on every rank, never a hang

-- every rank's message, all the same, else what differs
local function same_everywhere(msg)
  local who, other = lacc.mpi.agree(msg == nil and "no error on this rank" or nil)
  if who then return ("rank %d: %s"):format(who, other) end
  local mine = lacc.mpi.from_blocks(lacc.frombytes(msg, "u8"))
  local all = mine:allgather():tobytes()
  if all ~= msg:rep(lacc.mpi.size()) then return "the ranks' messages differ: " .. all end
  return nil
end
local function strip(msg) return (tostring(msg):gsub(" %(at [^)]*%)", ""):gsub(" %[rank %d+ of %d+%]$", "")) end
-- running p fails alike on every rank, its message holding `want`: nil, else what differed
local function fails_everywhere(p, want)
  local ok, err = pcall(lacc.run, p)
  if ok then return "no error" end
  local bad = same_everywhere(tostring(err))
  if bad then return bad end
  if not tostring(err):find(want, 1, true) then return "unexpected: " .. tostring(err) end
end

local checks = {}
local function check_case(name, f) checks[#checks + 1] = { name = name, f = f } end

-- the ranks go on together after an error
local function went_on()
  local s = lacc.run(lacc.sum(lacc.mpi.fill({ 5 }, lacc.constant(2, "i64"))))
  if s:get() ~= 10 then return "the next run gave " .. tostring(s) end
end
-- build(generate)'s run fails: the same error on every rank, the interpreter's message
local function fails_alike(build)
  local _, want = pcall(lacc.run, build(lacc.generate), { backend = "interp" })
  local ok, err = pcall(lacc.run, build(lacc.mpi.generate))
  if ok then return "no error" end
  local bad = same_everywhere(tostring(err))
  if bad then return bad end
  if strip(err) ~= strip(want) then return ("got %q, want %q"):format(strip(err), strip(want)) end
  return went_on()
end

-- p's run, by ranks out of step: on one rank no error, else the same error `want` on
-- every rank; then the ranks go on
local function out_of_step(p, want)
  local ok, err = pcall(lacc.run, p)
  if lacc.mpi.size() == 1 then
    if not ok then return "one rank: " .. tostring(err) end
  else
    if ok then return "no error" end
    local bad = same_everywhere(tostring(err))
    if bad then return bad end
    if tostring(err) ~= want then return ("got %q, want %q"):format(tostring(err), want) end
  end
  return went_on()
end

check_case("an index error on one rank is every rank's error", function()
  local ys = lacc.fromtable({ 1, 2, 3, 4, 5, 6 }, "i64")
  return fails_alike(function(gen)
    return lacc.map(function(x) return ys[x] end, gen({ 9 }, function(i) return i end))
  end)
end)
check_case("an array read twice (run once, shared) whose run fails: every rank's error", function()
  local ys = lacc.fromtable({ 1, 2, 3, 4, 5, 6 }, "i64")
  return fails_alike(function(gen)
    local m = lacc.map(function(x) return ys[x] end, gen({ 9 }, function(i) return i end))
    return lacc.zipWith(function(a, b) return a + b end, m, lacc.map(function(v) return v * 2 end, m))
  end)
end)
check_case("matmul of two distributed arrays whose extents differ: every rank's error", function()
  local a = lacc.mpi.generate({ 6, 4 }, function(i, j) return lacc.cast(i + j, "f64") end)
  local b = lacc.mpi.generate({ 5, 2 }, function(i, j) return lacc.cast(i * j, "f64") end)
  local ok, err = pcall(lacc.run, lacc.matmul(a, b))
  if ok then return "no error" end
  local bad = same_everywhere(tostring(err))
  if bad then return bad end
  if not strip(err):find("a's last extent (4) is not b's second last extent (5)", 1, true) then
    return "unexpected: " .. tostring(err)
  end
  return went_on()
end)
check_case("a fold or scan whose combining fails only past some ranks' partials: every rank's error", function()
  -- partials of 2 (4 ranks) or 4 combine; 8 reads ys out of bounds, in the tree's last round
  local ys = lacc.fromtable({ 1, 2, 3, 4, 5, 6 }, "i64")
  for _, comb in ipairs { lacc.fold1, lacc.scanl1 } do
    local bad = fails_alike(function(gen)
      return comb(function(a, b)
        return lacc.cond(lacc.gt(a + b, 4), ys[a * 0 + 100], a + b)
      end, gen({ 8 }, function() return lacc.constant(1, "i64") end))
    end)
    if bad then return bad end
  end
end)
check_case("a permute whose combining fails, in a rank's partial or in the tree's: every rank's error", function()
  -- 8 ones onto one target: partials of 2 (4 ranks) or 4 combine without failing; 5
  -- reads ys out of bounds (one process: at the fifth element)
  local ys = lacc.fromtable({ 1, 2, 3, 4, 5, 6 }, "i64")
  return fails_alike(function(gen)
    return lacc.permute(function(a, b) return lacc.cond(lacc.gt(a + b, 4), ys[a * 0 + 100], a + b) end,
                        lacc.fill({ 3 }, lacc.constant(0, "i64")), function(i) return i * 0 + 2 end,
                        gen({ 8 }, function() return lacc.constant(1, "i64") end))
  end)
end)
check_case("misuse: a function of a program every rank computes alike reads a distributed array's rows: " ..
           "every rank's error, then the ranks go on", function()
  local xs = vec(9, "i64", 65, true)
  local k = lacc.the(lacc.sum(xs))
  local ys = lacc.map(function(x) return x + 1 end, xs)
  local bad = fails_everywhere(lacc.generate({ lacc.size(ys) - 2 }, function(i) return xs[i] * k end),
    "index: a distributed array read inside the function of generate")
  return bad or went_on()
end)
check_case("a failure inside an awhile's body on one rank is every rank's error, then the ranks go on", function()
  local ys = lacc.fromtable({ 1, 2, 3, 4, 5, 6 }, "i64")
  return fails_alike(function(gen)
    return lacc.awhile(function(x) return lacc.lt(lacc.sum(x), 1000) end,
                       function(x) return lacc.map(function(v) return ys[v] + v end, x) end,
                       gen({ 9 }, function(i) return i end))
  end)
end)
check_case("misuse: ranks whose awhile conditions differ all raise, naming each one's, then go on", function()
  local P, r = lacc.mpi.size(), lacc.mpi.rank()
  local xs = lacc.mpi.generate({ 6 }, function(i) return i end)
  local mine = lacc.unit(lacc.constant(r == 1, "bool"))   -- rank 1 alone would loop
  local others = P == 2 and "rank 2 runs" or ("ranks 2-%d run"):format(P)
  return out_of_step(lacc.awhile(function(x) return lacc.land(mine, lacc.lt(lacc.sum(x), 100)) end,
                                 function(x) return x * 2 end, xs),
    ("mpi: ranks disagree on the next step: rank 1 runs awhile's condition, turn 1: true; " ..
     "%s awhile's condition, turn 1: false"):format(others))
end)
check_case("a failure before an exchange is every rank's error", function()
  local ys = lacc.fromtable({ 1, 2, 3 }, "f64")
  local xs = lacc.mpi.generate({ 7 }, function(i) return i end)
  local r = lacc.backpermute({ 7 }, function(i) return i end, lacc.map(function(x) return ys[x] end, xs))
  local ok, err = pcall(lacc.run, r)
  if ok then return "no error" end
  local bad = same_everywhere(tostring(err))
  if bad then return bad end
  if not tostring(err):find("out of bounds", 1, true) then return "unexpected: " .. tostring(err) end
end)
check_case("an index error in a distributed program names its combinator's place, as one process does", function()
  local xs = lacc.mpi.generate({ 6 }, function(i) return lacc.cast(i, "f64") end)
  local built = debug.getinfo(1, "l").currentline + 1
  local p = lacc.backpermute({ 6 }, function(i) return i + 1 end, xs)
  local ok, err = pcall(lacc.run, p)   -- (lacc.run's line is another)
  if ok then return "no error" end
  local bad = same_everywhere(tostring(err))
  if bad then return bad end
  local want = ("backpermute: index function result out of bounds (at spec/mpi/cases.lua:%d)"):format(built)
  if tostring(err):gsub(" %[rank %d+ of %d+%]$", "") ~= want then return tostring(err) .. ", not " .. want end
end)
check_case("replicate by a negative count found when the program runs: every rank's error", function()
  local xs = lacc.mpi.generate({ 5 }, function(i) return i end)
  return fails_everywhere(lacc.replicate({ lacc.constant(-2, "i64"), lacc.all }, xs),
                          "replicate: negative extent -2 in dimension 1")
end)
check_case("misuse: a combinator not yet distributed says so", function()
  local xs = lacc.mpi.generate({ 4 }, function(i) return i end)
  -- (parts of other ranks: one process's error)
  local ok, err = pcall(lacc.append, xs, lacc.fromtable({ { 1 } }, "i64"))
  if ok or not tostring(err):find("append: arrays of one rank, 1 or more, expected, got ranks 1 and 2", 1, true) then
    return tostring(err)
  end
  ok, err = pcall(function() return xs[1] end)
  if ok or not tostring(err):find("index: a distributed array (lacc.mpi) read outside", 1, true) then
    return tostring(err)
  end
  -- the guide's list: partition, gradients through exchanges, vjp and jvp
  local sq = function(x) return lacc.sum(lacc.map(function(v) return v * v end, x)) end
  local fx = lacc.map(function(v) return lacc.cast(v, "f64") end, xs)
  local three = function(a, b, c) return a + b * c end
  local wt = lacc.fromtable({ 1, 2, 3, 4 }, "f64")
  for _, c in ipairs {
    { function() return lacc.partition(xs) end, "partition: not yet distributed (lacc.mpi)" },
    { function() return lacc.grad(function(x) return sq(lacc.stencil(three, "clamp", x)) end)(fx) end,
      "grad: stencil (at " },
    { function() return lacc.value_and_grad(function(x) return lacc.maximum(x) end)(fx) end,
      "value_and_grad: the function's result reads an argument other than through a sum over rows" },
    -- a replicated argument read other than as an operand: its gradient would be lost
    { function()
        return lacc.grad(function(w, x) return lacc.sum(lacc.map(function(v) return v * w[1] end, x)) end)(wt, fx)
      end, "grad: map reads a replicated argument inside its function" },
    { function()
        return lacc.grad(function(w, x)
          return lacc.sum(lacc.zipWith(function(a, b) return a * b end, x, lacc.map(function(v) return v * 2 end, w)))
        end)(wt, fx)
      end, "grad: a replicated program built from a differentiated argument" },
    { function() return lacc.vjp(sq, xs) end, "vjp: not yet distributed (lacc.mpi)" },
    { function() return lacc.jvp(sq, { xs }, { xs }) end, "jvp: not yet distributed (lacc.mpi)" } } do
    ok, err = pcall(c[1])
    if ok or not tostring(err):find(c[2], 1, true) then return c[2] .. ": " .. tostring(err) end
  end
  ok, err = pcall(lacc.unit, xs)
  if ok or not tostring(err):find("unit: expected a scalar expression or a number, got a distributed program", 1, true) then
    return tostring(err)
  end
  ok, err = pcall(lacc.mpi.scatter, lacc.mpi.rank() == 1 and 42 or nil)
  if ok or not tostring(err):find("mpi.scatter: expected a host array on rank 1, got number", 1, true) then
    return tostring(err)
  end
  return same_everywhere(strip(err))
end)

check_case("misuse: ranks out of step all raise the same error, naming each one's step, then go on", function()
  local P, r = lacc.mpi.size(), lacc.mpi.rank()
  local n = r == P and 9 or 8   -- the last rank's array is longer
  local others = P == 2 and "rank 1 runs" or ("ranks 1-%d run"):format(P - 1)
  return out_of_step(lacc.sum(lacc.mpi.generate({ n }, function(i) return i end)),
    ("mpi: ranks disagree on the next step: %s sum of i64 {8}; rank %d runs sum of i64 {9}"):format(others, P))
end)

check_case("a program run again (compiled parts) follows its inputs' new values", function()
  local n = 11
  local function build(m, hist_keys)
    local st = lacc.stencil(function(...)
      local v = { ... }
      return v[2] + v[4] - v[5] + v[6] * 2 + v[8]
    end, "mirror", m)
    local ones = lacc.map(function() return lacc.constant(1, "i64") end, hist_keys)
    local h = lacc.permute(add, lacc.fill({ 6 }, lacc.constant(0, "i64")),
      function(i) return lacc.band(hist_keys[i] + 100, 3) + 1 end, ones)
    return { st, lacc.sum(m, 1), lacc.scanl1(add, hist_keys), h }
  end
  local full, keys = lacc.fromtable(rows(n, 4, 21), "i64"), lacc.fromtable(ints(n, 22), "i64")
  local dm = lacc.mpi.scatter(lacc.mpi.rank() == 1 and full or nil)
  local dk = lacc.mpi.scatter(lacc.mpi.rank() == 1 and keys or nil)
  local prog = build(dm, dk)
  for round = 1, 3 do
    local want = { lacc.run(build(full, keys), { backend = "interp" }) }
    local got = { lacc.run(prog) }
    for i = 1, #want do
      local g = lacc.mpi.is_distributed(got[i]) and got[i]:allgather() or got[i]
      if bytes(g) ~= bytes(want[i]) then
        return ("round %d, result %d: got %s, want %s"):format(round, i, tostring(g), tostring(want[i]))
      end
    end
    -- new values in place, on every rank's block and in the reference
    local lo = dm:offset()
    for r = 1, dm.block:shape()[1] do dm.block:set(r, 2, round * 1000 + lo + r) end
    for r = 1, n do full:set(r, 2, round * 1000 + r) end
    for r = 1, dk.block:shape()[1] do dk.block:set(r, (lo + r) * round) end
    for r = 1, n do keys:set(r, r * round) end
  end
end)

check_case("mpi.load reads each rank's rows of a .npy file", function()
  local name = lacc.mpi.from_blocks(lacc.frombytes(lacc.mpi.rank() == 1 and os.tmpname() or "", "u8"))
  local path = name:allgather():tobytes() .. ".npy"
  local want = {}
  for _, spec in ipairs { { "f32", { 11, 3 } }, { "i64", { 5 } }, { "u8", { 0, 2 } }, { "bool", { 7 } } } do
    local t, sh = spec[1], spec[2]
    local a = lacc.run(lacc.generate(sh, function(i, j)
      local v = i * 7 + (j or 0)
      if t == "bool" then return lacc.eq(lacc.imod(v, 3), 0) end
      return lacc.cast(v, t)
    end))
    if lacc.mpi.rank() == 1 then a:save(path) end
    lacc.mpi.barrier()
    local d = lacc.mpi.load(path)
    local got = d:allgather()
    lacc.mpi.barrier()
    if bytes(got) ~= bytes(a) then want[#want + 1] = ("%s: got %s, want %s"):format(t, tostring(got), tostring(a)) end
    local lo, held = d:offset(), d.block:shape()[1]
    if lo ~= math.floor((lacc.mpi.rank() - 1) * sh[1] / lacc.mpi.size()) or held ~= d:counts()[lacc.mpi.rank()] then
      want[#want + 1] = "the block's rows"
    end
  end
  if lacc.mpi.rank() == 1 then os.remove(path); os.remove(path:sub(1, -5)) end
  if #want > 0 then return table.concat(want, "; ") end
end)

check_case("d:save writes the whole array as one process's a:save does; write_png of a distributed array", function()
  local name = lacc.mpi.from_blocks(lacc.frombytes(lacc.mpi.rank() == 1 and os.tmpname() or "", "u8"))
  local base = name:allgather():tobytes()
  local mine, theirs = base .. "-d.npy", base .. "-h.npy"
  local function file(p)
    local f = io.open(p, "rb")
    if not f then return "(no file)" end
    local text = f:read("a")
    f:close()
    return text
  end
  local bad = {}
  for _, spec in ipairs { { "f64", { 13, 3 } }, { "i16", { 5 } }, { "u8", { 0, 2 } }, { "bool", { 7, 2 } },
                          { "i64", { 1 } }, { "(i32,f32)", { 6 } } } do
    local t, sh = spec[1], spec[2]
    local a = lacc.run(lacc.generate(sh, function(i, j)
      local v = i * 7 + (j or 0)
      if t == "bool" then return lacc.eq(lacc.imod(v, 3), 0) end
      if t == "(i32,f32)" then return lacc.tuple(lacc.cast(v, "i32"), lacc.cast(v, "f32") / 4) end
      return lacc.cast(v - 20, t)
    end))
    local d = lacc.mpi.scatter(a)
    if lacc.mpi.rank() == 1 then a:save(theirs) end
    d:save(mine)
    lacc.mpi.barrier()
    if file(mine) ~= file(theirs) then bad[#bad + 1] = t .. ": the files differ" end
    if t ~= "(i32,f32)" and bytes(lacc.mpi.load(mine):allgather()) ~= bytes(a) then bad[#bad + 1] = t .. ": loaded back" end
    lacc.mpi.barrier()
  end
  -- a file that cannot be written: every rank's error, and the file there kept
  local ok, err = pcall(function() lacc.mpi.scatter(lacc.fromtable({ 1, 2 }, "f64")):save("/no/such/dir/x.npy") end)
  if ok or not tostring(err):find("save: cannot write /no/such/dir/x.npy: No such file or directory", 1, true) then
    bad[#bad + 1] = "no error: " .. tostring(err)
  end
  -- write_png: the picture one process writes
  local img = lacc.fromtable({ { 0.1, 0.5, 1 }, { 0.9, 0, 0.25 }, { 0.3, 0.3, 0.7 } }, "f64")
  if lacc.mpi.rank() == 1 then lacc.write_png(theirs, img) end
  lacc.write_png(mine, lacc.map(function(x) return x end, lacc.mpi.scatter(img)))
  lacc.mpi.barrier()
  if lacc.mpi.rank() == 1 and file(mine) ~= file(theirs) then bad[#bad + 1] = "write_png: the files differ" end
  lacc.mpi.barrier()
  if lacc.mpi.rank() == 1 then os.remove(mine); os.remove(theirs); os.remove(base) end
  if #bad > 0 then return table.concat(bad, "; ") end
  return same_everywhere(strip(err))
end)

-- ---- communication volume: lacc.mpi.stats() against the model (bytes this rank sends)

local function sent_by(f)
  lacc.mpi.barrier()
  lacc.mpi.reset_stats()
  f()
  return lacc.mpi.stats().bytes_sent
end
-- the model's formulas (spec/mpi/model.lua): balanced rows, a fold's tree, ceil(log2 P)
local model = require "mpi.model"
local rows_of, tree_traffic, ceil_log2 = model.rows, model.tree, model.ceil_log2

check_case("model: a dot product's partials meet in a tree (ceil(log2 P) messages a rank at most)", function()
  local P, r = lacc.mpi.size(), lacc.mpi.rank()
  for _, n in ipairs { 1000, 2, 0 } do
    local xs = lacc.mpi.generate({ n }, function(i) return lacc.cast(i, "f64") end)
    local ys = lacc.mpi.fill({ n }, lacc.constant(0.5, "f64"))
    lacc.mpi.barrier()
    lacc.mpi.reset_stats()
    local s = lacc.run(lacc.sum(lacc.zipWith(function(a, b) return a * b end, xs, ys)))
    local st = lacc.mpi.stats()
    local has = {}
    for q = 1, P do has[q] = rows_of(n, P, q) > 0 end
    local msgs, sizes = tree_traffic(P, has, 8)
    if msgs[r] > ceil_log2(P) then return ("the model sends %d messages, past ceil(log2 P)"):format(msgs[r]) end
    if st.messages_sent ~= msgs[r] or st.bytes_sent ~= sizes[r] then
      return ("n=%d: sent %d messages of %d sizes in all, the model says %d of %d"):format(n,
        st.messages_sent, st.bytes_sent, msgs[r], sizes[r])
    end
    -- collectives: the agreement before the tree and the run's last; none after the tree
    -- (a sum's combining cannot fail); on one rank, no tree and none before it (one
    -- process's sum, in the run's one program)
    local want = P == 1 and 1 or 2
    if st.collectives ~= want then
      return ("n=%d: %d collectives, the model says %d"):format(n, st.collectives, want)
    end
    local exact = 0
    for i = 1, n do exact = exact + i * 0.5 end
    if s:get() ~= exact then return ("n=%d: the sum is %s, want %s"):format(n, tostring(s:get()), exact) end
  end
end)
-- a distributed stencil run again: from its third run each rank's block and edge rows
-- come from one compiled local function (its first two build the programs anew)
check_case("stencils run four times (the compiled local step), windows 3 and 5, ranks 1-3", function()
  for _, n in ipairs(EXTENTS) do
    local function build(d)
      local m, xs = mat(n, 4, "f64", 41, d), vec(n, "i32", 42, d)
      local cube = lacc.reshape({ n, 2, 2 }, mat(n, 4, "i64", 43, d))
      return { lacc.stencil(function(...)
                 local v = { ... }
                 return v[1] - v[2] * 2 + v[5] * 3 + v[9] + v[4] * 0.5 - v[8]
               end, "clamp", m),
               lacc.stencil(function(a, b, c, e, f) return a + 2 * b + 3 * c + 5 * e + 7 * f end,
                            lacc.constant(-9, "i32"), xs, 5),
               lacc.stencil(function(a, b, c, e, f) return a - 2 * b + 3 * c - 5 * e + 7 * f end, "mirror", xs, 5),
               lacc.stencil(function(...)
                 local v, s = { ... }, 0
                 for k = 1, #v do s = s + v[k] * k end
                 return s
               end, "clamp", cube) }
    end
    local want = { lacc.run(build(false), { backend = "interp" }) }
    local progs = build(true)
    for turn = 1, 4 do
      local got = { lacc.run(progs) }
      for i = 1, #want do
        local g = got[i]:allgather()
        if bytes(g) ~= bytes(want[i]) then
          return ("n=%d, run %d, result %d: got %s, want %s"):format(n, turn, i, tostring(g), tostring(want[i]))
        end
      end
    end
  end
end)
-- A loop releases the arrays a later turn has replaced as it goes (lacc_array_discard),
-- rather than leaving them to the collector, stopped here: after eight turns the memory
-- held has grown by the two results (two blocks; without that, by sixteen)
check_case("a loop's replaced arrays are released each turn, not left to the collector", function()
  local per = 4096
  local n = per * lacc.mpi.size()
  local function build(d)
    local xs, ys = vec(n, "f64", 70, d), vec(n, "f64", 71, d)
    return { lacc.awhile(function(_, _, t) return lacc.lt(t, 8) end, function(a, b, t)
      return lacc.stencil(function(l, c, r) return (l + c + r) / 3 end, "clamp", a),
             lacc.zipWith(function(u, v) return u * 0.5 + v end, a, b), t + 1
    end, { xs, ys, lacc.unit(lacc.constant(0, "i64")) }) }
  end
  local want = { lacc.run(build(false), { backend = "interp" }) }
  local progs = build(true)
  collectgarbage()
  collectgarbage("stop")
  local before = lacc.memory()
  local ok, got = pcall(function() return { lacc.run(progs) } end)
  local grown = lacc.memory() - before
  collectgarbage("restart")
  if not ok then error(got, 0) end
  for i = 1, #want do
    local g = lacc.mpi.is_distributed(got[i]) and got[i]:allgather() or got[i]
    if bytes(g) ~= bytes(want[i]) then return ("result %d: got %s, want %s"):format(i, tostring(g), tostring(want[i])) end
  end
  if grown > 3 * 8 * per then
    return ("the memory held grew by %d bytes in eight turns: %.1f blocks"):format(grown, grown / (8 * per))
  end
end)
check_case("model: a stencil step sends the halo rows", function()
  local P, r = lacc.mpi.size(), lacc.mpi.rank()
  local n, w = 64, 32
  local g = lacc.mpi.generate({ n, w }, function(i, j) return lacc.cast(i * j, "f32") end)
  local blur = lacc.stencil(function(...)
    local s = 0
    for _, v in ipairs { ... } do s = s + v end
    return s / 9
  end, "clamp", g)
  local got = sent_by(function() lacc.run(blur) end)
  -- one row (w f32) to each neighbouring rank that has rows
  local want = 0
  if rows_of(n, P, r) > 0 then
    if r > 1 then want = want + w * 4 end
    if r < P then want = want + w * 4 end
  end
  if got ~= want then return ("sent %d bytes, the model says %d"):format(got, want) end
end)
for _, how in ipairs { "partials", "pairs", "tree", "default" } do
  check_case("model: a histogram, exchanging " .. how, function()
    local P, r = lacc.mpi.size(), lacc.mpi.rank()
    local n, bins = 999, 10
    local keys = lacc.mpi.generate({ n }, function(i) return lacc.cast(lacc.band(i * 7919, 1023) % bins, "i64") end)
    local ones = lacc.map(function() return lacc.constant(1, "i32") end, keys)
    local hist = lacc.permute(function(a, b) return a + b end, lacc.fill({ bins }, lacc.constant(0, "i32")),
      function(i) return keys[i] + 1 end, ones)
    local result
    local got = sent_by(function() result = lacc.run(hist, { exchange = how ~= "default" and how or nil }) end)
    local lo = math.floor((r - 1) * n / P)
    local want, counts = 0, {}
    for b = 1, bins do counts[b] = 0 end
    for i = 1, n do
      local bin = ((i * 7919) % 1024) % bins
      counts[bin + 1] = counts[bin + 1] + 1
      if how == "pairs" and i > lo and i <= lo + rows_of(n, P, r) then
        local owner   -- ranks hold balanced blocks of the bins
        for q = 1, P do
          if bin < math.floor(q * bins / P) then owner = q; break end
        end
        if owner ~= r then want = want + 12 end   -- its bin (8 bytes) and its value (4)
      end
    end
    -- a partial's bins: counts seeded with 0 (+ has an identity), 4 bytes a bin
    if how == "partials" then
      -- each other rank's bins
      for q = 1, P do if q ~= r then want = want + 4 * rows_of(bins, P, q) end end
    elseif how == "tree" or how == "default" then
      -- every bin in each of the tree's messages (small partials: the default), a flag
      -- byte first
      local has = {}
      for q = 1, P do has[q] = true end
      local _, sizes = tree_traffic(P, has, 4 * bins)
      want = sizes[r]
    end
    local full = result:allgather()
    for b = 1, bins do
      if full:get(b) ~= counts[b] then return ("bin %d holds %s, want %d"):format(b, tostring(full:get(b)), counts[b]) end
    end
    if got ~= want then return ("sent %d bytes, the model says %d"):format(got, want) end
  end)
end
check_case("model: a scan's block totals cross the ranks in ceil(log2 P) messages a rank at most", function()
  local P, r = lacc.mpi.size(), lacc.mpi.rank()
  for _, right in ipairs { false, true } do
    local xs = lacc.mpi.generate({ 100 }, function(i) return lacc.cast(i, "i64") end)
    local scan = right and lacc.scanr1 or lacc.scanl1
    lacc.mpi.barrier()
    lacc.mpi.reset_stats()
    local got = lacc.run(scan(function(a, b) return a + b end, xs)):allgather()
    local st = lacc.mpi.stats()
    local want = model.scan_sends(P, r, right)
    if want > ceil_log2(P) then return ("the model sends %d messages, past ceil(log2 P)"):format(want) end
    -- messages of the scan alone: the allgather after sends P - 1 more
    if st.messages_sent - (P - 1) ~= want then
      return ("%s: sent %d messages, the model says %d"):format(right and "scanr1" or "scanl1",
        st.messages_sent - (P - 1), want)
    end
    for i = 1, 100 do
      local w = right and (100 + i) * (101 - i) / 2 or i * (i + 1) / 2
      if got:get(i) ~= w then return ("element %d is %s, want %d"):format(i, tostring(got:get(i)), w) end
    end
  end
end)
check_case("model: a segmented fold's and scan's carries cross the ranks in ceil(log2 P) messages a rank at most", function()
  local P, r = lacc.mpi.size(), lacc.mpi.rank()
  local lens = {}
  for i = 1, 20 do lens[i] = i % 3 == 0 and 0 or 7 end   -- 98 elements in 20 segments
  local segs = lacc.fromtable(lens, "i64")
  for _, name in ipairs { "foldSeg", "scanr1Seg" } do
    local right = name == "scanr1Seg"
    local xs = lacc.mpi.generate({ 98 }, function(i) return lacc.cast(i, "i64") end)
    local p = right and lacc.scanr1Seg(add, xs, segs) or lacc.foldSeg(add, 0, xs, segs)
    lacc.mpi.barrier()
    lacc.mpi.reset_stats()
    local got = lacc.run(p):allgather()
    local st = lacc.mpi.stats()
    local want = model.scan_sends(P, r, right)
    -- the allgather after sends P - 1 more
    if st.messages_sent - (P - 1) ~= want then
      return ("%s: sent %d messages, the model says %d"):format(name, st.messages_sent - (P - 1), want)
    end
    -- against Lua loops: segment sums, or each element plus the rest of its segment
    local at, k = 0, 0
    for _, l in ipairs(lens) do
      local s = 0
      for i = at + l, at + 1, -1 do
        s = s + i
        if right and got:get(i) ~= s then return ("scanr1Seg element %d is %s, want %d"):format(i, tostring(got:get(i)), s) end
      end
      k = k + 1
      if not right and got:get(k) ~= s then return ("foldSeg segment %d is %s, want %d"):format(k, tostring(got:get(k)), s) end
      at = at + l
    end
  end
end)
check_case("misuse: segment lengths a distributed segmented op cannot take are every rank's error", function()
  local xs = lacc.mpi.generate({ 6 }, function(i) return i end)
  local want = {
    { lacc.foldSeg(add, 0, xs, lacc.fromtable({ 2, -1, 5 }, "i32")), "foldSeg: a negative segment length" },
    { lacc.scanl1Seg(add, xs, lacc.fromtable({ 2, 3 }, "i32")),
      "scanl1Seg: segments of 5 elements in all, not the extent 6" },
    { lacc.foldSeg(add, 0, xs, lacc.fromtable({ 4, 3 }, "i32")), "foldSeg: segments of 7 elements in all, past the extent 6" },
    { lacc.fold1Seg(add, xs, lacc.fromtable({ 4, 0, 2 }, "i32")), "fold1Seg: an empty segment" },
  }
  for _, w in ipairs(want) do
    local ok, err = pcall(lacc.run, w[1])
    if ok or not strip(err):find(w[2], 1, true) then return ("want %q, got %s"):format(w[2], tostring(err)) end
    local bad = same_everywhere(strip(err)) or went_on()
    if bad then return bad end
  end
end)
check_case("model: rotate, take, drop, reverse and slices (strided too) send each element that changes rank once", function()
  local P, r = lacc.mpi.size(), lacc.mpi.rank()
  local n = 1000
  local function owner(g, m)   -- rank (1-based) of result row g (0-based) of m, balanced
    for q = 1, P do if g < math.floor(q * m / P) then return q end end
  end
  local lo, hi = math.floor((r - 1) * n / P), math.floor(r * n / P)
  for _, c in ipairs {
    { "rotate", 337, function(xs) return lacc.rotate(337, xs) end, function(i) return { (i - 337) % n, n } end },
    { "take", 600, function(xs) return lacc.take(600, xs) end, function(i) return i < 600 and { i, 600 } end },
    { "drop", 250, function(xs) return lacc.drop(250, xs) end, function(i) return i >= 250 and { i - 250, n - 250 } end },
    { "reverse", 0, function(xs) return lacc.reverse(xs) end, function(i) return { n - 1 - i, n } end },
    { "slice", 0, function(xs) return lacc.slice(xs, { { 101, 900 } }) end,
      function(i) return i >= 100 and i < 900 and { i - 100, 800 } end },
    { "slice back", 0, function(xs) return lacc.slice(xs, { { 900, 101, -1 } }) end,
      function(i) return i >= 100 and i < 900 and { 899 - i, 800 } end },
    { "slice stride", 0, function(xs) return lacc.slice(xs, { { 3, 998, 7 } }) end,
      function(i) return (i - 2) % 7 == 0 and i >= 2 and i <= 996 and { math.floor((i - 2) / 7), 143 } end },
    { "slice back stride", 0, function(xs) return lacc.slice(xs, { { 999, 5, -3 } }) end,
      function(i) return (998 - i) % 3 == 0 and i >= 5 and i <= 998 and { math.floor((998 - i) / 3), 332 } end },
  } do
    local xs = lacc.run(lacc.mpi.generate({ n }, function(i) return lacc.cast(i, "f64") end))
    lacc.mpi.barrier()
    lacc.mpi.reset_stats()
    local res = lacc.run(c[3](xs))
    local st = lacc.mpi.stats()
    local want = 0
    for i = lo, hi - 1 do
      local to = c[4](i)
      if to and owner(to[1], to[2]) ~= r then want = want + 8 end
    end
    if st.bytes_sent ~= want then
      return ("%s: sent %d bytes, the model says %d"):format(c[1], st.bytes_sent, want)
    end
    local full = res:allgather()
    for g = 1, full:size() do
      local src = (c[1] == "rotate" and (g - 1 + 337) % n) or (c[1] == "drop" and g - 1 + 250) or
                  (c[1] == "reverse" and n - g) or (c[1] == "slice" and g + 99) or
                  (c[1] == "slice back" and 900 - g) or (c[1] == "slice stride" and 2 + 7 * (g - 1)) or
                  (c[1] == "slice back stride" and 998 - 3 * (g - 1)) or g - 1
      if full:get(g) ~= src + 1 then return ("%s: element %d is %s"):format(c[1], g, tostring(full:get(g))) end
    end
  end
end)
check_case("model: append, concat and interleave send each element that changes rank once", function()
  local P, r = lacc.mpi.size(), lacc.mpi.rank()
  local function owner(g, m)   -- rank (1-based) of result row g (0-based) of m, balanced
    for q = 1, P do if g < math.floor(q * m / P) then return q end end
  end
  local na, nb = 700, 300
  local a = lacc.run(lacc.mpi.generate({ na }, function(i) return lacc.cast(i, "f64") end))
  local b = lacc.run(lacc.mpi.generate({ nb }, function(i) return lacc.cast(-i, "f64") end))
  local function mine(n) return math.floor((r - 1) * n / P), math.floor(r * n / P) end
  for _, c in ipairs {
    -- the result's position of element i (0-based) of a and of b, and the result's length
    { "append", function() return a .. b end, function(i) return i end, function(i) return na + i end, na + nb },
    { "concat", function() return lacc.concat { b, a, b } end, nil, nil, 2 * nb + na },
    { "interleave", function() return lacc.interleave(a, b) end,
      function(i) return i < nb and 2 * i end, function(i) return 2 * i + 1 end, 2 * nb },
  } do
    lacc.mpi.barrier()
    lacc.mpi.reset_stats()
    local res = lacc.run(c[2]())
    local st = lacc.mpi.stats()
    local want, m = 0, c[5]
    local function count(n, dest)
      local lo, hi = mine(n)
      for i = lo, hi - 1 do
        for _, g in ipairs(dest(i)) do if owner(g, m) ~= r then want = want + 8 end end
      end
    end
    if c[1] == "concat" then
      count(nb, function(i) return { i, nb + na + i } end)
      count(na, function(i) return { nb + i } end)
    else
      count(na, function(i) local g = c[3](i) return g and { g } or {} end)
      count(nb, function(i) return { c[4](i) } end)
    end
    if st.bytes_sent ~= want then
      return ("%s: sent %d bytes, the model says %d"):format(c[1], st.bytes_sent, want)
    end
    local full = res:allgather()
    if full:size() ~= m then return ("%s: %d elements, want %d"):format(c[1], full:size(), m) end
  end
end)
-- lacc.compile's function called with distributed arrays (and numbers): the distributed
-- program of its function, against the same function compiled for the interpreter over
-- the whole arrays; a number used as an integer must be one, on every rank alike
check_case("a compiled function over distributed arrays and numbers", function()
  local function body(xs, ys, s)
    local z = lacc.zipWith(function(a, b) return a * s + b end, xs, ys)
    return z, lacc.sum(z), lacc.scanl1(add, z), lacc.map(function(x) return lacc.cast(x, "f64") / 4 end, z)
  end
  local cf, ref = lacc.compile(body), lacc.compile(body, { backend = "interp" })
  for _, n in ipairs { 0, 1, 5, 13 } do
    local want = { ref(vec(n, "i64", 40, false), vec(n, "i64", 41, false), 3) }
    local got = { cf(vec(n, "i64", 40, true), vec(n, "i64", 41, true), 3) }
    if #got ~= #want then return ("n=%d: %d results, want %d"):format(n, #got, #want) end
    for i = 1, #want do
      local g = got[i]
      if (i ~= 2) ~= lacc.mpi.is_distributed(g) then
        return ("n=%d: result %d is %s"):format(n, i, tostring(g))
      end
      if lacc.mpi.is_distributed(g) then g = g:allgather() end
      if bytes(g) ~= bytes(want[i]) then
        return ("n=%d: result %d: got %s, want %s"):format(n, i, tostring(g), tostring(want[i]))
      end
    end
  end
  local ok, err = pcall(cf, vec(5, "i64", 40, true), vec(5, "i64", 41, true), 2.5)
  local ok1, err1 = pcall(ref, vec(5, "i64", 40, false), vec(5, "i64", 41, false), 2.5)
  if ok or ok1 or strip(err) ~= strip(err1) then
    return ("a fraction used as an integer: %s / one process: %s"):format(tostring(err), tostring(err1))
  end
  return same_everywhere(strip(err))
end)
check_case("explain names each step's communication", function()
  local xs = lacc.mpi.generate({ 8 }, function(i) return i end)
  local text = lacc.explain(lacc.scanl1(function(a, b) return a + b end, lacc.map(function(x) return x * 2 end, xs)))
  for _, want in ipairs { "generate", "local (each rank generates its rows)", "map",
                          "local (element-wise, no communication)", "scanl1",
                          "block totals scanned across the ranks by recursive doubling" } do
    if not text:find(want, 1, true) then return "explain lacks " .. want .. ":\n" .. text end
  end
end)

-- ---- running the cases


local function close(a, b)
  if a:type() ~= b:type() or table.concat(a:shape(), ",") ~= table.concat(b:shape(), ",") then return false end
  local ys = {}
  for i, y in b:values() do ys[i] = y end
  for i, x in a:values() do
    local y = ys[i]
    if not (x == y or math.abs(x - y) <= 1e-9 * math.max(1, math.abs(y))) then return false end
  end
  return true
end

local function list(x) return type(x) == "table" and not lacc.mpi.is_distributed(x) and getmetatable(x) == nil and x or { x } end

local function check(c)
  local want = { lacc.run(list(c.f(false)), { backend = "interp" }) }
  local opts = { backend = "mpi" }
  for k, v in pairs(c.opts or {}) do opts[k] = v end
  local got = { lacc.run(list(c.f(true)), opts) }
  for i = 1, #want do
    local g = got[i]
    if lacc.mpi.is_distributed(g) then g = g:allgather() end
    local ok = c.name:find("float", 1, true) and close(g, want[i]) or bytes(g) == bytes(want[i])
    if not ok then return ("result %d: got %s, want %s"):format(i, tostring(g), tostring(want[i])) end
  end
  return nil
end

function M.names()
  local r = {}
  for _, c in ipairs(cases) do r[#r + 1] = c.name end
  for _, c in ipairs(checks) do r[#r + 1] = c.name end
  return r
end

function M.main()
  -- the fast tier (tcc): these cases check how work and data are split over ranks; the
  -- kernels each rank runs are the cpu backend's, which the other specs check as cc -O3 builds
  -- (each rank builds variants of its own: with cc the 4-rank run took minutes)
  lacc.config { tier = "fast" }
  local rank, size = lacc.mpi.init()
  local all = {}
  for _, c in ipairs(cases) do all[#all + 1] = { name = c.name, f = function() return check(c) end } end
  for _, c in ipairs(checks) do all[#all + 1] = c end
  local trace = os.getenv("LACC_CASES_TRACE")
  for _, c in ipairs(all) do
    if trace then io.stderr:write(("rank %d: %.3f %s\n"):format(rank, os.clock(), c.name)) end
    local ok, err = pcall(c.f)
    local bad = not ok and ("error: " .. tostring(err)) or err
    local who, msg = lacc.mpi.agree(bad)
    if rank == 1 then
      if who then print(("not ok %s: %s (rank %d)"):format(c.name, msg, who))
      else print("ok " .. c.name) end
    end
  end
  if rank == 1 then print("done " .. size) end
end

if arg and arg[0] and arg[0]:find("cases%.lua$") then M.main() end
return M
