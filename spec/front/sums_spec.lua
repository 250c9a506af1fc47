-- Constructing and matching sum values inside programs, against plain-Lua references,
-- on every backend and layout.
local H = require "helper"
local lacc = H.lacc

local Shape, area_ref = H.Shape, H.area_ref

local function random_shape()
  local r = H.rand()
  if r < 0.4 then return { tag = "Circle", H.f32(H.rand() * 10) } end
  if r < 0.8 then return { tag = "Rect", H.f32(H.rand() * 10), H.f32(H.rand() * 10) } end
  return { tag = "Empty" }
end

for _, backend in ipairs(H.backends) do
  for _, layout in ipairs { "unboxed", "rtu", "compact", "compact_radix" } do
    local opts = { backend = backend, layout = layout }
    describe(("sum types on %s, %s"):format(backend, layout), function()
      before_each(function() lacc.set_layout(layout) end)
      after_each(function() lacc.set_layout("compact") end)

      it("matches a user type with a default", function()
        local vals = {}
        for i = 1, 23 do vals[i] = random_shape() end
        local s = lacc.fromtable(vals, Shape)
        local r = lacc.run(lacc.map(function(x)
          return lacc.match(x, {
            Circle = function(r) return r * r * 3 end,
            Rect = function(w, h) return w * h end,
            _ = function() return 0 end,
          })
        end, s), opts)
        local ref = {}
        for i, v in ipairs(vals) do ref[i] = area_ref(v) end
        H.check_array(r, ref)
      end)

      it("constructs values of a user type", function()
        local xs = lacc.fromtable({ -1.5, 0, 2, 7.25 }, "f32")
        local r = lacc.run(lacc.map(function(x)
          return lacc.cond(lacc.lt(x, 0), Shape.Empty(),
            lacc.cond(lacc.eq(x, 0), Shape.Circle(1), Shape.Rect(x, x * 2)))
        end, xs), opts)
        assert.are.same({ tag = "Empty" }, r[1])
        assert.are.same({ tag = "Circle", 1 }, r[2])
        assert.are.same({ tag = "Rect", 2, 4 }, r[3])
        assert.are.same({ tag = "Rect", 7.25, 14.5 }, r[4])
      end)

      it("safe division returns Maybe", function()
        local a = lacc.fromtable({ 7, -7, 3, 0, 5 }, "i32")
        local b = lacc.fromtable({ 2, 2, 0, 0, -3 }, "i32")
        local q = lacc.zipWith(function(x, y)
          return lacc.cond(lacc.eq(y, 0), lacc.Nothing("i32"), lacc.Just(lacc.idiv(x, y)))
        end, a, b)
        local r = lacc.run(q, opts)
        local ref = { { tag = "Just", 3 }, { tag = "Just", -4 }, { tag = "Nothing" },
                      { tag = "Nothing" }, { tag = "Just", -2 } }
        for i = 1, 5 do assert.are.same(ref[i], r[i]) end
        -- and no division by zero happened: cond only evaluates the branch it takes
        local d = lacc.run(lacc.map(function(m)
          return lacc.match(m, { Just = function(v) return v end, Nothing = function() return -99 end })
        end, q), opts)
        H.check_array(d, { 3, -4, -99, -99, -2 })
      end)

      it("find: map to Maybe, fold with firstJust (Accelerating Sum Types, Listing 6)", function()
        for _, n in ipairs { 0, 1, 9, 40 } do
          local vals, first = {}, nil
          for i = 1, n do
            vals[i] = H.randint(0, 30)
            if first == nil and vals[i] % 7 == 3 then first = i end
          end
          local xs = lacc.fromtable(vals, "i64")
          local found = lacc.imap(function(i, x)
            return lacc.cond(lacc.eq(lacc.imod(x, 7), 3), lacc.Just(i), lacc.Nothing("i64"))
          end, xs)
          local firstJust = function(a, b)
            return lacc.match(a, { Just = function() return a end, Nothing = function() return b end })
          end
          local r = lacc.run(lacc.fold(firstJust, lacc.Nothing("i64"), found), opts):get()
          if first then
            assert.are.equal("Just", r.tag)
            assert.are.equal(first, H.num(r[1]))
          else
            assert.are.same({ tag = "Nothing" }, r)
          end
        end
      end)

      it("nested matches on Either (Maybe f64) (Maybe f64)", function()
        local T = lacc.Either(lacc.Maybe("f64"), lacc.Maybe("f64"))
        local vals = {
          { tag = "Left", { tag = "Just", 1.5 } }, { tag = "Left", { tag = "Nothing" } },
          { tag = "Right", { tag = "Just", -2 } }, { tag = "Right", { tag = "Nothing" } },
        }
        local r = lacc.run(lacc.map(function(e)
          return lacc.match(e, {
            Left = function(m)
              return lacc.match(m, { Just = function(x) return x + 100 end, Nothing = function() return 1 end })
            end,
            Right = function(m) return lacc.match(m, { Just = function(x) return x * 10 end, _ = function() return 2 end }) end,
          })
        end, lacc.fromtable(vals, T)), opts)
        H.check_array(r, { 101.5, 1, -20, 2 })
      end)

      it("structural variants by position, tuples in sums, sums in tuples", function()
        local V = lacc.variant { "f32", lacc.tuple("i32", "i32") }
        local v = lacc.fromtable({ { tag = 1, 2.5 }, { tag = 2, { 3, 4 } } }, V)
        local r = lacc.run(lacc.map(function(x)
          return lacc.match(x, { function(f) return f end,
                                 function(p) return lacc.cast(p[1] * p[2], "f32") end })
        end, v), opts)
        H.check_array(r, { 2.5, 12 })
        local pair = lacc.run(lacc.map(function(x)
          return lacc.tuple(x, lacc.match(x, { function() return lacc.constant(true, "bool") end,
                                               function() return lacc.constant(false, "bool") end }))
        end, v), opts)
        assert.are.same({ { tag = 1, 2.5 }, true }, pair[1])
        assert.are.same({ { tag = 2, { 3, 4 } }, false }, pair[2])
      end)

      it("bool matches as a two-constructor sum", function()
        local b = lacc.fromtable({ true, false, true }, "bool")
        local r = lacc.run(lacc.map(function(x)
          return lacc.match(x, { [true] = function() return lacc.constant(1, "i8") end,
                                 [false] = function() return lacc.constant(-1, "i8") end })
        end, b), opts)
        H.check_array(r, { 1, -1, 1 })
      end)
    end)
  end
