-- lacc.sums: element types, sum types and their values on the surface.
-- Owns: lacc.tuple (a tuple type or a tuple value), data, variant, match, the Maybe and
-- Either types with their constructors, and lacc.layout (a type's layout under a
-- strategy). Must not: parse types (types.lua does) or build expressions (exp.lua does).
local types = require "lacc.types"
local util = require "lacc.util"
local exp = require "lacc.exp"
local core, fail = util.core, util.fail

local M = {}
local F = {}   -- what this module adds to lacc
-- lacc itself (M.install): calls go through it.
local lacc

-- Shape.Circle, V[2]: the constructors of data types are expressions' constructors.
types.constructor = exp.constructor

-- lacc.tuple: a tuple type from types, a tuple value from expressions.
function F.tuple(...)
  local n = select("#", ...)
  local all_types = n > 0
  for i = 1, n do
    local x = select(i, ...)
    if type(x) ~= "string" and getmetatable(x) ~= types.Data then all_types = false end
  end
  if all_types then return types.tuple(...) end
  for i = 1, n do
    local x = select(i, ...)
    if type(x) == "string" or getmetatable(x) == types.Data then
      fail("tuple: argument %d is a type and others are not: give all element types (a tuple type) "
           .. "or all values (a tuple value)", i)
    end
  end
  return exp.tuple(...)
end

-- ---- sum types and their layouts

F.data = types.data
F.variant = types.variant
F.match = exp.match
-- A type argument of Maybe / Either / Nothing / Left / Right (a missing one is an error).
local function type_arg(what, t)
  local _, err = types.parse(t)
  if err then fail("%s: %s", what, err) end
  return t
end
function F.Maybe(t) return types.data("Maybe", { { "Nothing" }, { "Just", type_arg("Maybe", t) } }) end
function F.Either(a, b)
  return types.data("Either", { { "Left", type_arg("Either", a) }, { "Right", type_arg("Either", b) } })
end
-- lacc.Just(x) takes its type from x; lacc.Nothing(t) needs one.
function F.Just(x)
  x = exp.lift(x, nil, "Just")
  return lacc.Maybe(x.t).Just(x)
end
function F.Nothing(t) return lacc.Maybe(type_arg("Nothing", t)).Nothing() end
function F.Left(x, b)
  x = exp.lift(x, nil, "Left")
  return lacc.Either(x.t, type_arg("Left", b)).Left(x)
end
function F.Right(a, y)
  y = exp.lift(y, nil, "Right")
  return lacc.Either(type_arg("Right", a), y.t).Right(y)
end

-- layout(T [, strategy]) -> { strategy, choices, tag_bits, tags = {...}, tag_encoding,
-- fields = { {bits, types = {...}}, ... }, bits, minimum_bits }
function F.layout(t, strategy)
  local p, err = types.parse(t)
  if not p then fail("layout: %s", err) end
  if strategy ~= nil then types.check_layout("layout", strategy) end
  local text = core.layout(p.sig, strategy)
  local r = { tags = {}, fields = {}, tag_bits = 0, tag_encoding = "none" }
  for line in text:gmatch("[^\n]+") do
    local key, rest = line:match("^(%S+)%s*(.*)$")
    if key == "strategy" then r.strategy = rest
    elseif key == "choices" then r.choices = tonumber(rest)
    elseif key == "tag" then
      local bits, enc = rest:match("^(%d+) (%S+)$")
      r.tags[#r.tags + 1] = tonumber(bits)
      r.tag_bits = r.tag_bits + tonumber(bits)
      r.tag_encoding = enc
    elseif key == "field" then
      local bits, members = rest:match("^(%d+) (%S+)$")
      local ts = {}
      for m in members:gmatch("[^,]+") do ts[#ts + 1] = m end
      r.fields[#r.fields + 1] = { bits = tonumber(bits), types = ts }
    elseif key == "bits" then r.bits = tonumber(rest)
    elseif key == "minimum" then r.minimum_bits = tonumber(rest) end
  end
  return r
end

M.install = util.installer(F, function(l) lacc = l end)

return M
