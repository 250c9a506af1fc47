-- Push arrays ("Defunctionalizing Push Arrays"): append (..), interleave and concat on every backend
-- against Lua loops, nested in each other, pulled by consumers and materialised; the
-- materialised kernels write each part in its own loop with no per-element test.
local H = require "helper"
local lacc = H.lacc

-- References over rows: flat row-major tables with their shapes.
local function rows(flat, sh)
  local n = sh[#sh]
  local outer = 1
  for d = 1, #sh - 1 do outer = outer * sh[d] end
  local r = {}
  for o = 1, outer do
    r[o] = {}
    for j = 1, n do r[o][j] = flat[(o - 1) * n + j] end
  end
  return r, outer
end

local function ref_push(kind, a, ash, b, bsh)
  local ra, oa = rows(a, ash)
  local rb, ob = rows(b, bsh)
  local outer = math.min(oa, ob)
  local out = {}
  -- outer dimensions intersect: only for rank 2 here (rank 1 has one row each)
  if #ash == 2 then outer = math.min(ash[1], bsh[1]) end
  for o = 1, outer do
    local x, y = ra[o], rb[o]
    local row = {}
    if kind == "append" then
      for _, v in ipairs(x) do row[#row + 1] = v end
      for _, v in ipairs(y) do row[#row + 1] = v end
    else
      for j = 1, math.min(#x, #y) do
        row[#row + 1] = x[j]
        row[#row + 1] = y[j]
      end
    end
    for _, v in ipairs(row) do out[#out + 1] = v end
  end
  local sh
  if #ash == 1 then
    sh = { kind == "append" and ash[1] + bsh[1] or 2 * math.min(ash[1], bsh[1]) }
  else
    sh = { outer, kind == "append" and ash[2] + bsh[2] or 2 * math.min(ash[2], bsh[2]) }
  end
  return out, sh
end

for _, b in ipairs(H.backends) do
  describe("push arrays on " .. b, function()
    local opts = { backend = b }

    it("append and interleave, materialised and pulled, on ranks 1 and 2", function()
      H.seed(901)
      for _ = 1, 12 do
        local rank = H.randint(1, 2)
        local ash = rank == 1 and { H.randint(0, 7) } or { H.randint(0, 3), H.randint(0, 5) }
        local bsh = rank == 1 and { H.randint(0, 7) } or { H.randint(0, 3), H.randint(0, 5) }
        local xa, fa = H.random_array("i32", ash)
        local xb, fb = H.random_array("i32", bsh)
        for _, kind in ipairs { "append", "interleave" } do
          local want, sh = ref_push(kind, fa, ash, fb, bsh)
          local got = lacc.run(lacc[kind](xa, xb), opts)
          assert.are.same(sh, got:shape(), kind)
          H.check_array(got, want)
          -- pulled by a map: the same values plus one
          local plus = {}
          for i, v in ipairs(want) do plus[i] = v + 1 end
          H.check_array(lacc.run(lacc.map(function(v) return v + 1 end, lacc[kind](xa, xb)), opts), plus)
        end
      end
    end)

    it("nest, concat, and compose with reverse", function()
      local a = lacc.fromtable({ 1, 2, 3 }, "i32")
      local c = lacc.fromtable({ 10, 20, 30, 40 }, "i32")
      assert.are.same({ 1, 2, 3, 10, 20, 30, 40 }, lacc.run(a .. c, opts):totable())
      assert.are.same({ 1, 2, 3, 10, 20, 30, 40, 1, 2, 3 }, lacc.run(lacc.concat { a, c, a }, opts):totable())
      assert.are.same({ 1, 10, 2, 1, 3, 20, 10, 2, 20, 30, 30, 3 },
        lacc.run(lacc.interleave(a .. c, lacc.interleave(c, a)), opts):totable())
      assert.are.same({ 30, 3, 20, 2, 10, 1 }, lacc.run(lacc.reverse(lacc.interleave(a, c)), opts):totable())
      assert.are.same({ 1, 2, 3 }, lacc.run(lacc.concat { a }, opts):totable())
    end)

    it("reverse and rotate of push arrays (rewritten over the parts) on ranks 1 and 2", function()
      H.seed(907)
      local function rows_map(flat, sh, f)   -- apply f to each row of a row-major table
        local out = {}
        local rs = rows(flat, sh)
        if sh[#sh] == 0 then return out end
        for _, row in ipairs(rs) do
          for _, v in ipairs(f(row)) do out[#out + 1] = v end
        end
        return out
      end
      local function rev(row)
        local r = {}
        for j = #row, 1, -1 do r[#r + 1] = row[j] end
        return r
      end
      local function rot(k)
        return function(row)
          local n, r = #row, {}
          for j = 1, n do r[j] = row[(j - 1 + k) % n + 1] end
          return r
        end
      end
      for _ = 1, 10 do
        local rank = H.randint(1, 2)
        local ash = rank == 1 and { H.randint(0, 6) } or { H.randint(0, 3), H.randint(0, 5) }
        local bsh = rank == 1 and { H.randint(0, 6) } or { H.randint(0, 3), H.randint(0, 5) }
        local xa, fa = H.random_array("i32", ash)
        local xb, fb = H.random_array("i32", bsh)
        for _, kind in ipairs { "append", "interleave" } do
          local want, sh = ref_push(kind, fa, ash, fb, bsh)
          local got = lacc.run(lacc.reverse(lacc[kind](xa, xb)), opts)
          assert.are.same(sh, got:shape(), kind)
          H.check_array(got, rows_map(want, sh, rev))
          for _, k in ipairs { 0, 1, 3, -2, 17 } do
            local kk = k == 3 and lacc.constant(3, "i32") or k   -- a scalar expression too
            got = lacc.run(lacc.rotate(kk, lacc[kind](xa, xb)), opts)
            assert.are.same(sh, got:shape(), kind .. " rotate " .. k)
            H.check_array(got, rows_map(want, sh, rot(k)))
          end
        end
        -- nested: reverse of a concat of three, rotated
        if rank == 1 then
          local fc = {}
          for _, v in ipairs(fb) do fc[#fc + 1] = v end
          for _, v in ipairs(fa) do fc[#fc + 1] = v end
          for _, v in ipairs(fb) do fc[#fc + 1] = v end
          local n = #fc
          local r = lacc.run(lacc.rotate(2, lacc.reverse(lacc.concat { xb, xa, xb })), opts)
          local w = {}
          for j = 1, n do w[j] = fc[n - ((j - 1 + 2) % n)] end
          H.check_array(r, w)
        end
      end
    end)

    it("tuples and sum types", function()
      local T = lacc.Maybe("f64")
      local x = lacc.fromtable({ { tag = "Just", 1.5 }, { tag = "Nothing" } }, T)
      local y = lacc.fromtable({ { tag = "Nothing" }, { tag = "Just", -2 } }, T)
      local r = lacc.run(lacc.interleave(x, y) .. x, opts)
      local t = r:totable()
      assert.are.equal(6, #t)
      assert.are.same({ "Just", "Nothing", "Nothing", "Just", "Just", "Nothing" },
        { t[1].tag, t[2].tag, t[3].tag, t[4].tag, t[5].tag, t[6].tag })
      assert.are.equal(1.5, t[1][1])
      assert.are.equal(-2, t[4][1])
    end)
  end)
end

describe("push arrays in generated code", function()
  local a = lacc.fromtable({ 1, 2, 3 }, "i32")
  local c = lacc.fromtable({ 10, 20, 30, 40 }, "i32")

  local function body_of(p)
    local text = lacc.explain(p, { source = true })
    local fns = {}
    for f in text:gmatch("void lacc_f%d+%(.-\n}\n") do fns[#fns + 1] = f end
    return fns
  end

  it("materialised: one loop per part and no test inside the loops", function()
    local fns = body_of(lacc.interleave(a .. c, lacc.interleave(c, a)))
    local body = fns[#fns]
    local _, loops = body:gsub("for %(", "")
    assert.are.equal(5, loops)   -- the rows, then the four parts
    local inner = body:match("for %(.-for %((.*)")
    assert.is_nil(inner:find("if %("))
  end)

  it("reverse and rotate of a push array materialise without a test in the loops", function()
    -- the parts are gathers (backpermute): their index checks (a failure report, then a
    -- clamped index) are the only tests left; a pulled push array tests which part
    local function tests(p)
      local fns = body_of(p)
      local inner = fns[#fns]:match("for %((.*)")
      inner = inner:gsub("if %(v%d+%) {%s*lacc_failed%b();%s*}", "")
      -- a test before a loop that picks the loop without checks (hoist.c) is per row
      inner = inner:gsub("if %(v%d+%) {%s*for %(", "for (")
      inner = inner:gsub("if %(v%d+%) {%s*v%d+ = v%d+;%s*} else {%s*v%d+ = v%d+;%s*}", "")
      return inner:find("if %(") ~= nil
    end
    for _, p in ipairs { lacc.reverse(a .. c), lacc.rotate(2, a .. c), lacc.reverse(lacc.interleave(a, c)),
                         lacc.rotate(3, lacc.interleave(a, c)), lacc.rotate(-2, lacc.interleave(c, a)) } do
      assert.is_false(tests(p))
    end
    assert.is_true(tests(lacc.backpermute({ 5 }, function(i) return 8 - i end, a .. c)))
    assert.are.same({ 40, 30, 20, 10, 3, 2, 1 }, lacc.run(lacc.reverse(a .. c)):totable())
    assert.are.same({ 3, 10, 20, 30, 40, 1, 2 }, lacc.run(lacc.rotate(2, a .. c)):totable())
    assert.are.same({ 20, 3, 30, 1, 10, 2 }, lacc.run(lacc.rotate(3, lacc.interleave(a, c))):totable())
  end)

  it("pulled by a consumer: one kernel that tests the index", function()
    local p = lacc.map(function(v) return v * 2 end, a .. c)
    local _, stats = lacc.explain(p)
    assert.are.equal(1, stats.kernels)
    local fns = body_of(p)
    assert.truthy(fns[#fns]:find("if %("))
    assert.are.same({ 2, 4, 6, 20, 40, 60, 80 }, lacc.run(p):totable())
  end)

  it("rejects arrays of different ranks or types", function()
    local ok, err = pcall(lacc.append, a, lacc.fromtable({ { 1 } }, "i32"))
    assert.is_false(ok)
    assert.truthy(err:find("append: arrays of one rank", 1, true))
    ok, err = pcall(lacc.interleave, a, lacc.fromtable({ 1 }, "f32"))
    assert.is_false(ok)
    assert.truthy(err:find("interleave", 1, true))
    ok = pcall(lacc.concat, {})
    assert.is_false(ok)
  end)
end)
