-- Fusion, the compiled CPU backend and lacc.compile (issue 4): kernel counts from
-- explain, results of the cpu backend against the interpreter and plain Lua loops on
-- sizes that take the parallel paths, and compiled programs.
local lacc = require "lacc"
local H = require "helper"

local function seq(n, t, f)
  local v = {}
  for i = 1, n do v[i] = f(i) end
  return lacc.fromtable(v, t)
end

-- Bitwise references for Lua 5.4 and LuaJIT alike (the values here fit in 31 bits).
local bitop = rawget(_G, "bit") or load([[return {
  band = function(a, b) return a & b end, bor = function(a, b) return a | b end,
  bxor = function(a, b) return a ~ b end }]])()

local function plus1(x) return x + 1 end
local function add(a, b) return a + b end
local function mul(a, b) return a * b end

describe("fusion (explain)", function()
  local xs = seq(10, "f32", function(i) return i end)
  local ys = seq(10, "f32", function(i) return 2 * i end)

  it("a dot product is one kernel and no intermediate", function()
    local _, st = lacc.explain(lacc.fold(add, 0, lacc.zipWith(mul, xs, ys)))
    assert.are.same({ kernels = 1, intermediates = 0, lets = 0 }, st)
  end)

  it("Defunctionalizing Push Arrays' ex1 (rotate 3 . reverse . map (+1)) is one kernel", function()
    local ex1 = lacc.rotate(3, lacc.reverse(lacc.map(plus1, xs)))
    local _, st = lacc.explain(ex1)
    assert.are.equal(1, st.kernels)
    assert.are.equal(0, st.intermediates)
  end)

  it("saxpy on ex1 of an input is one kernel with the index arithmetic inlined", function()
    local ex1 = lacc.rotate(3, lacc.reverse(lacc.map(plus1, xs)))
    local saxpy = lacc.zipWith(function(x, y) return 2.5 * x + y end, ex1, ys)
    local text, st = lacc.explain(saxpy, { source = true })
    assert.are.equal(1, st.kernels)
    assert.truthy(text:find("pulls map(backpermute(backpermute(map(a0))) a1)", 1, true))
    local got = lacc.run(saxpy):totable()
    -- reference: ex1[i] = rev[(i - 1 + 3) mod n + 1], rev[j] = x[n - j + 1] + 1
    for i = 1, 10 do
      local j = (i - 1 + 3) % 10 + 1
      assert.are.equal(2.5 * (11 - j + 1) + 2 * i, got[i])
    end
  end)

  it("a map used by two folds is materialised once", function()
    local m = lacc.map(function(x) return x * 2 end, xs)
    local _, st = lacc.explain({ lacc.sum(m), lacc.maximum(m) })
    assert.are.equal(3, st.kernels)
    assert.are.equal(1, st.intermediates)
  end)

  it("a cheap producer (a backpermute of an input) used twice is not materialised", function()
    local r = lacc.reverse(xs)
    local _, st = lacc.explain(lacc.zipWith(add, r, r))
    assert.are.equal(1, st.kernels)
    assert.are.equal(0, st.intermediates)
  end)

  it("fusion off gives a kernel per combinator and the same results", function()
    local p = lacc.fold(add, 0, lacc.zipWith(mul, lacc.map(plus1, xs), ys))
    local _, on = lacc.explain(p)
    local _, off = lacc.explain(p, { fusion = false })
    assert.are.equal(1, on.kernels)
    assert.are.equal(3, off.kernels)
    assert.are.equal(2, off.intermediates)
    assert.are.equal(lacc.run(p):get(), lacc.run(p, { fusion = false }):get())
    local want = 0
    for i = 1, 10 do want = want + (i + 1) * 2 * i end
    assert.are.equal(want, lacc.run(p):get())
  end)

  it("sharing off duplicates work but not results", function()
    local function f(x)
      local s = x * x + 1
      return s * s + s
    end
    local p = lacc.map(f, xs)
    local a, b = lacc.run(p):totable(), lacc.run(p, { sharing = false }):totable()
    assert.are.same(a, b)
    local _, st = lacc.explain(p, { sharing = false })
    assert.are.equal(0, st.lets)
  end)

  it("compute materialises its argument: producers fuse into it, consumers read it", function()
    local x = lacc.fromtable({ 1, 2, 3, 4 }, "f32")
    local m = lacc.compute(lacc.map(function(v) return v * 2 end, lacc.reverse(x)))
    local p = lacc.map(function(v) return v + 1 end, m)
    local _, stats = lacc.explain(p)
    assert.are.equal(2, stats.kernels)
    assert.are.equal(1, stats.intermediates)
    local _, plain = lacc.explain(lacc.map(function(v) return v + 1 end,
      lacc.map(function(v) return v * 2 end, lacc.reverse(x))))
    assert.are.equal(1, plain.kernels)
    for _, b in ipairs { "interp", "cpu" } do
      assert.are.same({ 9, 7, 5, 3 }, lacc.run(p, { backend = b }):totable())
      assert.are.same({ 8, 6, 4, 2 }, lacc.run(m, { backend = b }):totable())
    end
  end)

  it("explain can show the generated C", function()
    local text = lacc.explain(lacc.map(plus1, xs), { source = true })
    assert.truthy(text:find("void lacc_f0", 1, true))
    assert.falsy(lacc.explain(lacc.map(plus1, xs)):find("void lacc_f0", 1, true))
  end)
end)

