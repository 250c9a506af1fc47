-- Tag encodings (issue 3, "Accelerating Sum Types" section 6.2): the same program on the same data stored
-- with bit-packed combined tags (`compact`, `rtu`: nested constructor numbers side by side
-- in bit fields, tested with masks) and with mixed-radix tags (`compact_radix`,
-- `rtu_radix`: the smallest number, tested with ranges after dividing out the other
-- components), plus `unboxed` (a tag per sum). Elements are pairs of a three-constructor
-- sum, so the mixed-radix tag is 3a + b: reading b takes a remainder by 3, reading a a
-- division, where the packed tag takes a mask and a shift.
-- Usage: tags.lua ROW LAYOUT N   (prints RESULT lines like the other rows)
local lacc = require "lacc"
local B = require "benchlib"
local row, layout, n = arg[1], arg[2], tonumber(arg[3])

local Shape = lacc.data("Shape", { { "Circle", "f32" }, { "Rect", "f32", "f32" }, { "Empty" } })

local function shape(k, salt)
  local r = lacc.cast((k * salt) % 1000, "f32") / 100
  local c = (k * 7 + salt) % 3
  return lacc.cond(lacc.eq(c, 0), Shape.Circle(r),
    lacc.cond(lacc.eq(c, 1), Shape.Rect(r, r + 1), Shape.Empty()))
end

local function area(s)
  return lacc.match(s, {
    Circle = function(r) return 3.14159265 * r * r end,
    Rect = function(w, h) return w * h end,
    Empty = function() return lacc.constant(0, "f32") end,
  })
end

-- The input is made untimed, stored in the layout under test.
local xs = lacc.run(lacc.generate({ n }, function(k) return lacc.tuple(shape(k, 13), shape(k, 31)) end),
                    { layout = layout })
assert(xs:layout() == layout, "input not in the layout under test")
local function prog(x)
  return lacc.sum(lacc.map(function(p) return area(p[1]) - area(p[2]) end, x))
end
local p = prog(xs)
local ms, reps, r = B.measure(function() return lacc.run(p) end, function(r) r:free() end)
local bits = lacc.layout(lacc.tuple(Shape, Shape), layout).bits
B.result("tags", row, ms, r:get(), reps, ("layout=%s %d bits/element"):format(layout, bits))
