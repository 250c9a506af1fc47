-- The OpenCL backend (issue 6): devices, device choice, and the paths that only large
-- arrays take (chunked folds and scans, parallel scatters), against the cpu backend and
-- plain Lua. Every other spec also runs on "opencl" when a device answers (helper.lua).
local H = require "helper"
local lacc = H.lacc

local devices = lacc.devices()
local function default_device()   -- the first GPU, else the first device
  for _, e in ipairs(devices) do if e.type == "gpu" then return e end end
  return devices[1]
end
local have = false
for _, b in ipairs(H.backends) do have = have or b == "opencl" end

-- Child processes of the OpenCL specs. Under make check-asan they inherit the sanitizers;
-- LeakSanitizer's exit-time tracer crashes in a short process that had PoCL compile a
-- kernel (PoCL's LLVM threads), so the children leave leak checking to the parents.
local lua = H.vm
local asan = os.getenv("ASAN_OPTIONS")
if asan then lua = ("ASAN_OPTIONS='%s:detect_leaks=0' %s"):format(asan, lua) end
local function output(cmd)   -- what cmd prints, stdout and stderr
  local h = io.popen(cmd .. " 2>&1")
  local out = h:read("a") or h:read("*a")
  h:close()
  return out
end

describe("explain with the OpenCL source", function()
  it("shows the one kernel, the functions behind its switch, and no shape function", function()
    local xs = lacc.fromtable({ 1, 2, 3 }, "f32")
    local text = lacc.explain(lacc.sum(lacc.map(function(v) return v * 2.5 end, xs)), { source = "opencl" })
    local _, kernels = text:gsub("__kernel void", "")
    assert.are.equal(1, kernels)
    assert.truthy(text:find("__kernel void lacc_main(", 1, true), text)
    assert.truthy(text:find("switch (which)", 1, true))
    assert.is_nil(text:find("out%[0%] ="))   -- shape functions run on the host
    local c = lacc.explain(lacc.sum(xs), { source = true })
    assert.is_nil(c:find("__kernel", 1, true))
  end)
end)

describe("lacc.devices", function()
  it("lists each device with its properties", function()
    assert.are.equal("table", type(devices))
    for i, d in ipairs(devices) do
      assert.are.equal(i, d.index)
      assert.truthy(#d.name > 0)
      assert.truthy(d.type == "cpu" or d.type == "gpu")
      assert.truthy(d.compute_units >= 1)
      assert.truthy(d.memory > 0)
      assert.are.equal("boolean", type(d.fp64))
      assert.truthy(d.version:find("OpenCL", 1, true))
    end
  end)
end)

if have then
  describe("opencl device choice", function()
    local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
    local p = lacc.map(function(v) return v * 2 end, xs)

    it("takes an index or part of a name", function()
      assert.are.same({ 2, 4, 6 }, lacc.run(p, { backend = "opencl", device = 1 }):totable())
      local part = devices[1].name:sub(2, 6):upper()
      assert.are.same({ 2, 4, 6 }, lacc.run(p, { backend = "opencl", device = part }):totable())
    end)

    it("says which devices there are when none matches", function()
      for _, dev in ipairs { #devices + 1, "no such device here" } do
        local ok, err = pcall(lacc.run, p, { backend = "opencl", device = dev })
        assert.is_false(ok)
        assert.truthy(err:find(devices[1].name, 1, true), err)
      end
      local ok, err = pcall(lacc.run, p, { backend = "opencl", device = {} })
      assert.is_false(ok)
      assert.truthy(err:find("device must be", 1, true), err)
    end)
  end)

  describe("opencl builds", function()
    local prog = [[local lacc = require "lacc"; local x = lacc.fromtable({1,2,3,4}, "i16");
      io.write(table.concat(lacc.run(lacc.map(function(v) return v * 3 + 2 end, x),
                                     {backend = "opencl"}):totable(), ","))]]

    local function child(env) return output(("%s %s -e '%s'"):format(env, lua, prog)) end

    it("a failed build is an error that shows the compiler's log", function()
      -- an option that breaks the generated source: the kernel helper's name
      local out = child("LACC_CL_OPTIONS='-D lacc_fail=1'")
      assert.truthy(out:find("opencl: build failed", 1, true), out)
      assert.truthy(out:find("error", 1, true), out)
    end)

    -- (POCL_KERNEL_CACHE=0: where PoCL caches programs itself lacc keeps no binary,
    -- cache_spec.lua)
    it("a fresh process finds the program in the disk cache", function()
      local dir = os.tmpname()
      os.remove(dir)
      local env = ("POCL_KERNEL_CACHE=0 LACC_CACHE='%s'"):format(dir)
      assert.are.equal("5,8,11,14", child(env))
      local files = 0
      for _ in io.popen(("ls '%s/opencl'"):format(dir)):lines() do files = files + 1 end
      assert.are.equal(1, files)
      assert.are.equal("5,8,11,14", child(env))
      os.execute(("rm -rf '%s'"):format(dir))
    end)

    it("folds as on a GPU: short chunks, then a work-group tree in local memory", function()
      -- LACC_CL_TREE=1 takes the GPU path on this device; the script checks the order
      -- of combination and compares with plain Lua and the cpu backend
      assert.are.equal("ok", output(("LACC_CL_TREE=1 %s spec/opencl_tree.lua"):format(lua)))
    end)

    it("runs contractions in work-group tiles, operands in local memory", function()
      -- work-group tiles on every device (LACC_CL_TILES=0 turns them off), after the cpu
      -- backend's lane tiles on a CPU device (LACC_CL_LANE_TILES=0 turns those off); the
      -- script compares with plain Lua loops and the interpreter, and LACC_VERBOSE=1 says
      -- which folds took which
      local off = output(("TILES_TYPES=f32,i64 LACC_CL_TILES=0 LACC_CL_LANE_TILES=0 LACC_VERBOSE=1 %s " ..
                          "spec/opencl_tiles.lua"):format(lua))
      assert.is_nil(off:find("tiles", 1, true), off)
      local out = output(("LACC_CL_LANE_TILES=0 LACC_VERBOSE=1 %s spec/opencl_tiles.lua"):format(lua))
      local lines, tiled = {}, {}
      for line in out:gmatch("[^\n]+") do
        local at = line:match("^lacc: opencl: the fold at spec/opencl_tiles%.lua:(%d+) runs in 16x16 work%-group tiles")
        if at then tiled[tonumber(at)] = true
        elseif not line:find("^lacc: ") then lines[#lines + 1] = line end
      end
      assert.are.equal("ok", table.concat(lines, "\n"))
      -- every spelling of the product, batched ones, and a read that may fail (its loop's
      -- checks tested once per block: the tiles run while they hold); not the read of
      -- both a row and a column
      local src, want = {}, {}
      for line in io.lines("spec/opencl_tiles.lua") do src[#src + 1] = line end
      for i, line in ipairs(src) do
        if line:find("-- tiled", 1, true) then want[i] = true end
      end
      for i in pairs(want) do assert.is_true(tiled[i] == true, "line " .. i .. " not tiled") end
      for i in pairs(tiled) do assert.is_true(want[i] == true, "line " .. i .. " tiled") end
    end)

    it("explain says how the device runs each step", function()
      local xs = lacc.fromtable({ { 3, 1, 2 }, { 6, 5, 4 } }, "f32")
      local p = { lacc.sum(xs, 1), lacc.map(function(x) return x + 1 end, xs), lacc.sort(xs),
                  lacc.scanl(function(a, b) return a + b end, 0, xs) }
      local text = lacc.explain(p, { backend = "opencl" })
      local d = default_device()
      local head = ("-- on OpenCL device '%s' (%s, %d compute units)"):format(d.name,
        d.type == "cpu" and "a CPU device" or "a GPU", d.compute_units)
      assert.truthy(text:find(head, 1, true), text)
      local after = text:sub((text:find(head, 1, true)))
      assert.truthy(after:find("(fold):\n", 1, true), text)
      assert.truthy(after:find("(map): " .. (d.type == "cpu" and "a few work-items per compute unit"
        or "one work-item per element"), 1, true), text)
      assert.truthy(after:find("(sort): per 8-bit digit a count, a scan and a scatter kernel", 1, true), text)
      assert.truthy(after:find("(scan): ", 1, true), text)
      -- the cpu plan (no backend) says nothing of a device; the work-group tree on demand
      assert.is_nil(lacc.explain(p):find("-- on OpenCL", 1, true))
      local script = "local lacc = require 'lacc'; local xs = lacc.fromtable({1, 2, 3}, 'f32'); " ..
        "io.write((lacc.explain(lacc.sum(xs), { backend = 'opencl' })))"
      local tree = output(("LACC_CL_TREE=1 %s -e \"%s\""):format(lua, script))
      assert.truthy(tree:find("combined in order by a work-group tree in local memory", 1, true), tree)
      assert.has_error(function() lacc.explain(p, { backend = "opencl", device = "no such device" }) end)
    end)

    it("runs folds in the cpu backend's tiles on a CPU device", function()
      local out = output(("LACC_VERBOSE=1 %s spec/opencl_tiles.lua"):format(lua))
      local lines, lanes = {}, {}
      for line in out:gmatch("[^\n]+") do
        local at = line:match("^lacc: opencl: the fold at spec/opencl_tiles%.lua:(%d+) runs in tiles of %d+ "
                              .. "outputs, one per vector lane")
        if at then lanes[#lanes + 1] = tonumber(at)
        elseif not line:find("^lacc: ") then lines[#lines + 1] = line end
      end
      assert.are.equal("ok", table.concat(lines, "\n"))
      if default_device().type ~= "gpu" then assert.is_true(#lanes >= 2, out) end   -- products, column sums
    end)

    it("runs as on a device without f64 and 64-bit atomics", function()
      assert.are.equal("ok", output(("LACC_CL_NO_FP64=1 LACC_CL_NO_I64_ATOMICS=1 %s spec/opencl_lesser.lua")
        :format(lua)))
    end)

    it("computes f32 exp and log with lacc's own code on a CPU device, the built-ins on demand", function()
      -- spec/opencl_math.lua: within 1 ulp of the exact values (lacc's code), 3 (built-ins)
      local d = default_device()
      local mine = d.type == "cpu"
      -- built as users build it (the suite's LACC_CL_OPTIONS=-cl-opt-disable would keep
      -- the loop scalar, not what runs)
      assert.are.equal(mine and "ok own" or "ok built-ins",
                       output(("LACC_CL_OPTIONS= %s spec/opencl_math.lua"):format(lua)))
      assert.are.equal("ok built-ins", output(("LACC_CL_OWN_MATH=0 %s spec/opencl_math.lua"):format(lua)))
      local xs = lacc.fromtable({ 1, 2 }, "f32")
      local text = lacc.explain(lacc.map(lacc.exp, xs), { backend = "opencl" })
      assert.are.equal(mine, text:find("-- f32 exp and log", 1, true) ~= nil and
                             text:find(": lacc's own straight-line code", 1, true) ~= nil, text)
      -- the rest where the device has f64
      local rest = "exp2, log2, log10, log1p, expm1, sinh, cosh, tanh, sin, cos, tan, atan, atan2 and pow, f64 " ..
                   "exp, exp2, log, log2, log10, log1p, expm1, sinh, cosh, tanh, sin, cos, tan, atan, atan2 and pow: " ..
                   "lacc's own"
      assert.are.equal(mine and d.fp64, text:find(rest, 1, true) ~= nil, text)
    end)

    it("runs lane tiles and argmins built with optimisation as the interpreter does", function()
      assert.are.equal("ok", output(("LACC_CL_OPTIONS= %s spec/opencl_opt.lua"):format(lua)))
    end)

    it("tells the OpenCL compiler that a fold's test usually keeps the accumulator", function()
      local xs = lacc.fromtable({ 3, 1, 2 }, "f32")
      local function keeps(f)
        local src = lacc.explain(lacc.fold(f, lacc.constant(0, "f32"), xs), { source = "opencl" })
        local n = 0
        for _ in src:gmatch("LACC_EXPECT%(v%d+, 0%)") do n = n + 1 end
        return n
      end
      -- a max keeps it when the element is not larger; a sum has no test; a test whose
      -- arms both compute something new gets no hint
      assert.is_true(keeps(function(a, b) return lacc.cond(lacc.gt(b, a), b, a) end) > 0)
      assert.are.equal(0, keeps(function(a, b) return a + b end))
      assert.are.equal(0, keeps(function(a, b) return lacc.cond(lacc.gt(b, a), b - a, a + b) end))
      -- and the cpu backend's C is as before: gcc keeps such a branch unasked
      local c = lacc.explain(lacc.fold(function(a, b) return lacc.cond(lacc.gt(b, a), b, a) end,
                                       lacc.constant(0, "f32"), xs), { source = true, backend = "cpu" })
      assert.is_falsy(c:find("EXPECT", 1, true))
    end)

    it("LACC_VERBOSE reports a first build, once", function()
      local dir = os.tmpname()
      os.remove(dir)
      local env = ("POCL_KERNEL_CACHE=0 LACC_VERBOSE=1 LACC_CACHE='%s'"):format(dir)
      local out = child(env)
      local _, n = out:gsub("lacc: built an OpenCL program %(%d+ bytes%) for [^\n]* in [%d.]+ s", "")
      assert.are.equal(1, n, out)
      assert.truthy(out:find("5,8,11,14", 1, true), out)
      assert.are.equal("5,8,11,14", child(env))
      os.execute(("rm -rf '%s'"):format(dir))
    end)

    it("without an OpenCL platform the backend says so", function()
      local out = child("OCL_ICD_VENDORS=/nonexistent")
      assert.truthy(out:find("opencl", 1, true) and out:find("platform", 1, true), out)
    end)
  end)

  describe("opencl on large arrays", function()
    local cl, cpu = { backend = "opencl" }, { backend = "cpu" }
    local n = 300007   -- odd, above the sizes where rows split into chunks

    local function big(ty, f)
      return lacc.generate({ n }, function(i) return lacc.cast(f(i), ty) end)
    end

    it("folds and scans a few long rows in chunks", function()
      local xs = big("i64", function(i) return (i * 7919) % 1000 - 500 end)
      local want = 0
      for i = 1, n do want = want + (i * 7919) % 1000 - 500 end
      assert.are.equal(want, H.num(lacc.run(lacc.sum(xs), cl):get()))
      local s = lacc.run(lacc.scanl1(function(a, b) return a + b end, xs), cl)
      local r = lacc.run(lacc.scanl1(function(a, b) return a + b end, xs), cpu)
      assert.are.equal(n, s:size())
      for _, i in ipairs { 1, 2, 65536, 65537, 150000, n } do
        assert.are.equal(H.num(r:get(i)), H.num(s:get(i)))
      end
      assert.are.equal(want, H.num(s:get(n)))
      -- a non-commutative, associative function: order must hold across chunks
      local pairs_ = lacc.map(function(v) return lacc.tuple(v, lacc.constant(1, "i64")) end, xs)
      local c1 = lacc.run(lacc.fold1(function(a, b) return lacc.tuple(a[1] * b[2] + b[1], a[2] * b[2]) end,
                                     pairs_), cl):get()
      local c2 = lacc.run(lacc.fold1(function(a, b) return lacc.tuple(a[1] * b[2] + b[1], a[2] * b[2]) end,
                                     pairs_), cpu):get()
      assert.are.same({ H.num(c2[1]), H.num(c2[2]) }, { H.num(c1[1]), H.num(c1[2]) })
    end)

    it("scatters many elements in parallel, with every combination counted", function()
      local bins = 70001
      local xs = big("i32", function(i) return (i * 31) % bins end)
      local ones = lacc.map(function() return lacc.constant(1, "i32") end, xs)
      for _, ty in ipairs { "i32", "f64", "i16", "u8" } do
        local o = lacc.map(function(v) return lacc.cast(v, ty) end, ones)
        local h = lacc.permute(function(a, b) return a + b end,
                               lacc.fill({ bins }, lacc.constant(0, ty)),
                               function(i) return xs[i] + 1 end, o)
        local got = lacc.run(h, cl)
        local want = lacc.run(h, cpu)
        local total = 0
        for i = 1, bins, 997 do assert.are.equal(H.num(want:get(i)), H.num(got:get(i)), ty) end
        for i = 1, bins do total = total + H.num(got:get(i)) end
        -- u8 wraps: each bin gets 4 or 5 elements, so no bin overflows
        assert.are.equal(n, total, ty)
      end
    end)

    it("reports the failing element with the smallest index, as the cpu backend does", function()
      local xs = big("i32", function(i) return i end)
      local p = lacc.map(function(v)
        return lacc.idiv(v, lacc.cond(lacc.gt(v, 200000), lacc.constant(0, "i32"), lacc.constant(1, "i32")))
      end, xs)
      local ok1, e1 = pcall(lacc.run, p, cl)
      local ok2, e2 = pcall(lacc.run, p, cpu)
      assert.is_false(ok1)
      assert.is_false(ok2)
      assert.are.equal(e2, e1)
      -- a rank-0 result, read with the failure record of the step that made it
      local s = lacc.sum(p)
      ok1, e1 = pcall(lacc.run, s, cl)
      ok2, e2 = pcall(lacc.run, s, cpu)
      assert.is_false(ok1)
      assert.is_false(ok2)
      assert.are.equal(e2, e1)
      local q = lacc.backpermute({ n }, function(i) return lacc.cond(lacc.gt(i, 250000), i + n, i) end, xs)
      ok1, e1 = pcall(lacc.run, q, cl)
      ok2, e2 = pcall(lacc.run, q, cpu)
      assert.is_false(ok1)
      assert.is_false(ok2)
      assert.are.equal(e2, e1)
    end)
  end)

  describe("opencl: arrays kept on the device", function()
    local cl = { backend = "opencl" }
    local function moved()
      local t = lacc.transfers()
      return t.uploads, t.downloads, t.bytes_up, t.bytes_down
    end
    local function delta(before)
      local u, d, bu, bd = moved()
      return { u - before[1], d - before[2], bu - before[3], bd - before[4] }
    end
    local function now() return { moved() } end
    -- odd sizes, the empty array, NaN and infinities among the values
    local function data(n)
      local t = {}
      for i = 1, n do t[i] = H.rand() * 200 - 100 end
      if n >= 3 then t[2], t[3] = 0 / 0, -math.huge end
      return t
    end

    it("reads results back only when the host reads them, and uploads an input once", function()
      for _, n in ipairs { 0, 1, 7, 1001 } do
        local src = data(n)
        local xs = lacc.fromtable(src, "f64")
        local before = now()
        local b = lacc.run(lacc.map(function(v) return v * 2 end, xs), cl)
        local c = lacc.run(lacc.map(function(v) return v + 1 end, b), cl)
        local again = lacc.run(lacc.map(function(v) return v - 1 end, xs), cl)
        -- xs went up once; b, c and again have not come back
        assert.are.same({ 1, 0, 8 * n, 0 }, delta(before), "n = " .. n)
        for i = 1, n do
          assert.truthy(H.same(src[i] * 2 + 1, c:get(i)), i)
          assert.truthy(H.same(src[i] - 1, again:get(i)), i)
        end
        local read = n > 0 and 1 or 0     -- an empty array has nothing to read
        assert.are.same({ 1, 2 * read, 8 * n, 16 * n }, delta(before))
        for i = 1, n do assert.truthy(H.same(src[i] * 2, b:get(i)), i) end
        assert.are.same({ 1, 3 * read, 8 * n, 24 * n }, delta(before))
      end
    end)

    it("reads a rank-0 result back with its run, and only that", function()
      H.seed(41)
      for _, n in ipairs { 0, 1, 7, 1001, 70001 } do
        -- whole numbers (the sums are exact in any order), a NaN in one case
        local src = {}
        for i = 1, n do src[i] = H.randint(-1000, 1000) end
        if n == 7 then src[3] = 0 / 0 end
        local xs = lacc.fromtable(src, "f64")
        local want = 0
        for i = 1, n do want = want + src[i] * 2 end
        local before = now()
        local ys = lacc.map(function(v) return v * 2 end, xs)
        local s, t = lacc.run({ lacc.sum(ys), lacc.fold(function(a, b) return a + b end, 1, ys) }, cl)
        -- both came back with the run: two downloads of 8 bytes
        assert.are.same({ 1, 2, 8 * n, 16 }, delta(before), "n = " .. n)
        assert.truthy(H.same(want, s:get()), n)
        assert.truthy(H.same(want + 1, t:get()), n)
        assert.are.same({ 1, 2, 8 * n, 16 }, delta(before), "read, n = " .. n)
        -- still on the device: a later run takes it from there, and its rank-1 result
        -- stays there until read
        local again = lacc.run(lacc.map(function(v) return v + 1 end, lacc.reshape({ 1 }, s)), cl)
        assert.are.same({ 1, 2, 8 * n, 16 }, delta(before), "used, n = " .. n)
        assert.truthy(H.same(want + 1, again:get(1)), n)
        assert.are.same({ 1, 3, 8 * n, 24 }, delta(before), "rank 1, n = " .. n)
        -- a pair: one download of both its buffers
        local idx = lacc.generate({ n }, function(i) return lacc.cast(i, "i32") end)
        local p = lacc.run(lacc.fold(function(a, b) return lacc.tuple(a[1] + b[1], lacc.max(a[2], b[2])) end,
                                     lacc.tuple(lacc.constant(0, "f64"), lacc.constant(-1, "i32")),
                                     lacc.zip(ys, idx)), cl)
        assert.are.same({ 1, 4, 8 * n, 24 + 12 }, delta(before), "pair, n = " .. n)
        local pv = p:get()
        assert.truthy(H.same(want, pv[1]), n)
        assert.are.equal(n > 0 and n or -1, H.num(pv[2]))
      end
    end)

    it("sees what the host wrote into an array after the device copied it", function()
      local xs = lacc.fromtable({ 1, 2, 3, 4, 5 }, "i32")
      local double = function(a) return lacc.map(function(v) return v * 2 end, a) end
      local b = lacc.run(double(xs), cl)
      xs[1] = 100                       -- an uploaded input
      assert.are.same({ 200, 4, 6, 8, 10 }, lacc.run(double(xs), cl):totable())
      b[5] = -7                         -- a result still on the device: read, then written
      assert.are.same({ 4, 8, 12, 16, -14 }, lacc.run(double(b), cl):totable())
      assert.are.same({ 2, 4, 6, 8, -7 }, b:totable())
    end)

    it("gives device results to the other backends with their values", function()
      local src = data(13)
      local xs = lacc.fromtable(src, "f64")
      local pair = lacc.run(lacc.map(function(v) return lacc.tuple(v * 3, lacc.cast(lacc.floor(v), "i32")) end,
                                     lacc.reshape({ 13 }, xs)), cl)
      for _, b in ipairs { "interp", "cpu" } do
        local r = lacc.run(lacc.map(function(t) return t[1] + lacc.cast(t[2], "f64") end, pair), { backend = b })
        for i = 1, 13 do
          local want = src[i] ~= src[i] and src[i] or src[i] * 3 + math.max(-2^31, math.min(2^31 - 1, math.floor(src[i])))
          if src[i] == src[i] and src[i] ~= -math.huge then assert.truthy(H.same(want, r:get(i)), b .. " " .. i) end
        end
      end
    end)

    it("keeps sum types in every layout on the device", function()
      local T = lacc.Either("i32", "f32")
      for _, layout in ipairs { "unboxed", "rtu", "compact" } do
        local opts = { backend = "opencl", layout = layout }
        local xs = lacc.fromtable({ 1, -2, 3, -4, 5 }, "i32")
        local ms = lacc.run(lacc.map(function(v)
          return lacc.cond(lacc.gt(v, 0), T.Left(v * 10), T.Right(lacc.cast(v, "f32") * 0.5))
        end, xs), opts)
        local flipped = lacc.run(lacc.map(function(m)
          return lacc.match(m, { Left = function(v) return T.Right(lacc.cast(v, "f32")) end,
                                 Right = function(f) return T.Left(lacc.cast(f, "i32")) end })
        end, ms), opts)
        assert.are.same({ { tag = "Right", 10 }, { tag = "Left", -1 }, { tag = "Right", 30 },
                          { tag = "Left", -2 }, { tag = "Right", 50 } }, flipped:totable(), layout)
        assert.are.same({ { tag = "Left", 10 }, { tag = "Right", -1 }, { tag = "Left", 30 },
                          { tag = "Right", -2 }, { tag = "Left", 50 } }, ms:totable(), layout)
      end
    end)

    it("runs a compiled function on the same input without copying it again", function()
      local f = lacc.compile(function(a) return lacc.sum(a) end, cl)
      local xs = lacc.fromtable(data(1001), "f64")
      local want = lacc.run(lacc.sum(xs), { backend = "cpu" }):get()
      local before = now()
      for _ = 1, 3 do assert.truthy(H.same(want, f(xs):get(), 1e-12)) end
      local d = delta(before)
      assert.are.equal(1, d[1])
      assert.are.equal(3, d[2])         -- the three sums, one element each
      assert.are.equal(3 * 8, d[4])
    end)

    it("keeps an awhile loop's array on the device between iterations", function()
      local n = 4096
      local xs = lacc.generate({ n }, function(i) return lacc.cast(i, "i64") end)
      local p = lacc.awhile(function(a) return lacc.lt(lacc.the(lacc.maximum(a)), 100000) end,
                            function(a) return lacc.map(function(v) return v * 2 end, a) end, xs)
      local before = now()
      local r = lacc.run(p, cl)
      local d = delta(before)
      -- 4096 doubles 5 times to pass 100000: six conditions read back, one byte each
      assert.are.same({ 0, 6, 0, 6 }, d)
      for _, i in ipairs { 1, 2, 777, n } do assert.are.equal(i * 32, H.num(r:get(i))) end
    end)
  end)
end

if have then
  describe("opencl: the device-memory pool", function()
    local cl = { backend = "opencl" }
    local n = 50000
    local x = lacc.run(lacc.generate({ n }, function(i) return lacc.cast(i, "f32") end), cl)

    it("gives a loop of runs the buffers of the last: no new device buffer after the first", function()
      local p = lacc.map(function(v) return v * 2 + 1 end, x)
      lacc.run(p, cl):free()
      local before = lacc.device_memory()
      for _ = 1, 10 do
        local r = lacc.run(p, cl)
        assert.are.equal(3, r[1])
        assert.are.equal(2 * n + 1, r[n])
        r:free()
      end
      local after = lacc.device_memory()
      assert.are.equal(before.made, after.made)
      assert.is_true(after.reused >= before.reused + 30, after.reused - before.reused)   -- result, extents, failure record
      assert.is_true(after.pooled > 0 and after.pooled <= after.limit)
      assert.is_true(after.buffers >= 3)
    end)

    it("never hands a live result's buffer to another array", function()
      local keep = {}
      for i = 1, 8 do keep[i] = lacc.run(lacc.map(function(v) return v + i end, x), cl) end
      for i = 1, 8, 2 do keep[i]:free() end
      for i = 9, 12 do keep[i] = lacc.run(lacc.map(function(v) return v * i end, x), cl) end
      for i = 2, 12 do
        if i > 8 or i % 2 == 0 then
          for _, at in ipairs { 1, 777, n } do
            assert.are.equal(i > 8 and at * i or at + i, keep[i][at], ("result %d at %d"):format(i, at))
          end
        end
      end
    end)

    local prog = [[local lacc = require "lacc"; local cl = {backend = "opencl"}
      local x = lacc.run(lacc.generate({1000000}, function(i) return i end), cl)
      local p = lacc.map(function(v) return v * 3 end, x)
      local made = lacc.device_memory().made
      for _ = 1, 4 do
        local r = lacc.run(p, cl)
        assert(r[1] == 3 and r[1000000] == 3000000, "wrong values")
        r:free()
        local m = lacc.device_memory()
        assert(m.pooled <= m.limit, "over the bound")
      end
      local m = lacc.device_memory()
      io.write(("%d %d %d"):format(m.made - made, m.reused, m.limit))]]

    it("keeps no more than LACC_CL_POOL_MB", function()
      -- 8 MB results with a bound of 1 MB: each run makes its result's buffer anew
      local made, _, limit = output(("LACC_CL_POOL_MB=1 %s -e '%s'"):format(lua, prog)):match("^(%d+) (%d+) (%d+)$")
      assert.are.equal(1048576, tonumber(limit))
      assert.is_true(tonumber(made) >= 4, made)
    end)

    it("empties itself and tries again when an allocation fails", function()
      -- LACC_CL_POOL_TEST_FAIL=1: an allocation fails while the pool holds buffers. A
      -- freed 16 MB array fills the pool; the next run's 8 MB result does not fit it, so
      -- its allocation fails, the pool is emptied and the allocation made again
      local fill = [[local lacc = require "lacc"; local cl = {backend = "opencl"}
        local x = lacc.run(lacc.generate({1000000}, function(i) return i end), cl)
        lacc.run(lacc.generate({2000000}, function(i) return i end), cl):free()
        local m0 = lacc.device_memory()
        local r = lacc.run(lacc.map(function(v) return v * 3 end, x), cl)
        assert(r[1] == 3 and r[1000000] == 3000000, "wrong values")
        local m1 = lacc.device_memory()
        io.write(("%d %d %d"):format(m0.pooled, m1.pooled, m1.made - m0.made))]]
      for _, failing in ipairs { true, false } do
        local out = output(("%s %s -e '%s'"):format(failing and "LACC_CL_POOL_TEST_FAIL=1" or "", lua, fill))
        local before, after, made = out:match("^(%d+) (%d+) (%d+)$")
        assert.truthy(before, out)
        assert.is_true(tonumber(before) >= 16000000, out)
        assert.is_true(tonumber(made) >= 1, out)
        if failing then assert.is_true(tonumber(after) < 1000000, out)   -- emptied
        else assert.is_true(tonumber(after) >= 16000000, out) end        -- kept
      end
    end)
  end)
end
