-- Run by opencl_spec.lua in a process of its own, built as users build (the suite builds
-- with -cl-opt-disable, which leaves loops as written): folds in the cpu backend's lane
-- tiles, whose lane loop OpenCL is asked to unroll whole (column sums of f32 and of
-- (f64, i32) pairs, a matrix product, around the tiles' widths), and argmins (a test the
-- compiler is told usually keeps the accumulator), against the interpreter bit for bit
-- (each output is still folded in order). Prints "ok" or what differed.
local lacc = require "lacc"
local H = require "helper"
local cl, interp = { backend = "opencl" }, { backend = "interp" }
local bad = {}
local function same(a, b, what)
  local x, y = a:totable(), b:totable()
  local function walk(p, q, at)
    if type(p) == "table" then
      if #p ~= #q then bad[#bad + 1] = what .. ": lengths at " .. at; return end
      for i = 1, #p do walk(p[i], q[i], at .. "[" .. i .. "]") end
      if p.unpack then walk({ p:unpack() }, { q:unpack() }, at) end
    elseif H.num(p) ~= H.num(q) and #bad < 10 then
      bad[#bad + 1] = ("%s%s: %s, want %s"):format(what, at, tostring(p), tostring(q))
    end
  end
  walk(x, y, "")
end

-- one program, so one optimised build
H.seed(907)
local progs, names = {}, {}
for _, shape in ipairs { { 300, 517 }, { 7, 256 }, { 33, 1 }, { 2, 300, 260 } } do
  progs[#progs + 1] = lacc.sum(H.random_array("f32", shape), #shape - 1)
  names[#names + 1] = "column sums " .. table.concat(shape, "x")
end
local a, b = H.random_array("f64", { 40, 70 }), H.random_array("i32", { 40, 70 })
progs[#progs + 1] = lacc.fold(function(x, y)
  local x1, x2 = x:unpack()
  local y1, y2 = y:unpack()
  return lacc.tuple(x1 + y1, x2 - y2)
end, lacc.tuple(lacc.constant(0, "f64"), lacc.constant(0, "i32")), lacc.transpose(lacc.zip(a, b)))
names[#names + 1] = "column folds of (f64, i32)"
progs[#progs + 1] = lacc.matmul(H.random_array("f32", { 70, 45 }), H.random_array("f32", { 45, 131 }))
names[#names + 1] = "product"
-- argmins (the smaller value, then the smaller index), whose test OpenCL is told usually
-- keeps the accumulator: values from a few (many ties), a NaN, over a long row (partials)
-- and rows of a rank-2 array
local function argmin(xs)
  local ps = lacc.imap(function(...)
    local args = { ... }
    return lacc.tuple(args[#args], args[#args - 1])
  end, xs)
  return lacc.fold(function(p, q)
    local take = lacc.lor(lacc.lt(q[1], p[1]), lacc.land(lacc.eq(q[1], p[1]), lacc.lt(q[2], p[2])))
    return lacc.cond(take, q, p)
  end, lacc.tuple(lacc.constant(math.huge, "f32"), lacc.constant(2 ^ 40, "i64")), ps)
end
for _, shape in ipairs { { 100003 }, { 9, 1000 } } do
  local n, vals = 1, {}
  for _, e in ipairs(shape) do n = n * e end
  for i = 1, n do vals[i] = H.randint(-50, 50) / 4 end
  vals[7] = 0 / 0
  progs[#progs + 1] = argmin(lacc.reshape(shape, lacc.use(lacc.fromtable(vals, "f32"))))
  names[#names + 1] = "argmin " .. table.concat(shape, "x")
end
local got, want = { lacc.run(progs, cl) }, { lacc.run(progs, interp) }
for i = 1, #progs do same(got[i], want[i], names[i]) end
io.write(#bad == 0 and "ok" or table.concat(bad, "\n"))
