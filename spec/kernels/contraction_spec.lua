-- Contractions: folds of many rows whose elements lie side by side across the rows (the
-- matrix product), which the cpu backend folds in tiles of neighbouring outputs, one per
-- vector lane (lower_tile.c), with the index checks that cannot fail proved away
-- (bounds.c) and the others tested once before their loop (hoist.c). Checked against
-- plain Lua loops, and against the interpreter bit for bit (every output is still
-- folded in order, so even float sums agree exactly); the checks that can fail must
-- still fail, with the interpreter's message.
local H = require "helper"
local lacc = H.lacc

local mat, host, product_ref = H.small_mat, H.host_mat, H.product_ref

local function same_table(got, exp, what)
  for i = 1, #exp do
    for j = 1, #exp[i] do
      if got[i][j] ~= exp[i][j] then
        error(("%s: [%d][%d] is %s, expected %s"):format(what, i, j, tostring(got[i][j]),
                                                         tostring(exp[i][j])), 2)
      end
    end
  end
end

-- the three spellings of the product
local function by_replicate(a, b)
  local n, m = lacc.shape(a)[1], lacc.shape(b)[2]
  local ar = lacc.replicate({ lacc.all, m, lacc.all }, a)
  local br = lacc.replicate({ n, lacc.all, lacc.all }, lacc.transpose(b))
  return lacc.fold(function(x, y) return x + y end, 0,
                   lacc.zipWith(function(x, y) return x * y end, ar, br))
end
local function by_generate(a, b)
  local s, t = lacc.shape(a), lacc.shape(b)
  return lacc.fold(function(x, y) return x + y end, 0,
                   lacc.generate({ s[1], t[2], s[2] }, function(i, j, k) return a:at(i, k) * b:at(k, j) end))
end
local spellings = { replicate = by_replicate, generate = by_generate, matmul = lacc.matmul }

