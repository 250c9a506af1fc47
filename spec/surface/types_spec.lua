-- types/lacc.lua (LuaLS definitions) and the module agree: every name of lacc is
-- annotated, and every annotated name is lacc's.
local H = require "helper"
local lacc = H.lacc

describe("types/lacc.lua", function()
  it("annotates every name of the module, and no other", function()
    local f = assert(io.open("types/lacc.lua"))
    local text = f:read("*a")
    f:close()
    assert.truthy(text:find("^%-%-%-@meta"))
    local named = {}
    for name in text:gmatch("\nfunction lacc%.([%w_]+)%(") do named[name] = true end
    local class = text:match("\n%-%-%-@class lacc\n(.-)\nlocal lacc = {}")
    assert.truthy(class, "the ---@class lacc block")
    for name in class:gmatch("%-%-%-@field ([%w_]+)") do named[name] = true end
    local missing, stale = {}, {}
    for k in pairs(lacc) do
      if not named[k] then missing[#missing + 1] = k end
    end
    for k in pairs(named) do
      if lacc[k] == nil then stale[#stale + 1] = k end
    end
    table.sort(missing)
    table.sort(stale)
    assert.are.same({}, missing)
    assert.are.same({}, stale)
    -- lacc.random's functions likewise
    local rnamed, rmissing = {}, {}
    for name in text:gmatch("\nfunction lacc%.random%.([%w_]+)%(") do
      rnamed[name] = true
      assert.is_function(lacc.random[name], "lacc.random." .. name)
    end
    for _, k in ipairs { "uniform", "normal", "integers", "at" } do
      if not rnamed[k] then rmissing[#rmissing + 1] = k end
    end
    assert.are.same({}, rmissing)
  end)

  it("is valid Lua", function()
    assert.truthy(loadfile("types/lacc.lua"))
  end)
end)
