-- lacc.types: element types on the Lua side.
-- Owns: type values (signature strings: "f32", "(f32,i64)"), their parsed trees and
-- leaf counts, used to convert host values. Must not: check programs (the core does).
local util = require "lacc.util"
local fail = util.fail
local M = {}

M.scalars = { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64" }
local is_scalar = {}
for _, s in ipairs(M.scalars) do is_scalar[s] = true end
M.is_scalar = is_scalar

-- Parsed types: { kind = "scalar", name = "f32" } | { kind = "tuple", fields = {...} } |
-- { kind = "sum", name = "Shape" or nil, constructors = { {name, payload, offset}... },
--   index = { [name] = c } },
-- each with nleaves and sig. Cached by the string parsed, weakly: a program holds its
-- types' trees while it lives, and a type no longer used costs nothing.
local cache = setmetatable({}, { __mode = "v" })

-- The core's limit (docs/guide.md, Limits), checked on the way down: a type nested deeper
-- fails one level past it, in time and memory bounded by the limit, not by the string's
-- length.
local MAX_NESTING = util.limits.nesting
local TOO_DEEP = ("element type too large: types nest at most %d levels deep"):format(MAX_NESTING)
local MAX_CONSTRUCTORS = util.limits.constructors
local TOO_MANY = ("element type too large: a sum has at most %d constructors"):format(MAX_CONSTRUCTORS)

local parse

-- After "Name" (or nothing, for a structural variant) at "<": the constructors.
-- Returns the type and the position after it, or nil and a message (nil: not a type).
local function parse_sum(s, pos, name, depth)
  local cons, sigs, index = {}, {}, {}
  pos = pos + 1
  while true do
    if #cons == MAX_CONSTRUCTORS then return nil, TOO_MANY end
    pos = s:find("%S", pos) or #s + 1
    local c
    if name then
      local cname = s:match("^[%a_][%w_]*", pos)
      if not cname then return nil end
      pos = pos + #cname
      local payload = { kind = "tuple", fields = {}, nleaves = 0, sig = "()" }
      if s:sub(pos, pos) == "(" then
        payload, pos = parse(s, pos, depth + 1)
        if not payload then return nil, pos end
      end
      c = { name = cname, payload = payload }
      sigs[#sigs + 1] = cname .. (#payload.fields > 0 and payload.sig or "")
    else
      local f
      f, pos = parse(s, pos, depth + 1)
      if not f then return nil, pos end
      c = { name = tostring(#cons + 1), payload = { kind = "tuple", fields = { f },
            nleaves = f.nleaves, sig = "(" .. f.sig .. ")" } }
      sigs[#sigs + 1] = f.sig
    end
    cons[#cons + 1] = c
    index[c.name] = index[c.name] or #cons
    pos = s:find("%S", pos) or #s + 1
    local ch = s:sub(pos, pos)
    if ch == ">" then
      -- leaves as in the core: the constructor index, then every payload's leaves
      -- (offset: the first leaf of a constructor's payload, from the sum's first leaf)
      local leaves = 1
      for _, k in ipairs(cons) do
        k.offset = leaves
        leaves = leaves + k.payload.nleaves
      end
      return { kind = "sum", name = name, constructors = cons, index = index, nleaves = leaves,
               has_sum = true, sig = (name or "") .. "<" .. table.concat(sigs, "|") .. ">" },
             pos + 1
    elseif ch ~= "|" then
      return nil
    end
    pos = pos + 1
  end
end

function parse(s, pos, depth)
  if depth > MAX_NESTING then return nil, TOO_DEEP end
  pos = s:find("%S", pos) or #s + 1
  if s:sub(pos, pos) == "(" then
    local fields, leaves, has_sum = {}, 0, false
    pos = s:find("%S", pos + 1) or #s + 1
    if s:sub(pos, pos) == ")" then
      return { kind = "tuple", fields = fields, nleaves = 0, sig = "()" }, pos + 1
    end
    while true do
      local f
      f, pos = parse(s, pos, depth + 1)
      if not f then return nil, pos end
      fields[#fields + 1] = f
      leaves = leaves + f.nleaves
      has_sum = has_sum or f.has_sum
      pos = s:find("%S", pos) or #s + 1
      local c = s:sub(pos, pos)
      if c == ")" then
        local sigs = {}
        for i, x in ipairs(fields) do sigs[i] = x.sig end
        return { kind = "tuple", fields = fields, nleaves = leaves, has_sum = has_sum,
                 sig = "(" .. table.concat(sigs, ",") .. ")" }, pos + 1
      elseif c ~= "," then
        return nil
      end
      pos = pos + 1
    end
  end
  if s:sub(pos, pos) == "<" then return parse_sum(s, pos, nil, depth) end
  local name = s:match("^[%a_][%w_]*", pos)
  if not name then return nil end
  if is_scalar[name] then
    return { kind = "scalar", name = name, nleaves = 1, sig = name }, pos + #name
  end
  local after = s:find("%S", pos + #name) or #s + 1
  if s:sub(after, after) ~= "<" then return nil end
  return parse_sum(s, after, name, depth)
end

-- The parsed form of a type signature, or nil and a message.
function M.parse(t)
  if type(t) == "table" and type(t.sig) == "string" then t = t.sig end
  if type(t) ~= "string" then return nil, "expected an element type, got " .. type(t) end
  local hit = cache[t]
  if hit then return hit end
  local r, pos = parse(t, 1, 0)
  if not r and pos then return nil, pos end
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
    if not p then fail("tuple: %s", err) end
    sigs[i] = p.sig
  end
  return "(" .. table.concat(sigs, ",") .. ")"
end

-- Sum types. A data type is a table with its signature (usable wherever a type is) and,
-- later, its constructors.
local Data = {}
Data.__tostring = function(d) return d.sig end
M.Data = Data
-- Shape.Circle, V[2]: constructor functions (built by lacc.exp, set by sums.lua)
M.constructor = nil
Data.__index = function(d, k)
  -- rawget: a missing field must not come back here
  local parsed, name = rawget(d, "parsed"), rawget(d, "name")
  local c = parsed.index[k] or (not parsed.name and parsed.constructors[k] and k)
  if c then return M.constructor(parsed, c) end
  local names = {}
  for i, con in ipairs(parsed.constructors) do names[i] = con.name end
  if not name then
    fail("variant %s has no member %s (it has 1 to %d)", rawget(d, "sig"), tostring(k),
      #parsed.constructors)
  end
  fail("%s has no constructor %s (it has %s)", name, tostring(k), table.concat(names, ", "))
end

local function sig_of(t, what)
  local p, err = M.parse(t)
  if not p then fail("%s: %s", what, err) end
  return p.sig
end

-- data(name, { {"Circle", "f32"}, {"Rect", "f32", "f32"}, {"Empty"} })
function M.data(name, constructors)
  if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") or is_scalar[name] then
    fail("data: expected a type name (an identifier), got %s", tostring(name))
  end
  if type(constructors) ~= "table" or #constructors == 0 then
    fail("data %s: expected a list of constructors", name)
  end
  local parts, seen = {}, {}
  for i, c in ipairs(constructors) do
    local cname = type(c) == "table" and c[1] or c
    if type(cname) ~= "string" or not cname:match("^[%a_][%w_]*$") then
      fail("data %s: constructor %d needs a name", name, i)
    end
    if seen[cname] then fail("data %s: constructor %s appears twice", name, cname) end
    seen[cname] = true
    local fields = {}
    for j = 2, type(c) == "table" and #c or 1 do
      local f = c[j]
      local fs = type(f) == "table" and f.sig or f
      -- only a field naming the type itself is recursion: a finished instance of a type
      -- of the same name (Maybe of a Maybe) is a finite type like any other; a field
      -- that is no type and names this one inside ("(f32,T)") is recursion too
      if fs == name or (type(fs) == "string" and not M.parse(fs)
                        and fs:find("%f[%w_]" .. name .. "%f[^%w_]")) then
        fail("data %s: constructor %s refers to %s itself: recursive types are not supported",
             name, cname, name)
      end
      fields[#fields + 1] = sig_of(f, "data " .. name)
    end
    parts[i] = cname .. (#fields > 0 and "(" .. table.concat(fields, ",") .. ")" or "")
  end
  local sig = name .. "<" .. table.concat(parts, "|") .. ">"
  local parsed, err = M.parse(sig)   -- each field is a type; the whole may pass a limit
  if not parsed then fail("data %s: %s", name, err) end
  return setmetatable({ sig = sig, name = name, parsed = parsed }, Data)
end

function M.variant(members)
  if type(members) ~= "table" or #members == 0 then
    fail("variant: expected a list of member types")
  end
  local parts = {}
  for i, t in ipairs(members) do parts[i] = sig_of(t, "variant") end
  local sig = "<" .. table.concat(parts, "|") .. ">"
  local parsed, err = M.parse(sig)
  if not parsed then fail("variant: %s", err) end
  return setmetatable({ sig = sig, parsed = parsed }, Data)
end

-- The layout strategies (lacc.set_layout, lacc.layout, the layout option).
local layouts = { compact = true, rtu = true, unboxed = true, compact_radix = true, rtu_radix = true }
function M.check_layout(what, strategy)
  if type(strategy) ~= "string" or not layouts[strategy] then
    fail("%s: unknown layout %s (expected \"compact\", \"rtu\", \"unboxed\", \"compact_radix\" or "
         .. "\"rtu_radix\")", what, type(strategy) == "string" and "'" .. strategy .. "'" or type(strategy))
  end
end

function M.is_int(name) return name ~= "bool" and name:sub(1, 1) ~= "f" end
function M.is_float(name) return name == "f32" or name == "f64" end

return M
