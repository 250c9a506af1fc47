-- lacc.compile with scalar arguments and several results (issue 20): Lua numbers and
-- booleans become run-time parameters, traced once for all their values, checked against
-- plain Lua arithmetic on every backend.
local H = require "helper"
local lacc = H.lacc

for _, b in ipairs(H.backends) do
  describe("compile with scalars on " .. b, function()
    it("takes Lua numbers as run-time parameters, one trace for all values", function()
      local traces = 0
      local f = lacc.compile(function(xs, a, c)
        traces = traces + 1
        return lacc.map(function(x) return x * a + c end, xs)
      end, { backend = b })
      local xs = lacc.fromtable({ 1, 2, 3 }, "f64")
      for _, ab in ipairs { { 2.5, 1.5 }, { 10, 0 }, { -1, 0.25 }, { 0, 0 } } do
        local r = f(xs, ab[1], ab[2]):totable()
        for i, x in ipairs { 1, 2, 3 } do assert.are.equal(x * ab[1] + ab[2], r[i]) end
      end
      assert.are.equal(1, traces)
    end)

    it("a number takes the type of what it meets (f32 here), and an integer's check", function()
      local g = lacc.compile(function(xs, n) return lacc.map(function(x) return x * n end, xs) end,
                             { backend = b })
      assert.are.same({ 0.5, 1 }, g(lacc.fromtable({ 1, 2 }, "f32"), 0.5):totable())
      assert.are.same({ 3, 6 }, g(lacc.fromtable({ 1, 2 }, "i32"), 3):totable())
      local ok, err = pcall(g, lacc.fromtable({ 1, 2 }, "i32"), 2.5)
      assert.is_false(ok)
      assert.truthy(err:find("argument 2 is 2.5, and the function uses it as an integer", 1, true), err)
      -- the first call of a trace is checked too
      local g2 = lacc.compile(function(xs, n) return lacc.map(function(x) return x + n end, xs) end,
                              { backend = b })
      assert.is_false(pcall(g2, lacc.fromtable({ 1 }, "i64"), 0.5))
      assert.are.same({ 8 }, g2(lacc.fromtable({ 1 }, "i64"), 7):totable())
    end)

    it("takes booleans, and declared types", function()
      local pick = lacc.compile(function(xs, on)
        return lacc.map(function(x) return lacc.cond(on, x, -x) end, xs)
      end, { backend = b })
      local xs = lacc.fromtable({ 1, -2 }, "i32")
      assert.are.same({ 1, -2 }, pick(xs, true):totable())
      assert.are.same({ -1, 2 }, pick(xs, false):totable())
      local h = lacc.compile(function(ys, k) return lacc.map(function(x) return lacc.idiv(x, k) end, ys) end,
                             { backend = b, args = { [2] = "i32" } })
      assert.are.same({ 3, -4 }, h(lacc.fromtable({ 7, -7 }, "i32"), 2):totable())
      local ok, err = pcall(h, xs, 1.5)
      assert.is_false(ok)
      assert.truthy(err:find("argument 2: expected an integer for i32, got 1.5", 1, true), err)
    end)

    it("returns several arrays as several values", function()
      local stats = lacc.compile(function(xs)
        return lacc.sum(xs), lacc.maximum(xs), lacc.map(function(x) return x * x end, xs)
      end, { backend = b })
      local s, m, sq = stats(lacc.fromtable({ 3, 1, 4 }, "i64"))
      assert.are.equal(8, H.num(s:get()))
      assert.are.equal(4, H.num(m:get()))
      assert.are.same({ 9, 1, 16 }, sq:totable())
    end)

    it("keeps captured Lua values as constants of the trace; arguments change per call", function()
      local k = 10
      local f = lacc.compile(function(xs, a) return lacc.map(function(x) return x * k + a end, xs) end,
                             { backend = b })
      local xs = lacc.fromtable({ 1, 2 }, "f64")
      assert.are.same({ 11, 21 }, f(xs, 1):totable())
      k = 100   -- captured when the function was traced: no effect
      assert.are.same({ 12, 22 }, f(xs, 2):totable())
    end)
  end)
end

describe("compile's arguments, errors", function()
  it("name the argument and what is wrong", function()
    local f = lacc.compile(function(xs) return xs end)
    local ok, err = pcall(f, "text")
    assert.is_false(ok)
    assert.truthy(err:find("argument 1 is string, expected a host array or a number", 1, true), err)
    ok, err = pcall(lacc.compile, function() end, { args = { [1] = "f31" } })
    assert.is_false(ok)
    assert.truthy(err:find("compile: args[1] must be a scalar type, got f31", 1, true), err)
    ok, err = pcall(lacc.compile(function() end))
    assert.is_false(ok)
    assert.truthy(err:find("returned nothing", 1, true), err)
  end)
end)

-- lacc.compile with array arguments (issue 4): one trace for every call of the same kind
local seq = H.seq
local function plus1(x) return x + 1 end
local function mul(a, b) return a * b end

describe("lacc.compile", function()
  it("runs the traced program on new arrays without tracing again", function()
    local traced = 0
    local dot = lacc.compile(function(a, b)
      traced = traced + 1
      return lacc.sum(lacc.zipWith(mul, a, b))
    end)
    local x = seq(5, "f32", function(i) return i end)
    local y = seq(5, "f32", function(i) return 10 * i end)
    assert.are.equal(550, dot(x, y):get())
    assert.are.equal(550, dot(y, x):get())
    local z = seq(3, "f32", function(i) return i end)
    assert.are.equal(14, dot(z, z):get())
    assert.are.equal(1, traced)
    -- another element type is another program
    local w = seq(3, "f64", function(i) return i end)
    assert.are.equal(14, dot(w, w):get())
    assert.are.equal(2, traced)
  end)

  it("returns several results and agrees with run on every backend", function()
    local f = function(a) return { lacc.map(plus1, a), lacc.maximum(a) } end
    local x = seq(7, "i32", function(i) return (i * 5) % 7 end)
    for _, backend in ipairs { "cpu", "interp" } do
      local g = lacc.compile(f, { backend = backend })
      local r1, r2 = g(x)
      local s1, s2 = lacc.run(f(x))
      assert.are.same(s1:totable(), r1:totable())
      assert.are.same(s2:totable(), r2:totable())
    end
  end)

  it("rejects what is neither an array nor a scalar, and a scalar used as an array", function()
    local g = lacc.compile(function(a) return lacc.map(plus1, a) end)
    local ok, err = pcall(g, "three")
    assert.is_false(ok)
    assert.truthy(err:find("compiled function: argument 1 is string, expected a host array or a number (at ", 1, true), err)
    ok, err = pcall(g, 3)   -- a number is a scalar parameter: map wants an array
    assert.is_false(ok)
    assert.truthy(err:find("map: expected an array, got a scalar expression", 1, true), err)
    assert.has_error(function() lacc.compile(3) end)
  end)
end)
