-- lacc.mpi.segments: segmented folds and scans (foldSeg, fold1Seg, scanl1Seg, scanr1Seg,
-- scanlSeg, scanrSeg, scanlSeg_, scanrSeg_) whose arrays are distributed (lacc.mpi).
-- Owns: segments that cross ranks. Of rank 1 each rank folds or scans the pieces of the
-- segments it holds, and one scan of messages across the ranks (recursive doubling,
-- ceil(log2 P) messages a rank at most) brings each rank the fold of the pieces before
-- its first one, back to where that segment starts: its carry. The right-to-left scans
-- are the left ones seen backwards (the block, the segments, the ranks and the function's
-- operands reversed). Of rank 2 or more each row is one rank's: local.
-- Must not: reorder a segment's operands (pieces combine in rank order), or accept
-- segment lengths whose one-process meaning is an accident (negative ones; scans whose
-- segments do not cover the dimension): those are errors naming the combinator.
local C = require "lacc.mpi.base"
local unpacked, elem_bytes = C.unpacked, C.elem_bytes
local DESC, H, L, about, fail, force = C.DESC, C.H, C.L, C.about, C.fail, C.force
local key_of, lazy, me, nranks, packed, plain = C.key_of, C.lazy, C.me, C.nranks, C.packed, C.plain
local record, rows_before, rows_of, run_time = C.record, C.rows_before, C.rows_of, C.run_time
local together, total, unpack = C.together, C.total, C.unpack
local allgather, reserve = C.allgather, C.reserve

