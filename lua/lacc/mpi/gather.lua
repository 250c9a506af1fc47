-- lacc.mpi.gather: reads and writes through computed indices over distributed arrays
-- (lacc.mpi): backpermute and gather (two all-to-all rounds: requests, then values),
-- permute and scatter (one round, or partials of few targets combined), filter.
-- Owns: the owner of a row, packing requests and replies, the order of combination.
-- Must not: send a rank rows it did not ask for.
local C = require "lacc.mpi.base"
local unpacked, elem_bytes = C.unpacked, C.elem_bytes
local DESC, H, L, about, aligned, allgather = C.DESC, C.H, C.L, C.about, C.aligned, C.allgather
local starts_of = C.starts_of
local key_of = C.key_of
local alltoall, balanced, collection, exp = C.alltoall, C.balanced, C.collection, C.exp
local fail, force, i64, is_dist, lazy, local_shape = C.fail, C.force, C.i64, C.is_dist, C.lazy, C.local_shape
local me, nranks, outer_shape, packed, plain = C.me, C.nranks, C.outer_shape, C.packed, C.plain
local product, record, rows_before, rows_of = C.product, C.record, C.rows_before, C.rows_of
local run_time, same_counts, together, total = C.run_time, C.same_counts, C.together, C.total
local unpack, util, wrapped = C.unpack, C.util, C.wrapped
local array = C.array
local types = require "lacc.types"

-- ---- gathers and scatters with computed indices: requests to the owners, answers back

-- The rank (0-based) owning 0-based row `row` (an i64 expression) under counts: a binary
-- search of the ranks' first rows (a captured array), the same kernel for any rank count
-- (at most 2^20 ranks).
local SEARCH_LEVELS = 20
local function owner_exp(row, counts)
  local P = #counts
  local starts = {}
  for q = 1, P do starts[q] = rows_before(counts, q - 1) end
  local st = plain.fromtable(starts, "i64")
  local pos = exp.constant(0, "i64")
  for level = SEARCH_LEVELS - 1, 0, -1 do
    local step = 2 ^ level
    local nxt = pos + step
    local at = L.min(nxt, P - 1)
    pos = L.cond(L.land(L.lt(nxt, P), L.le(st[at + 1], row)), nxt, pos)
  end
  return pos
end

-- Send element k of each program in `payload` (rank-1 programs of one length) to rank
-- owner[k] + 1 (owner -1: nowhere), in a stable order (argsort of the owners): the parts
-- for alltoall (per rank: payload 1's elements for it, then payload 2's, ...) and the
-- order, a host array. Local work only: the caller agrees, then exchanges.
local function outgoing(owner, payload, opts)
  local P = nranks()
  local order = plain.argsort(owner)
  local per = plain.permute(function(a, b) return a + b end, plain.fill({ P }, exp.constant(0, "i64")),
    function(k) return L.cond(L.ge(owner[k], 0), owner[k] + 1, L.ignore) end,
    plain.map(function() return exp.constant(1, "i64") end, owner))
  local progs = { per, order }
  for i, p in ipairs(payload) do progs[i + 2] = plain.gather(order, p) end
  local outs = { plain.run(progs, opts.localopts) }
  local sent, owned = {}, 0
  for q = 1, P do
    sent[q] = outs[1]:get(q)
    owned = owned + sent[q]
  end
  local n = outs[2]:size()
  local strings, eb = {}, {}
  for i = 1, #payload do
    strings[i] = packed(outs[i + 2], "exchange")
    eb[i] = n > 0 and #strings[i] / n or 0
  end
  local parts, at = {}, n - owned   -- the elements sent nowhere sort first
  for q = 1, P do
    local buf = {}
    for i = 1, #payload do buf[i] = strings[i]:sub(at * eb[i] + 1, (at + sent[q]) * eb[i]) end
    parts[q] = table.concat(buf)
    at = at + sent[q]
  end
  return parts, outs[2]
end

-- what came from each rank, split into its payloads (element bytes ebytes): per payload
-- one string of everything, in rank order, and the element count from each rank
local function incoming(got, ebytes)
  local per = 0
  for _, b in ipairs(ebytes) do per = per + b end
  local outs, counts = {}, {}
  for i = 1, #ebytes do outs[i] = {} end
  for q = 1, #got do
    local k = per > 0 and #got[q] / per or 0
    counts[q] = k
    local at = 0
    for i, b in ipairs(ebytes) do
      outs[i][q] = got[q]:sub(at + 1, at + k * b)
      at = at + k * b
    end
  end
  for i = 1, #ebytes do outs[i] = table.concat(outs[i]) end
  return outs, counts
end

-- The global 0-based linear index of a list of 1-based indices in shape gshape; -1 where
-- one is outside.
local function linear(ix, gshape)
  local lin, ok = exp.constant(0, "i64"), nil
  for d = 1, #gshape do
    local i = i64(ix[d])
    local inside = L.land(L.ge(i, 1), L.le(i, gshape[d]))
    ok = ok and L.land(ok, inside) or inside
    lin = lin * gshape[d] + (i - 1)
  end
  return L.cond(ok, lin, exp.constant(-1, "i64"))
end

-- the smallest of a rank-1 i64 program, 0 when it is empty (local)
local function least(p, opts)
  return plain.run(plain.minimum(plain.append(p, plain.fill({ 1 }, exp.constant(0, "i64")))), opts.localopts):get()
end

local function owners(lin, rowsize, counts)
  return plain.map(function(j)
    return L.cond(L.ge(j, 0), owner_exp(L.idiv(j, math.max(rowsize, 1)), counts), exp.constant(-1, "i64"))
  end, lin)
end

