-- lacc.mpi.stencil: stencils over distributed arrays (lacc.mpi).
-- Owns: the halo exchange (the rows each rank's stencil reads from its neighbours, for
-- every boundary kind, wrapping included) and the local stencil over the block and halo.
-- Must not: gather whole arrays (only halo rows move).
local C = require "lacc.mpi.base"
local unpacked, elem_bytes, unpack = C.unpacked, C.elem_bytes, C.unpack
local DESC, H, about, floor, force = C.DESC, C.H, C.about, C.floor, C.force
local lazy, me, nranks, packed, plain, product = C.lazy, C.me, C.nranks, C.packed, C.plain, C.product
local record, rows_before, rows_of, together = C.record, C.rows_before, C.rows_of, C.together
local total, util, wrapped = C.total, C.util, C.wrapped

-- ---- stencils: the window's rows from the neighbours, then the local stencil

wrapped.stencil = function(args, n)
  local f, boundary, window = args[1], args[2], args[4]
  local nd = record("stencil", 1, plain.stencil, args, n)
  local w = window == nil and 3 or (type(window) == "number" and window or window[1])
  nd.halo = floor(w / 2)
  nd.wrap = boundary == "wrap"
  nd.fn, nd.boundary, nd.window = f, boundary, window
  return nd
end

