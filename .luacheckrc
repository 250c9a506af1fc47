-- luacheck over lacc's Lua (make lint): one std for the code both VMs run (Lua 5.4's
-- and LuaJIT's names; each file guards what only one of them has), busted's for specs.
std = "max"
max_line_length = 130
unused_args = false
files["spec"] = { std = "+busted" }
files["bench/luajit"] = { std = "luajit" }
-- LuaLS definitions: classes declared for the annotations only
files["types"] = { ignore = { "211", "241" } }
exclude_files = { "lua/lacc/cdef.lua", "build", "build-asan", "build-tsan" }
