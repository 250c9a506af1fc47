-- The catalogue of errors (issues 9 and 18): every misuse and every failure while running
-- is a Lua error whose message names what was misused or failed and what was wrong (the
-- combinator, the expected and actual types or ranks), at the user's file:line in this
-- file (never a place inside lacc's own files), and lacc keeps working afterwards on
-- every backend. Every function of the guide's Reference list is misused at least once
-- (the last test checks that).
--
-- One table of cases per part of the library: { name, case, fragments..., line = marker,
-- bare = {fragments}, every_backend = true, raises = value }. case() builds what is
-- tested; an array program it returns runs (on each backend where every_backend is set,
-- else on the interpreter). The message must hold every fragment (a function of the
-- backend gives one that depends on it), and the fragments of `bare` without its "(at
-- file:line)"; `line` names a "--@marker" comment of this file whose line the message
-- must give; `raises` is a value the error must be, unchanged.
-- A case that is a tail call (`function() return lacc.f(...) end`) gives the place of the
-- line that calls it (`local p = case(b)` below); one with a marker is not a tail call
-- (`local p = ... --@marker`, then `return p`), so the user's frame is still on the
-- stack when lacc looks for it.
-- What is not an error (float division by zero, the largest types and expressions) is
-- checked beside the errors it borders on, at the end.
local H = require "helper"
local lacc = H.lacc
local unpack = table.unpack or unpack

local PLACE = "catalogue_spec.lua:"

local line_of = H.line_of   -- the line of this file holding "--@name"

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