-- whether the CPU has AVX-512 (the tiles' shape depends on it), read from the system
local avx512 = (function()
  local f = io.open("/proc/cpuinfo")
  if not f then return false end
  local text = f:read("a")
  f:close()
  return text:find("avx512f", 1, true) ~= nil
end)()

-- output widths around the tile (64 lanes of f32, 32 of f64), row lengths around nothing
-- and a vector's lanes; around 256 and a long row (3001) for some widths only
local widths = { 0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 130 }
local lengths = { 0, 1, 7, 8, 9, 64 }
local longer = { [1] = { 255, 256, 257, 3001 }, [8] = { 255, 256, 257 }, [33] = { 255, 256, 257 },
                 [65] = { 255, 256, 257, 3001 } }

for _, backend in ipairs(H.backends) do
  describe("contraction on " .. backend, function()
    for name, spell in pairs(spellings) do
      it(name .. ": every width and row length against Lua loops, f32 and i32", function()
        for _, m in ipairs(widths) do
          local ks = { table.unpack(lengths) }
          for _, k in ipairs(longer[m] or {}) do ks[#ks + 1] = k end
          for _, k in ipairs(ks) do
            local n = (m + k) % 5 + 1
            local A, B = mat(n, k, 2), mat(k, m, 5)
            for _, t in ipairs({ "f32", "i32" }) do
              local a, b = host(A, n, k, t), host(B, k, m, t)
              local got = lacc.run(spell(a, b), { backend = backend })
              assert.are.same({ n, m }, got:shape())
              if n > 0 and m > 0 then
                same_table(got:totable(), product_ref(A, B, n, k, m),
                           ("%s %dx%d times %dx%d %s"):format(name, n, k, k, m, t))
              end
            end
          end
        end
      end)
    end

    it("output rows around a tile's (1 to 25 rows), f32, f64, i32 and i64, against Lua loops", function()
      for _, n in ipairs { 1, 2, 3, 7, 8, 9, 15, 16, 17, 25 } do
        for _, mk in ipairs { { 16, 3 }, { 31, 5 }, { 32, 7 }, { 33, 2 }, { 64, 9 }, { 70, 1 } } do
          local m, k = mk[1], mk[2]
          local A, B = mat(n, k, 3), mat(k, m, 4)
          local want = product_ref(A, B, n, k, m)
          for _, t in ipairs { "f32", "f64", "i32", "i64" } do
            local got = lacc.run(lacc.matmul(host(A, n, k, t), host(B, k, m, t)), { backend = backend })
            assert.are.same({ n, m }, got:shape())
            same_table(got:totable(), want, ("%dx%d times %dx%d %s"):format(n, k, k, m, t))
          end
        end
      end
    end)

    it("float sums agree with the interpreter bit for bit (each output in order)", function()
      H.seed(19)
      for _, t in ipairs({ "f32", "f64" }) do
        local n, k, m = 19, 200, 97
        local A, B = {}, {}
        for i = 1, n do A[i] = {} for q = 1, k do A[i][q] = H.rand() * 2 - 1 end end
        for q = 1, k do B[q] = {} for j = 1, m do B[q][j] = H.rand() * 1e3 - 500 end end
        local a, b = lacc.fromtable(A, t), lacc.fromtable(B, t)
        for name, spell in pairs(spellings) do
          local p = spell(a, b)
          local want = lacc.run(p, { backend = "interp" }):totable()
          local got = lacc.run(p, { backend = backend }):totable()
          same_table(got, want, name .. " " .. t)
        end
      end
    end)

    it("a fold with a function that is neither associative nor commutative, in tiles", function()
      -- acc * 3 + x on i64 wraps and depends on the order of every element
      local n, k, m = 3, 21, 70
      local A, B = mat(n, k, 3), mat(k, m, 7)
      local a, b = lacc.fromtable(A, "i64"), lacc.fromtable(B, "i64")
      local p = lacc.fold(function(acc, x) return acc * 3 + x end, 1,
                          lacc.generate({ n, m, k }, function(i, j, q) return a:at(i, q) - b:at(q, j) end))
      local got = lacc.run(p, { backend = backend }):totable()
      for i = 1, n do
        for j = 1, m do
          local s = 1
          for q = 1, k do s = s * 3 + (A[i][q] - B[q][j]) end
          assert.are.equal(s, H.num(got[i][j]), ("[%d][%d]"):format(i, j))
        end
      end
    end)

    it("a fold of tuples in tiles (an N-body step's accelerations), in order, with the " ..
       "interpreter's floats bit for bit and an i64 field that depends on the order", function()
      -- rank-1 outputs (widths around 16 lanes of (f64, f64)), and rank 2 of a (f64, i64)
      for _, n in ipairs { 0, 1, 15, 16, 17, 40 } do
        local xs = lacc.fromtable((function()
          local t = {}
          for i = 1, n do t[i] = (i * 37 % 11) / 7 - 0.5 end
          return t
        end)(), "f64")
        local pulls = lacc.generate({ n, n }, function(i, j)
          local d = xs[j] - xs[i]
          local r = d * d + 0.01
          return d / (r * lacc.sqrt(r)), d * 0.5
        end)
        local p = lacc.fold(function(a, b) return a[1] + b[1], a[2] * 0.5 + b[2] end,
          lacc.tuple(lacc.constant(0, "f64"), lacc.constant(1, "f64")), pulls)
        local want = lacc.run(p, { backend = "interp" }):totable()
        local got = lacc.run(p, { backend = backend }):totable()
        for i = 1, n do
          for f = 1, 2 do
            assert.are.equal(want[i][f], got[i][f], ("n %d, [%d] field %d"):format(n, i, f))
          end
        end
      end
      local q, m, k = 3, 37, 9
      local A = mat(q * m, k, 5)
      local a = lacc.fromtable(A, "i64")
      local p = lacc.fold1(function(acc, x) return acc[1] + x[1] * 0.25, acc[2] * 3 + x[2] end,
        lacc.generate({ q, m, k }, function(i, j, r)
          local v = a:at((i - 1) * m + j, r)
          return lacc.cast(v, "f64"), v - 1
        end))
      local got = lacc.run(p, { backend = backend }):totable()
      for i = 1, q do
        for j = 1, m do
          local row = A[(i - 1) * m + j]
          local s1, s2 = row[1] + 0.0, row[1] - 1
          for r = 2, k do s1, s2 = s1 + row[r] * 0.25, s2 * 3 + (row[r] - 1) end
          assert.are.equal(s1, H.num(got[i][j][1]), ("[%d][%d] f64"):format(i, j))
          assert.are.equal(s2, H.num(got[i][j][2]), ("[%d][%d] i64"):format(i, j))
        end
      end
    end)

    -- (the cpu backend's: the interpreter folds in order; the loops below are the reference)
    if backend ~= "interp" then it("few tiles of long rows (a vector-matrix product): the rows in chunks, " ..
                                   "combined in order", function()
      -- K rows of a {K, m} matrix weighted by v: each output sums K products. Fewer tiles
      -- than twice the threads split each tile's rows into chunks on every thread (the cpu
      -- backend); small integers (as floats too) sum exactly, so every order agrees with
      -- the Lua loop. Elements: a (q, j) = (q * 7 + j * 3) % 19 - 9, v q = q % 7 - 3.
      local K = 70001
      local function elem(q, j) return (q * 7 + j * 3) % 19 - 9 end
      for _, m in ipairs({ 5, 70 }) do
        local want, best = {}, {}
        for j = 1, m do
          local s, b = 0, elem(1, j)
          for q = 1, K do
            local x = elem(q, j)
            s = s + x * (q % 7 - 3)
            if x > b then b = x end
          end
          want[j], best[j] = s, b
        end
        for _, t in ipairs({ "i32", "f32" }) do
          local a = lacc.run(lacc.generate({ K, m }, function(q, j) return lacc.cast((q * 7 + j * 3) % 19 - 9, t) end))
          local v = lacc.run(lacc.generate({ K }, function(q) return lacc.cast(q % 7 - 3, t) end))
          local prod = lacc.zipWith(function(x, y) return x * y end, a, lacc.replicate({ lacc.all, m }, v))
          local got = lacc.run(lacc.sum(prod, 1), { backend = backend }):totable()
          for j = 1, m do assert.are.equal(want[j], H.num(got[j]), ("%s m %d [%d]"):format(t, m, j)) end
          if t == "i32" then
            -- a start value is added once (not once a chunk); a fold1 starts from its first row
            got = lacc.run(lacc.fold(function(x, y) return x + y end, 7, prod, 1), { backend = backend }):totable()
            for j = 1, m do assert.are.equal(want[j] + 7, H.num(got[j]), ("z m %d [%d]"):format(m, j)) end
            got = lacc.run(lacc.maximum(a, 1), { backend = backend }):totable()
            for j = 1, m do assert.are.equal(best[j], H.num(got[j]), ("max m %d [%d]"):format(m, j)) end
            -- associative, not commutative: the last row's (the chunks' results in order)
            got = lacc.run(lacc.fold1(function(_, y) return y end, a, 1), { backend = backend }):totable()
            for j = 1, m do assert.are.equal(elem(K, j), H.num(got[j]), ("last m %d [%d]"):format(m, j)) end
          end
        end
      end
    end) end

    if backend ~= "interp" then it("few tiles of long rows: a read out of bounds fails with the " ..
                                   "interpreter's message", function()
      local K = 70001
      local V = {}
      for q = 1, K do V[q] = q % 5 end
      local v, a = lacc.fromtable(V, "f64"), lacc.fromtable(mat(K - 1, 3, 4), "f64")
      local p = lacc.fold(function(x, y) return x + y end, 0,
                          lacc.generate({ 3, K }, function(j, q) return a:at(q, j) * v[q] end))
      local ok_i, err_i = pcall(lacc.run, p, { backend = "interp" })
      local ok, err = pcall(lacc.run, p, { backend = backend })
      assert.is_false(ok_i)
      assert.is_false(ok)
      assert.are.equal(tostring(err_i), tostring(err))
      assert.truthy(tostring(err):find("out of bounds for shape (70000, 3)", 1, true), tostring(err))
    end) end

    it("batched products (rank 3) and matrix-vector products", function()
      local A, B = { mat(4, 9, 2), mat(4, 9, 3) }, { mat(9, 70, 5), mat(9, 70, 6) }
      local got = lacc.run(lacc.matmul(lacc.fromtable(A, "f64"), lacc.fromtable(B, "f64")),
                           { backend = backend }):totable()
      for t = 1, 2 do same_table(got[t], product_ref(A[t], B[t], 4, 9, 70), "batch " .. t) end
      local M, v = mat(66, 5, 4), { 1, -2, 3, 0, 5 }
      local mv = lacc.run(lacc.matmul(lacc.fromtable(M, "i32"), lacc.fromtable(v, "i32")),
                          { backend = backend }):totable()
      for i = 1, 66 do
        local s = 0
        for q = 1, 5 do s = s + M[i][q] * v[q] end
        assert.are.equal(s, mv[i])
      end
      local w = { 2, 0, -1, 4, 1, 3, -3, 2, 1 }
      local vm = lacc.run(lacc.matmul(lacc.fromtable(w, "i32"), lacc.fromtable(B[1], "i32")),
                          { backend = backend }):totable()
      for j = 1, 70 do
        local s = 0
        for q = 1, 9 do s = s + w[q] * B[1][q][j] end
        assert.are.equal(s, vm[j])
      end
    end)

    it("a read out of bounds in a contraction still fails with the interpreter's message", function()
      -- k + 1 reads one past a's last column, in the last output of every row
      local A, B = mat(5, 8, 2), mat(8, 70, 3)
      local a, b = lacc.fromtable(A, "f32"), lacc.fromtable(B, "f32")
      local p = lacc.fold(function(x, y) return x + y end, 0,
                          lacc.generate({ 5, 70, 8 }, function(i, j, k)
                            return a:at(i, lacc.cond(lacc.eq(j, 70), k + 1, k)) * b:at(k, j)
                          end))
      local ok_i, err_i = pcall(lacc.run, p, { backend = "interp" })
      local ok, err = pcall(lacc.run, p, { backend = backend })
      assert.is_false(ok_i)
      assert.is_false(ok)
      assert.are.equal(tostring(err_i), tostring(err))
      assert.truthy(tostring(err):find("index (1, 9) out of bounds for shape (5, 8)", 1, true))
      -- the same with every read inside: the program runs
      local q = lacc.fold(function(x, y) return x + y end, 0,
                          lacc.generate({ 5, 70, 8 }, function(i, j, k) return a:at(i, k) * b:at(k, j) end))
      same_table(lacc.run(q, { backend = backend }):totable(), product_ref(A, B, 5, 8, 70), "inside")
    end)

    it("products of a transpose (its reads' checks tested once before the tiles), and a " ..
       "guarded read whose test fails: the plain loop, as the interpreter", function()
      for _, nkm in ipairs { { 1, 1, 1 }, { 7, 5, 70 }, { 13, 64, 65 }, { 6, 130, 33 } } do
        local n, k, m = nkm[1], nkm[2], nkm[3]
        local A, B = mat(k, n, 3), mat(k, m, 5)   -- a is k x n: its transpose n x k
        for _, t in ipairs { "f32", "i64" } do
          local a, b = host(A, k, n, t), host(B, k, m, t)
          local AT = {}
          for i = 1, n do AT[i] = {} for q = 1, k do AT[i][q] = A[q][i] end end
          local got = lacc.run(lacc.matmul(lacc.transpose(a), b), { backend = backend })
          same_table(got:totable(), product_ref(AT, B, n, k, m), ("transpose %dx%d %s"):format(n, k, t))
          -- a @ b.T: b read through a compute
          local BT = {}
          for j = 1, m do BT[j] = {} for q = 1, k do BT[j][q] = B[q][j] end end
          local bt = host(BT, m, k, t)
          got = lacc.run(lacc.matmul(lacc.transpose(a), lacc.transpose(bt)), { backend = backend })
          same_table(got:totable(), product_ref(AT, B, n, k, m), ("a @ b.T %dx%d %s"):format(n, k, t))
        end
      end
      -- b has 6 rows, the fold 8 steps: the last two read nothing (the cond), which the
      -- test before the tiles cannot see, so it fails and the rows fold in the plain loop
      local A, B = mat(4, 8, 2), mat(6, 70, 3)
      local a, b = lacc.fromtable(A, "f64"), lacc.fromtable(B, "f64")
      local p = lacc.fold(function(x, y) return x + y end, 0,
                          lacc.generate({ 4, 70, 8 }, function(i, j, k)
                            return lacc.cond(lacc.le(k, 6), a:at(i, k) * b:at(k, j), 0)
                          end))
      same_table(lacc.run(p, { backend = backend }):totable(), lacc.run(p, { backend = "interp" }):totable(),
                 "guarded")
    end)

    it("sums of a product along its rows or columns (a product of a sum), against Lua " ..
       "loops; its batch dimension; extents that disagree still fail", function()
      local function sums(C, n, m)
        local rows, cols = {}, {}
        for j = 1, m do rows[j] = 0 end
        for i = 1, n do
          cols[i] = 0
          for j = 1, m do rows[j], cols[i] = rows[j] + C[i][j], cols[i] + C[i][j] end
        end
        return rows, cols
      end
      for _, nkm in ipairs { { 0, 3, 4 }, { 3, 0, 4 }, { 1, 1, 1 }, { 7, 5, 70 }, { 13, 64, 9 } } do
        local n, k, m = nkm[1], nkm[2], nkm[3]
        local A, B = mat(n, k, 2), mat(k, m, 5)
        local rows, cols = sums(product_ref(A, B, n, k, m), n, m)
        for _, t in ipairs { "i32", "f64" } do
          local p = lacc.matmul(host(A, n, k, t), host(B, k, m, t))
          local r = { lacc.run({ lacc.sum(p, 1), lacc.sum(p, 2) }, { backend = backend }) }
          assert.are.same(rows, r[1]:totable(), ("rows %dx%dx%d %s"):format(n, k, m, t))
          assert.are.same(n == 0 and {} or cols, n == 0 and {} or r[2]:totable())
          assert.are.equal(n, r[2]:size())
        end
      end
      -- batches of 3: rows, columns, and the batch dimension (no rewrite there)
      local As, Bs = { mat(5, 4, 2), mat(5, 4, 3), mat(5, 4, 7) }, { mat(4, 6, 1), mat(4, 6, 4), mat(4, 6, 8) }
      local p = lacc.matmul(lacc.fromtable(As, "f64"), lacc.fromtable(Bs, "f64"))
      local r = { lacc.run({ lacc.sum(p, 1), lacc.sum(p, 2), lacc.sum(p, 3) }, { backend = backend }) }
      local r1, r2, r3 = r[1]:totable(), r[2]:totable(), r[3]:totable()
      for t = 1, 3 do
        local C = product_ref(As[t], Bs[t], 5, 4, 6)
        local rows, cols = sums(C, 5, 6)
        assert.are.same(rows, r2[t])
        assert.are.same(cols, r3[t])
        for i = 1, 5 do
          for j = 1, 6 do
            local s = 0
            for u = 1, 3 do s = s + product_ref(As[u], Bs[u], 5, 4, 6)[i][j] end
            assert.are.equal(s, r1[i][j])
          end
        end
      end
      -- no n x k x m products: no fold of the product's rank left (and its sum is one)
      local a, b = host(mat(7, 5, 2), 7, 5, "f64"), host(mat(5, 9, 5), 5, 9, "f64")
      for d = 1, 2 do
        local text = lacc.explain(lacc.sum(lacc.matmul(a, b), d))
        assert.falsy(text:find("fold, rank 2", 1, true), text)
      end
      -- extents known only when it runs, disagreeing: still an error
      local da = lacc.map(function(x) return x end, lacc.fromtable(mat(3, 4, 1), "f32"))
      local db = lacc.fromtable(mat(5, 2, 1), "f32")
      for d = 1, 2 do
        local ok, err = pcall(lacc.run, lacc.sum(lacc.matmul(da, db), d), { backend = backend })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("out of bounds", 1, true), tostring(err))
      end
    end)

    it("matmul: extents that do not agree are an error", function()
      local a, b = lacc.fromtable(mat(3, 4, 1), "f32"), lacc.fromtable(mat(5, 2, 1), "f32")
      local ok, err = pcall(lacc.matmul, a, b)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("a's last extent (4) is not b's second last extent (5)", 1, true))
      -- delayed arrays: when it runs
      local da = lacc.map(function(x) return x end, a)
      ok, err = pcall(lacc.run, lacc.matmul(da, b), { backend = backend })
      assert.is_false(ok)
      assert.truthy(tostring(err):find("out of bounds", 1, true))
      ok, err = pcall(lacc.matmul, a, lacc.fromtable({ 1, 2 }, "f64"))
      assert.is_false(ok)
      assert.truthy(tostring(err):find("element types differ", 1, true))
      ok, err = pcall(lacc.matmul, lacc.fromtable({ 1, 2 }, "f32"), lacc.fromtable({ 1, 2 }, "f32"))
      assert.is_false(ok)
      assert.truthy(tostring(err):find("expected ranks", 1, true))
    end)
  end)
