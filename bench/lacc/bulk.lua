-- The bulk benchmark (issue 20): n f32 in and out of lacc (frombytes, tobytes, save, load;
-- on LuaJIT fromptr) against the C row's memcpy of the same bytes, and m f64 through
-- fromtable / totable against a plain Lua loop copying one table into another.
-- arg: row ("lacc" on Lua 5.4, "lacc_luajit"), n, m.
local lacc = require "lacc"
local B = require "benchlib"
local row, n, m = arg[1] or "lacc", tonumber(arg[2] or "20000000"), tonumber(arg[3] or "1000000")
local tag = row == "lacc_luajit" and "_luajit" or ""

local a = lacc.run(lacc.generate({ n }, function(i) return lacc.cast(i, "f32") * 0.5 end))
local s = a:tobytes()
local mid = a:get(math.floor(n / 2))

local function bulk(name, body, note)
  local ms, reps, r = B.measure(body, function(x) if type(x) ~= "string" then x:free() end end)
  B.result("bulk", name .. tag, ms, mid, reps, note)
  return r
end

bulk("frombytes", function() return lacc.frombytes(s, "f32") end, "a Lua string of 4n bytes to an array")
bulk("tobytes", function() return a:tobytes() end, "an array to a Lua string")
local path = os.tmpname()
bulk("save", function() a:save(path); return "" end, ".npy file written (page cache)")
bulk("load", function() return lacc.load(path) end, ".npy file read (page cache)")
os.remove(path)
if jit then
  local p = a:ptr()
  bulk("fromptr", function() return lacc.fromptr(p, "f32", { n }) end, "copy from an FFI pointer")
end

-- tables of m numbers
local t = {}
for i = 1, m do t[i] = i * 0.25 end
local ms, reps = B.measure(function()
  local c = {}
  for i = 1, m do c[i] = t[i] end
  return c
end)
B.result("bulk", "lua_copy" .. tag, ms, t[m], reps, "a plain Lua loop copying a table of m numbers")
local ft = bulk("fromtable", function() return lacc.fromtable(t, "f64") end, "m numbers into an f64 array")
ms, reps = B.measure(function() return ft:totable() end)
B.result("bulk", "totable" .. tag, ms, t[m], reps, "an f64 array of m into a table")