describe("cpu backend on large arrays (parallel loops and fold partials)", function()
  local N = 200003   -- odd, above every grain

  it("map and zipWith agree with a Lua loop", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return (i * 7) % 1000 end))
    local b = lacc.run(lacc.map(function(x) return x * 3 - 1 end, a), { backend = "cpu" })
    local at, bt = a:totable(), b:totable()
    for i = 1, N, 997 do assert.are.equal(at[i] * 3 - 1, bt[i]) end
    assert.are.equal(at[N] * 3 - 1, bt[N])
  end)

  it("a whole-array integer sum (split into partials) is exact", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(i, "i64") end))
    local s = lacc.run(lacc.sum(a)):get()
    assert.are.equal(math.floor(N * (N + 1) / 2), s)
    local m = lacc.run(lacc.maximum(lacc.map(function(x) return (x * 31) % 1009 end, a))):get()
    assert.are.equal(1008, m)
  end)

  it("a fold of tuples over many elements matches the interpreter", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(i % 13, "i32") end))
    local p = lacc.fold(function(x, y) return lacc.tuple(x[1] + y[1], lacc.max(x[2], y[2])) end,
      lacc.tuple(lacc.constant(0, "i32"), lacc.constant(-1, "i32")),
      lacc.map(function(x) return lacc.tuple(x, x * 2) end, a))
    local c = lacc.run(p)
    local i = lacc.run(p, { backend = "interp" })
    assert.are.same(i:totable(), c:totable())
  end)

  it("float sums reassociate within a small relative error", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.sin(lacc.cast(i, "f64")) end))
    local c = lacc.run(lacc.sum(a)):get()
    local ref = 0
    for i = 1, N do ref = ref + math.sin(i) end
    assert.is_true(math.abs(c - ref) <= 1e-9 * N)
  end)

  it("many segments fold in parallel, each in order", function()
    local a = lacc.run(lacc.generate({ 999, 301 }, function(i, j) return lacc.cast(i * j, "i64") end))
    local r = lacc.run(lacc.fold(add, 0, a)):totable()
    for i = 1, 999, 37 do assert.are.equal(i * 301 * 151, r[i]) end
  end)

  it("per-lane accumulators: commutative folds over few long rows are exact", function()
    local M = 70001   -- two rows, each long enough for partials with lanes
    local a = lacc.run(lacc.generate({ 2, M }, function(i, j) return lacc.cast(i * 1000003 + j * 7919, "i64") end))
    local function ref(f, z, conv)
      local r = {}
      for i = 1, 2 do
        local acc = z
        for j = 1, M do acc = f(acc, conv(i * 1000003 + j * 7919)) end
        r[i] = acc
      end
      return r
    end
    local id = function(x) return x end
    local u8 = function(x) return x % 256 end
    local cases = {
      { "sum i64", lacc.fold(add, 0, a), ref(function(x, y) return x + y end, 0, id) },
      { "band", lacc.fold(lacc.band, -1, a), ref(bitop.band, -1, id) },
      { "bor", lacc.fold(lacc.bor, 0, a), ref(bitop.bor, 0, id) },
      { "bxor", lacc.fold(lacc.bxor, 0, a), ref(bitop.bxor, 0, id) },
      { "max", lacc.fold1(lacc.max, a), ref(math.max, -2 ^ 53, id) },
      { "min", lacc.fold1(lacc.min, a), ref(math.min, 2 ^ 53, id) },
      { "u8 sum wraps", lacc.fold(add, lacc.constant(0, "u8"), lacc.map(function(x) return lacc.cast(x % 256, "u8") end, a)),
        ref(function(x, y) return (x + y) % 256 end, 0, u8) },
    }
    for _, c in ipairs(cases) do
      assert.are.same(c[3], lacc.run(c[2], { backend = "cpu" }):totable(), c[1])
    end
  end)

  it("folds that are associative but not commutative keep the order", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(i * 3 + 1, "i32") end))
    local first = lacc.fold1(function(x, y) return x end, a)
    local last = lacc.fold1(function(x, y) return y end, a)
    assert.are.equal(4, lacc.run(first, { backend = "cpu" }):get())
    assert.are.equal(N * 3 + 1, lacc.run(last, { backend = "cpu" }):get())
    -- float min and max are not commutative in which NaN wins: the interpreter's order
    -- 33334: the first element of the second chunk, were the row split into partials
    for _, nans in ipairs { { 1 }, { 70001 }, { 5, 150001, N }, { N }, { 33334 }, { 33334, 66668 } } do
      local set = {}
      for _, k in ipairs(nans) do set[k] = true end
      local v = {}
      for i = 1, N do v[i] = set[i] and 0 / 0 or ((i * 37) % 1001) - 500.5 end
      v[40000], v[40001] = -9999, 9999   -- the extremes, inside the second chunk
      local x = lacc.fromtable(v, "f32")
      for _, f in ipairs { lacc.minimum, lacc.maximum } do
        local c = lacc.run(f(x), { backend = "cpu" }):get()
        local r = lacc.run(f(x), { backend = "interp" }):get()
        if r ~= r then assert.is_true(c ~= c) else assert.are.equal(r, c) end
      end
    end
    -- nor in which zero wins: the first of -0.0 (element 2) and 0.0 (element 33)
    local v = {}
    for i = 1, N do v[i] = 1 + i % 7 end
    v[2], v[33] = -0.0, 0.0
    local z = lacc.run(lacc.minimum(lacc.fromtable(v, "f64")), { backend = "cpu" }):get()
    assert.are.equal(-math.huge, 1 / z)
  end)

  it("an error at a late index is reported like the interpreter's", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(N - i, "i32") end))
    local p = lacc.map(function(x) return lacc.idiv(100, x) end, a)
    local ok1, e1 = pcall(lacc.run, p, { backend = "cpu" })
    local ok2, e2 = pcall(lacc.run, p, { backend = "interp" })
    assert.is_false(ok1)
    assert.is_false(ok2)
    assert.are.equal(e2, e1)
    assert.truthy(e1:find("integer division by zero", 1, true))
  end)