-- name -> how it combines: z (a start value, argument 2), what it makes (fold: one
-- value per segment; incl: an inclusive scan; seeded: z then the inclusive scan, one
-- more element per segment; excl: the exclusive scan and each segment's total), right
local OPS = {
  foldSeg = { z = true, kind = "fold" }, fold1Seg = { kind = "fold" },
  scanl1Seg = { kind = "incl" }, scanr1Seg = { kind = "incl", right = true },
  scanlSeg = { z = true, kind = "seeded" }, scanrSeg = { z = true, kind = "seeded", right = true },
  scanlSeg_ = { z = true, kind = "excl", nres = 2 }, scanrSeg_ = { z = true, kind = "excl", nres = 2, right = true },
}

local HAVE, NONE, FAILED, FAILED_ROOM = C.HAVE, 0, C.FAILED, C.FAILED_ROOM

-- ---- where the segments lie

-- the first j in [0, m) with key(j) >= x, else m (key non-decreasing)
local function lower_bound(key, m, x)
  local a, b = 0, m
  while a < b do
    local mid = math.floor((a + b) / 2)
    if key(mid) < x then a = mid + 1 else b = mid end
  end
  return a
end

-- What view rank q (rows [lo, hi) of the view's order) does with segments starting at
-- S(0) = 0 <= S(1) <= ... <= S(m) = N: the segments ja .. jb - 1 start on it (the last
-- rank takes the empty ones at N too); its first h rows end the segment before ja (its
-- head, a piece of a segment that started on an earlier rank, which it continues).
local function plan_of(S, m, counts, q)
  local P = #counts
  local lo = rows_before(counts, q)
  local hi = lo + counts[q + 1]
  local ja = lower_bound(S, m, lo)
  local jb = q == P - 1 and m or lower_bound(S, m, hi)
  local h = math.min(S(ja), hi) - lo
  return { lo = lo, hi = hi, rows = hi - lo, ja = ja, jb = jb, h = h,
           starts = ja < jb,                          -- a segment starts here
           head_ends = h > 0 and S(ja) <= hi,         -- the head's segment ends here
           crossing = ja < jb and S(jb) > hi }        -- the last segment goes on after
end

-- How many segments end on view rank q: a segment's total goes to the rank holding its
-- last element (an empty one's to the rank where it starts).
local function ending_on(S, m, counts, q)
  local key = function(j) return math.max(S(j), S(j + 1) - 1) end
  local lo = rows_before(counts, q)
  local a = lower_bound(key, m, lo)
  local b = q == #counts - 1 and m or lower_bound(key, m, lo + counts[q + 1])
  return b - a
end

-- The segment offsets (i64, m + 1 of them, in the view's order) as a host array, checked
-- against the extent n (every rank computes them from the same lengths: the same error
-- everywhere). fold: segments may end before n (the elements after them are in none).
local function offsets_of(name, segs, right, n, kind, opts)
  local lens = plain.map(function(v) return v:cast("i64") end, right and plain.reverse(segs) or segs)
  local offs = plain.scanl(function(a, b) return a + b end, 0, lens)
  local lowest = plain.minimum(plain.append(lens, plain.fill({ 1 }, C.exp.constant(1, "i64"))))
  local o, low = plain.run({ offs, lowest }, opts.localopts)
  local m = o:shape()[1] - 1
  local sum = o:get(m + 1)
  if low:get() < 0 then
    fail("%s: a negative segment length (lacc.mpi: a distributed array's segments have lengths of 0 or more)", name)
  end
  if kind == "fold" then
    if sum > n then fail("%s: segments of %d elements in all, past the extent %d", name, sum, n) end
    if name == "fold1Seg" and low:get() == 0 and m > 0 then
      fail("fold1Seg: an empty segment (it has no first element)")
    end
    if sum < n then   -- the elements after the segments: one more, whose total is dropped
      return plain.run(plain.append(o, plain.fill({ 1 }, C.exp.constant(n, "i64"))), opts.localopts), m + 1, true
    end
  elseif sum ~= n then
    fail("%s: segments of %d elements in all, not the extent %d (lacc.mpi: a distributed " ..
         "array's segments of a scan cover its dimension)", name, sum, n)
  end
  return o, m, false
end

-- ---- the carries: a scan across the ranks of (a segment starts here, a value)

-- A rank's message: HAVE, then 1 where a segment starts on the rank (the chain stops
-- there), then its last piece's fold (nothing where that piece is empty). first then
-- second (in the view's order) combined: second alone where a segment starts on it.
local function chained(combine)
  return function(first, second)
    if second:byte(1) == 1 then return second end
    local a, b = first:sub(2), second:sub(2)
    local v = a
    if #a > 0 and #b > 0 then v = combine(a, b) elseif #b > 0 then v = b end
    return first:sub(1, 1) .. v
  end
end

local function reversed_list(t)
  local r = {}
  for i = 1, #t do r[i] = t[#t + 1 - i] end
  return r
end

-- this rank's view rank, and the view's row counts (the ranks reversed for a right scan)
local function view_of(counts, right)
  if not right then return me(), counts end
  return nranks() - 1 - me(), reversed_list(counts)
end

-- the fold of a piece (a program of rank 1), as bytes: z first where given
local function piece_fold(fv, z, piece, len)
  local one = plain.fill({ 1 }, C.exp.constant(len, "i64"))   -- one segment: the piece
  if z ~= nil then return plain.foldSeg(fv, z, piece, one) end
  return plain.fold1Seg(fv, piece, one)
end

-- ---- the handler

local function args_of(nd)
  local spec = OPS[nd.op]
  local xi = spec.z and 3 or 2
  return spec, xi, nd.args[1], spec.z and nd.args[2] or nil
end

-- the segment lengths on every rank: all-gathered where distributed; one segment of
-- the whole extent for scanl_ and scanr_ (nd.whole)
local function whole_segs(nd, vals, xi, opts)
  if nd.whole then return plain.fill({ 1 }, C.exp.constant(total(vals[xi].counts), "i64")) end
  local sv = vals[xi + 1]
  if not sv.counts then return sv.acc end
  return lazy(nd, "segs", { sv.acc }, function()
    local s = together(about(nd, vals, ": its segment lengths all-gathered"), function()
      return packed(force(sv, opts), nd.op)
    end)
    local t = nd.args[xi + 1].t
    return unpacked(table.concat(allgather(s)), t, { total(sv.counts) })
  end)
end

-- The results of a segmented op of a distributed rank-1 array (view: see plan_of).
local function crossing_ranks(nd, vals, opts, segs)
  local spec, xi, f, z = args_of(nd)
  local v = vals[xi]
  local right = spec.right
  local n = total(v.counts)
  local o, m, extra = offsets_of(nd.op, segs, right, n, spec.kind, opts)
  local S = function(j) return o:get(j + 1) end
  local q, vcounts = view_of(v.counts, right)
  local pl = plan_of(S, m, vcounts, q)
  local fv = right and function(a, b) return f(b, a) end or f
  local bv = right and plain.reverse(v.acc) or v.acc
  local head, owned = rows_of(bv, 0, pl.h), rows_of(bv, pl.h, pl.rows)
  local ja, hi, op = run_time(pl.ja), run_time(pl.hi), plain.use(o)
  local ownlens = plain.generate({ pl.jb - pl.ja }, function(j)
    return L.min(op[ja + j + 1], hi) - op[ja + j]
  end)
  local what = about(nd, vals)
  -- this rank's message: its last piece's fold (inside the agreement: it may fail)
  local mine = together(what, function()
    local tb = elem_bytes(nd.xt)
    reserve(math.max(tb + 2, FAILED_ROOM))
    if pl.rows == 0 and not pl.starts then return string.char(NONE) end
    local from = pl.starts and (S(pl.jb - 1) - pl.lo) or 0
    local len = pl.rows - from
    local val = ""
    if len > 0 or (pl.starts and z ~= nil) then
      local zz = pl.starts and z or nil   -- a piece that continues a segment has no z
      val = packed(plain.run(piece_fold(fv, zz, rows_of(bv, from, pl.rows), len), opts.localopts), nd.op)
    end
    return string.char(HAVE, pl.starts and 1 or 0) .. val
  end)
  nd.pair_fn = nd.pair_fn or plain.compile(function(st) return plain.fold1(fv, st, { dim = 1 }) end,
                                           opts.localopts)
  local pair = chained(function(a, b)
    return packed(nd.pair_fn(unpacked(a .. b, nd.xt, { 2 })), nd.op)
  end)
  local got = C.exscan(mine, right and function(a, b) return pair(b, a) end or pair, right)
  together(about(nd, vals, ": the carry"), function()
    if got:byte(1) == FAILED then error(got:sub(2), 0) end
  end)
  local cbytes = got:byte(1) == HAVE and got:sub(3) or ""
  local carry = #cbytes > 0 and plain.use(unpacked(cbytes, nd.xt, { 1 })) or nil
  local function carried(a)   -- carry combined into each element of a (the head's)
    if not carry then return a end
    return plain.map(function(x) return fv(carry[1], x) end, a)
  end
  return { spec = spec, pl = pl, S = S, m = m, extra = extra, fv = fv, z = z, head = head,
           owned = owned, ownlens = ownlens, carried = carried, carry_array = carry, vcounts = vcounts, q = q }
end

-- a and b (rank 1, either nil) one after the other, `empty` where both are nil
local function joined(a, b, empty)
  if a and b then return plain.append(a, b) end
  return a or b or empty
end

-- each view rank's count of segment totals (one per segment, at the rank where it
-- ends), the extra segment's dropped where there is one; and whether it is this rank's
local function totals_counts(c)
  local counts, last = {}, nil
  for q = 0, #c.vcounts - 1 do
    counts[q + 1] = ending_on(c.S, c.m, c.vcounts, q)
    if counts[q + 1] > 0 then last = q end
  end
  local mine_extra = c.extra and last == c.q
  if c.extra then counts[last + 1] = counts[last + 1] - 1 end
  return counts, mine_extra
end

-- The results in the view's order, as { acc = program, counts = view counts } each.
local function assembled(nd, c)
  local pl, fv, z, spec = c.pl, c.fv, c.z, c.spec
  local empty = rows_of(c.head, 0, 0)
  local k = pl.jb - pl.ja
  local scanned = pl.h > 0 and c.carried(plain.scanl1(fv, c.head)) or nil
  -- the segments ending here, their totals: the head's, then those that start here
  local function totals(own, mine_extra)
    local r = joined(pl.head_ends and rows_of(scanned, pl.h - 1, pl.h) or nil,
                     k > 0 and (pl.crossing and rows_of(own, 0, k - 1) or own) or nil, empty)
    if mine_extra then r = rows_of(r, 0, ending_on(c.S, c.m, c.vcounts, c.q) - 1) end
    return r
  end
  if spec.kind == "fold" then
    local counts, mine_extra = totals_counts(c)
    local own = k > 0 and (z ~= nil and plain.foldSeg(fv, z, c.owned, c.ownlens)
                           or plain.fold1Seg(fv, c.owned, c.ownlens)) or nil
    return { { acc = totals(own, mine_extra), counts = counts } }
  end
  if spec.kind == "incl" then
    local own = k > 0 and plain.scanl1Seg(fv, c.owned, c.ownlens) or nil
    return { { acc = joined(scanned, own, empty), counts = c.vcounts } }
  end
  if spec.kind == "seeded" then
    local counts = {}
    for q = 0, #c.vcounts - 1 do   -- one more element a segment starting on q
      local p = plan_of(c.S, c.m, c.vcounts, q)
      counts[q + 1] = c.vcounts[q + 1] + p.jb - p.ja
    end
    local own = k > 0 and plain.scanlSeg(fv, z, c.owned, c.ownlens) or nil
    return { { acc = joined(scanned, own, empty), counts = counts } }
  end
  -- excl: the head's exclusive scan is the carry, then all but its last inclusive value
  local ex, tot
  if k > 0 then ex, tot = plain.scanlSeg_(fv, z, c.owned, c.ownlens) end
  local head_ex = pl.h > 0 and plain.append(c.carry_array, rows_of(scanned, 0, pl.h - 1)) or nil
  local counts = totals_counts(c)
  return { { acc = joined(head_ex, ex, empty), counts = c.vcounts },
           { acc = totals(tot, false), counts = counts } }
end

-- The results (a list): of rank 1 along the distributed dimension, crossing ranks; of
-- rank 2 or more (each row one rank's), or of a replicated array, local.
local function results(nd, vals, opts)
  local spec, xi = args_of(nd)
  local v = vals[xi]
  local segs = whole_segs(nd, vals, xi, opts)
  if not v.counts or nd.xrank >= 2 then
    local args = { unpack(nd.args, 1, nd.n) }
    args[xi], args[xi + 1] = v.acc, segs
    local outs = lazy(nd, "out", { v.acc, segs, key_of(v.counts) }, function()
      return { plain[nd.op](unpack(args, 1, nd.n)) }
    end)
    return { { acc = outs[1], counts = v.counts }, { acc = outs[2], counts = v.counts } }
  end
  local res = assembled(nd, crossing_ranks(nd, vals, opts, segs))
  if spec.right then
    for _, r in ipairs(res) do r.acc, r.counts = plain.reverse(r.acc), reversed_list(r.counts) end
  end
  return res
end

-- scanl_ / scanr_ of a distributed rank-1 array: the exclusive scan of one segment, the
-- whole extent (its segments' op), and the total, held by the rank where the segment
-- ends, replicated by a fold of that one-element array (its tree)
C.whole_exclusive = function(name, args)
  local f, z, xs = args[1], args[2], args[3]
  local op = name == "scanr_" and "scanrSeg_" or "scanlSeg_"
  local ex, tot = record(op, 2, function(g, y, x) return plain[op](g, y, x, plain.fill({ 1 }, C.exp.constant(0, "i64"))) end,
                         { f, z, xs }, 3)
  for _, nd in ipairs { ex, tot } do nd.whole, nd.xt, nd.xrank = true, xs.t, 1 end
  return ex, L.fold1(f, tot)
end

for name, spec in pairs(OPS) do
  local xi = spec.z and 3 or 2
  C.wrapped[name] = function(args, n)
    local x = args[xi]
    if not (C.is_dist(x) or C.array.is_array(x) or C.is_program(x)) then return nil end   -- the plain error
    local xt = C.array.is_array(x) and x:type() or x.t
    local nd = { record(name, spec.nres or 1, plain[name], args, n) }
    for _, y in ipairs(nd) do y.xt, y.xrank = xt, C.rank_of(x) end
    return unpack(nd)
  end
  H[name] = function(nd, vals, opts)
    local g = nd.group and opts.memo[nd.group]
    if not g then
      g = results(nd, vals, opts)
      if nd.group then opts.memo[nd.group] = g end
    end
    return g[nd.res or 1]
  end
  DESC[name] = "of rank 1: each rank folds or scans its pieces of the segments; the fold of " ..
    "the pieces before each rank's first one, back to that segment's start, by a scan of " ..
    "messages across the ranks (recursive doubling: at most ceil(log2 P) messages a rank of " ..
    "one element and a byte); results at the rank where a segment ends (a fold's) or where " ..
    "its elements are; distributed segment lengths all-gathered; of rank 2 or more: local"
end

return true
