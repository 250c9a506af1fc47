-- The Lua examples run (as `make demo NAME=...` runs them), at small sizes, in a child
-- process of this VM; what they print and write is checked against plain Lua.
local H = require "helper"
local lua = arg and arg[-1] or "lua5.4"

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

  it("cleans up", function() os.execute(("rm -rf '%s'"):format(dir)) end)
end)
