-- The Lua examples run (as `make demo NAME=...` runs them), at small sizes, in a child
-- process of this VM; what they print and write is checked against plain Lua.
local H = require "helper"
local lua = H.vm

local function run(name, env)
  local h = io.popen(("%s %s examples/%s.lua 2>&1"):format(env, lua, name))
  local out = h:read("a") or h:read("*a")
  h:close()
  return out
end

-- Width and height from a PNG file's IHDR chunk.
local function png_size(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local head = f:read(24)
  f:close()
  if not head or head:sub(2, 4) ~= "PNG" then return nil end
  local function u32(s, at)
    local a, b, c, d = s:byte(at, at + 3)
    return ((a * 256 + b) * 256 + c) * 256 + d
  end
  return u32(head, 17), u32(head, 21)
end

describe("examples", function()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute(("mkdir -p '%s'"):format(dir))

  it("dotp prints the dot product", function()
    local out = run("dotp", "")
    assert.truthy(out:find("dot product of 1000 elements: 1000", 1, true), out)
  end)

  it("nearest finds the same primitive element-wise and variant-wise", function()
    local out = run("nearest", "N=301")
    local hits = {}
    for i, tag, t in out:gmatch("primitive (%d+), a (%a+), at distance ([%d.]+)") do hits[#hits + 1] = i .. tag .. t end
    assert.are.equal(3, #hits, out)
    assert.are.equal(hits[1], hits[2])
    assert.are.equal(hits[1], hits[3])
  end)

  it("mandelbrot writes its picture and counts the set as plain Lua does", function()
    local path = dir .. "/m.png"
    local out = run("mandelbrot", ("W=60 OUT='%s'"):format(path))
    local w, h = png_size(path)
    assert.are.same({ 60, 40 }, { w, h })
    local inside = tonumber(out:match("(%d+) pixels inside"))
    assert.truthy(inside, out)
    -- the same loop in plain Lua, every operation rounded to f32 as the kernel's are
    local f = H.f32
    local ref = 0
    for i = 1, 40 do
      for j = 1, 60 do
        local ci = f(f(-1.2) + f(f(i - 1) * f(2.4 / 40)))
        local cr = f(f(-2.2) + f(f(j - 1) * f(3.6 / 60)))
        local zr, zi, n = 0, 0, 0
        while n < 200 and f(f(zr * zr) + f(zi * zi)) <= 4 do
          zr, zi, n = f(f(f(zr * zr) - f(zi * zi)) + cr), f(f(f(2 * zr) * zi) + ci), n + 1
        end
        if n >= 200 then ref = ref + 1 end
      end
    end
    assert.are.equal(ref, inside)
  end)

  it("mpi_heat on 2 MPI ranks writes its picture and gives plain Lua's temperatures", function()
    if not H.lacc.mpi.available() then   -- a lacc built without MPI says so
      local ok, err = pcall(H.lacc.mpi.init)
      assert(not ok and tostring(err):find("built without MPI", 1, true), tostring(err))
      return
    end
    local path = dir .. "/heat.png"
    local out = H.sh(("W=24 STEPS=10 OUT='%s' timeout 120 %s %s examples/mpi_heat.lua"):format(path, H.mpirun(2), lua))
    assert.are.same({ 24, 24 }, { png_size(path) })
    local heat, start, hottest = out:match("heat ([%d.e+]+) %(start ([%d.e+]+)%), hottest ([%d.]+)")
    assert.truthy(heat, out)
    -- the same steps in plain Lua: two hot discs, a 5-point stencil, clamped edges
    local n, u = 24, {}
    local function disc(i, j, ci, cj, r) return (i - ci) ^ 2 + (j - cj) ^ 2 <= r * r end
    for i = 1, n do
      u[i] = {}
      for j = 1, n do
        u[i][j] = (disc(i, j, n / 3, n / 3, n / 8) or disc(i, j, 2 * n / 3, 3 * n / 5, n / 10)) and 1 or 0
      end
    end
    local total0 = 0
    for i = 1, n do for j = 1, n do total0 = total0 + u[i][j] end end
    for _ = 1, 10 do
      local v = {}
      for i = 1, n do
        v[i] = {}
        for j = 1, n do
          local function at(a, b) return u[math.min(math.max(a, 1), n)][math.min(math.max(b, 1), n)] end
          local c = u[i][j]
          v[i][j] = c + 0.2 * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) - 4 * c)
        end
      end
      u = v
    end
    local total, top = 0, 0
    for i = 1, n do for j = 1, n do total, top = total + u[i][j], math.max(top, u[i][j]) end end
    assert.are.equal(("%.6g"):format(total0), start)
    assert.are.equal(("%.6g"):format(total), heat)
    assert.are.equal(("%.4f"):format(top), hottest)
  end)

  it("blur writes both pictures and keeps the mean", function()
    local path = dir .. "/b.png"
    local out = run("blur", ("W=64 OUT='%s'"):format(path))
    assert.are.same({ 64, 64 }, { png_size(path) })
    assert.are.same({ 64, 64 }, { png_size(dir .. "/b_input.png") })
    local before, after = out:match("mean ([%d.]+) before, ([%d.]+) after")
    assert.truthy(before, out)
    -- clamped edges move the mean a little, but not much
    assert.truthy(math.abs(tonumber(before) - tonumber(after)) < 0.02, out)
  end)

  it("logreg learns separable classes and writes its two pictures", function()
    local prefix = dir .. "/lr"
    local out = run("logreg", ("N=301 STEPS=20 OUT='%s'"):format(prefix))
    local first, last = out:match("loss ([%d.]+) %-> ([%d.]+)")
    assert.truthy(first, out)
    -- zero weights: every probability 1/2, the loss log 2
    assert.are.equal(("%.4f"):format(math.log(2)), first)
    assert.truthy(tonumber(last) < 0.1, out)
    local right = tonumber(out:match("(%d+) of 301 right"))
    assert.truthy(right and right >= 295, out)
    assert.are.same({ 20, 160 }, { png_size(prefix .. "_loss.png") })
    assert.are.same({ 240, 240 }, { png_size(prefix .. "_boundary.png") })
  end)

  it("gmm's gradient agrees with central differences", function()
    local out = run("gmm", "N=40 D=3 K=2")
    assert.truthy(out:find("GMM objective, n = 40, d = 3, k = 2", 1, true), out)
    local err = tonumber(out:match("largest error ([%d.e+-]+)"))
    assert.truthy(err and err < 1e-5, out)
    assert.truthy(out:find("(agrees)", 1, true), out)
  end)

  it("saxpy computes 1 + 4 a x in f32", function()
    local n, f = 1001, H.f32
    local out = run("saxpy", "N=" .. n)
    local function ref(i)
      local x, y = f(f(i) / f(n)), 1
      for _ = 1, 4 do y = f(f(2.5 * x) + y) end
      return y
    end
    local y1, yn = out:match("y%[1%] = ([%d.]+), y%[%d+%] = ([%d.]+)")
    assert.truthy(y1, out)
    assert.are.equal(("%.6f"):format(ref(1)), y1)
    assert.are.equal(("%.6f"):format(ref(n)), yn)
  end)

  it("histogram counts what plain Lua counts, bin by bin", function()
    local n = 5003
    local out = run("histogram", "N=" .. n)
    local want = {}
    for b = 1, 20 do want[b] = 0 end
    local function u(i, mul, add) return math.floor((i * mul + add) / 128) % 0x1000000 / 0x1000000 end
    for i = 1, n do
      local v = (u(i, 2654435761, 17) + u(i, 2246822519, 9973) + u(i, 3266489917, 40503)) / 3
      local b = math.floor(v * 20) + 1
      want[b] = want[b] + 1
    end
    local got = {}
    for c in out:gmatch("%d%.%d%d%-%d%.%d%d +(%d+)") do got[#got + 1] = tonumber(c) end
    assert.are.same(want, got)
  end)

  it("blackscholes prices satisfy put-call parity", function()
    local n, f = 2001, H.f32
    local out = run("blackscholes", "N=" .. n)
    local got = tonumber(out:match("sum%(call %- put%) = ([%-%d.]+)"))
    assert.truthy(got, out)
    local want = 0
    for i = 1, n do
      local t = f(f(i) / f(n))
      local s, x, y = f(5 + f(30 * t)), f(1 + f(100 * f(1 - t))), f(0.25 + f(8 * t))
      want = want + (s - x * math.exp(-0.02 * y))
    end
    assert.truthy(math.abs(got - want) <= 1e-4 * math.abs(want) + 1, got .. " vs " .. want)
  end)

  it("nbody follows the same orbits as plain Lua", function()
    local n, steps = 40, 3
    local out = run("nbody", ("N=%d STEPS=%d"):format(n, steps))
    local x, y, e0, e1 = out:match("body 1 at %(([%-%d.]+), ([%-%d.]+)%); kinetic energy ([%d.]+) %-> ([%d.]+)")
    assert.truthy(x, out)
    local s, mass, dt, soft = {}, 1 / n, 0.01, 0.01
    for i = 1, n do
      local a = i * (2 * math.pi / n)
      s[i] = { math.cos(a), math.sin(a), -math.sin(a) * 0.3, math.cos(a) * 0.3 }
    end
    for _ = 1, steps do
      local nxt = {}
      for i = 1, n do
        local ax, ay = 0, 0
        for j = 1, n do
          local dx, dy = s[j][1] - s[i][1], s[j][2] - s[i][2]
          local d2 = dx * dx + dy * dy + soft * soft
          local inv = mass / (d2 * math.sqrt(d2))
          ax, ay = ax + dx * inv, ay + dy * inv
        end
        local vx, vy = s[i][3] + ax * dt, s[i][4] + ay * dt
        nxt[i] = { s[i][1] + vx * dt, s[i][2] + vy * dt, vx, vy }
      end
      s = nxt
    end
    local e = 0
    for i = 1, n do e = e + 0.5 * mass * (s[i][3] ^ 2 + s[i][4] ^ 2) end
    assert.are.equal(("%.4f"):format(s[1][1]), x)
    assert.are.equal(("%.4f"):format(s[1][2]), y)
    assert.are.equal("0.045000", e0)
    assert.are.equal(("%.6f"):format(e), e1)
  end)

  it("cleans up", function() os.execute(("rm -rf '%s'"):format(dir)) end)
end)