-- Run case c (building, then running what it built on backend b) and check the error.
local function check_fails(c, b)
  local name = c[1]
  local ok, err = pcall(function()
    local p = c[2](b) -- the place every message of a tail-called case gives
    if type(p) == "table" and not lacc.is_collection(p) and rawget(p, "rank") ~= nil then
      local r = lacc.run(p, { backend = b or "interp" })
      return r
    end
    return p
  end)
  assert.is_false(ok, name .. ": expected an error, got " .. tostring(err))
  if c.raises ~= nil then
    assert.are.equal(c.raises, err, name .. ": the error value changed")
    return err
  end
  err = tostring(err)
  local frags = { unpack(c, 3) }
  if c.line then frags[#frags + 1] = PLACE .. line_of(c.line) end
  for _, f in ipairs(frags) do
    if type(f) == "function" then f = f(b) end
    assert.is_truthy(err:find(f, 1, true), ("%s: message %q lacks %q"):format(name, err, f))
  end
  local bare = err:gsub("%(at [^)]*%)", "")
  for _, f in ipairs(c.bare or {}) do
    assert.is_truthy(bare:find(f, 1, true), ("%s: message %q lacks %q before its place"):format(name, err, f))
  end
  assert.is_falsy(err:find("lacc[/\\][%w_]+%.lua"), ("%s: %q points into lacc"):format(name, err))
  assert.is_falsy(err:find("stack overflow", 1, true), name .. ": " .. err)
  assert.is_truthy(err:find(PLACE, 1, true),
    ("%s: message %q does not give the user's place"):format(name, err))
  return err
end

local JIT = type(jit) == "table"
local covered = {}   -- lacc functions a case has misused

-- A table of cases (see the header); the first fragment names the lacc function misused.
local function catalogue(title, cases)
  describe(title, function()
    for _, c in ipairs(cases) do
      if type(c[3]) == "string" then
        covered[c[3]] = true
        local table_name = c[3]:match("^(%w+)%.")   -- random.uniform misuses lacc.random
        if table_name then covered[table_name] = true end
      end
      if c.every_backend then
        for _, b in ipairs(H.backends) do
          it(c[1] .. " on " .. b, function()
            check_fails(c, b)
            still_works()
          end)
        end
      else
        it(c[1], function()
          check_fails(c)
          still_works()
        end)
      end
    end
  end)
end

local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
local fs = lacc.fromtable({ 1, 2, 3 }, "f32")
local bs = lacc.fromtable({ true, false, true }, "bool")
local m = lacc.fromtable({ { 1, 2 }, { 3, 4 } }, "i32")
local m22 = lacc.fromtable({ { 1, 2 }, { 3, 4 } }, "f32")
local id = function(x) return x end
local add = function(a, b) return a + b end
local Shape = H.Shape
local shapes = lacc.generate({ 3 }, function(i)
  return lacc.cond(lacc.eq(i, 1), Shape.Circle(lacc.constant(1, "f32")), Shape.Empty())
end)
local function mapped(f, arr) return function() return lacc.map(f, arr or xs) end end
local ALL = true   -- every_backend
local error_object = { code = 42 }

-- The errors whose exact line matters: build-time errors in scalar functions and
-- combinators, and run-time errors given the place their program was built.
catalogue("at the user's line", {
  { "adding f32 to i32 inside a map lambda", function()
    local k = lacc.constant(1, "i32")
    local p = lacc.map(function(x)
      local y = x + k --@add
      return y
    end, fs)
    return p
  end, "add", "f32", "i32", line = "add" },
  { "mixing f32 and i32 in zipWith names the operation, both types and the line", function()
    local p = lacc.zipWith(function(a, b) return a + b end, fs, xs) --@addzip
    return p
  end, "add", "f32", "i32", line = "addzip" },
  { "zipWith of arrays of different ranks", function()
    local p = lacc.zipWith(function(a, b) return a + b end, fs, m22) --@rank
    return p
  end, "zipWith", "rank", line = "rank", bare = { "1", "2" } },
  { "fold with a function returning bool", function()
    local p = lacc.fold(function(a, b) return lacc.lt(a, b) end, 0, fs) --@fold
    return p
  end, "fold", "f32", "bool", line = "fold" },
  { "fold with a function returning another number type", function()
    local p = lacc.fold(function(a, b) return (a + b):cast("i32") end, 0, fs) --@fold2
    return p
  end, "fold", "f32", "i32", line = "fold2" },
  { "fold with a start value of the wrong type", function()
    local p = lacc.fold(function(a, b) return a + b end, true, fs) --@foldz
    return p
  end, "fold", "f32", "boolean", line = "foldz" },
  -- (the combinators below find their call's place once, for every node they make but
  -- those of the user's function, which take the function's own lines)
  { "adding i32 to f32 on a later line of a stencil's function", function()
    local p = lacc.stencil(function(a, b, c)
      local s = a + b + c
      return s + lacc.constant(1, "i32") --@stenciladd
    end, "clamp", fs)
    return p
  end, "add", "f32", "i32", line = "stenciladd" },
  { "a stencil of a rank-0 array", function()
    local p = lacc.stencil(function(a) return a end, "clamp", lacc.unit(lacc.constant(1, "f32"))) --@stencil0
    return p
  end, "stencil", "rank 0", line = "stencil0" },
  { "a scan with a function returning bool", function()
    local p = lacc.scanl(function(a, b) --@scanbool
      return lacc.lt(a, b)
    end, 0, fs)
    return p
  end, "scanl", "f32", "bool", line = "scanbool" },
  { "a scan's start value of the wrong type", function()
    local p = lacc.scanr(function(a, b) return a + b end, true, fs) --@scanz
    return p
  end, "scanr", "f32", "boolean", line = "scanz" },
  { "a map whose function returns a string", function()
    local p = lacc.map(function() --@mapstr
      return "seven"
    end, fs)
    return p
  end, "map", "string", line = "mapstr" },
  { "map with a number for f", function()
    local p = lacc.map(42, fs) --@nonfn
    return p
  end, "map", "expected a function", "number", line = "nonfn" },
  { "map with nil for f", function()
    local p = lacc.map(nil, fs) --@nilfn
    return p
  end, "map", "function", "nil", line = "nilfn" },
  { "map over a number instead of an array", function()
    local p = lacc.map(function(x) return x end, 7) --@nonarr
    return p
  end, "map", "expected an array", "number", line = "nonarr" },
  { "a lambda that returns nothing", function()
    local p = lacc.map(function() end, fs) --@nothing
    return p
  end, "map", "returned nothing", line = "nothing" },
  { "a lambda that raises a Lua error: the error propagates", function()
    local p = lacc.map(function(x)
      error("boom from user") --@boom
    end, fs)
    return p
  end, "boom from user", line = "boom" },
  { "comparison operators point to lacc.eq and friends", function()
    -- (LuaJIT calls __lt only when both operands are tables, so compare two values)
    local p = lacc.map(function(x) return x < x end, fs) --@lt
    return p
  end, "lacc.lt", line = "lt" },
  { "an integer constant that cannot hold 0.5", function()
    local p = lacc.map(function(x) return x + 0.5 end, xs) --@half
    return p
  end, "0.5", "i32", line = "half" },
  { "lacc.constant with an unknown type", function()
    local c = lacc.constant(1, "f16") --@const
    return c
  end, "constant", "f16", line = "const" },
  { "an array of an unknown element type", function()
    local a = lacc.array("quux", { 2 }) --@quux
    return a
  end, "quux", line = "quux" },
  { "fromtable with a ragged table", function()
    local a = lacc.fromtable({ { 1, 2 }, { 3 } }, "f64") --@ragged
    return a
  end, "fromtable", "ragged", line = "ragged" },
  { "fromtable with a ragged table of rank 3", function()
    local a = lacc.fromtable({ { { 1 }, { 2 } }, { { 3 }, { 4, 5 } } }, "i32") --@ragged3
    return a
  end, "fromtable", "ragged", line = "ragged3" },
  { "host indices out of range", function()
    local v = fs:get(4) --@get4
    return v
  end, "out of bounds", line = "get4" },
  { "host indices past the rank", function()
    local v = fs:get(1, 1) --@get11
    return v
  end, "rank 1", line = "get11" },
  { "an unknown backend", function()
    local r = lacc.run(lacc.use(fs), { backend = "tpu" }) --@backend
    return r
  end, "run", "unknown backend", "tpu", line = "backend" },
  { "a backend that is not a string (the same message on both VMs)", function()
    local r = lacc.run(lacc.use(fs), { backend = 5 }) --@backend5
    return r
  end, "run", "unknown backend", "5", line = "backend5" },
  { "a non-string error value propagates as itself", function()
    local p = lacc.map(function() error(error_object) end, fs)
    return p
  end, raises = error_object },

  { "fold1 of an empty array", function()
    local p = lacc.fold1(function(x, y) return x + y end, lacc.array("f64", { 0 })) --@fold1
    return p
  end, "fold1", "empty", line = "fold1", every_backend = ALL },
  { "maximum of an empty array", function()
    local p = lacc.maximum(lacc.array("f64", { 0 })) --@maximum
    return p
  end, "fold1", "empty", line = "maximum", every_backend = ALL },
  { "reshape to a different size", function()
    local p = lacc.reshape({ 2, 2 }, fs) --@reshape
    return p
  end, "reshape", "3", "4", line = "reshape", bare = { "3", "4" }, every_backend = ALL },
  { "out-of-bounds xs[i] inside a lambda", function()
    local p = lacc.generate({ 4 }, function(i) return fs[i] end) --@oob
    return p
  end, "out of bounds", "(4)", "4", "3", line = "oob", every_backend = ALL },
  { "out-of-bounds xs[i] on a later line of a generate's function", function()
    local p = lacc.generate({ 4 }, function(i)
      local j = i * 1
      return fs[j] --@oobgen
    end)
    return p
  end, "out of bounds", "(4)", line = "oobgen", every_backend = ALL },
  { "out-of-bounds xs[i] on a later line of a filter's predicate", function()
    local p = lacc.filter(function(x)
      local j = lacc.cast(x, "i64") + 10
      return lacc.gt(fs[j], 0) --@oobfilter
    end, xs)
    return p
  end, "out of bounds", line = "oobfilter", every_backend = ALL },
  { "idiv by zero in a filter's predicate", function()
    return lacc.filter(function(x) return lacc.gt(lacc.idiv(10, x - 2), 0) end, xs) --@idivfilter
  end, "division by zero", "idiv", line = "idivfilter", every_backend = ALL },
  { "out-of-bounds xs[i] below the start", function()
    local p = lacc.generate({ 3 }, function(i) return fs[i - 3] end) --@oobneg
    return p
  end, "out of bounds", line = "oobneg", every_backend = ALL },
  { "out-of-bounds m:at(j, i) of rank 2", function()
    local p = lacc.generate({ 2, 2 }, function(i, j) return m22:at(j, i + 1) end) --@oob2
    return p
  end, "out of bounds", line = "oob2", every_backend = ALL },
  { "idiv by zero", function()
    local p = lacc.map(function(x) return lacc.idiv(10, x - 2) end, xs) --@idiv0
    return p
  end, "division by zero", "idiv", line = "idiv0", every_backend = ALL },
  { "% by zero", function()
    local p = lacc.map(function(x) return x % (x - 2) end, xs) --@mod0
    return p
  end, "division by zero", "mod", line = "mod0", every_backend = ALL },
  { "quot by zero", function()
    local p = lacc.map(function(x) return lacc.quot(10, x - 2) end, xs) --@quot0
    return p
  end, "division by zero", "quot", line = "quot0", every_backend = ALL },
  { "rem by zero", function()
    local p = lacc.map(function(x) return lacc.rem(10, x - 2) end, xs) --@rem0
    return p
  end, "division by zero", "rem", line = "rem0", every_backend = ALL },
  { "ipow of zero to a negative power", function()
    local p = lacc.map(function(x) return lacc.ipow(x - 2, 1 - x) end, xs) --@ipow0
    return p
  end, "division by zero", "ipow", line = "ipow0", every_backend = ALL },
  { "idiv by a zero element", function()
    return lacc.map(function(x) return lacc.idiv(10, x) end, lacc.fromtable({ 1, 0, 2 }, "i32"))
  end, "division by zero", every_backend = ALL },
  { "imod by a zero constant", function()
    return lacc.map(function(x) return lacc.imod(x, 0) end, lacc.fromtable({ 1, 0, 2 }, "i32"))
  end, "division by zero", every_backend = ALL },
  { "a negative extent in generate", function()
    local p = lacc.generate({ -1 }, function(i) return i end) --@neg
    return p
  end, "generate", "negative extent", line = "neg", bare = { "-1" }, every_backend = ALL },
  { "a negative extent of rank 2 in generate", function()
    local p = lacc.generate({ 2, -3 }, function(i, j) return i + j end) --@neg2
    return p
  end, "generate", "negative", "-3", line = "neg2", every_backend = ALL },
  { "an absurdly large array", function()
    return lacc.fill({ 2 ^ 30, 2 ^ 30 }, lacc.constant(1, "u8"))
  end, "too large", every_backend = ALL },
})

-- Arrays after a:free(): refused by name, at the line that used them.
local function freed_after_use()
  local a = lacc.fromtable({ 1, 2 }, "f64")
  H.check_array(lacc.run(lacc.map(function(x) return x * 3 end, a)), { 3, 6 })
  a:free()
  return a
end
catalogue("using an array after a:free()", {
  { "a:get", function()
    local a = freed_after_use()
    local v = a:get(1) --@freeget
    return v
  end, "after free", line = "freeget" },
  { "map over it and run", function()
    local b = lacc.fromtable({ 1, 2 }, "f64")
    b:free()
    local p = lacc.map(function(x) return x end, b) --@freemap
    local r = lacc.run(p)
    return r
  end, "after free", line = "freemap" },
  { "a:totable", function()
    local a = freed_after_use()
    local t = a:totable() --@freetotable
    return t
  end, "after free", line = "freetotable" },
})

catalogue("types and constructors", {
  { "limits written", function() lacc.limits.rank = 9 end, "limits", "read-only" },
  { "version written", function() lacc.version.major = 9 end, "version", "read-only" },
  { "tuple of an array", mapped(function(x) return lacc.tuple(x, xs) end), "tuple", "host array" },
  { "data without a name", function() return lacc.data(5, { { "A" } }) end, "data", "type name" },
  { "data without constructors", function() return lacc.data("E", {}) end, "data",
    "list of constructors" },
  { "data with a constructor twice", function() return lacc.data("D", { { "A" }, { "A" } }) end,
    "data", "appears twice" },
  { "data that refers to itself", function()
    return lacc.data("List", { { "Nil" }, { "Cons", "i32", "List" } })
  end, "data", "recursive types are not supported" },
  { "data with a field that is no type", function() return lacc.data("D", { { "A", "q" } }) end,
    "data", "q" },
  { "variant of a number", function() return lacc.variant(3) end, "variant", "member types" },
  { "variant member out of range", mapped(function(x)
    return lacc.variant { "i32", "f32" }[3](x)
  end), "variant", "no member 3" },
  { "variant member of the wrong type", mapped(function(x)
    return lacc.variant { "i32", "f32" }[2](x)
  end), "variant member 2", "expected f32, got i32" },
  { "constructor with too few fields", mapped(function(x)
    return Shape.Rect(lacc.cast(x, "f32"))
  end), "Rect", "expected 2 fields, got 1" },
  { "constructor with a field of the wrong type", mapped(function(x) return Shape.Circle(x) end),
    "Circle", "expected f32, got i32" },
  { "a constructor the type lacks", mapped(function(x) return Shape.Square(x) end), "Shape",
    "no constructor Square" },
  { "Maybe of no type", function() return lacc.Maybe("q") end, "Maybe", "not an element type" },
  { "Either of a number", mapped(function(x) return lacc.Either("i32", 5).Left(x) end), "Either",
    "expected an element type, got number" },
  { "Just of an array", mapped(function() return lacc.Just(xs) end), "Just", "host array" },
  { "Just of nothing", mapped(function() return lacc.Just() end), "Just", "got nil" },
  { "Nothing without a type", mapped(function() return lacc.Nothing() end), "Nothing",
    "expected an element type, got nil" },
  { "Left with no type for Right", mapped(function(x) return lacc.Left(x, "q") end), "Left",
    "not an element type" },
  { "Right with no type for Left", mapped(function(x) return lacc.Right("q", x) end), "Right",
    "not an element type" },
  { "layout of no type", function() return lacc.layout("q") end, "layout", "q" },
  { "layout with an unknown strategy", function() return lacc.layout("i32", "weird") end,
    "layout", "unknown layout 'weird'" },
  { "set_layout to an unknown strategy", function() return lacc.set_layout("weird") end,
    "set_layout", "unknown layout" },
})

catalogue("host arrays", {
  { "array of no type", function() return lacc.array("q", { 3 }) end, "array",
    "not an element type: 'q'" },
  { "array with a string shape", function() return lacc.array("i32", "x") end, "array",
    "shape table" },
  { "array with a fractional extent", function() return lacc.array("i32", { 1.5 }) end, "array",
    "not an integer (got 1.5)" },
  { "array with a NaN extent", function() return lacc.array("i32", { 0 / 0 }) end, "array",
    "not an integer (got nan)" },
  { "array with a negative extent", function() return lacc.array("i32", { 2, -1 }) end, "array",
    "negative extent -1" },
  { "array of rank 9", function() return lacc.array("i32", { 1, 1, 1, 1, 1, 1, 1, 1, 1 }) end,
    "array", "rank 9" },
  { "array past 2^40 elements", function() return lacc.array("u8", { 2 ^ 21, 2 ^ 20 }) end,
    "array", "too large (more than 2^40 elements)" },
  { "fromtable of a string", function() return lacc.fromtable("abc", "i32") end, "fromtable",
    "string" },
  { "fromtable of a ragged table", function() return lacc.fromtable({ { 1, 2 }, { 3 } }, "i32") end,
    "fromtable", "ragged" },
  { "fromtable with a string element", function() return lacc.fromtable({ 1, "a" }, "i32") end,
    "fromtable", "expected an integer for i32, got string" },
  { "fromtable with a fraction for i32", function() return lacc.fromtable({ 1.5 }, "i32") end,
    "fromtable", "i32" },
  { "fromtable with a hole", function() return lacc.fromtable({ 1, nil, 3 }, "f64") end,
    "fromtable", "a hole (nil) at position 2" },
  { "fromtable with a hole in a row", function()
    local row = { 1, 2 }
    row[4] = 4
    return lacc.fromtable({ { 5, 6, 7, 8 }, row }, "i32")
  end, "fromtable", "dimension 2" },
  { "frombytes of a table", function() return lacc.frombytes({ 1, 2 }, "u8") end, "frombytes",
    "expected a string, got table" },
  { "frombytes with a size that is no whole element", function()
    return lacc.frombytes("abcde", "i32")
  end, "frombytes", "5 bytes are not a whole number of i32 elements (4 bytes each)" },
  { "frombytes with a shape that does not match", function()
    return lacc.frombytes("abcdefgh", "i32", { 3 })
  end, "frombytes", "3 elements of i32 take 12 bytes, the string has 8" },
  { "frombytes of a sum type", function() return lacc.frombytes("ab", lacc.Maybe("u8")) end,
    "frombytes", "sum type" },
  { "frombytes with a bad type", function() return lacc.frombytes("ab", "u9") end, "frombytes",
    "u9" },
  { "frombytes with a negative extent", function() return lacc.frombytes("", "u8", { -1 }) end,
    "frombytes", "negative extent" },
  { "config of a number", function() return lacc.config(5) end, "config",
    "expected a table of settings" },
  { "config of an unknown setting", function() return lacc.config { thread = 2 } end, "config",
    "unknown setting thread" },
  { "config with a bad value", function() return lacc.config { cache_mb = "lots" } end, "config",
    "cache_mb: expected a number from 0" },
  { "config with an unknown tier", function() return lacc.config { tier = "fastest" } end,
    "config", 'tier: expected "auto", "fast" or "opt", got fastest' },
  { "set_int64 of an unknown mode", function() return lacc.set_int64("bits") end, "set_int64",
    'expected "number" or "cdata", got "bits"' },
  { "load of a number", function() return lacc.load(5) end, "load", "expected a file name" },
  { "load of a missing file", function() return lacc.load("/nonexistent/x.npy") end, "load",
    "cannot open /nonexistent/x.npy" },
  { "read_png of a table", function() return lacc.read_png({}) end, "read_png",
    "expected a file name" },
  { "read_png of a missing file", function() return lacc.read_png("/nonexistent/x.png") end,
    "read_png", "cannot open" },
  { "save without a file name", function() return xs:save() end, "save", "expected a file name" },
  { "fromptr of a string", function() return lacc.fromptr("abc", "u8", { 3 }) end, "fromptr",
    JIT and "expected an FFI pointer" or "needs LuaJIT's FFI" },
  { "tobytes of a sum type", function()
    return lacc.fromtable({ { tag = "Nothing" } }, lacc.Maybe("i32")):tobytes()
  end, "tobytes", "sum type" },
  { "ptr of a tuple array", function()
    return lacc.fromtable({ { 1, 2 } }, lacc.tuple("i32", "i32")):ptr()
  end, "ptr", JIT and "one buffer per field" or "needs LuaJIT's FFI" },
  { "write_png of a number", function() return lacc.write_png("/tmp/lacc-never.png", 3) end,
    "write_png", "got number" },
  { "write_png without a file name", function() return lacc.write_png(5, xs) end, "write_png",
    "file name" },
  { "write_png of a rank-1 array", function() return xs:write_png("/tmp/lacc-never.png") end,
    "write_png", "rank" },
  { "get out of bounds", function() return xs:get(4) end, "get", "out of bounds" },
  { "get with too many indices", function() return xs:get(1, 1) end, "get", "1" },
  { "get with a string index", function() return xs:get("a") end, "get", "not an integer" },
  { "set of a string", function() return xs:set(1, "a") end, "set",
    "expected an integer for i32, got string" },
  { "set out of bounds", function() return xs:set(0, 1) end, "set", "out of bounds" },
  { "at_linear out of range", function() return xs:at_linear(3) end, "at_linear", "0..2" },
})

catalogue("introduction", {
  { "use of a number", function() return lacc.use(3) end, "use", "expected a host array, got number" },
  { "use of nothing", function() return lacc.use() end, "use", "got nil" },
  { "unit of a table", function() return lacc.unit({}) end, "unit", "got table" },
  { "unit of an array", function() return lacc.unit(xs) end, "unit", "host array",
    "cannot run inside a scalar function" },
  { "unit of a plain number", function() return lacc.unit(1) end, "unit", "lacc.constant" },
  { "generate with a string shape", function() return lacc.generate("a", id) end, "generate",
    "shape" },
  { "generate with a number for f", function() return lacc.generate({ 3 }, 5) end, "generate",
    "expected a function, got number" },
  { "generate of rank 9", function()
    return lacc.generate({ 1, 1, 1, 1, 1, 1, 1, 1, 1 }, function() return 1 end)
  end, "generate", "rank 9 is out of range" },
  { "fill without a value", function() return lacc.fill({ 3 }) end, "fill", "got nil" },
  { "fill with a plain number", function() return lacc.fill({ 3 }, 1) end, "fill",
    "lacc.constant" },
})

catalogue("element-wise", {
  { "map with nil for f", function() return lacc.map(nil, xs) end, "map",
    "expected a function, got nil" },
  { "map over nothing", function() return lacc.map(id) end, "map", "expected an array, got nil" },
  { "map over a Lua table", function() return lacc.map(id, { 1, 2 }) end, "map",
    "expected an array, got table" },
  { "imap with a string for f", function() return lacc.imap("f", xs) end, "imap",
    "expected a function, got string" },
  { "imap over a number", function() return lacc.imap(id, 4) end, "imap", "got number" },
  { "zipWith of one array", function() return lacc.zipWith(add, xs) end, "zipWith",
    "two arrays or more, got 1" },
  { "zipWith with a number", function() return lacc.zipWith(add, xs, 3) end, "zipWith",
    "expected an array, got number" },
  { "zipWith of two element types", function() return lacc.zipWith(add, xs, fs) end, "add",
    "i32", "f32" },
  { "zipWith of two ranks", function() return lacc.zipWith(add, xs, m) end, "zipWith", "rank" },
  { "zipWith3 of two arrays", function() return lacc.zipWith3(add, xs, xs) end, "zipWith3",
    "expected 3 arrays, got 2" },
  { "zipWith4 with a non-function", function() return lacc.zipWith4(1, xs, xs, xs, xs) end,
    "zipWith4", "expected a function" },
  { "zipWith5 of four arrays", function() return lacc.zipWith5(add, xs, xs, xs, xs) end,
    "zipWith5", "expected 5 arrays, got 4" },
  { "zipWith6 with a table", function() return lacc.zipWith6(add, xs, xs, xs, xs, xs, {}) end,
    "zipWith6", "got table" },
  { "zipWith7 of one array", function() return lacc.zipWith7(add, xs) end, "zipWith7",
    "expected 7 arrays, got 1" },
  { "zipWith8 with nil for f", function()
    return lacc.zipWith8(nil, xs, xs, xs, xs, xs, xs, xs, xs)
  end, "zipWith8", "expected a function, got nil" },
  { "zipWith9 of nothing", function() return lacc.zipWith9(add) end, "zipWith9",
    "expected 9 arrays, got 0" },
  { "zip of nothing", function() return lacc.zip() end, "zip", "at least one array" },
  { "zip with a number", function() return lacc.zip(xs, 1) end, "zip",
    "expected an array, got number" },
  { "unzip of scalars", function() return lacc.unzip(xs) end, "unzip",
    "array of tuples, got i32" },
})

catalogue("reductions", {
  { "fold without a start value", function() return lacc.fold(add, nil, xs) end, "fold", "got nil" },
  { "fold with a number for f", function() return lacc.fold(1, 0, xs) end, "fold",
    "expected a function, got number" },
  { "fold with a fractional start for i32", function() return lacc.fold(add, 0.5, xs) end, "fold",
    "0.5 is not a value of i32" },
  { "fold with f returning two values", function()
    return lacc.fold(function(a, b) return a, b end, 0, xs)
  end, "fold", "expected i32, got (i32,i32)" },
  { "fold1 over nothing", function() return lacc.fold1(add) end, "fold1", "got nil" },
  { "sum of a number", function() return lacc.sum(3) end, "sum", "expected an array, got number" },
  { "sum of tuples", function() return lacc.sum(lacc.zip(xs, xs)) end, "sum",
    "array of numbers, got (i32,i32)" },
  { "product of booleans", function() return lacc.product(bs) end, "product",
    "array of numbers, got bool" },
  { "matmul of a number", function() return lacc.matmul(3, xs) end, "matmul",
    "expected an array, got number" },
  { "matmul of two vectors", function() return lacc.matmul(xs, xs) end, "matmul",
    "expected ranks 2 and 2, 3 and 3, 2 and 1 or 1 and 2, got 1 and 1" },
  { "matmul of booleans", function() return lacc.matmul(bs, bs) end, "matmul",
    "expected arrays of numbers, got bool" },
  { "matmul of i32 and f32", function() return lacc.matmul(xs, fs) end, "matmul",
    "element types differ (i32 and f32)" },
  { "maximum of nothing", function() return lacc.maximum() end, "maximum", "got nil" },
  { "minimum of sums", function() return lacc.minimum(shapes) end, "minimum", "numbers" },
  { "and_ of integers", function() return lacc.and_(xs) end, "and_", "array of bool, got i32" },
  { "or_ of floats", function() return lacc.or_(fs) end, "or_", "array of bool, got f32" },
  { "all with a non-predicate", function() return lacc.all(id, xs) end, "all",
    "predicate must return bool, got i32" },
  { "any with nil", function() return lacc.any(nil, xs) end, "any", "expected a function, got nil" },
  { "foldSeg with float segments", function() return lacc.foldSeg(add, 0, xs, fs) end, "foldSeg",
    "segment lengths", "f32" },
  { "foldSeg without segments", function() return lacc.foldSeg(add, 0, xs) end, "foldSeg",
    "got nil" },
  { "fold1Seg with rank-2 segments", function() return lacc.fold1Seg(add, xs, m) end, "fold1Seg",
    "rank 2" },
})

catalogue("scans", {
  { "scanl over nothing", function() return lacc.scanl(add, 0) end, "scanl", "got nil" },
  { "scanl1 with a number for f", function() return lacc.scanl1(3, xs) end, "scanl1",
    "expected a function" },
  { "scanr with a fractional start", function() return lacc.scanr(add, 1.5, xs) end, "scanr",
    "1.5 is not a value of i32" },
  { "scanr1 of a number", function() return lacc.scanr1(add, 4) end, "scanr1", "got number" },
  { "scanl_ over nothing", function() return lacc.scanl_(add, 0) end, "scanl_", "got nil" },
  { "scanr_ of rank 0", function() return lacc.scanr_(add, 0, lacc.unit(lacc.constant(1, "i32"))) end,
    "scanr_", "rank 1 or more, got rank 0" },
  { "scanl with f of the wrong type", function()
    return lacc.scanl(function(a) return lacc.cast(a, "f32") end, 0, xs)
  end, "scanl", "expected i32, got f32" },
  { "scanlSeg with float segments", function() return lacc.scanlSeg(add, 0, xs, fs) end,
    "scanlSeg", "segment lengths" },
  { "scanl1Seg without segments", function() return lacc.scanl1Seg(add, xs) end, "scanl1Seg",
    "got nil" },
  { "scanlSeg_ with float segments", function() return lacc.scanlSeg_(add, 0, xs, fs) end,
    "scanlSeg_", "segment lengths" },
  { "scanrSeg_ of rank 0", function()
    return lacc.scanrSeg_(add, 0, lacc.unit(lacc.constant(1, "i32")), xs)
  end, "scanrSeg_", "rank 1 or more, got rank 0" },
  { "scanlSeg_ with a number for f", function() return lacc.scanlSeg_(1, 0, xs, xs) end,
    "scanlSeg_", "expected a function" },
  { "filter with an unknown option", function()
    return lacc.filter(function(x) return lacc.gt(x, 1) end, xs, { per_rows = true })
  end, "filter", "unknown option per_rows" },
  { "filter with per_row not a boolean", function()
    return lacc.filter(function(x) return lacc.gt(x, 1) end, xs, { per_row = 1 })
  end, "filter", "per_row must be a boolean" },
  { "scanrSeg without segments", function() return lacc.scanrSeg(add, 0, xs) end, "scanrSeg",
    "got nil" },
  { "scanr1Seg with a table for segments", function() return lacc.scanr1Seg(add, xs, { 1, 2 }) end,
    "scanr1Seg", "got table" },
})

catalogue("permutations and shapes", {
  { "backpermute with a string shape", function() return lacc.backpermute("x", id, xs) end,
    "backpermute", "shape" },
  { "backpermute with a number for f", function() return lacc.backpermute({ 3 }, 2, xs) end,
    "backpermute", "expected a function" },
  { "backpermute returning two indices into rank 1", function()
    return lacc.backpermute({ 3 }, function(i) return i, i end, xs)
  end, "backpermute", "must return 1 indices, got 2" },
  { "backpermute returning a float index", function()
    return lacc.backpermute({ 3 }, function(i) return lacc.cast(i, "f32") end, xs)
  end, "backpermute", "f32" },
  { "permute without defaults", function() return lacc.permute(add, nil, id, xs) end, "permute",
    "expected an array, got nil" },
  { "permute with a number for the index function", function()
    return lacc.permute(add, xs, 3, xs)
  end, "permute", "expected a function" },
  { "permute with a number for combine", function() return lacc.permute(5, xs, id, xs) end,
    "permute", "expected a function" },
  { "permute of two element types", function() return lacc.permute(add, fs, id, xs) end,
    "permute", "f32", "i32" },
  { "reshape to a string", function() return lacc.reshape("3", xs) end, "reshape", "shape" },
  { "reshape to a negative extent", function() return lacc.reshape({ -3 }, xs) end, "reshape",
    "negative extent -3" },
  { "reshape to another size", function() return lacc.reshape({ 2, 2 }, xs) end, "reshape", "3",
    "4" },
  { "flatten of a number", function() return lacc.flatten(5) end, "flatten", "got number" },
  { "replicate with a number spec", function() return lacc.replicate(5, xs) end, "replicate",
    "table spec, got number" },
  { "slice with a number spec", function() return lacc.slice(xs, 5) end, "slice", "spec" },
  { "slice with a spec too long", function() return lacc.slice(xs, { 1, 2, 3 }) end, "slice",
    "spec of 1 entries" },
  { "slice with a step of 0", function() return lacc.slice(xs, { { 1, 3, 0 } }) end, "slice",
    "the step of a range cannot be 0" },
  { "slice with a range of text", function() return lacc.slice(xs, { { "a", 3 } }) end, "slice",
    "a range is {from, to [, step]} of integers" },
  { "slice past the end", function() return lacc.slice(xs, { { 2, 4 } }) end, "out of bounds",
    every_backend = true },
  { "take of a fraction", function() return lacc.take(1.5, xs) end, "take", "integer count" },
  { "drop from rank 0", function() return lacc.drop(1, lacc.unit(lacc.constant(1, "i32"))) end,
    "drop", "rank 1 or more" },
  { "iota of a negative count", function() return lacc.iota(-1) end, "iota", "count" },
  { "iota of bools", function() return lacc.iota(3, "bool") end, "iota", "numeric element type" },
  { "zeros of a negative extent", function() return lacc.zeros({ 2, -1 }) end, "zeros",
    "extent 2 of the shape" },
  { "ones of text", function() return lacc.ones("3") end, "ones", "expected a shape" },
  { "full with a table", function() return lacc.full(3, {}) end, "full", "number or a boolean" },
  { "full of a fraction as integers", function() return lacc.full(3, 1.5, "i32") end, "full",
    "1.5 is not a value of i32" },
  { "arange with a step of 0", function() return lacc.arange(0, 5, 0) end, "arange",
    "step must not be 0" },
  { "arange of fractions as integers", function() return lacc.arange(0, 1, 0.25, "i32") end,
    "arange", "whole-number bounds" },
  { "linspace of a negative count", function() return lacc.linspace(0, 1, -2) end, "linspace",
    "count" },
  { "linspace of integers", function() return lacc.linspace(0, 1, 3, "i32") end, "linspace",
    "f32 or f64" },
  { "eye of a fraction", function() return lacc.eye(2.5) end, "eye", "extents" },
  { "shapes that do not broadcast", function()
      return lacc.fromtable({ 1, 2, 3 }, "f32") + lacc.fromtable({ 1, 2 }, "f32") end, "add",
    "the shapes {3} and {2} do not broadcast" },
  { "arithmetic on a bool array", function()
      return lacc.fromtable({ true }, "bool") * lacc.fromtable({ 2 }, "i32") end, "mul",
    "bool", "cast it first" },
  { "u64 meets a signed array", function()
      return lacc.fromtable({ 1 }, "u64") - lacc.fromtable({ 2 }, "i64") end, "sub",
    "no common integer type" },
  { "a mean of tuples", function()
      return lacc.zip(lacc.fromtable({ 1 }, "f32"), lacc.fromtable({ 1 }, "f32")):mean() end,
    "mean", "numbers" },
  { "a sum along a dimension past the rank", function()
      return lacc.fromtable({ 1, 2 }, "f32"):sum(3) end, "sum", "from 1 to 1" },
  { "gather with float indices", function()
      return lacc.gather(lacc.fromtable({ 1.5 }, "f32"), xs) end, "gather", "integers", "f32" },
  { "gather past the end", function() return lacc.gather(lacc.fromtable({ 4 }, "i32"), xs) end,
    "out of bounds", every_backend = true },
  { "scatter with indices of another rank", function()
      return lacc.scatter(xs, lacc.fromtable({ { 1 } }, "i32"), xs) end, "scatter", "rank" },
  { "scatter past the end", function()
      return lacc.scatter(xs, lacc.fromtable({ 1, 2, 9 }, "i32"), xs) end, "out of bounds",
    every_backend = true },
  { "where with a mask of numbers", function() return lacc.where(xs, xs, 0) end, "where",
    "mask of bool", "i32" },
  { "argmax of bools", function()
      return lacc.argmax(lacc.fromtable({ true }, "bool")) end, "argmax", "numbers", "bool" },
  { "argmin along dimension 2 of rank 1", function() return lacc.argmin(xs, 2) end, "argmin",
    "from 1 to 1" },
  { "argmax of nothing", function() return lacc.argmax(lacc.fromtable({}, "i32")) end,
    "empty", every_backend = true },
  { "sum along dimension 0", function() return lacc.sum(xs, 0) end, "sum", "dimension" },
  { "fold with an unknown option", function()
      return lacc.fold(function(a, b) return a + b end, 0, xs, { axis = 1 }) end, "fold",
    "unknown option 'axis'" },
  { "random.uniform of i32", function() return lacc.random.uniform({ 3 }, 1, "i32") end,
    "random.uniform", "f32 or f64" },
  { "random.normal with a float seed", function() return lacc.random.normal({ 3 }, 1.5) end,
    "random.normal", "integer seed" },
  { "random.integers with hi below lo", function() return lacc.random.integers({ 3 }, 1, 5, 2) end,
    "random.integers", "below lo" },
  { "random.at with a string counter", function()
      return lacc.map(function(x) return lacc.random.at(1, "c")[1] + x end,
                      lacc.fromtable({ 1 }, "u32")) end, "random.at", "integer counter" },
  { "sort of rank 0", function() return lacc.sort(lacc.unit(lacc.constant(1, "i32"))) end,
    "sort", "rank 1 or more" },
  { "sort with an unknown option", function() return lacc.sort(xs, { reverse = true }) end,
    "sort", "unknown option 'reverse'" },
  { "argsort of a sum type", function()
      return lacc.argsort(lacc.fromtable({ { tag = "Nothing" } }, lacc.Maybe("i32"))) end,
    "argsort", "keys must be numbers" },
  { "argsort by a number", function() return lacc.argsort(xs, { by = 3 }) end, "argsort",
    "by must be a function" },
  { "sort_by_key with values of another rank", function()
      return lacc.sort_by_key(xs, lacc.fromtable({ { 1 } }, "i32")) end, "sort_by_key",
    "differ in rank" },
  { "transpose of rank 1", function() return lacc.transpose(xs) end, "transpose",
    "rank 2, got rank 1" },
  { "reverse of a number", function() return lacc.reverse(2) end, "reverse", "got number" },
  { "rotate by a string", function() return lacc.rotate("a", xs) end, "rotate",
    "integer amount", "string" },
  { "shape of a number", function() return lacc.shape(2) end, "shape", "got number" },
  { "size of nothing", function() return lacc.size() end, "size", "got nil" },
  { "index with too many indices", function() return lacc.index(xs, 1, 2) end, "index",
    "expected 1 indices for an array of rank 1, got 2" },
  { "index with a string", function() return lacc.index(xs, "a") end, "index", "got string" },
  { "index with a fraction", mapped(function() return xs[1.5] end), "get", "not an integer" },
  { "index with a float expression", mapped(function(x) return xs[lacc.cast(x, "f32")] end),
    "index", "must be an integer, got f32" },
  { "the of rank 1", function() return lacc.the(xs) end, "the", "rank 0, got rank 1" },
})

catalogue("push arrays and stencils", {
  { "append of two element types", function() return lacc.append(xs, fs) end, "append",
    "expected i32, got f32" },
  { "append of a number", function() return lacc.append(xs, 3) end, "append", "got number" },
  { "interleave of two ranks", function() return lacc.interleave(xs, m) end, "interleave",
    "ranks 1 and 2" },
  { "concat of a number", function() return lacc.concat(3) end, "concat", "non-empty table" },
  { "concat of nothing", function() return lacc.concat({}) end, "concat", "non-empty table" },
  { "stencil with a number for f", function() return lacc.stencil(3, "clamp", xs) end, "stencil",
    "expected a function" },
  { "stencil with a string window", function() return lacc.stencil(id, "clamp", xs, "x") end,
    "stencil", "window" },
  { "stencil with an unknown boundary", function() return lacc.stencil(id, "bounce", xs) end,
    "stencil", "bounce" },
  { "stencil2 without its second array", function() return lacc.stencil2(add, "clamp", xs) end,
    "stencil2", "got nil" },
})

catalogue("control and collections", {
  { "filter with a non-predicate", function() return lacc.filter(id, xs) end, "filter",
    "predicate must return bool, got i32" },
  { "filter with a number", function() return lacc.filter(3, xs) end, "filter",
    "expected a function" },
  { "acond on an integer", function() return lacc.acond(lacc.unit(lacc.constant(1, "i32")), xs, xs) end,
    "acond", "expected bool, got i32" },
  { "acond on a rank-1 array", function() return lacc.acond(bs, xs, xs) end, "acond",
    "rank-0 bool array", "got rank 1" },
  { "acond of two element types", function()
    return lacc.acond(lacc.unit(lacc.constant(true, "bool")), xs, fs)
  end, "acond", "expected i32, got f32" },
  { "awhile with a number for cond", function() return lacc.awhile(1, id, xs) end, "awhile",
    "two functions and an array" },
  { "awhile whose body changes the type", function()
    return lacc.awhile(function(a) return lacc.unit(lacc.constant(false, "bool")) end,
      function(a) return lacc.map(function(x) return lacc.cast(x, "f32") end, a) end, xs)
  end, "awhile", "f32" },
  { "awhile over an empty list", function() return lacc.awhile(id, id, {}) end, "awhile",
    "an array or a list of arrays to start from, got an empty list" },
  { "awhile over two arrays whose body returns one", function()
    return lacc.awhile(function() return lacc.constant(false) end, function(a) return a end, { xs, fs })
  end, "awhile", "as many arrays as the loop has (2), got 1" },
  { "awhile over two arrays whose body changes a type", function()
    return lacc.awhile(function() return lacc.constant(false) end, function(a) return a, a end, { xs, fs })
  end, "awhile", "array 2 must keep the type and rank of the loop's (f32, rank 1), got i32, rank 1" },
  { "acond of a list and an array", function() return lacc.acond(true, { xs, fs }, xs) end,
    "acond", "two arrays or two lists of as many arrays, got a list of 2 and an array" },
  { "compute of a number", function() return lacc.compute(5) end, "compute", "got number" },
  { "partition of a number", function() return lacc.partition(5) end, "partition", "got number" },
  { "partition of integers", function() return lacc.partition(xs) end, "partition",
    "sum type, got i32" },
  { "merge of a number", function() return lacc.merge(5) end, "merge",
    "collection (from lacc.partition), got number" },
})

-- derivatives (lacc.grad, vjp, value_and_grad, jvp)
local sumsq = function(v) return lacc.sum(v * v) end
catalogue("derivatives", {
  { "grad with respect to an integer array", function() return lacc.grad(sumsq)(xs) end, "grad",
    "argument 1 is an array of i32: gradients are taken with respect to arrays of floats" },
  { "grad of a function whose result is not a scalar", function()
    return lacc.grad(function(v) return v * 2 end)(fs)
  end, "grad", "must return one rank-0 array of floats", "got an array of f32 of rank 1" },
  { "value_and_grad with a position that is not a number", function()
    return lacc.value_and_grad(sumsq, "x")
  end, "value_and_grad", "expected an argument position or a list of them" },
  { "vjp of a number", function() return lacc.vjp(5, fs) end, "vjp", "expected a function, got number" },
  { "vjp through a scan of tuples", function()
    local _, pb = lacc.vjp(function(v)
      local s = lacc.scanl1(function(p, q) return p[1] * q[1] + p[2], p[2] + q[2] end, lacc.zip(v, v))
      return lacc.map(function(t) return t[1] end, s)
    end, fs)
    return pb(1)
  end, "vjp", "no derivative rule for scanl1" },
  { "vjp through an awhile whose tape passes grad_mb", function()
    lacc.config { grad_mb = 0 }
    local ok, err = pcall(function()
      local _, pb = lacc.vjp(function(v)
        return lacc.awhile(function(a) return lacc.lt(lacc.sum(a), 100) end, function(a) return a * 2 end, v)
      end, fs)
      return lacc.run((pb(1)))
    end)
    lacc.config { grad_mb = "" }
    if not ok then error(err, 0) end
  end, "vjp", "awhile's pullback keeps the loop's arrays of every turn", "past grad_mb (0.0 MB)",
    "lacc.config{grad_mb = ...} or LACC_GRAD_MB" },
  { "jvp with the arguments not in a list", function() return lacc.jvp(sumsq, fs, {}) end, "jvp",
    "expected the arguments as a list, got a host array" },
})

-- lacc.mpi without mpirun: what needs no running MPI (spec/mpi runs the rest under mpirun)
local gen = function(i) return i end
catalogue("distributed arrays (lacc.mpi)", {
  { "mpi.generate with a negative extent", function() return lacc.mpi.generate({ -1 }, gen) end,
    "mpi.generate", "extent 1 must be a non-negative Lua integer, got -1" },
  { "mpi.fill of a string shape", function() return lacc.mpi.fill("x", 0) end, "mpi.fill",
    "expected a shape of Lua integers with an outer extent, got string" },
  { "mpi.scatter before init", function() return lacc.mpi.scatter(xs) end, "mpi.scatter" },
  { "mpi.agree before init", function() return lacc.mpi.agree("x") end, "mpi.agree" },
  { "a distributed array read outside a program", function() return lacc.mpi.generate({ 3 }, gen)[1] end,
    "index", "a distributed array (lacc.mpi) read outside a distributed program's function" },
  { "a combinator not yet distributed", function()
    local d = lacc.mpi.generate({ 3 }, gen)
    return lacc.matmul(d, d)
  end, "matmul", "not yet distributed (lacc.mpi)" },
  { "append of a distributed array and an array of another rank", function()
    return lacc.append(lacc.mpi.generate({ 3 }, gen), lacc.fromtable({ { 1 } }, "i64"))
  end, "append", "arrays of one rank, 1 or more, expected, got ranks 1 and 2" },
  { "running a distributed program before init", function() return lacc.run(lacc.mpi.fill({ 3 }, lacc.constant(1, "i32"))) end,
    "mpi.run" },
})

catalogue("scalar expressions", {
  { "constant of nothing", function() return lacc.constant(nil, "i32") end, "constant", "got nil" },
  { "constant of a string", function() return lacc.constant("a", "i32") end, "constant",
    "got string" },
  { "constant of no type", function() return lacc.constant(1, "q") end, "constant",
    "expected a scalar type, got q" },
  { "cast to no type", mapped(function(x) return lacc.cast(x, "q") end), "cast",
    "expected a scalar type, got q" },
  { "cast to a tuple", mapped(function(x) return lacc.cast(x, lacc.tuple("i32", "i32")) end), "cast",
    "(i32,i32)" },
  { "cond on an integer", mapped(function(x) return lacc.cond(x, x, x) end), "cond",
    "expected bool, got i32" },
  { "cond without else", mapped(function(x) return lacc.cond(lacc.gt(x, 1), x) end), "cond",
    "got nil" },
  { "cond of a fraction for i32", mapped(function(x) return lacc.cond(lacc.gt(x, 1), x, 1.5) end),
    "cond", "1.5 is not a value of i32" },
  { "iterate with a fractional count", mapped(function(x) return lacc.iterate(1.5, id, x) end),
    "iterate", "count must be an integer, got 1.5" },
  { "iterate with a float count", mapped(function(x)
    return lacc.iterate(lacc.constant(2, "f32"), id, x)
  end), "iterate", "count must be an integer, got f32" },
  { "iterate with a number for f", mapped(function(x) return lacc.iterate(3, 5, x) end), "iterate",
    "expected a function" },
  { "iterate whose step changes the type", mapped(function(x)
    return lacc.iterate(3, function(y) return lacc.cast(y, "f32") end, x)
  end), "iterate", "expected i32, got f32" },
  { "while_ with a number for c", mapped(function(x) return lacc.while_(1, id, x) end), "while_",
    "expected a function" },
  { "while_ whose condition is no bool", mapped(function(x) return lacc.while_(id, id, x) end),
    "while", "expected bool, got i32" },
  { "match on an integer", mapped(function(x) return lacc.match(x, {}) end), "match",
    "sum type, got i32" },
  { "a scalar expression called", mapped(function(x) return x(1) end), "not a function" },
  { "an unknown field of a tuple", mapped(function(x) return lacc.tuple(x, x).foo end), "foo",
    "no field or method" },
  { "a tuple field past the end", mapped(function(x) return lacc.tuple(x, x)[3] end),
    "field 3", "does not exist" },
  { "== on two expressions", mapped(function(x) return lacc.constant(x == x + 1, "bool") end),
    "lacc.eq" },
  { "< on two expressions", mapped(function(x) return lacc.constant(x < x, "bool") end), "lacc.lt" },
  { "<= on two expressions", mapped(function(x) return lacc.constant(x <= x, "bool") end),
    "lacc.le" },
})

-- Every scalar function: a string operand, a missing operand, operands of two types,
-- and a type it does not take.
do
  local binary = { "idiv", "imod", "quot", "rem", "band", "bor", "bxor", "shl", "shr", "eq",
                   "ne", "lt", "le", "gt", "ge", "land", "lor", "min", "max", "atan2", "pow",
                   "hypot", "ipow" }
  local floats1 = { "sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "floor",
                    "ceil", "round", "truncate", "isnan", "isinf", "isfinite", "sinh", "cosh",
                    "tanh", "asinh", "acosh", "atanh", "log2", "log10", "log1p", "expm1", "cbrt",
                    "round_even", "exp2" }
  local unary = { "bnot", "lnot", "abs", "signum", unpack(floats1) }
  -- the name in messages (lacc.imod is Lua's %, named mod)
  local shown = { imod = "mod" }
  -- a type each function refuses, and the words saying so
  local refuses = {
    idiv = { bs, "number type" }, imod = { bs, "number type" }, quot = { fs, "integer type" },
    rem = { fs, "integer type" }, band = { fs, "integer type" }, bor = { fs, "integer type" },
    bxor = { fs, "integer type" }, shl = { fs, "integer type" }, shr = { fs, "integer type" },
    bnot = { fs, "integer type" }, land = { xs, "expected bool" }, lor = { xs, "expected bool" },
    lnot = { xs, "expected bool" }, min = { bs, "number type" }, max = { bs, "number type" },
    abs = { bs, "number type" }, signum = { bs, "number type" }, atan2 = { xs, "f32 or f64" },
    hypot = { xs, "f32 or f64" }, ipow = { fs, "integer type" },
  }
  for _, n in ipairs(floats1) do refuses[n] = { xs, "f32 or f64" } end
  local cases = {}
  local function add_case(...) cases[#cases + 1] = { ... } end
  for _, n in ipairs(binary) do
    local s = shown[n] or n
    add_case(n .. " of a string", mapped(function(x) return lacc[n](x, "s") end), n == s and n or s,
      "got string")
    add_case(n .. " of one operand", mapped(function(x) return lacc[n](x) end), s, "got nil")
    add_case(n .. " of f32 and f64", mapped(function(x)
      return lacc[n](x, lacc.constant(1.5, "f64"))
    end, fs), s, "f32")
  end
  for _, n in ipairs(unary) do
    add_case(n .. " of a string", mapped(function() return lacc[n]("s") end), n, "got string")
  end
  for n, r in pairs(refuses) do
    local s = shown[n] or n
    local binary_op = false
    for _, b in ipairs(binary) do binary_op = binary_op or b == n end
    add_case(n .. " of a type it does not take", mapped(function(x)
      if binary_op then return lacc[n](x, x) end
      return lacc[n](x)
    end, r[1]), s, r[2])
  end
  add_case("fma of i32", mapped(function(x) return lacc.fma(x, x, x) end), "fma", "f32 or f64")
  add_case("fma of f32 and f64", mapped(function(x)
    return lacc.fma(x, x, lacc.constant(1.5, "f64"))
  end, fs), "fma", "three operands of one type", "f64")
  add_case("fma of two operands", mapped(function(x) return lacc.fma(x, x) end, fs), "fma",
    "got nil")
  add_case("fma of a string", mapped(function(x) return lacc.fma(x, x, "s") end, fs), "fma",
    "got string")
  add_case("bitcast between widths", mapped(function(x) return lacc.bitcast(x, "f64") end),
    "bitcast", "one width", "i32 (32 bits) to f64 (64 bits)")
  add_case("bitcast to bool", mapped(function(x)
    return lacc.bitcast(lacc.cast(x, "u8"), "bool")
  end), "bitcast", "one width", "u8")
  add_case("bitcast to an unknown type", mapped(function(x) return lacc.bitcast(x, "f31") end),
    "bitcast", "f31")
  add_case("bitcast of a plain number", mapped(function() return lacc.bitcast(1.5, "i64") end),
    "bitcast", "lacc.constant")
  add_case("ipow of a plain fraction", function() return lacc.ipow(2.5, 2) end, "ipow",
    "expected integers", "2.5")
  add_case("ipow of zero to a negative power (plain numbers)", function() return lacc.ipow(0, -1) end,
    "ipow", "division by zero")
  table.sort(cases, function(a, b) return a[1] < b[1] end)
  for _, c in ipairs(cases) do
    if c[3] == "mod" then covered.imod = true end
  end
  catalogue("scalar functions", cases)
end

catalogue("functions that misbehave", {
  { "f raises an error", mapped(function() error("boom from the user") end), "boom from the user" },
  { "f returns nothing", mapped(function() end), "map", "returned nothing" },
  { "f returns a string", mapped(function() return "a" end), "map", "returned a string" },
  { "f returns a table", mapped(function() return {} end), "map", "returned a table" },
  { "f returns a function", mapped(function() return id end), "map", "returned a function" },
  { "f returns a host array", mapped(function() return xs end), "map", "returned a host array",
    "cannot run inside a scalar function" },
  { "f returns an array program", mapped(function() return lacc.map(id, xs) end), "map",
    "array program", "no nested parallelism", "fold its inner dimension" },
  { "f returns nil then a value", mapped(function(x) return nil, x end), "map", "got nil" },
  { "f returns a bare number", function() return lacc.generate({ 2 }, function() return 1 end) end,
    "generate", "lacc.constant" },
  { "f captures a rank-2 array and gives one index", mapped(function(x) return m[x] end), "index",
    "expected 2 indices for an array of rank 2, got 1" },
  { "f captures a rank-1 array and gives two", mapped(function(x) return xs:at(x, x) end), "index",
    "expected 1 indices for an array of rank 1, got 2" },
  { "f captures a rank-0 array and gives one index", mapped(function(x)
    return lacc.unit(x)[1]
  end), "index", "expected 0 indices" },
  { "a match case raises an error", mapped(function(x)
    return lacc.match(lacc.Just(x), { Just = function() error("boom in a case") end,
                                      Nothing = function() return 0 end })
  end), "boom in a case" },
  { "a match case returns nothing", mapped(function(x)
    return lacc.match(lacc.Just(x), { Just = function() end, Nothing = function() return 0 end })
  end), "match Just", "returned nothing" },
  { "a match case that is no function", mapped(function(x)
    return lacc.match(lacc.Just(x), { Just = 5, Nothing = function() return 0 end })
  end), "match Just", "expected a function, got number" },
  { "match cases that are no table", mapped(function(s) return lacc.match(s, 5) end, shapes),
    "match", "table of cases" },
  { "a non-exhaustive match", mapped(function(s)
    return lacc.match(s, { Circle = id, Rect = function(w) return w end })
  end, shapes), "match", "non-exhaustive", "missing Empty" },
  { "a non-exhaustive match on bool", mapped(function(x)
    return lacc.match(lacc.gt(x, 1), { [true] = function() return x end })
  end), "match", "non-exhaustive match on bool" },
  { "a match on a constructor the type lacks", mapped(function(s)
    return lacc.match(s, { Circle = id, _ = function() return 0 end, Square = id })
  end, shapes), "match", "no constructor Square" },
  { "match alternatives of two types", mapped(function(s)
    return lacc.match(s, { Circle = id, _ = function() return lacc.constant(0, "i32") end })
  end, shapes), "match", "expected a result of f32, got i32" },
})

catalogue("using and compiling", {
  { "run of a number", function() return lacc.run(5) end, "run", "got number" },
  { "run with options that are no table", function() return lacc.run(xs, 5) end, "run",
    "table of options" },
  { "run on an unknown backend", function() return lacc.run(xs, { backend = "gpu9" }) end, "run",
    "unknown backend" },
  { "run with an unknown layout", function() return lacc.run(xs, { layout = "weird" }) end, "run",
    "weird" },
  { "compile of a number", function() return lacc.compile(5) end, "compile",
    "expected a function, got number" },
  { "explain of a number", function() return lacc.explain(5) end, "explain", "got number" },
  { "a compiled function given a string", function()
    return lacc.compile(function(a) return lacc.map(id, a) end)("five")
  end, "compiled function", "argument 1", "expected a host array or a number" },
  { "a compiled function's number used as an array", function()
    return lacc.compile(function(a) return lacc.map(id, a) end)(5)
  end, "map", "expected an array, got a scalar expression" },
  { "a compiled function returning a number", function()
    return lacc.compile(function() return 5 end)(xs)
  end, "compile", "number" },
})

-- Extents and sizes: every one an error of the combinator that asked, on every backend;
-- an allocation that cannot succeed (16 buffers of 8 TiB: more than any address space) is
-- an error, not an abort (OpenCL refuses a buffer larger than its device allows before it
-- tries).
local huge = {}
for i = 1, 16 do huge[i] = "f64" end
catalogue("extents past the limits", {
    { "a negative extent", function() return lacc.generate({ -1 }, id) end,
      "generate", "negative extent -1", every_backend = ALL },
    { "a fractional extent", function() return lacc.generate({ 2.5 }, id) end,
      "generate", "not an integer (got 2.5)", every_backend = ALL },
    { "an infinite extent", function() return lacc.generate({ math.huge }, id) end,
      "generate", "not an integer (got inf)", every_backend = ALL },
    { "a NaN extent", function() return lacc.generate({ 0 / 0 }, id) end,
      "generate", "not an integer (got nan)", every_backend = ALL },
    { "more than 2^40 elements", function() return lacc.generate({ 2 ^ 41 }, id) end,
      "generate", "too large (more than 2^40 elements)", every_backend = ALL },
    { "2^62 elements over two dimensions", function()
      return lacc.generate({ 2 ^ 31, 2 ^ 31 }, function(i) return i end)
    end, "generate", "too large (more than 2^40 elements)", every_backend = ALL },
    { "an extent computed negative", function()
      return lacc.generate({ lacc.the(lacc.unit(lacc.constant(-5, "i64"))) }, id)
    end, "generate", "negative extent -5", every_backend = ALL },
    { "an extent computed past 2^40", function()
      return lacc.generate({ lacc.the(lacc.unit(lacc.constant(2 ^ 50, "i64"))) }, id)
    end, "generate", "too large", every_backend = ALL },
    { "an allocation no machine can make", function()
      local parts = {}
      for i = 1, 16 do parts[i] = lacc.constant(i, "f64") end
      local p = lacc.generate({ 2 ^ 40 }, function() return lacc.tuple(unpack(parts)) end)
      return p
    end, "generate",
    function(b) return b == "opencl" and "too large for device" or "out of memory allocating" end,
    every_backend = ALL },
  { "a host array no machine can allocate", function()
    return lacc.array(lacc.tuple(unpack(huge)), { 2 ^ 40 })
  end, "array", "out of memory allocating 1099511627776 elements" },
})

-- Inside kernels: the failure is found while running, reported with the combinator and
-- the place it was built, on every backend; the elements that are fine do not hide it.
local big = lacc.generate({ 1000 }, function(i) return lacc.cast(i, "i32") end)
catalogue("run-time errors inside kernels", {
    { "backpermute past the end", function()
      return lacc.backpermute({ 3 }, function(i) return i + 1 end, xs)
    end, "backpermute", "out of bounds", every_backend = ALL },
    { "backpermute before the start", function()
      return lacc.backpermute({ 3 }, function(i) return i - 3 end, xs)
    end, "backpermute", "out of bounds", every_backend = ALL },
    { "backpermute of rank 2 past an edge", function()
      return lacc.backpermute({ 2, 2 }, function(i, j) return j, i + 1 end, m)
    end, "backpermute", "out of bounds", every_backend = ALL },
    { "permute to a target past the end", function()
      return lacc.permute(add, lacc.fill({ 3 }, lacc.constant(0, "i32")), function(i) return i + 5 end, xs)
    end, "permute", "target index out of bounds", every_backend = ALL },
    { "permute to a target before the start", function()
      return lacc.permute(add, lacc.fill({ 3 }, lacc.constant(0, "i32")), function(i) return i - 5 end, xs)
    end, "permute", "target index out of bounds", every_backend = ALL },
    { "one permute target of a thousand out of range", function()
      return lacc.permute(add, lacc.fill({ 1000 }, lacc.constant(0, "i32")), function(i)
        return lacc.cond(lacc.eq(i, 777), lacc.constant(1001, "i64"), i)
      end, big)
    end, "permute", "target index out of bounds", every_backend = ALL },
    { "xs[i] past the end in a fold", function()
      return lacc.fold(add, 0, lacc.generate({ 4 }, function(i) return xs[i] end))
    end, "out of bounds", every_backend = ALL },
    { "xs[i] past the end in a scan", function()
      return lacc.scanl(add, 0, lacc.generate({ 5 }, function(i) return xs[i] end))
    end, "out of bounds", every_backend = ALL },
    { "one element of a thousand out of bounds", function()
      return lacc.map(function(x) return big[lacc.cond(lacc.eq(x, 500), x + 1000, x)] end, big)
    end, "out of bounds", every_backend = ALL },
    { "imod by zero", function()
      return lacc.map(function(x) return lacc.imod(10, x - 2) end, xs)
    end, "mod", "division by zero", every_backend = ALL },
    { "rem by zero", function()
      return lacc.map(function(x) return lacc.rem(x, x - x) end, xs)
    end, "rem", "division by zero", every_backend = ALL },
    { "idiv by zero in a fold's function", function()
      return lacc.fold(function(a, b) return lacc.idiv(a, b - 2) end, 1, xs)
    end, "idiv", "division by zero", every_backend = ALL },
    { "quot by zero of u8", function()
      return lacc.map(function(x) return lacc.quot(x, x - x) end,
        lacc.fromtable({ 5, 6 }, "u8"))
    end, "quot", "division by zero", every_backend = ALL },
    { "fold1 of an empty array", function()
      return lacc.fold1(add, lacc.fromtable({}, "i32"))
    end, "fold1", "empty", every_backend = ALL },
    { "maximum of an empty array", function()
      return lacc.maximum(lacc.fromtable({}, "f64"))
    end, "empty", every_backend = ALL },
})

-- Arrays after free(): refused by name, by every function that takes one.
local freed = lacc.fromtable({ 1, 2, 3 }, "i32")
freed:free()
catalogue("a freed array", {
  { "use", function() return lacc.use(freed) end, "use", "used after free()" },
  { "map over it", function() return lacc.map(id, freed) end, "map", "used after free()" },
  { "zipWith with it", function() return lacc.zipWith(add, xs, freed) end, "zipWith",
    "used after free()" },
  { "captured in a function", mapped(function(x) return freed[x] end), "index", "used after free()" },
  { "given to a compiled function", function()
    return lacc.compile(function(p) return lacc.map(id, p) end)(freed)
  end, "compiled function", "used after free()" },
  { "get", function() return freed:get(1) end, "get", "used after free()" },
  { "set", function() return freed:set(1, 2) end, "set", "used after free()" },
  { "shape", function() return freed:shape() end, "shape", "used after free()" },
  { "size", function() return #freed end, "size", "used after free()" },
  { "totable", function() return freed:totable() end, "totable", "used after free()" },
  { "layout", function() return freed:layout() end, "layout", "used after free()" },
  { "write_png", function() return freed:write_png("/tmp/lacc-never.png") end, "write_png",
    "used after free()" },
})

-- The limits of the guide's Limits section, one past each (what is allowed is checked
-- below): element types, expression depth, arrays and tuple values in one call.
local function fields(n)
  local t = {}
  for i = 1, n do t[i] = "f32" end
  return lacc.tuple(unpack(t))
end
local function constructors(n)
  local cons = {}
  for i = 1, n do cons[i] = { "C" .. i } end
  return cons
end
local function nested(levels)
  local nest = "i32"
  for _ = 1, levels do nest = "(" .. nest .. ",i8)" end
  return nest
end
local function chain(n)   -- 3 levels per step, under the map's lambda
  return lacc.map(function(x)
    for k = 1, n do x = (x * 3 + k) % 1000003 end
    return x
  end, xs)
end
local function maps(n)
  local p = xs
  for _ = 1, n do p = lacc.map(function(x) return x + 1 end, p) end
  return p
end
local function total(...)
  local t = 0
  for k = 1, select("#", ...) do t = t + select(k, ...) end
  return t
end
local function arrays(n)
  local a = {}
  for k = 1, n do a[k] = lacc.fromtable({ k, 10 * k }, "i64") end
  return a
end
catalogue("limits", {
  { "a tuple of 730 fields", function() return lacc.array(fields(730), { 2 }) end,
    "a tuple has at most 729 fields" },
  { "a sum of 4097 constructors", function()
    return lacc.array(lacc.data("Big", constructors(4097)), { 1 })
  end, "a sum has at most 4096 constructors" },
  { "types 70 levels deep", function() return lacc.array(nested(70), { 1 }) end,
    "types nest at most 64 levels deep" },
  { "a name of 64 characters", function()
    return lacc.array(lacc.data(("N"):rep(64), { { "A" } }), { 1 })
  end, "names have at most 63 characters" },
  { "an expression 2001 levels deep", function() return chain(667) end,
    "expression deeper than 2000 levels" },
  { "a chain of 2001 maps", function() return maps(2001) end, "map",
    "expression deeper than 2000 levels" },
  { "zipWith of 16 arrays", function() return lacc.zipWith(total, unpack(arrays(16))) end,
    "zipWith", "at most 15 arrays, got 16" },
  { "zip of 16 arrays", function() return lacc.zip(unpack(arrays(16))) end, "zip",
    "at most 15 arrays, got 16" },
  { "a tuple of 17 values", mapped(function(x)
    local t = {}
    for k = 1, 17 do t[k] = x end
    return lacc.tuple(unpack(t))
  end), "tuple", "too many arguments (17; at most 16)" },
})

-- What borders on an error and is none.
describe("not errors", function()
  it("the largest element types", function()
    assert.are.equal(2, #lacc.array(fields(729), { 2 }))
    assert.are.equal(1, #lacc.array(lacc.data("Big", constructors(4096)), { 1 }))
    assert.are.equal(1, #lacc.array(lacc.data(("N"):rep(63), { { ("A"):rep(63) } }), { 1 }))
    H.check_array(lacc.run(lacc.map(function(x) return x * 3 end, fs)), { 3, 6, 9 })
  end)

  it("an expression 2000 levels deep", function()
    local function ref(x, n)
      for k = 1, n do x = (x * 3 + k) % 1000003 end
      return x
    end
    -- 665 steps fit
    H.check_array(lacc.run(chain(665), { backend = "interp" }),
      { ref(1, 665), ref(2, 665), ref(3, 665) })
  end)

  it("a chain of 1990 maps on every backend", function()
    for _, b in ipairs(H.backends) do
      H.check_array(lacc.run(maps(1990), { backend = b }), { 1991, 1992, 1993 })
    end
  end)

  it("15 arrays zip and zipWith, and a tuple of 16 values, on every backend", function()
    local a = arrays(15)
    for _, b in ipairs(H.backends) do
      H.check_array(lacc.run(lacc.zipWith(total, unpack(a)), { backend = b }), { 120, 1200 })
      local z = lacc.run(lacc.zip(unpack(a)), { backend = b })
      assert.are.equal(150, H.num(z[2][15]))
      local t = lacc.run(lacc.map(function(x)
        local v = {}
        for k = 1, 16 do v[k] = x + k end
        return lacc.tuple(unpack(v))
      end, a[1]), { backend = b })
      assert.are.equal(17, H.num(t[1][16]))
    end
  end)

  for _, b in ipairs(H.backends) do
    it("fold1 over an empty outer dimension: zero reductions, on " .. b, function()
      local r = lacc.run(lacc.fold1(function(x, y) return x + y end,
        lacc.array("f64", { 0, 3 })), { backend = b })
      assert.are.same({ 0 }, r:shape())
    end)

    it("float division by zero, and an integer one in the branch not taken, on " .. b, function()
      local r = lacc.run(lacc.map(function(x) return x / (x - x) end, fs), { backend = b })
      assert.are.equal(math.huge, H.num(r[1]))
      local q = lacc.run(lacc.map(function(x)
        return lacc.cond(lacc.gt(x, 5), lacc.idiv(10, x - x), x)
      end, xs), { backend = b })
      H.check_array(q, { 1, 2, 3 })
    end)

    it("a compiled function that fails on one input and not another, on " .. b, function()
      local f = lacc.compile(function(a)
        return lacc.map(function(x) return lacc.idiv(100, x) end, a)
      end, { backend = b })
      H.check_array(f(lacc.fromtable({ 1, 2, 4 }, "i32")), { 100, 50, 25 })
      check_fails({ "compiled", function() return f(lacc.fromtable({ 1, 0, 4 }, "i32")) end,
                    "idiv", "division by zero" })
      H.check_array(f(lacc.fromtable({ 5, 10 }, "i32")), { 20, 10 })
      still_works()
    end)
  end
end)

-- Every function of lacc (the Reference list) has a misuse above, apart from those that
-- take anything or nothing.
it("the catalogue misuses every function of lacc", function()
  local takes_anything = { devices = true, transfers = true, memory = true, device_memory = true,
                           tiers = true, tuning = true,
                           is_collection = true,
                           ignore = true, _VERSION = true, binding = true }
  for _, t in ipairs { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64" } do
    takes_anything[t] = true
  end
  local missing = {}
  for k in pairs(lacc) do
    if not takes_anything[k] and not covered[k] then missing[#missing + 1] = k end
  end
  table.sort(missing)
  assert.are.same({}, missing)
end)
