-- lacc.segments: segmented reductions and scans, and filter, derived from the core's
-- combinators. Owns: foldSeg, fold1Seg, scanlSeg, scanrSeg, scanl1Seg, scanr1Seg,
-- scanlSeg_, scanrSeg_ (segment
-- lengths as a rank-1 array of integers) and filter (a scan of kept flags, a permute).
-- Must not: type-check beyond what gives a better message (the core checks).
local types = require "lacc.types"
local util = require "lacc.util"
local exp = require "lacc.exp"
local accs = require "lacc.acc"
local combinators = require "lacc.combinators"
local fail = util.fail
local to_acc = accs.to_acc
local zipwith = combinators.zipwith
local unpack = table.unpack or unpack

local M = {}
local F = {}   -- what this module adds to lacc
-- lacc itself (M.install): calls go through it, so they meet collection.lua's wrappers.
local lacc

-- foldSeg(f, z, xs, segs) / fold1Seg(f, xs, segs): the innermost dimension of xs cut
-- into consecutive segments of the lengths in segs (rank 1, integers), each folded in
-- order; the result's innermost dimension has one element per segment. A fold1Seg of an
-- empty segment, or segments longer than the dimension, are index errors.
-- An array of rank 1 or more and its segment lengths (rank 1, integers), checked.
local function segmented(name, xs, segs)
  xs, segs = to_acc(xs, name), to_acc(segs, name)
  if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", name) end
  if segs.rank ~= 1 or not types.is_scalar[segs.t] or segs.t:match("^f") or segs.t == "bool" then
    fail("%s: expected segment lengths as a rank-1 array of integers, got rank %d %s", name,
         segs.rank, segs.t)
  end
  return xs, segs
end

-- f as called inside the combinators' own lambdas: several results make one tuple (as
-- every combinator takes them), plain Lua numbers become the element type t.
local function combining(name, f, t)
  if type(f) ~= "function" then fail("%s: expected a function, got %s", name, type(f)) end
  return function(...) return exp.result(t, name, f(...)) end
end

local function fold_seg(name, f, z, xs, segs)
  xs, segs = segmented(name, xs, segs)
  f = combining(name, f, xs.t)
  local zz = z ~= nil and exp.lift(z, xs.t, name) or nil
  local offs = lacc.scanl(exp.add, 0, lacc.map(exp.own(function(v) return v:cast("i64") end), segs))
  local sh, r = lacc.shape(xs), xs.rank
  local out = {}
  for d = 1, r - 1 do out[d] = sh[d] end
  out[r] = lacc.shape(segs)[1]
  return lacc.generate(out, function(...)
    local ix = { ... }
    local s = ix[r]
    local lo, hi = offs[s], offs[s + 1]
    local function at(j)   -- 0-based element j of this row
      local a = {}
      for d = 1, r - 1 do a[d] = ix[d] end
      a[r] = j + 1
      return xs:at(unpack(a, 1, r))
    end
    local start, j0 = zz, lo
    if not zz then
      -- an empty segment has no first element: index -1, an error
      j0 = lacc.cond(lacc.lt(lo, hi), lo, exp.lift(-2, "i64", name))
      start = at(j0)
      j0 = j0 + 1
    end
    local res = lacc.while_(function(st) return lacc.lt(st[1], hi) end,
      function(st) return lacc.tuple(st[1] + 1, f(st[2], at(st[1]))) end,
      lacc.tuple(j0, start))
    return res[2]
  end)
end
F.foldSeg = util.composite(function(f, z, xs, segs) return fold_seg("foldSeg", f, z, xs, segs) end)
F.fold1Seg = util.composite(function(f, xs, segs) return fold_seg("fold1Seg", f, nil, xs, segs) end)

