-- lacc.types: element types on the Lua side.
-- Owns: type values (signature strings: "f32", "(f32,i64)"), their parsed trees and
-- leaf counts, used to convert host values. Must not: check programs (the core does).
local M = {}

M.scalars = { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64" }
local is_scalar = {}
for _, s in ipairs(M.scalars) do is_scalar[s] = true end
M.is_scalar = is_scalar

-- Parsed types: { kind = "scalar", name = "f32" } | { kind = "tuple", fields = {...} },
-- each with nleaves and sig.
local cache = {}

local function parse(s, pos)
  pos = s:find("%S", pos) or #s + 1
  if s:sub(pos, pos) == "(" then
    local fields, leaves = {}, 0
    pos = s:find("%S", pos + 1) or #s + 1
    if s:sub(pos, pos) == ")" then
      return { kind = "tuple", fields = fields, nleaves = 0, sig = "()" }, pos + 1
    end
    while true do
      local f
      f, pos = parse(s, pos)
      if not f then return nil end
      fields[#fields + 1] = f
      leaves = leaves + f.nleaves
      pos = s:find("%S", pos) or #s + 1
      local c = s:sub(pos, pos)
      if c == ")" then
        local sigs = {}
        for i, x in ipairs(fields) do sigs[i] = x.sig end
        return { kind = "tuple", fields = fields, nleaves = leaves,
                 sig = "(" .. table.concat(sigs, ",") .. ")" }, pos + 1
      elseif c ~= "," then
        return nil
      end
      pos = pos + 1
    end
  end
  local name = s:match("^[%a%d]+", pos)
  if not name or not is_scalar[name] then return nil end
  return { kind = "scalar", name = name, nleaves = 1, sig = name }, pos + #name
end

-- The parsed form of a type signature, or nil and a message.
function M.parse(t)
  if type(t) ~= "string" then return nil, "expected an element type, got " .. type(t) end
  local hit = cache[t]
  if hit then return hit end
  local r, pos = parse(t, 1)
  if not r or t:find("%S", pos) then return nil, ("not an element type: '%s'"):format(t) end
  cache[t] = r
  return r
end

function M.is_type(t) return M.parse(t) ~= nil end

function M.tuple(...)
  local sigs = {}
  for i = 1, select("#", ...) do
    local t = select(i, ...)
    local p, err = M.parse(t)
    if not p then error("tuple: " .. err, 3) end
    sigs[i] = p.sig
  end
  return "(" .. table.concat(sigs, ",") .. ")"
end

function M.is_int(name) return name ~= "bool" and name:sub(1, 1) ~= "f" end
function M.is_float(name) return name == "f32" or name == "f64" end

return M
