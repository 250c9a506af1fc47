-- Iteration and printing the same on Lua 5.4 and LuaJIT (issue 20): ipairs over rank-1
-- arrays, pairs and a:values() over any rank, tostring with the shortest digits of each
-- element's own type, 64-bit integers as Lua numbers where exact.
local H = require "helper"
local lacc = H.lacc
local JIT = type(jit) == "table"

describe("iteration", function()
  it("ipairs over a rank-1 array visits every element once, in order", function()
    local a = lacc.fromtable({ 3, 1, 4, 1, 5 }, "i32")
    local seen = {}
    for i, x in ipairs(a) do seen[#seen + 1] = { i, x } end
    assert.are.same({ { 1, 3 }, { 2, 1 }, { 3, 4 }, { 4, 1 }, { 5, 5 } }, seen)
    local n = 0
    for _ in ipairs(lacc.array("f64", { 0 })) do n = n + 1 end
    assert.are.equal(0, n)
  end)

  it("pairs and a:values() give the linear index and the element, any rank", function()
    local m = lacc.fromtable({ { 1, 2, 3 }, { 4, 5, 6 } }, "f32")
    local a, b = {}, {}
    for i, x in pairs(m) do a[i] = x end
    for i, x in m:values() do b[i] = x end
    assert.are.same({ 1, 2, 3, 4, 5, 6 }, a)
    assert.are.same(a, b)
    local T = lacc.tuple("i32", "bool")
    local t = {}
    for i, x in lacc.fromtable({ { 7, true } }, T):values() do t[i] = x end
    assert.are.same({ { 7, true } }, t)
  end)

  it("ipairs of another rank is an error; a[#a + 1] is nil, further indices errors", function()
    local m = lacc.fromtable({ { 1 } }, "i32")
    assert.is_false(pcall(function() for _ in ipairs(m) do end end))
    local a = lacc.fromtable({ 1, 2 }, "i32")
    assert.is_nil(a[3])
    local ok, err = pcall(function() return a[4] end)
    assert.is_false(ok)
    assert.truthy(err:find("out of bounds", 1, true))
    assert.is_false(pcall(function() return a[0] end))
  end)
end)

describe("element access", function()
  it("a:get(i, j) and a:set(i, j, v) of every scalar type (both VMs' direct paths) agree with totable", function()
    local vals = { bool = { true, false }, f32 = { 1.5, -0.25 }, f64 = { 0.1, -1e300 },
                   i8 = { -128, 127 }, u8 = { 0, 255 }, i16 = { -32768, 7 }, u16 = { 65535, 1 },
                   i32 = { -2147483648, 5 }, u32 = { 4294967295, 3 }, i64 = { -2 ^ 53, 9 },
                   u64 = { 2 ^ 53, 11 } }
    for t, v in pairs(vals) do
      local a = lacc.array(t, { 3, 4 }, v[2])
      a:set(2, 3, v[1])
      a:set(3, 4, v[1])
      local tt = a:totable()
      for i = 1, 3 do
        for j = 1, 4 do
          local want = ((i == 2 and j == 3) or (i == 3 and j == 4)) and v[1] or v[2]
          assert.are.equal(want, a:get(i, j), t .. " " .. i .. "," .. j)
          assert.are.equal(want, tt[i][j], t .. " " .. i .. "," .. j)
        end
      end
      -- indices outside, fractions, a third index: the errors of the general path
      for _, ix in ipairs { { 0, 1 }, { 4, 1 }, { 1, 5 }, { 1.5, 1 }, { 1, 1, 1 } } do
        local ok, err = pcall(a.get, a, table.unpack and table.unpack(ix) or unpack(ix))
        assert.is_false(ok, t)
        assert.truthy(tostring(err):find("get: ", 1, true), tostring(err))
      end
      local ok, err = pcall(a.set, a, 1, 1, "x")
      assert.is_false(ok)
      assert.truthy(tostring(err):find("set: expected", 1, true), tostring(err))
    end
  end)

  it("a:fields(i, ...) gives an element's fields as values and a:set_fields(i, ..., x, ...) " ..
     "writes them, nested tuples' fields in order, as get and totable see them", function()
    local big = JIT and 9007199254740992 or math.maxinteger
    local T = "(i64,(f64,bool),u8,f32)"
    local rows = {
      { { big, { 0.5, true }, 255, -1.5 }, { -big, { -0.0, false }, 0, 2 ^ 100 } },
      { { 0, { 1 / 0, true }, 7, 0.25 }, { 5, { -1 / 0, false }, 128, -0.0 } },
      { { -1, { 2.5, false }, 1, 3 }, { 42, { 1e-300, true }, 99, 8 } },
    }
    local a = lacc.fromtable(rows, T)
    for i = 1, 3 do
      for j = 1, 2 do
        local r = rows[i][j]
        assert.are.same({ r[1], r[2][1], r[2][2], r[3], r[4] }, { a:fields(i, j) })
        local g = a:get(i, j)
        assert.are.same({ g[1], g[2][1], g[2][2], g[3], g[4] }, { a:fields(i, j) })
      end
    end
    -- NaN, extremes and signs written as fields, read back by get and totable
    a:set_fields(2, 1, -big, 0 / 0, true, 255, -3.5)
    local g = a:get(2, 1)
    assert.are.equal(-big, g[1])
    assert.is_true(g[2][1] ~= g[2][1])
    assert.are.same({ true, 255, -3.5 }, { g[2][2], g[3], g[4] })
    local x, y = a:fields(2, 1)
    assert.are.equal(-big, x)
    assert.is_true(y ~= y)
    assert.are.same(a:totable()[2][1][3], 255)
    -- the other elements untouched
    assert.are.same({ 42, 1e-300, true, 99, 8 }, { a:fields(3, 2) })
    -- get and a[i] of a tuple of scalars take a direct path once the array is known: the
    -- same tables as the general path, and the same errors
    local p = lacc.fromtable({ { 1, 0.5 }, { -2, 0 / 0 }, { 3, -0.0 } }, lacc.tuple("i32", "f64"))
    for round = 1, 2 do
      for i = 1, 3 do
        local f1, f2 = p:fields(i)
        local got, elem = p:get(i), p[i]
        assert.are.equal(f1, got[1], "round " .. round)
        assert.are.equal(f1, elem[1])
        if f2 ~= f2 then assert.is_true(got[2] ~= got[2] and elem[2] ~= elem[2])
        else assert.are.equal(f2, got[2]); assert.are.equal(f2, elem[2]) end
        assert.are.equal(2, #got)
      end
      local ok, err = pcall(p.get, p, 4)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("get: index 1 out of bounds: 4 not in 1..3", 1, true), tostring(err))
    end
    p:free()
    local ok, err = pcall(p.get, p, 1)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("get: array used after free()", 1, true), tostring(err))
    -- a scalar array's field is its element; rank 0 takes no index; an empty tuple none
    local s = lacc.fromtable({ 3, 1, 4 }, "i32")
    assert.are.same({ 4 }, { s:fields(3) })
    s:set_fields(1, -2147483648)
    assert.are.same({ -2147483648, 1, 4 }, s:totable())
    local z = lacc.fromtable({ 9, 0.5 }, lacc.tuple("u16", "f64"))
    assert.are.same({ 9, 0.5 }, { z:fields() })
    z:set_fields(65535, -0.25)
    assert.are.same({ 65535, -0.25 }, z:get())
  end)

  it("a:fields and a:set_fields say what is wrong: indices, counts, types, variants, freed " ..
     "arrays", function()
    local a = lacc.fromtable({ { 1, 0.5 }, { 2, 1.5 } }, lacc.tuple("i32", "f64"))
    local function err(f, ...)
      local ok, e = pcall(f, ...)
      assert.is_false(ok)
      return tostring(e)
    end
    assert.matches("fields: index 1 out of bounds: 3 not in 1..2", err(a.fields, a, 3), 1, true)
    assert.matches("fields: expected 1 indices for an array of rank 1, got 2", err(a.fields, a, 1, 1), 1, true)
    assert.matches("fields: index 1 is not an integer (got 1.5)", err(a.fields, a, 1.5), 1, true)
    assert.matches("set_fields: expected 1 indices and 2 values for an array of rank 1 of (i32,f64), " ..
      "got 2 arguments", err(a.set_fields, a, 1, 5), 1, true)
    assert.matches("set_fields: expected an integer for i32, got 0.5", err(a.set_fields, a, 1, 0.5, 1), 1, true)
    assert.matches("set_fields: expected a number for f64, got string", err(a.set_fields, a, 1, 1, "x"), 1, true)
    assert.matches("set_fields: index 1 out of bounds: 0 not in 1..2", err(a.set_fields, a, 0, 1, 1.0), 1, true)
    assert.are.same({ { 1, 0.5 }, { 2, 1.5 } }, a:totable())   -- nothing written by a failed call
    local m = lacc.fromtable({ { tag = "Just", 2.5 }, { tag = "Nothing" } }, lacc.Maybe("f64"))
    assert.matches("fields: the elements of Maybe<Nothing|Just(f64)> hold variants: read them with get",
      err(m.fields, m, 1), 1, true)
    assert.matches("set_fields: the elements of Maybe<Nothing|Just(f64)> hold variants: write them with set",
      err(m.set_fields, m, 1, 2.5), 1, true)
    local tm = lacc.fromtable({ { 1, { tag = "Just", 2.5 } } }, lacc.tuple("i32", lacc.Maybe("f64")))
    assert.matches("fields: the elements of (i32,Maybe<Nothing|Just(f64)>) hold variants: read them with get",
      err(tm.fields, tm, 1), 1, true)
    assert.are.same({ 1, { tag = "Just", 2.5 } }, tm:get(1))
    a:free()
    assert.matches("fields: array used after free()", err(a.fields, a, 1), 1, true)
    assert.matches("set_fields: array used after free()", err(a.set_fields, a, 1, 1, 1.0), 1, true)
  end)

  -- LuaJIT reads and writes elements through the array's view record (lacc_array_view)
  -- while the core says the host may: each step below changes what it may do.
  for _, backend in ipairs(H.backends) do
    it("a[i] and a[i] = v stay right as runs read, write and copy the array (" .. backend .. ")", function()
      local a = lacc.fromtable({ 1, 2, 3, 4, 5 }, "f64")
      local double = lacc.compile(function(x) return lacc.map(function(e) return e * 2 end, x) end,
        { backend = backend })
      local r = double(a)          -- on opencl, a now has a copy on the device
      assert.are.same({ 2, 4, 6, 8, 10 }, { r[1], r[2], r[3], r[4], r[5] })
      a[3] = 30                    -- the write must reach the next run
      a:set(5, 50)
      r = double(a)
      assert.are.same({ 2, 4, 60, 8, 100 }, r:totable())
      r[1] = -1                    -- a result, written, then read by a run
      assert.are.equal(-1, r[1])
      local rr = double(r)
      assert.are.same({ -2, 8, 120, 16, 200 }, rr:totable())
      assert.are.same({ -1, 4, 60, 8, 100 }, r:totable())
      local m = lacc.run(lacc.generate({ 2, 3 }, function(i, j)
        return lacc.cast(i * 10 + j, "i32") end), { backend = backend })
      assert.are.equal(23, m:get(2, 3))   -- generate's indices count from 1
      m:set(1, 2, 7)
      assert.are.same({ { 11, 7, 13 }, { 21, 22, 23 } }, m:totable())
      assert.are.same({ 11, 7, 13, 21, 22, 23 },
        lacc.run(lacc.reshape({ 6 }, m), { backend = backend }):totable())
      r:free()
      local ok, e = pcall(function() return r[1] end)
      assert.is_false(ok)
      assert.truthy(tostring(e):find("used after free", 1, true), tostring(e))
      ok, e = pcall(function() r[1] = 1 end)
      assert.is_false(ok)
      assert.truthy(tostring(e):find("used after free", 1, true), tostring(e))
    end)
  end
end)

