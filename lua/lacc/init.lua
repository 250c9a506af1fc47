-- lacc: data-parallel arrays for Lua (the surface every user sees).
-- Owns: the combinators of SPEC §4 (functions first, arrays last; also as methods),
-- array programs as values (Acc), lifting host arrays with `use`, running and
-- explaining programs. Derived combinators are written here in terms of the core's
-- primitives (generate, map, fold, fold1, backpermute, reshape).
-- Must not: type-check beyond what gives a better message (the core checks).
local types = require "lacc.types"
local util = require "lacc.util"
local exp = require "lacc.exp"
local array = require "lacc.array"
local core, where, fail = util.core, util.where, util.fail
local unpack = table.unpack or unpack

local lacc = { _VERSION = "lacc scm", binding = core.binding }

for _, s in ipairs(types.scalars) do lacc[s] = s end

-- ---- array programs

local A = {}            -- metatable of array programs
local amethods = {}

local function is_acc(x) return getmetatable(x) == A end

local function wrap(node)
  local _, t, rank = core.node_info(node)
  return setmetatable({ node = node, t = t, rank = rank }, A)
end

local use_cache = setmetatable({}, { __mode = "k" })

function lacc.use(a)
  if is_acc(a) then return a end
  if not array.is_array(a) then fail("use: expected a host array, got %s", util.describe(a)) end
  array.alive(a, "use")
  local hit = use_cache[a]
  if hit then return hit end
  local r = wrap(core.node_use(a, where()))
  use_cache[a] = r
  return r
end

local function to_acc(x, what)
  if is_acc(x) then return x end
  if array.is_array(x) then return lacc.use(array.alive(x, what)) end
  fail("%s: expected an array, got %s", what, util.describe(x))
end

local function acc(op, ...) return wrap(core.node_acc(op, where(), ...)) end

-- The shape of an array as a table of i64 extents, for use inside programs.
function lacc.shape(xs)
  xs = to_acc(xs, "shape")
  local sh = exp.wrap(core.node_op("shape", where(), xs.node))
  if xs.rank == 1 then return { sh } end
  local r = {}
  for d = 1, xs.rank do r[d] = exp.prj(sh, d) end
  return r
end

function lacc.size(xs)
  xs = to_acc(xs, "size")
  return exp.wrap(core.node_op("size", where(), xs.node))
end

-- xs[i] / xs:at(i, j, ...) inside a lambda: 1-based indices.
local function index(xs, ...)
  xs = to_acc(xs, "index")
  local n = select("#", ...)
  if n ~= xs.rank then
    fail("index: expected %d indices for an array of rank %d, got %d", xs.rank, xs.rank, n)
  end
  local ix = exp.index_exp({ ... }, "index")
  if xs.rank == 0 then ix = exp.wrap(core.node_op("tuple", where())) end
  return exp.wrap(core.node_op("index", where(), xs.node, ix.node))
end
lacc.index = index

-- ---- introduction

function lacc.unit(e)
  return acc("unit", exp.lift(e, nil, "unit").node)
end

function lacc.generate(shape, f)
  local sh = exp.shape_exp(shape, "generate")
  local rank = type(shape) == "table" and not exp.is_exp(shape) and #shape or 1
  local lam = exp.lambda(f, { sh.t }, nil, function(v) return exp.index_args(v[1], rank) end,
    "generate")
  return acc("generate", sh.node, lam)
end

function lacc.fill(shape, e)
  e = exp.lift(e, nil, "fill")
  return lacc.generate(shape, function() return e end)
end

-- ---- element-wise

local function zipwith(what, f, arrays, n)
  n = n or #arrays
  if n == 0 then fail("%s: expected at least one array", what) end
  -- the map node holds the function and the arrays: 16 kids at most
  if n > 15 then fail("%s: at most 15 arrays, got %d (zip some into tuples first)", what, n) end
  local nodes, ts = {}, {}
  local rank
  for i = 1, n do
    local xs = to_acc(arrays[i], what)
    rank = rank or xs.rank
    if xs.rank ~= rank then
      fail("%s: arrays of one rank expected, got ranks %d and %d", what, rank, xs.rank)
    end
    nodes[i], ts[i] = xs.node, xs.t
  end
  local lam = exp.lambda(f, ts, nil, nil, what)
  return acc("map", lam, unpack(nodes, 1, n))
end

function lacc.map(f, xs) return zipwith("map", f, { xs }, 1) end

function lacc.zipWith(f, ...)
  local n = select("#", ...)
  if n < 2 then fail("zipWith: expected two arrays or more, got %d", n) end
  return zipwith("zipWith", f, { ... }, n)
end
for n = 3, 9 do
  lacc["zipWith" .. n] = function(f, ...)
    local got = select("#", ...)
    if got ~= n then fail("zipWith%d: expected %d arrays, got %d", n, n, got) end
    return zipwith("zipWith" .. n, f, { ... }, n)
  end
end

function lacc.zip(...)
  return zipwith("zip", function(...) return exp.tuple(...) end, { ... }, select("#", ...))
end

