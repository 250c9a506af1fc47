-- Sharing recovery as the user sees it: lets in explain, linear cost on DAGs.
local H = require "helper"
local lacc = H.lacc

local function int64(x)
  if type(jit) == "table" then return require("ffi").new("int64_t", x) end
  return x
end

describe("sharing recovery", function()
  it("binds the seed example's three shared terms", function()
    local one, two = lacc.constant(1, "i32"), lacc.constant(2, "i32")
    local function inc(x) return x + one end
    local three = inc(two)
    local nine = three * three
    local p = lacc.unit(inc(nine) - nine)
    local text, st = lacc.explain(p)
    assert.are.equal(3, st.lets)
    local _, nlets = text:gsub("let ", "")
    assert.are.equal(3, nlets)
    for _, b in ipairs(H.backends) do
      assert.are.equal(1, lacc.run(p, { backend = b }):get())
    end
  end)

  it("keeps a chain of 60 self-additions linear", function()
    local xs = lacc.fromtable({ 1, 2, 3 }, "i64")
    local t0 = os.clock()
    local p = lacc.map(function(x)
      for _ = 1, 60 do x = x + x end
      return x
    end, xs)
    local _, st = lacc.explain(p)
    local r = lacc.run(p)
    assert.is_true(os.clock() - t0 < 0.5)
    assert.are.equal(59, st.lets)
    for i = 1, 3 do
      local ref = int64(i)
      for _ = 1, 60 do ref = ref + ref end   -- wraps on both VMs (int64 cdata on LuaJIT)
      assert.are.equal(ref, r[i])
    end
  end)

  it("keeps 30 nested zipWith(f, a, a) linear", function()
    local a = lacc.use(lacc.fromtable({ 1, 2, 3, 4, 5 }, "f64"))
    local t0 = os.clock()
    for _ = 1, 30 do a = lacc.zipWith(function(x, y) return x + y end, a, a) end
    local _, st = lacc.explain(a)
    local r = lacc.run(a)
    assert.is_true(os.clock() - t0 < 0.5)
    -- the use and the first 29 sums are each used twice by the next zipWith
    assert.are.equal(30, st.lets)
    assert.are.equal(30, st.kernels)
    for i = 1, 5 do assert.are.equal(i * 2 ^ 30, r[i]) end
  end)

  it("does not bind what is used once", function()
    local xs = lacc.fromtable({ 1, 2 }, "f32")
    local p = lacc.map(function(x) return (x + 1) * 2 end, lacc.map(function(x) return -x end, xs))
    local _, st = lacc.explain(p)
    assert.are.equal(0, st.lets)
  end)

  it("shares one array between several results", function()
    local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
    local ys = lacc.map(function(x) return x * 10 end, xs)
    local p = lacc.map(function(y) return y + 1 end, ys)
    local q = lacc.sum(ys)
    local text, st = lacc.explain({ p, q })
    assert.are.equal(1, st.lets)
    assert.truthy(text:find("result 2"))
    local a, b = lacc.run({ p, q })
    H.check_array(a, { 11, 21, 31 })
    assert.are.equal(60, b:get())
  end)

  it("binds arrays captured in lambdas at the array level", function()
    local xs = lacc.fromtable({ 5, 6, 7 }, "i32")
    local doubled = lacc.map(function(x) return x * 2 end, xs)
    local p = lacc.generate({ 3 }, function(i) return doubled[4 - i] end)
    local text, st = lacc.explain(p)
    assert.are.equal(1, st.lets)
    assert.truthy(text:find("a0 ! "))
    H.check_array(lacc.run(p), { 14, 12, 10 })
  end)

  it("rejects a scalar value that escapes its function", function()
    local xs = lacc.fromtable({ 1, 2 }, "f64")
    local leaked
    lacc.map(function(x) leaked = x * 3; return x end, xs)
    local p = lacc.map(function(x) return x + leaked end, xs)
    local ok, err = pcall(lacc.run, p)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("outside the function it belongs to", 1, true))
    H.check_array(lacc.run(lacc.map(function(x) return x + 1 end, xs)), { 2, 3 })
  end)
end)
