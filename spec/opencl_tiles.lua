-- Run by opencl_spec.lua in processes of their own with LACC_VERBOSE=1: with
-- LACC_CL_LANE_TILES=0, contractions on the opencl backend run in work-groups of 16 x 16
-- outputs, the operands staged in local memory block by block, on any device (the lines
-- marked "tiled"; with LACC_CL_TILES=0 too, none); by default a CPU device runs folds
-- that have them in the cpu backend's tiles, one output per vector lane.
-- Compares with plain Lua loops and the interpreter, bit for bit (each output is still
-- folded in order). Prints "ok" or what differed.
local lacc = require "lacc"
local H = require "helper"
local cl = { backend = "opencl" }
local bad = {}
local function fail(fmt, ...) bad[#bad + 1] = fmt:format(...) end

local mat, host, product_ref = H.small_mat, H.host_mat, H.product_ref
local function compare(got, want, what)
  for i = 1, #want do
    for j = 1, #want[i] do
      if H.num(got[i][j]) ~= H.num(want[i][j]) then
        fail("%s: [%d][%d] is %s, expected %s", what, i, j, tostring(got[i][j]), tostring(want[i][j]))
        return
      end
    end
  end
end

local spellings = {
  matmul = lacc.matmul,
  replicate = function(a, b)
    local n, m = lacc.shape(a)[1], lacc.shape(b)[2]
    return lacc.fold(function(x, y) return x + y end, 0,
      lacc.zipWith(function(x, y) return x * y end, lacc.replicate({ lacc.all, m, lacc.all }, a),
                   lacc.replicate({ n, lacc.all, lacc.all }, lacc.transpose(b))))
  end,
  generate = function(a, b)
    local s, t = lacc.shape(a), lacc.shape(b)
    return lacc.fold(function(x, y) return x + y end, 0,
      lacc.generate({ s[1], t[2], s[2] }, function(i, j, k) return a:at(i, k) * b:at(k, j) end))
  end,
}

-- sizes around the tile (16) and its blocks of k; outputs below 256 run without tiles
-- the element types of the products (TILES_TYPES, a list: the run with tiles off takes two
-- of them, as make test's time asks: the untiled folds are the ones every other spec runs)
local TYPES = {}
for t in (os.getenv("TILES_TYPES") or "f32,i32,f64,i64,u8"):gmatch("[^,]+") do TYPES[#TYPES + 1] = t end

local cases = { { 16, 0, 16 }, { 16, 1, 16 }, { 17, 15, 33 }, { 33, 16, 17 }, { 20, 17, 40 },
                { 1, 40, 300 }, { 300, 3, 1 }, { 37, 29, 41 }, { 5, 9, 7 } }
for name, spell in pairs(spellings) do
  for _, c in ipairs(cases) do
    local n, k, m = c[1], c[2], c[3]
    local A, B = mat(n, k, 2), mat(k, m, 5)
    for _, t in ipairs(TYPES) do
      local got = lacc.run(spell(host(A, n, k, t), host(B, k, m, t)), cl) -- tiled
      local want = product_ref(A, B, n, k, m)
      if t == "u8" then
        for i = 1, n do for j = 1, m do want[i][j] = want[i][j] % 256 end end
      end
      compare(got:totable(), want, ("%s %dx%d times %dx%d %s"):format(name, n, k, k, m, t))
    end
  end
end

-- float sums: the interpreter's, bit for bit
H.seed(23)
for _, t in ipairs { "f32", "f64" } do
  local n, k, m = 40, 70, 35
  local A, B = {}, {}
  for i = 1, n do A[i] = {} for q = 1, k do A[i][q] = H.rand() * 2 - 1 end end
  for q = 1, k do B[q] = {} for j = 1, m do B[q][j] = H.rand() * 1e3 - 500 end end
  local a, b = lacc.fromtable(A, t), lacc.fromtable(B, t)
  for name, spell in pairs(spellings) do
    local p = spell(a, b) -- tiled
    compare(lacc.run(p, cl):totable(), lacc.run(p, { backend = "interp" }):totable(), name .. " " .. t)
  end
end

-- a function that is neither associative nor commutative: each output in order
do
  local n, k, m = 19, 21, 21   -- 3^21 keeps every value exact in a double (LuaJIT)
  local A, B = mat(n, k, 3), mat(k, m, 7)
  local a, b = lacc.fromtable(A, "i64"), lacc.fromtable(B, "i64")
  local p = lacc.fold(function(acc, x) return acc * 3 + x end, 1, -- tiled
    lacc.generate({ n, m, k }, function(i, j, q) return a:at(i, q) - b:at(q, j) end))
  local want = {}
  for i = 1, n do
    want[i] = {}
    for j = 1, m do
      local s = 1
      for q = 1, k do s = s * 3 + (A[i][q] - B[q][j]) end
      want[i][j] = s
    end
  end
  compare(lacc.run(p, cl):totable(), want, "acc * 3 + x")
end

-- batched products (rank 3), and reads of neither operand (the same for the whole group)
do
  local A, B = { mat(18, 9, 2), mat(18, 9, 3) }, { mat(9, 20, 5), mat(9, 20, 6) }
  local got = lacc.run(lacc.matmul(lacc.fromtable(A, "f64"), lacc.fromtable(B, "f64")), cl):totable() -- tiled
  for t = 1, 2 do compare(got[t], product_ref(A[t], B[t], 18, 9, 20), "batch " .. t) end
  local A2, B2, w = mat(20, 11, 4), mat(11, 24, 8), {}
  for q = 1, 11 do w[q] = q - 6 end
  local a, b, v = lacc.fromtable(A2, "i32"), lacc.fromtable(B2, "i32"), lacc.fromtable(w, "i32")
  local p = lacc.fold(function(x, y) return x + y end, 0, -- tiled
    lacc.generate({ 20, 24, 11 }, function(i, j, q) return a:at(i, q) * b:at(q, j) + v:at(q) end))
  compare(lacc.run(p, cl):totable(), lacc.run(p, { backend = "interp" }):totable(), "with a weight of k")
  -- a read that varies with the row and the column: no tiles, the same answer
  local c = lacc.fromtable(mat(20, 24, 9), "i32")
  local p2 = lacc.fold(function(x, y) return x + y end, 0,
    lacc.generate({ 20, 24, 11 }, function(i, j, q) return a:at(i, q) * c:at(i, j) end))
  compare(lacc.run(p2, cl):totable(), lacc.run(p2, { backend = "interp" }):totable(), "a read of both")
end

-- a read that can fail still fails, with the interpreter's message
do
  local a, b = lacc.fromtable(mat(20, 10, 2), "i32"), lacc.fromtable(mat(9, 20, 5), "i32")
  local p = lacc.fold(function(x, y) return x + y end, 0, -- tiled
    lacc.generate({ 20, 20, 10 }, function(i, j, k) return a:at(i, k) * b:at(k, j) end))
  local ok1, e1 = pcall(lacc.run, p, cl)
  local ok2, e2 = pcall(lacc.run, p, { backend = "interp" })
  local function msg(e) return (tostring(e):gsub(" %(at [^)]*%)", "")) end
  if ok1 or ok2 or msg(e1) ~= msg(e2) then
    fail("the read past b's rows: opencl %s, interp %s", tostring(e1), tostring(e2))
  end
end

-- column sums (a fold along the outer dimension, rows of 256 outputs or more: on a CPU
-- device the cpu backend's wide tiles, whole and cut), against plain Lua
for _, c in ipairs { { 7, 256 }, { 33, 300 }, { 2, 1000 }, { 40, 255 } } do
  local q, m = c[1], c[2]
  local A = mat(q, m, 3)
  for _, t in ipairs { "f32", "i32", "f64" } do
    local got = lacc.run(lacc.sum(host(A, q, m, t), 1), cl):totable()
    for j = 1, m do
      local s = 0
      for i = 1, q do s = s + A[i][j] end
      if H.num(got[j]) ~= s then
        fail("column sums of %dx%d %s: [%d] is %s, expected %s", q, m, t, j, tostring(got[j]), s)
        break
      end
    end
  end
end

print(#bad == 0 and "ok" or table.concat(bad, "\n"))