function lacc.unzip(xs)
  xs = to_acc(xs, "unzip")
  local t = types.parse(xs.t)
  if t.kind ~= "tuple" then fail("unzip: expected an array of tuples, got %s", xs.t) end
  local r = {}
  for i = 1, #t.fields do r[i] = lacc.map(function(p) return p[i] end, xs) end
  return unpack(r, 1, #t.fields)
end

-- imap(f, xs): f receives the 1-based indices, then the element.
function lacc.imap(f, xs)
  xs = to_acc(xs, "imap")
  if type(f) ~= "function" then fail("imap: expected a function, got %s", type(f)) end
  if xs.rank == 0 then return lacc.map(f, xs) end
  -- the positions zipped with the elements rather than xs[i]: a zip reads the element
  -- with no bounds check, so its code can stay branch-free (folds in strips)
  local r = xs.rank
  local pos = lacc.generate(lacc.shape(xs), function(...)
    if r == 1 then return (...) end
    return lacc.tuple(...)
  end)
  return lacc.zipWith(function(ix, x)
    local args = {}
    for d = 1, r do args[d] = r == 1 and ix or ix[d] end
    args[r + 1] = x
    return f(unpack(args, 1, r + 1))
  end, pos, xs)
end

-- ---- reductions along the innermost dimension

function lacc.fold(f, z, xs)
  xs = to_acc(xs, "fold")
  if xs.rank < 1 then fail("fold: expected an array of rank 1 or more, got rank 0") end
  local zz = exp.lift(z, xs.t, "fold")
  local lam = exp.lambda(f, { xs.t, xs.t }, xs.t, nil, "fold")
  return acc("fold", lam, zz.node, xs.node)
end

function lacc.fold1(f, xs)
  xs = to_acc(xs, "fold1")
  if xs.rank < 1 then fail("fold1: expected an array of rank 1 or more, got rank 0") end
  local lam = exp.lambda(f, { xs.t, xs.t }, xs.t, nil, "fold1")
  return acc("fold1", lam, xs.node)
end

-- ---- scans along the innermost dimension (left: acc = f(acc, x); right: f(x, acc))

local function scan_with_z(name)
  return function(f, z, xs)
    xs = to_acc(xs, name)
    if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", name) end
    local zz = exp.lift(z, xs.t, name)
    local lam = exp.lambda(f, { xs.t, xs.t }, xs.t, nil, name)
    return acc(name, lam, zz.node, xs.node)
  end
end

local function scan1(name)
  return function(f, xs)
    xs = to_acc(xs, name)
    if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", name) end
    local lam = exp.lambda(f, { xs.t, xs.t }, xs.t, nil, name)
    return acc(name, lam, xs.node)
  end
end

lacc.scanl, lacc.scanr = scan_with_z("scanl"), scan_with_z("scanr")
lacc.scanl1, lacc.scanr1 = scan1("scanl1"), scan1("scanr1")

-- scanl_ / scanr_ (Accelerate's scanl' / scanr'): the exclusive scan, n elements per
-- row, and the rows' totals, from one scan of n + 1 elements.
local function scan_split(name, scan, right)
  return function(f, z, xs)
    xs = to_acc(xs, name)
    if type(f) ~= "function" then fail("%s: expected a function, got %s", name, type(f)) end
    if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", name) end
    local s = scan(f, exp.lift(z, xs.t, name), xs)
    local sh = lacc.shape(xs)
    local r = xs.rank
    local values = lacc.backpermute(sh, function(...)
      local ix = { ... }
      if right then ix[r] = ix[r] + 1 end
      return unpack(ix, 1, r)
    end, s)
    local outer = {}
    for d = 1, r - 1 do outer[d] = sh[d] end
    local totals = lacc.backpermute(outer, function(...)
      local ix = { ... }
      ix[r] = right and 1 or sh[r] + 1
      return unpack(ix, 1, r)
    end, s)
    return values, totals
  end
end
lacc.scanl_ = scan_split("scanl_", lacc.scanl, false)
lacc.scanr_ = scan_split("scanr_", lacc.scanr, true)

-- compute(xs): xs materialised in its own kernel; producers fuse into it, consumers
-- read the array (what Accelerate's `compute` does).
function lacc.compute(xs)
  xs = to_acc(xs, "compute")
  return acc("compute", xs.node)
end

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

local function fold_seg(name, f, z, xs, segs)
  xs, segs = segmented(name, xs, segs)
  if type(f) ~= "function" then fail("%s: expected a function, got %s", name, type(f)) end
  local zz = z ~= nil and exp.lift(z, xs.t, name) or nil
  local offs = lacc.scanl(exp.add, 0, lacc.map(function(v) return v:cast("i64") end, segs))
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
function lacc.foldSeg(f, z, xs, segs) return fold_seg("foldSeg", f, z, xs, segs) end
function lacc.fold1Seg(f, xs, segs) return fold_seg("fold1Seg", f, nil, xs, segs) end

-- filter(p, xs) -> the elements of xs (flattened, in order) for which p holds, and their
-- count (rank 0): a scan of the kept flags gives each kept element its place, a permute
-- puts it there.
function lacc.filter(p, xs)
  xs = to_acc(xs, "filter")
  if type(p) ~= "function" then fail("filter: expected a function, got %s", type(p)) end
  local flat = lacc.flatten(xs)
  local keep = zipwith("filter", p, { flat }, 1)
  if keep.t ~= "bool" then fail("filter: the predicate must return bool, got %s", keep.t) end
  local places = lacc.scanl(exp.add, 0, lacc.map(function(k)
    return lacc.cond(k, exp.lift(1, "i64", "filter"), exp.lift(0, "i64", "filter"))
  end, keep))
  local n = lacc.size(flat)
  local count = lacc.generate({}, function() return places[n + 1] end)
  local m = count:at()
  local defaults = lacc.backpermute({ m }, function() return 1 end, flat)
  local values = lacc.permute(function(new) return new end, defaults, function(i)
    return lacc.cond(keep[i], places[i] + 1, lacc.ignore)
  end, flat)
  return values, count
end

-- Push arrays ("Defunctionalizing Push Arrays"): append(xs, ys) (also xs .. ys), interleave(xs, ys) and
-- concat{...} along the innermost dimension, outer dimensions intersected. Pulled by a
-- consumer, an element is a test on its index; materialised, each part is written by a
-- loop of its own.
local function push(name)
  return function(xs, ys)
    xs, ys = to_acc(xs, name), to_acc(ys, name)
    local r = acc(name, xs.node, ys.node)
    r._push = { name, xs, ys }   -- reverse and rotate rewrite over the parts
    return r
  end
end
lacc.append, lacc.interleave = push("append"), push("interleave")

function lacc.concat(list)
  if type(list) ~= "table" or getmetatable(list) ~= nil or #list == 0 then
    fail("concat: expected a non-empty table of arrays")
  end
  local function build(lo, hi)
    if lo == hi then return to_acc(list[lo], "concat") end
    local mid = math.floor((lo + hi) / 2)
    return lacc.append(build(lo, mid), build(mid + 1, hi))
  end
  return build(1, #list)
end

-- stencil(f, boundary, xs [, window]) and stencil2(f, b1, xs, b2, ys [, window]): for
-- each element, f gets its neighbourhood (odd window sizes 3 to 9 per dimension, default
-- 3) as separate arguments in row-major order, the centre in the middle; neighbours
-- outside the array come from the boundary: "clamp" (the nearest element), "mirror"
-- (reflected, the edge not repeated), "wrap" (periodic) or lacc.constant(v).
local function check_window(what, window, rank)
  if window ~= nil and type(window) ~= "number" and type(window) ~= "table" then
    fail("%s: window must be a size or a table of sizes, got %s", what, type(window))
  end
  local w = {}
  for d = 1, rank do
    local k = window == nil and 3 or (type(window) == "number" and window or window[d])
    if type(k) ~= "number" or k % 2 ~= 1 or k < 3 or k > 9 then
      fail("%s: window sizes must be odd, 3 to 9 (dimension %d: %s)", what, d, tostring(k))
    end
    w[d] = k
  end
  return w
end

local function check_boundary(what, b, t)
  if b == "clamp" or b == "mirror" or b == "wrap" then return b end
  if exp.is_exp(b) then
    if b.t ~= t then fail("%s: a constant boundary of type %s for elements of %s", what, b.t, t) end
    return b
  end
  if type(b) == "number" then return exp.lift(b, t, what) end
  fail("%s: boundary must be \"clamp\", \"mirror\", \"wrap\" or lacc.constant(v), got %s",
       what, tostring(b))
end

-- The neighbourhood of the element at 1-based ix, in row-major window order.
local function neighbours(xs, sh, b, w, ix, out)
  local rank = #w
  local one = exp.lift(1, "i64", "stencil")
  local function fetch(idx)
    local at, inside = {}, nil
    for d = 1, rank do
      local k, n = idx[d], sh[d]
      if b == "clamp" then
        k = lacc.min(lacc.max(k, one), n)
      elseif b == "mirror" then
        k = lacc.cond(lacc.lt(k, one), 2 - k, lacc.cond(lacc.gt(k, n), 2 * n - k, k))
        k = lacc.min(lacc.max(k, one), n)
      elseif b == "wrap" then
        k = lacc.imod(k - 1, n) + 1
      else
        local ok = lacc.land(lacc.ge(k, one), lacc.le(k, n))
        inside = inside and lacc.land(inside, ok) or ok
        k = lacc.min(lacc.max(k, one), n)
      end
      at[d] = k
    end
    local v = xs:at(unpack(at, 1, rank))
    if inside then v = lacc.cond(inside, v, b) end
    return v
  end
  local idx = {}
  local function walk(d)
    if d > rank then
      out[#out + 1] = fetch(idx)
      return
    end
    local h = (w[d] - 1) / 2
    for off = -h, h do
      idx[d] = ix[d] + off
      walk(d + 1)
    end
  end
  walk(1)
end

local boundary_code = { clamp = 0, mirror = 1, wrap = 2 }

-- stencil: a core node, so the cpu backend keeps boundary code off the interior.
function lacc.stencil(f, boundary, xs, window)
  xs = to_acc(xs, "stencil")
  if type(f) ~= "function" then fail("stencil: expected a function, got %s", type(f)) end
  if xs.rank < 1 or xs.rank > 3 then fail("stencil: expected an array of rank 1 to 3, got rank %d", xs.rank) end
  local w = check_window("stencil", window, xs.rank)
  local b = check_boundary("stencil", boundary, xs.t)
  local spec, count = type(b) == "string" and boundary_code[b] or 3, 1
  for d = 1, xs.rank do
    spec = spec + w[d] * 2 ^ (4 * d)
    count = count * w[d]
  end
  local fields = {}
  for i = 1, count do fields[i] = xs.t end
  local lam = exp.lambda(f, { types.tuple(unpack(fields, 1, count)) }, nil, function(v)
    local parts = {}
    for i = 1, count do parts[i] = exp.prj(v[1], i) end
    return unpack(parts, 1, count)
  end, "stencil")
  local spec_node = exp.lift(math.floor(spec), "i64", "stencil").node
  if type(b) == "string" then return acc("stencil", lam, xs.node, spec_node) end
  return acc("stencil", lam, xs.node, spec_node, b.node)
end

function lacc.stencil2(f, b1, xs, b2, ys, window)
  xs, ys = to_acc(xs, "stencil2"), to_acc(ys, "stencil2")
  if type(f) ~= "function" then fail("stencil2: expected a function, got %s", type(f)) end
  if xs.rank ~= ys.rank or xs.rank < 1 or xs.rank > 3 then
    fail("stencil2: expected two arrays of one rank, 1 to 3, got ranks %d and %d", xs.rank, ys.rank)
  end
  local w = check_window("stencil2", window, xs.rank)
  b1, b2 = check_boundary("stencil2", b1, xs.t), check_boundary("stencil2", b2, ys.t)
  local s1, s2 = lacc.shape(xs), lacc.shape(ys)
  local sh = {}
  for d = 1, xs.rank do sh[d] = lacc.min(s1[d], s2[d]) end
  return lacc.generate(sh, function(...)
    local args = {}
    neighbours(xs, s1, b1, w, { ... }, args)
    neighbours(ys, s2, b2, w, { ... }, args)
    return f(unpack(args, 1, #args))
  end)
end

-- Segmented scans along the innermost dimension (segment lengths in segs, rank 1,
-- integers, summing to the dimension): scanl1Seg / scanr1Seg scan each segment on its
-- own (n elements per row); scanlSeg / scanrSeg start each segment with z and so have one
-- more element per segment (Accelerate's scanlSeg). Built from one ordinary scan over
-- (segment start, value) pairs with f lifted to restart at segment starts.
local function seg_heads(name, xs, segs, right)
  xs, segs = segmented(name, xs, segs)
  local lens = lacc.map(function(v) return v:cast("i64") end, segs)
  local offs = lacc.scanl(exp.add, 0, lens)
  local n = lacc.shape(xs)[xs.rank]
  local no = exp.lift(false, "bool", name)
  -- heads[j]: a segment starts (left) or ends (right) at 0-based element j
  local heads = lacc.permute(function(a, b) return lacc.lor(a, b) end, lacc.fill({ n }, no),
    function(s)
      local at = right and offs[s + 1] - 1 or offs[s]
      return lacc.cond(lacc.lt(offs[s], offs[s + 1]), at + 1, lacc.ignore)
    end, lacc.map(function() return exp.lift(true, "bool", name) end, lens))
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
  return lacc.map(function(p) return p[2] end, scan)
end

local function seg_scan1(name, f, xs, segs, right)
  if type(f) ~= "function" then fail("%s: expected a function, got %s", name, type(f)) end
  local xa, _, _, heads = seg_heads(name, xs, segs, right)
  return seg_scan1_of(f, xa, heads, right)
end

function lacc.scanl1Seg(f, xs, segs) return seg_scan1("scanl1Seg", f, xs, segs, false) end
function lacc.scanr1Seg(f, xs, segs) return seg_scan1("scanr1Seg", f, xs, segs, true) end

local function seg_scan_z(name, f, z, xs, segs, right)
  if type(f) ~= "function" then fail("%s: expected a function, got %s", name, type(f)) end
  local xa, lens, offs, heads = seg_heads(name, xs, segs, right)
  local zz = exp.lift(z, xa.t, name)
  local r = xa.rank
  -- each segment's first element in scan order combined with z, then scanned inclusively
  local seeded = lacc.imap(function(...)
    local j, x = select(r, ...), (select(r + 1, ...))
    return lacc.cond(heads[j], right and f(x, zz) or f(zz, x), x)
  end, xa)
  local incl = seg_scan1_of(f, seeded, heads, right)
  local sh = lacc.shape(xa)
  local out = {}
  for d = 1, r - 1 do out[d] = sh[d] end
  out[r] = sh[r] + lacc.shape(lens)[1]
  -- the segment of each output position: how many segment blocks start at or before it
  local starts = lacc.permute(exp.add, lacc.fill({ out[r] }, exp.lift(0, "i64", name)),
    function(s) return offs[s] + s end,
    lacc.map(function() return exp.lift(1, "i64", name) end, lens))
  local seg_of = lacc.scanl1(exp.add, starts)
  return lacc.generate(out, function(...)
    local ix = { ... }
    local p = ix[r] - 1                    -- 0-based output position
    local s = seg_of[p + 1]               -- 1-based segment
    local q = p - (offs[s] + s - 1)        -- 0-based position in the segment's block
    local len = offs[s + 1] - offs[s]
    local at = {}
    for d = 1, r - 1 do at[d] = ix[d] end
    if right then   -- the block: the scan, then z
      at[r] = offs[s] + q + 1
      return lacc.cond(lacc.eq(q, len), zz, incl:at(unpack(at, 1, r)))
    end
    at[r] = offs[s] + q                    -- the block: z, then the scan
    return lacc.cond(lacc.eq(q, 0), zz, incl:at(unpack(at, 1, r)))
  end)
end

function lacc.scanlSeg(f, z, xs, segs) return seg_scan_z("scanlSeg", f, z, xs, segs, false) end
function lacc.scanrSeg(f, z, xs, segs) return seg_scan_z("scanrSeg", f, z, xs, segs, true) end

-- acond(c, a, b): the array a if the scalar condition c holds, else b (c may read
-- arrays, e.g. lacc.the(xs) or xs:at(i)). Only the branch taken is computed. A Lua
-- boolean picks a branch while the program is built.
function lacc.acond(c, a, b)
  if type(c) == "boolean" then return to_acc(c and a or b, "acond") end
  a, b = to_acc(a, "acond"), to_acc(b, "acond")
  if is_acc(c) or array.is_array(c) then
    -- a rank-0 bool array stands for its element, as awhile's condition does
    c = to_acc(c, "acond")
    if c.rank ~= 0 then
      fail("acond: expected a bool expression or a rank-0 bool array as the condition, got rank %d",
        c.rank)
    end
    c = lacc.the(c)
  end
  local cc = exp.lift(c, "bool", "acond")
  return acc("acond", cc.node, a.node, b.node)
end

-- awhile(cond, body, init): apply body to init while cond holds. cond and body are Lua
-- functions of an array program, traced once: cond gives a rank-0 bool array (or a
-- bool expression), body an array of init's type and rank (its shape may change). What
-- they read from outside the loop is computed once, before it.
function lacc.awhile(cond, body, init)
  if type(cond) ~= "function" or type(body) ~= "function" then
    fail("awhile: expected two functions and an array, got %s, %s", type(cond), type(body))
  end
  init = to_acc(init, "awhile")
  -- the loop's array: a parameter node (its layout is decided when the loop is planned)
  local x = wrap(core.node_param(0, init.t, init.rank, "unboxed", where()))
  local c = cond(x)
  if type(c) == "boolean" or exp.is_exp(c) then c = lacc.unit(exp.lift(c, "bool", "awhile")) end
  c = to_acc(c, "awhile: the condition")
  local b = to_acc(body(x), "awhile: the body")
  return acc("awhile", init.node, x.node, c.node, b.node)
end

-- the(xs): the element of a rank-0 array, as a scalar expression.
function lacc.the(xs)
  xs = to_acc(xs, "the")
  if xs.rank ~= 0 then fail("the: expected an array of rank 0, got rank %d", xs.rank) end
  return xs:at()
end

function lacc.flatten(xs)
  xs = to_acc(xs, "flatten")
  if xs.rank == 1 then return xs end
  return lacc.reshape({ lacc.size(xs) }, xs)
end

local function numeric(what, xs)
  xs = to_acc(xs, what)
  if not types.is_scalar[xs.t] or xs.t == "bool" then
    fail("%s: expected an array of numbers, got %s", what, xs.t)
  end
  return lacc.flatten(xs)
end

-- Whole-array reductions: the result has rank 0.
function lacc.sum(xs) return lacc.fold(exp.add, 0, numeric("sum", xs)) end
function lacc.product(xs) return lacc.fold(exp.mul, 1, numeric("product", xs)) end
function lacc.maximum(xs) return lacc.fold1(exp.max, numeric("maximum", xs)) end
function lacc.minimum(xs) return lacc.fold1(exp.min, numeric("minimum", xs)) end

-- all(p, xs) / any(p, xs): whether p holds for every / some element (rank 0; all of an
-- empty array is true); and_ / or_ of an array of bools.
local function booleans(what, xs)
  xs = to_acc(xs, what)
  if xs.t ~= "bool" then fail("%s: expected an array of bool, got %s", what, xs.t) end
  return lacc.flatten(xs)
end
function lacc.and_(xs) return lacc.fold(exp.land, true, booleans("and_", xs)) end
function lacc.or_(xs) return lacc.fold(exp.lor, false, booleans("or_", xs)) end
local function predicate(what, p, xs)
  if type(p) ~= "function" then fail("%s: expected a function, got %s", what, type(p)) end
  xs = to_acc(xs, what)
  local m = zipwith(what, p, { xs }, 1)
  local mt = m.t
  if mt ~= "bool" then fail("%s: the predicate must return bool, got %s", what, mt) end
  return m
end
local function all(p, xs) return lacc.and_(predicate("all", p, xs)) end
function lacc.any(p, xs) return lacc.or_(predicate("any", p, xs)) end

-- ---- permutations and reshaping

-- A traced index function: f gets 1-based indices of a shape of rank `rank` and returns
-- `out_rank` 1-based indices; the core sees 0-based shapes on both sides.
local function index_fn(what, f, sh, rank, out_rank)
  if type(f) ~= "function" then fail("%s: expected a function, got %s", what, type(f)) end
  return exp.lambda(function(...)
    local res = { f(...) }
    if #res ~= out_rank then
      fail("%s: the index function must return %d indices, got %d", what, out_rank, #res)
    end
    if out_rank == 0 then return exp.wrap(core.node_op("tuple", where())) end
    return exp.index_exp(res, what)
  end, { sh.t }, nil, function(v) return exp.index_args(v[1], rank) end, what)
end

local function shape_rank(shape)
  if exp.is_exp(shape) then
    local t = types.parse(shape.t)
    return t.kind == "tuple" and #t.fields or 1
  end
  return type(shape) == "table" and #shape or 0
end

-- backpermute(shape, f, xs): result[ix] = xs[f(ix)] (a gather).
function lacc.backpermute(shape, f, xs)
  xs = to_acc(xs, "backpermute")
  local sh = exp.shape_exp(shape, "backpermute")
  local lam = index_fn("backpermute", f, sh, shape_rank(shape), xs.rank)
  return acc("backpermute", sh.node, lam, xs.node)
end

-- permute(combine, defaults, f, xs): a copy of defaults into which each element x of xs
-- is combined at f(ix): out[f(ix)] = combine(x, out[f(ix)]). f returns lacc.ignore (index
-- 0 in every dimension) to drop an element; other targets outside defaults are errors.
lacc.ignore = exp.lift(0, "i64", "ignore")

local function shape_type(rank)
  if rank == 0 then return "()" end
  if rank == 1 then return "i64" end
  return "(" .. ("i64,"):rep(rank - 1) .. "i64)"
end

function lacc.permute(combine, defaults, f, xs)
  defaults = to_acc(defaults, "permute")
  xs = to_acc(xs, "permute")
  if type(f) ~= "function" then fail("permute: expected a function, got %s", type(f)) end
  local r = defaults.rank
  local g = function(...)
    local res = { f(...) }
    if #res == 1 and rawequal(res[1], lacc.ignore) and r > 1 then
      for d = 2, r do res[d] = lacc.ignore end
    end
    return unpack(res, 1, #res)
  end
  local lam = index_fn("permute", g, { t = shape_type(xs.rank) }, xs.rank, r)
  local comb = exp.lambda(combine, { defaults.t, defaults.t }, defaults.t, nil, "permute")
  return acc("permute", comb, defaults.node, lam, xs.node)
end

function lacc.reshape(shape, xs)
  xs = to_acc(xs, "reshape")
  return acc("reshape", exp.shape_exp(shape, "reshape").node, xs.node)
end

function lacc.transpose(xs)
  xs = to_acc(xs, "transpose")
  if xs.rank ~= 2 then fail("transpose: expected an array of rank 2, got rank %d", xs.rank) end
  local s = lacc.shape(xs)
  return lacc.backpermute({ s[2], s[1] }, function(i, j) return j, i end, xs)
end

-- reverse and rotate act on the innermost dimension.
local function along_inner(what, xs, g)
  xs = to_acc(xs, what)
  if xs.rank < 1 then fail("%s: expected an array of rank 1 or more, got rank 0", what) end
  local s = lacc.shape(xs)
  local n = s[xs.rank]
  return lacc.backpermute(s, function(...)
    local ix = { ... }
    ix[xs.rank] = g(ix[xs.rank], n)
    return unpack(ix, 1, xs.rank)
  end, xs)
end

-- Elements lo + 1 .. lo + len of each row (innermost dimension) of xs.
local function inner_slice(xs, lo, len)
  local s = lacc.shape(xs)
  local r = xs.rank
  s[r] = len
  return lacc.backpermute(s, function(...)
    local ix = { ... }
    ix[r] = ix[r] + lo
    return unpack(ix, 1, r)
  end, xs)
end

local function inner_extent(xs) return lacc.shape(xs)[xs.rank] end

-- reverse and rotate of a push array stay push arrays ("Defunctionalizing Push Arrays"): the parts reversed or
-- cut and reordered, so that materialising the result still writes each part in a loop
-- of its own, with no test per element.
function lacc.reverse(xs)
  xs = to_acc(xs, "reverse")
  local p = xs._push
  if p and p[1] == "append" then return lacc.append(lacc.reverse(p[3]), lacc.reverse(p[2])) end
  if p then   -- interleave: the pairs in reverse order, each pair swapped
    local m = exp.min(inner_extent(p[2]), inner_extent(p[3]))
    return lacc.interleave(lacc.reverse(inner_slice(p[3], 0, m)), lacc.reverse(inner_slice(p[2], 0, m)))
  end
  return along_inner("reverse", xs, function(i, n) return n - i + 1 end)
end

-- rotate(k, xs): result[i] = xs[(i - 1 + k) mod n + 1], so rotate(1, {1,2,3}) = {2,3,1}.
function lacc.rotate(k, xs)
  xs = to_acc(xs, "rotate")
  if not exp.is_exp(k) and not util.is_integer(k) then
    fail("rotate: expected an integer amount (a number or an expression), got %s", util.show(k))
  end
  local kk = exp.is_exp(k) and k:cast("i64") or k
  local p = xs._push
  if p and p[1] == "append" then
    -- xs = a .. b rotated by k' = k mod (n1 + n2): the a and b after k', then those before
    local a, b = p[2], p[3]
    local n1, n2 = inner_extent(a), inner_extent(b)
    local k0 = exp.imod(kk, exp.max(n1 + n2, 1))
    local k1, k2 = exp.min(k0, n1), exp.max(k0 - n1, 0)
    return lacc.concat { inner_slice(a, k1, n1 - k1), inner_slice(b, k2, n2 - k2),
                         inner_slice(a, 0, k1), inner_slice(b, 0, k2) }
  end
  if p and type(k) == "number" and k == math.floor(k) then
    -- an interleave of the first m of a and b: rotating by an even k rotates both by k/2;
    -- by an odd k, b (rotated by (k-1)/2) comes first, then a (rotated by (k+1)/2)
    local m = exp.min(inner_extent(p[2]), inner_extent(p[3]))
    local a, b = inner_slice(p[2], 0, m), inner_slice(p[3], 0, m)
    if k % 2 == 0 then return lacc.interleave(lacc.rotate(k / 2, a), lacc.rotate(k / 2, b)) end
    return lacc.interleave(lacc.rotate((k - 1) / 2, b), lacc.rotate((k + 1) / 2, a))
  end
  return along_inner("rotate", xs, function(i, n) return exp.imod(i - 1 + kk, n) + 1 end)
end

-- lacc.all is both the "whole dimension" marker of replicate and slice specs and, called,
-- the reduction all(p, xs).
lacc.all = setmetatable({}, { __tostring = function() return "lacc.all" end,
                              __call = function(_, p, xs) return all(p, xs) end })

-- replicate(spec, xs): spec lists the result's dimensions, outermost first: lacc.all
-- takes the next dimension of xs, an extent adds a new dimension.
function lacc.replicate(spec, xs)
  xs = to_acc(xs, "replicate")
  if type(spec) ~= "table" then fail("replicate: expected a table spec, got %s", type(spec)) end
  for d, e in ipairs(spec) do
    if not rawequal(e, lacc.all) and not exp.is_exp(e) and
       (not util.is_integer(e) or e < 0) then
      fail("replicate: entry %d of the spec must be lacc.all or an extent, got %s", d, util.show(e))
    end
  end
  local s = lacc.shape(xs)
  local shape, alls = {}, 0
  for d, e in ipairs(spec) do
    if rawequal(e, lacc.all) then
      alls = alls + 1
      shape[d] = s[alls]
    else
      shape[d] = e
    end
  end
  if alls ~= xs.rank then
    fail("replicate: the spec has %d lacc.all entries, the array has rank %d", alls, xs.rank)
  end
  return lacc.backpermute(shape, function(...)
    local ix, src = { ... }, {}
    for d, e in ipairs(spec) do
      if rawequal(e, lacc.all) then src[#src + 1] = ix[d] end
    end
    return unpack(src, 1, #src)
  end, xs)
end

-- slice(xs, spec): one entry per dimension of xs: lacc.all keeps it, an index fixes it.
function lacc.slice(xs, spec)
  xs = to_acc(xs, "slice")
  if type(spec) ~= "table" or #spec ~= xs.rank then
    fail("slice: expected a spec of %d entries", xs.rank)
  end
  for d, e in ipairs(spec) do
    if not rawequal(e, lacc.all) and not exp.is_exp(e) and
       not util.is_integer(e) then
      fail("slice: entry %d of the spec must be lacc.all or an index, got %s", d, util.show(e))
    end
  end
  local s = lacc.shape(xs)
  local shape = {}
  for d, e in ipairs(spec) do
    if rawequal(e, lacc.all) then shape[#shape + 1] = s[d] end
  end
  return lacc.backpermute(shape, function(...)
    local ix, src, k = { ... }, {}, 0
    for d, e in ipairs(spec) do
      if rawequal(e, lacc.all) then
        k = k + 1
        src[d] = ix[k]
      else
        src[d] = e
      end
    end
    return unpack(src, 1, xs.rank)
  end, xs)
end

-- ---- running

local function roots_of(p, what)
  if is_acc(p) or array.is_array(p) then return { to_acc(p, what) } end
  if exp.is_exp(p) then return { lacc.unit(p) } end
  if type(p) == "table" and #p > 0 then
    local r = {}
    for i, x in ipairs(p) do r[i] = to_acc(x, what) end
    return r
  end
  fail("%s: expected an array program (or a table of them), got %s", what, type(p))
end

local function nodes(roots)
  local r = {}
  for i, x in ipairs(roots) do r[i] = x.node end
  return unpack(r, 1, #roots)
end

local layouts = { compact = true, rtu = true, unboxed = true, compact_radix = true, rtu_radix = true }
local function check_layout(what, strategy)
  if type(strategy) ~= "string" or not layouts[strategy] then
    fail("%s: unknown layout %s (expected \"compact\", \"rtu\", \"unboxed\", \"compact_radix\" or "
         .. "\"rtu_radix\")", what, type(strategy) == "string" and "'" .. strategy .. "'" or type(strategy))
  end
end

-- The layout of arrays made from now on in this Lua state ("compact" by default).
local current_layout = "compact"
function lacc.set_layout(strategy)
  check_layout("set_layout", strategy)
  core.set_layout(strategy)
  current_layout = strategy
end

local function pack(...) return { n = select("#", ...), ... } end

-- The options of run, compile and explain, checked before anything runs: a misspelt
-- option or a value of the wrong type is an error naming the function.
local known_options = { backend = true, device = true, layout = true, progress = true,
                        progress_after = true, fusion = true, sharing = true, source = true }
local function check_opts(opts, what)
  if opts == nil then return {} end
  if type(opts) ~= "table" then fail("%s: expected a table of options, got %s", what, type(opts)) end
  for k in pairs(opts) do
    if not known_options[k] then
      fail("%s: unknown option '%s' (expected backend, device, layout, progress, progress_after, "
           .. "fusion, sharing or source)", what, tostring(k))
    end
  end
  for _, name in ipairs { "fusion", "sharing" } do
    if opts[name] ~= nil and type(opts[name]) ~= "boolean" then
      fail("%s: option %s must be true or false, got %s", what, name, type(opts[name]))
    end
  end
  if opts.source ~= nil and type(opts.source) ~= "boolean" and opts.source ~= "opencl" then
    fail("%s: option source must be true, false or \"opencl\", got %s", what, tostring(opts.source))
  end
  if opts.layout ~= nil then check_layout(what, opts.layout) end
  if opts.progress ~= nil and type(opts.progress) ~= "function" then
    fail("%s: progress must be a function, got %s", what, type(opts.progress))
  end
  if opts.progress_after ~= nil and type(opts.progress_after) ~= "number" then
    fail("%s: progress_after must be a number of seconds, got %s", what, type(opts.progress_after))
  end
  return opts
end

-- The backend name the core takes: "cpu", "interp", or "opencl[:device]" (opts.device
-- or $LACC_DEVICE: a 1-based index or part of a device's name).
local function check_backend(opts, what)
  local backend = opts.backend or os.getenv("LACC_BACKEND") or "cpu"
  if backend ~= "cpu" and backend ~= "interp" and backend ~= "opencl" then
    fail("%s: unknown backend '%s' (expected \"cpu\", \"opencl\" or \"interp\")", what,
         tostring(backend))
  end
  if backend == "opencl" and opts.device ~= nil then
    if type(opts.device) ~= "number" and type(opts.device) ~= "string" then
      fail("%s: device must be an index or a name, got %s", what, type(opts.device))
    end
    backend = "opencl:" .. tostring(opts.device)
  end
  return backend
end

-- Run f(...) with the options of opts in force: layout of the results, and the
-- fusion / sharing switches (ablation) and explain's source listing.
local function with_options(opts, f, ...)
  local switches = {}
  for _, name in ipairs { "fusion", "sharing", "source" } do
    if opts[name] ~= nil then switches[#switches + 1] = name end
  end
  if not opts.layout and #switches == 0 and not opts.progress then return f(...) end
  local saved = current_layout
  if opts.progress then core.set_progress(opts.progress, opts.progress_after or 1.0) end
  if opts.layout then core.set_layout(opts.layout) end
  for _, name in ipairs(switches) do
    if name == "source" and opts.source == "opencl" then core.set_option("source_opencl", true)
    else core.set_option(name, opts[name]) end
  end
  local r = pack(pcall(f, ...))
  if opts.progress then core.set_progress(nil) end
  core.set_layout(saved)
  for _, name in ipairs(switches) do core.set_option(name, name ~= "source") end
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, r.n)
end

-- run(p [, opts]) -> host array(s); p an array program, a table of them, or a scalar.
-- opts: backend, layout (of the results), fusion = false, sharing = false,
-- progress = function(fraction) (called once the run has taken progress_after seconds,
-- default 1, then every 0.2 s or so, and with 1 at the end; cpu and opencl backends).
function lacc.run(p, opts)
  opts = check_opts(opts, "run")
  local backend = check_backend(opts, "run")
  local roots = roots_of(p, "run")
  return with_options(opts, core.run, backend, nodes(roots))
end

-- explain(p [, opts]) -> text, { kernels, intermediates, lets }; opts.source = true
-- appends the generated C, opts.source = "opencl" the OpenCL C.
function lacc.explain(p, opts)
  opts = check_opts(opts, "explain")
  check_backend(opts, "explain")
  local roots = roots_of(p, "explain")
  local text, kernels, intermediates, lets = with_options(opts, core.explain, nodes(roots))
  return text, { kernels = kernels, intermediates = intermediates, lets = lets }
end

-- devices() -> { {index, name, vendor, type = "cpu"|"gpu", compute_units, memory, fp64,
-- version}, ... }: the OpenCL devices (none without OpenCL).
function lacc.devices()
  local r = {}
  for line in core.devices():gmatch("[^\n]+") do
    local f = {}
    for x in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = x end
    r[#r + 1] = { index = tonumber(f[1]), name = f[2], vendor = f[3], type = f[4],
                  compute_units = tonumber(f[5]), memory = tonumber(f[6]), fp64 = f[7] == "1",
                  version = f[8] }
  end
  return r
end

-- transfers() -> { uploads, downloads, bytes_up, bytes_down }: arrays (and bytes) copied
-- between the host and OpenCL devices by this Lua state so far. Device results are read
-- back only when the host first reads them; arrays used on a device stay there for
-- later runs.
function lacc.transfers()
  local up, down, bup, bdown = core.transfers()
  return { uploads = up, downloads = down, bytes_up = bup, bytes_down = bdown }
end

-- memory() -> bytes of host memory held by this Lua state's arrays (results, inputs and
-- the arrays programs keep); it falls when arrays are freed or collected.
function lacc.memory() return core.bytes() end

-- compile(fn [, opts]) -> a function of host arrays. fn is traced once per kind of
-- arguments (element types, ranks, layouts) and optimised and compiled once; each call
-- then only binds the arrays and runs the kernels (Accelerate's runN).
function lacc.compile(fn, opts)
  if type(fn) ~= "function" then fail("compile: expected a function, got %s", type(fn)) end
  opts = check_opts(opts, "compile")
  local backend = check_backend(opts, "compile")
  local programs = {}
  return function(...)
    local n = select("#", ...)
    local args, key = { ... }, {}
    for i = 1, n do
      local a = args[i]
      if not array.is_array(a) then
        fail("compiled function: argument %d is %s, expected a host array", i, type(a))
      end
      array.alive(a, "compiled function")
      key[i] = ("%s/%d/%s"):format(core.array_type(a), #core.array_shape(a), core.array_layout(a))
    end
    key = table.concat(key, " ")
    local prog = programs[key]
    if not prog then
      local params = {}
      for i = 1, n do
        local a = args[i]
        params[i] = wrap(core.node_param(i - 1, core.array_type(a), #core.array_shape(a),
                                         core.array_layout(a), where()))
      end
      local res = pack(fn(unpack(params, 1, n)))
      if res.n > 1 then
        fail("compile: the function returned %d values; return one array program or a table of them",
             res.n)
      end
      local roots = roots_of(res[1], "compile")
      prog = with_options(opts, core.program_new, backend, n, nodes(roots))
      programs[key] = prog
    end
    if opts.progress then
      return with_options({ progress = opts.progress, progress_after = opts.progress_after },
                          core.program_run, prog, ...)
    end
    return core.program_run(prog, ...)
  end
end

-- ---- host arrays

lacc.fromtable = array.fromtable
-- write_png(path, a): a host array (or a program, run first) as a PNG image.
function lacc.write_png(path, a)
  if type(path) ~= "string" then fail("write_png: expected a file name, got %s", type(path)) end
  if not array.is_array(a) then
    if not is_acc(a) then
      fail("write_png: expected a host array or an array program, got %s", util.describe(a))
    end
    a = lacc.run(a)
  end
  array.methods.write_png(a, path)
end
lacc.array = array.new

-- ---- scalar functions

for _, name in ipairs { "constant", "cast", "cond", "iterate", "while_", "idiv", "imod", "quot",
                        "rem", "band", "bor", "bxor", "bnot", "shl", "shr", "eq", "ne", "lt",
                        "le", "gt", "ge", "land", "lor", "lnot", "min", "max", "abs", "signum",
                        "sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan",
                        "atan2", "pow", "floor", "ceil", "round", "truncate", "isnan" } do
  lacc[name] = exp[name]
end

-- lacc.tuple: a tuple type from types, a tuple value from expressions.
function lacc.tuple(...)
  local n = select("#", ...)
  local all_types = n > 0
  for i = 1, n do
    local x = select(i, ...)
    if type(x) ~= "string" and getmetatable(x) ~= types.Data then all_types = false end
  end
  if all_types then return types.tuple(...) end
  for i = 1, n do
    local x = select(i, ...)
    if type(x) == "string" or getmetatable(x) == types.Data then
      fail("tuple: argument %d is a type and others are not: give all element types (a tuple type) "
           .. "or all values (a tuple value)", i)
    end
  end
  return exp.tuple(...)
end

-- ---- sum types and their layouts

types.constructor = exp.constructor
lacc.data = types.data
lacc.variant = types.variant
lacc.match = exp.match
-- A type argument of Maybe / Either / Nothing / Left / Right (a missing one is an error).
local function type_arg(what, t)
  local _, err = types.parse(t)
  if err then fail("%s: %s", what, err) end
  return t
end
function lacc.Maybe(t) return types.data("Maybe", { { "Nothing" }, { "Just", type_arg("Maybe", t) } }) end
function lacc.Either(a, b)
  return types.data("Either", { { "Left", type_arg("Either", a) }, { "Right", type_arg("Either", b) } })
end
-- lacc.Just(x) takes its type from x; lacc.Nothing(t) needs one.
function lacc.Just(x)
  x = exp.lift(x, nil, "Just")
  return lacc.Maybe(x.t).Just(x)
end
function lacc.Nothing(t) return lacc.Maybe(type_arg("Nothing", t)).Nothing() end
function lacc.Left(x, b)
  x = exp.lift(x, nil, "Left")
  return lacc.Either(x.t, type_arg("Left", b)).Left(x)
end
function lacc.Right(a, y)
  y = exp.lift(y, nil, "Right")
  return lacc.Either(type_arg("Right", a), y.t).Right(y)
end

-- layout(T [, strategy]) -> { strategy, choices, tag_bits, tags = {...}, tag_encoding,
-- fields = { {bits, types = {...}}, ... }, bits, minimum_bits }
function lacc.layout(t, strategy)
  local p, err = types.parse(t)
  if not p then fail("layout: %s", err) end
  if strategy ~= nil then check_layout("layout", strategy) end
  local text = core.layout(p.sig, strategy)
  local r = { tags = {}, fields = {}, tag_bits = 0, tag_encoding = "none" }
  for line in text:gmatch("[^\n]+") do
    local key, rest = line:match("^(%S+)%s*(.*)$")
    if key == "strategy" then r.strategy = rest
    elseif key == "choices" then r.choices = tonumber(rest)
    elseif key == "tag" then
      local bits, enc = rest:match("^(%d+) (%S+)$")
      r.tags[#r.tags + 1] = tonumber(bits)
      r.tag_bits = r.tag_bits + tonumber(bits)
      r.tag_encoding = enc
    elseif key == "field" then
      local bits, members = rest:match("^(%d+) (%S+)$")
      local ts = {}
      for m in members:gmatch("[^,]+") do ts[#ts + 1] = m end
      r.fields[#r.fields + 1] = { bits = tonumber(bits), types = ts }
    elseif key == "bits" then r.bits = tonumber(rest)
    elseif key == "minimum" then r.minimum_bits = tonumber(rest) end
  end
  return r
end

-- ---- methods: xs:map(f) == lacc.map(f, xs)

for _, name in ipairs { "map", "imap", "fold", "fold1", "sum", "product", "maximum", "minimum",
                        "scanl", "scanl1", "scanr", "scanr1", "scanl_", "scanr_", "and_", "or_", "compute", "filter", "awhile",
                        "backpermute", "reshape", "replicate", "transpose", "reverse", "rotate",
                        "flatten", "unzip" } do
  amethods[name] = function(self, ...)
    local n = select("#", ...)
    local args = { ... }
    args[n + 1] = self
    return lacc[name](unpack(args, 1, n + 1))
  end
end
for _, name in ipairs { "zipWith", "zipWith3", "zipWith4", "zipWith5", "zipWith6", "zipWith7",
                        "zipWith8", "zipWith9", "zip" } do
  amethods[name] = function(self, ...) return lacc[name](self, ...) end
end
for _, name in ipairs { "zipWith", "zipWith3", "zipWith4", "zipWith5", "zipWith6", "zipWith7",
                        "zipWith8", "zipWith9" } do
  amethods[name] = function(self, f, ...) return lacc[name](f, self, ...) end
end
amethods.slice = function(self, spec) return lacc.slice(self, spec) end
amethods.at = index
amethods.run = function(self, opts) return lacc.run(self, opts) end
amethods.explain = function(self) return lacc.explain(self) end

A.__index = function(xs, k)
  if type(k) == "number" or exp.is_exp(k) then return index(xs, k) end
  return amethods[k]
end
A.__tostring = function(xs) return ("lacc.acc<%s, rank %d>"):format(xs.t, xs.rank) end
A.__concat = function(a, b) return lacc.append(a, b) end

-- Host arrays answer to their own methods and to those of array programs.
local hmeta = core.array_metatable()
hmeta.__index = function(a, k)
  if type(k) == "number" then return array.methods.get(a, k) end
  if exp.is_exp(k) then return index(a, k) end
  return array.methods[k] or amethods[k]
end
hmeta.__newindex = function(a, k, v)
  if type(k) ~= "number" then fail("cannot set field '%s' of an array", tostring(k)) end
  array.methods.set(a, k, v)
end
hmeta.__len = function(a) return array.methods.size(a) end
hmeta.__tostring = array.tostring
hmeta.__concat = function(a, b) return lacc.append(a, b) end
hmeta.__close = function(a) core.array_free(a) end
hmeta.__name = "lacc.array"

-- Variant-wise collections: partition, merge, and the combinators that accept them.
require("lacc.collection").install(lacc, to_acc)

return lacc
