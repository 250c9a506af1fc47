-- Every Lua code block in the README and docs/ runs without error on this VM.
local function blocks(path)
  local f = assert(io.open(path))
  local text = f:read("a") or f:read("*a")
  f:close()
  local r = {}
  for code in text:gmatch("```lua\n(.-)```") do r[#r + 1] = code end
  return r
end

describe("documentation examples", function()
  for _, path in ipairs { "README.md", "docs/guide.md", "docs/core.md" } do
    for i, code in ipairs(blocks(path)) do
      it(("%s block %d runs"):format(path, i), function()
        local out = {}
        local env = setmetatable({ print = function(...)
          out[#out + 1] = select("#", ...) end }, { __index = _G })
        local chunk, err
        if setfenv then
          chunk, err = loadstring(code, path)
          if chunk then setfenv(chunk, env) end
        else
          chunk, err = load(code, path, "t", env)
        end
        assert.is_nil(err)
        chunk()
        assert.is_true(#out > 0)   -- every example shows something
      end)
    end
  end
end)