end

-- Folds along the innermost dimension whose lanes read rows apart (each lane its own
-- row): on the cpu backend in strided tiles where rows have at most 8 elements, and
-- at any length for folds without per-lane accumulators (argmin's tuples, an order-
-- dependent function); checked against the interpreter bit for bit, with NaNs, ties,
-- signed zeros and empty rows.
local function row_data(R, m, t, seed)
  H.seed(seed)
  local rows = {}
  local special = { 0 / 0, -0.0, 0.0, 1 / 0, -1 / 0, 2.5, 2.5 }
  for i = 1, R do
    local row = {}
    for j = 1, m do
      local v
      if t:sub(1, 1) == "f" and H.rand() < 0.15 then v = special[1 + math.floor(H.rand() * #special)]
      else v = math.floor(H.rand() * 9) - 4 end
      row[j] = v
    end
    rows[i] = row
  end
  return rows
end

-- (strided tiles are the cpu backend's; OpenCL's builds of these many programs took 70 s
-- on PoCL: there only in the full sweep)
local full = os.getenv("LACC_TEST_SWEEP") == "full"
for _, backend in ipairs(H.backends) do
  if backend == "opencl" and not full then break end
  describe("folds along short rows on " .. backend, function()
    it("sums, extremes and argmin/argmax along rows of 0 to 33 elements, 1 to 200 rows, " ..
       "as the interpreter's", function()
      for _, t in ipairs { "f32", "f64", "i32", "i64" } do
        for _, m in ipairs { 0, 1, 2, 3, 7, 8, 9, 16, 33 } do
          for _, R in ipairs { 1, 5, 63, 64, 65, 200 } do
            local xs = lacc.fromtable(row_data(R, m, t, 7 * m + R), t)
            local ps = { sum = lacc.sum(xs, 2) }
            if m > 0 then
              ps.maximum, ps.argmin, ps.argmax = lacc.maximum(xs, 2), lacc.argmin(xs, 2), lacc.argmax(xs, 2)
            end
            for what, p in pairs(ps) do
              local want = lacc.run(p, { backend = "interp" }):totable()
              local got = lacc.run(p, { backend = backend }):totable()
              for i = 1, R do
                local w, g = want[i], got[i]
                assert.is_true(w == g or (w ~= w and g ~= g),
                  ("%s %s R=%d m=%d row %d: %s, expected %s"):format(what, t, R, m, i, tostring(g), tostring(w)))
                if w == 0 and t:sub(1, 1) == "f" then assert.are.equal(1 / w, 1 / g) end
              end
            end
          end
        end
      end
    end)

    it("column sums of few columns (in tiles of fewer lanes than a streaming tile's), " ..
       "as plain Lua loops", function()
      for _, t in ipairs { "f32", "i64" } do
        for _, m in ipairs { 1, 3, 63, 64, 65, 100, 300 } do
          local n = 37
          local rows = {}
          for i = 1, n do rows[i] = {} for j = 1, m do rows[i][j] = (i * 7 + j * 3) % 11 - 5 end end
          local got = lacc.run(lacc.sum(lacc.fromtable(rows, t), 1), { backend = backend }):totable()
          for j = 1, m do
            local s = 0
            for i = 1, n do s = s + rows[i][j] end
            assert.are.equal(s, H.num(got[j]), ("%s m=%d column %d"):format(t, m, j))
          end
        end
      end
    end)

    it("an order-dependent fold and argmin along long rows (rank 3), as the interpreter's", function()
      local xs = lacc.fromtable({ row_data(70, 300, "f32", 3), row_data(70, 300, "f32", 4) }, "f32")
      local is = lacc.map(function(x) return lacc.cast(lacc.floor(lacc.cond(lacc.lt(lacc.abs(x), 1 / 0), x, 1)), "i64") end, xs)
      local ps = {
        argmin = lacc.argmin(xs, 3),
        horner = lacc.fold(function(acc, x) return acc * 3 + x end, 1, is),
      }
      for what, p in pairs(ps) do
        local want = lacc.run(p, { backend = "interp" }):totable()
        local got = lacc.run(p, { backend = backend }):totable()
        for i = 1, 2 do
          for j = 1, 70 do
            assert.are.equal(H.num(want[i][j]), H.num(got[i][j]), ("%s [%d][%d]"):format(what, i, j))
          end
        end
      end
    end)
  end)
end

describe("contraction: what explain says", function()
  local a, b = lacc.fromtable(mat(4, 6, 2), "f32"), lacc.fromtable(mat(6, 5, 3), "f32")
  it("a fold of tuples of scalars takes tiles too (16 lanes of (f64, f64))", function()
    local xs = lacc.fromtable({ 1, 2, 3 }, "f64")
    local p = lacc.fold(function(p1, p2) return p1[1] + p2[1], p1[2] + p2[2] end,
      lacc.tuple(lacc.constant(0, "f64"), lacc.constant(0, "f64")),
      lacc.generate({ 3, 3 }, function(i, j) return xs[i] * xs[j], xs[j] end))
    local text = lacc.explain(p)
    assert.truthy(text:find("rows of 16 outputs or more: in tiles of that many, one output per vector lane, " ..
                            "2 rows a tile", 1, true), text)
  end)

  it("a vector-matrix product's few tiles of long rows: split into chunks on every thread", function()
    local v, m = lacc.fromtable({ 1, 2, 3 }, "f32"), lacc.fromtable(mat(3, 64, 2), "f32")
    local p = lacc.sum(lacc.zipWith(function(x, y) return x * y end, m, lacc.replicate({ lacc.all, 64 }, v)), 1)
    local text = lacc.explain(p, { backend = "cpu" })
    assert.truthy(text:find("fewer tiles than twice the threads, of long rows (65536 elements or more): each " ..
                            "tile's rows in chunks on every thread, the chunks' results combined in order",
                            1, true), text)
  end)

  it("a fold along short rows: its lanes read rows apart", function()
    local text = lacc.explain(lacc.argmin(lacc.fromtable(mat(70, 8, 2), "f32"), 2), { backend = "cpu" })
    assert.truthy(text:find("the lanes read rows apart (1 gather): tiles only where rows have at most 8 " ..
                            "elements or the plain loop folds one element at a time", 1, true), text)
  end)

  it("the replicate formulation: one kernel, every check proved", function()
    local text = lacc.explain(by_replicate(a, b))
    assert.truthy(text:find("-- 1 kernel\n", 1, true))
    -- one scalar: 6 rows of 256 bytes where the CPU has AVX-512 (lower_tile.c), else 2 of 256
    local want = avx512 and "rows of any length: in tiles of 64 outputs (a row's last, fewer, in tiles of " ..
      "half as many while they fill one), one output per vector lane, 6 rows a tile"
      or "rows of 64 outputs or more: in tiles of that many, one output per vector lane, 2 rows a tile"
    assert.truthy(text:find(want, 1, true), text)
    assert.truthy(text:find("checks per element: 0 of 3 left, 0 tested once before their loop, 3 proved", 1, true), text)
  end)
  it("reads through `at`: the checks tested once before their loop", function()
    local text = lacc.explain(lacc.matmul(a, b))
    assert.truthy(text:find("checks per element: 0 of 2 left, 2 tested once before their loop", 1, true), text)
  end)

  -- a k-means assignment reads each of 16 centres (2 coordinates) at indices fixed for the
  -- kernel: 32 checks of 4 comparisons each, all tested once before the loop (128
  -- comparisons; hoist.c took at most 64); a centre index out of range still fails as
  -- each element reads it, with its message
  local function nearest(cs, k, shift)
    local xs = lacc.fromtable({ 0.5, 3, 7.25, 1, 9 }, "f32")
    return lacc.map(function(x)
      local best, bd = lacc.constant(1, "i32"), nil
      for c = 1, k do
        local d = x - cs:at(c + shift, 1) + cs:at(c, 2)
        d = d * d
        if c == 1 then bd = d else
          local closer = lacc.lt(d, bd)
          best, bd = lacc.cond(closer, c, best), lacc.cond(closer, d, bd)
        end
      end
      return best
    end, xs)
  end
  it("32 reads of centres through `at`: every check tested once before the loop", function()
    local t = {}
    for c = 1, 16 do t[c] = { c - 0.5, 0 } end
    local cs = lacc.fromtable(t, "f32")
    local text = lacc.explain(nearest(cs, 16, 0))
    assert.truthy(text:find("checks per element: 0 of 32 left, 32 tested once before their loop", 1, true), text)
    for _, bk in ipairs(H.backends) do   -- the nearest centre c - 0.5 to each x, the first of ties
      assert.are.same({ 1, 3, 8, 1, 9 }, lacc.run(nearest(cs, 16, 0), { backend = bk }):totable(), bk)
      local ok, err = pcall(lacc.run, nearest(cs, 16, 1), { backend = bk })
      assert.is_false(ok)
      assert.truthy(tostring(err):find("index (17, 1) out of bounds for shape (16, 2)", 1, true), bk .. ": " .. tostring(err))
    end
  end)
end)
