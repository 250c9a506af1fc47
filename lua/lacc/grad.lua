-- lacc.grad: derivatives of lacc programs (vjp, grad, value_and_grad, jvp).
-- Owns: recording the array operations a function builds while it is traced (a tape of
-- the combinators called, each with its arguments and result), the array level's rules
-- (each derivative written with lacc's own combinators, so it is a program like any
-- other: fused, cached, explained), and the four functions of the guide. The scalar
-- level's rules are the core's (lacc_exp_jvp, core/front/deriv.c): a function's partial
-- derivatives are expressions built from its own nodes, so a pullback recomputes what a
-- map computed rather than storing it.
-- Must not: change what a combinator builds (the tape only watches the calls), or give a
-- derivative where no rule applies: that is an error naming the combinator and its line.
local util = require "lacc.util"
local types = require "lacc.types"
local exp = require "lacc.exp"
local array = require "lacc.array"
local accs = require "lacc.acc"
local arith = require "lacc.arith"
local stencil = require "lacc.stencil"
local combinators = require "lacc.combinators"
local core, fail = util.core, util.fail
local is_acc, acc = accs.is_acc, accs.acc
local unpack = table.unpack or unpack

local M = {}
local F = {}   -- what this module adds to lacc
local lacc

local function pack(...) return { n = select("#", ...), ... } end

-- x's shape: its extents as numbers where known while the program is built (of host
-- arrays and what is made of them), so that a pullback of x's shape neither reads x (a
-- mean's cotangent spread over its input kept that input alive) nor tests at run time
-- what is known now; else shape_of(x).
local function shape_of(x)
  local s = accs.static_shape(x)
  if s == nil then return lacc.shape(x) end
  local r = {}
  for d = 1, #s do r[d] = s[d] end
  return r
end

-- ---- the tape

-- While a function is traced: tape.entries (in the order built), tape.tracked[x] for every
-- array program that depends on a differentiated argument, tape.producer[x] the entry that
-- built x. depth > 0 inside a call that has a rule (its own calls are not recorded).
local tape = nil

local function is_tracked(x) return tape ~= nil and is_acc(x) and tape.tracked[x] == true end

