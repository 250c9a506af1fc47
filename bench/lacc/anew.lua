-- What a program built anew costs, each call: lacc.run of a map, a dot product, a 3x3
-- stencil and a scan of a few elements, each program traced and simplified again every
-- call (its plan and kernels found: programs of one shape), as a loop that writes
-- `lacc.run(lacc.map(f, xs))` builds them; and two whose constants change every call
-- (coef: a map of 64 elements by a coefficient t, a time step's; size: a generate of
-- 60-315 elements), which find the plan of another value on the cpu backend; and
-- composite combinators (built of others): a filter of 64, a matmul of 8 x 8, a take of a
-- reverse of a transpose of 8 x 8. Prints each one's median over BENCH_REPS samples
-- (default 7, after a warm-up sample) of CALLS calls (default 5000), in us a call; with
-- BENCH_COUNT=1, the Lua VM instructions a call runs instead (count hook, 20 calls after
-- 3: a measure a busy machine does not move).
-- Usage: lua5.4 bench/lacc/anew.lua (or luajit), with bench/README.md's LUA_PATH.
local lacc = require "lacc"
local B = require "benchlib"
local calls = tonumber(os.getenv("BENCH_CALLS") or "") or 5000
local reps = tonumber(os.getenv("BENCH_REPS") or "") or 7
local xs = lacc.fromtable({ 2.5 }, "f32")
local x = lacc.run(lacc.generate({ 64 }, function(i) return lacc.cast(i, "f64") end))
local y = lacc.run(lacc.generate({ 64 }, function(i) return lacc.cast(i, "f64") end))
local img = lacc.run(lacc.generate({ 8, 8 }, function(i, j) return lacc.cast(i + j, "f64") end))
local cases = {
  { "map", function() return lacc.run(lacc.map(function(v) return v * 3 + 7 end, xs)) end },
  { "dot", function() return lacc.run(lacc.sum(lacc.zipWith(function(u, v) return u * v end, x, y))) end },
  { "stencil", function()
    return lacc.run(lacc.stencil(function(a, b, c, d, e, f, g, h, i)
      return (a + b + c + d + e + f + g + h + i) / 9
    end, "clamp", img))
  end },
  { "scan", function() return lacc.run(lacc.scanl(function(a, b) return a + b end, 0, x)) end },
}
local k = 0
cases[#cases + 1] = { "coef", function()
  k = k + 1
  local t = 0.5 + k / 1024
  return lacc.run(lacc.map(function(v) return v * t + 7 end, x))
end }
cases[#cases + 1] = { "size", function()
  k = k + 1
  return lacc.run(lacc.generate({ 60 + k % 256 }, function(i) return lacc.cast(i, "f64") * 0.5 end))
end }
cases[#cases + 1] = { "filter", function()
  return lacc.run((lacc.filter(function(v) return lacc.gt(v, 3) end, x)))
end }
cases[#cases + 1] = { "matmul", function() return lacc.run(lacc.matmul(img, img)) end }
cases[#cases + 1] = { "rearrange", function()
  return lacc.run(lacc.take(5, lacc.reverse(lacc.transpose(img))))
end }
if os.getenv("BENCH_COUNT") == "1" then
  local out = {}
  for _, c in ipairs(cases) do
    for _ = 1, 3 do c[2]() end
    local n = 0
    debug.sethook(function() n = n + 1 end, "", 1)
    for _ = 1, 20 do c[2]() end
    debug.sethook()
    out[#out + 1] = ("%s %d"):format(c[1], math.floor(n / 20))
  end
  print((jit and jit.version or _VERSION) .. ", VM instructions a call built anew: " .. table.concat(out, ", "))
  return
end
local out = {}
for _, c in ipairs(cases) do
  local f, times = c[2], {}
  for rep = 0, reps do
    local t0 = B.now()
    for _ = 1, calls do f() end
    if rep > 0 then times[#times + 1] = (B.now() - t0) / calls * 1e6 end
  end
  table.sort(times)
  out[#out + 1] = ("%s %.1f"):format(c[1], times[math.floor((#times + 1) / 2)])
end
print((jit and jit.version or _VERSION) .. ", us a call built anew: " .. table.concat(out, ", "))
