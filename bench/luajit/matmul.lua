-- Matrix product of two n x n matrices as plain LuaJIT i-k-j loops over FFI arrays (one
-- thread), f32 (f64 with TYPE f64: matmul_f64). Inputs as bench/c/matmul.c.
-- Usage: luajit matmul.lua ROW N [TYPE]
local ffi = require "ffi"
local B = require "benchlib"
local row, n, t = arg[1], tonumber(arg[2]), arg[3] or "f32"
local bench = t == "f32" and "matmul" or "matmul_" .. t
local ct = t == "f64" and "double[?]" or "float[?]"

local a, b, c = ffi.new(ct, n * n), ffi.new(ct, n * n), ffi.new(ct, n * n)
for i = 0, n - 1 do
  for j = 0, n - 1 do
    a[i * n + j] = ((7 * (i + 1) + 3 * (j + 1)) % 11 - 4) / 4
    b[i * n + j] = ((5 * (i + 1) + 2 * (j + 1)) % 13 - 5) / 4
  end
end

local function matmul()
  for i = 0, n - 1 do
    local ci = i * n
    for j = 0, n - 1 do c[ci + j] = 0 end
    for k = 0, n - 1 do
      local aik, bk = a[ci + k], k * n
      for j = 0, n - 1 do c[ci + j] = c[ci + j] + aik * b[bk + j] end
    end
  end
  return c
end

local ms, reps = B.measure(matmul)
local cs = 0
for k = 0, n * n - 1 do cs = cs + c[k] end
B.result(bench, row, ms, cs, reps, jit.version:gsub(" ", ""))
