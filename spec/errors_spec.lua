-- SPEC §6 from Lua: every misuse is a Lua error whose message names the combinator, the
-- expected and actual types or ranks where relevant, and the user's file:line; the
-- process keeps working afterwards (a small program runs on every backend).
-- Calls under test are never tail calls (`local p = ...; return p`), so the user's
-- frame is still on the stack when lacc looks for it.
local H = require "helper"
local lacc = H.lacc

-- The line of this file holding a marker comment ("--@name").
local this_file = debug.getinfo(1, "S").source:gsub("^@", "")
local function line_of(marker)
  local n = 0
  for l in io.lines(this_file) do
    n = n + 1
    if l:find("%-%-@" .. marker .. "$") then return n end
  end
  error("no marker " .. marker)
end
local function at(marker) return "errors_spec.lua:" .. line_of(marker) end

-- After an error, lacc still builds and runs programs on every backend.
local function still_works()
  local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
  for _, b in ipairs(H.backends) do
    local r = lacc.run(lacc.map(function(x) return x * 2 + 1 end, xs), { backend = b })
    H.check_array(r, { 3, 5, 7 })
    local s = lacc.run(lacc.sum(lacc.fromtable({ 1.5, 2.5 }, "f64")), { backend = b })
    assert.are.equal(4, H.num(s:get()))
  end
end

-- pcall f; it must fail with every fragment in the message; then lacc must still work.
local function fails_with(f, ...)
  local ok, err = pcall(f)
  assert.is_false(ok, "expected an error")
  err = tostring(err)
  for _, frag in ipairs { ... } do
    assert.is_truthy(err:find(frag, 1, true), ("message %q lacks %q"):format(err, frag))
  end
  -- the user's place, never a place inside lacc's own files
  assert.is_falsy(err:find("lacc[/\\][%w_]+%.lua"),
    ("message %q points into lacc's own files"):format(err))
  still_works()
  return err
end

-- The message without its "(at file:line)" part, for checks on numbers in it.
local function text_of(err) return (err:gsub("%(at [^)]*%)", "")) end

local f32s = lacc.fromtable({ 1, 2, 3 }, "f32")
local i32s = lacc.fromtable({ 1, 2, 3 }, "i32")
local m22 = lacc.fromtable({ { 1, 2 }, { 3, 4 } }, "f32")