end)

describe("recycled memory", function()
  local N = 600001   -- 4.8 MB of f64: above the size whose freed buffers are kept

  it("a freed kernel output's memory serves the next run, which overwrites all of it", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(i, "f64") * 0.5 end))
    local p = lacc.map(function(x) return x * 3 - 1 end, a)
    for round = 1, 3 do
      local r = lacc.run(p, { backend = "cpu" })
      local t = r:totable()
      for i = round, N, 4999 do assert.are.equal(i * 0.5 * 3 - 1, t[i]) end
      assert.are.equal(N * 1.5 - 1, t[N])
      r:free()
    end
  end)

  it("a new host array is zeroed even when it reuses a freed buffer", function()
    local r = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(i, "f64") + 1 end))
    r:free()
    local z = lacc.array("f64", { N })
    local t = z:totable()
    for i = 1, N, 1009 do assert.are.equal(0, t[i]) end
    assert.are.equal(0, t[N])
  end)
end)

describe("lacc.compile", function()
  it("runs the traced program on new arrays without tracing again", function()
    local traced = 0
    local dot = lacc.compile(function(a, b)
      traced = traced + 1
      return lacc.sum(lacc.zipWith(mul, a, b))
    end)
    local x = seq(5, "f32", function(i) return i end)
    local y = seq(5, "f32", function(i) return 10 * i end)
    assert.are.equal(550, dot(x, y):get())
    assert.are.equal(550, dot(y, x):get())
    local z = seq(3, "f32", function(i) return i end)
    assert.are.equal(14, dot(z, z):get())
    assert.are.equal(1, traced)
    -- another element type is another program
    local w = seq(3, "f64", function(i) return i end)
    assert.are.equal(14, dot(w, w):get())
    assert.are.equal(2, traced)
  end)

  it("returns several results and agrees with run on every backend", function()
    local f = function(a) return { lacc.map(plus1, a), lacc.maximum(a) } end
    local x = seq(7, "i32", function(i) return (i * 5) % 7 end)
    for _, backend in ipairs { "cpu", "interp" } do
      local g = lacc.compile(f, { backend = backend })
      local r1, r2 = g(x)
      local s1, s2 = lacc.run(f(x))
      assert.are.same(s1:totable(), r1:totable())
      assert.are.same(s2:totable(), r2:totable())
    end
  end)

  it("rejects what is neither an array nor a scalar, and a scalar used as an array", function()
    local g = lacc.compile(function(a) return lacc.map(plus1, a) end)
    local ok, err = pcall(g, "three")
    assert.is_false(ok)
    assert.truthy(err:find("argument 1 is string", 1, true), err)
    ok, err = pcall(g, 3)   -- a number is a scalar parameter: map wants an array
    assert.is_false(ok)
    assert.truthy(err:find("map: expected an array, got a scalar expression", 1, true), err)
    assert.has_error(function() lacc.compile(3) end)
  end)
end)

