-- The two bindings (bindings/lacc_core.c and lacc_arrays.c on Lua 5.4, lua/lacc/ffi_core.lua
-- on LuaJIT) offer the same functions; the plain entry points of both come from one
-- table, bindings/entries.def (tools/gen_entries.lua writes bindings/entries.c and
-- lua/lacc/ffi_entries.lua; the runner checks they are the table's).
local H = require "helper"
local lacc = H.lacc
local core = require("lacc.util").core

local function entries()
  local names = {}
  for line in io.lines("bindings/entries.def") do
    local name = line:match("^(%w[%w_]*)%s")
    if name then names[#names + 1] = name end
  end
  return names
end

-- LuaJIT's binding only: typed pointers (a:ptr(), lacc.fromptr) and the choice of how
-- 64-bit integers come back (lacc.set_int64; Lua 5.4 has integers)
local LUAJIT_ONLY = { "array_ptr", "set_int64" }

-- The binding's function names under a VM, from a child process (LuaJIT's own left out).
local function names_under(vm)
  local out = H.sh(("%s -e %s"):format(H.vm:gsub("%S+$", vm),
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
      local has = H.sh(("%s -e %s"):format(H.vm:gsub("%S+$", "luajit"),
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
end)
