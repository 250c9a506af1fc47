-- Issue 25, defects 10 and 11: sums of up to 4096 constructors matched and partitioned
-- (against plain-Lua references), the error past 4096, and types that cost the same
-- however many exist, with the nesting limit checked as the parser goes.
local H = require "helper"
local lacc = H.lacc

-- A sum of n constructors C1..Cn; every `every`-th one (C1, C1+every, ...) has an i32
-- field, the others none.
local function big_sum(n, every)
  local cons = {}
  for c = 1, n do cons[c] = c % every == 1 % every and { "C" .. c, "i32" } or { "C" .. c } end
  return lacc.data(("Big%d_%d"):format(n, every), cons)
end

local function has_field(c, every) return c % every == 1 % every end

-- 2n + 5 elements reaching every constructor, in a scattered order.
local function values(n, every)
  local vals = {}
  for i = 1, 2 * n + 5 do
    local c = (i * 7919) % n + 1
    vals[i] = has_field(c, every) and { tag = "C" .. c, i % 13 - 6 } or { tag = "C" .. c }
  end
  return vals
end

-- The match under test and its plain-Lua reference: a field's alternative x * 3 + c,
-- a fieldless one -c.
local function cases_for(n, every)
  local cases = {}
  for c = 1, n do
    if has_field(c, every) then cases["C" .. c] = function(x) return x * 3 + c end
    else cases["C" .. c] = function() return lacc.constant(-c, "i32") end end
  end
  return cases
end

local function reference(v)
  local c = tonumber(v.tag:sub(2))
  return v[1] and v[1] * 3 + c or -c
end

local function check_match(n, every, backend)
  local vals = values(n, every)
  local cases = cases_for(n, every)
  local r = lacc.run(lacc.map(function(v) return lacc.match(v, cases) end,
                              lacc.fromtable(vals, big_sum(n, every))), { backend = backend })
  local want = {}
  for i, v in ipairs(vals) do want[i] = reference(v) end
  H.check_array(r, want)
end

