-- Runs hold what they use, and the host cannot break them (issue 25): a progress
-- callback (or a finaliser it sets off) that frees or writes a running program's
-- arguments; constructor tags the host writes through the core's functions or raw
-- buffers; a finaliser that calls lacc after lacc's context is gone at lua_close.
-- Each scenario that crashed runs in a child process of the same VM and environment, so a
-- crash fails its test instead of ending busted.
local H = require "helper"

-- The source in a child process with the given arguments (H.child: a run that read freed
-- memory may loop for ever, 124 past the time limit).
local function child(source, ...) return H.child(source, table.concat({ ... }, " ")) end

local function expect_clean(out, status)
  assert.are.equal(0, status, out)
  assert.falsy(out:find("Segmentation", 1, true), out)
end

-- MODE free: the callback frees the argument; finaliser: the callback collects garbage
-- and a finaliser frees it; set: the callback writes it. Then the callback allocates an
-- array of the argument's size, which would get its memory back (as zeros) were it
-- released. The results are checked against plain Lua: element i is 2 * i.
local hold_script = [[
local lacc = require "lacc"
local backend, how, mode = arg[1], arg[2], arg[3]
local n = 1048576
local function argument()
  return lacc.run(lacc.generate({ n }, function(i) return lacc.cast(i, "f64") end), { backend = backend })
end
local xs = argument()
local handle, junk, refused = xs, nil, nil
local function on_close(f)
  if newproxy then local u = newproxy(true); getmetatable(u).__gc = f; return u end
  return setmetatable({}, { __gc = f })
end
local calls = 0
local function progress()
  calls = calls + 1
  if calls > 1 then return end
  if mode == "free" then xs:free(); xs = nil end
  -- garbage at once: the collections below run its finaliser
  if mode == "finaliser" then on_close(function() xs:free(); xs = nil end) end
  if mode == "set" then
    local ok, err = pcall(xs.set, xs, 1, 99)
    refused = not ok and tostring(err)
  end
  collectgarbage()
  collectgarbage()
  junk = lacc.array("f64", { n })
end
local double = function(a) return lacc.map(function(v) return v * 2 end, a) end
-- the same through awhile, whose body reads the argument from outside the loop: s + a
-- once, while s[1] < 2
if how == "awhile" then
  double = function(a)
    return lacc.awhile(function(s) return lacc.lt(s[1], 2) end,
                       function(s) return lacc.zipWith(function(x, y) return x + y end, s, a) end, a)
  end
end
local r
if how == "compile" or how == "awhile" then
  r = lacc.compile(double, { backend = backend, progress_after = 0, progress = progress })(xs)
else
  r = lacc.run(double(xs), { backend = backend, progress_after = 0, progress = progress })
end
local wrong = 0
for _, i in ipairs { 1, 2, 777, 4096, n - 1, n } do
  if tonumber(r:get(i)) ~= 2 * i then wrong = wrong + 1 end
end
print("calls", calls > 0, "wrong", wrong)
if mode == "set" then
  print("refused", refused)
  handle:set(1, 99)   -- allowed once the run has ended
  print("after", tonumber(handle:get(1)))
else
  print("handle", (select(2, pcall(handle.get, handle, 1))))
end
]]

for _, backend in ipairs(H.backends) do
  describe("runs hold their arguments on " .. backend, function()
    -- the interpreter reports no progress: no host code runs during its runs
    if backend == "interp" then return end
    for _, how in ipairs { "compile", "run", "awhile" } do
      for _, mode in ipairs { "free", "finaliser" } do
        it(("a %s's argument freed during it (%s) is released when it ends"):format(how, mode), function()
          local out, status = child(hold_script, backend, how, mode)
          expect_clean(out, status)
          assert.truthy(out:find("calls\ttrue\twrong\t0", 1, true), out)
          assert.truthy(out:find("handle\t.*used after free"), out)
        end)
      end
      it(("a %s's argument written during it is an error, and unchanged"):format(how), function()
        local out, status = child(hold_script, backend, how, "set")
        expect_clean(out, status)
        assert.truthy(out:find("calls\ttrue\twrong\t0", 1, true), out)
        assert.truthy(out:find("refused\t[^\n]*in use by a running program"), out)
        assert.truthy(out:find("after\t99", 1, true), out)
      end)
    end
  end)
end