describe("printing", function()
  it("is the same text on both VMs, with each type's shortest digits", function()
    local cases = {
      { lacc.fromtable({ 0.1, 2, -0.0, 0 / 0, 1 / 0, 1e30, 123456789 }, "f32"),
        "Array (7) f32 [0.1,2.0,-0.0,nan,inf,1e+30,1.2345679e+08]" },
      { lacc.fromtable({ 0.1, 2, -0.0, -1 / 0, 1e300, 1 / 3 }, "f64"),
        "Array (6) f64 [0.1,2.0,-0.0,-inf,1e+300,0.3333333333333333]" },
      { lacc.fromtable({ { 1, 2.5 }, { -3, 0.1 } }, lacc.tuple("i64", "f32")),
        "Array (2) (i64,f32) [(1,2.5),(-3,0.1)]" },
      { lacc.fromtable({ { tag = "Just", 2 }, { tag = "Nothing" } }, lacc.Maybe("f64")),
        "Array (2) Maybe<Nothing|Just(f64)> [Just 2.0,Nothing]" },
      { lacc.fromtable({ 2 ^ 63, 5 }, "u64"), "Array (2) u64 [9223372036854775808,5]" },
      { lacc.fromtable({ { 2 ^ 63, 1.5 } }, lacc.tuple("u64", "f64")),
        "Array (1) (u64,f64) [(9223372036854775808,1.5)]" },
    }
    for _, c in ipairs(cases) do assert.are.equal(c[2], tostring(c[1])) end
  end)

  it("f32 elements print as f32 (0.1f is not the double 0.1)", function()
    local s = tostring(lacc.fromtable({ 0.1 }, "f32"))
    assert.are.equal("Array (1) f32 [0.1]", s)
    local d = tostring(lacc.fromtable({ H.f32(0.1) }, "f64"))
    assert.are.equal("Array (1) f64 [0.10000000149011612]", d)
  end)
end)

