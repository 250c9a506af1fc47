-- Stencils (issue 5): stencil and stencil2 on ranks 1 to 3, windows 3 to 9, every
-- boundary, on every backend against a plain-Lua reference.
local H = require "helper"
local lacc = H.lacc
local unpack = table.unpack or unpack

-- 0-based index k into 0 .. n - 1 under a boundary; nil: outside (constant boundary).
local function adjust(b, k, n)
  if k >= 0 and k < n then return k end
  if b == "clamp" then return k < 0 and 0 or n - 1 end
  if b == "wrap" then return k % n end
  if b == "mirror" then
    k = k < 0 and -k or 2 * n - 2 - k
    return math.max(0, math.min(n - 1, k))
  end
  return nil
end

-- Reference: for each element (row-major), the window values in row-major order.
local function ref_stencil(f, b, cval, flat, sh, w)
  local rank, n = #sh, H.size(sh)
  local out = {}
  for lin = 0, n - 1 do
    local ix = H.unravel(sh, lin)
    local args = {}
    local idx = {}
    local function walk(d)
      if d > rank then
        local at, outside = {}, false
        for e = 1, rank do
          local k = adjust(b, idx[e] - 1, sh[e])
          if k == nil then outside = true; k = 0 end
          at[e] = k + 1
        end
        args[#args + 1] = outside and cval or flat[H.ravel(sh, at) + 1]
        return
      end
      local h = math.floor((w[d] - 1) / 2)
      for off = -h, h do
        idx[d] = ix[d] + off
        walk(d + 1)
      end
    end
    walk(1)
    out[lin + 1] = f(unpack(args))
  end
  return out
end

-- A weighted sum that tells every position apart.
local function weigh(...)
  local s = 0
  for i, v in ipairs { ... } do s = s + v * (i % 5 + 1) end
  return s
end

for _, be in ipairs(H.backends) do
  describe("stencils on " .. be, function()
    local opts = { backend = be }

    it("every boundary, ranks 1 to 3, windows 3 to 9, against Lua loops", function()
      H.seed(1001)
      local cases = {
        { { 7 }, { 3 } }, { { 9 }, { 5 } }, { { 2 }, { 9 } }, { { 0 }, { 3 } },
        { { 4, 5 }, { 3, 3 } }, { { 3, 6 }, { 5, 3 } }, { { 1, 1 }, { 3, 7 } },
        { { 2, 3, 4 }, { 3, 3, 3 } },
        -- windows of more than 64 values (issue 27: a tuple's limit was 64 fields); on
        -- OpenCL (seconds of PoCL compiling each) one boundary each
        { { 10, 11 }, { 9, 9 }, "clamp" }, { { 4, 5, 6 }, { 5, 5, 3 }, "wrap" },
        { { 3, 4, 5 }, { 5, 5, 5 }, "mirror" },
      }
      -- the stencils run 16 to a program (one build each, not one a stencil), each
      -- result checked on its own
      local batch = H.batch(function(list) return lacc.run(list, opts) end)
      local checks = {}
      for _, c in ipairs(cases) do
        local sh, w = c[1], c[2]
        local xs, flat = H.random_array("i32", sh)
        for i, v in ipairs(flat) do flat[i] = v % 1000 end
        xs = lacc.run(lacc.map(function(v) return lacc.imod(v, 1000) end, xs))
        local bounds = { "clamp", "mirror", "wrap", "constant" }
        if c[3] and be == "opencl" then bounds = { c[3] } end
        for _, b in ipairs(bounds) do
          local bd = b == "constant" and lacc.constant(-7, "i32") or b
          local want = ref_stencil(function(...)
            local s = 0
            for i, v in ipairs { ... } do s = s + v * (i % 5 + 1) end
            return s
          end, b, -7, flat, sh, w)
          checks[#checks + 1] = { batch:add(lacc.stencil(weigh, bd, xs, w)), want, sh, w, b }
        end
      end
      for _, k in ipairs(checks) do
        local got, want, sh, w, b = batch:get(k[1]), k[2], k[3], k[4], k[5]
        assert.are.same(sh, got:shape())
        local ok, err = pcall(H.check_array, got, want)
        if not ok then error(("%s %s window %s: %s"):format(b, table.concat(sh, "x"),
          table.concat(w, "x"), err)) end
      end
    end)

    it("stencil2 reads two arrays, the shapes intersect", function()
      local a = lacc.fromtable({ 1, 2, 3, 4 }, "f64")
      local b = lacc.fromtable({ 10, 20, 30 }, "f64")
      local p = lacc.stencil2(function(l, c, r, l2, c2, r2) return c * 1000 + l + r + l2 + r2 end,
        "clamp", a, lacc.constant(0, "f64"), b)
      -- i=1: 1*1000 + 1 + 2 + 0 + 20; i=2: 2000 + 1 + 3 + 10 + 30; i=3: 3000 + 2 + 4 + 20 + 0
      assert.are.same({ 1023, 2044, 3026 }, lacc.run(p, opts):totable())
    end)
  end)
end

describe("stencils in generated code", function()
  local function avg(a, b, c, d, e, f, g, h, i) return (a + b + c + d + e + f + g + h + i) / 9 end
  local x = lacc.fromtable({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } }, "f32")

  it("the interior loop reads fixed offsets with no boundary code", function()
    local text = lacc.explain(lacc.stencil(avg, "mirror", x), { source = true })
    local clean = 0
    for body in text:gmatch("for %([^\n]*%) {\n(.-)\n%s*}") do
      if body:find("b%d+_%d+%[") and not body:find("?", 1, true) and not body:find("if (", 1, true) then
        clean = clean + 1
      end
    end
    assert.are.equal(1, clean, text)   -- the interior's loop; the border's have boundary code
  end)

  it("a producer feeding a stencil is materialised once, not recomputed per neighbour", function()
    local p = lacc.stencil(avg, "clamp", lacc.map(function(v) return v * 2 end, x))
    local _, stats = lacc.explain(p)
    assert.are.equal(2, stats.kernels)
    local q = lacc.stencil(avg, "clamp", lacc.transpose(x))   -- an index transform: pulled
    local _, qs = lacc.explain(q)
    assert.are.equal(1, qs.kernels)
    for _, b in ipairs(H.backends) do
      local r = lacc.run(q, { backend = b }):totable()
      assert.are.equal(4, #r)
      assert.is_true(math.abs(r[1][1] - (1 + 1 + 2 + 1 + 1 + 2 + 5 + 5 + 6) / 9) < 1e-5)
    end
  end)
end)

describe("stencil errors", function()
  it("name bad windows, boundaries and ranks", function()
    local x = lacc.fromtable({ 1, 2, 3 }, "i32")
    local id = function(a, b, c) return b end
    local ok, err = pcall(lacc.stencil, id, "clamp", x, { 4 })
    assert.is_false(ok)
    assert.truthy(err:find("stencil: window sizes must be odd, 3 to 9", 1, true))
    ok, err = pcall(lacc.stencil, id, "reflect", x)
    assert.is_false(ok)
    assert.truthy(err:find("stencil: boundary must be", 1, true))
    ok, err = pcall(lacc.stencil, id, lacc.constant(1.5, "f64"), x)
    assert.is_false(ok)
    assert.truthy(err:find("a constant boundary of type f64 for elements of i32", 1, true))
    ok, err = pcall(lacc.stencil, id, "clamp", lacc.unit(lacc.constant(1, "i32")))
    assert.is_false(ok)
    assert.truthy(err:find("stencil: expected an array of rank 1 to 3", 1, true))
  end)
end)