end

describe("nested matches", function()
  local T = lacc.Either(lacc.Maybe("f64"), lacc.Maybe("f64"))
  local a = lacc.fromtable({ { tag = "Left", { tag = "Just", 1.5 } }, { tag = "Right", { tag = "Nothing" } } }, T)
  local function count(text, pat)
    local _, n = text:gsub(pat, "")
    return n
  end
  it("merge into one tag test per element when the inner value is only matched", function()
    local p = lacc.map(function(e)
      return lacc.match(e, {
        Left = function(m) return lacc.match(m, { Just = function(x) return x + 100 end, Nothing = function() return 1 end }) end,
        Right = function(m) return lacc.match(m, { Just = function(x) return x * 10 end, _ = function() return 2 end }) end,
      })
    end, a)
    local text = lacc.explain(p)
    assert.are.equal(1, count(text, "case "))
    assert.truthy(text:find("Left(Just x2)", 1, true))
    assert.truthy(text:find("Right(Nothing)", 1, true))
    H.check_array(lacc.run(p), { 101.5, 2 })
  end)
  it("stay separate when the inner value is also used otherwise", function()
    local p = lacc.map(function(e)
      return lacc.match(e, {
        Left = function(m)
          return lacc.match(m, { Just = function(x) return x end, _ = function() return 0 end })
            + lacc.match(m, { Just = function() return lacc.constant(1, "f64") end, _ = function() return 0 end })
        end,
        _ = function() return 7 end,
      })
    end, a)
    local text = lacc.explain(p)
    assert.are.equal(3, count(text, "case "))
    H.check_array(lacc.run(p), { 2.5, 7 })
  end)
end)

describe("match errors", function()
  local s = lacc.fromtable({ { tag = "Empty" } }, Shape)
  it("a non-exhaustive match names the missing constructors", function()
    local ok, err = pcall(lacc.map, function(x)
      return lacc.match(x, { Circle = function(r) return r end })
    end, s)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("non-exhaustive", 1, true))
    assert.truthy(tostring(err):find("Rect, Empty", 1, true))
    assert.truthy(tostring(err):find("sums_spec.lua", 1, true))
  end)
  it("an unknown constructor, alternatives of different types, wrong field counts", function()
    local ok, err = pcall(lacc.map, function(x)
      return lacc.match(x, { Square = function() return 1 end, _ = function() return 0 end })
    end, s)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("no constructor Square", 1, true))
    ok, err = pcall(lacc.map, function(x)
      return lacc.match(x, { Circle = function(r) return r end,
                             _ = function() return lacc.constant(1, "i32") end })
    end, s)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("f32", 1, true))
    ok, err = pcall(function() return Shape.Rect(lacc.constant(1, "f32")) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("Rect: expected 2 fields, got 1", 1, true))
    ok, err = pcall(function() return Shape.Circle(lacc.constant(1, "i32")) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("expected f32, got i32", 1, true))
  end)
end)
