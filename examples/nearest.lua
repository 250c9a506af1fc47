-- The nearest hit of a ray among spheres, planes and triangles ("Variant Types in Data-Parallel Array Languages" §4.3): one
-- function over a sum type, run on the element-wise array (in any layout) and on the
-- variant-wise collection (lacc.partition), split or joined. `bench/nearest` times it.
-- Run: make demo NAME=nearest [N=primitives]. Loaded with the argument "library" it
-- returns its functions instead.
local lacc = require "lacc"

local N = {}

N.Prim = lacc.data("Prim", {
  { "Sphere", "f32", "f32", "f32", "f32" },                                -- centre, radius
  { "Plane", "f32", "f32", "f32", "f32" },                                 -- normal, offset: n.p = d
  { "Triangle", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32" },  -- corners
})

local EPS = 1e-4
local INF = math.huge

local function dot(ax, ay, az, bx, by, bz) return ax * bx + ay * by + az * bz end
local function cross(ax, ay, az, bx, by, bz)
  return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
end
local function f32(x) return lacc.constant(x, "f32") end
local function hit(t) return lacc.cond(lacc.gt(t, EPS), t, f32(INF)) end

-- The distance along the ray (origin o, unit direction d: Lua numbers) to a primitive,
-- infinity for a miss.
function N.intersect(o, d)
  local ox, oy, oz, dx, dy, dz = o[1], o[2], o[3], d[1], d[2], d[3]
  return function(p)
    return lacc.match(p, {
      Sphere = function(cx, cy, cz, r)
        local px, py, pz = ox - cx, oy - cy, oz - cz
        local b = dot(px, py, pz, dx, dy, dz)
        local disc = b * b - (dot(px, py, pz, px, py, pz) - r * r)
        local s = lacc.sqrt(lacc.max(disc, 0))
        local near = -b - s
        local t = lacc.cond(lacc.gt(near, EPS), near, -b + s)
        return lacc.cond(lacc.lt(disc, 0), f32(INF), hit(t))
      end,
      Plane = function(nx, ny, nz, off)
        local den = dot(nx, ny, nz, dx, dy, dz)
        local t = (off - dot(nx, ny, nz, ox, oy, oz)) / den
        return lacc.cond(lacc.lt(lacc.abs(den), 1e-6), f32(INF), hit(t))
      end,
      Triangle = function(ax, ay, az, bx, by, bz, cx, cy, cz)
        -- Möller-Trumbore
        local e1x, e1y, e1z = bx - ax, by - ay, bz - az
        local e2x, e2y, e2z = cx - ax, cy - ay, cz - az
        local px, py, pz = cross(dx, dy, dz, e2x, e2y, e2z)
        local det = dot(e1x, e1y, e1z, px, py, pz)
        local inv = 1 / det
        local sx, sy, sz = ox - ax, oy - ay, oz - az
        local u = dot(sx, sy, sz, px, py, pz) * inv
        local qx, qy, qz = cross(sx, sy, sz, e1x, e1y, e1z)
        local v = dot(dx, dy, dz, qx, qy, qz) * inv
        local t = dot(e2x, e2y, e2z, qx, qy, qz) * inv
        local miss = lacc.lor(lacc.lor(lacc.lt(lacc.abs(det), 1e-7), lacc.lor(lacc.lt(u, 0), lacc.gt(u, 1))),
                              lacc.lor(lacc.lt(v, 0), lacc.gt(u + v, 1)))
        return lacc.cond(miss, f32(INF), hit(t))
      end,
    })
  end
end

-- The nearest of (distance, index) pairs: the smaller distance, then the smaller index
-- (commutative and associative, so it folds a collection too).
function N.nearer(a, b)
  local take_b = lacc.lor(lacc.lt(b[1], a[1]), lacc.land(lacc.eq(b[1], a[1]), lacc.lt(b[2], a[2])))
  return lacc.cond(take_b, b, a)
end

-- The program: nearest (distance, 1-based index) over prims (an array or a collection).
function N.nearest(prims, o, d, opts)
  local f = N.intersect(o, d)
  local pairs_ = lacc.imap(function(i, p) return lacc.tuple(f(p), i) end, prims, opts)
  return lacc.fold1(N.nearer, pairs_)
end

-- n primitives, a third of each kind in a scene around the origin, from a fixed seed
-- (Park-Miller, exact in doubles, so Lua 5.4, LuaJIT and bench/c/nearest.c make the same
-- scene): a table of {tag, fields...} in random order; sorted: the same primitives grouped
-- by kind (spheres, planes, triangles, each in scene order).
function N.scene(n, sorted)
  local seed = 12345.0
  local function rnd()
    seed = math.fmod(seed * 16807.0, 2147483647.0)
    return seed / 2147483647.0
  end
  local function r(lo, hi) return lo + (hi - lo) * rnd() end
  local prims = {}
  for i = 1, n do
    local k = math.floor(rnd() * 3)
    if k == 0 then
      prims[i] = { tag = "Sphere", r(-50, 50), r(-50, 50), r(20, 120), r(0.2, 2) }
    elseif k == 1 then
      local nx, ny, nz = r(-1, 1), r(-1, 1), r(-1, 1)
      local len = math.sqrt(nx * nx + ny * ny + nz * nz) + 1e-9
      prims[i] = { tag = "Plane", nx / len, ny / len, nz / len, r(150, 400) }
    else
      local ax, ay, az = r(-50, 50), r(-50, 50), r(20, 120)
      prims[i] = { tag = "Triangle", ax, ay, az, ax + r(-3, 3), ay + r(-3, 3), az + r(-3, 3),
                   ax + r(-3, 3), ay + r(-3, 3), az + r(-3, 3) }
    end
  end
  if sorted then
    local by = { Sphere = {}, Plane = {}, Triangle = {} }
    for _, p in ipairs(prims) do table.insert(by[p.tag], p) end
    prims = {}
    for _, tag in ipairs { "Sphere", "Plane", "Triangle" } do
      for _, p in ipairs(by[tag]) do prims[#prims + 1] = p end
    end
  end
  return prims
end

N.origin = { 0, 0, 0 }
N.direction = { 0.1, 0.05, 0.99373034 }   -- unit length

if ... == "library" then return N end

local n = tonumber(os.getenv("N") or "") or 3000
local prims = N.scene(n)
local xs = lacc.fromtable(prims, N.Prim)
local elementwise = lacc.run(N.nearest(xs, N.origin, N.direction)):get()
local coll = lacc.partition(xs)
local split = lacc.run(N.nearest(coll, N.origin, N.direction, { strategy = "split" })):get()
local joined = lacc.run(N.nearest(coll, N.origin, N.direction, { strategy = "joined" })):get()
print(("%d primitives; the ray from (0,0,0) along (0.1,0.05,0.99) first meets"):format(n))
for _, r in ipairs { { "element-wise", elementwise }, { "variant-wise, split", split },
                     { "variant-wise, joined", joined } } do
  local t, i = r[2][1], r[2][2]
  print(("  %-22s primitive %d, a %s, at distance %.4f"):format(r[1], i, prims[tonumber(i)].tag, t))
end