describe("kernel cache #opt", function()
  it("rebuilds a corrupted cache file instead of loading it", function()
    local dir = os.getenv("LACC_CACHE")
    if not dir then return end   -- runtests.sh always sets it
    local x = seq(4, "i16", function(i) return i end)
    local p = lacc.map(function(v) return v * 3 + 2 end, x)
    local before = lacc.run(p):totable()
    local n = 0
    for name in io.popen('ls "' .. dir .. '"'):lines() do
      if name:match("^k%x+%.kso$") then
        -- replaced by rename, never rewritten in place: this process has it mapped
        local tmp = dir .. "/corrupt.tmp"
        local f = io.open(tmp, "wb")
        f:write("not an ELF file")
        f:close()
        assert(os.rename(tmp, dir .. "/" .. name))
        n = n + 1
        if n > 20 then break end
      end
    end
    assert.is_true(n > 0)
    -- a fresh process sees only the disk cache
    local cmd = ([[%s -e 'local lacc = require "lacc"; local x = lacc.fromtable({1,2,3,4}, "i16");
      io.write(table.concat(lacc.run(lacc.map(function(v) return v * 3 + 2 end, x)):totable(), ","))']])
      :format(H.vm)
    local h = io.popen(cmd .. " 2>&1")
    local out = h:read("a")
    h:close()
    assert.are.equal(table.concat(before, ","), out)
  end)

  it("keeps the disk cache within LACC_CACHE_MB, evicting the least recently used", function()
    local dir = os.tmpname()
    os.remove(dir)
    local function child(body, mb)
      local cmd = ([[%sLACC_CACHE='%s' %s -e 'local lacc = require "lacc"; local x = lacc.fromtable({1,2,3,4}, "i32");
        io.write(table.concat(lacc.run(lacc.map(function(v) return %s end, x)):totable(), ","))' 2>&1]])
        :format(mb and ("LACC_CACHE_MB=" .. mb .. " ") or "", dir, H.vm, body)
      local h = io.popen(cmd)
      local out = h:read("a")
      h:close()
      return out
    end
    local function kernels()
      local files = {}
      for name in io.popen(("ls '%s'"):format(dir)):lines() do
        if name:match("^k%x+%.kso$") then
          local h = io.popen(("stat -c %%s '%s/%s'"):format(dir, name))
          files[name] = tonumber(h:read("a"))
          h:close()
        end
      end
      return files
    end
    local function names(t)
      local r = {}
      for k in pairs(t) do r[#r + 1] = k end
      table.sort(r)
      return r
    end
    assert.are.equal("5,8,11,14", child("v * 3 + 2"))          -- A
    local a = names(kernels())
    assert.are.equal(1, #a)
    assert.are.equal("1,4,7,10", child("v * 3 - 2"))           -- B
    local ab = kernels()
    local b
    for k in pairs(ab) do if k ~= a[1] then b = k end end
    assert.truthy(b)
    assert.are.equal("5,8,11,14", child("v * 3 + 2"))          -- A again: now the newer
    -- C pushes the total past the limit: B, the least recently used, goes
    local mb = (ab[a[1]] + ab[b] + 4096) / 1048576
    assert.are.equal("6,12,18,24", child("v * 3 * 2", mb))
    local left = kernels()
    assert.truthy(left[a[1]], "A was used last before C: kept")
    assert.is_nil(left[b], "B was the least recently used")
    assert.are.equal(2, #names(left))
    -- a limit of 0 keeps no kernel on disk; everything still runs
    assert.are.equal("1,4,7,10", child("v * 3 - 2", 0))
    assert.are.equal(0, #names(kernels()))
    os.execute(("rm -rf '%s'"):format(dir))
  end)

  it("LACC_VERBOSE reports each first build, once, with the time it took", function()
    local dir = os.tmpname()
    os.remove(dir)
    local cmd = ([[LACC_VERBOSE=1 LACC_CACHE='%s' %s -e 'local lacc = require "lacc";
      local x = lacc.fromtable({1,2,3,4}, "i16"); for _ = 1, 2 do
      io.write(table.concat(lacc.run(lacc.map(function(v) return v * 5 - 1 end, x)):totable(), ","), ";") end' 2>&1]])
      :format(dir, H.vm)
    local function child()
      local h = io.popen(cmd)
      local out = h:read("a")
      h:close()
      return out
    end
    local first = child()
    local _, n = first:gsub("lacc: compiled kernels %(%d+ bytes of C, the longest loop %d+ " ..
                            "operations%) in [%d.]+ s", "")
    assert.are.equal(1, n, first)
    assert.truthy(first:find("4,9,14,19;4,9,14,19;", 1, true), first)
    assert.are.equal("4,9,14,19;4,9,14,19;", child())   -- from the disk cache: nothing to say
    os.execute(("rm -rf '%s'"):format(dir))
  end)

  it("compiles a program with a loop of over 800 operations at -O2, unless LACC_CFLAGS is set", function()
    local dir = os.tmpname()
    os.remove(dir)
    -- a chain of 330 steps of four operations in the element loop: gcc's vectorisers at
    -- -O3 take seconds
    local prog = [[local lacc = require "lacc"; local x = lacc.fromtable({1, 2, 3}, "f64")
      local p = lacc.map(function(v) local a, b = v, v * 0.5
        for _ = 1, 330 do a, b = a * 1.0001 + b, b - a * 0.0001 end return a + b end, x)
      io.write(string.format("%.17g;", lacc.run(p):get(2)))
      io.write(string.format("%.17g;", lacc.run(p, { backend = "interp" }):get(2)))]]
    local function child(env)
      local h = io.popen(("%s LACC_VERBOSE=1 LACC_CACHE='%s' %s -e '%s' 2>&1"):format(env, dir, H.vm, prog))
      local out = h:read("a")
      h:close()
      return out
    end
    local out = child("")
    assert.truthy(out:find("the longest loop %d+ operations, at %-O2%) in"), out)
    local got, want = out:match("([^;\n]+);([^;]+);$")
    assert.are.equal(want, got, out)
    out = child("LACC_CFLAGS=-O1")
    assert.truthy(out:find("the longest loop %d+ operations%) in"), out)
    assert.is_nil(out:find("-O2", 1, true), out)
    assert.are.equal(want, out:match("([^;\n]+);[^;]+;$"), out)
    os.execute(("rm -rf '%s'"):format(dir))
  end)

  it("a process whose Lua state closes after parallel work exits cleanly", function()
    -- closing the state unloads the C module; the pool's workers must not be left
    -- waiting in unmapped code (caught under make check-asan)
    local cmd = ([[%s -e 'local lacc = require "lacc"
      local a = lacc.run(lacc.generate({ 300000 }, function(i) return lacc.cast(i, "f64") end))
      io.write(lacc.run(lacc.sum(a)):get()); os.exit(0, true)' 2>&1; echo " rc=$?"]])
      :format(H.vm)
    for _ = 1, 3 do
      local h = io.popen(cmd)
      local out = h:read("a")
      h:close()
      assert.truthy(out:find("^45000150000%.?0? rc=0\n$"), out)
    end
  end)

  it("without a working compiler warns once and runs the interpreter", function()
    local cmd = ([[LACC_CC=/nonexistent/cc %s -e 'local lacc = require "lacc"; local x = lacc.fromtable({1,2,3,4}, "i16");
      for _ = 1, 2 do io.write(table.concat(lacc.run(lacc.map(function(v) return v * 3 + 2 end, x)):totable(), ","), ";") end']])
      :format(H.vm)
    local h = io.popen(cmd .. " 2>&1")
    local out = h:read("a")
    h:close()
    local _, warnings = out:gsub("no C compiler %('/nonexistent/cc' failed%)", "")
    assert.are.equal(1, warnings)
    assert.truthy(out:find("5,8,11,14;5,8,11,14;", 1, true))
  end)
end)
