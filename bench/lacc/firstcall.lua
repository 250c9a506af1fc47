-- The first call of the programs a new user writes (issue 41): each builds one program
-- and runs it once, timed from building it to its result, in a process of its own.
-- bench/run.sh runs each with a fresh, empty LACC_CACHE under LACC_TIER=auto (the
-- default) and under LACC_TIER=opt, and one of them three times with one cache (the third
-- run's row: whether it starts on the optimised kernels the earlier runs left).
-- Usage: firstcall.lua PROGRAM TAG   (PROGRAM: pi raster kmeans_points captured life mlp;
-- TAG: auto, opt, opencl or warm, which names the row: first_PROGRAM_TAG, or
-- third_run_PROGRAM for warm). The inputs a program reads from the host are made before
-- the clock starts; the checks run after it stops.
local lacc = require "lacc"
local B = require "benchlib"
local prog, tag = arg[1] or "pi", arg[2] or "auto"

local P = {}

-- Monte-Carlo pi: a compiled function of the point count n drawing 2n uniform numbers.
P.pi = {
  what = "Monte-Carlo pi over 4M points: lacc.compile'd f(n), lacc.random.uniform of 2n, sum of the hits",
  setup = function() return 4000000 end,
  run = function(n)
    local f = lacc.compile(function(m)
      local u = lacc.random.uniform({ m, 2 }, 42)
      local inside = lacc.generate({ m }, function(i)
        local x, y = u:at(i, 1), u:at(i, 2)
        return lacc.cond(lacc.le(x * x + y * y, 1), lacc.constant(1, "i64"), lacc.constant(0, "i64"))
      end)
      return lacc.sum(inside)
    end, { args = { "i64" } })
    return f(n)
  end,
  check = function(r, n)
    local pi = 4 * r:get() / n
    assert(math.abs(pi - math.pi) < 0.01, "pi: got " .. pi)
    return pi
  end,
}

-- A raster of shape tests: ~1000 positioned shapes of a sum type, each pixel of a 300x270
-- grid counting the shapes that cover its centre (a generate of match, summed along the
-- shapes). Every coordinate is an integer or a half, so f32 tests are exact.
local Shape = lacc.data("Shape", {
  { "Circle", "f32", "f32", "f32" },          -- centre x, y, radius
  { "Rect", "f32", "f32", "f32", "f32" },     -- corner x, y, width, height
  { "Empty" },
})
local W, H, NS = 300, 270, 1000
local function shapes_table()
  local t, seed = {}, 12345
  local function rnd(k)   -- a small LCG: the same scene every run
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % k
  end
  for k = 1, NS do
    local c = rnd(3)
    if c == 0 then t[k] = { tag = "Circle", rnd(W), rnd(H), 5 + rnd(40) }
    elseif c == 1 then t[k] = { tag = "Rect", rnd(W), rnd(H), 5 + rnd(60), 5 + rnd(60) }
    else t[k] = { tag = "Empty" } end
  end
  return t
end
local function covers_lua(s, px, py)
  if s.tag == "Circle" then
    local dx, dy = px - s[1], py - s[2]
    return dx * dx + dy * dy <= s[3] * s[3]
  elseif s.tag == "Rect" then
    return px >= s[1] and px < s[1] + s[3] and py >= s[2] and py < s[2] + s[4]
  end
  return false
end
P.raster = {
  what = "raster: 300x270 pixels x 1000 shapes (Circle/Rect/Empty, lacc.data), lacc.match in a " ..
         "generate, summed per pixel: 81M tests",
  setup = function()
    local t = shapes_table()
    return { t = t, a = lacc.fromtable(t, Shape) }
  end,
  run = function(s)
    local shapes = s.a
    local one, zero = lacc.constant(1, "i32"), lacc.constant(0, "i32")
    local tests = lacc.generate({ H, W, NS }, function(y, x, k)
      local px, py = lacc.cast(x, "f32") - 0.5, lacc.cast(y, "f32") - 0.5
      return lacc.match(shapes[k], {
        Circle = function(cx, cy, r)
          local dx, dy = px - cx, py - cy
          return lacc.cond(lacc.le(dx * dx + dy * dy, r * r), one, zero)
        end,
        Rect = function(rx, ry, w, h)
          return lacc.cond(lacc.land(lacc.land(lacc.ge(px, rx), lacc.lt(px, rx + w)),
                                     lacc.land(lacc.ge(py, ry), lacc.lt(py, ry + h))), one, zero)
        end,
        Empty = function() return zero end,
      })
    end)
    return lacc.run(lacc.sum(tests, 3))
  end,
  check = function(r, s)
    local total = 0
    for _, p in ipairs { { 1, 1 }, { 135, 150 }, { 270, 300 }, { 50, 77 }, { 200, 10 }, { 99, 222 } } do
      local y, x = p[1], p[2]
      local want = 0
      for k = 1, NS do if covers_lua(s.t[k], x - 0.5, y - 0.5) then want = want + 1 end end
      local got = r:get(y, x)
      assert(got == want, ("raster: pixel (%d, %d) got %d, want %d"):format(y, x, got, want))
    end
    for y = 1, H do for x = 1, W do total = total + r:get(y, x) end end
    return total
  end,
}

-- 1M 2-D points around 8 centres: a generate reading an 8x2 host array of centres, plus
-- normal noise (lacc.random.normal), and the points' mean in the same run.
local NP = 1000000
local centres_t = { { 1, 2 }, { -3, 4 }, { 5, -6 }, { 7, 8 }, { -9, -10 }, { 11, 0 }, { 0, 13 }, { -2, -15 } }
P.kmeans_points = {
  what = "1M 2-D points around 8 centres: lacc.generate reading an 8x2 host array, lacc.random.normal noise, with their mean",
  setup = function() return lacc.fromtable(centres_t, "f64") end,
  run = function(centres)
    local noise = lacc.random.normal({ NP, 2 }, 7, "f64", 0, 0.5)
    local pts = lacc.generate({ NP, 2 }, function(i, d)
      return centres:at(lacc.imod(i - 1, 8) + 1, d) + noise:at(i, d)
    end)
    return { lacc.run({ pts, lacc.sum(pts, 1) }) }
  end,
  check = function(r)
    local pts, sums = r[1], r[2]
    assert(pts:shape()[1] == NP and pts:shape()[2] == 2, "kmeans_points: wrong shape")
    local mx, my = 0, 0
    for k = 1, 8 do mx, my = mx + centres_t[k][1] / 8, my + centres_t[k][2] / 8 end
    local gx, gy = sums:get(1) / NP, sums:get(2) / NP
    assert(math.abs(gx - mx) < 0.01 and math.abs(gy - my) < 0.01,
      ("kmeans_points: mean (%g, %g), want (%g, %g)"):format(gx, gy, mx, my))
    -- the first points: their centre within 4 sd
    for i = 1, 16 do
      local c = centres_t[(i - 1) % 8 + 1]
      assert(math.abs(pts:get(i, 1) - c[1]) < 2 and math.abs(pts:get(i, 2) - c[2]) < 2,
        "kmeans_points: point " .. i .. " far from its centre")
    end
    return gx + gy
  end,
}

-- The guide's example of a run whose work is far more than its inputs say.
local s_t = { 1, 2, 3, 4, 5, 6, 7, 8 }
P.captured = {
  what = "lacc.sum(lacc.generate({3e6}, i * s[imod(i, 8) + 1])), s an 8-element f64 host array",
  setup = function() return lacc.fromtable(s_t, "f64") end,
  run = function(s)
    return lacc.run(lacc.sum(lacc.generate({ 3e6 }, function(i)
      return lacc.cast(i, "f64") * s[lacc.imod(i, 8) + 1]
    end)))
  end,
  check = function(r)
    local want = 0
    for i = 1, 3000000 do want = want + i * s_t[i % 8 + 1] end
    assert(r:get() == want, ("captured: got %.17g, want %.17g"):format(r:get(), want))
    return want
  end,
}

-- Game of Life: one awhile over a 256x257 u8 array, the 256x256 board and a last column
-- holding the step count; each step a stencil (dead outside the board), 100 steps.
local LW, STEPS = 256, 100
local function board_table()
  local t, seed = {}, 2024
  for i = 1, LW do
    local row = {}
    for j = 1, LW do
      seed = (seed * 1103515245 + 12345) % 2147483648
      row[j] = math.floor(seed / 65536) % 3 == 0 and 1 or 0
    end
    row[LW + 1] = 0
    t[i] = row
  end
  return t
end
local function life_lua(t)
  -- a padded flat board, two buffers
  local S = LW + 2
  local a, b = {}, {}
  for k = 1, S * S do a[k], b[k] = 0, 0 end
  for i = 1, LW do for j = 1, LW do a[i * S + j + 1] = t[i][j] end end
  for _ = 1, STEPS do
    for i = 1, LW do
      local base = i * S + 2
      for j = base, base + LW - 1 do
        local n = a[j - S - 1] + a[j - S] + a[j - S + 1] + a[j - 1] + a[j + 1] + a[j + S - 1] + a[j + S] + a[j + S + 1]
        b[j] = (n == 3 or (n == 2 and a[j] == 1)) and 1 or 0
      end
    end
    a, b = b, a
  end
  local live = 0
  for i = 1, LW do for j = 1, LW do live = live + a[i * S + j + 1] end end
  return live
end
P.life = {
  what = "Game of Life, 256x256 u8, 100 steps: one lacc.awhile (step count in an extra column), " ..
         "lacc.stencil, then the live count",
  setup = function()
    local t = board_table()
    return { t = t, a = lacc.fromtable(t, "u8") }
  end,
  run = function(s)
    local one, zero = lacc.constant(1, "u8"), lacc.constant(0, "u8")
    local final = lacc.awhile(function(a)
      return lacc.map(function(c) return lacc.lt(c, STEPS) end, lacc.slice(a, { 1, LW + 1 }))
    end, function(a)
      local board = lacc.slice(a, { lacc.all, { 1, LW } })
      local nxt = lacc.stencil(function(n1, n2, n3, n4, c, n6, n7, n8, n9)
        local n = n1 + n2 + n3 + n4 + n6 + n7 + n8 + n9
        return lacc.cond(lacc.lor(lacc.eq(n, 3), lacc.land(lacc.eq(c, 1), lacc.eq(n, 2))), one, zero)
      end, lacc.constant(0, "u8"), board)
      local count = lacc.generate({ LW, 1 }, function(i) return a:at(i, LW + 1) + 1 end)
      return lacc.append(nxt, count)
    end, s.a)
    local live = lacc.sum(lacc.map(function(c) return lacc.cast(c, "i64") end,
                                   lacc.slice(final, { lacc.all, { 1, LW } })))
    local steps = lacc.slice(final, { 1, LW + 1 })
    return { lacc.run({ live, steps }) }
  end,
  check = function(r, s)
    local live, steps = r[1]:get(), r[2]:get()
    assert(steps == STEPS, "life: ran " .. tostring(steps) .. " steps")
    local want = life_lua(s.t)
    assert(live == want, ("life: %d live cells, want %d"):format(live, want))
    return live
  end,
}

-- A small MLP on opencl: 256 inputs of 64 features through a 128-unit relu layer and a
-- 10-way softmax, the first build of its OpenCL program with PoCL's cache empty as well
-- (bench/run.sh points POCL_CACHE_DIR at a fresh directory).
local MB, MI, MH, MO = 256, 64, 128, 10
local function mlp_table(r, c, seed)
  local t = {}
  for i = 1, r do
    t[i] = {}
    for j = 1, c do
      seed = (seed * 1103515245 + 12345) % 2147483648
      t[i][j] = (seed % 2001 - 1000) / 4000   -- in [-0.25, 0.25]
    end
  end
  return t
end
P.mlp = {
  what = "a 2-layer MLP (256x64 inputs, 128 relu units, 10-way softmax) on opencl: " ..
         "lacc.matmul, a bias by generate, relu, softmax along rows",
  setup = function()
    local t = { x = mlp_table(MB, MI, 1), w1 = mlp_table(MI, MH, 2), b1 = mlp_table(1, MH, 3)[1],
                w2 = mlp_table(MH, MO, 4), b2 = mlp_table(1, MO, 5)[1] }
    t.a = { x = lacc.fromtable(t.x, "f32"), w1 = lacc.fromtable(t.w1, "f32"),
            b1 = lacc.fromtable(t.b1, "f32"), w2 = lacc.fromtable(t.w2, "f32"),
            b2 = lacc.fromtable(t.b2, "f32") }
    return t
  end,
  run = function(s)
    local a = s.a
    local function dense(x, w, b, n, act)
      local y = lacc.matmul(x, w)
      return lacc.generate({ MB, n }, function(i, j) return act(y:at(i, j) + b[j]) end)
    end
    local h = dense(a.x, a.w1, a.b1, MH, function(v) return lacc.max(v, 0) end)
    local z = dense(h, a.w2, a.b2, MO, function(v) return v end)
    local e = lacc.map(lacc.exp, z)
    local tot = lacc.sum(e, 2)
    local probs = lacc.generate({ MB, MO }, function(i, j) return e:at(i, j) / tot[i] end)
    return lacc.run(probs, { backend = "opencl" })
  end,
  check = function(r, s)
    local sum = 0
    for _, i in ipairs { 1, 77, 256 } do
      local h = {}
      for k = 1, MH do
        local v = s.b1[k]
        for m = 1, MI do v = v + s.x[i][m] * s.w1[m][k] end
        h[k] = math.max(v, 0)
      end
      local z, tot = {}, 0
      for o = 1, MO do
        local v = s.b2[o]
        for k = 1, MH do v = v + h[k] * s.w2[k][o] end
        z[o] = math.exp(v)
        tot = tot + z[o]
      end
      for o = 1, MO do
        local got, want = r:get(i, o), z[o] / tot
        assert(math.abs(got - want) < 1e-4, ("mlp: (%d, %d) got %g, want %g"):format(i, o, got, want))
        sum = sum + got
      end
    end
    return sum
  end,
}

local p = P[prog]
if not p then error("firstcall.lua: no program '" .. tostring(prog) .. "'") end
local input = p.setup()
collectgarbage("collect")
local t0 = B.now()
local r = p.run(input)
local ms = (B.now() - t0) * 1e3
local check = p.check(r, input)
local t = lacc.tiers()
local runs = ("runs on interp %d, fast %d, opt %d"):format(t.interp, t.fast, t.opt)
if tag == "warm" then
  B.result("overhead", "third_run_" .. prog, ms, check, 1,
    ("%s; the third process with one cache, LACC_TIER=%s%s: %s (%s)"):format(p.what, lacc.config().tier,
      os.getenv("BENCH_EARLIER") and (" (the first two: " .. os.getenv("BENCH_EARLIER") .. ")") or "", runs,
      t.opt > 0 and "on the optimised kernels" or "NOT on the optimised kernels"))
elseif tag == "opencl" then
  B.result("overhead", "first_" .. prog .. "_" .. tag, ms, check, 1,
    p.what .. "; first call, lacc's cache and PoCL's empty")
else
  B.result("overhead", "first_" .. prog .. "_" .. tag, ms, check, 1,
    ("%s; first call, empty cache, LACC_TIER=%s: %s"):format(p.what, lacc.config().tier, runs))
end
