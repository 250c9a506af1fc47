-- The grad group (issue 47): an objective and its gradient in lacc, the program of each
-- built once (untimed), then run (not named grad.lua: with bench/ first on LUA_PATH it
-- would stand in for the module lacc.grad). Usage: gradients.lua PROGRAM ROW
--   PROGRAM  gmm (ADBench's GMM, d 64, k 50, n 10,000, f64), logreg (1M x 64 f32),
--            mlp (batch 1024, 784-256-10, softmax cross-entropy, f32), nbody (the energy
--            of 4,096 bodies, f64), diffusion (10 explicit steps of the heat equation on
--            1024 x 1024 f32, the squared distance to a target)
--   ROW      lacc_objective (the objective) or lacc_gradient (its gradient by lacc.grad)
-- Inputs: element k (1-based, row-major) of each is 2 frac(k c) - 1 (times a scale), with
-- bench/numpy/common.py's constants; bench/peers/torch_grad.py builds the same.
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")

local program, row = arg[1], arg[2]
local bench = "grad_" .. program

-- An array of shape sh and type t: 2 frac(k c) - 1, times scale.
local function input(sh, t, c, scale)
  return lacc.run(lacc.generate(sh, function(...)
    local ix, k = { ... }, 0
    for d = 1, #sh do k = k * sh[d] + (ix[d] - 1) end
    return lacc.cast((2 * R.frac(k + 1, c) - 1) * (scale or 1), t)
  end))
end

local programs = {}

function programs.logreg()
  local n, m = 1000000, 64
  local X, w = input({ n, m }, "f32", B.C1), input({ m }, "f32", B.C2, 0.1)
  local y = lacc.run(lacc.generate({ n }, function(i)
    return lacc.cast(lacc.gt(R.frac(i, B.C3), 0.5), "i32")
  end):cast("f32"))
  local function f(w_)
    local z = lacc.sum(X * w_, 2)
    local s = (1 - 2 * y) * z
    return (lacc.max(s, 0) + lacc.log1p(lacc.exp(-lacc.abs(s)))):mean()
  end
  return f, { w }
end

function programs.mlp()
  local n, i_, h, o = 1024, 784, 256, 10
  local X = input({ n, i_ }, "f32", B.C1)
  local labels = lacc.run(lacc.generate({ n }, function(k)
    return lacc.cast(lacc.floor(R.frac(k, B.C2) * o), "i64") + 1
  end))
  local W1, b1 = input({ i_, h }, "f32", B.C2, 0.05), input({ h }, "f32", B.C3, 0.1)
  local W2, b2 = input({ h, o }, "f32", B.C3, 0.1), input({ o }, "f32", B.C1, 0.1)
  local function f(w1, c1, w2, c2)
    local hidden = lacc.max(lacc.matmul(X, w1) + c1, 0)
    local logits = lacc.matmul(hidden, w2) + c2
    local m = lacc.maximum(logits, 2)
    local lse = m + lacc.log(lacc.sum(lacc.exp(logits - lacc.replicate({ lacc.all, o }, m)), 2))
    local picked = lacc.generate({ n }, function(k) return logits:at(k, labels[k]) end)
    return (lse - picked):mean()
  end
  return f, { W1, b1, W2, b2 }
end

function programs.nbody()
  local n = 4096
  local pos, vel = input({ n, 3 }, "f64", B.C1, 10), input({ n, 3 }, "f64", B.C2)
  local mass = lacc.run(lacc.map(function(v) return v * 0.5 + 1 end, input({ n }, "f64", B.C3)))
  local function f(p, v)
    local kinetic = 0.5 * lacc.sum(lacc.generate({ n }, function(i)
      return mass[i] * (v:at(i, 1) * v:at(i, 1) + v:at(i, 2) * v:at(i, 2) + v:at(i, 3) * v:at(i, 3))
    end))
    local potential = lacc.sum(lacc.generate({ n, n }, function(i, j)
      local dx, dy, dz = p:at(i, 1) - p:at(j, 1), p:at(i, 2) - p:at(j, 2), p:at(i, 3) - p:at(j, 3)
      local r = lacc.sqrt(dx * dx + dy * dy + dz * dz + 0.01)
      return lacc.cond(lacc.lt(i, j), mass[i] * mass[j] / r, lacc.constant(0, "f64"))
    end))
    return kinetic - potential
  end
  return f, { pos, vel }
end

function programs.diffusion()
  local w, steps, alpha = 1024, 10, 0.2
  local u0, target = input({ w, w }, "f32", B.C1), input({ w, w }, "f32", B.C2)
  local function f(u)
    for _ = 1, steps do
      u = lacc.stencil(function(_, n, _, wst, c, e, _, s, _)
        return c + alpha * (n + s + wst + e - 4 * c)
      end, "clamp", u)
    end
    local d = u - target
    return lacc.sum(d * d)
  end
  return f, { u0 }
end

function programs.gmm()
  local n, d, k = 10000, 64, 50
  local tri = math.floor(d * (d - 1) / 2)
  local x = input({ n, d }, "f64", B.C1)
  local alphas, means, icf = input({ k }, "f64", B.C2), input({ k, d }, "f64", B.C3),
                             input({ k, d + tri }, "f64", B.C1, 0.1)
  local function lower(c, r) return d + lacc.idiv((c - 1) * (2 * d - c), 2) + (r - c) end
  local function logsumexp(a, dim)
    local m = lacc.maximum(a, dim)
    if dim == nil then return m + lacc.log(lacc.sum(lacc.exp(a - m))) end
    local shifted = lacc.generate(lacc.shape(a), function(i, j) return a:at(i, j) - m:at(i) end)
    return m + lacc.log(lacc.sum(lacc.exp(shifted), dim))
  end
  local function f(al, mu, q)
    -- each component's Q (lower triangular: exp of the first d parameters on the
    -- diagonal, the rest below it), transposed, built once; Q (x_i - mu_j) for every
    -- point and component as k products of n x d by d x d (as the PyTorch row's einsum)
    local qt = lacc.compute(lacc.generate({ k, d, d }, function(j, c, r)
      local below = q:at(j, lacc.cond(lacc.lt(c, r), lower(c, r), 1))
      return lacc.cond(lacc.eq(c, r), lacc.exp(q:at(j, r)),
                       lacc.cond(lacc.lt(c, r), below, lacc.constant(0, "f64")))
    end))
    local centred = lacc.generate({ k, n, d }, function(j, i, c) return x:at(i, c) - mu:at(j, c) end)
    local qx = lacc.matmul(centred, qt)
    local sq = lacc.sum(qx * qx, 3)
    local sum_qs = lacc.sum(lacc.generate({ k, d }, function(j, r) return q:at(j, r) end), 2)
    local main = lacc.generate({ n, k }, function(i, j)
      return al:at(j) + sum_qs:at(j) - 0.5 * sq:at(j, i)
    end)
    local prior = 0.5 * lacc.sum(lacc.generate({ k, d + tri }, function(j, p)
      local v = q:at(j, p)
      return lacc.cond(lacc.le(p, d), lacc.exp(v) * lacc.exp(v), v * v)
    end))
    return -n * d * 0.5 * math.log(2 * math.pi) + lacc.sum(logsumexp(main, 2)) - n * logsumexp(al) + prior
  end
  return f, { alphas, means, icf }
end

local make = programs[program]
if not make then return B.na(bench, row, "unknown program " .. tostring(program)) end
local f, inputs = make()
local progs, note
if row == "lacc_objective" then
  progs, note = { f((table.unpack or unpack)(inputs)) }, "objective"
elseif row == "lacc_gradient" then
  local all = {}
  for i = 1, #inputs do all[i] = i end
  progs, note = { lacc.grad(f, all)((table.unpack or unpack)(inputs)) }, "gradient of " .. #inputs .. " arguments"
else
  return B.na(bench, row, "unknown row " .. tostring(row))
end
local ok, text, st = pcall(lacc.explain, progs)
if ok and type(st) == "table" then note = note .. " kernels=" .. tostring(st.kernels) end
-- BENCH_EXPLAIN=FILE: the program's explain text there
local dump = os.getenv("BENCH_EXPLAIN")
if ok and dump and dump ~= "" then
  local fh = assert(io.open(dump, "w"))
  fh:write(text)
  fh:close()
end
local ms, reps, last = B.measure(function() return { lacc.run(progs) } end)
-- the checksum: the sum of every result's elements (f64)
local sum = 0
for _, r in ipairs(last) do
  for i = 0, r:size() - 1 do sum = sum + r:at_linear(i) end
end
B.result(bench, row, ms, sum, reps, note)