-- filter(p, xs [, {per_row = true}]) -> the elements of xs (flattened, in order) for
-- which p holds, and their count (rank 0), or with per_row the count of each row (xs's
-- outer shape, Accelerate's filter): a scan of the kept flags gives each kept element its
-- place, a permute puts it there, and differences of the scan count the rows.
local function filter(p, xs, opts)
  xs = to_acc(xs, "filter")
  if type(p) ~= "function" then fail("filter: expected a function, got %s", type(p)) end
  local per_row = false
  if opts ~= nil then
    if type(opts) ~= "table" then fail("filter: expected an options table, got %s", type(opts)) end
    for k, v in pairs(opts) do
      if k ~= "per_row" then fail("filter: unknown option %s (it takes per_row)", tostring(k)) end
      if type(v) ~= "boolean" then fail("filter: per_row must be a boolean, got %s", type(v)) end
      per_row = v
    end
    if per_row and xs.rank < 1 then
      fail("filter: per_row needs an array of rank 1 or more, got rank 0")
    end
  end
  local flat = lacc.flatten(xs)
  local keep = zipwith("filter", exp.predicate(p, "filter"), { flat }, 1)
  if keep.t ~= "bool" then fail("filter: the predicate must return bool, got %s", keep.t) end
  local own = exp.own
  local places = lacc.scanl(exp.add, 0, lacc.map(own(function(k)
    return lacc.cond(k, exp.lift(1, "i64", "filter"), exp.lift(0, "i64", "filter"))
  end), keep))
  local n = lacc.size(flat)
  local count = lacc.generate({}, own(function() return places[n + 1] end))
  local m = count:at()
  local defaults = lacc.backpermute({ m }, own(function() return 1 end), flat)
  local values = lacc.permute(own(function(new) return new end), defaults, own(function(i)
    return lacc.cond(keep[i], places[i] + 1, lacc.ignore)
  end), flat)
  if per_row then   -- Accelerate's counts: one per row, the rows' kept elements in turn
    local r = xs.rank
    count = lacc.generate({ unpack(lacc.shape(xs), 1, r - 1) }, own(function(...)
      local ix = { ... }
      local row = lacc.shape(xs)[r]
      local lin = exp.lift(0, "i64", "filter")
      for d = 1, r - 1 do lin = lin * lacc.shape(xs)[d] + (ix[d] - 1) end
      return places[(lin + 1) * row + 1] - places[lin * row + 1]
    end))
  end
  return values, count
end
F.filter = util.composite(filter)

-- Segmented scans along the innermost dimension (segment lengths in segs, rank 1,
-- integers, summing to the dimension): scanl1Seg / scanr1Seg scan each segment on its
-- own (n elements per row); scanlSeg / scanrSeg start each segment with z and so have one
-- more element per segment (Accelerate's scanlSeg). Built from one ordinary scan over
-- (segment start, value) pairs with f lifted to restart at segment starts.
local function seg_heads(name, xs, segs, right)
  xs, segs = segmented(name, xs, segs)
  local lens = lacc.map(exp.own(function(v) return v:cast("i64") end), segs)
  local offs = lacc.scanl(exp.add, 0, lens)
  local n = lacc.shape(xs)[xs.rank]
  local no = exp.lift(false, "bool", name)
  -- heads[j]: a segment starts (left) or ends (right) at 0-based element j
  local heads = lacc.permute(exp.own(function(a, b) return lacc.lor(a, b) end), lacc.fill({ n }, no),
    exp.own(function(s)
      local at = right and offs[s + 1] - 1 or offs[s]
      return lacc.cond(lacc.lt(offs[s], offs[s + 1]), at + 1, lacc.ignore)
    end), lacc.map(exp.own(function() return exp.lift(true, "bool", name) end), lens))
  return xs, lens, offs, heads
end

-- The inclusive scan of each segment, heads marking where a segment starts in scan order.
local function seg_scan1_of(f, xs, heads, right)
  local r = xs.rank
  local tagged = lacc.imap(function(...)
    local j = select(r, ...)
    return lacc.tuple(heads[j], (select(r + 1, ...)))
  end, xs)
  local scan
  if right then
    scan = lacc.scanr1(function(x, acc)   -- acc: the part after x, earlier in scan order
      return lacc.tuple(lacc.lor(x[1], acc[1]), lacc.cond(x[1], x[2], f(x[2], acc[2])))
    end, tagged)
  else
    scan = lacc.scanl1(function(acc, x)
      return lacc.tuple(lacc.lor(acc[1], x[1]), lacc.cond(x[1], x[2], f(acc[2], x[2])))
    end, tagged)
  end
  return lacc.map(exp.own(function(p) return p[2] end), scan)
end

local function seg_scan1(name, f, xs, segs, right)
  local xa, _, _, heads = seg_heads(name, xs, segs, right)
  f = combining(name, f, xa.t)
  return seg_scan1_of(f, xa, heads, right)
end

F.scanl1Seg = util.composite(function(f, xs, segs) return seg_scan1("scanl1Seg", f, xs, segs, false) end)
F.scanr1Seg = util.composite(function(f, xs, segs) return seg_scan1("scanr1Seg", f, xs, segs, true) end)

-- Each segment's inclusive scan with z folded into its first element in scan order:
-- what the scans with a start value are read from.
local function seeded_scan(name, f, z, xs, segs, right)
  local xa, lens, offs, heads = seg_heads(name, xs, segs, right)
  f = combining(name, f, xa.t)
  local zz = exp.lift(z, xa.t, name)
  local r = xa.rank
  local seeded = lacc.imap(function(...)
    local j, x = select(r, ...), (select(r + 1, ...))
    return lacc.cond(heads[j], right and f(x, zz) or f(zz, x), x)
  end, xa)
  return xa, lens, offs, heads, zz, seg_scan1_of(f, seeded, heads, right)
end

-- ix with its innermost index replaced by j (1-based)
local function with_last(ix, r, j)
  local at = {}
  for d = 1, r - 1 do at[d] = ix[d] end
  at[r] = j
  return unpack(at, 1, r)
end

local function seg_scan_z(name, f, z, xs, segs, right)
  local xa, lens, offs, _, zz, incl = seeded_scan(name, f, z, xs, segs, right)
  local r = xa.rank
  local sh = lacc.shape(xa)
  local out = {}
  for d = 1, r - 1 do out[d] = sh[d] end
  out[r] = sh[r] + lacc.shape(lens)[1]
  -- the segment of each output position: how many segment blocks start at or before it
  local starts = lacc.permute(exp.add, lacc.fill({ out[r] }, exp.lift(0, "i64", name)),
    exp.own(function(s) return offs[s] + s end),
    lacc.map(exp.own(function() return exp.lift(1, "i64", name) end), lens))
  local seg_of = lacc.scanl1(exp.add, starts)
  return lacc.generate(out, function(...)
    local ix = { ... }
    local p = ix[r] - 1                    -- 0-based output position
    local s = seg_of[p + 1]               -- 1-based segment
    local q = p - (offs[s] + s - 1)        -- 0-based position in the segment's block
    local len = offs[s + 1] - offs[s]
    if right then   -- the block: the scan, then z
      return lacc.cond(lacc.eq(q, len), zz, incl:at(with_last(ix, r, offs[s] + q + 1)))
    end
    -- the block: z, then the scan
    return lacc.cond(lacc.eq(q, 0), zz, incl:at(with_last(ix, r, offs[s] + q)))
  end)
end

F.scanlSeg = util.composite(function(f, z, xs, segs) return seg_scan_z("scanlSeg", f, z, xs, segs, false) end)
F.scanrSeg = util.composite(function(f, z, xs, segs) return seg_scan_z("scanrSeg", f, z, xs, segs, true) end)

-- scanlSeg_ / scanrSeg_ (Accelerate's scanl'Seg / scanr'Seg): each segment's exclusive
-- scan (xs's shape) and each segment's total (one per segment, z for an empty one).
local function seg_scan_split(name, f, z, xs, segs, right)
  local xa, lens, offs, heads, zz, incl = seeded_scan(name, f, z, xs, segs, right)
  local r = xa.rank
  local sh = lacc.shape(xa)
  local values = lacc.generate(sh, function(...)
    local ix = { ... }
    local j = ix[r]
    -- z where the segment begins in scan order, else the inclusive scan one step back
    return lacc.cond(heads[j], zz, incl:at(with_last(ix, r, right and j + 1 or j - 1)))
  end)
  local out = {}
  for d = 1, r - 1 do out[d] = sh[d] end
  out[r] = lacc.shape(lens)[1]
  local totals = lacc.generate(out, function(...)
    local ix = { ... }
    local s = ix[r]
    local lo, hi = offs[s], offs[s + 1]
    -- a segment's total is its scan's last element in scan order
    return lacc.cond(lacc.lt(lo, hi), incl:at(with_last(ix, r, right and lo + 1 or hi)), zz)
  end)
  return values, totals
end

F.scanlSeg_ = util.composite(function(f, z, xs, segs) return seg_scan_split("scanlSeg_", f, z, xs, segs, false) end)
F.scanrSeg_ = util.composite(function(f, z, xs, segs) return seg_scan_split("scanrSeg_", f, z, xs, segs, true) end)

M.install = util.installer(F, function(l) lacc = l end)

return M
