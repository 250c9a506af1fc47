-- One version (issue 21): lacc.h's enum is what lacc._VERSION and lacc.version say; the
-- LICENSE is the MIT licence the rockspec names.
local H = require "helper"
local lacc = H.lacc

local function read(path)
  local f = assert(io.open(path))
  local s = f:read("*a")
  f:close()
  return s
end

describe("the version", function()
  it("is lacc.h's, in lacc._VERSION and lacc.version", function()
    local h = read("core/include/lacc.h")
    local major = tonumber(h:match("LACC_VERSION_MAJOR = (%d+)"))
    local minor = tonumber(h:match("LACC_VERSION_MINOR = (%d+)"))
    local patch = tonumber(h:match("LACC_VERSION_PATCH = (%d+)"))
    assert.are.equal(("lacc %d.%d.%d"):format(major, minor, patch), lacc._VERSION)
    assert.are.same({ major, minor, patch }, { lacc.version.major, lacc.version.minor, lacc.version.patch })
    assert.is_false(pcall(function() lacc.version.major = 9 end))
  end)

  it("comes with the MIT licence the rockspec names", function()
    assert.truthy(read("LICENSE"):find("MIT License", 1, true))
    assert.truthy(read("rockspec/lacc-scm-1.rockspec"):find('license = "MIT"', 1, true))
  end)
end)