-- Constructor tags: through the core's array_set (both VMs), and through the raw buffer
-- lacc_array_leaf_data hands out (LuaJIT's FFI reaches it), on every backend.
local tag_script = [[
local lacc = require "lacc"
local core = require("lacc.util").core
local backend = arg[1]
local Shape = lacc.data("Shape", { { "Circle", "f32" }, { "Rect", "f32", "f32" }, { "Empty" } })
local function area(xs)
  return lacc.map(function(s)
    return lacc.match(s, { Circle = function(r) return r * r end, Rect = function(w, h) return w * h end,
                           Empty = function() return lacc.constant(-1, "f32") end })
  end, xs)
end
local function show(a)
  local t = {}
  for i, v in ipairs(a:totable()) do t[i] = ("%g"):format(v) end
  return table.concat(t, ",")
end
for _, layout in ipairs { "unboxed", "rtu", "compact" } do
  lacc.set_layout(layout)
  local a = lacc.fromtable({ { tag = "Circle", 2 }, { tag = "Rect", 2, 3 }, { tag = "Empty" } }, Shape)
  for _, bad in ipairs { 3, 7, -1, 2147483648 } do
    local ok, err = pcall(core.array_set, a, 0, 1, bad)
    print(layout, "set", bad, ok, (tostring(err):match("not a constructor index") or tostring(err)))
  end
  print(layout, "run", show(lacc.run(area(a), { backend = backend })))
  print(layout, "compiled", show(lacc.compile(area, { backend = backend })(a)))
end
if type(jit) == "table" then
  local ffi = require "ffi"
  lacc.set_layout("unboxed")
  local a = lacc.fromtable({ { tag = "Circle", 2 }, { tag = "Rect", 2, 3 }, { tag = "Empty" } }, Shape)
  local tags = ffi.cast("uint8_t *", core.lib.lacc_array_leaf_data(a.a, 0))
  tags[1] = 9
  local ok, err = pcall(lacc.run, area(a), { backend = backend })
  print("raw", "run", ok, (tostring(err):gsub("\n", " ")))
  local f = lacc.compile(area, { backend = backend })
  ok, err = pcall(f, a)
  print("raw", "compiled", ok, (tostring(err):gsub("\n", " ")))
  tags[1] = 1
  print("raw", "fixed", show(f(a)))
end
]]

for _, backend in ipairs(H.backends) do
  describe("constructor tags written by the host on " .. backend, function()
    local out, status
    local function result()
      if not out then out, status = child(tag_script, backend) end
      expect_clean(out, status)
      return out
    end

    it("array_set refuses an index that names no constructor, in every layout", function()
      local o = result()
      for _, layout in ipairs { "unboxed", "rtu", "compact" } do
        for _, bad in ipairs { "3", "7", "-1", "2147483648" } do
          local line = layout .. "\tset\t" .. bad .. "\tfalse\tnot a constructor index\n"
          assert.truthy(o:find(line, 1, true), o)
        end
        -- the array is unchanged: areas as plain Lua has them (f32 products)
        local want = table.concat({ 4, 6, -1 }, ",")
        assert.truthy(o:find(layout .. "\trun\t" .. want, 1, true), o)
        assert.truthy(o:find(layout .. "\tcompiled\t" .. want, 1, true), o)
      end
    end)

    if type(jit) ~= "table" then return end   -- only the FFI reaches raw buffers
    it("a bad tag written through lacc_array_leaf_data is an error before the run", function()
      local o = result()
      assert.truthy(o:find("raw\trun\tfalse\t[^\n]*array used at [^\n]*constructor index 9"), o)
      assert.truthy(o:find("raw\tcompiled\tfalse\t[^\n]*argument 1[^\n]*constructor index 9"), o)
      assert.truthy(o:find("raw\tfixed\t4,6,-1", 1, true), o)   -- its Rect again
    end)
  end)
end

-- A finaliser older than lacc's context runs after the context's at lua_close (Lua 5.4:
-- newest first; LuaJIT: cdata, then userdata): calling lacc there is an error, not a
-- crash, and arrays and nodes still alive then go quietly.
local close_script = [[
local function on_close(f)
  if newproxy then local u = newproxy(true); getmetatable(u).__gc = f; return u end
  return setmetatable({}, { __gc = f })
end
KEEP = on_close(function()
  local lacc = require "lacc"
  local ok, err = pcall(function() return lacc.run(lacc.sum(lacc.fromtable({ 1, 2 }, "i32"))):get() end)
  print(ok and "ran" or "refused: " .. tostring(err))
end)
BARE = on_close(function()
  local lacc = require "lacc"
  lacc.run(lacc.sum(lacc.fromtable({ 1, 2 }, "i32")))   -- unprotected: the error ends the finaliser
end)
local lacc = require "lacc"
ARRAYS, NODES = {}, {}
for i = 1, 50 do
  ARRAYS[i] = lacc.fromtable({ i, i + 1 }, "i32")
  NODES[i] = lacc.map(function(v) return v + i end, ARRAYS[i])
end
print("before", lacc.run(lacc.sum(ARRAYS[3])):get())
]]

describe("lacc at lua_close", function()
  it("a finaliser that runs after the context's gets an error, not a crash", function()
    local out, status = child(close_script)
    expect_clean(out, status)
    assert.truthy(out:find("before\t7", 1, true), out)
    assert.truthy(out:find("refused: [^\n]*the Lua state is closing"), out)
  end)
end)
