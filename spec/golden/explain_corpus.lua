-- The programs of the explain golden texts (spec/golden/explain_golden_spec.lua): at least
-- one of every combinator and feature. Owns: the programs and their names. Must not: run
-- anything but what a "captured" entry runs (on the interpreter), or share host arrays
-- between entries (a host array's `use` node is made once, at its first use).
-- The places the texts print ("(at spec/golden/explain_corpus.lua:LINE)") are lines of
-- this file: tools/explain_golden.lua loads it under that name from any checkout, so
-- moving a line here means regenerating the stored texts (see the spec's header).
-- Each entry is { name, function(lacc) -> program (or a table of them) [, options] }; an
-- entry returning nothing is "captured": the programs it runs or compiles are explained
-- (named name_1, name_2, ...). An entry returns `(lacc.f(...))`, never the tail call
-- `lacc.f(...)`: a tail call leaves no frame of this file for the place of its node
-- (tools/explain_golden.lua refuses a place outside this file and the examples).
return function(lacc)
  local E = {}
  local function entry(name, f) E[#E + 1] = { name, f } end
  local function add(a, b) return a + b end
  local function mul(a, b) return a * b end
  local function f32s(n) local t = {} for i = 1, n do t[i] = i * 0.5 - 3 end return lacc.fromtable(t, "f32") end
  local function i32s(n)
    local t = {}
    for i = 1, n do t[i] = (i * 7) % 11 - 4 end
    return lacc.fromtable(t, "i32")
  end
  local function f64s2(r, c)
    local t = {}
    for i = 1, r do t[i] = {} for j = 1, c do t[i][j] = i * 10 + j end end
    return lacc.fromtable(t, "f64")
  end

  -- element-wise
  entry("map_f32", function() return (lacc.map(function(x) return x * 2 + 1 end, f32s(9))) end)
  entry("map_bits_i64_rank3", function()
    local xs = lacc.generate({ 2, 3, 4 }, function(i, j, k) return lacc.cast(i * 100 + j * 10 + k, "i64") end)
    return (lacc.map(function(x) return lacc.bxor(lacc.shl(lacc.band(x, 255), 3), lacc.shr(x, 2)) end, xs))
  end)
  entry("imap_rank2", function()
    return (lacc.imap(function(i, j, x) return x * lacc.cast(i + j, "f64") end, f64s2(3, 4)))
  end)
  entry("zipWith_shapes_intersect", function()
    return (lacc.zipWith(function(a, b) return lacc.max(a, b) - lacc.min(a, b) end, f64s2(3, 4), f64s2(2, 5)))
  end)
  entry("zipWith3_casts", function()
    return (lacc.zipWith3(function(a, b, c) return lacc.cast(a, "f64") * b + lacc.cast(c, "f64") end,
      i32s(6), lacc.fromtable({ 1, 2, 3, 4, 5, 6, 7 }, "f64"), lacc.fromtable({ 1, 2, 3, 4, 5 }, "u8")))
  end)
  entry("zip_unzip_tuples", function()
    local z = lacc.zip(i32s(5), f32s(5))
    local t = lacc.map(function(p) return lacc.tuple(p[2] * 2, p[1] + 1, lacc.gt(p[1], 0)) end, z)
    local a, b, c = lacc.unzip(t)
    return { a, b, c }
  end)
  entry("generate_fill_unit", function()
    local g = lacc.generate({ 4, 5 }, function(i, j)
      return lacc.cond(lacc.lt(i, j), i * j, lacc.imod(i + j, 3))
    end)
    return { g, lacc.fill({ 3, 2 }, lacc.constant(7, "u16")), lacc.unit(lacc.constant(2.5, "f64")) }
  end)
  entry("scalar_math_f64", function()
    return (lacc.map(function(x)
      return lacc.sqrt(lacc.abs(x)) + lacc.exp(x / 10) + lacc.log(x * x + 1) + lacc.sin(x) * lacc.cos(x)
        + lacc.atan2(x, 2) + lacc.pow(2, x / 8) + lacc.floor(x) + lacc.ceil(x) + lacc.round(x)
        + lacc.truncate(x)
        + lacc.cond(lacc.isnan(x), 0, lacc.signum(x))
    end, f64s2(2, 3)))
  end)
  entry("scalar_integer_ops", function()
    return (lacc.map(function(x)
      return lacc.idiv(x, 3) + lacc.imod(x, 5) + lacc.quot(x, 2) + lacc.rem(x, 4) + lacc.bnot(x)
    end, i32s(8)))
  end)
  entry("scalar_iterate_while", function()
    return (lacc.map(function(x)
      local y = lacc.iterate(4, function(v) return v * 3 + 1 end, x)
      return lacc.while_(function(v) return lacc.gt(v, 10) end, function(v) return lacc.idiv(v, 2) end, y)
    end, i32s(7)))
  end)
  entry("bool_logic", function()
    local bs = lacc.fromtable({ true, false, true, true }, "bool")
    return (lacc.map(function(b) return lacc.lor(lacc.land(b, lacc.lnot(b)), lacc.ne(b, false)) end, bs))
  end)
  entry("index_the_capture", function()
    local xs, s = f32s(6), lacc.sum(f32s(3))
    return (lacc.generate({ 4 }, function(i) return xs[i + 1] + xs:at(lacc.size(xs)) + lacc.the(s) end))
  end)

  -- reductions
  entry("fold_rows_f64", function() return (lacc.fold(add, 0, f64s2(3, 4))) end)
  entry("fold1_maximum", function() return (lacc.fold1(function(a, b) return lacc.max(a, b) end, f32s(11))) end)
  entry("sum_product_max_min", function()
    local xs = i32s(9)
    return { lacc.sum(xs), lacc.product(xs), lacc.maximum(xs), lacc.minimum(xs) }
  end)
  entry("dotp_fused", function() return (lacc.fold(add, 0, lacc.zipWith(mul, f32s(100), f32s(100)))) end)
  entry("all_any_and_or", function()
    local xs = i32s(6)
    local bs = lacc.fromtable({ true, false, true }, "bool")
    return { lacc.all(function(x) return lacc.gt(x, -5) end, xs),
             lacc.any(function(x) return lacc.eq(x, 3) end, xs),
             lacc.and_(bs), lacc.or_(bs) }
  end)
  entry("fold_tuples", function()
    local z = lacc.zip(f32s(8), i32s(8))
    return (lacc.fold(function(a, b) return lacc.tuple(a[1] + b[1], lacc.max(a[2], b[2])) end,
      lacc.tuple(lacc.constant(0, "f32"), lacc.constant(-100, "i32")), z))
  end)

  -- scans
  entry("scanl_scanr", function()
    local xs = i32s(10)
    return { lacc.scanl(add, 0, xs), lacc.scanr(mul, 1, xs) }
  end)
  entry("scanl1_scanr1_rank2", function()
    local m = f64s2(3, 5)
    return { lacc.scanl1(add, m), lacc.scanr1(function(a, b) return lacc.max(a, b) end, m) }
  end)
  entry("scanl_split_scanr_split", function()
    local xs = f32s(12)
    local v, t = lacc.scanl_(add, 0, xs)
    local w, u = lacc.scanr_(add, 0, xs)
    return { v, t, w, u }
  end)

  -- segments and filter
  entry("fold_segments", function()
    local xs, segs = i32s(10), lacc.fromtable({ 3, 0, 4, 3 }, "i32")
    return { lacc.foldSeg(add, 0, xs, segs), lacc.fold1Seg(function(a, b) return lacc.max(a, b) end, xs, segs) }
  end)
  entry("scan_segments", function()
    local xs, segs = f32s(9), lacc.fromtable({ 2, 3, 4 }, "i64")
    return { lacc.scanlSeg(add, 0, xs, segs), lacc.scanl1Seg(add, xs, segs),
             lacc.scanrSeg(add, 1, xs, segs), lacc.scanr1Seg(mul, xs, segs) }
  end)
  entry("filter_count", function()
    local vals, count = lacc.filter(function(x) return lacc.gt(x, 0) end, i32s(12))
    return { vals, count }
  end)

  -- permutations and shapes
  entry("permute_histogram", function()
    local xs = lacc.fromtable({ 3, 1, 4, 1, 5, 9, 2, 6 }, "i32")
    local ones = lacc.map(function() return lacc.constant(1, "i32") end, xs)
    return (lacc.permute(add, lacc.fill({ 10 }, lacc.constant(0, "i32")),
      function(i) return xs[i] + 1 end, ones))
  end)
  entry("permute_ignore_f64", function()
    local xs = f64s2(1, 6)
    return (lacc.permute(add, lacc.fill({ 1, 3 }, lacc.constant(0, "f64")), function(i, j)
      return lacc.cond(lacc.eq(lacc.imod(j, 2), 0), lacc.ignore, i), lacc.idiv(j + 1, 2)
    end, xs))
  end)
  entry("backpermute_gather", function()
    local m = f64s2(4, 3)
    return (lacc.backpermute({ 3, 4 }, function(i, j) return j, i end, m))
  end)
  entry("shape_changes", function()
    local m = f64s2(3, 4)
    return { lacc.transpose(m), lacc.reverse(m), lacc.rotate(1, m), lacc.reshape({ 2, 6 }, m), lacc.flatten(m),
             lacc.replicate({ 2, lacc.all, lacc.all }, m), lacc.slice(m, { 2, lacc.all }) }
  end)
  entry("compute_materialises", function()
    local ys = lacc.compute(lacc.map(function(x) return x * x end, f32s(5)))
    return (lacc.zipWith(add, ys, lacc.reverse(ys)))
  end)

  -- stencils
  entry("stencil_clamp_3x3", function()
    return (lacc.stencil(function(a, b, c, d, e, f, g, h, i) return (a + b + c + d + e + f + g + h + i) / 9 end,
      "clamp", f64s2(4, 5)))
  end)
  entry("stencil_boundaries_rank1", function()
    local xs = i32s(11)
    local function w5(a, b, c, d, e) return a + 2 * b + 3 * c + 4 * d + 5 * e end
    return { lacc.stencil(w5, "mirror", xs, { 5 }), lacc.stencil(w5, "wrap", xs, { 5 }),
             lacc.stencil(function(a, b, c) return a - c + b end, lacc.constant(-7, "i32"), xs) }
  end)
  entry("stencil_rank3_producer", function()
    local xs = lacc.generate({ 3, 3, 4 }, function(i, j, k) return lacc.cast(i + j * k, "f32") end)
    return (lacc.stencil(function(...)
      local s = 0
      for _, v in ipairs { ... } do s = s + v end
      return s
    end, "clamp", lacc.map(function(v) return v * 2 end, xs)))
  end)
  entry("stencil2_two_arrays", function()
    return (lacc.stencil2(function(l, c, r, l2, c2, r2) return c * 1000 + l + r + l2 + r2 + c2 end,
      "clamp", lacc.fromtable({ 1, 2, 3, 4 }, "f64"), lacc.constant(0, "f64"),
      lacc.fromtable({ 10, 20, 30 }, "f64")))
  end)

  -- push arrays
  entry("append_interleave_concat", function()
    local a, b, c = i32s(4), i32s(3), i32s(5)
    return { lacc.append(a, b), lacc.interleave(a, c), lacc.concat { a, b, c } }
  end)
  entry("push_consumed_reversed_rotated", function()
    local a, b = f32s(5), f32s(4)
    local ab = a .. b
    return { lacc.map(function(x) return x + 1 end, ab), lacc.reverse(ab),
             lacc.rotate(2, lacc.interleave(a, b)), lacc.sum(ab) }
  end)

  -- control
  entry("acond_simple", function()
    local x = i32s(6)
    return (lacc.acond(lacc.gt(lacc.the(lacc.sum(x)), 3), lacc.map(function(v) return v * 10 end, x),
      lacc.reverse(x)))
  end)
  entry("acond_nested_bool_array", function()
    local m, s = f64s2(2, 3), lacc.sum(f64s2(1, 2))
    local inner = lacc.acond(lacc.eq(lacc.the(s), 10), lacc.map(function(v) return v * 3 end, m), m)
    return (lacc.acond(lacc.unit(lacc.gt(lacc.the(s), 0)), inner, lacc.reverse(m)))
  end)
  entry("awhile_doubling", function()
    return (lacc.awhile(function(a) return lacc.lt(lacc.the(lacc.sum(a)), 1000) end,
      function(a) return lacc.map(function(v) return v * 2 end, a) end, i32s(5)))
  end)
  entry("awhile_shape_changes_reads_outside", function()
    local xs, limit = lacc.fromtable({ 3, 1, 4, 1, 5, 9, 2 }, "i64"), lacc.fromtable({ 2 }, "i64")
    local scale = lacc.map(function(v) return v + 1 end, limit)
    return (lacc.awhile(function(a) return lacc.gt(lacc.size(a), scale[1]) end, function(a)
      local n = lacc.idiv(lacc.size(a) + 1, 2)
      return lacc.generate({ n }, function(i)
        return a[2 * i - 1] + lacc.cond(lacc.le(2 * i, lacc.size(a)), a:at(lacc.min(2 * i, lacc.size(a))), 0)
      end)
    end, xs))
  end)
  entry("awhile_nested", function()
    local xs = i32s(3)
    return (lacc.awhile(function(a) return lacc.lt(a[1], 40) end, function(a)
      local inner = lacc.awhile(function(c) return lacc.lt(c[1], a[1] * 3) end,
        function(c) return lacc.map(function(v) return v + a[1] end, c) end, a)
      return lacc.map(function(v) return v + 1 end, inner)
    end, lacc.map(function(v) return lacc.abs(v) + 1 end, xs)))
  end)
  entry("awhile_in_acond_shared", function()
    local xs = i32s(4)
    local m = lacc.map(function(v) return v * 2 end, xs)
    local loop = lacc.awhile(function(a) return lacc.lt(lacc.the(lacc.maximum(a)), 100) end,
      function(a) return lacc.zipWith(add, a, m) end, m)
    return { lacc.acond(lacc.gt(lacc.the(lacc.sum(m)), 0), loop, lacc.reverse(m)), lacc.sum(m) }
  end)

  -- sums and match
  local GShape = lacc.data("GoldenShape", { { "Circle", "f32" }, { "Rect", "f32", "f32" }, { "Empty" } })
  local function shapes()
    return lacc.fromtable({ { tag = "Circle", 1.5 }, { tag = "Rect", 2, 3 }, { tag = "Empty" },
                            { tag = "Rect", 0.5, 4 } }, GShape)
  end
  local function area(s)
    return lacc.match(s, { Circle = function(r) return r * r * 3 end, Rect = function(w, h) return w * h end,
                           _ = function() return 0 end })
  end
  entry("sum_match_area", function() return (lacc.map(area, shapes())) end)
  entry("sum_construct", function()
    return (lacc.map(function(x)
      return lacc.cond(lacc.lt(x, 0), GShape.Empty(),
        lacc.cond(lacc.eq(x, 0), GShape.Circle(1), GShape.Rect(x, x * 2)))
    end, f32s(7)))
  end)
  entry("maybe_first_just", function()
    local found = lacc.imap(function(i, x)
      return lacc.cond(lacc.eq(lacc.imod(x, 3), 1), lacc.Just(i), lacc.Nothing("i64"))
    end, lacc.fromtable({ 4, 9, 7, 2, 10 }, "i64"))
    return (lacc.fold(function(a, b)
      return lacc.match(a, { Just = function() return a end, Nothing = function() return b end })
    end, lacc.Nothing("i64"), found))
  end)
  entry("either_nested_variant", function()
    local T = lacc.Either(lacc.Maybe("f64"), lacc.Maybe("f64"))
    local e = lacc.fromtable({ { tag = "Left", { tag = "Just", 1.5 } }, { tag = "Right", { tag = "Nothing" } } },
      T)
    local V = lacc.variant { "f32", lacc.tuple("i32", "i32") }
    local v = lacc.fromtable({ { tag = 1, 2.5 }, { tag = 2, { 3, 4 } } }, V)
    return { lacc.map(function(x)
      return lacc.match(x, {
        Left = function(m)
          return lacc.match(m, { Just = function(y) return y + 100 end, Nothing = function() return 1 end })
        end,
        Right = function(m)
          return lacc.match(m, { Just = function(y) return y * 10 end, _ = function() return 2 end })
        end,
      })
    end, e), lacc.map(function(x)
      return lacc.tuple(x, lacc.match(x, { function(f) return f end,
                                           function(p) return lacc.cast(p[1] * p[2], "f32") end }))
    end, v) }
  end)
  -- layouts: fields of mixed widths, which compact orders widest first and rtu does not
  local Mixed = lacc.data("GoldenMixed",
    { { "Dot", "u8" }, { "Pair", "u8", "f64" }, { "Swap", "f64", "u8" }, { "None" } })
  for _, layout in ipairs { "unboxed", "rtu", "compact", "compact_radix" } do
    entry("sum_layout_" .. layout, function()
      local ms = lacc.fromtable({ { tag = "Dot", 3 }, { tag = "Pair", 1, 2.5 }, { tag = "Swap", 0.5, 7 },
                                  { tag = "None" } }, Mixed)
      local swapped = lacc.map(function(s)
        return lacc.match(s, { Pair = function(a, x) return Mixed.Swap(x, a) end,
                               Swap = function(x, a) return Mixed.Pair(a, x) end, _ = function() return s end })
      end, ms)
      local weights = lacc.map(function(s)
        return lacc.match(s, { Dot = function(a) return lacc.cast(a, "f64") end,
                               Pair = function(a, x) return x + lacc.cast(a, "f64") end,
                               Swap = function(x, a) return x - lacc.cast(a, "f64") end,
                               None = function() return lacc.constant(0, "f64") end })
      end, swapped)
      return { swapped, lacc.sum(weights) }, { layout = layout }
    end)
  end
  entry("collection_split_joined", function()
    local coll = lacc.partition(shapes())
    return { lacc.merge(lacc.map(area, coll, { strategy = "split" })),
             lacc.merge(lacc.map(area, coll, { strategy = "joined" })) }
  end)

  -- sharing and fusion, and the switches that turn them off (the maps of zs fuse into
  -- their consumers)
  local function shared()
    local ys = lacc.map(function(x) return x * 2 end, f32s(6))
    local zs = lacc.zipWith(add, ys, ys)
    return { lacc.zipWith(mul, lacc.map(function(z) return z - 1 end, zs), ys),
             lacc.sum(lacc.map(function(z) return z * z end, zs)) }
  end
  entry("sharing_lets", function() return shared() end)
  entry("sharing_off", function() return shared(), { sharing = false } end)
  entry("fusion_off", function() return shared(), { fusion = false } end)
  entry("fusion_and_sharing_off", function() return shared(), { fusion = false, sharing = false } end)

  -- compiled functions with parameters (captured: traced, compiled and run on the interpreter)
  entry("compiled_saxpy", function()
    local a = 2.5
    local saxpy = lacc.compile(function(xs, ys)
      return lacc.zipWith(function(u, v) return a * u + v end, xs, ys)
    end, { backend = "interp" })
    saxpy(f32s(5), f32s(5))
    saxpy(f32s(7), f32s(3))   -- the same kind of arguments: no new program
    saxpy(f64s2(2, 2), f64s2(2, 2))   -- another kind: a second program
  end)
  entry("compiled_params_and_captures", function()
    local k = lacc.fromtable({ 10 }, "i32")
    local step = lacc.compile(function(xs, segs)
      local s = lacc.foldSeg(add, 0, lacc.map(function(v) return v * k[1] end, xs), segs)
      return { s, lacc.scanl(add, 0, xs), lacc.reverse(s) }
    end, { backend = "interp", fusion = false })
    step(i32s(6), lacc.fromtable({ 2, 4 }, "i32"))
  end)
  entry("compiled_awhile", function()
    local loop = lacc.compile(function(xs)
      return lacc.awhile(function(a) return lacc.lt(lacc.the(lacc.maximum(a)), 50) end,
        function(a) return lacc.map(function(v) return v * 3 end, a) end, xs)
    end, { backend = "interp" })
    loop(lacc.fromtable({ 1, 2, 3 }, "i64"))
  end)
  return E
end
