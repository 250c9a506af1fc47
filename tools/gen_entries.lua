-- gen_entries.lua: a binding's plain entry points (bindings/entries.def for lacc.core,
-- mpi/entries.def for lacc.mpi's transport) as the Lua 5.4 module's C functions and as
-- LuaJIT's FFI functions.
-- Usage: lua5.4 tools/gen_entries.lua c|lua < bindings/entries.def > bindings/entries.c
-- (or lua/lacc/ffi_entries.lua). Owns: what each argument and result kind becomes on
-- each VM. Must not: know an entry point by name (the table says everything).
local what = arg[1]
assert(what == "c" or what == "lua", "usage: gen_entries.lua c|lua < bindings/entries.def")

-- A table's family (its line "family core" or "family mpi"): the C header the functions
-- include, the name of their luaL_Reg array, the C and Lua calls that raise the
-- library's error, the source named in the generated files' heads.
local FAMILIES = {
  core = { header = "lacc_core.h", array = "lb_entry_funcs", raise = "lb_raise(L)",
           def = "bindings/entries.def", c_out = "entries.c", lua_out = "ffi_entries.lua",
           helpers = "ffi_core.lua's helpers (h)",
           locals = { "live", "check_array", "wrap_node", "wrap_array", "raise", "value_of" } },
  mpi = { header = "lacc_mpi_core.h", array = "lm_entry_funcs", raise = "lm_raise(L)",
          def = "mpi/entries.def", c_out = "mpi_entries.c", lua_out = "mpi_entries.lua",
          helpers = "mpi_ffi.lua's helpers (h)", locals = { "raise" } },
}
local family = FAMILIES.core