-- The elements of distributed v at global linear indices lin (a rank-1 i64 program on
-- this rank), as a rank-1 program in lin's order; -1 in lin is an index error. Two
-- all-to-all rounds: the indices to their owners, the elements back. (what: the
-- combinator's name; step: the agreement's description.)
local function fetch(v, lin, what, opts, step)
  local block, parts, order = together(step, function()
    local blk = force(v, opts)
    if least(lin, opts) < 0 then fail("%s: index function result out of bounds", what) end
    local rowsize = product(blk:shape(), 2)
    local pts, ord = outgoing(owners(lin, rowsize, v.counts), { lin }, opts)
    return blk, pts, ord
  end)
  local reqs, counts = incoming(alltoall(parts), { 8 })
  local t = block:type()
  local back = together(step, function()
    local lo = rows_before(v.counts, me()) * product(block:shape(), 2)
    local req = unpacked(reqs[1], "i64", { #reqs[1] / 8 })
    local flat = plain.reshape({ block:size() }, block)
    local s = packed(plain.run(plain.map(function(j) return flat[j - lo + 1] end, req), opts.localopts), what)
    local eb, out, at = elem_bytes(t), {}, 0
    for q = 1, #counts do
      out[q] = s:sub(at + 1, at + counts[q] * eb)
      at = at + counts[q] * eb
    end
    return out
  end)
  local vals = unpacked(table.concat(alltoall(back)), t, { order:size() })
  return plain.scatter(vals, order, vals)
end

local function gshape_of(v, opts)
  local sh = force(v, opts):shape()
  sh[1] = total(v.counts)
  return sh
end

-- the values this run of expressions (a table of them: counts, a slice's ends; the same
-- on every rank, as they read replicated values only), each an i64 as one process casts
-- it, inside an agreement (they may fail)
local function values_now(exps, opts, what)
  return together(what, function()
    local out = {}
    for key, e in pairs(exps) do
      out[key] = tonumber(plain.run(plain.unit(e:cast("i64")), opts.localopts):get())
    end
    return out
  end)
end

-- (extents that are expressions of replicated values, as take's counts: each rank
-- computes them when the program runs, inside an agreement)
wrapped.backpermute = function(args, n)
  local shape, f, xs = args[1], args[2], args[3]
  if is_dist(shape) or is_dist(f) or not is_dist(xs) then return nil end
  local exps = {}
  if type(shape) == "table" and getmetatable(shape) == nil then
    for d = 1, #shape do if C.scalar_exp(shape[d]) then exps[d] = shape[d] end end
  end
  if next(exps) == nil then shape = outer_shape(shape, "backpermute") end
  local nd = record("backpermute", 1, plain.backpermute, args, n)
  nd.shape, nd.fn = shape, f
  if next(exps) ~= nil then nd.shape_exps = exps end
  return nd
end
H.backpermute = function(nd, vals, opts)
  local v = vals[3]
  local shape = nd.shape
  if nd.shape_exps then
    local got = values_now(nd.shape_exps, opts, about(nd, vals, " (its extents)"))
    shape = {}
    for d = 1, #nd.shape do
      shape[d] = got[d] or nd.shape[d]
      if shape[d] < 0 then   -- (every rank alike) as one process's program says it
        fail("backpermute: negative extent %d in dimension %d", shape[d], d)
      end
    end
  end
  if not v.counts then   -- the source is the same on every rank: so is the result
    return { acc = lazy(nd, "out", { v.acc, table.concat(shape, ",") }, function()
      return plain.backpermute(shape, nd.fn, v.acc)
    end) }
  end
  local counts = balanced(shape[1], nranks())
  if nranks() == 1 then
    return { acc = lazy(nd, "out", { v.acc, table.concat(shape, ",") }, function()
      return plain.backpermute(shape, nd.fn, v.acc)
    end), counts = counts }
  end
  local lo, rows = rows_before(counts, me()), counts[me() + 1]
  local what = about(nd, vals, " into {" .. table.concat(shape, ",") .. "}")
  local gs = together(what, function() return gshape_of(v, opts) end)
  local ls = local_shape(shape, rows)
  local lin = plain.generate(ls, function(i, ...) return linear({ nd.fn(i + run_time(lo, i), ...) }, gs) end)
  local got = fetch(v, plain.reshape({ product(ls) }, lin), "backpermute", opts, what)
  return { acc = plain.reshape(ls, got), counts = counts }
end
DESC.backpermute = "two all-to-all rounds: each rank sends the indices it reads to their " ..
  "owners (8 bytes each), the owners send the elements back"

-- reverse, rotate, take and drop of a rank-1 distributed array (along the distributed
-- dimension): the result's length m and the source index of its element g (1-based,
-- Lua integers and expressions) from the length n, known when the program runs; the
-- result's rows balanced, each rank fetching its elements from their owners.
local function clamped(k, n) return math.min(math.max(k, 0), n) end   -- take's and drop's count
local REARRANGE = {
  reverse = { size = function(n) return n end, from = function(g, n) return n - g + 1 end },
  rotate = { size = function(n) return n end,
             from = function(g, n, k) return L.imod(g - 1 + k % math.max(n, 1), math.max(n, 1)) + 1 end },
  take = { size = function(n, k) return clamped(k, n) end, from = function(g) return g end },
  drop = { size = function(n, k) return n - clamped(k, n) end,
           from = function(g, n, k) return g + clamped(k, n) end },
}

function C.rearranged(name, args, n)
  local k = name ~= "reverse" and args[1] or 0
  local xs = args[name == "reverse" and 1 or 2]
  local nd = record(name .. "_dist", 1, plain[name], args, n)   -- (one process's checks)
  -- a count that is an expression (of replicated values) is found when the program runs
  if C.scalar_exp(k) then nd.count_exp = k else nd.count = k end
  nd.source = xs
  return nd
end

-- The runs of source rows that result rows [a, b) (0-based, half-open) read, in the
-- result's order: {first, count, step}, the source rows first, first + step, ... (count
-- of them).
local PIECES = {
  reverse = function(a, b, n) return { { n - 1 - a, b - a, -1 } } end,
  take = function(a, b) return { { a, b - a, 1 } } end,
  drop = function(a, b, n, k) return { { a + clamped(k, n), b - a, 1 } } end,
  -- a slice within the array (k: {from, step})
  slice = function(a, b, _, k) return { { k[1] - 1 + a * k[2], b - a, k[2] } } end,
  rotate = function(a, b, n, k)
    if n == 0 or b <= a then return {} end
    local s = (a + k % n) % n
    if s + (b - a) <= n then return { { s, b - a, 1 } } end
    return { { s, n - s, 1 }, { 0, s + b - a - n, 1 } }
  end,
}

-- the part of run p whose source rows lie in [lo, hi) (a run too), or nil
local function within(p, lo, hi)
  local first, count, step = p[1], p[2], p[3]
  local floor = math.floor
  local i0, i1   -- the first index in, the first past
  if step > 0 then
    i0, i1 = floor((lo - first + step - 1) / step), floor((hi - first + step - 1) / step)
  else
    i0, i1 = floor((first - hi) / -step) + 1, floor((first - lo) / -step) + 1
  end
  i0, i1 = math.max(0, i0), math.min(count, i1)
  if i1 > i0 then return { first + i0 * step, i1 - i0, step } end
  return nil
end

-- A rearrangement of rank 1 in one round: every rank knows which runs of its rows each
-- rank's result rows read (PIECES, from the row counts), sends them, and assembles its
-- own from the runs it reads, in order: a message each way with each rank it sends to or
-- reads from (point to point, in rank order), no request round.
local function moved_runs(name, nd, v, counts, opts, what)
  local P, r0 = nranks(), me()
  local pieces = PIECES[name] or PIECES.take   -- the joins: each rank's window of a part
  local n, k = total(v.counts), nd.count
  local src, dst = starts_of(v.counts), starts_of(counts)
  local function runs(from, to)   -- what rank `from`'s rows give rank `to`, in to's order
    local out = {}
    for _, p in ipairs(pieces(dst[to + 1], dst[to + 2], n, k)) do
      out[#out + 1] = within(p, src[from + 1], src[from + 2])
    end
    return out
  end
  local lo, eb, t = src[r0 + 1], nil, nil
  local parts, need = {}, {}
  together(what, function()
    local blk = force(v, opts)
    t = blk:type()
    eb = elem_bytes(t)
    local whole = packed(blk, name)
    for q = 0, P - 1 do
      local buf = {}
      for _, run in ipairs(runs(r0, q)) do
        local at = run[1] - lo
        if run[3] == 1 then
          buf[#buf + 1] = whole:sub(at * eb + 1, (at + run[2]) * eb)
        else   -- a strided or backward run: sliced here
          local piece = plain.slice(blk, { { at + 1, at + 1 + (run[2] - 1) * run[3], run[3] } })
          buf[#buf + 1] = packed(plain.run(piece, opts.localopts), name)
        end
      end
      parts[q + 1] = table.concat(buf)
      local k_in = 0
      for _, run in ipairs(runs(q, r0)) do k_in = k_in + run[2] * eb end
      need[q + 1] = k_in
    end
    C.reserve_for(need)
  end)
  local got = C.swapped(parts, need)
  -- this rank's rows: each piece's runs in the result's order (a backward piece's ranks
  -- from the last), each from its rank's message in turn
  local out, cursor = {}, {}
  for _, p in ipairs(pieces(dst[r0 + 1], dst[r0 + 2], n, k)) do
    local first, last, step = 0, P - 1, 1
    if p[3] < 0 then first, last, step = P - 1, 0, -1 end
    for q = first, last, step do
      local w = within(p, src[q + 1], src[q + 2])
      if w then
        local at = cursor[q + 1] or 0
        out[#out + 1] = got[q + 1]:sub(at + 1, at + w[2] * eb)
        cursor[q + 1] = at + w[2] * eb
      end
    end
  end
  return unpacked(table.concat(out), t, { counts[r0 + 1] })
end

for name, how in pairs(REARRANGE) do
  H[name .. "_dist"] = function(nd, vals, opts)
    local v = vals[name == "reverse" and 1 or 2]
    if not v.counts then   -- the same on every rank: so is the result
      return { acc = lazy(nd, "out", { v.acc }, function()
        return name == "reverse" and plain.reverse(v.acc) or plain[name](nd.count_exp or nd.count, v.acc)
      end) }
    end
    local what = about(nd, vals)
    if nd.count_exp then nd.count = values_now({ nd.count_exp }, opts, what)[1] end
    local n = total(v.counts)
    local m = how.size(n, nd.count)
    local counts = balanced(m, nranks())
    return { acc = moved_runs(name, nd, v, counts, opts, what), counts = counts }
  end
  DESC[name .. "_dist"] = "one round (rank 1, along the distributed dimension): each rank " ..
    "sends the runs of its elements each rank's result reads (known from the row counts), " ..
    "point to point, and assembles its rows from the runs it reads"
end

local outer_slice

-- slice of a distributed array: along the distributed dimension by a range {from, to
-- [, step]} of Lua integers, an index or lacc.all (outer_slice); the other dimensions on
-- each rank's rows first.
wrapped.slice = function(args)
  local xs, spec = args[1], args[2]
  if not is_dist(xs) then return nil end
  if xs.rank ~= 1 then
    if type(spec) ~= "table" or #spec ~= xs.rank then fail("slice: expected a spec of %d entries", xs.rank) end
    if rawequal(spec[1], L.all) then return record("slice_rows", 1, plain.slice, args, 2) end
    -- the other dimensions sliced on each rank's rows, then the rows fetched
    local inner, any = { L.all }, false
    for d = 2, xs.rank do
      inner[d] = spec[d]
      any = any or not rawequal(spec[d], L.all)
    end
    return outer_slice(any and L.slice(xs, inner) or xs, spec[1])
  end
  if type(spec) ~= "table" or #spec ~= 1 then fail("slice: expected a spec of 1 entries") end
  return outer_slice(xs, spec[1])
end

-- slice along the distributed dimension by e (lacc.all, a range or an index), each
-- element g of the result's (its rows, for rank 2 or more) fetched from row from + (g -
-- 1) step; to an index, the row is fetched by every rank (replicated, one rank less).
-- Ends and steps are Lua integers, or expressions of replicated values whose values each
-- rank finds when the program runs (nd.exps).
local function int_or_exp(x) return util.is_integer(x) or C.scalar_exp(x) end
function outer_slice(xs, e)
  local full = { e }
  for d = 2, xs.rank do full[d] = L.all end
  local nd = record("slice_dist", 1, plain.slice, { xs, full }, 2)   -- (one process's checks)
  local from, to, step, index
  if rawequal(e, L.all) then
    from, to, step = 1, nil, 1
  elseif int_or_exp(e) then
    index = e
  elseif type(e) == "table" and getmetatable(e) == nil and int_or_exp(e[1]) and
         int_or_exp(e[2]) and (e[3] == nil or int_or_exp(e[3])) and e[4] == nil then
    from, to, step = e[1], e[2], e[3] or 1
    if step == 0 then fail("slice: entry 1 of the spec: the step of a range cannot be 0") end
  else
    fail("slice: a spec of other than Lua integers and expressions (%s), of a distributed " ..
         "array: not yet distributed (lacc.mpi)", util.show(e))
  end
  nd.from, nd.to, nd.step, nd.index = from, to, step, index
  for _, key in ipairs { "from", "to", "step", "index" } do
    if C.scalar_exp(nd[key]) then
      nd.exps = nd.exps or {}
      nd.exps[key] = nd[key]
    end
  end
  return nd
end
H.slice_dist = function(nd, vals, opts)
  local v = vals[1]
  if not v.counts then
    return { acc = lazy(nd, "out", { v.acc }, function() return plain.slice(v.acc, nd.args[2]) end) }
  end
  local n, what = total(v.counts), about(nd, vals)
  if nd.exps then
    for key, x in pairs(values_now(nd.exps, opts, what)) do nd[key] = x end
    if nd.step == 0 then   -- (every rank alike)
      fail("slice: entry 1 of the spec: the step of a range is 0 when the program runs")
    end
  end
  local gs = together(what, function() return gshape_of(v, opts) end)
  local inner = { unpack(gs, 2) }
  local w = product(gs, 2)   -- the elements of a row
  -- the elements of `rows` result rows, row g (1-based, an exp) from source row src(g)
  local function rows_from(count, src)
    return plain.generate({ count * w }, function(k)
      local g = L.idiv(k - 1, math.max(w, 1)) + 1
      local r = i64(src(g))
      return L.cond(L.land(L.ge(r, 1), L.le(r, n)), (r - 1) * w + L.imod(k - 1, math.max(w, 1)),
                    exp.constant(-1, "i64"))
    end)
  end
  if nd.index then   -- every rank fetches the one row: the result is replicated
    local got = fetch(v, rows_from(1, function() return exp.constant(nd.index, "i64") end), "slice", opts, what)
    return { acc = plain.reshape(inner, got) }
  end
  local to = nd.to or n
  local m = math.max(0, math.floor((to - nd.from) / nd.step) + 1)
  local counts = balanced(m, nranks())
  local last = nd.from + (m - 1) * nd.step
  if #gs == 1 and (m == 0 or (nd.from >= 1 and nd.from <= n and last >= 1 and last <= n)) then
    -- runs of the array, forwards or backwards, strided: one round, as rotate's
    nd.count = { nd.from, nd.step }
    return { acc = moved_runs("slice", nd, v, counts, opts, what), counts = counts }
  end
  local lo, rows = rows_before(counts, me()), counts[me() + 1]
  local lin = rows_from(rows, function(g) return nd.from + (g + run_time(lo, g) - 1) * nd.step end)
  return { acc = plain.reshape(local_shape(gs, rows), fetch(v, lin, "slice", opts, what)), counts = counts }
end
DESC.slice_dist = "rank 1, a range within the array: one round, as rotate's " ..
  "(each element that changes rank sent once, point to point); other ranges and ranks: two " ..
  "all-to-all rounds, as backpermute's"

-- append, concat and interleave of rank-1 distributed arrays: the result's balanced rows,
-- each rank fetching from each part the run of it its rows cover (every part fetched by
-- every rank, in order: collectives in step). A replicated part (a host array or a
-- program, the same on every rank) is every rank's already: its window is a local slice.
local function parts_of(name, list, n)
  local rank
  for i = 1, n or #list do
    local x = list[i]
    local r = C.arrayish(x) and C.rank_of(x) or nil
    rank = rank or r
    if r == nil or r ~= rank then
      -- one process's error for such parts (parts of other ranks, a part not an array)
      local sargs = {}
      for j = 1, n or #list do sargs[j] = C.stand(list[j]) end
      if name == "concat" then plain.concat(sargs) else plain[name](sargs[1], sargs[2]) end
      fail("%s: part %d is %s: not yet distributed (lacc.mpi); arrays of one rank are, " ..
           "distributed or replicated", name, i, r and ("of rank " .. r) or util.describe(x))
    end
  end
  return list
end

-- The plain combinator over parts given one by one.
local JOIN = {
  append = function(a, b) return plain.append(a, b) end,
  interleave = function(a, b) return plain.interleave(a, b) end,
  concat = function(...) return plain.concat({ ... }) end,
}

-- Of rank 2 or more, along the innermost dimension, each row is one rank's once the
-- parts' rows are aligned (as element-wise combinators align them): local.
local function joined(name, list)
  if C.rank_of(list[1]) >= 2 then return record(name .. "_rows", 1, JOIN[name], list, #list) end
  local nd = record(name .. "_dist", 1, JOIN.concat, list, #list)
  nd.joined = name
  return nd
end

-- slice and replicate keeping the distributed dimension outermost and whole, and the
-- joins of rank 2 or more: each rank's rows alone (operands' rows aligned first).
local function rows_alone(op, plainf)
  H[op] = function(nd, vals, opts)
    local args, counts = aligned(nd, vals, opts)
    local key = { key_of(counts) }
    for i = 1, nd.n do key[i + 1] = args[i] end
    return { acc = lazy(nd, "out", key, function() return plainf(unpack(args, 1, nd.n)) end),
             counts = counts }
  end
  DESC[op] = "local (each row is one rank's; operands of other row counts aligned first)"
end
for name, f in pairs(JOIN) do rows_alone(name .. "_rows", f) end
rows_alone("slice_rows", function(xs, spec) return plain.slice(xs, spec) end)
rows_alone("replicate_rows", function(spec, xs) return plain.replicate(spec, xs) end)

wrapped.replicate = function(args)
  local spec, xs = args[1], args[2]
  if not is_dist(xs) then return nil end
  if type(spec) == "table" and rawequal(spec[1], L.all) then
    return record("replicate_rows", 1, plain.replicate, args, 2)
  end
  local nd = record("replicate_outer", 1, plain.replicate, args, 2)   -- (one process's checks)
  if type(spec) ~= "table" or not int_or_exp(spec[1]) then
    fail("replicate: a first entry of %s over a distributed array: not yet distributed " ..
         "(lacc.mpi); lacc.all or a new extent is", util.show(type(spec) == "table" and spec[1] or spec))
  end
  return nd
end
-- A new outermost dimension of E copies: the result is distributed along it (E rows
-- balanced), and each rank's copies need all of xs: one all-gather of it. E an expression
-- of replicated values: each rank computes it when the program runs.
H.replicate_outer = function(nd, vals, opts)
  local spec, v = nd.args[1], vals[2]
  local e = spec[1]
  if C.scalar_exp(e) then
    e = values_now({ e }, opts, about(nd, vals))[1]
    if e < 0 then   -- (every rank alike) as one process's program says it
      fail("replicate: negative extent %d in dimension 1", e)
    end
  end
  local counts = balanced(e, nranks())
  local mine = { counts[me() + 1] }
  for d = 2, #spec do mine[d] = spec[d] end
  if not v.counts then
    return { acc = lazy(nd, "out", { v.acc }, function() return plain.replicate(mine, v.acc) end), counts = counts }
  end
  local what = about(nd, vals)
  local block, s = together(what, function()
    local b = force(v, opts)
    return b, packed(b, "replicate")
  end)
  local gs = block:shape()
  gs[1] = total(v.counts)
  local whole = unpacked(table.concat(allgather(s)), block:type(), gs)
  return { acc = plain.replicate(mine, whole), counts = counts }
end
DESC.replicate_outer = "one all-gather of the array (each rank's copies need all of it): " ..
  "e bytes an element to every other rank"
wrapped.append = function(args) return joined("append", parts_of("append", { args[1], args[2] }, 2)) end
wrapped.concat = function(args) return joined("concat", parts_of("concat", args[1])) end
wrapped.interleave = function(args)
  return joined("interleave", parts_of("interleave", { args[1], args[2] }, 2))
end

-- Each rank's window of part v, [from(q), to(q)) for rank q (0-based, the windows one
-- after another in rank order, from(0) = 0): the part's elements moved there in one
-- round (moved_runs: each element that changes rank sent once, point to point).
local function windows_of(nd, v, from, to, opts, what)
  if not v.counts then   -- replicated: this rank's window of its own copy
    local a = from(me())
    return rows_of(v.acc, a, math.max(a, to(me())))
  end
  local counts = {}
  for q = 0, nranks() - 1 do counts[q + 1] = math.max(to(q) - from(q), 0) end
  return moved_runs(nd.joined, nd, v, counts, opts, what)
end

-- The length of part v: its rows' total, or a replicated part's extent (run first where
-- it is a program: alike on every rank, inside an agreement all the same)
local function part_length(v, opts, what)
  if v.counts then return total(v.counts) end
  return together(what, function() return force(v, opts):shape()[1] end)
end

local function concat_dist(nd, vals, opts)
  local what = about(nd, vals)
  local lens, m = {}, 0
  for i = 1, nd.n do
    lens[i] = part_length(vals[i], opts, what)
    m = m + lens[i]
  end
  local counts = balanced(m, nranks())
  local dst = starts_of(counts)
  local got, at = {}, 0
  for i = 1, nd.n do
    local first, len = at, lens[i]
    local function from(q) return math.min(math.max(dst[q + 1] - first, 0), len) end
    got[#got + 1] = windows_of(nd, vals[i], from, function(q) return from(q + 1) end, opts, what)
    at = at + lens[i]
  end
  return { acc = plain.concat(got), counts = counts }
end
H.append_dist, H.concat_dist = concat_dist, concat_dist
DESC.append_dist = "one round a part (rank 1): each rank's balanced rows of the result cover " ..
  "a window of each part, whose elements move there as rotate's do (each element that " ..
  "changes rank sent once, point to point); a replicated part's window is the rank's own"
DESC.concat_dist = DESC.append_dist

-- interleave: a's k-th element at 2k - 1, b's at 2k, k up to the shorter length
H.interleave_dist = function(nd, vals, opts)
  local what = about(nd, vals)
  local k = math.min(part_length(vals[1], opts, what), part_length(vals[2], opts, what))
  local counts = balanced(2 * k, nranks())
  local lo, rows = rows_before(counts, me()), counts[me() + 1]
  -- global positions lo + 1 .. lo + rows: the odd ones (a's) after the first a0 =
  -- floor((lo + 1) / 2), the even ones (b's) after b0 = floor(lo / 2): rank q's window
  -- of a from floor((its lo + 1) / 2), of b from floor(its lo / 2)
  local floor = math.floor
  local a0, b0 = floor((lo + 1) / 2), floor(lo / 2)
  local dst = starts_of(counts)
  local function of_a(q) return floor((dst[q + 1] + 1) / 2) end
  local function of_b(q) return floor(dst[q + 1] / 2) end
  local fa = windows_of(nd, vals[1], of_a, function(q) return of_a(q + 1) end, opts, what)
  local fb = windows_of(nd, vals[2], of_b, function(q) return of_b(q + 1) end, opts, what)
  local out = plain.generate({ rows }, function(i)
    local g = i + run_time(lo, i)   -- 1-based global position
    local odd = L.eq(L.imod(g, 2), 1)
    return L.cond(odd, fa[L.idiv(g + 1, 2) - run_time(a0, i)], fb[L.idiv(g, 2) - run_time(b0, i)])
  end)
  return { acc = out, counts = counts }
end
DESC.interleave_dist = DESC.append_dist

-- argmax, argmin: along the distributed dimension (rank 1 whole, or {dim = 1}) a fold of
-- (value, global position) pairs combined in rank order (the first position wins a tie,
-- the first NaN everything, as on one process); along another dimension each row's own;
-- over the whole of rank 2, each row's own first, then the rows' pairs folded.
local combinators = require "lacc.combinators"
-- x (rank 3 or more) as rows of its inner extents' product
local function inner_flat(x)
  local sh = plain.shape(x)
  local width = sh[2]
  for k = 3, x.rank or #sh do width = width * sh[k] end
  return plain.reshape({ sh[1], width }, x)
end
rows_alone("inner_flat", inner_flat)
local function arg_extreme(name, larger)
  wrapped[name] = function(args)
    local xs, d = args[1], args[2]
    if not is_dist(xs) then return nil end
    if d == nil and xs.rank == 2 then
      -- over the whole: each row's first extreme (a row's own), the value there and its
      -- 1-based position in row-major order, then the pairs' fold along the rows
      local inner = L[name](xs, 2)
      local width = L.sum(L.map(function() return exp.constant(1, "i64") end, xs), 2)
      local pairs = L.imap(function(i, p)
        local j = exp.prj(p, 2)
        return exp.tuple(xs:at(i, j), (i - 1) * exp.prj(p, 1) + j)
      end, L.zip(width, inner))
      local best = L.fold1(combinators.extreme_pick(larger, xs.t), pairs, { dim = 1 })
      return L.map(function(p) return p[2] end, best)
    end
    if d == nil and xs.rank > 2 then
      -- each row's inner dimensions as one (a local reshape: the rows stay where they
      -- are): the same row-major positions, then as of rank 2
      return L[name](record("inner_flat", 1, inner_flat, { xs }, 1))
    end
    if d ~= nil and d ~= 1 then return record(name .. "_rows", 1, plain[name], args, 2) end
    local pos = L.imap(function(i) return i end, xs)   -- the global row
    local best = L.fold1(combinators.extreme_pick(larger, xs.t), L.zip(xs, pos), { dim = 1 })
    return L.map(function(p) return p[2] end, best)
  end
  rows_alone(name .. "_rows", function(xs, dim) return plain[name](xs, dim) end)
end
arg_extreme("argmax", true)
arg_extreme("argmin", false)

-- sort_by_key of keys and values of one rank, one or both distributed (a replicated one
-- sliced to the other's rows, as element-wise operands are): a stable sort of (key, value)
-- pairs by the key (rank 1: the sample sort, one all-to-all round; rank 2 or more: each
-- row on its rank), then the keys and the values apart: the order of one process's
-- argsort, and its bits (the keys are moved, not sorted as numbers, which would give NaN
-- back canonical).
wrapped.sort_by_key = function(args)
  local keys, values, opts = args[1], args[2], args[3]
  if not is_dist(keys) and not is_dist(values) then return nil end
  if C.rank_of(keys) ~= C.rank_of(values) then
    fail("sort_by_key: keys and values must be arrays of one rank: other cases are not yet " ..
         "distributed (lacc.mpi)")
  end
  local by, o = type(opts) == "table" and opts.by or nil, {}
  if type(opts) == "table" then for k, v in pairs(opts) do o[k] = v end end
  o.by = function(p)
    if by then return by(p[1]) end
    return p[1]
  end
  local sorted = L.sort(L.zip(keys, values), o)
  return L.map(function(p) return p[1] end, sorted), L.map(function(p) return p[2] end, sorted)
end

-- matmul: a distributed matrix's row block times a replicated matrix or vector is the
-- result's row block (no communication); batches distributed alike multiply batch by
-- batch; a replicated matrix or vector times a distributed one (its rows: the
-- contraction's k split over the ranks) is a sum over the ranks of each rank's product
-- of its columns of a by its rows of b: those partials, one row a rank, folded along the
-- distributed dimension (the fold's exchange, in rank order); two distributed operands:
-- b all-gathered, then as the first (matmul_both).
local with_outer = C.with_outer   -- (a rank's partial: one row)
wrapped.matmul = function(args)
  local a, b = args[1], args[2]
  if not is_dist(a) and not is_dist(b) then return nil end
  if is_dist(a) and not is_dist(b) and a.rank == 2 then
    return record("matmul_rows", 1, plain.matmul, args, 2)
  end
  local ra = (array.is_array(a) or C.is_program(a)) and C.rank_of(a) or nil
  if not is_dist(a) and is_dist(b) and b.rank <= 2 and (ra == 1 or ra == 2) and ra + b.rank > 2 then
    -- typed on an empty stand-in of a (its own extents would not meet b's stand-in's)
    local empty = C.empty(array.is_array(a) and a:type() or a.t, ra)
    local parts = record("matmul_partials", 1, function(_, y) return with_outer(plain.matmul(empty, y)) end, args, 2)
    return L.sum(parts, 1)
  end
  if is_dist(a) and is_dist(b) and a.rank == 3 and b.rank == 3 then
    return record("matmul_batches", 1, plain.matmul, args, 2)
  end
  if is_dist(a) and is_dist(b) and a.rank == 2 and (b.rank == 2 or b.rank == 1) then
    return record("matmul_both", 1, plain.matmul, args, 2)
  end
  fail("matmul: %s times %s: not yet distributed (lacc.mpi); a distributed matrix times a " ..
       "replicated or distributed matrix or vector is, a replicated one times distributed " ..
       "rows, and batches distributed alike",
       is_dist(a) and ("a distributed array of rank " .. a.rank) or "a replicated array",
       is_dist(b) and ("a distributed array of rank " .. b.rank) or "a replicated array")
end
H.matmul_rows = function(nd, vals)
  local va, vb = vals[1], vals[2]
  local rhs = vb and vb.acc or nd.args[2]
  local out = lazy(nd, "out", { va.acc, rhs }, function() return plain.matmul(va.acc, rhs) end)
  return { acc = out, counts = va.counts }
end
DESC.matmul_rows = "none: each rank's row block times the replicated operand"
-- Two distributed operands (a's rows, b's rows: the contraction's k split over the
-- ranks): every rank needs all of b for its rows of the product, so b's blocks are
-- all-gathered (each rank's block to every other: b's bytes (P - 1) / P each way, as
-- SUMMA's broadcasts move over one row of ranks), then each rank's rows of a times b,
-- the result distributed as a is. b's extent is checked against a's columns first.
H.matmul_both = function(nd, vals, opts)
  local va, vb = vals[1], vals[2]
  local what = about(nd, vals)
  local block, s = together(what, function()
    local bb = force(vb, opts)
    local ka = force(va, opts):shape()[2]
    if ka ~= total(vb.counts) then
      fail("matmul: a's last extent (%d) is not b's %s (%d)", ka, nd.args[2].rank == 1 and "extent" or
           "second last extent", total(vb.counts))
    end
    return bb, packed(bb, "matmul")
  end)
  local gs = block:shape()
  gs[1] = total(vb.counts)
  local whole = unpacked(table.concat(allgather(s)), block:type(), gs)
  return { acc = plain.matmul(va.acc, whole), counts = va.counts }
end
DESC.matmul_both = "one all-gather of b (every rank needs all of it): e bytes an element of " ..
  "b to every other rank; then each rank's rows of a times b, local"
H.matmul_partials = function(nd, vals)
  local va, vb = vals[1], vals[2]
  local A = va and va.acc or nd.args[1]
  local ra = C.rank_of(A)
  local k, kb = (array.is_array(A) and A:shape() or { })[ra], total(vb.counts)
  if k ~= nil and k ~= kb then
    fail("matmul: a's last extent (%d) is not b's %s (%d)", k, nd.args[2].rank == 1 and "extent" or
         "second last extent", kb)
  end
  local lo, hi = rows_before(vb.counts, me()), rows_before(vb.counts, me() + 1)
  local out = lazy(nd, "out", { A, vb.acc, lo, hi }, function()
    local spec = {}
    for d = 1, ra - 1 do spec[d] = L.all end
    spec[ra] = { lo + 1, hi }
    return with_outer(plain.matmul(plain.slice(A, spec), vb.acc))
  end)
  local ones = {}
  for q = 1, nranks() do ones[q] = 1 end
  return { acc = out, counts = ones }
end
DESC.matmul_partials = "local: each rank's columns of the replicated operand times its rows, " ..
  "a partial of the product that the sum after it folds over the ranks"
rows_alone("matmul_batches", function(a, b) return plain.matmul(a, b) end)

-- an index element (an integer, or a tuple of rank integers) as a list of indices
local function index_list(i, rank)
  if rank == 1 then return { i } end
  local list = {}
  for d = 1, rank do list[d] = exp.prj(i, d) end
  return list
end

wrapped.gather = function(args, n)
  local idx, xs = args[1], args[2]
  if not is_dist(xs) then
    if is_dist(idx) then return record("gather_local", 1, plain.gather, args, n) end
    return nil
  end
  return record("gather", 1, plain.gather, args, n)
end
H.gather_local = function(nd, vals, opts)
  local args, counts = aligned(nd, vals, opts)
  return { acc = plain.gather(unpack(args, 1, nd.n)), counts = counts }
end
DESC.gather_local = DESC.map
H.gather = function(nd, vals, opts)
  local vi, v = vals[1], vals[2]
  local idx = vi and vi.acc or nd.args[1]
  if not v.counts then   -- a replicated source: each rank gathers its indices' elements
    return { acc = lazy(nd, "out", { idx, v.acc }, function() return plain.gather(idx, v.acc) end),
             counts = vi and vi.counts }
  end
  if nranks() == 1 then
    return { acc = lazy(nd, "out", { idx, v.acc }, function() return plain.gather(idx, v.acc) end),
             counts = vi and vi.counts }
  end
  local what = about(nd, vals)
  local gs, ishape = together(what, function() return gshape_of(v, opts), force({ acc = idx }, opts):shape() end)
  local lin = plain.map(function(i) return linear(index_list(i, #gs), gs) end, idx)
  local got = fetch(v, plain.flatten(lin), "gather", opts, what)
  return { acc = plain.reshape(ishape, got), counts = vi and vi.counts }
end
DESC.gather = DESC.backpermute

-- permute / scatter into distributed defaults: (target, value) pairs to the target's
-- owner, combined there in rank order, each rank's in its order
local function push_record(op, args, n, defaults_i, xs_i)
  local nd = record(op, 1, plain[op], args, n)
  nd.push = { d = defaults_i, x = xs_i }
  return nd
end
wrapped.permute = function(args, n)
  if is_dist(args[1]) or is_dist(args[3]) then return nil end
  return push_record("permute", args, n, 2, 4)
end
wrapped.scatter = function(args, n) return push_record("scatter", args, n, 3, 1) end

-- 0 in every index: dropped (-2); else the linear index, -1 outside
local function target(list, gs)
  local ign
  for d = 1, #gs do
    local z = L.eq(i64(list[d]), 0)
    ign = ign and L.land(ign, z) or z
  end
  return L.cond(ign, exp.constant(-2, "i64"), linear(list, gs))
end

-- the outer extent of a program (run) or host array
local function total_rows_of(acc, opts)
  return force({ acc = acc }, opts):shape()[1]
end

-- the defaults as a distributed value: replicated ones keep each rank's balanced rows
-- (the slice compiled once per node and rows: the defaults are a new array each run)
local function distributed_defaults(nd, dv, opts)
  if dv.counts then return dv end
  local full = force(dv, opts)
  local counts = balanced(full:shape()[1], nranks())
  local lo = rows_before(counts, me())
  local hi = lo + counts[me() + 1]
  local key = lo .. ":" .. hi
  nd.slices = nd.slices or {}
  local fn = nd.slices[key]
  if not fn then
    fn = plain.compile(function(a) return rows_of(a, lo, hi) end, opts.localopts)
    nd.slices[key] = fn
  end
  return { acc = fn(full), counts = counts }
end

-- Onto few targets (a histogram) each rank first combines its own elements into a
-- partial of every target, (value, touched) pairs, and sends each owner the partial of its
-- rows: messages of the targets' size, not the elements'. Targets times ranks at most:
local DENSE_TARGETS = 2 ^ 22

-- A permute whose combining function is a commutative primitive with an identity (+ and
-- * of any number type; max and min of integers) gets partials seeded with the identity
-- (plain values, e bytes a target, the permute one process runs): combined onto a target
-- the identity leaves it as it was, so no target needs a touched flag. The identity as
-- an expression of the element type, or nil (scatter, other functions, other types).
local function seed_of(op, nd)
  local t = nd.t
  if op ~= "permute" or not types.is_scalar[t] or t == "bool" then return nil end
  local float = types.is_float(t)
  local cop = exp.combining_op(nd.args[1], t, float and { "add", "mul" } or { "add", "mul", "max", "min" })
  if cop == "add" then return exp.constant(float and -0.0 or 0, t), cop end
  if cop == "mul" then return exp.constant(1, t), cop end
  if not cop then return nil end
  -- the least value (0, or -2^(b-1): exact as a double on either VM); its complement the most
  local unsigned = t:sub(1, 1) == "u"
  local lowest = exp.constant(unsigned and 0 or -2 ^ (tonumber(t:sub(2)) - 1), t)
  return cop == "max" and lowest or exp.bnot(lowest), cop
end

-- whether x is bit for bit the identity (floats compared as their bits: -0.0 is not 0.0)
local function is_identity(x, identity, t)
  if t == "f32" then return L.eq(exp.bitcast(x, "u32"), exp.bitcast(identity, "u32")) end
  if t == "f64" then return L.eq(exp.bitcast(x, "u64"), exp.bitcast(identity, "u64")) end
  return L.eq(x, identity)
end

-- this rank's partial of every target of shape gs: (value, touched) pairs, or values
-- seeded with the identity (seed_of)
local function dense_partial(op, nd, xs, idx, xlo, gs)
  local t = nd.t
  if nd.seed then
    return plain.permute(nd.args[1], plain.fill(gs, nd.seed),
      function(i, ...) return nd.args[3](i + xlo, ...) end, xs)
  end
  local yes = exp.constant(true, "bool")
  local init = plain.fill(gs, exp.tuple(collection.zero_of(t), exp.constant(false, "bool")))
  local marked = plain.map(function(x) return exp.tuple(x, yes) end, xs)
  if op == "scatter" then return plain.scatter(marked, idx, init) end
  local combine, f = nd.args[1], nd.args[3]
  return plain.permute(function(x, o)
    local xv = exp.prj(x, 1)
    return L.cond(exp.prj(o, 2), exp.tuple(combine(xv, exp.prj(o, 1)), yes), exp.tuple(xv, yes))
  end, init, function(i, ...) return f(i + xlo, ...) end, marked)
end

-- Dense partials of at most this many bytes go through a tree (ceil(log2 P) messages of
-- the whole partial) rather than an all-to-all (a message to every rank that owns
-- targets, a partial each to combine: a rank's work grew with P, 197 ms at 1,024 ranks
-- for 256 bins)
local TREE_BYTES = 65536

-- two ranks' partials (x from the lower ranks) as one: a target either touched keeps
-- the later's value, combined onto the earlier's where both are (permute: f(later,
-- earlier), as the owner applies them in rank order; scatter: the later wins)
local function merge_partials(op, nd, x, y)
  local combine = nd.args[1]
  if nd.seed then return plain.zipWith(function(p, q) return combine(q, p) end, x, y) end
  return plain.zipWith(function(p, q)
    local pv, pt, qv, qt = exp.prj(p, 1), exp.prj(p, 2), exp.prj(q, 1), exp.prj(q, 2)
    local both = op == "scatter" and qv or L.cond(pt, combine(qv, pv), qv)
    return L.cond(qt, exp.tuple(both, exp.constant(true, "bool")), p)
  end, x, y)
end

-- the owner's rows: its defaults, then each rank's partial in rank order (compiled once:
-- the partials are new arrays each run), inside the agreement; got: the partials' bytes,
-- or a function giving them there (where taking them may fail alike on every rank)
local function dense_combine(op, nd, dblock, got, pt, what)
  local sh = dblock:shape()
  nd.combine_parts = nd.combine_parts or plain.compile(function(d, ...)
    local acc, combine = d, nd.args[1]
    for _, part in ipairs { ... } do
      acc = plain.zipWith(function(o, p)
        if nd.seed then   -- a target no rank touched keeps its default's bits
          return L.cond(is_identity(p, nd.seed, nd.t), o, combine(p, o))
        end
        local v = exp.prj(p, 1)
        return L.cond(exp.prj(p, 2), op == "scatter" and v or combine(v, o), o)
      end, acc, part)
    end
    return acc
  end)
  return together(what, function()
    if type(got) == "function" then got = got() end
    local parts = {}
    for q = 1, #got do parts[q] = unpacked(got[q], pt, sh) end
    return nd.combine_parts(dblock, unpack(parts, 1, #got))
  end)
end

local function push_handler(op)
  return function(nd, vals, opts)
    local dv, xv = vals[nd.push.d], vals[nd.push.x]
    local iv = op == "scatter" and vals[2] or nil
    if not (dv and dv.counts) and not (xv and xv.counts) and not (iv and iv.counts) then
      return { acc = plain[op](unpack(nd.args, 1, nd.n)) }
    end
    if nranks() == 1 then   -- every target is this rank's
      local args = { unpack(nd.args, 1, nd.n) }
      for i = 1, nd.n do if vals[i] then args[i] = vals[i].acc end end
      local key = {}
      for i = 1, nd.n do key[i] = args[i] end
      local out = lazy(nd, "out", key, function() return plain[op](unpack(args, 1, nd.n)) end)
      return { acc = out, counts = dv and dv.counts or { total_rows_of(args[nd.push.d], opts) } }
    end
    -- the sources (and scatter's indices) aligned; replicated ones sent by rank 1 alone
    local src = { xv or { acc = nd.args[nd.push.x] } }
    if op == "scatter" then src[2] = iv or { acc = nd.args[2] } end
    local counts
    for _, sv in ipairs(src) do if sv.counts then counts = counts or sv.counts end end
    local xs, idx, xlo
    local what = about(nd, vals)
    local parts, t, dense, gshape = together(what, function()
      local lsrc = {}
      for i, sv in ipairs(src) do
        if counts and not sv.counts then
          local lo = rows_before(counts, me())
          lsrc[i] = rows_of(sv.acc, lo, lo + counts[me() + 1])
        elseif counts and not same_counts(sv.counts, counts) then
          fail("%s: the values and indices are distributed differently: not yet distributed (lacc.mpi)", op)
        elseif not counts and me() > 0 then
          lsrc[i] = rows_of(sv.acc, 0, 0)
        else
          lsrc[i] = sv.acc
        end
      end
      xs, idx = lsrc[1], lsrc[2]
      xlo = counts and rows_before(counts, me()) or 0
      local dd = distributed_defaults(nd, dv or { acc = nd.args[nd.push.d] }, opts)
      dv = dd
      force(dd, opts)   -- here, not after the exchange: a failure is every rank's
      local gs = gshape_of(dd, opts)
      -- each element's linear target (the pairs' exchange: traced only there)
      local function targets()
        if op ~= "permute" then
          return plain.map(function(i) return target(index_list(i, #gs), gs) end, idx)
        end
        local f, r = nd.args[3], #gs
        return plain.imap(function(...)
          local ix = { ... }
          local k = #ix - 1
          ix[1] = ix[1] + xlo
          local res = { f(unpack(ix, 1, k)) }
          if #res == 1 and rawequal(res[1], L.ignore) and r > 1 then
            for d = 2, r do res[d] = L.ignore end
          end
          return target(res, gs)
        end, xs)
      end
      local how = opts.exchange
      if nd.seed == nil then nd.seed = seed_of(op, nd) or false end
      if how == "tree" or how == "partials" or (how == nil and product(gs) * nranks() <= DENSE_TARGETS) then
        local part = lazy(nd, "partial", { xs, idx or false, xlo, table.concat(gs, ",") }, function()
          return dense_partial(op, nd, xs, idx, xlo, gs)
        end)
        local h = plain.run(part, opts.localopts)
        local all = packed(h, op)
        if how == "tree" or (how == nil and #all <= TREE_BYTES) then
          C.reserve(#all + C.FAILED_ROOM)
          return all, h:type(), "tree", gs
        end
        local rowbytes = #all / math.max(gs[1], 1)
        local pts = {}
        for q = 0, nranks() - 1 do
          local a, b = rows_before(dd.counts, q), rows_before(dd.counts, q + 1)
          pts[q + 1] = all:sub(a * rowbytes + 1, b * rowbytes)
        end
        return pts, h:type(), true
      end
      local ftgt, fval = plain.flatten(targets()), plain.flatten(xs)
      local ch = plain.run(plain.minimum(plain.append(ftgt, plain.fill({ 1 }, exp.constant(0, "i64")))), opts.localopts)
      if ch:get() == -1 then fail("%s: index function result out of bounds", op) end
      local rowsize = product(gs, 2)
      local pts = outgoing(owners(ftgt, rowsize, dd.counts), { ftgt, fval }, opts)
      return pts, nd.t, false
    end)
    if dense == "tree" then
      -- every rank's whole partial combined in rank order by the folds' tree (the same
      -- bits on every rank), then this rank's rows of it onto its defaults
      local gs = gshape
      local merged = C.tree(string.char(C.HAVE) .. parts, function(a, b)
        nd.merge_fn = nd.merge_fn or plain.compile(function(x, y) return merge_partials(op, nd, x, y) end,
                                                   opts.localopts)
        return packed(nd.merge_fn(unpacked(a, t, gs), unpacked(b, t, gs)), op)
      end)
      -- (a failure the tree carried is every rank's, raised inside the combining's
      -- agreement: no agreement of its own)
      local dblock = force(dv, opts)
      local function mine()
        if merged:byte(1) == C.FAILED then error(merged:sub(2), 0) end
        local rowbytes = (#merged - 1) / math.max(gs[1], 1)
        local a, b = rows_before(dv.counts, me()), rows_before(dv.counts, me() + 1)
        return { merged:sub(2 + a * rowbytes, 1 + b * rowbytes) }
      end
      return { acc = dense_combine(op, nd, dblock, mine, t, what), counts = dv.counts }
    end
    if dense then
      -- every rank's partial of this rank's rows is as long as its own
      local like = {}
      for q = 1, nranks() do like[q] = parts[me() + 1] end
      local got = alltoall(parts, like)
      local dblock = force(dv, opts)
      return { acc = dense_combine(op, nd, dblock, got, t, what), counts = dv.counts }
    end
    local outs = incoming(alltoall(parts), { 8, elem_bytes(t) })
    local dblock = force(dv, opts)
    local ls = dblock:shape()
    local lo = rows_before(dv.counts, me()) * product(ls, 2)
    local k = #outs[1] / 8
    local tg = unpacked(outs[1], "i64", { k })
    local vs = unpacked(outs[2], t, { k })
    local function unravel(j)
      local rel, ix = j - lo, {}
      for d = #ls, 2, -1 do
        ix[d] = L.mod(rel, ls[d]) + 1
        rel = L.idiv(rel, ls[d])
      end
      ix[1] = rel + 1
      return unpack(ix, 1, #ls)
    end
    local res
    if op == "permute" then
      res = plain.permute(nd.args[1], dblock, function(q) return unravel(tg[q]) end, vs)
    else
      local where = plain.map(function(j)
        if #ls == 1 then return unravel(j) end
        return exp.tuple(unravel(j))
      end, tg)
      res = plain.scatter(vs, where, dblock)
    end
    return { acc = res, counts = dv.counts }
  end
end
H.permute = push_handler("permute")
H.scatter = push_handler("scatter")
DESC.permute = "onto few targets each rank combines its elements into a partial of every " ..
  "target, (value, touched) pairs: up to 64 KB, the partials combined in rank order by a " ..
  "fold's tree (ceil(log2 P) messages a rank), each rank applying its own targets' rows; " ..
  "up to 4M targets x ranks, each owner sent the partial of its rows (one all-to-all round), " ..
  "combined in rank order; onto more, each rank sends (target, value) pairs to the targets' " ..
  "owners, combined there in rank order"
DESC.scatter = DESC.permute

-- filter: each rank keeps its own elements (its rows' in order: the flattened result's
-- block); the counts all-gathered (uneven blocks); per row, each rank's rows' counts
wrapped.filter = function(args, n)
  local vals, counts = record("filter", 2, plain.filter, args, n)
  local o = args[3]
  local per_row = type(o) == "table" and o.per_row == true and args[2].rank >= 2
  vals.per_row, counts.per_row = per_row, per_row
  return vals, counts
end
H.filter = function(nd, vals, opts)
  local v = vals[2]
  if not v.counts then
    local r = { plain.filter(nd.args[1], v.acc, nd.args[3]) }
    return { acc = r[nd.res] }
  end
  local g = opts.memo[nd.group] or {}
  opts.memo[nd.group] = g
  if not g.done then
    local kept, count = together(about(nd, vals), function()
      local pv, pc = plain.filter(nd.args[1], v.acc, nd.args[3])
      return plain.run({ pv, pc }, opts.localopts)
    end)
    g.per_row = nd.per_row and count
    local got = allgather(tostring(kept:size()))
    local counts, sum = {}, 0
    for q = 1, #got do
      counts[q] = tonumber(got[q])
      sum = sum + counts[q]
    end
    g.kept, g.counts, g.sum, g.done = kept, counts, sum, true
  end
  if nd.res == 1 then return { acc = g.kept, counts = g.counts } end
  if g.per_row then return { acc = g.per_row, counts = v.counts } end
  return { acc = plain.unit(exp.constant(g.sum, "i64")) }
end
DESC.filter = "a local filter; the counts all-gathered (a few bytes a rank): the kept " ..
  "elements stay where they are, in blocks of uneven length (per row: each rank's rows' counts)"


C.SEARCH_LEVELS = SEARCH_LEVELS
C.gshape_of = gshape_of

return true
