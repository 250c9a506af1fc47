-- Shared by the specs: the library, backends to test, and reference helpers.
local lacc = require "lacc"
local assert = require "luassert"
local H = { lacc = lacc }

-- Every spec runs on each backend available here.
H.backends = { "interp", "cpu" }

-- Deterministic pseudo-random numbers (the same on Lua 5.4 and LuaJIT).
local seed = 12345
function H.seed(s) seed = s end
function H.rand()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
end
function H.randint(lo, hi) return lo + math.floor(H.rand() * (hi - lo + 1)) end

-- Element of a host array as a plain Lua number (LuaJIT gives int64 cdata for 64-bit).
function H.num(v)
  if type(v) == "cdata" then return tonumber(v) end
  return v
end

function H.same(a, b, tol)
  a, b = H.num(a), H.num(b)
  if type(a) == "number" and type(b) == "number" then
    if a ~= a then return b ~= b end
    if tol then return math.abs(a - b) <= tol * math.max(1, math.abs(a), math.abs(b)) end
  end
  return a == b
end

-- Round to f32 like the core stores it.
local f32box
if type(jit) == "table" then
  local ffi = require "ffi"
  f32box = ffi.new("float[1]")
  function H.f32(x) f32box[0] = x; return tonumber(f32box[0]) end
else
  function H.f32(x)
    if x ~= x or x == math.huge or x == -math.huge or x == 0 then return x end
    return string.unpack("f", string.pack("f", x))
  end
end

-- Compare a host array against a Lua table of expected values (flat, row-major).
function H.check_array(a, expected, tol)
  assert.are.equal(#expected, #a)
  for i = 1, #expected do
    local got = a:at_linear(i - 1)
    if not H.same(got, expected[i], tol) then
      error(("element %d: expected %s, got %s"):format(i, tostring(expected[i]), tostring(got)), 2)
    end
  end
end

return H