-- x marked as depending on a differentiated argument; tape.order keeps the marks in the
-- order made, so that what is built from them (awhile's loops) is the same at each trace.
local function track(t, x)
  t.tracked[x] = true
  t.order[#t.order + 1] = x
end

-- Whether a call's arguments hold a tracked array (directly or in a list of arrays).
local function args_tracked(args)
  for i = 1, args.n do
    local a = args[i]
    if is_tracked(a) then return true end
    if type(a) == "table" and not is_acc(a) and getmetatable(a) == nil then
      for _, b in ipairs(a) do if is_tracked(b) then return true end end
    end
  end
  return false
end

-- The tracked arrays, in the order marked, that node reads: by test(node, x's node) ~= 0,
-- by default those its functions read (xs[i] inside a map, ...).
local function reads_of(node, test)
  local r = nil
  for _, x in ipairs(tape.order) do
    if (test or core.node_reads)(node, x.node) ~= 0 then
      r = r or {}
      r[#r + 1] = x
    end
  end
  return r
end

local RULES = {}   -- name -> { rev = f(e, ybar) -> {{x, cot}, ...}, fwd = f(e, tan) -> tangent }

-- A rule marked joint (awhile's) takes all of a call's results at once: their entries
-- share one group (result index -> array).
local function record(name, args, results, place)
  local rule = RULES[name]
  local tracked_args = args_tracked(args)
  local group = rule and rule.joint and {} or nil
  local any = false
  for i = 1, results.n do
    local y = results[i]
    if group and is_acc(y) then group[i] = y end
    if is_acc(y) and not tape.tracked[y] then
      -- an array reading a tracked one inside its functions depends on it too
      local reads = nil
      if next(tape.tracked) ~= nil then
        reads = rule and rule.reads and rule.reads(y.node, args) or reads_of(y.node)
      end
      if tracked_args or reads then
        any = true
        track(tape, y)
        local e = { name = name, args = args, out = y, index = i, where = place, group = group,
                    rule = rule, reads = reads, via = tape.via }
        tape.entries[#tape.entries + 1] = e
        tape.producer[y] = e
      end
    end
  end
  return any or tracked_args
end

-- lacc's functions that never take or make arrays to differentiate (the scalar language,
-- running, host arrays, types) are not watched.
local UNWATCHED = {
  vjp = true, grad = true, value_and_grad = true, jvp = true, run = true, compile = true,
  explain = true, fromtable = true, frombytes = true, fromptr = true, load = true, array = true,
  read_png = true, write_png = true, set_int64 = true, shape = true, size = true, index = true,
  tuple = true, variant = true, Maybe = true, Either = true, tuple_type = true, config = true,
}
for _, name in ipairs(exp.surface) do UNWATCHED[name] = true end

local function watcher(name, orig)
  return function(...)
    if tape == nil or tape.depth > 0 then return orig(...) end
    local args = pack(...)
    local place = util.where()
    if RULES[name] then
      tape.depth = tape.depth + 1
      local res = pack(pcall(orig, ...))
      tape.depth = tape.depth - 1
      if not res[1] then error(res[2], 0) end
      local results = pack(unpack(res, 2, res.n))
      record(name, args, results, place)
      return unpack(results, 1, results.n)
    end
    local outer = tape.via
    tape.via = outer or name
    local res = pack(pcall(orig, ...))
    tape.via = outer
    if not res[1] then error(res[2], 0) end
    local results = pack(unpack(res, 2, res.n))
    -- no rule of its own: what it built is recorded call by call inside; a tracked
    -- argument whose result was not (it was built some other way) has no derivative
    if args_tracked(args) then
      for i = 1, results.n do
        local y = results[i]
        if is_acc(y) and not tape.tracked[y] then
          track(tape, y)
          local e = { name = name, args = args, out = y, where = place, via = tape.via }
          tape.entries[#tape.entries + 1] = e
          tape.producer[y] = e
        end
      end
    else
      record(name, args, results, place)
    end
    return unpack(results, 1, results.n)
  end
end

-- f(args) traced with the tape on, progs (the argument programs) and outer (arrays f reads
-- through closures, as a loop body does; none if nil) tracked: its results (packed) and
-- the tape.
local function trace(what, f, args, progs, outer)
  if tape ~= nil then fail("%s: derivatives of derivatives are not supported yet", what) end
  if type(f) ~= "function" then fail("%s: expected a function, got %s", what, type(f)) end
  local t = { entries = {}, tracked = setmetatable({}, { __mode = "k" }), producer = {},
              depth = 0, order = {} }
  for i = 1, args.n do if progs[i] then track(t, progs[i]) end end
  for _, x in ipairs(outer or {}) do track(t, x) end
  local saved = {}
  for name, v in pairs(lacc) do
    if type(v) == "function" and not UNWATCHED[name] then
      saved[name] = v
      lacc[name] = watcher(name, v)
    end
  end
  tape = t
  local res = pack(pcall(f, unpack(args, 1, args.n)))
  tape = nil
  for name, v in pairs(saved) do lacc[name] = v end
  if not res[1] then error(res[2], 0) end
  return pack(unpack(res, 2, res.n)), t
end

-- ---- helpers over array programs

local is_list = combinators.is_list   -- several arrays (acond's, awhile's), as opposed to one

local function is_float_type(t)
  local p = types.parse(t)
  if p.kind == "scalar" then return types.is_float(t) end
  if p.kind == "tuple" then
    for _, ft in ipairs(p.fields) do if is_float_type(ft.sig) then return true end end
  end
  return false
end

local function zero_exp(t)
  local p = types.parse(t)
  if t == "bool" then return exp.constant(false, t) end
  if p.kind == "scalar" then return exp.constant(0, t) end
  local f = {}
  for i, ft in ipairs(p.fields) do f[i] = zero_exp(ft.sig) end
  return exp.tuple(unpack(f, 1, #f))
end

local function zeros_like(x)
  return lacc.fill(shape_of(x), zero_exp(x.t))
end

local function add_exp(a, b)
  local p = types.parse(a.t)
  if p.kind == "scalar" then
    if types.is_float(a.t) then return exp.add(a, b) end
    return a
  end
  local f = {}
  for i = 1, #p.fields do f[i] = add_exp(a[i], b[i]) end
  return exp.tuple(unpack(f, 1, #f))
end

local function add(a, b)
  if a == nil then return b end
  if b == nil then return a end
  return lacc.zipWith(add_exp, a, b)
end

-- ---- element-wise: map, zipWith*, zip

local function var(t) return exp.wrap(core.node_var(t, util.where())) end

-- f's body over fresh variables of the arrays' element types: vars, body.
local function trace_body(f, arrays, what)
  local vars = {}
  for i, a in ipairs(arrays) do vars[i] = var(a.t) end
  local body = exp.result(nil, what, f(unpack(vars, 1, #vars)))
  return vars, body
end

-- d body along tangent t of v (nil: zero): an Exp of body's type.
local function jvp_exp(body, vs, ts)
  local nodes, tnodes = {}, {}
  for i = 1, #vs do
    nodes[i] = vs[i].node
    tnodes[i] = ts[i] and ts[i].node or nil
  end
  local args = {}
  for i = 1, #vs do args[i] = nodes[i] end
  for i = 1, #vs do args[#vs + i] = tnodes[i] or false end
  -- false stands for nil (a hole) in the argument list
  for i = #vs + 1, 2 * #vs do if args[i] == false then args[i] = nil end end
  return exp.wrap(core.node_jvp(util.where(), body.node, #vs, unpack(args, 1, 2 * #vs)))
end

-- The sum over float leaves of ybar * d, cast to type t (a scalar type).
local function dot_to(ybar, d, t)
  local p = types.parse(ybar.t)
  if p.kind == "scalar" then
    if not types.is_float(ybar.t) then return exp.constant(0, t) end
    local v = exp.mul(ybar, d)
    return v.t == t and v or exp.cast(v, t)
  end
  local s = nil
  for i = 1, #p.fields do
    local term = dot_to(ybar[i], d[i], t)
    s = s and exp.add(s, term) or term
  end
  return s or exp.constant(0, t)
end

-- The unit tangent of component path of a value of type t (nil path: t is scalar).
local function unit_tangent(t, c)
  local p = types.parse(t)
  if p.kind == "scalar" then return exp.constant(1, t) end
  local f = {}
  for i, ft in ipairs(p.fields) do f[i] = i == c and exp.constant(1, ft.sig) or zero_exp(ft.sig) end
  return exp.tuple(unpack(f, 1, #f))
end

-- ybar . d body / d v, of v's type (each float leaf of v; integer leaves zero).
local function pull_exp(body, v, ybar)
  local p = types.parse(v.t)
  if p.kind == "scalar" then
    if not types.is_float(v.t) then return zero_exp(v.t) end
    return dot_to(ybar, jvp_exp(body, { v }, { unit_tangent(v.t) }), v.t)
  end
  local f = {}
  for i, ft in ipairs(p.fields) do
    if ft.kind == "scalar" and types.is_float(ft.sig) then
      f[i] = dot_to(ybar, jvp_exp(body, { v }, { unit_tangent(v.t, i) }), ft.sig)
    elseif ft.kind == "scalar" then
      f[i] = zero_exp(ft.sig)
    else
      fail("derivative: tuples nested in tuples are not supported yet (%s)", v.t)
    end
  end
  return exp.tuple(unpack(f, 1, #f))
end

-- The map of lam over arrays (nodes built here, not watched).
local function map_node(lam, arrays)
  local nodes = {}
  for i, a in ipairs(arrays) do nodes[i] = a.node end
  return acc("map", lam, unpack(nodes, 1, #nodes))
end

-- c (the extent of a zipWith's result: the arrays' intersection) as x's shape, zeros past
-- it.
local function padded(c, x)
  local r = x.rank
  if r == 0 then return c end
  local sc = shape_of(c)
  return lacc.generate(shape_of(x), function(...)
    local ix = { ... }
    local inside = nil
    for d = 1, r do
      local ok = exp.le(ix[d], sc[d])
      inside = inside and exp.land(inside, ok) or ok
    end
    return exp.cond(inside, c:at(...), zero_exp(c.t))
  end)
end

-- A point-wise entry (map, zipWith*, zip, generate, unit) traced again over fresh
-- variables: R.arrays its array arguments and R.vars their element variables (none for
-- generate and unit), R.body its element's expression, R.here(a) the element of array a
-- (of the entry's shape) at the same position, R.make(body) an array program of the
-- entry's shape computing body at each position.
local function retrace_elementwise(e)
  local f, first
  if e.name == "zip" then
    f, first = function(...) return exp.tuple(...) end, 1
  else
    f, first = e.args[1], 2
  end
  local arrays = {}
  for i = first, e.args.n do arrays[#arrays + 1] = accs.to_acc(e.args[i], e.name) end
  local vars, body = trace_body(f, arrays, e.name)
  local extra = {}
  local R = { arrays = arrays, vars = vars, body = body, rank = arrays[1].rank }
  function R.here(a)
    local v = var(a.t)
    extra[#extra + 1] = { v, a }
    return v
  end
  -- R.make(b): where b reads R.shaper (a pullback's cotangent, of the result's shape),
  -- the arrays b does not read are left out: a partial that needs no primal value (the
  -- 1 / n of a mean) computes none (the loss a mean takes is not computed for its pullback)
  function R.make(b)
    local params, all = {}, {}
    local prune = R.shaper ~= nil and core.node_uses(b.node, R.shaper.node) ~= 0
    local function take(v, a)
      if not prune or core.node_uses(b.node, v.node) ~= 0 then
        params[#params + 1], all[#all + 1] = v.node, a
      end
    end
    for _, x in ipairs(extra) do take(x[1], x[2]) end
    for i, v in ipairs(vars) do take(v, arrays[i]) end
    return map_node(core.node_lam(util.where(), b.node, unpack(params, 1, #params)), all)
  end
  return R
end

local function retrace_generate(e)
  local shape, f = e.args[1], e.args[2]
  if e.name == "unit" then
    local body = exp.lift(e.args[1], nil, "unit")
    return { arrays = {}, vars = {}, body = body, rank = 0,
             here = function(a) return a:at() end,
             make = function(b) return lacc.unit(b) end }
  end
  local sh = exp.shape_exp(shape, "generate")
  local rank = type(shape) == "table" and not exp.is_exp(shape) and #shape or 1
  local v = var(sh.t)
  local body = exp.result(nil, "generate", f(exp.index_args(v, rank)))
  return { arrays = {}, vars = {}, body = body, rank = rank, pos = v,
           here = function(a) return exp.wrap(core.node_op("index", util.where(), a.node, v.node)) end,
           make = function(b)
             return acc("generate", sh.node, core.node_lam(util.where(), b.node, v.node))
           end }
end

-- stencil(f, boundary, xs [, window]) as the generate it means: each element's
-- neighbourhood read from xs with the boundary's indices (stencil.lua's own reads).
local function stencil_as_generate(e)
  local f, boundary, xs, window = e.args[1], e.args[2], accs.to_acc(e.args[3], "stencil"), e.args[4]
  local w = stencil.check_window("stencil", window, xs.rank)
  local b = stencil.check_boundary("stencil", boundary, xs.t)
  local sh = shape_of(xs)
  local g = function(...)
    local args = {}
    stencil.neighbours(xs, sh, b, w, { ... }, args)
    return f(unpack(args, 1, #args))
  end
  return { name = "generate", args = pack(sh, g), where = e.where }
end

-- where(mask, a, b) as the zipWith it means.
local function where_as_zipwith(e)
  local f, arrays = combinators.where_parts(e.args[1], e.args[2], e.args[3])
  return { name = "zipWith", args = pack(f, unpack(arrays, 1, #arrays)), where = e.where }
end

local function retrace(e)
  if e.name == "stencil" then e = stencil_as_generate(e) end
  if e.name == "where" then e = where_as_zipwith(e) end
  if e.name == "generate" or e.name == "unit" then return retrace_generate(e) end
  return retrace_elementwise(e)
end

-- The tracked arrays read inside R's body, each with its reads: {a, {site, index}...}.
local function read_sites(R)
  local r = {}
  for _, x in ipairs(tape.order) do
    local got = { core.node_sites(R.body.node, x.node) }
    if #got > 0 then
      local list = {}
      for i = 1, #got, 2 do list[#list + 1] = { exp.wrap(got[i]), exp.wrap(got[i + 1]) } end
      r[#r + 1] = { x, list }
    end
  end
  return r
end

-- The parts of a read's index (a shape value: one i64, a tuple, or the empty tuple).
local function index_parts(ix, rank)
  if rank == 1 then return { ix } end
  local r = {}
  for d = 1, rank do r[d] = ix[d] end
  return r
end

-- The cotangent of array a from one read of it at site (node, index) in R's body, whose
-- value's cotangent is val at each position: kept in place where the read is at the
-- reader's own position, else added where it was read (a permute (+)).
-- Reads of a generate at some of its own dimensions (in order) and constants, such as
-- xs[i] and p:at(i, 1) in a generate over (i, j): the key of their pattern (the kept
-- dimensions, by the array's dimension each gives), or nil for other reads.
local function projection_key(dims)
  local key, last = {}, -1
  for k, dc in ipairs(dims) do
    if dc[1] >= 0 then
      if dc[1] <= last then return nil end   -- out of order or repeated: a scatter
      last = dc[1]
      key[#key + 1] = k .. ":" .. dc[1]
    end
  end
  return table.concat(key, ",")
end

-- One read whose partial is the same at every position (GMM's x[i, c] - mu[j, c]: -1)
-- sums the cotangent itself, the partial applied after: a sum of a product's cotangent is
-- then a product of a sum (lacc.sum's rule), not a product summed.
local function same_everywhere(R, a, sites)
  local p = #sites == 1 and sites[1][3]
  if not p or R.cot == nil or R.cot.t ~= a.t or p.t ~= a.t then return nil end
  if core.node_dims_used(p.node, R.pos.node) ~= 0 then return nil end
  return p
end

-- The cotangent of array a from reads of one pattern (group.sites: {val, dims, partial}
-- each): their values as one tuple per position, summed over the dimensions the pattern
-- does not keep in one fold (the function's work shared between the reads, as the C compiler sees
-- one kernel), then placed where each read's constants say (zeros elsewhere).
local function projected(R, a, group)
  local sites = group.sites
  local vals = {}
  for i, site in ipairs(sites) do vals[i] = site[1] end
  local one = #vals == 1
  local factor = same_everywhere(R, a, sites)
  local red = factor and R.cot or R.make(one and vals[1] or exp.tuple(unpack(vals, 1, #vals)))
  local kept = {}
  for _, dc in ipairs(sites[1][2]) do if dc[1] >= 0 then kept[dc[1]] = true end end
  for d = R.rank - 1, 0, -1 do
    if not kept[d] then
      red = one and lacc.sum(red, d + 1) or lacc.fold(add_exp, zero_exp(red.t), red, { dim = d + 1 })
    end
  end
  local dims1 = sites[1][2]
  return lacc.generate(shape_of(a), function(...)
    local ix, at = { ... }, {}
    for k, dc in ipairs(dims1) do if dc[1] >= 0 then at[#at + 1] = ix[k] end end
    local inside = nil
    if #at > 0 then
      local sh = shape_of(red)
      for k = 1, #at do
        local ok = exp.le(at[k], sh[k])
        inside = inside and exp.land(inside, ok) or ok
      end
    end
    local here = red:at(unpack(at, 1, #at))
    local sum = nil
    for i, site in ipairs(sites) do
      local v = one and here or here[i]
      if factor then v = exp.mul(v, factor) end
      local match = nil
      for k, dc in ipairs(site[2]) do
        if dc[1] < 0 then
          local eq = exp.eq(ix[k], dc[2] + 1)
          match = match and exp.land(match, eq) or eq
        end
      end
      if match then v = exp.cond(match, v, zero_exp(a.t)) end
      sum = sum and exp.add(sum, v) or v
    end
    return inside and exp.cond(inside, sum, zero_exp(a.t)) or sum
  end)
end

-- A read that broadcasts dimension k of a (index 0 where the broadcast's condition holds,
-- when the program runs; the position where it does not): the cotangent of either
-- reading, chosen by the condition (acond), each without a scatter where it can.
local site_cotangent
local function broadcast_read(R, a, site, val, dims, k)
  local cond = dims[k][3]
  local as_position, as_first = {}, {}
  for i, dc in ipairs(dims) do
    as_position[i] = { dc[1], dc[2] }
    as_first[i] = i == k and { -1, 0 } or { dc[1], dc[2] }
  end
  local function one(d)
    if projection_key(d) == nil then return site_cotangent(R, a, site, val) end
    return projected(R, a, { sites = { { val, d } } })
  end
  return lacc.acond(lacc.unit(exp.wrap(cond)), one(as_first), one(as_position))
end

-- A read that may broadcast several dimensions of a (array arithmetic of two arrays of
-- run-time shapes, `u - target`): in place where none does when the program runs (an
-- acond), else added where it was read. 10 steps of diffusion's loss, `sum((u - t)^2)`:
-- two scatters of 4 ms each became one pass.
local function broadcasts_read(R, a, site, val, dims)
  local none, as_position = nil, {}
  for i, dc in ipairs(dims) do
    as_position[i] = { dc[1], dc[2] }
    if dc[3] ~= nil then
      local c = exp.lnot(exp.wrap(dc[3]))
      none = none and exp.land(none, c) or c
    end
  end
  local here = projection_key(as_position) and projected(R, a, { sites = { { val, as_position } } })
  if here == nil then return site_cotangent(R, a, site, val) end
  return lacc.acond(lacc.unit(none), here, site_cotangent(R, a, site, val))
end

function site_cotangent(R, a, site, val)
  if R.pos and core.node_is_position(site[2].node, R.pos.node) ~= 0 then
    return padded(R.make(val), a)
  end
  local parts = index_parts(site[2], a.rank)
  if a.rank == 0 then
    local vals = R.make(val)
    return R.rank == 0 and vals or lacc.sum(vals)
  end
  -- The values summed first over the dimensions the index does not depend on (a read of
  -- q[j, f(c, r)] in a generate over (i, j, r, c): over i), then scattered: the scatter
  -- moves as many elements as the index takes values, not one per position.
  local used = R.pos and core.node_dims_used(site[2].node, R.pos.node) or -1
  local vals = R.make(val)
  local idx = R.make(#parts == 1 and parts[1] or exp.tuple(unpack(parts, 1, #parts)))
  if used >= 0 then
    local keep, shape = {}, shape_of(vals)
    for d = R.rank - 1, 0, -1 do
      if math.floor(used / 2 ^ d) % 2 == 1 then keep[d + 1] = true else vals = lacc.sum(vals, d + 1) end
    end
    local sh = {}
    for d = 1, R.rank do if keep[d] then sh[#sh + 1] = shape[d] end end
    if #sh == 0 then
      -- an index of no dimension: one value, at one place
      local at = lacc.backpermute({}, function()
        local ix = {}
        for d = 1, R.rank do ix[d] = 1 end
        return unpack(ix, 1, R.rank)
      end, idx)
      return lacc.generate(shape_of(a), function(...)
        local ix, q, here = { ... }, at:at(), nil
        for d = 1, a.rank do
          local eq = exp.eq(ix[d], exp.add(a.rank == 1 and q or q[d], 1))
          here = here and exp.land(here, eq) or eq
        end
        return exp.cond(here, vals:at(), zero_exp(a.t))
      end)
    end
    idx = lacc.backpermute(sh, function(...)
      local kept, ix, k = { ... }, {}, 0
      for d = 1, R.rank do
        if keep[d] then k = k + 1; ix[d] = kept[k] else ix[d] = 1 end
      end
      return unpack(ix, 1, R.rank)
    end, idx)
  end
  -- a read outside a (one a cond's branch not taken guards: a[2 * i] where 2 * i <= n)
  -- adds nothing: its partial is 0 there, and its place is dropped, not an error
  local ext = shape_of(a)
  return lacc.permute(exp.add, zeros_like(a), function(...)
    local q = idx:at(...)
    local ix, inside = {}, nil
    for d = 1, a.rank do
      local qd = a.rank == 1 and q or q[d]
      local ok = exp.land(exp.ge(qd, 0), exp.lt(qd, ext[d]))
      inside = inside and exp.land(inside, ok) or ok
      ix[d] = exp.add(qd, 1)
    end
    for d = 1, a.rank do ix[d] = exp.cond(inside, ix[d], 0) end
    return unpack(ix, 1, a.rank)
  end, vals)
end

-- Whether the arrays' shapes are known, while the program is built, to be one.
local function same_shapes(arrays)
  local first = arith.static_shape(arrays[1])
  if first == nil then return false end
  for i = 2, #arrays do
    local s = arith.static_shape(arrays[i])
    if s == nil or #s ~= #first then return false end
    for d = 1, #s do if s[d] ~= first[d] then return false end end
  end
  return true
end

local function pointwise_rev(e, ybar)
  local R = retrace(e)
  local yb = R.here(ybar)
  R.shaper, R.cot = yb, ybar
  local out = {}
  -- a zipWith's result is its arrays' intersection: a cotangent is padded to its array's
  -- shape unless the shapes are known to be one (array arithmetic's, host arrays')
  local pad = #R.arrays > 1 and not same_shapes(R.arrays)
  for j, x in ipairs(R.arrays) do
    if is_tracked(x) and is_float_type(x.t) then
      local c = R.make(pull_exp(R.body, R.vars[j], yb))
      out[#out + 1] = { x, pad and padded(c, x) or c }
    end
  end
  -- reads of arrays inside the function: each read's cotangent added at its index
  for _, rd in ipairs(read_sites(R)) do
    local a, list = rd[1], rd[2]
    if types.parse(a.t).kind ~= "scalar" then
      fail("vjp: the function of %s (at %s) reads an array of tuples being differentiated; " ..
           "derivatives through such reads are not supported yet", e.name, e.where)
    end
    if types.is_float(a.t) then
      local groups, order = {}, {}
      for _, site in ipairs(list) do
        local partial = jvp_exp(R.body, { site[1] }, { unit_tangent(a.t) })
        local val = dot_to(yb, partial, a.t)
        local at_pos = R.pos and core.node_is_position(site[2].node, R.pos.node) ~= 0
        local dims = not at_pos and R.pos and core.node_index_dims(site[2].node, R.pos.node, a.rank)
        local bcast = nil
        for k, dc in ipairs(dims or {}) do
          if dc[3] ~= nil then bcast = bcast and -1 or k end
        end
        local key = dims and not bcast and projection_key(dims)
        if bcast and bcast > 0 then
          out[#out + 1] = { a, broadcast_read(R, a, site, val, dims, bcast) }
        elseif bcast then
          out[#out + 1] = { a, broadcasts_read(R, a, site, val, dims) }
        elseif key then
          local g = groups[key]
          if g == nil or #g.sites == util.limits.args then   -- a tuple holds so many
            g = { sites = {} }
            groups[key] = g
            order[#order + 1] = g
          end
          g.sites[#g.sites + 1] = { val, dims, partial }
        else
          out[#out + 1] = { a, site_cotangent(R, a, site, val) }
        end
      end
      for _, g in ipairs(order) do out[#out + 1] = { a, projected(R, a, g) } end
    end
  end
  return out
end


local function pointwise_fwd(e, tan)
  local R = retrace(e)
  local vs, ts = {}, {}
  for j, x in ipairs(R.arrays) do
    local t = tan(x)
    if t ~= nil then vs[#vs + 1], ts[#ts + 1] = R.vars[j], R.here(t) end
  end
  for _, rd in ipairs(read_sites(R)) do
    local t = tan(rd[1])
    if t ~= nil then
      for _, site in ipairs(rd[2]) do
        vs[#vs + 1] = site[1]
        ts[#ts + 1] = exp.wrap(core.node_op("index", util.where(), t.node, site[2].node))
      end
    end
  end
  if #vs == 0 then return nil end
  return R.make(jvp_exp(R.body, vs, ts))
end

for _, name in ipairs { "map", "zipWith", "zipWith3", "zipWith4", "zipWith5", "zipWith6",
                        "zipWith7", "zipWith8", "zipWith9", "zip", "generate", "unit", "stencil", "where" } do
  RULES[name] = { rev = pointwise_rev, fwd = pointwise_fwd, sites = true }
end

-- ---- stencils: the transposed stencil, a gather

-- The positions i (1-based, along one dimension of extent n) whose neighbour at offset o
-- is element j under boundary b, as candidates {i, valid}: clamp: i in [lo, hi] with
-- lo = 1 at j = 1 (every i whose neighbour falls at or before the edge), else j - o,
-- and hi likewise at j = n, at most |o| + 1 of them; wrap: the one i = j - o around the
-- array; a constant boundary: j - o where it is inside (outside, the constant is read).
local function preimages(b, j, o, n)
  local one = exp.lift(1, "i64", "stencil")
  if b == "wrap" then return { { lacc.imod(j - o - 1, n) + 1, nil } } end
  if b ~= "clamp" then
    local i = j - o
    return { { lacc.min(lacc.max(i, one), n), lacc.land(lacc.ge(i, one), lacc.le(i, n)) } }
  end
  if o == 0 then return { { j, nil } } end
  local lo = lacc.cond(lacc.eq(j, one), one, lacc.max(j - o, one))
  local hi = lacc.cond(lacc.eq(j, n), n, lacc.min(j - o, n))
  local r = {}
  for t = 0, math.abs(o) do
    local i = lo + t
    r[#r + 1] = { lacc.min(i, n), lacc.le(i, hi) }
  end
  return r
end

-- stencil(f, b, xs [, window])'s pullback where b is clamp, wrap or a constant and f reads
-- no other array being differentiated: each element of xs gathers, from the positions
-- whose neighbourhood holds it, f's partial there times their cotangent (the transposed
-- stencil; one pass, nothing stored: the partials computed as one tuple array first
-- took 27 ms a step, writing 9 floats an element). Through the generic rule each
-- neighbour's cotangent was a permute (+) of its own: 10 steps of a 3 x 3 diffusion on
-- 1024 x 1024 took 162 ms, 50 scatters. Mirror boundaries (two positions may read one
-- element through the reflection) take the generic rule.
local function stencil_rev(e, ybar)
  local f, boundary, xs, window = e.args[1], e.args[2], accs.to_acc(e.args[3], "stencil"), e.args[4]
  local w = stencil.check_window("stencil", window, xs.rank)
  local b = stencil.check_boundary("stencil", boundary, xs.t)
  local m = 1
  for d = 1, #w do m = m * w[d] end
  local R = retrace(e)
  local others = false
  for _, rd in ipairs(read_sites(R)) do others = others or rd[1] ~= xs end
  if b == "mirror" or others or m > util.limits.args or not is_tracked(xs) or
     not is_float_type(xs.t) or types.parse(xs.t).kind ~= "scalar" then
    return pointwise_rev(e, ybar)
  end
  local sh, r = shape_of(xs), xs.rank
  -- the neighbours f does not depend on (a 5-point stencil's corners) give nothing; where
  -- every other partial is a constant (f linear in the neighbourhood), the pullback is
  -- the transposed stencil itself, over the cotangent
  local unused, coef, linear = {}, {}, types.parse(ybar.t).kind == "scalar"
  do
    local vars = {}
    for o = 1, m do vars[o] = xs end
    local vs, body = trace_body(f, vars, "stencil")
    for o = 1, m do
      local d = jvp_exp(body, { vs[o] }, { unit_tangent(xs.t) })
      unused[o] = core.node_is_zero(d.node) ~= 0
      coef[o] = d
      for k = 1, m do linear = linear and core.node_uses(d.node, vs[k].node) == 0 end
    end
  end
  local transposed
  if linear then
    local zero = b == "wrap" and "wrap" or exp.constant(0, ybar.t)
    transposed = lacc.stencil(function(...)
      local nb, s = { ... }, nil
      for o = 1, m do
        if not unused[o] then   -- position i reads j at offset o: j sees i at offset -o
          local t = dot_to(nb[m + 1 - o], coef[o], xs.t)
          s = s and exp.add(s, t) or t
        end
      end
      return s or zero_exp(xs.t)
    end, zero, ybar, w)
    if b ~= "clamp" then return { { xs, transposed } } end
  end
  -- the cotangent position i gives its neighbour o: f's partial there (f traced again at
  -- i, so that only what the partial needs is read: a linear stencil's are constants)
  local function partial(i, o)
    local args = {}
    stencil.neighbours(xs, sh, b, w, i, args)
    local body = exp.result(nil, "stencil", f(unpack(args, 1, #args)))
    return dot_to(ybar:at(unpack(i, 1, r)), jvp_exp(body, { args[o] }, { unit_tangent(xs.t) }), xs.t)
  end
  -- xs's cotangent at position j, from every position whose neighbourhood reads it
  local function gathered(j)
    local s = nil
    local o, offs = 0, {}
    local function walk(d)
      if d > r then
        o = o + 1
        if unused[o] then return end
        -- the positions reading j at this offset: a product of each dimension's candidates
        local cands = {}
        for dd = 1, r do cands[dd] = preimages(b, j[dd], offs[dd], sh[dd]) end
        local ix, ok = {}, {}
        local function term(dd)
          if dd > r then
            local valid = nil
            for k = 1, r do
              if ok[k] then valid = valid and lacc.land(valid, ok[k]) or ok[k] end
            end
            local p = partial({ unpack(ix, 1, r) }, o)
            local t = valid and lacc.cond(valid, p, zero_exp(xs.t)) or p
            s = s and exp.add(s, t) or t
            return
          end
          for _, c in ipairs(cands[dd]) do
            ix[dd], ok[dd] = c[1], c[2]
            term(dd + 1)
          end
        end
        term(1)
        return
      end
      local h = (w[d] - 1) / 2
      for off = -h, h do
        offs[d] = off
        walk(d + 1)
      end
    end
    walk(1)
    return s or zero_exp(xs.t)
  end
  if not transposed then
    return { { xs, lacc.generate(sh, function(...) return gathered({ ... }) end) } }
  end
  -- clamped: off the edges each element is read from one position an offset, as the
  -- transposed stencil (zeros outside) has it; on them (first and last along a dimension
  -- the window spans), from several: those gathered and written over it, a slab of the
  -- two edges a dimension (a pass over the edges, not the whole array)
  local out = transposed
  for d = 1, r do
    if w[d] > 1 then
      local esh = {}
      for k = 1, r do esh[k] = sh[k] end
      esh[d] = exp.min(sh[d], exp.lift(2, "i64", "stencil"))
      local function at(ix)   -- slab position ix's place in the array
        local j = { unpack(ix, 1, r) }
        j[d] = lacc.cond(lacc.eq(ix[d], 1), exp.lift(1, "i64", "stencil"), sh[d])
        return j
      end
      local vals = lacc.generate(esh, function(...) return gathered(at({ ... })) end)
      out = lacc.permute(function(new, _) return new end, out,
                         function(...) return unpack(at({ ... }), 1, r) end, vals)
    end
  end
  return { { xs, out } }
end
RULES.stencil = { rev = stencil_rev, fwd = pointwise_fwd, sites = true }

-- ---- reductions along a dimension: sums, products, maxima and minima

local combining_op = exp.combining_op

-- The dimension a fold's or scan's options name (a number, or {dim = d}), else the last.
local function dim_of(opts, xs)
  return type(opts) == "table" and opts.dim or opts or xs.rank
end

local function fold_parts(e)
  local f, xs, opts
  if e.name == "fold" then f, xs, opts = e.args[1], e.args[3], e.args[4]
  else f, xs, opts = e.args[1], e.args[2], e.args[3] end
  xs = accs.to_acc(xs, e.name)
  return f, xs, dim_of(opts, xs), opts, combining_op(f, xs.t)
end

-- The combinator an entry stands for, as the user called it.
local function named(e)
  return e.via and ("%s (inside %s)"):format(e.name, e.via) or e.name
end

local function no_rule(e, what, why)
  fail("%s: no derivative rule for %s (built at %s)%s", what, named(e), e.where, why or "")
end

local FOLD_WHY = ": its elements must be floats (not tuples), or its result an integer"

-- An array of xs's shape whose element at ix is g(ix without d, ix[d]).
local function spread(xs, d, g)
  return lacc.generate(shape_of(xs), function(...)
    local ix = { ... }
    local k = ix[d]
    table.remove(ix, d)
    return g(ix, k, { ... })
  end)
end

-- Per line along d: (product of the elements that are not zero, how many are zero).
local function product_parts(xs, d)
  local t = xs.t
  local pairs_ = lacc.map(function(x)
    local zero = exp.eq(x, 0)
    return exp.tuple(exp.cond(zero, exp.constant(1, t), x),
                     exp.cond(zero, exp.constant(1, "i64"), exp.constant(0, "i64")))
  end, xs)
  return lacc.fold(function(p, q) return exp.tuple(exp.mul(p[1], q[1]), exp.add(p[2], q[2])) end,
                   exp.tuple(exp.constant(1, t), exp.constant(0, "i64")), pairs_, { dim = d })
end

-- d y / d x at x of a product y over its line, given the line's parts: the product of the
-- others (zeros counted, not divided by: Futhark's rule).
local function product_others(x, p)
  local nz, zeros = p[1], p[2]
  local t = x.t
  return exp.cond(exp.eq(zeros, 0), exp.div(nz, x),
           exp.cond(exp.land(exp.eq(zeros, 1), exp.eq(x, 0)), nz, exp.constant(0, t)))
end

local function lines_at(a, ix) return a:at(unpack(ix, 1, #ix)) end

local function arg_of(op, xs, d)
  return op == "max" and lacc.argmax(xs, d) or lacc.argmin(xs, d)
end

-- Any other associative function f of floats (the general rule): the line's result is
-- L_k f x_k f R_k for each k, L_k the fold of the elements before x_k (from the start
-- value in a fold: a scanl), R_k of those after it (a scanr1), so its partial derivative
-- by x_k is f's composition's at (L_k, x_k, R_k), either side absent at a line's ends: an
-- array of xs's shape, D, in one pass over the two scans. Tuples have no rule.
local function general_partials(e, xs, d)
  local f, t = e.args[1], xs.t
  if types.parse(t).kind ~= "scalar" or not types.is_float(t) then return nil end
  local with_z = e.name == "fold"
  local sh, r = shape_of(xs), xs.rank
  local n = sh[d]
  local lefts = with_z and lacc.scanl(f, e.args[2], xs, { dim = d }) or lacc.scanl1(f, xs, { dim = d })
  local rights = lacc.scanr1(f, xs, { dim = d })
  local function at(a, ix, k)
    local j = { unpack(ix, 1, r) }
    j[d] = k
    return a:at(unpack(j, 1, r))
  end
  local one = exp.lift(1, "i64", "vjp")
  local la = lacc.generate(sh, function(...)
    local ix = { ... }
    return at(lefts, ix, with_z and ix[d] or lacc.max(ix[d] - 1, one))
  end)
  local ra = lacc.generate(sh, function(...)
    local ix = { ... }
    return at(rights, ix, lacc.min(ix[d] + 1, n))
  end)
  local has = lacc.generate(sh, function(...)
    local k = ({ ... })[d]
    return exp.tuple(with_z and exp.lift(true, "bool", "vjp") or exp.gt(k, 1), exp.lt(k, n))
  end)
  local vl, vx, vr, vh = var(t), var(t), var(t), var("(bool,bool)")
  local function body(a, b) return exp.result(nil, e.name, f(a, b)) end
  local unit = { unit_tangent(t) }
  local d_lxr = jvp_exp(body(body(vl, vx), vr), { vx }, unit)
  local d_lx, d_xr = jvp_exp(body(vl, vx), { vx }, unit), jvp_exp(body(vx, vr), { vx }, unit)
  local hl, hr = vh[1], vh[2]
  local dy = exp.cond(hl, exp.cond(hr, d_lxr, d_lx), exp.cond(hr, d_xr, exp.constant(1, t)))
  return map_node(core.node_lam(util.where(), dy.node, vl.node, vx.node, vr.node, vh.node),
                  { la, xs, ra, has })
end

local function fold_rev(e, ybar)
  local _, xs, d, _, op = fold_parts(e)
  if not is_tracked(xs) then return {} end
  if op == "add" then
    -- a backpermute of the (smaller) cotangent, materialised: several consumers pull it,
    -- none materialises the spread (fusion.c keeps such a backpermute delayed)
    local r = xs.rank
    return { { xs, lacc.backpermute(shape_of(xs), function(...)
      local ix = { ... }
      table.remove(ix, d)
      return unpack(ix, 1, r - 1)
    end, lacc.compute(ybar)) } }
  elseif op == "mul" then
    local parts = product_parts(xs, d)
    return { { xs, spread(xs, d, function(ix, _, full)
      return exp.mul(lines_at(ybar, ix), product_others(xs:at(unpack(full, 1, #full)), lines_at(parts, ix)))
    end) } }
  elseif (op == "max" or op == "min") and e.name == "fold1" then
    -- the first position holding the extreme (argmax's, argmin's) takes it all
    local pos = arg_of(op, xs, d)
    return { { xs, spread(xs, d, function(ix, k)
      return exp.cond(exp.eq(k, lines_at(pos, ix)), lines_at(ybar, ix), exp.constant(0, xs.t))
    end) } }
  end
  local D = general_partials(e, xs, d)
  if D then
    return { { xs, spread(xs, d, function(ix, _, full)
      return exp.mul(lines_at(ybar, ix), D:at(unpack(full, 1, #full)))
    end) } }
  end
  no_rule(e, "vjp", FOLD_WHY)
end

local function fold_fwd(e, tan)
  local _, xs, d, opts, op = fold_parts(e)
  local t = tan(xs)
  if t == nil then return nil end
  if op == "add" then return lacc.fold(exp.add, 0, t, opts) end
  if op == "mul" then
    local parts = product_parts(xs, d)
    local terms = spread(xs, d, function(ix, _, full)
      return exp.mul(t:at(unpack(full, 1, #full)),
                     product_others(xs:at(unpack(full, 1, #full)), lines_at(parts, ix)))
    end)
    return lacc.fold(exp.add, 0, terms, { dim = d })
  end
  if (op == "max" or op == "min") and e.name == "fold1" then
    local pos = arg_of(op, xs, d)
    local sh, r = shape_of(xs), xs.rank
    local out = {}
    for k = 1, r do if k ~= d then out[#out + 1] = sh[k] end end
    return lacc.generate(out, function(...)
      local ix = { ... }
      table.insert(ix, d, lines_at(pos, { ... }))
      return t:at(unpack(ix, 1, r))
    end)
  end
  local D = general_partials(e, xs, d)
  if D then return lacc.fold(exp.add, 0, lacc.zipWith(exp.mul, D, t), { dim = d }) end
  no_rule(e, "jvp", FOLD_WHY)
end

RULES.fold = { rev = fold_rev, fwd = fold_fwd }
RULES.fold1 = RULES.fold

-- ---- scans of +: a running sum's cotangent is the running sum from the other end

local function scan_parts(e)
  local z = e.name == "scanl" or e.name == "scanr"
  local xs = accs.to_acc(e.args[z and 3 or 2], e.name)
  local opts = e.args[z and 4 or 3]
  return xs, opts, not z and combining_op(e.args[1], xs.t) or nil
end

-- Any other function of floats: each step y_k = f(y_k-1, x_k) (scanl1; scanr1 mirrored)
-- has partials a_k by the running value and b_k by the element, so a cotangent runs back
-- as the linear recurrence s_k = ybar_k + a_k+1 s_k+1 and x_k gets b_k s_k: a scan of
-- affine maps (c, m), composed associatively (Futhark's rule for scans), in the other
-- direction; a tangent runs forward the same way. ab: the array of (a_k, b_k), (0, 1)
-- where a line starts. scanl and scanr (a start value z, one more result: y_0 = z before
-- the first element, or after the last) always have a running value; z is a constant.
local function scan_steps(e, xs, d)
  local f, t = e.args[1], xs.t
  if types.parse(t).kind ~= "scalar" or not types.is_float(t) then return nil end
  local left = e.name == "scanl1" or e.name == "scanl"
  local z = e.name == "scanl" or e.name == "scanr"
  local y, sh, r = e.out, shape_of(xs), xs.rank
  local n = sh[d]
  local one = exp.lift(1, "i64", "vjp")
  local prev = lacc.generate(sh, function(...)
    local ix = { ... }
    local k = ix[d]
    local has = z and exp.lift(true, "bool", "vjp") or (left and exp.gt(k, 1) or exp.lt(k, n))
    if z then ix[d] = left and k or k + 1   -- y's element before (scanl) or after (scanr) x_k
    else ix[d] = left and lacc.max(k - 1, one) or lacc.min(k + 1, n) end
    return exp.tuple(y:at(unpack(ix, 1, r)), has)
  end)
  local vp, vx = var("(" .. t .. ",bool)"), var(t)
  local run, has = vp[1], vp[2]
  local body = exp.result(nil, e.name, left and f(run, vx) or f(vx, run))
  local unit = { unit_tangent(t) }
  local a, b = jvp_exp(body, { run }, unit), jvp_exp(body, { vx }, unit)
  local zero, one_t = exp.constant(0, t), exp.constant(1, t)
  local ab = exp.tuple(exp.cond(has, a, zero), exp.cond(has, b, one_t))
  return map_node(core.node_lam(util.where(), ab.node, vp.node, vx.node), { prev, xs }), left, z
end

-- (c, m) pairs as affine maps s -> c + m s: s_k = c_k + m_k s_next, composed along a scan
-- whose next element lies after (forward: true) or before each.
local function affine_scan(pairs_, d, forward)
  local function op(l, r)   -- l: the earlier element, r: the later
    if forward then return exp.tuple(exp.add(l[1], exp.mul(l[2], r[1])), exp.mul(l[2], r[2])) end
    return exp.tuple(exp.add(r[1], exp.mul(r[2], l[1])), exp.mul(l[2], r[2]))
  end
  local s = forward and lacc.scanr1(op, pairs_, { dim = d }) or lacc.scanl1(op, pairs_, { dim = d })
  return lacc.map(function(p) return p[1] end, s)
end

local function scan_rule(other)
  return {
    rev = function(e, ybar)
      local xs, opts, op = scan_parts(e)
      if op == "add" then return { { xs, lacc[other](exp.add, ybar, opts) } } end
      local d = dim_of(opts, xs)
      local ab, left, z = scan_steps(e, xs, d)
      if not ab then no_rule(e, "vjp", ": its elements must be floats (not tuples)") end
      local sh, r = shape_of(xs), xs.rank
      local n = sh[d]
      local one = exp.lift(1, "i64", "vjp")
      -- c_k = ybar at y_k (scanl: one further), m_k = a of the step after k (after: k + 1
      -- leftwards scans, k - 1 rightwards)
      local pairs_ = lacc.generate(sh, function(...)
        local ix = { ... }
        local k = ix[d]
        if z and left then ix[d] = k + 1 end
        local c = ybar:at(unpack(ix, 1, r))
        ix[d] = left and lacc.min(k + 1, n) or lacc.max(k - 1, one)
        local inside = left and exp.lt(k, n) or exp.gt(k, 1)
        return exp.tuple(c, exp.cond(inside, ab:at(unpack(ix, 1, r))[1], exp.constant(0, xs.t)))
      end)
      local s = affine_scan(pairs_, d, left)
      return { { xs, lacc.zipWith(function(p, v) return exp.mul(p[2], v) end, ab, s) } }
    end,
    fwd = function(e, tan)
      local xs, opts, op = scan_parts(e)
      local t = tan(xs)
      if op == "add" then return t and lacc[e.name](exp.add, t, opts) end
      local d = dim_of(opts, xs)
      local ab, left, z = scan_steps(e, xs, d)
      if not ab then no_rule(e, "jvp", ": its elements must be floats (not tuples)") end
      if t == nil then return nil end
      -- ydot_k = b_k xdot_k + a_k ydot_before
      local pairs_ = lacc.zipWith(function(p, v) return exp.tuple(exp.mul(p[2], v), p[1]) end, ab, t)
      local ydot = affine_scan(pairs_, d, not left)
      if not z then return ydot end
      -- y_0 (z, a constant) first in scanl, last in scanr: its tangent zero
      local sy, r = shape_of(e.out), xs.rank
      local n = shape_of(xs)[d]
      return lacc.generate(sy, function(...)
        local ix = { ... }
        local k = ix[d]
        local outside = left and exp.eq(k, 1) or exp.gt(k, n)
        if left then ix[d] = lacc.max(k - 1, exp.lift(1, "i64", "jvp")) else ix[d] = lacc.min(k, n) end
        return exp.cond(outside, exp.constant(0, xs.t), ydot:at(unpack(ix, 1, r)))
      end)
    end,
  }
end
RULES.scanl1, RULES.scanr1 = scan_rule("scanr1"), scan_rule("scanl1")
RULES.scanl, RULES.scanr = scan_rule(nil), scan_rule(nil)

-- ---- segmented folds and scans of +, along the innermost dimension

-- The segment (1-based) each of the n elements of a line lies in, for segment lengths
-- segs: a count, at each element, of the segments starting at or before it (an empty
-- segment starts where the next one does, which then counts last).
local function segment_of(segs, n)
  local lens = lacc.map(function(v) return exp.cast(v, "i64") end, segs)
  local offs = lacc.scanl(exp.add, 0, lens)
  local starts = lacc.permute(exp.add, lacc.fill({ n }, exp.lift(0, "i64", "vjp")), function(s)
    return lacc.cond(lacc.lt(offs:at(s), n), offs:at(s) + 1, lacc.ignore)
  end, lacc.map(function() return exp.lift(1, "i64", "vjp") end, lens))
  return lacc.scanl1(exp.add, starts)
end

local function seg_parts(e)
  local z = e.name == "foldSeg" or e.name == "scanlSeg" or e.name == "scanrSeg"
  local xs = accs.to_acc(e.args[z and 3 or 2], e.name)
  local segs = accs.to_acc(e.args[z and 4 or 3], e.name)
  return xs, segs, combining_op(e.args[1], xs.t)
end

local SEG_WHY = ": its function must be + of its two arguments"

-- seg_parts of a combinator whose rule needs +: else the error naming it.
local function seg_add(e, what)
  local xs, segs, op = seg_parts(e)
  if op ~= "add" then no_rule(e, what, SEG_WHY) end
  return xs, segs
end

-- An array of xs's shape: ybar at place(j, s) along the innermost dimension, for each
-- element j there of segment s (both 1-based).
local function by_segment(xs, segs, ybar, place)
  local r = xs.rank
  local seg = segment_of(segs, shape_of(xs)[r])
  return lacc.generate(shape_of(xs), function(...)
    local ix = { ... }
    ix[r] = place(ix[r], seg:at(ix[r]))
    return ybar:at(unpack(ix, 1, r))
  end)
end

-- foldSeg/fold1Seg of +: each element gets its segment's cotangent
RULES.foldSeg = {
  rev = function(e, ybar)
    local xs, segs = seg_add(e, "vjp")
    if not is_tracked(xs) then return {} end
    return { { xs, by_segment(xs, segs, ybar, function(_, s) return s end) } }
  end,
  fwd = function(e, tan)
    local xs, segs = seg_add(e, "jvp")
    local t = tan(xs)
    return t and lacc.foldSeg(exp.add, 0, t, segs)
  end,
  -- the combinator reads its own array inside its functions (its implementation's
  -- generates): the rule accounts for xs whole, and + reads nothing else
  sites = true,
}
RULES.fold1Seg = RULES.foldSeg

-- scanl1Seg/scanr1Seg of +: the running sum from the other end, segment by segment
local function seg_scan_rule(other)
  return {
    rev = function(e, ybar)
      local xs, segs = seg_add(e, "vjp")
      return { { xs, lacc[other](exp.add, ybar, segs) } }
    end,
    fwd = function(e, tan)
      local xs, segs = seg_add(e, "jvp")
      local t = tan(xs)
      return t and lacc[e.name](exp.add, t, segs)
    end,
    sites = true,
  }
end
RULES.scanl1Seg, RULES.scanr1Seg = seg_scan_rule("scanr1Seg"), seg_scan_rule("scanl1Seg")

-- scanlSeg/scanrSeg of + (one more element a segment: z first, or last): element j of
-- segment s is in the outputs after it (scanl) or before it (scanr) in its segment, so
-- its cotangent is the other direction's running sum of the result's cotangent without
-- those z places: ybar at j + s (scanl's, 1-based) or j + s - 1 (scanr's). z is a
-- constant, as every scan's start value.
local function seg_scan_z_rule(other, back)
  return {
    rev = function(e, ybar)
      local xs, segs = seg_add(e, "vjp")
      if not is_tracked(xs) then return {} end
      local shifted = by_segment(xs, segs, ybar, function(j, s) return j + s - back end)
      return { { xs, lacc[other](exp.add, shifted, segs) } }
    end,
    fwd = function(e, tan)
      local xs, segs = seg_add(e, "jvp")
      local t = tan(xs)
      return t and lacc[e.name](exp.add, zero_exp(xs.t), t, segs)
    end,
    sites = true,
  }
end
RULES.scanlSeg, RULES.scanrSeg = seg_scan_z_rule("scanr1Seg", 0), seg_scan_z_rule("scanl1Seg", 1)

-- ---- permute (+): each element's cotangent is read back where it went

-- permute's arguments, its combining function checked to be +.
local function permute_parts(e, what)
  local comb, defaults, f, xs = e.args[1], accs.to_acc(e.args[2], "permute"), e.args[3],
                                accs.to_acc(e.args[4], "permute")
  if combining_op(comb, xs.t) ~= "add" then
    no_rule(e, what, ": its combining function must be + of its two arguments")
  end
  return defaults, f, xs
end

RULES.permute = {
  rev = function(e, ybar)
    local defaults, f, xs = permute_parts(e, "vjp")
    local out = { { defaults, ybar } }
    if is_tracked(xs) then
      local r = ybar.rank
      out[#out + 1] = { xs, lacc.generate(shape_of(xs), function(...)
        local to = { f(...) }
        if #to == 1 and r > 1 then for k = 2, r do to[k] = to[1] end end   -- lacc.ignore
        local dropped = exp.eq(to[1], 0)
        return exp.cond(dropped, exp.constant(0, xs.t), ybar:at(unpack(to, 1, r)))
      end) }
    end
    return out
  end,
  fwd = function(e, tan)
    local defaults, f, xs = permute_parts(e, "jvp")
    local td, tx = tan(defaults), tan(xs)
    if td == nil and tx == nil then return nil end
    return lacc.permute(exp.add, td or zeros_like(defaults), f, tx or zeros_like(xs))
  end,
}

-- ---- rearrangements

RULES.reshape = {
  rev = function(e, ybar)
    local xs = accs.to_acc(e.args[2], "reshape")
    return { { xs, lacc.reshape(shape_of(xs), ybar) } }
  end,
  fwd = function(e, tan)
    local t = tan(accs.to_acc(e.args[2], "reshape"))
    return t and lacc.reshape(e.args[1], t)
  end,
}

RULES.backpermute = {
  rev = function(e, ybar)
    local xs = accs.to_acc(e.args[3], "backpermute")
    return { { xs, lacc.permute(add_exp, zeros_like(xs), e.args[2], ybar) } }
  end,
  fwd = function(e, tan)
    local t = tan(accs.to_acc(e.args[3], "backpermute"))
    return t and lacc.backpermute(e.args[1], e.args[2], t)
  end,
}

RULES.compute = {
  rev = function(e, ybar) return { { accs.to_acc(e.args[1], "compute"), ybar } } end,
  fwd = function(e, tan)
    local t = tan(accs.to_acc(e.args[1], "compute"))
    return t and lacc.compute(t)
  end,
}

-- Rearrangements with inverses of their own: the cotangent rearranged back (a gather, not
-- the scatter a backpermute's rule makes).
local function inverse_rule(name, inverse)
  RULES[name] = {
    rev = function(e, ybar)
      local xs = accs.to_acc(e.args[e.args.n], name)
      return { { xs, inverse(e, ybar) } }
    end,
    fwd = function(e, tan)
      local t = tan(accs.to_acc(e.args[e.args.n], name))
      if t == nil then return nil end
      local a = {}
      for i = 1, e.args.n - 1 do a[i] = e.args[i] end
      a[e.args.n] = t
      return lacc[name](unpack(a, 1, e.args.n))
    end,
  }
end
inverse_rule("transpose", function(_, ybar) return lacc.transpose(ybar) end)
inverse_rule("reverse", function(_, ybar) return lacc.reverse(ybar) end)
-- replicate: the copies' cotangents summed over the new dimensions
inverse_rule("replicate", function(e, ybar)
  local spec, c = e.args[1], ybar
  for d = #spec, 1, -1 do
    if not rawequal(spec[d], lacc.all) then c = lacc.sum(c, d) end
  end
  return c
end)

-- append(a, b) along the innermost dimension: each part's cotangent is its stretch of
-- the result's; lines past the outer extents' intersection (the result's) zero.
local function shifted(ybar, x, by)
  local r, sy = x.rank, shape_of(ybar)
  return lacc.generate(shape_of(x), function(...)
    local ix, inside = { ... }, nil
    for d = 1, r - 1 do
      local ok = exp.le(ix[d], sy[d])
      inside = inside and exp.land(inside, ok) or ok
    end
    ix[r] = exp.add(ix[r], by)
    local v = ybar:at(unpack(ix, 1, r))
    return inside and exp.cond(inside, v, zero_exp(ybar.t)) or v
  end)
end

-- A push array of two parts (append, interleave): part(ybar, x, other, second) gives
-- part x's share of the cotangent; a tangent is the same push array of the tangents.
local function parts_rule(name, part)
  return {
    rev = function(e, ybar)
      local a, b = accs.to_acc(e.args[1], name), accs.to_acc(e.args[2], name)
      local out = {}
      if is_tracked(a) then out[#out + 1] = { a, part(ybar, a, b, false) } end
      if is_tracked(b) then out[#out + 1] = { b, part(ybar, b, a, true) } end
      return out
    end,
    fwd = function(e, tan)
      local a, b = accs.to_acc(e.args[1], name), accs.to_acc(e.args[2], name)
      local ta, tb = tan(a), tan(b)
      if ta == nil and tb == nil then return nil end
      return lacc[name](ta or zeros_like(a), tb or zeros_like(b))
    end,
  }
end

RULES.append = parts_rule("append", function(ybar, x, other, second)
  return shifted(ybar, x, second and shape_of(other)[other.rank] or 0)
end)

-- interleave(a, b): a's k-th element (of the first min(n, m) of each line) is the result's
-- 2k - 1st, b's its 2k-th; the rest, and lines past the outer extents' intersection, zero.
local function interleaved(ybar, x, second)
  local r, sy = x.rank, shape_of(ybar)
  return lacc.generate(shape_of(x), function(...)
    local ix = { ... }
    local k, inside = ix[r], exp.le(ix[r], exp.idiv(sy[r], 2))
    for d = 1, r - 1 do
      inside = exp.land(inside, exp.le(ix[d], sy[d]))
      ix[d] = lacc.min(ix[d], sy[d])
    end
    ix[r] = lacc.max(lacc.min(2 * k - (second and 0 or 1), sy[r]), 1)
    return exp.cond(inside, ybar:at(unpack(ix, 1, r)), zero_exp(x.t))
  end)
end

RULES.interleave = parts_rule("interleave", function(ybar, x, _, second)
  return interleaved(ybar, x, second)
end)

-- acond(c, a, b): the branch taken gets the cotangent, the other zeros; over lists,
-- each result's pair of arrays (its entry's index) so.
local function acond_parts(e)
  local c, a, b = e.args[1], e.args[2], e.args[3]
  if is_list(a) then a, b = a[e.index], b[e.index] end
  return c, accs.to_acc(a, "acond"), accs.to_acc(b, "acond")
end

RULES.acond = {
  rev = function(e, ybar)
    local c, a, b = acond_parts(e)
    local out = {}
    if is_tracked(a) then out[#out + 1] = { a, lacc.acond(c, ybar, zeros_like(a)) } end
    if is_tracked(b) then out[#out + 1] = { b, lacc.acond(c, zeros_like(b), ybar) } end
    return out
  end,
  fwd = function(e, tan)
    local c, a, b = acond_parts(e)
    local ta, tb = tan(a), tan(b)
    if ta == nil and tb == nil then return nil end
    return lacc.acond(c, ta or zeros_like(a), tb or zeros_like(b))
  end,
}

-- sort and sort_by_key: each row's elements moved by the sort's permutation (argsort's,
-- the same stable order), so the cotangent goes back where each element came from.
local function along_perm(x, perm)   -- indices of a row's last dimension through perm
  local r = x.rank
  return function(...)
    local ix = { ... }
    ix[r] = perm:at(...)
    return unpack(ix, 1, r)
  end
end

local function sorted_parts(e)
  if e.name == "sort" then
    local xs = accs.to_acc(e.args[1], "sort")
    return xs, lacc.argsort(xs, e.args[2])
  end
  local keys, values = accs.to_acc(e.args[1], "sort_by_key"), accs.to_acc(e.args[2], "sort_by_key")
  return e.index == 1 and keys or values, lacc.argsort(keys, e.args[3])
end

local sort_rule = {
  rev = function(e, ybar)
    local src, perm = sorted_parts(e)
    if not is_tracked(src) then return {} end
    return { { src, lacc.permute(add_exp, zeros_like(src), along_perm(src, perm), ybar) } }
  end,
  fwd = function(e, tan)
    local src, perm = sorted_parts(e)
    local t = tan(src)
    return t and lacc.backpermute(shape_of(t), along_perm(t, perm), t)
  end,
}
RULES.sort, RULES.sort_by_key = sort_rule, sort_rule

-- ---- filter and scatter: through the positions kept and written

-- filter(p, xs [, opts]): its values' cotangent goes back to the positions kept, in turn
-- (the k-th kept element gets the k-th); the count is an integer. A tangent follows the
-- values through the same filter.
local function filter_parts(e)
  local xs = accs.to_acc(e.args[2], "filter")
  local flat = lacc.flatten(xs)
  local p = exp.predicate(e.args[1], "filter")
  return xs, flat, lacc.map(function(v) return p(v) end, flat)
end

RULES.filter = {
  rev = function(e, ybar)
    local xs, flat, keep = filter_parts(e)
    if e.index ~= 1 or not is_tracked(xs) then return {} end
    local places = lacc.scanl(exp.add, 0, lacc.map(function(k)
      return lacc.cond(k, exp.lift(1, "i64", "vjp"), exp.lift(0, "i64", "vjp"))
    end, keep))
    local back = lacc.generate(shape_of(flat), function(i)
      return exp.cond(keep:at(i), ybar:at(places:at(i) + 1), zero_exp(xs.t))
    end)
    return { { xs, lacc.reshape(shape_of(xs), back) } }
  end,
  fwd = function(e, tan)
    local xs, flat = filter_parts(e)
    local t = e.index == 1 and tan(xs)
    if not t then return nil end
    local p = exp.predicate(e.args[1], "filter")
    return lacc.map(function(v) return v[2] end,
                    (lacc.filter(function(v) return p(v[1]) end, lacc.zip(flat, lacc.flatten(t)))))
  end,
}

-- scatter(xs, idx, defaults): each written element's cotangent is the result's where it
-- went, if it was the last written there (the one the result holds); each default's,
-- where nothing was written. An index is an integer into rank-1 defaults, else a tuple.
local function index_of(idx, R, ...)
  local j = idx:at(...)
  if R == 1 then return { exp.cast(j, "i64") } end
  local r = {}
  for d = 1, R do r[d] = exp.cast(j[d], "i64") end
  return r
end

local function scatter_parts(e)
  local xs, idx = accs.to_acc(e.args[1], "scatter"), accs.to_acc(e.args[2], "scatter")
  local defaults = accs.to_acc(e.args[3], "scatter")
  local R = defaults.rank
  local r, sh = xs.rank, shape_of(xs)
  local pos = lacc.generate(sh, function(...)
    local ix, q = { ... }, exp.lift(0, "i64", "vjp")
    for d = 1, r do q = q * sh[d] + (ix[d] - 1) end
    return q + 1
  end)
  -- the last position written at each place (0: none)
  local last = lacc.compute(lacc.permute(function(a, b) return lacc.max(a, b) end,
    lacc.fill(shape_of(defaults), exp.lift(0, "i64", "vjp")),
    function(...) return unpack(index_of(idx, R, ...), 1, R) end, pos))
  return xs, idx, defaults, pos, last
end

RULES.scatter = {
  rev = function(e, ybar)
    local xs, idx, defaults, pos, last = scatter_parts(e)
    local out = {}
    if is_tracked(xs) then
      local R, sd = defaults.rank, shape_of(defaults)
      out[#out + 1] = { xs, lacc.generate(shape_of(xs), function(...)
        local j, inside, at = index_of(idx, R, ...), nil, {}
        for d = 1, R do
          local ok = exp.land(exp.ge(j[d], 1), exp.le(j[d], sd[d]))
          inside = inside and exp.land(inside, ok) or ok
          at[d] = lacc.min(lacc.max(j[d], 1), sd[d])
        end
        local wins = exp.land(inside, exp.eq(last:at(unpack(at, 1, R)), pos:at(...)))
        return exp.cond(wins, ybar:at(unpack(at, 1, R)), zero_exp(xs.t))
      end) }
    end
    if is_tracked(defaults) then
      out[#out + 1] = { defaults, lacc.generate(shape_of(defaults), function(...)
        return exp.cond(exp.eq(last:at(...), 0), ybar:at(...), zero_exp(defaults.t))
      end) }
    end
    return out
  end,
  fwd = function(e, tan)
    local xs, idx, defaults = scatter_parts(e)
    local tx, td = tan(xs), tan(defaults)
    if tx == nil and td == nil then return nil end
    return lacc.scatter(tx or zeros_like(xs), idx, td or zeros_like(defaults))
  end,
}

-- ---- matmul: two products

local function swap_last(x)
  local s, r = shape_of(x), x.rank
  local sh = {}
  for d = 1, r do sh[d] = s[d] end
  sh[r - 1], sh[r] = s[r], s[r - 1]
  local t = lacc.backpermute(sh, function(...)
    local ix = { ... }
    ix[r - 1], ix[r] = ix[r], ix[r - 1]
    return unpack(ix, 1, r)
  end, x)
  accs.transposed[t] = true
  return t
end

local function outer(u, v)
  return lacc.generate({ shape_of(u)[1], shape_of(v)[1] }, function(i, j)
    return exp.mul(u:at(i), v:at(j))
  end)
end

RULES.matmul = {
  rev = function(e, ybar)
    local a, b = accs.to_acc(e.args[1], "matmul"), accs.to_acc(e.args[2], "matmul")
    local out = {}
    if a.rank == 2 and b.rank == 1 then
      if is_tracked(a) then out[#out + 1] = { a, outer(ybar, b) } end
      if is_tracked(b) then out[#out + 1] = { b, lacc.matmul(swap_last(a), ybar) } end
    elseif a.rank == 1 and b.rank == 2 then
      if is_tracked(a) then out[#out + 1] = { a, lacc.matmul(b, ybar) } end
      if is_tracked(b) then out[#out + 1] = { b, outer(a, ybar) } end
    else
      if is_tracked(a) then out[#out + 1] = { a, lacc.matmul(ybar, swap_last(b)) } end
      if is_tracked(b) then out[#out + 1] = { b, lacc.matmul(swap_last(a), ybar) } end
    end
    return out
  end,
  fwd = function(e, tan)
    local a, b = accs.to_acc(e.args[1], "matmul"), accs.to_acc(e.args[2], "matmul")
    local ta, tb = tan(a), tan(b)
    local r = nil
    if ta then r = lacc.matmul(ta, b) end
    if tb then r = add(r, lacc.matmul(a, tb)) end
    return r
  end,
}

-- ---- running the tape

local function check_entry(e, what)
  if e.reads and not (e.rule and e.rule.sites) then
    fail("%s: the function of %s (at %s) reads an array being differentiated (xs[i], " ..
         "xs:at(...)); derivatives through such reads have no rule here: pass the array " ..
         "to the combinator instead (zipWith, zip)", what, named(e), e.where)
  end
  if e.rule == nil then no_rule(e, what) end
end

-- An argument as a program, tracked: a fresh Acc value per argument, over a node of its
-- own (a host array given twice is two arguments, and f's own reads of the same host
-- array or program, through a closure, are constants: reads are found by node).
local function arguments(what, xs)
  local args, progs = pack(), {}
  args.n = xs.n
  for i = 1, xs.n do
    local x = xs[i]
    if is_acc(x) or array.is_array(x) then
      local p
      if array.is_array(x) then
        p = accs.wrap(core.node_use(array.alive(x, what), util.where()))
      else
        p = lacc.reshape(shape_of(x), x)
      end
      arith.shape_as(p, x)
      progs[i] = p
      args[i] = p
    elseif type(x) == "number" then
      args[i] = x
    else
      fail("%s: argument %d: expected an array or a Lua number, got %s", what, i, util.describe(x))
    end
  end
  return args, progs
end

-- The cotangent given for result y: an array (program or host) or a Lua number.
local function cotangent(what, i, y, c)
  if c == nil then return nil end
  if type(c) == "number" then
    if y.rank == 0 then return lacc.unit(exp.constant(c, y.t)) end
    return lacc.fill(shape_of(y), exp.constant(c, y.t))
  end
  local p = accs.to_acc(c, what)
  if p.t ~= y.t or p.rank ~= y.rank then
    fail("%s: the cotangent of result %d is %s of rank %d, the result %s of rank %d", what, i,
         p.t, p.rank, y.t, y.rank)
  end
  return p
end

-- A joint rule's entries (one per result of its call) run once, on all the results'
-- cotangents, when the walk back reaches the first of them.
local function joint_rev(e, cot, done)
  if done[e.group] then return {} end
  done[e.group] = true
  local ybars, any = {}, false
  for i, y in pairs(e.group) do
    if type(i) == "number" then
      ybars[i] = cot[y]
      any = any or cot[y] ~= nil
    end
  end
  return any and e.rule.rev(e, ybars) or {}
end

-- The pullback of a traced call: cotangents of the results -> of the arguments (progs,
-- the first nargs; nil for one no cotangent reaches where sparse, else zeros).
local function pullback(t, outs, progs, nargs, sparse)
  return function(...)
    local cts = pack(...)
    local cot = {}
    for i = 1, outs.n do
      local y = outs[i]
      if is_acc(y) then cot[y] = add(cot[y], cotangent("pullback", i, y, cts[i])) end
    end
    local saved = tape
    tape = t   -- is_tracked reads the traced call's marks
    local ok, err = pcall(function()
      local done = {}
      for k = #t.entries, 1, -1 do
        local e = t.entries[k]
        local ybar = cot[e.out]
        if ybar ~= nil and is_float_type(e.out.t) then
          check_entry(e, "vjp")
          local r = e.group and e.rule.joint and joint_rev(e, cot, done) or e.rule.rev(e, ybar)
          for _, pr in ipairs(r) do
            if t.tracked[pr[1]] then cot[pr[1]] = add(cot[pr[1]], pr[2]) end
          end
        end
      end
    end)
    tape = saved
    if not ok then error(err, 0) end
    local r = {}
    for i = 1, nargs do
      local p = progs[i]
      if p ~= nil and is_float_type(p.t) then r[i] = cot[p] or not sparse and zeros_like(p) or nil end
    end
    return unpack(r, 1, nargs)
  end
end

-- vjp(f, x1, ..., xn): f's results, then the pullback.
function F.vjp(f, ...)
  local args, progs = arguments("vjp", pack(...))
  local outs, t = trace("vjp", f, args, progs)
  local r = {}
  for i = 1, outs.n do r[i] = outs[i] end
  r[outs.n + 1] = pullback(t, outs, progs, args.n)
  return unpack(r, 1, outs.n + 1)
end

-- The argument positions of grad (1-based; a number or a list), checked against args.
local function positions(what, argnums)
  if argnums == nil then return { 1 } end
  if type(argnums) == "number" then argnums = { argnums } end
  if type(argnums) ~= "table" or #argnums == 0 then
    fail("%s: expected an argument position or a list of them, got %s", what, util.show(argnums))
  end
  for _, k in ipairs(argnums) do
    if not util.is_integer(k) or k < 1 then
      fail("%s: argument positions are integers from 1, got %s", what, util.show(k))
    end
  end
  return argnums
end

local function value_and_grads(what, f, argnums, ...)
  local args, progs = arguments(what, pack(...))
  for _, k in ipairs(argnums) do
    local p = progs[k]
    if k > args.n then fail("%s: argument %d was not given (%d arguments)", what, k, args.n) end
    if p == nil or types.parse(p.t).kind ~= "scalar" or not types.is_float(p.t) then
      fail("%s: argument %d is %s: gradients are taken with respect to arrays of floats " ..
           "(f32, f64)", what, k, p and ("an array of " .. p.t) or util.describe(args[k]))
    end
  end
  local outs, t = trace(what, f, args, progs)
  local y = outs[1]
  if outs.n ~= 1 or not is_acc(y) or y.rank ~= 0 or types.parse(y.t).kind ~= "scalar"
      or not types.is_float(y.t) then
    fail("%s: the function must return one rank-0 array of floats (a scalar: lacc.sum(...)), " ..
         "got %s", what, outs.n ~= 1 and (outs.n .. " results") or
         is_acc(y) and ("an array of " .. y.t .. " of rank " .. y.rank) or util.describe(y))
  end
  local all = pack(pullback(t, outs, progs, args.n)(1))
  local r = {}
  for i, k in ipairs(argnums) do r[i] = all[k] end
  return y, r
end

-- grad(f [, argnums]): the function giving f's gradients with respect to the arguments at
-- argnums (default the first), f returning a rank-0 float array; value_and_grad: the same,
-- f's value first.
local function gradient(what, with_value)
  return function(f, argnums)
    local ks = positions(what, argnums)
    if type(f) ~= "function" then fail("%s: expected a function, got %s", what, type(f)) end
    return function(...)
      local y, r = value_and_grads(what, f, ks, ...)
      if with_value then return y, unpack(r, 1, #ks) end
      return unpack(r, 1, #ks)
    end
  end
end
F.grad, F.value_and_grad = gradient("grad", false), gradient("value_and_grad", true)

local forward

-- jvp(f, xs, dxs): f's results, then their tangents along dxs (one per argument: an array
-- of the argument's shape, a Lua number for every element, or nil for zero).
function F.jvp(f, xs, dxs)
  if type(xs) ~= "table" or is_acc(xs) or array.is_array(xs) then
    fail("jvp: expected the arguments as a list, got %s", util.describe(xs))
  end
  if type(dxs) ~= "table" or is_acc(dxs) or array.is_array(dxs) then
    fail("jvp: expected the tangents as a list, got %s", util.describe(dxs))
  end
  local n = #xs
  local args, progs = arguments("jvp", pack(unpack(xs, 1, n)))
  local outs, t = trace("jvp", f, args, progs)
  local given = {}
  for i = 1, n do
    local p = progs[i]
    if p ~= nil and dxs[i] ~= nil and is_float_type(p.t) then
      given[p] = cotangent("jvp", i, p, dxs[i])
    end
  end
  return forward(t, outs, given)
end

-- The tape walked forwards from the tangents given (array -> tangent): the traced call's
-- results, then their tangents.
function forward(t, outs, given)
  local memo = {}
  local function tan(x)
    if not is_acc(x) then return nil end
    if given[x] ~= nil then return given[x] end
    if memo[x] ~= nil then return memo[x] or nil end
    local e = t.producer[x]
    local r = nil
    if e ~= nil and is_float_type(x.t) then
      check_entry(e, "jvp")
      r = e.rule.fwd(e, tan)
    end
    memo[x] = r or false
    return r
  end
  local saved = tape
  tape = t
  local ok, res = pcall(function()
    local r = {}
    for i = 1, outs.n do
      local y = outs[i]
      r[i] = y
      if is_acc(y) and is_float_type(y.t) then r[outs.n + i] = tan(y) or zeros_like(y) end
    end
    return r
  end)
  tape = saved
  if not ok then error(res, 0) end
  return unpack(res, 1, 2 * outs.n)
end

-- ---- awhile

-- The loop's parts: cond, body, its arrays (programs), whether given as a list, and the
-- arrays the loop ends with (the call's results, by position).
local function loop_of(e)
  local init = e.args[3]
  local list = is_list(init)
  local xs, outs = {}, {}
  for i, x in ipairs(list and init or { init }) do xs[i] = accs.to_acc(x, "awhile") end
  for i = 1, #xs do outs[i] = e.group[i] end
  return e.args[1], e.args[2], xs, list, outs
end

-- The tracked arrays the loop's condition and body read from outside it (its kids past
-- its own arrays), in the order they were marked.
local function loop_reads(node, args)
  local m = is_list(args[3]) and #args[3] or 1
  return reads_of(node, function(n, x) return core.node_depends(n, m, x) end)
end

-- The user's body on the arrays s, as awhile calls it: its arrays, packed.
local function loop_call(f, list, s)
  if not list then return pack(f(s[1])) end
  local r = pack(f(unpack(s, 1, #s)))
  if r.n == 1 and is_list(r[1]) then r = pack(unpack(r[1], 1, #r[1])) end
  return r
end

-- The user's body as a function of the loop's m arrays, giving m arrays.
local function body_of(body, list, m)
  return function(...) return unpack(loop_call(body, list, { ... }), 1, m) end
end

-- The user's condition on the first m of the arrays given.
local function loop_test(cond, list, m, ...)
  if not list then return (cond((...))) end
  return (cond(unpack({ ... }, 1, m)))
end

-- fn traced on a tape of its own (the one running set aside meanwhile), xs its arguments
-- and reads the arrays it reads through closures, both differentiated; then done(t,
-- outs, progs).
local function inner(what, fn, xs, reads, done)
  local saved = tape
  tape = nil
  local ok, r = pcall(function()
    local args, progs = arguments(what, pack(unpack(xs, 1, #xs)))
    local outs, t = trace(what, fn, args, progs, reads)
    return done(t, outs, progs)
  end)
  tape = saved
  if not ok then error(r, 0) end
  return r
end

-- Bytes an element of type t takes in the tape (8 a field for tuples and variants: a
-- bound, not the packed size).
local function element_bytes(t)
  local p = types.parse(t)
  if p.kind ~= "scalar" then return 8 * p.nleaves end
  return t == "bool" and 1 or math.floor(tonumber(t:match("%d+")) / 8)
end

-- A rank-1 i64 array of x's extents.
local function extents(x)
  local sh = shape_of(x)
  return lacc.generate({ #sh }, function(j)
    local v = sh[#sh]
    for d = #sh - 1, 1, -1 do v = lacc.cond(lacc.eq(j, d), sh[d], v) end
    return v
  end)
end

-- The loop run again keeping each turn's arrays before the body: per array a flat tape
-- (the turns one after the other) and its extents (rank of them a turn); the turns
-- counted, the count checked against grad_mb (the tape's bytes) at every turn. Returns
-- the tapes, the extents and the count.
local function taped_loop(e, cond, body, list, xs)
  local m = #xs
  local limit = exp.constant(math.floor(lacc.config().grad_mb * 1048576), "i64")
  local init = {}
  for i = 1, m do
    init[i] = xs[i]
    init[m + i] = lacc.take(0, lacc.flatten(xs[i]))
    init[2 * m + i] = lacc.fill({ 0 }, exp.constant(0, "i64"))
  end
  init[3 * m + 1] = lacc.unit(exp.constant(0, "i64"))
  local r = pack(lacc.awhile(function(...) return loop_test(cond, list, m, ...) end, function(...)
    local a = { ... }
    local s = { unpack(a, 1, m) }
    local ns = loop_call(body, list, s)
    local out, bytes = {}, exp.constant(0, "i64")
    for i = 1, m do
      out[i] = ns[i]
      out[m + i] = lacc.append(a[m + i], lacc.flatten(s[i]))
      out[2 * m + i] = s[i].rank > 0 and lacc.append(a[2 * m + i], extents(s[i])) or a[2 * m + i]
      bytes = bytes + lacc.size(out[m + i]) * element_bytes(s[i].t)
    end
    local k = lacc.the(a[3 * m + 1]) + 1
    out[3 * m + 1] = lacc.unit(exp.wrap(core.node_op("tape_limit", e.where, k.node, bytes.node,
                                                     limit.node)))
    return unpack(out, 1, 3 * m + 1)
  end, init))
  local tapes, shapes = {}, {}
  for i = 1, m do tapes[i], shapes[i] = r[m + i], r[2 * m + i] end
  return tapes, shapes, r[3 * m + 1]
end

-- Turn k's (0-based, an i64 expression) array i from the tape, where its elements end at
-- off (a rank-0 array): the array and where it starts (a rank-0 array).
local function from_tape(x, tp, sh, k, off)
  local ext, size = {}, exp.constant(1, "i64")
  for d = 1, x.rank do
    ext[d] = sh[k * x.rank + d]
    size = size * ext[d]
  end
  local start = lacc.unit(lacc.the(off) - size)
  if x.rank == 0 then return lacc.unit(tp[lacc.the(start) + 1]), start end
  local flat = lacc.generate({ size }, function(j) return tp[lacc.the(start) + j] end)
  return lacc.reshape(ext, flat), start
end

-- awhile's pullback: the loop again with its tape, then a loop back over the turns, last
-- first: each turn's arrays read from the tape, the body's own pullback there (traced on
-- a tape of its own) taking the cotangent one turn back; what the body reads from
-- outside the loop sums its cotangents over the turns.
local function loop_rev(e, ybars)
  local cond, body, xs, list, outs = loop_of(e)
  local m, from = #xs, e.reads or {}
  local fl = {}
  for i = 1, m do if is_float_type(xs[i].t) then fl[#fl + 1] = i end end
  local tapes, shapes, turns = taped_loop(e, cond, body, list, xs)
  local nf, no = #fl, #from
  local K = nf + no + 1
  local init = {}
  for j, i in ipairs(fl) do init[j] = ybars[i] or zeros_like(outs[i]) end
  for j = 1, no do init[nf + j] = zeros_like(from[j]) end
  init[K] = turns
  for i = 1, m do init[K + i] = lacc.unit(lacc.size(tapes[i])) end
  local fn = body_of(body, list, m)
  local res = pack(lacc.awhile(function(...)
    return lacc.gt(lacc.the(select(K, ...)), 0)
  end, function(...)
    local a = { ... }
    local k = lacc.the(a[K]) - 1
    local s, starts = {}, {}
    for i = 1, m do s[i], starts[i] = from_tape(xs[i], tapes[i], shapes[i], k, a[K + i]) end
    local cts = {}
    for j, i in ipairs(fl) do cts[i] = a[j] end
    local g = inner("vjp", fn, s, from, function(t, touts, progs)
      local ps = {}
      for i = 1, m do ps[i] = progs[i] end
      for j = 1, no do ps[m + j] = from[j] end
      return pack(pullback(t, touts, ps, m + no, true)(unpack(cts, 1, m)))
    end)
    local out = {}
    for j, i in ipairs(fl) do out[j] = g[i] or zeros_like(s[i]) end
    for j = 1, no do out[nf + j] = g[m + j] and add(a[nf + j], g[m + j]) or a[nf + j] end
    out[K] = lacc.unit(k)
    for i = 1, m do out[K + i] = starts[i] end
    return unpack(out, 1, K + m)
  end, init))
  local r = {}
  for j, i in ipairs(fl) do
    if is_tracked(xs[i]) then r[#r + 1] = { xs[i], res[j] } end
  end
  for j = 1, no do r[#r + 1] = { from[j], res[nf + j] } end
  return r
end

-- awhile's tangents: one loop carrying each float array's tangent beside it, the body's
-- own jvp (traced on a tape of its own) taking it a turn on; one loop for all results.
local function loop_fwd(e, tan)
  local g = e.group
  if g.tangents == nil then
    local cond, body, xs, list = loop_of(e)
    local m, from = #xs, e.reads or {}
    local fl, any = {}, false
    local init, tfrom = {}, {}
    for i = 1, m do
      init[i] = xs[i]
      if is_float_type(xs[i].t) then
        fl[#fl + 1] = i
        local ti = tan(xs[i])
        any = any or ti ~= nil
        init[m + #fl] = ti or zeros_like(xs[i])
      end
    end
    for j, w in ipairs(from) do
      tfrom[j] = tan(w)
      any = any or tfrom[j] ~= nil
    end
    g.tangents = false
    if any then
      local fn = body_of(body, list, m)
      local r = pack(lacc.awhile(function(...) return loop_test(cond, list, m, ...) end, function(...)
        local a = { ... }
        local s = { unpack(a, 1, m) }
        return unpack(inner("jvp", fn, s, from, function(t, touts, progs)
          local given = {}
          for j, i in ipairs(fl) do given[progs[i]] = a[m + j] end
          for j = 1, #from do given[from[j]] = tfrom[j] end
          local y = pack(forward(t, touts, given))
          local out = {}
          for i = 1, m do out[i] = y[i] end
          for j, i in ipairs(fl) do out[m + j] = y[m + i] end
          return out
        end), 1, m + #fl)
      end, init))
      g.tangents = {}
      for j, i in ipairs(fl) do g.tangents[i] = r[m + j] end
    end
  end
  return g.tangents and g.tangents[e.index] or nil
end

RULES.awhile = { rev = loop_rev, fwd = loop_fwd, joint = true, sites = true, reads = loop_reads }

M.install = util.installer(F, function(l) lacc = l end)

return M
