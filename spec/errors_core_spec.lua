-- Every error kind: a Lua error naming the operation, the types and the user's line,
-- and the process keeps working afterwards.
local H = require "helper"
local lacc = H.lacc

local function line_of(marker)
  local n = 0
  for l in io.lines("spec/errors_core_spec.lua") do
    n = n + 1
    if l:find(marker, 1, true) and not l:find("line_of", 1, true) then return n end
  end
end

-- pcall f, expect failure, check every fragment appears in the message, then check
-- that lacc still runs a program.
local function fails_with(f, ...)
  local ok, err = pcall(f)
  assert.is_false(ok)
  err = tostring(err)
  for _, frag in ipairs { ... } do
    if not err:find(frag, 1, true) then
      error(("message %q lacks %q"):format(err, frag), 2)
    end
  end
  local r = lacc.run(lacc.map(function(x) return x + 1 end, lacc.fromtable({ 1, 2 }, "i32")))
  H.check_array(r, { 2, 3 })
  return err
end

local f32s = lacc.fromtable({ 1, 2, 3 }, "f32")
local i32s = lacc.fromtable({ 1, 2, 3 }, "i32")

describe("build-time errors", function()
  it("mixing f32 and i32 names the operation, both types and the line", function()
    fails_with(function()
      local p = lacc.zipWith(function(a, b) return a + b end, f32s, i32s) -- MARK:add
      return p
    end, "add", "f32", "i32", "errors_core_spec.lua:" .. line_of("MARK:add"))
  end)

  it("zipWith of different ranks", function()
    local m = lacc.fromtable({ { 1, 2 }, { 3, 4 } }, "f32")
    fails_with(function()
      local p = lacc.zipWith(function(a, b) return a + b end, f32s, m) -- MARK:rank
      return p
    end, "zipWith", "rank", "errors_core_spec.lua:" .. line_of("MARK:rank"))
  end)

  it("fold with a function of the wrong result type", function()
    fails_with(function()
      local p = lacc.fold(function(a, b) return lacc.lt(a, b) end, 0, f32s) -- MARK:fold
      return p
    end, "fold", "f32", "bool", "errors_core_spec.lua:" .. line_of("MARK:fold"))
  end)

  it("a non-function where a function is expected", function()
    fails_with(function() return lacc.map(42, f32s) end, "expected a function", "number")
  end)

  it("a number where an array is expected", function()
    fails_with(function() return lacc.map(function(x) return x end, 7) end,
      "map", "expected an array", "number")
  end)

  it("a function that returns nothing", function()
    fails_with(function() return lacc.map(function() end, f32s) end, "returned nothing")
  end)

  it("a function that raises propagates its error", function()
    fails_with(function() return lacc.map(function() error("boom from user") end, f32s) end,
      "boom from user")
  end)

  it("comparison operators point to lacc.eq and friends", function()
    -- (LuaJIT calls __lt only when both operands are tables, so compare two values)
    fails_with(function() return lacc.map(function(x) return x < x end, f32s) end, "lacc.lt")
  end)

  it("an integer constant that cannot hold 0.5", function()
    fails_with(function() return lacc.map(function(x) return x + 0.5 end, i32s) end,
      "0.5", "i32")
  end)

  it("an unknown element type", function()
    fails_with(function() return lacc.constant(1, "f16") end, "f16")
    fails_with(function() return lacc.array("quux", { 2 }) end, "quux")
  end)

  it("a ragged table", function()
    fails_with(function() return lacc.fromtable({ { 1, 2 }, { 3 } }, "f64") end, "ragged")
  end)

  it("host indices out of range", function()
    fails_with(function() return f32s:get(4) end, "out of bounds")
    fails_with(function() return f32s:get(1, 1) end, "rank 1")
  end)

  it("an array used after free()", function()
    local a = lacc.fromtable({ 1, 2 }, "f64")
    a:free()
    fails_with(function() return a:get(1) end, "after free")
    fails_with(function() return lacc.run(lacc.map(function(x) return x end, a)) end, "after free")
  end)

  it("an unknown backend", function()
    fails_with(function() return lacc.run(lacc.use(f32s), { backend = "tpu" }) end,
      "unknown backend", "tpu")
  end)
end)

describe("run-time errors", function()
  for _, b in ipairs(H.backends) do
    it("out-of-bounds indexing inside a lambda on " .. b, function()
      local p = lacc.generate({ 4 }, function(i) return f32s[i] end) -- MARK:oob
      fails_with(function() return lacc.run(p, { backend = b }) end, "out of bounds",
        "(4)", "errors_core_spec.lua:" .. line_of("MARK:oob"))
    end)

    it("integer division by zero on " .. b, function()
      local z = lacc.fromtable({ 1, 0, 2 }, "i32")
      local p = lacc.map(function(x) return lacc.idiv(10, x) end, z)
      fails_with(function() return lacc.run(p, { backend = b }) end, "division by zero")
      fails_with(function() return lacc.run(lacc.map(function(x) return lacc.imod(x, 0) end, z),
        { backend = b }) end, "division by zero")
    end)

    it("maximum of an empty array on " .. b, function()
      local e = lacc.array("f64", { 0 })
      fails_with(function() return lacc.run(lacc.maximum(e), { backend = b }) end,
        "fold1", "empty")
    end)

    it("reshape to another size on " .. b, function()
      fails_with(function() return lacc.run(lacc.reshape({ 2, 2 }, f32s), { backend = b }) end,
        "reshape", "3", "4")
    end)

    it("a negative extent on " .. b, function()
      fails_with(function()
        return lacc.run(lacc.generate({ -1 }, function(i) return i end), { backend = b })
      end, "negative extent")
    end)

    it("an absurdly large array on " .. b, function()
      fails_with(function()
        return lacc.run(lacc.fill({ 2 ^ 30, 2 ^ 30 }, lacc.constant(1, "u8")), { backend = b })
      end, "too large")
    end)
  end
end)