describe("build-time errors", function()
  it("adding f32 to i32 inside a map lambda", function()
    local k = lacc.constant(1, "i32")
    fails_with(function()
      local p = lacc.map(function(x)
        local y = x + k --@add
        return y
      end, f32s)
      return p
    end, "add", "f32", "i32", at("add"))
  end)

  it("zipWith of arrays of different ranks", function()
    local err = fails_with(function()
      local p = lacc.zipWith(function(a, b) return a + b end, f32s, m22) --@rank
      return p
    end, "zipWith", "rank", at("rank"))
    local t = text_of(err)
    assert.truthy(t:find("1", 1, true) and t:find("2", 1, true), err)
  end)

  it("fold with a function returning the wrong type", function()
    fails_with(function()
      local p = lacc.fold(function(a, b) return lacc.lt(a, b) end, 0, f32s) --@fold
      return p
    end, "fold", "f32", "bool", at("fold"))
    fails_with(function()
      local p = lacc.fold(function(a, b) return (a + b):cast("i32") end, 0, f32s) --@fold2
      return p
    end, "fold", "f32", "i32", at("fold2"))
  end)

  it("fold with a start value of the wrong type", function()
    fails_with(function()
      local p = lacc.fold(function(a, b) return a + b end, true, f32s) --@foldz
      return p
    end, "fold", "f32", "boolean", at("foldz"))
  end)

  it("map with a non-function", function()
    fails_with(function()
      local p = lacc.map(42, f32s) --@nonfn
      return p
    end, "map", "function", "number", at("nonfn"))
    fails_with(function()
      local p = lacc.map(nil, f32s) --@nilfn
      return p
    end, "map", "function", "nil", at("nilfn"))
  end)

  it("map over a number instead of an array", function()
    fails_with(function()
      local p = lacc.map(function(x) return x end, 7) --@nonarr
      return p
    end, "map", "array", "number", at("nonarr"))
  end)

  it("a lambda that returns nothing", function()
    fails_with(function()
      local p = lacc.map(function() end, f32s) --@nothing
      return p
    end, "map", "nothing", at("nothing"))
  end)

  it("a lambda that raises a Lua error: the error propagates", function()
    fails_with(function()
      local p = lacc.map(function(x)
        error("boom from user") --@boom
      end, f32s)
      return p
    end, "boom from user", at("boom"))
    -- a non-string error value propagates as itself
    local obj = { code = 42 }
    local ok, err = pcall(function()
      local p = lacc.map(function() error(obj) end, f32s)
      return p
    end)
    assert.is_false(ok)
    assert.are.equal(obj, err)
    still_works()
  end)

  it("lacc.constant with an unknown type", function()
    fails_with(function()
      local c = lacc.constant(1, "f16") --@const
      return c
    end, "constant", "f16", at("const"))
  end)

  it("fromtable with a ragged table", function()
    fails_with(function()
      local a = lacc.fromtable({ { 1, 2 }, { 3 } }, "f64") --@ragged
      return a
    end, "fromtable", "ragged", at("ragged"))
    fails_with(function()
      local a = lacc.fromtable({ { { 1 }, { 2 } }, { { 3 }, { 4, 5 } } }, "i32") --@ragged3
      return a
    end, "fromtable", "ragged", at("ragged3"))
  end)

  it("an unknown backend", function()
    fails_with(function()
      local r = lacc.run(lacc.use(f32s), { backend = "tpu" }) --@backend
      return r
    end, "run", "unknown backend", "tpu", at("backend"))
  end)

  it("a backend that is not a string (the same message on both VMs)", function()
    fails_with(function()
      local r = lacc.run(lacc.use(f32s), { backend = 5 }) --@backend5
      return r
    end, "run", "unknown backend", "5", at("backend5"))
  end)

  it("element types past the limits say which limit, and lacc keeps working", function()
    local function fields(n)
      local t = {}
      for i = 1, n do t[i] = "f32" end
      return lacc.tuple((table.unpack or unpack)(t))
    end
    assert.are.equal(2, #lacc.array(fields(64), { 2 }))   -- the largest tuple
    local ok, err = pcall(lacc.array, fields(65), { 2 })
    assert.is_false(ok)
    assert.truthy(err:find("a tuple has at most 64 fields", 1, true), err)
    local cons = {}
    for i = 1, 4097 do cons[i] = { "C" .. i } end
    ok, err = pcall(function() return lacc.array(lacc.data("Big", cons), { 1 }) end)
    assert.is_false(ok)
    assert.truthy(err:find("a sum has at most 4096 constructors", 1, true), err)
    cons[4097] = nil
    assert.are.equal(1, #lacc.array(lacc.data("Big", cons), { 1 }))   -- the largest sum
    local nest = "i32"
    for _ = 1, 70 do nest = "(" .. nest .. ",i8)" end
    ok, err = pcall(lacc.array, nest, { 1 })
    assert.is_false(ok)
    assert.truthy(err:find("types nest at most 64 levels deep", 1, true), err)
    ok, err = pcall(function() return lacc.array(lacc.data(("N"):rep(64), { { "A" } }), { 1 }) end)
    assert.is_false(ok)
    assert.truthy(err:find("names have at most 63 characters", 1, true), err)
    assert.are.equal(1, #lacc.array(lacc.data(("N"):rep(63), { { ("A"):rep(63) } }), { 1 }))
    H.check_array(lacc.run(lacc.map(function(x) return x * 3 end, f32s)), { 3, 6, 9 })
  end)

  describe("using an array after a:free()", function()
    local function freed()
      local a = lacc.fromtable({ 1, 2 }, "f64")
      H.check_array(lacc.run(lacc.map(function(x) return x * 3 end, a)), { 3, 6 })
      a:free()
      return a
    end

    it("a:get", function()
      local a = freed()
      fails_with(function()
        local v = a:get(1) --@freeget
        return v
      end, "after free", at("freeget"))
    end)

    it("map over it and run", function()
      local b = lacc.fromtable({ 1, 2 }, "f64")
      b:free()
      fails_with(function()
        local p = lacc.map(function(x) return x end, b) --@freemap
        local r = lacc.run(p)
        return r
      end, "after free", at("freemap"))
    end)

    it("a:totable", function()
      local a = freed()
      fails_with(function()
        local t = a:totable() --@freetotable
        return t
      end, "after free", at("freetotable"))
    end)

    it("freeing twice is harmless", function()
      local a = freed()
      a:free()
      still_works()
    end)
  end)
end)

describe("run-time errors", function()
  for _, b in ipairs(H.backends) do
    describe("on " .. b, function()
      it("fold1 and maximum of an empty array", function()
        local e = lacc.array("f64", { 0 })
        fails_with(function()
          local p = lacc.fold1(function(x, y) return x + y end, e) --@fold1
          local r = lacc.run(p, { backend = b })
          return r
        end, "fold1", "empty", at("fold1"))
        local err = fails_with(function()
          local p = lacc.maximum(e) --@maximum
          local r = lacc.run(p, { backend = b })
          return r
        end, "empty", at("maximum"))
        assert.truthy(err:find("maximum", 1, true) or err:find("fold1", 1, true), err)
        -- an empty outer dimension is no error: zero reductions of length 3
        local r = lacc.run(lacc.fold1(function(x, y) return x + y end,
          lacc.array("f64", { 0, 3 })), { backend = b })
        assert.are.same({ 0 }, r:shape())
      end)

      it("reshape to a different size", function()
        local err = fails_with(function()
          local p = lacc.reshape({ 2, 2 }, f32s) --@reshape
          local r = lacc.run(p, { backend = b })
          return r
        end, "reshape", at("reshape"))
        local t = text_of(err)
        assert.truthy(t:find("3", 1, true) and t:find("4", 1, true), err)
      end)

      it("out-of-bounds xs[i] inside a lambda", function()
        fails_with(function()
          local p = lacc.generate({ 4 }, function(i) return f32s[i] end) --@oob
          local r = lacc.run(p, { backend = b })
          return r
        end, "out of bounds", "4", "3", at("oob"))
        fails_with(function()
          local p = lacc.generate({ 3 }, function(i) return f32s[i - 3] end) --@oobneg
          local r = lacc.run(p, { backend = b })
          return r
        end, "out of bounds", at("oobneg"))
        fails_with(function()
          local p = lacc.generate({ 2, 2 }, function(i, j) return m22:at(j, i + 1) end) --@oob2
          local r = lacc.run(p, { backend = b })
          return r
        end, "out of bounds", at("oob2"))
      end)

      it("integer division by zero", function()
        local cases = {
          { "idiv", function()
            local p = lacc.map(function(x) return lacc.idiv(10, x - 2) end, i32s) --@idiv0
            return p
          end, "idiv0" },
          { "mod", function()
            local p = lacc.map(function(x) return x % (x - 2) end, i32s) --@mod0
            return p
          end, "mod0" },
          { "quot", function()
            local p = lacc.map(function(x) return lacc.quot(10, x - 2) end, i32s) --@quot0
            return p
          end, "quot0" },
          { "rem", function()
            local p = lacc.map(function(x) return lacc.rem(10, x - 2) end, i32s) --@rem0
            return p
          end, "rem0" },
        }
        for _, c in ipairs(cases) do
          fails_with(function()
            local r = lacc.run(c[2](), { backend = b })
            return r
          end, "division by zero", c[1], at(c[3]))
        end
        -- float division by zero is no error
        local r = lacc.run(lacc.map(function(x) return x / (x - x) end, f32s), { backend = b })
        assert.are.equal(math.huge, H.num(r[1]))
        -- a division by zero in the branch not taken is no error
        local q = lacc.run(lacc.map(function(x)
          return lacc.cond(lacc.gt(x, 5), lacc.idiv(10, x - x), x)
        end, i32s), { backend = b })
        H.check_array(q, { 1, 2, 3 })
      end)

      it("a negative extent in generate", function()
        local err = fails_with(function()
          local p = lacc.generate({ -1 }, function(i) return i end) --@neg
          local r = lacc.run(p, { backend = b })
          return r
        end, "generate", "negative", at("neg"))
        assert.truthy(text_of(err):find("-1", 1, true), err)
        fails_with(function()
          local p = lacc.generate({ 2, -3 }, function(i, j) return i + j end) --@neg2
          local r = lacc.run(p, { backend = b })
          return r
        end, "generate", "negative", "-3", at("neg2"))
      end)
    end)
  end
end)