local function check_partition(n, every, backend)
  local vals = values(n, every)
  local opts = { backend = backend }
  local coll = lacc.run(lacc.partition(lacc.fromtable(vals, big_sum(n, every))), opts)
  assert.are.equal(n, #coll.groups)
  for c, g in ipairs(coll.groups) do
    assert.are.equal(c, g.con)
    local pos, data = {}, {}
    for i, v in ipairs(vals) do
      if v.tag == "C" .. c then
        pos[#pos + 1] = i - 1
        data[#data + 1] = v[1]
      end
    end
    H.check_array(g.host.pos, pos)
    if has_field(c, every) then H.check_array(g.host.data, data)
    else assert.is_nil(g.data) end
  end
  local back = lacc.run(lacc.merge(coll), opts):totable()
  for i, v in ipairs(vals) do
    assert.are.equal(v.tag, back[i].tag)
    assert.are.equal(v[1], back[i][1])
  end
end

for _, backend in ipairs(H.backends) do
  describe("sums of many constructors on " .. backend, function()
    for _, n in ipairs { 16, 17, 100 } do
      it(("match and partition %d constructors"):format(n), function()
        check_match(n, 2, backend)
        check_partition(n, 2, backend)
      end)
    end

    -- 300 constructors compile in seconds on cpu and OpenCL (the tag is tested by a
    -- binary search, so the code nests 9 deep). 4096 run here on the interpreter; on cpu
    -- their 4.3 MB of C is compiled without optimisation (cache_spec.lua, "programs too
    -- large to compile"), which takes seconds rather than the optimiser's minute.
    it("match 300 constructors", function() check_match(300, 2, backend) end)
    if backend == "interp" then
      it("match 4096 constructors", function() check_match(4096, 2, backend) end)
      it("partition 600 constructors", function() check_partition(600, 64, backend) end)
    end
  end)
end

describe("the limit of 4096 constructors", function()
  it("holds past 4096 with a clear error, in the types and in a match", function()
    local cons = {}
    for c = 1, 4097 do cons[c] = { "C" .. c } end
    local ok, err = pcall(lacc.data, "TooBig", cons)
    assert.is_false(ok)
    assert.matches("at most 4096 constructors", tostring(err), 1, true)
    cons[4097] = nil
    local T = lacc.data("Biggest", cons)
    assert.are.equal(4096, #T.parsed.constructors)
  end)

  it("a match still names a missing constructor among 4096", function()
    local cases = cases_for(4096, 1)
    cases.C4000 = nil
    local xs = lacc.fromtable(values(4096, 1), big_sum(4096, 1))
    local ok, err = pcall(lacc.map, function(v) return lacc.match(v, cases) end, xs)
    assert.is_false(ok)
    assert.matches("missing C4000", tostring(err), 1, true)
  end)
end)

describe("types", function()
  -- os.clock: this process's CPU time, so other work on the machine barely moves it
  local function make(from, to)
    local t0 = os.clock()
    for i = from, to do
      local T = lacc.data("Many" .. i, { { "A" }, { "B", "i32" } })
      T.B(i)   -- the type reaches the core
    end
    return os.clock() - t0
  end

  it("20,000 distinct types: the second 10,000 cost what the first did", function()
    local first = make(1, 10000)
    local second = make(10001, 20000)
    -- under make check-asan (ASAN_OPTIONS set) every allocation costs many times more, and
    -- more as memory is held: only a cost growing with the number of types is caught then
    local slow = os.getenv("ASAN_OPTIONS") ~= nil
    assert.is_true(first < (slow and 60 or 5), "first 10,000: " .. first .. " s")
    assert.is_true(second < (slow and 10 or 3) * first + 0.1,
      ("second 10,000: %.2f s after %.2f s"):format(second, first))
  end)

  it("nesting 100,000 levels deep fails at once with the limit's error", function()
    local deep = string.rep("(", 100000) .. "f32" .. string.rep(")", 100000)
    local before = collectgarbage("count")
    local t0 = os.clock()
    for _, f in ipairs {
      function() return lacc.data("Deep", { { "A", deep } }) end,
      function() return lacc.layout(deep) end,
      function() return lacc.fromtable({}, deep) end,
    } do
      local ok, err = pcall(f)
      assert.is_false(ok)
      assert.matches("types nest at most 64 levels deep", tostring(err), 1, true)
    end
    assert.is_true(os.clock() - t0 < 2, "took " .. (os.clock() - t0) .. " s")
    assert.is_true(collectgarbage("count") - before < 64 * 1024, "memory grew")
  end)

  it("64 levels are allowed, 65 are not, in the surface and the core alike", function()
    local function nest(d) return string.rep("(", d) .. "i32" .. string.rep(")", d) end
    assert.is_truthy(lacc.layout(nest(64)))
    local ok, err = pcall(lacc.layout, nest(65))
    assert.is_false(ok)
    assert.matches("types nest at most 64 levels deep", tostring(err), 1, true)
    -- a named sum's payload counts one level for the tuple and one for its fields
    assert.is_truthy(lacc.data("Edge", { { "A", nest(62) } }))
    ok, err = pcall(lacc.data, "Edge", { { "A", nest(63) } })
    assert.is_false(ok)
    assert.matches("types nest at most 64 levels deep", tostring(err), 1, true)
  end)

  it("equal types are one type, different types are not", function()
    local A1 = lacc.data("Same", { { "X", "i32" }, { "Y" } })
    local A2 = lacc.data("Same", { { "X", "i32" }, { "Y" } })
    local B = lacc.data("Same", { { "X", "i64" }, { "Y" } })
    assert.are.equal(A1.sig, A2.sig)
    assert.are_not.equal(A1.sig, B.sig)
    -- values of the two equal types meet in one program
    local xs = lacc.fromtable({ { tag = "X", 4 }, { tag = "Y" } }, A1)
    local r = lacc.run(lacc.map(function(v)
      return lacc.cond(lacc.match(v, { X = function() return true end, Y = function() return false end }),
        v, A2.X(lacc.constant(7, "i32")))
    end, xs)):totable()
    assert.are.same({ { tag = "X", 4 }, { tag = "X", 7 } }, r)
    -- a value of the other type does not
    local ok, err = pcall(lacc.map, function(v)
      return lacc.cond(lacc.match(v, { X = function() return true end, _ = function() return false end }),
        v, B.Y())
    end, xs)
    assert.is_false(ok)
    assert.matches("Same<X%(i64%)|Y>", tostring(err))
  end)
end)

describe("lacc.limits", function()
  it("holds the guide's numbers, read-only, on both VMs", function()
    local want = { rank = 8, elements = 2 ^ 40, depth = 2000, zip = 15, args = 16, fields = 729,
                   constructors = 4096, nesting = 64, name = 63, stencil_rank = 3, window = 9 }
    for k, v in pairs(want) do assert.are.equal(v, lacc.limits[k], k) end
    assert.has_error(function() lacc.limits.rank = 9 end)
    assert.are.equal(8, lacc.limits.rank)
    -- the limits are the ones enforced: one past the rank limit is refused
    local ok = pcall(lacc.array, "i32", { 1, 1, 1, 1, 1, 1, 1, 1, 1 })
    assert.is_false(ok)
    assert.is_true((pcall(lacc.array, "i32", { 1, 1, 1, 1, 1, 1, 1, 1 })))
  end)
end)