-- the global rows (0-based, in order) a block [lo, hi) of n rows reads with h rows around
local function halo_rows(lo, hi, n, h, wrap)
  local before, after = {}, {}
  if hi <= lo then return before, after end
  for r = lo - h, lo - 1 do
    if wrap and n > 0 then before[#before + 1] = r % n elseif r >= 0 then before[#before + 1] = r end
  end
  for r = hi, hi + h - 1 do
    if wrap and n > 0 then after[#after + 1] = r % n elseif r < n then after[#after + 1] = r end
  end
  return before, after
end

-- the rank (1-based) holding global row r
local function holder(counts, r)
  local acc = 0
  for q = 1, #counts do
    acc = acc + counts[q]
    if r < acc then return q end
  end
end

-- f(...) built directly on a node's first run, compiled (once per key) from its second:
-- a program run once pays no compile, one run again binds new arrays to kernels
local function node_fn(nd, key, opts, build)
  nd.compiled = nd.compiled or {}
  local fn = nd.compiled[key]
  if fn then return fn end
  if not nd.ran_once then
    nd.ran_once = { [key] = true }
    return build
  end
  if not nd.ran_once[key] then
    nd.ran_once[key] = true
    return build
  end
  fn = plain.compile(build, opts.localopts)
  nd.compiled[key] = fn
  return fn
end

local is_scalar = {}
for _, t in ipairs { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64" } do
  is_scalar[t] = true
end

-- The halo of v's block (h rows each side, cyclic where wrap): the rows before and after
-- it as bytes (bb, ab: nb and na rows), from the ranks that hold them, point to point;
-- with the block, its type and shape, its rows' bytes, and whether its elements are
-- scalars (what: the step, for the agreements every rank meets)
local function halo_of(v, h, wrap, opts, what)
  local counts, P = v.counts, nranks()
  local n = total(counts)
  local mine, lo = counts[me() + 1], rows_before(counts, me())
  local block, t, sh, rowbytes, scalar
  local whole   -- the block's bytes, for element types without scalar storage
  local function row_bytes(r)   -- one of this rank's rows (global r), packed
    if scalar then return util.core.array_read_bytes(block, (r - lo) * rowbytes, rowbytes) end
    whole = whole or packed(block, "stencil")
    return whole:sub((r - lo) * rowbytes + 1, (r - lo + 1) * rowbytes)
  end
  local starts = C.starts_of(counts)
  -- whether rank q's halo (h rows each side of its block, cyclically where the boundary
  -- wraps) reaches into this rank's rows: an O(1) test, so that a step at 1,024 ranks
  -- looks at the ranks' rows only near its own
  local function touches(q)
    local a, b = starts[q + 1], starts[q + 2]
    if b <= a or mine == 0 then return false end
    for _, s in ipairs(wrap and { 0, n, -n } or { 0 }) do
      if (a - h + s < lo + mine and a + s > lo) or (b + s < lo + mine and b + h + s > lo) then return true end
    end
    return false
  end
  -- this rank's own halo rows, and their bytes from each holder
  local mb, ma = halo_rows(lo, lo + mine, n, h, wrap)
  local need = {}
  -- what each rank q reads of this rank's rows, in q's order, and the room for what this
  -- rank reads (before the agreement: a rank that cannot pack its rows, or hold its
  -- halo, says so there, not in the exchange)
  local parts = together(what, function()
    block = force(v, opts)
    t, sh = block:type(), block:shape()
    rowbytes = elem_bytes(t) * product(sh, 2)
    scalar = is_scalar[t]
    local out = {}
    for q = 0, P - 1 do
      local buf = {}
      if touches(q) then   -- itself too: a wrapped halo of few rows reads its own
        local b, a = halo_rows(starts[q + 1], starts[q + 2], n, h, wrap)
        for _, list in ipairs { b, a } do
          for _, r in ipairs(list) do
            if r >= lo and r < lo + mine then buf[#buf + 1] = row_bytes(r) end
          end
        end
      end
      out[q + 1] = table.concat(buf)
    end
    for _, list in ipairs { mb, ma } do
      for _, r in ipairs(list) do
        local q = holder(counts, r)
        need[q] = (need[q] or 0) + rowbytes
      end
    end
    C.reserve_for(need)
    return out
  end)
  -- the halo: with each rank that sends this one rows or reads its rows (a symmetric
  -- relation), point to point; no all-to-all (a part for every rank, all but two empty)
  local got = C.swapped(parts, need)
  -- this rank's rows before and after, each from its holder, in order
  local cursor = {}
  for q = 1, P do cursor[q] = 0 end
  local function bytes_from(list)
    local out = {}
    for _, r in ipairs(list) do
      local q = holder(counts, r)
      out[#out + 1] = got[q]:sub(cursor[q] + 1, cursor[q] + rowbytes)
      cursor[q] = cursor[q] + rowbytes
    end
    return table.concat(out)
  end
  local bb, ab = bytes_from(mb), bytes_from(ma)
  local function rows_array(bytes, k)   -- k rows of the block's type and inner shape
    sh[1] = k
    return unpacked(bytes, t, sh)
  end
  -- the block with its halo rows, a copy
  local function extended()
    local body = scalar and util.core.array_read_bytes(block, 0, mine * rowbytes) or (whole or packed(block, "stencil"))
    return rows_array(bb .. body .. ab, #mb + mine + #ma)
  end
  return { block = block, t = t, sh = sh, rowbytes = rowbytes, scalar = scalar, mine = mine,
           bb = bb, ab = ab, nb = #mb, na = #ma, rows_array = rows_array, extended = extended }
end

-- The rows of a (k of them) then rows [from, from + m) of b, as one program of shape
-- {k + m, inner...} (a generate: both sides' reads clamped into their arrays, the side
-- not taken read harmlessly); with tail, a's rows are [from, from + k) and b's the first m
local function joined_rows(a, k, b, from, m, inner, tail)
  a, b = C.L.use(a), C.L.use(b)
  local sh = { k + m, unpack(inner, 2) }
  local af, bf = tail and from or 0, tail and 0 or from
  return plain.generate(sh, function(i, ...)
    local r = i - 1   -- the joined row, 0-based
    local x = a:at(C.L.min(r, k - 1) + af + 1, ...)
    local y = b:at(C.L.max(r - k, 0) + bf + 1, ...)
    return C.L.cond(C.L.lt(r, k), x, y)
  end)
end

H.stencil = function(nd, vals, opts)
  local v = vals[3]
  local counts, P = v.counts, nranks()
  if not counts or P == 1 then
    return { acc = lazy(nd, "out", { v.acc }, function()
      return plain.stencil(nd.fn, nd.boundary, v.acc, nd.window)
    end, true), counts = counts }
  end
  local h = nd.halo
  local what = about(nd, vals)   -- every agreement below: ranks take different paths
  local hx = halo_of(v, h, nd.wrap, opts, what)
  local block, sh, rowbytes, scalar, mine = hx.block, hx.sh, hx.rowbytes, hx.scalar, hx.mine
  -- (every rank agrees below, also one without rows: the ranks meet the same collectives)
  if mine == 0 then
    sh[1] = 0
    return { acc = together(what, function() return plain.array(nd.t, sh) end), counts = counts }
  end
  local bb, ab, nb, na, rows_array = hx.bb, hx.ab, hx.nb, hx.na, hx.rows_array
  local function stencil_rows(key, ext, from, to)   -- rows [from, to) of ext's stencil
    return node_fn(nd, key, opts, function(e)
      return rows_of(plain.stencil(nd.fn, nd.boundary, e, nd.window), from, to)
    end)(ext)
  end
  if scalar and mine >= 2 * h then
    -- the stencil of the block alone is right but for its first and last h rows where a
    -- neighbour's rows are read: those are computed from the halo and the block's edge
    -- rows, and written over (no copy of the block). One local run makes all three (each
    -- run is a fixed cost, dearer after the block's stencil has swept the caches).
    local res = together(what, function()
      -- the block, then the halo's rows before it and after it where there are any
      local args = { block }
      if nb > 0 then args[#args + 1] = rows_array(bb, nb) end
      if na > 0 then args[#args + 1] = rows_array(ab, na) end
      -- (the block's extents are in the key: the function reads them as constants)
      local key = ("edges %d:%d:%d:%s"):format(nb, na, mine, table.concat(sh, ",", 2))
      local fn = node_fn(nd, key, opts, function(b, x1, x2)
        local bx, ax = nb > 0 and x1 or nil, na > 0 and (nb > 0 and x2 or x1) or nil
        local out = { plain.stencil(nd.fn, nd.boundary, b, nd.window) }
        if bx then   -- the halo's rows, then the block's first 2h: the window of its first h
          local e = joined_rows(bx, nb, b, 0, 2 * h, sh)
          out[#out + 1] = rows_of(plain.stencil(nd.fn, nd.boundary, e, nd.window), nb, nb + h)
        end
        if ax then   -- the block's last 2h rows, then the halo's: the window of its last h
          local e = joined_rows(b, 2 * h, ax, mine - 2 * h, na, sh, true)
          out[#out + 1] = rows_of(plain.stencil(nd.fn, nd.boundary, e, nd.window), h, 2 * h)
        end
        return unpack(out)
      end)
      local out = { fn(unpack(args)) }
      local vs = {}
      for i, x in ipairs(out) do vs[i] = { acc = x } end
      C.force_all(vs, opts)
      local main, k = vs[1].acc, 2
      if nb > 0 then
        util.core.array_write_bytes(main, 0, vs[k].acc:tobytes())
        k = k + 1
      end
      if na > 0 then util.core.array_write_bytes(main, (mine - h) * rowbytes, vs[k].acc:tobytes()) end
      if opts.release then opts.release:made(main, nd) end   -- a loop's turn made it
      return main
    end)
    return { acc = res, counts = counts }
  end
  -- otherwise the block with its halo rows, a copy, then the stencil of that
  local ext = hx.extended()
  local res = together(what, function()
    return force({ acc = stencil_rows("ext", ext, nb, nb + mine) }, opts)
  end)
  return { acc = res, counts = counts }
end
DESC.stencil = "halo exchange: each rank receives the window's rows (half the window, " ..
  "each side) from the ranks that hold them, point to point (a message each way with each), " ..
  "runs the stencil on its block and recomputes its first and last rows from the halo"

-- stencil2 of two distributed arrays of one outer extent (their rows aligned first, as
-- element-wise operands are): each one's halo, then the local stencil2 of the two blocks
-- with their halos, its rows of the block kept. Of a distributed and a replicated array
-- (of one outer extent), the replicated one's rows around the block come from its own
-- copy. Where one boundary wraps and the other not, or the outer extents differ, each
-- array's window rows are padded by its own boundary (stencil2_padded).
wrapped.stencil2 = function(args, n)
  local f, b1, b2, window = args[1], args[2], args[4], args[6]
  local nd = record("stencil2", 1, plain.stencil2, args, n)
  local w = window == nil and 3 or (type(window) == "number" and window or window[1])
  nd.halo, nd.wrap = floor(w / 2), b1 == "wrap"
  nd.fn, nd.b1, nd.b2, nd.window = f, b1, b2, window
  return nd
end
-- a stencil2's block on a rank without result rows: empty, its inner extents the two
-- arrays' smaller ones (sa, sb: their shapes); every rank still meets the agreement
local function no_rows(nd, what, sa, sb, target)
  local sh = {}
  for d = 1, #sa do sh[d] = math.min(sa[d], sb[d]) end
  sh[1] = 0
  return { acc = together(what, function() return plain.array(nd.t, sh) end), counts = target }
end

-- rows [lo - nb, lo + mine + na) of a replicated array of n rows (cyclically), a program
local function rows_around(full, lo, nb, mine, na, n)
  local sh = full:shape()
  sh[1] = nb + mine + na
  local turns = math.floor(nb / n) + 1   -- keeps the row non-negative before the modulo
  return plain.backpermute(sh, function(i, ...)
    return C.L.imod(i - 1 + (lo - nb + turns * n), n) + 1, ...
  end, full)
end

-- the replicated operand i of a stencil2, run (inside an agreement: it may fail)
local function replicated_operand(nd, vals, i, opts, what)
  return together(what, function()
    return force({ acc = vals[i] and vals[i].acc or nd.args[i] }, opts)
  end)
end

local stencil2_padded

-- stencil2 of a distributed array (vals[di]) and a replicated one (the other): the
-- distributed one's halo as stencil's, the replicated one's rows around the block from
-- its own copy
local function stencil2_replicated(nd, vals, opts, di, local_stencil2)
  local ri = 8 - di
  local v = vals[di]
  local target, what = v.counts, about(nd, vals)
  local n = total(target)
  local full = replicated_operand(nd, vals, ri, opts, what)
  if full:shape()[1] ~= n then   -- (the same on every rank)
    return stencil2_padded(nd, vals, opts, local_stencil2, { [ri] = full })
  end
  local hx = halo_of(v, nd.halo, nd.wrap, opts, what)
  local mine, nb, na = hx.mine, hx.nb, hx.na
  if mine == 0 then return no_rows(nd, what, hx.sh, full:shape(), target) end
  local lo = rows_before(target, me())
  local ex = hx.extended()
  local res = together(what, function()
    local ey = lazy(nd, "around", { full, lo, nb, mine, na }, function()
      return rows_around(full, lo, nb, mine, na, n)
    end)
    local fn = node_fn(nd, "rep" .. di .. ":" .. nb .. ":" .. mine, opts, function(a, b)
      if di == 5 then a, b = b, a end
      return rows_of(local_stencil2(a, b), nb, nb + mine)
    end)
    return force({ acc = fn(ex, force({ acc = ey }, opts)) }, opts)
  end)
  return { acc = res, counts = target }
end

-- Rows [lo - h, lo + mine + h) of an array of n rows under boundary b (clamp, mirror or
-- a constant: the core's rule for a row outside), from ext, a host array of its rows from
-- `first` on (a block with its halo, or the whole array): the window's rows of a block
-- whose own boundary does not wrap, beside one whose does
local function padded_rows(ext, first, b, lo, mine, h, n)
  local sh = ext:shape()
  sh[1] = mine + 2 * h
  local src = C.L.use(ext)
  return plain.generate(sh, function(i, ...)
    local g = i - 1 + (lo - h)   -- the global row, 0-based
    local m = g
    if b == "mirror" then m = C.L.cond(C.L.lt(g, 0), -g, C.L.cond(C.L.ge(g, n), 2 * n - 2 - g, g)) end
    local s = C.L.max(C.L.min(m, n - 1), 0)
    local v = src:at(s - first + 1, ...)
    if type(b) ~= "string" then return C.L.cond(C.L.land(C.L.ge(g, 0), C.L.lt(g, n)), v, b) end
    return v
  end)
end

-- stencil2 where the window of one array is not the other's: one boundary wraps and the
-- other not, or the two outer extents differ (each array is read under its own extent
-- and boundary, as one process reads it: the longer one's rows past the shorter's end are
-- real rows, and its wrap turns at its own end). The result has the shorter extent, the
-- rows of its first distributed operand of that extent (else balanced); each array's
-- rows of the window around this rank's result rows: a distributed one's rows moved to
-- those (the longer one's rows past the result's on the last rank), then its halo with
-- its own boundary; a replicated one's from its own copy (`full`: those run already);
-- each padded by its boundary to the window's rows; then the local stencil2 of the two
-- (neither boundary's rows then reach a kept row)
function stencil2_padded(nd, vals, opts, local_stencil2, full)
  local what, h, P = about(nd, vals), nd.halo, nranks()
  full = full or {}
  local n = {}
  for _, i in ipairs { 3, 5 } do
    local v = vals[i]
    if v and v.counts then n[i] = total(v.counts)
    else
      full[i] = full[i] or replicated_operand(nd, vals, i, opts, what)
      n[i] = full[i]:shape()[1]
    end
  end
  local m = math.min(n[3], n[5])
  local target
  for _, i in ipairs { 3, 5 } do
    local v = vals[i]
    if not target and v and v.counts and n[i] == m then target = v.counts end
  end
  target = target or C.balanced(m, P)
  local lo, mine = rows_before(target, me()), target[me() + 1]
  local src, shapes = {}, {}
  for _, i in ipairs { 3, 5 } do
    local b = i == 3 and nd.b1 or nd.b2
    if full[i] then
      shapes[i] = full[i]:shape()
      src[i] = { full[i], 0, b, n[i], false }
    else
      local v, counts = vals[i], {}
      for q = 1, P do counts[q] = target[q] end
      counts[P] = counts[P] + n[i] - m
      if not C.same_counts(v.counts, counts) then
        v = C.redistribute(v, counts, nd.args[i].t, opts, about(nd, vals, ", its operands' rows aligned"))
      end
      local hv = halo_of({ acc = v.acc, counts = counts }, h, b == "wrap", opts, what)
      shapes[i] = hv.sh
      if mine > 0 then src[i] = { hv.extended(), lo - hv.nb, b, n[i], true } end
    end
  end
  if mine == 0 then return no_rows(nd, what, shapes[3], shapes[5], target) end
  local res = together(what, function()
    local padded = {}
    for _, i in ipairs { 3, 5 } do
      local e = src[i]
      if e[3] == "wrap" and e[5] then   -- a cyclic halo: its first rows the window's
        padded[i] = rows_of(e[1], 0, mine + 2 * h)
      elseif e[3] == "wrap" then   -- a replicated copy: its rows, cyclically
        padded[i] = rows_around(e[1], lo, h, mine, h, e[4])
      else
        padded[i] = padded_rows(e[1], e[2], e[3], lo, mine, h, e[4])
      end
    end
    return force({ acc = rows_of(local_stencil2(padded[3], padded[5]), h, h + mine) }, opts)
  end)
  return { acc = res, counts = target }
end

H.stencil2 = function(nd, vals, opts)
  local function local_stencil2(a, b) return plain.stencil2(nd.fn, nd.b1, a, nd.b2, b, nd.window) end
  local dx, dy = vals[3] and vals[3].counts, vals[5] and vals[5].counts
  if (dx or dy) and nranks() == 1 then   -- every row here: one process's stencil2 (no rows cut)
    local a, b = vals[3] and vals[3].acc or nd.args[3], vals[5] and vals[5].acc or nd.args[5]
    local res = together(about(nd, vals), function()
      return force({ acc = lazy(nd, "out", { a, b }, function() return local_stencil2(a, b) end) }, opts)
    end)
    return { acc = res, counts = { res:shape()[1] } }
  end
  if (dx or dy) and nranks() > 1 and ((nd.b1 == "wrap") ~= (nd.b2 == "wrap") or
                                      (dx and dy and total(dx) ~= total(dy))) then
    return stencil2_padded(nd, vals, opts, local_stencil2)
  end
  if (dx or dy) and not (dx and dy) and nranks() > 1 then
    return stencil2_replicated(nd, vals, opts, dx and 3 or 5, local_stencil2)
  end
  local args, target = C.aligned(nd, vals, opts)
  if not target or nranks() == 1 then
    return { acc = lazy(nd, "out", { args[3], args[5] }, function() return local_stencil2(args[3], args[5]) end),
             counts = target }
  end
  local what = about(nd, vals)
  local hx = halo_of({ acc = args[3], counts = target }, nd.halo, nd.wrap, opts, what)
  local hy = halo_of({ acc = args[5], counts = target }, nd.halo, nd.wrap, opts, what)
  local mine, nb = hx.mine, hx.nb
  if mine == 0 then return no_rows(nd, what, hx.sh, hy.sh, target) end
  local ex, ey = hx.extended(), hy.extended()
  local res = together(what, function()
    local fn = node_fn(nd, "ext" .. nb .. ":" .. mine, opts, function(a, b)
      return rows_of(local_stencil2(a, b), nb, nb + mine)
    end)
    return force({ acc = fn(ex, ey) }, opts)
  end)
  return { acc = res, counts = target }
end
DESC.stencil2 = "two halo exchanges, one an array (as stencil's; a replicated array's rows " ..
  "around the block from its own copy), then the local stencil2 of the two blocks with their halos"

C.is_scalar = is_scalar

return true
