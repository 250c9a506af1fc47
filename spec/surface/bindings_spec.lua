-- The two bindings (bindings/lacc_core.c and lacc_arrays.c on Lua 5.4, lua/lacc/ffi_core.lua
-- on LuaJIT) offer the same functions; the plain entry points of both come from one
-- table, bindings/entries.def (tools/gen_entries.lua writes bindings/entries.c and
-- lua/lacc/ffi_entries.lua; the runner checks they are the table's).
local H = require "helper"
local lacc = H.lacc
local core = require("lacc.util").core

local function entries(def)
  local names = {}
  for line in io.lines(def or "bindings/entries.def") do
    local name = line:match("^(%w[%w_]*)%s")
    if name and name ~= "family" then names[#names + 1] = name end
  end
  return names
end

-- LuaJIT's binding only: typed pointers (a:ptr(), lacc.fromptr) and the choice of how
-- 64-bit integers come back (lacc.set_int64; Lua 5.4 has integers)
local LUAJIT_ONLY = { "array_ptr", "set_int64" }

-- The binding's function names under a VM, from a child process (LuaJIT's own left out).
local function names_under(vm)
  local out = H.vm_sh(("%s -e %s"):format(H.vm:gsub("%S+$", vm),
    H.quote([[local c = require("lacc.util").core
      local t = {}
      local only = { ]] .. ("%q, %q"):format(LUAJIT_ONLY[1], LUAJIT_ONLY[2]) .. [[ }
      for k, v in pairs(c) do
        if type(v) == "function" and k ~= only[1] and k ~= only[2] then t[#t + 1] = k end
      end
      table.sort(t)
      io.write(table.concat(t, " "))]])))
  return out
end

describe("bindings", function()
  it("every entry point of bindings/entries.def is a function of this VM's binding", function()
    local names = entries()
    assert.is_true(#names >= 20, #names .. " entries")
    for _, name in ipairs(names) do assert.are.equal("function", type(core[name]), name) end
  end)

  it("Lua 5.4's and LuaJIT's bindings have the same functions", function()
    local a, b = names_under("lua5.4"), names_under("luajit")
    assert.truthy(a:find("array_rank", 1, true), a)
    assert.are.equal(a, b)
    -- LuaJIT's own are there
    for _, name in ipairs(LUAJIT_ONLY) do
      local has = H.vm_sh(("%s -e %s"):format(H.vm:gsub("%S+$", "luajit"),
        H.quote(("io.write(type(require('lacc.util').core.%s))"):format(name))))
      assert.are.equal("function", has, name)
    end
  end)

  it("array_rank, an entry of the table only, answers on both VMs, and its errors are the " ..
     "binding's", function()
    for rank = 0, 3 do
      local shape = {}
      for d = 1, rank do shape[d] = d + 1 end
      local a = lacc.array("i32", shape, 7)
      assert.are.equal(rank, core.array_rank(a))
      assert.are.equal(a:size(), core.array_size(a))
      a:free()
      local ok, err = pcall(core.array_rank, a)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("array used after free()", 1, true), tostring(err))
    end
    local ok = pcall(core.array_rank, "not an array")
    assert.is_false(ok)
  end)

  -- node_const and array_set: the values' rules and words are the core's (base/values.c),
  -- so both VMs say the same; the words are written out here from the rules.
  it("node_const and array_set take and refuse the same values with the same words on " ..
     "both VMs", function()
    local script = [[
      local lacc = require "lacc"
      local core = require("lacc.util").core
      local out = {}
      local function try(f, ...)
        local ok, e = pcall(f, ...)
        out[#out + 1] = ok and "ok" or tostring(e)
      end
      for _, v in ipairs { true, 3, -1.5, 2^63, 2^64, "x" } do
        for _, t in ipairs { "bool", "i8", "u64", "f32" } do try(core.node_const, t, v, "here:1") end
      end
      local a = lacc.array("i8", { 2 }, 0)
      local u = lacc.array("u64", { 1 }, 0)
      local f = lacc.array("f64", { 1 }, 0)
      local b = lacc.array("bool", { 1 }, false)
      try(core.array_set, a, 0, 1, 300)      -- wraps, as C converts
      out[#out + 1] = tostring(a[2])
      try(core.array_set, u, 0, 0, 2^63)     -- past int64: the bits of a u64
      out[#out + 1] = tostring(u[1] == (math.mininteger or 2^63))  -- Lua 5.4: wrapped
      try(core.array_set, f, 0, 0, 7)
      out[#out + 1] = ("%g"):format(f[1])
      try(core.array_set, b, 0, 0, true)
      out[#out + 1] = tostring(b[1])
      try(core.array_set, f, 0, 0, -0.0)     -- the sign of a zero kept
      out[#out + 1] = tostring(1 / f[1] < 0)
      try(core.array_set, a, 0, 0, 1.5)
      try(core.array_set, a, 0, 0, "x")
      try(core.array_set, f, 0, 0, true)
      try(core.array_set, b, 0, 0, 1)
      try(core.array_set, a, 0, 2, 1)
      io.write(table.concat(out, "\n"))
    ]]
    local function under(vm) return H.vm_sh(("%s -e %s"):format(H.vm:gsub("%S+$", vm), H.quote(script))) end
    local a, b = under("lua5.4"), under("luajit")
    assert.are.equal(a, b)
    local lines = {}
    for l in (a .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
    -- true, 3, -1.5, 2^63, 2^64, "x" against bool, i8, u64, f32
    local want = {
      "ok", "constant: expected a number for i8, got boolean (at here:1)",
      "constant: expected a number for u64, got boolean (at here:1)",
      "constant: expected a number for f32, got boolean (at here:1)",
      "constant: expected a boolean for bool, got number (at here:1)", "ok", "ok", "ok",
      "constant: expected a boolean for bool, got number (at here:1)",
      "constant: -1.5 is not a value of i8 (cast the other operand?) (at here:1)",
      "constant: -1.5 is not a value of u64 (cast the other operand?) (at here:1)", "ok",
      "constant: expected a boolean for bool, got number (at here:1)", "ok", "ok", "ok",
      "constant: expected a boolean for bool, got number (at here:1)",
      "constant: 1.844674407371e+19 is not a value of i8 (cast the other operand?) (at here:1)",
      "constant: 1.844674407371e+19 is not a value of u64 (cast the other operand?) (at here:1)", "ok",
      "constant: expected a boolean for bool, got string (at here:1)",
      "constant: expected a number for i8, got string (at here:1)",
      "constant: expected a number for u64, got string (at here:1)",
      "constant: expected a number for f32, got string (at here:1)",
      "ok", "44", "ok", "true", "ok", "7", "ok", "true", "ok", "true",
      "expected an integer for i8, got 1.5", "expected an integer for i8, got string",
      "expected a number for f64, got boolean", "expected a boolean for bool, got number",
      "index 3 out of bounds (size 2)",
    }
    assert.are.same(want, lines)
  end)

  -- lacc.mpi's transport: lacc.mpi_core (Lua 5.4) and lacc.mpi_ffi (LuaJIT), the plain
  -- entry points from mpi/entries.def. Only where lacc was built with MPI.
  local have_mpi = io.open("build/liblacc_mpi.so") ~= nil
  it("node_rebind (written by hand on each VM) rebinds arrays and programs at once and " ..
     "refuses what it cannot, in the same words", function()
    local accs = require "lacc.acc"
    local a, b = lacc.fromtable({ 1, 2, 3 }, "i64"), lacc.fromtable({ 10, 20, 30 }, "i64")
    local f = lacc.fromtable({ 1.5 }, "f64")
    local p = lacc.zipWith(function(x, y) return x - y end, a, b)
    local swapped = accs.wrap(core.node_rebind(p.node, 2, 0, a, b, b, a))
    assert.are.same({ 9, 18, 27 }, lacc.run(swapped):totable())
    assert.are.same({ -9, -18, -27 }, lacc.run(p):totable())
    local twice = lacc.map(function(x) return x * 2 end, a)
    local r = lacc.zipWith(function(x, y) return x + y end, twice, b)
    local thrice_b = lacc.map(function(x) return x * 3 end, b)
    local r2 = accs.wrap(core.node_rebind(r.node, 0, 1, twice.node, thrice_b.node))
    assert.are.same({ 40, 80, 120 }, lacc.run(r2):totable())   -- 3 b + b
    assert.are.same({ 12, 24, 36 }, lacc.run(r):totable())      -- 2 a + b
    local function refused(want, ...)
      local ok, err = pcall(core.node_rebind, ...)
      assert.is_false(ok)
      assert.truthy(tostring(err):find(want, 1, true), tostring(err))
    end
    refused("rebind: the arrays differ in element type or rank (i64 of rank 1, f64 of rank 1)", p.node, 1, 0, a, f)
    refused("rebind: an array or program rebound is not read by the graph", p.node, 1, 0, f, f)
    refused("rebind: the programs differ in element type or rank", r.node, 0, 1, twice.node,
            lacc.map(function(x) return lacc.cast(x, "f64") end, a).node)
    refused("rebind: at most 16 arrays and 16 programs", p.node, 17, 0)
  end)

  it("array_discard releases an array's elements: reads, writes and runs of it are errors, " ..
     "never a crash (LuaJIT's view too); a program holding it is rebound", function()
    local accs = require "lacc.acc"
    local a, b = lacc.fromtable({ 1, 2, 3 }, "i64"), lacc.fromtable({ 10, 20, 30 }, "i64")
    local p = lacc.map(function(x) return x * 2 end, a)
    local held = lacc.memory()
    core.array_discard(a)
    assert.are.equal(held - 24, lacc.memory())
    assert.are.same({ 3 }, a:shape())
    assert.are.equal("i64", a:type())
    for _, f in ipairs { function() return a[1] end, function() return a:get(2) end,
                         function() a[1] = 5 end, function() return a:totable() end,
                         function() return a:tobytes() end, function() return lacc.run(p) end } do
      local ok, err = pcall(f)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("released", 1, true), tostring(err))
    end
    local q = accs.wrap(core.node_rebind(p.node, 1, 0, a, b))
    assert.are.same({ 20, 40, 60 }, lacc.run(q):totable())
  end)

  it("lacc.mpi's two transports have the same functions, mpi/entries.def's among them", function()
    if not have_mpi then
      assert.truthy(io.open("bindings/mpi_entries.c"), "bindings/mpi_entries.c")   -- committed
      return
    end
    local list = [[local t = {}
      for k, v in pairs(require(%q)) do if type(v) == "function" then t[#t + 1] = k end end
      table.sort(t)
      io.write(table.concat(t, " "))]]
    local a = H.vm_sh(("%s -e %s"):format(H.vm:gsub("%S+$", "lua5.4"), H.quote(list:format("lacc.mpi_core"))))
    local b = H.vm_sh(("%s -e %s"):format(H.vm:gsub("%S+$", "luajit"), H.quote(list:format("lacc.mpi_ffi"))))
    assert.are.equal(a, b)
    local names = entries("mpi/entries.def")
    assert.is_true(#names >= 7, #names .. " entries")
    for _, name in ipairs(names) do
      assert.truthy((" " .. a .. " "):find(" " .. name .. " ", 1, true), name .. " in " .. a)
    end
  end)
end)