describe("64-bit integers", function()
  it("come back as Lua numbers where exact, usable as table keys", function()
    local a = lacc.fromtable({ 78, -3 }, "i64")
    local t = { [78] = "yes" }
    assert.are.equal("yes", t[a[1]])
    assert.are.equal("number", type(a:get(2)))
    assert.are.equal("number", type(lacc.run(lacc.sum(a)):get()))
  end)

  it("past 2^53 stay exact (cdata on LuaJIT), and set_int64('cdata') keeps cdata", function()
    local big = lacc.fromtable({ 2 ^ 60 + 0.0 }, "i64")
    local r = lacc.run(lacc.map(function(x) return x + 1 end, big))
    assert.are.equal("1152921504606846977", (tostring(r[1]):gsub("LL$", "")))
    if JIT then
      assert.are.equal("cdata", type(r[1]))
      lacc.set_int64("cdata")
      local ok, v = pcall(function() return lacc.fromtable({ 5 }, "i64")[1] end)
      lacc.set_int64("number")
      assert.is_true(ok)
      assert.are.equal("cdata", type(v))
    else
      lacc.set_int64("cdata")   -- Lua 5.4 has integers: accepted, no change
      assert.are.equal("number", type(lacc.fromtable({ 5 }, "i64")[1]))
      lacc.set_int64("number")
    end
    assert.is_false(pcall(lacc.set_int64, "bits"))
  end)
end)
