-- The communication model of lacc.mpi (the guide's "Scaling model"): what rank r (1-based)
-- of P sends, in messages and bytes, for a dot product, a stencil step, a histogram and a
-- conjugate-gradient turn; and the programs themselves, run as one rank of P over the
-- simulated transport (lacc.mpi.simulate). Used by spec/mpi/model_spec.lua (the formulas
-- against the simulation at 64 to 1,024 ranks), spec/mpi/cases.lua (against real runs at
-- 1 to 4 ranks) and bench/mpi/at_scale.lua (the table with predicted times).
local M = {}

-- rows of n (balanced, the first ranks one fewer) on rank r of P
function M.rows(n, P, r) return math.floor(r * n / P) - math.floor((r - 1) * n / P) end

function M.ceil_log2(P)
  local k = 0
  while 2 ^ k < P do k = k + 1 end
  return k
end

-- A fold's combining tree: each rank's messages and bytes (tables by rank), partials of
-- `size` bytes (has[q]: whether rank q has rows; a message is a flag byte and the
-- partial, the flag alone from a rank that holds nothing yet). Where P is not a power of
-- two the first 2 (P - m) ranks pair up (m the largest power of two below P), each odd
-- one's partial sent to the even one before it; the m ranks left exchange with the one
-- k = 1, 2, 4, ... away; the even ones of the pairs send the result back.
function M.tree(P, has, size)
  local st, msgs, bytes = {}, {}, {}
  for q = 1, P do st[q], msgs[q], bytes[q] = has[q], 0, 0 end
  local function send(q)
    msgs[q], bytes[q] = msgs[q] + 1, bytes[q] + (st[q] and 1 + size or 1)
  end
  if P == 1 then return msgs, bytes end
  local m = 1
  while m * 2 <= P do m = m * 2 end
  local extra = P - m
  for q = 1, 2 * extra, 2 do
    send(q + 1)
    st[q] = st[q] or st[q + 1]
  end
  local real = {}
  for w = 0, m - 1 do real[w] = (w < extra and 2 * w or w + extra) + 1 end
  local k = 1
  while k < m do
    local nxt = {}
    for w = 0, m - 1 do
      local pw = math.floor(w / k) % 2 == 1 and w - k or w + k
      send(real[w])
      nxt[real[w]] = st[real[w]] or st[real[pw]]
    end
    for q, v in pairs(nxt) do st[q] = v end
    k = k * 2
  end
  for q = 1, 2 * extra, 2 do send(q) end
  return msgs, bytes
end

-- The messages rank r (1-based) of P sends in a scan across the ranks (scanl: to the
-- rank k after it in round k = 1, 2, 4, ...; scanr: before it)
function M.scan_sends(P, r, right)
  local n, k = 0, 1
  while k < P do
    local to = right and r - k or r + k
    if to >= 1 and to <= P then n = n + 1 end
    k = k * 2
  end
  return n
end

-- rank r's messages and bytes in a fold of partials of `size` bytes, every rank with rows
local function fold_traffic(P, r, size)
  local has = {}
  for q = 1, P do has[q] = true end
  local msgs, bytes = M.tree(P, has, size)
  return msgs[r], bytes[r]
end

-- A stencil step's halo: h rows of `row` bytes to each neighbour (none past the ends)
local function halo(P, r, h, row)
  local n = (r > 1 and 1 or 0) + (r < P and 1 or 0)
  return n, n * h * row
end

-- The programs, per rank sizes (weak scaling): dot of n f64 a rank; a 3x3 box blur of
-- rows x w f32 a rank, clamped; a histogram of n i64 keys into `bins` bins (permute (+),
-- its partials combined by a tree); `turns` CG turns on rows x w f64 a rank (bench/mpi/scaling.lua's).
-- Each: the formula (messages, bytes of rank r of P) and the program, built by
-- build(lacc, P, sizes, gen) over inputs of gen (lacc.mpi.generate, or lacc.generate for
-- one process: bench/mpi/scaling.lua's cpu rows).
M.programs = {}

local function made(lacc, gen, shape, f) return lacc.run((gen or lacc.mpi.generate)(shape, f)) end

M.programs.dot = {
  formula = function(P, r) return fold_traffic(P, r, 8) end,
  build = function(lacc, P, s, gen)
    local n = s.dot * P
    local xs = made(lacc, gen, { n }, function(i) return lacc.cast(lacc.band(i, 1023), "f64") / 1024 end)
    local ys = made(lacc, gen, { n }, function(i) return lacc.cast(lacc.band(i * 7, 511), "f64") / 512 end)
    return lacc.sum(lacc.zipWith(function(a, b) return a * b end, xs, ys))
  end,
}

M.programs.blur = {
  formula = function(P, r, s) return halo(P, r, 1, s.w * 4) end,
  build = function(lacc, P, s, gen)
    local img = made(lacc, gen, { s.rows * P, s.w }, function(i, j)
      return lacc.cast(lacc.band(i * 31 + j * 17, 255), "f32") / 255
    end)
    return lacc.stencil(function(...)
      local t = 0
      for _, v in ipairs { ... } do t = t + v end
      return t / 9
    end, "clamp", img)
  end,
}

-- every rank's partial of the bins, i32 counts seeded with 0 (+ has an identity), 4 bytes
-- a bin, combined by a fold's tree (a partial of at most 64 KB)
M.programs.histogram = {
  formula = function(P, r, s) return fold_traffic(P, r, 4 * s.bins) end,
  build = function(lacc, P, s, gen)
    local keys = made(lacc, gen, { s.keys * P }, function(i)
      return lacc.band(i * 2654435761, s.bins - 1)
    end)
    local ones = lacc.map(function() return lacc.constant(1, "i32") end, keys)
    return lacc.permute(function(a, b) return a + b end, lacc.fill({ s.bins }, lacc.constant(0, "i32")),
      function(i) return keys[i] + 1 end, ones)
  end,
}

-- a turn: the 5-point stencil's halo (f64 rows), two dot products; the run: `turns` turns
-- and the first residual's dot product
M.programs.cg = {
  formula = function(P, r, s)
    local hm, hb = halo(P, r, 1, s.w * 8)
    local fm, fb = fold_traffic(P, r, 8)
    return s.turns * (hm + 2 * fm) + fm, s.turns * (hb + 2 * fb) + fb
  end,
  build = function(lacc, P, s, gen)
    local function laplacian(p)
      return lacc.stencil(function(_, up, _, left, c, right, _, down, _)
        return 4 * c - up - down - left - right
      end, lacc.constant(0, "f64"), p)
    end
    local function dot(a, b) return lacc.sum(lacc.zipWith(function(u, v) return u * v end, a, b)) end
    local b = made(lacc, gen, { s.rows * P, s.w }, function(i, j)
      return lacc.cast(lacc.band(i * 13 + j * 7, 15), "f64") / 16
    end)
    local zero = lacc.map(function() return lacc.constant(0, "f64") end, b)
    return (lacc.awhile(function(_, _, _, _, k) return lacc.lt(k, s.turns) end,
      function(x, r_, q, rr, k)
        local aq = laplacian(q)
        local alpha = lacc.zipWith(function(u, v) return u / v end, rr, dot(q, aq))
        local function axpy(sign, u, v)
          return lacc.zipWith(function(e, f) return e + sign * lacc.the(alpha) * f end, u, v)
        end
        local r2 = axpy(-1, r_, aq)
        local rr2 = dot(r2, r2)
        local beta = lacc.zipWith(function(u, v) return u / v end, rr2, rr)
        local q2 = lacc.zipWith(function(e, f) return e + lacc.the(beta) * f end, r2, q)
        return axpy(1, x, q), r2, q2, rr2, lacc.map(function(v) return v + 1 end, k)
      end,
      { zero, b, b, dot(b, b), lacc.unit(lacc.constant(0, "i64")) }))
  end,
}

M.order = { "dot", "blur", "histogram", "cg" }

-- Program `name` run as rank r of P (simulated): messages, bytes, collectives, and the
-- run's seconds (clock: a function of none giving seconds)
function M.simulate(lacc, name, P, r, s, clock)
  lacc.mpi.simulate(P, r)
  local p = M.programs[name].build(lacc, P, s)
  lacc.mpi.reset_stats()
  local t0 = clock and clock()
  lacc.run(p)
  local secs = clock and clock() - t0
  local st = lacc.mpi.stats()
  return st.messages_sent, st.bytes_sent, st.collectives, secs
end

return M
