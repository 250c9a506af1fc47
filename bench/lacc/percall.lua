-- Per-call costs on either VM (issue 41): a warm lacc.compile'd call of overhead.lua's
-- one-kernel program on 1 element, lacc.run of that program built once (a saved
-- program), and host element access: a:get(i, j) of a 2-D f64 array, a[i] of a 1-D one,
-- a:set(i, j, v), a[i], a:fields(i) and a:set_fields(i, x, y) of a (f64,i32) tuple
-- array, and the same reads from plain Lua
-- tables (the rows the access rows are held against). Each sample is CALLS calls
-- (default 100000) after a warm-up sample; the row is the median of BENCH_REPS samples,
-- per call.
-- Usage: percall.lua SUFFIX [WHAT...]   (WHAT: compile run get, default all three; rows
-- warm_compile<SUFFIX>, warm_run<SUFFIX>, and for get: get_ij, index_i, set_ij,
-- tuple_i, fields_i, set_fields_i, table_ij, table_i, each with SUFFIX). bench/run.sh runs `get` on Lua 5.4
-- (overhead.lua gives warm_compile and warm_run there) and all three on LuaJIT with
-- SUFFIX _luajit.
local lacc = require "lacc"
local B = require "benchlib"
local suffix = arg[1] or ""
local what = {}
for k = 2, #arg do what[arg[k]] = true end
if #arg < 2 then what = { compile = true, run = true, get = true } end
local calls = tonumber(os.getenv("BENCH_CALLS") or "") or 100000
local vm = jit and jit.version or _VERSION

-- sample() runs the calls (its loop written out, so no closure call is timed with them)
local function per_call(sample)
  local ms, reps = B.measure(sample)
  return ms / calls, reps
end
local function us(ms) return ("%.3f us a call"):format(ms * 1e3) end

-- overhead.lua's program (its kernel is in the cache after its rows).
local function prog(x)
  return lacc.map(function(v) return v * 3 + 7 end, x)
end
local xs = lacc.fromtable({ 2.5 }, "f32")

if what.compile then
  local f = lacc.compile(prog)
  assert(f(xs):get(1) == 14.5, "wrong result")
  local c, reps = per_call(function()
    for _ = 1, calls do f(xs) end
  end)
  B.result("overhead", "warm_compile" .. suffix, c, 14.5, reps,
    ("lacc.compile'd call, 1 element, %s, %d calls a sample: %s"):format(vm, calls, us(c)))
end
if what.run then
  local p = prog(xs)
  assert(lacc.run(p):get(1) == 14.5, "wrong result")
  local run = lacc.run
  local c, reps = per_call(function()
    for _ = 1, calls do run(p) end
  end)
  B.result("overhead", "warm_run" .. suffix, c, 14.5, reps,
    ("lacc.run of a built program, 1 element, %s, %d calls a sample: %s"):format(vm, calls, us(c)))
end
if what.get then
  local n = 64
  local t = {}
  for i = 1, n do
    local row = {}
    for j = 1, n do row[j] = i * 1000 + j end
    t[i] = row
  end
  local a = lacc.fromtable(t, "f64")
  assert(a:get(3, 5) == 3005, "wrong element")
  -- every element in turn, row by row (calls a multiple of n * n or not)
  local sum = 0
  local c, reps = per_call(function()
    local i, j, s = 1, 1, 0
    for _ = 1, calls do
      s = s + a:get(i, j)
      j = j + 1
      if j > n then j, i = 1, i % n + 1 end
    end
    sum = s
  end)
  assert(sum > 0, "no elements read")
  B.result("overhead", "get_ij" .. suffix, c, a:get(n, n), reps,
    ("a:get(i, j) of a %dx%d f64 host array, %s, %d calls a sample: %s"):format(n, n, vm, calls, us(c)))
  -- the same elements from nested Lua tables
  c, reps = per_call(function()
    local i, j, s = 1, 1, 0
    for _ = 1, calls do
      s = s + t[i][j]
      j = j + 1
      if j > n then j, i = 1, i % n + 1 end
    end
    sum = s
  end)
  B.result("overhead", "table_ij" .. suffix, c, t[n][n], reps,
    ("t[i][j] of nested Lua tables of %dx%d numbers, %s: %s"):format(n, n, vm, us(c)))
  -- a:set(i, j, v)
  c, reps = per_call(function()
    local i, j = 1, 1
    for k = 1, calls do
      a:set(i, j, k)
      j = j + 1
      if j > n then j, i = 1, i % n + 1 end
    end
  end)
  assert(a:get(1, 1) ~= 1001, "nothing written")
  B.result("overhead", "set_ij" .. suffix, c, a:get(1, 1), reps,
    ("a:set(i, j, v) of a %dx%d f64 host array, %s: %s"):format(n, n, vm, us(c)))
  -- a[i] of a rank-1 array, and of a plain table
  local m, flat = 4096, {}
  for i = 1, m do flat[i] = i * 0.5 end
  local v = lacc.fromtable(flat, "f64")
  local function walk(arr)   -- one sample: every element of arr in turn
    return function()
      local i, s = 1, 0
      for _ = 1, calls do
        s = s + arr[i]
        i = i % m + 1
      end
      sum = s
    end
  end
  c, reps = per_call(walk(v))
  B.result("overhead", "index_i" .. suffix, c, v[m], reps,
    ("a[i] of a %d-element f64 host array, %s: %s"):format(m, vm, us(c)))
  c, reps = per_call(walk(flat))
  B.result("overhead", "table_i" .. suffix, c, flat[m], reps,
    ("t[i] of a Lua table of %d numbers, %s: %s"):format(m, vm, us(c)))
  -- a[i] of a tuple array: a table {x, y} each read
  local tup = {}
  for i = 1, m do tup[i] = { i * 0.5, i } end
  local pa = lacc.fromtable(tup, lacc.tuple("f64", "i32"))
  c, reps = per_call(function()
    local i, s = 1, 0
    for _ = 1, calls do
      local e = pa[i]
      s = s + e[1] + e[2]
      i = i % m + 1
    end
    sum = s
  end)
  assert(sum > 0, "no tuples read")
  B.result("overhead", "tuple_i" .. suffix, c, pa[m][2], reps,
    ("a[i] of a %d-element (f64,i32) host array, both fields read, %s: %s"):format(m, vm, us(c)))
  -- the same fields as values, no table: a:fields(i), and a:set_fields(i, x, y)
  c, reps = per_call(function()
    local i, s = 1, 0
    for _ = 1, calls do
      local x, y = pa:fields(i)
      s = s + x + y
      i = i % m + 1
    end
    sum = s
  end)
  B.result("overhead", "fields_i" .. suffix, c, sum, reps,
    ("a:fields(i) of a %d-element (f64,i32) host array, %s: %s"):format(m, vm, us(c)))
  c, reps = per_call(function()
    local i = 1
    for k = 1, calls do
      pa:set_fields(i, k * 0.5, k)
      i = i % m + 1
    end
  end)
  B.result("overhead", "set_fields_i" .. suffix, c, pa:get(1)[2], reps,
    ("a:set_fields(i, x, y) of a %d-element (f64,i32) host array, %s: %s"):format(m, vm, us(c)))
end
