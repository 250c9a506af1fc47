-- Run by opencl_spec.lua in a process of its own with LACC_CL_NO_FP64=1 and
-- LACC_CL_NO_I64_ATOMICS=1: the opencl backend as on a device without cl_khr_fp64 and
-- without 64-bit atomics (kernels built without either). Prints "ok" or what differed.
local lacc = require "lacc"
local H = require "helper"
local cl, cpu = { backend = "opencl" }, { backend = "cpu" }
local bad = {}
local function check(what, ok, detail)
  if not ok then bad[#bad + 1] = what .. (detail and (": " .. tostring(detail)) or "") end
end

-- f32 and integer programs run; their values are the cpu backend's
local n = 300007
local src = {}
for i = 1, 1001 do src[i] = H.f32((i * 37 % 101) / 7 - 5) end
local xs = lacc.fromtable(src, "f32")
local ys = lacc.run(lacc.map(function(v) return v * 3 + 1 end, xs), cl)
for i = 1, 1001 do check("map f32 " .. i, H.same(H.f32(H.f32(src[i] * 3) + 1), ys:get(i)), ys:get(i)) end
local s1 = lacc.run(lacc.sum(lacc.map(function(v) return lacc.cast(v * 4, "i32") end, xs)), cl):get()
local s2 = lacc.run(lacc.sum(lacc.map(function(v) return lacc.cast(v * 4, "i32") end, xs)), cpu):get()
check("sum i32", H.same(s2, s1), s1)

-- f64 is refused with a message that says why
local ok, err = pcall(lacc.run, lacc.map(function(v) return lacc.cast(v, "f64") * 2 end, xs), cl)
check("f64 refused", not ok and tostring(err):find("cl_khr_fp64", 1, true), err)

-- a scatter of 64-bit counts (no 64-bit compare-and-swap: in order), onto many targets
local bins = 70001
local big = lacc.generate({ n }, function(i) return lacc.cast((i * 31) % bins, "i32") end)
local ones = lacc.map(function() return lacc.constant(1, "i64") end, big)
local h = lacc.permute(function(a, b) return a + b end, lacc.fill({ bins }, lacc.constant(0, "i64")),
                       function(i) return big[i] + 1 end, ones)
local got, want = lacc.run(h, cl), lacc.run(h, cpu)
local total = 0
for i = 1, bins do
  total = total + H.num(got:get(i))
  if i % 997 == 1 then check("histogram bin " .. i, H.same(want:get(i), got:get(i)), got:get(i)) end
end
check("histogram total", total == n, total)

-- failures: the lowest failing element, as on the cpu backend, though the failure record
-- keeps the first to arrive (the step runs again in order)
local iota = lacc.generate({ n }, function(i) return lacc.cast(i, "i32") end)
-- from the last element of the first of 16 chunks on (the chunks of two compute units):
-- the second chunk's work-item may record its failure before the first's
local from = math.floor(n / 16) - 1
local p = lacc.map(function(v)
  return lacc.idiv(v, lacc.cond(lacc.ge(v, from), lacc.constant(0, "i32"), lacc.constant(1, "i32")))
end, iota)
local ok1, e1 = pcall(lacc.run, p, cl)
local ok2, e2 = pcall(lacc.run, p, cpu)
check("division by zero fails", not ok1 and not ok2)
check("division by zero message", e1 == e2, tostring(e1) .. " / " .. tostring(e2))
local q = lacc.backpermute({ n }, function(i) return lacc.cond(lacc.gt(i, 250000), i + n, i) end, iota)
ok1, e1 = pcall(lacc.run, q, cl)
ok2, e2 = pcall(lacc.run, q, cpu)
check("out of bounds message", not ok1 and not ok2 and e1 == e2, tostring(e1) .. " / " .. tostring(e2))
local r = lacc.fold(function(a, b)
  return lacc.idiv(a + b, lacc.cond(lacc.gt(b, 250000), lacc.constant(0, "i32"), lacc.constant(1, "i32")))
end, lacc.constant(0, "i32"), iota)
ok1, e1 = pcall(lacc.run, r, cl)
ok2, e2 = pcall(lacc.run, r, cpu)
check("fold failure message", not ok1 and not ok2 and e1 == e2, tostring(e1) .. " / " .. tostring(e2))
-- and the backend keeps working
check("after failures", H.same(3, lacc.run(lacc.sum(lacc.fromtable({ 1, 2 }, "i32")), cl):get()))

io.write(#bad == 0 and "ok" or table.concat(bad, "\n"))