local entries = {}
for line in io.lines() do
  local fam = line:match("^family%s+(%w+)")
  if fam then
    family = assert(FAMILIES[fam], "no family " .. fam)
  elseif not line:match("^%s*#") and line:match("%S") then
    local words = {}
    for w in line:gmatch("%S+") do words[#words + 1] = w end
    local e = { name = words[1], result = words[2], fn = words[3], args = {} }
    for k = 4, #words do e.args[#e.args + 1] = words[k] end
    entries[#entries + 1] = e
  end
end

-- Each argument kind: the C expression for Lua argument k, the Lua one for parameter p.
local ARG = {
  ctx = { c = function() return "lb_ctx(L)" end, lua = function() return "live()" end },
  array = { c = function(k) return ("lb_check_array(L, %d)"):format(k) end,
            lua = function(p) return ("check_array(%s)"):format(p) end },
  node = { c = function(k) return ("lb_check_node(L, %d)"):format(k) end, lua = function(p) return p end },
  string = { c = function(k) return ("luaL_checkstring(L, %d)"):format(k) end, lua = function(p) return p end },
  ["string?"] = { c = function(k) return ("luaL_optstring(L, %d, NULL)"):format(k) end,
                  lua = function(p) return p end },
  int = { c = function(k) return ("(int)luaL_checkinteger(L, %d)"):format(k) end, lua = function(p) return p end },
  index = { c = function(k) return ("(int64_t)luaL_checkinteger(L, %d)"):format(k) end,
            lua = function(p) return p end },
  value = { c = function(k) return ("lb_value(L, %d, &(lacc_value){ 0 })"):format(k) end,
            lua = function(p) return ("value_of(%s)"):format(p) end },
  bool = { c = function(k) return ("lua_toboolean(L, %d)"):format(k) end,
           lua = function(p) return ("(%s and 1 or 0)"):format(p) end },
  where = { c = function(k) return ("luaL_optstring(L, %d, \"?\")"):format(k) end,
            lua = function(p) return ("(%s or \"?\")"):format(p) end },
}
-- Each result kind: the C statements and the Lua ones around the call (%s).
local RESULT = {
  node = { c = "  return lb_push_node(L, %s);", lua = "return wrap_node(%s)" },
  array = { c = "  lacc_array *a = %s;\n  if (a == NULL) return RAISE;\n  lb_push_array(L, a);\n  return 1;",
            lua = "local p = %s\n    if p == nil then raise() end\n    return wrap_array(p)" },
  int = { c = "  lua_pushinteger(L, (lua_Integer)%s);\n  return 1;", lua = "return tonumber(%s)" },
  string = { c = "  lua_pushstring(L, %s);\n  return 1;", lua = "return ffi_string(%s)" },
  status = { c = "  if (%s != 0) return RAISE;\n  return 0;", lua = "if %s ~= 0 then raise() end" },
  bool = { c = "  lua_pushboolean(L, %s);\n  return 1;", lua = "return %s ~= 0" },
  number = { c = "  lua_pushnumber(L, %s);\n  return 1;", lua = "return tonumber(%s)" },
  nothing = { c = "  (void)L;\n  %s;\n  return 0;", lua = "%s" },
  size = { c = "  int64_t n = %s;\n  if (n < 0) return RAISE;\n  lua_pushinteger(L, (lua_Integer)n);\n  return 1;",
           lua = "local n = %s\n    if n < 0 then raise() end\n    return tonumber(n)" },
}

-- The call of e's C function on `vm` ("c" or "lua"), and the Lua function's parameters.
local function call(e, vm)
  local exprs, params, k = {}, {}, 0
  for _, kind in ipairs(e.args) do
    local make = assert(ARG[kind], e.name .. ": no argument kind " .. kind)[vm]
    if kind == "ctx" then
      exprs[#exprs + 1] = make()
    else
      k = k + 1
      params[#params + 1] = "a" .. k
      exprs[#exprs + 1] = make(vm == "c" and k or "a" .. k)
    end
  end
  return ("%s%s(%s)"):format(vm == "lua" and "C." or "", e.fn, table.concat(exprs, ", ")), params
end
local function result(e, vm)
  local r = assert(RESULT[e.result], e.name .. ": no result kind " .. e.result)[vm]
  return (r:gsub("RAISE", family.raise))
end

local out = {}
local function put(s) out[#out + 1] = s end
if what == "c" then
  put(("/* %s: generated by tools/gen_entries.lua from %s (make"):format(family.c_out, family.def))
  put(" * entries): do not edit. The Lua 5.4 module's functions of the plain entry points. */")
  put(('#include "%s"'):format(family.header))
  for _, e in ipairs(entries) do
    put("")
    put(("static int l_%s(lua_State *L) {"):format(e.name))
    put(result(e, "c"):format((call(e, "c"))))
    put("}")
  end
  put("")
  put(("const luaL_Reg %s[] = {"):format(family.array))
  for _, e in ipairs(entries) do put(('  { "%s", l_%s },'):format(e.name, e.name)) end
  put("  { NULL, NULL }")
  put("};")
else
  put(("-- %s: generated by tools/gen_entries.lua from %s (make"):format(family.lua_out, family.def))
  put("-- entries): do not edit. LuaJIT's functions of the plain entry points, over")
  put(("-- %s."):format(family.helpers))
  for _, e in ipairs(entries) do
    if e.result == "string" then
      put("local ffi_string = require(\"ffi\").string")
      break
    end
  end
  put("return function(C, h)")
  local fields = {}
  for k, name in ipairs(family.locals) do fields[k] = "h." .. name end
  put(("  local %s ="):format(table.concat(family.locals, ", ")))
  put("    " .. table.concat(fields, ", "))
  put("  local F = {}")
  for _, e in ipairs(entries) do
    local c, params = call(e, "lua")
    put(("  function F.%s(%s)"):format(e.name, table.concat(params, ", ")))
    put("    " .. result(e, "lua"):format(c))
    put("  end")
  end
  put("  return F")
  put("end")
end
io.write(table.concat(out, "\n"), "\n")
