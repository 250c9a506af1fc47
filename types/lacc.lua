---@meta
-- LuaLS definitions of lacc's Lua surface (docs/guide.md is the contract): completion and
-- type hints in editors. Install with the rock, or point the language server's
-- workspace.library at this folder. spec/surface/types_spec.lua checks that every name of
-- the module is here and every name here is the module's.

---@alias lacc.ScalarType "bool"|"i8"|"i16"|"i32"|"i64"|"u8"|"u16"|"u32"|"u64"|"f32"|"f64"
---@alias lacc.Type lacc.ScalarType|string|lacc.Data  a scalar type, a tuple "(f32,i64)", a sum
---@alias lacc.Shape integer[]|lacc.Exp[]
---@alias lacc.Value number|boolean|lacc.Exp
---@alias lacc.ArrayLike lacc.Array|lacc.Program

---A host array: elements in C memory, struct-of-arrays by field.
---@class lacc.Array
---@field [integer] any  a[i] of a rank-1 array (a[#a + 1] is nil)
local Array = {}
---@param ... integer|any  1-based indices, then (for set) the value
function Array:get(...) end
function Array:set(...) end
---An element's fields as values (nested tuples' fields in order), no table made
---@param ... integer  1-based indices
---@return any ...
function Array:fields(...) end
---@param ... any  1-based indices, then one value per field
function Array:set_fields(...) end
---@param lin integer 0-based linear index
function Array:at_linear(lin) end
---@return table
function Array:totable() end
---@return fun(a: lacc.Array, i: integer): integer, any
function Array:values() end
---@return string
function Array:tobytes() end
---@return ffi.cdata*  LuaJIT only: a typed pointer into the elements
function Array:ptr() end
---@param path string  a NumPy .npy file
function Array:save(path) end
---@return integer[]
function Array:shape() end
---@return integer
function Array:size() end
---@return string
function Array:type() end
---@return string
function Array:layout() end
function Array:free() end
---@param path string
function Array:write_png(path) end

---An array program: built by the combinators, run by lacc.run.
---@class lacc.Program
local Program = {}

---A scalar expression inside a function given to a combinator.
---@class lacc.Exp
---@operator add(lacc.Value): lacc.Exp
---@operator sub(lacc.Value): lacc.Exp
---@operator mul(lacc.Value): lacc.Exp
---@operator div(lacc.Value): lacc.Exp
---@operator mod(lacc.Value): lacc.Exp
---@operator pow(lacc.Value): lacc.Exp
---@operator unm: lacc.Exp
local Exp = {}

---A variant-wise collection of a sum type's elements (lacc.partition).
---@class lacc.Collection
local Collection = {}

---A function made by lacc.compile: host arrays and Lua numbers or booleans in, arrays out.
---@alias lacc.Compiled fun(...: lacc.Array|number|boolean): lacc.Array, ...

---A sum type made by lacc.data.
---@class lacc.Data

---@class lacc.RunOptions
---@field backend? "cpu"|"interp"|"opencl"
---@field device? integer|string
---@field layout? string
---@field progress? fun(fraction: number)
---@field progress_after? number
---@field fusion? boolean
---@field sharing? boolean
---@field source? boolean|"opencl"
---@field args? table<integer, lacc.ScalarType>  compile: types of scalar arguments

---@class lacc.Config
---@field threads? integer
---@field cache? string
---@field cache_mb? number
---@field cc? string
---@field cflags? string
---@field verbose? boolean
---@field backend? string
---@field device? string
---@field tier? "auto"|"fast"|"opt"
---@field contract? boolean  a * b + c may be one fused multiply-add in optimised kernels

---@class lacc
---@field _VERSION string
---@field version {major: integer, minor: integer, patch: integer}
---@field binding string
---@field limits table<string, integer>
---@field ignore lacc.Exp  permute's "drop this element"
---@field all any  slice/replicate's whole dimension; also lacc.all(p, xs)
---@field random lacc.RandomModule  counter-based random numbers
---@field mpi lacc.MpiModule  arrays distributed over MPI ranks

---@field bool "bool"
---@field i8 "i8"
---@field i16 "i16"
---@field i32 "i32"
---@field i64 "i64"
---@field u8 "u8"
---@field u16 "u16"
---@field u32 "u32"
---@field u64 "u64"
---@field f32 "f32"
---@field f64 "f64"
local lacc = {}

---abs of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.abs(x) end

---signum of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.signum(x) end

---sqrt of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.sqrt(x) end

---exp of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.exp(x) end

---log of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.log(x) end

---sin of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.sin(x) end

---cos of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.cos(x) end

---tan of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.tan(x) end

---asin of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.asin(x) end

---acos of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.acos(x) end

---atan of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.atan(x) end

---floor of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.floor(x) end

---ceil of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.ceil(x) end

---round of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.round(x) end

---round_even of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.round_even(x) end

---truncate of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.truncate(x) end

---sinh of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.sinh(x) end

---cosh of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.cosh(x) end

---tanh of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.tanh(x) end

---asinh of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.asinh(x) end

---acosh of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.acosh(x) end

---atanh of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.atanh(x) end

---log2 of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.log2(x) end

---log10 of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.log10(x) end

---log1p of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.log1p(x) end

---expm1 of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.expm1(x) end

---2^x of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.exp2(x) end

---cbrt of a float expression (or a Lua number)
---@param x lacc.Value
---@return lacc.Exp|number
function lacc.cbrt(x) end

---isnan: a bool expression
---@param x lacc.Value
---@return lacc.Exp|boolean
function lacc.isnan(x) end

---isinf: a bool expression
---@param x lacc.Value
---@return lacc.Exp|boolean
function lacc.isinf(x) end

---isfinite: a bool expression
---@param x lacc.Value
---@return lacc.Exp|boolean
function lacc.isfinite(x) end

---min of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.min(a, b) end

---max of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.max(a, b) end

---atan2 of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.atan2(a, b) end

---hypot of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.hypot(a, b) end

---pow of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.pow(a, b) end

---idiv of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.idiv(a, b) end

---imod of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.imod(a, b) end

---quot of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.quot(a, b) end

---rem of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.rem(a, b) end

---band of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.band(a, b) end

---bor of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.bor(a, b) end

---bxor of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.bxor(a, b) end

---shl of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.shl(a, b) end

---shr of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.shr(a, b) end

---ipow of two expressions of one type
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp|number
function lacc.ipow(a, b) end

---eq: a bool expression (Lua's == and < give Lua booleans)
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp
function lacc.eq(a, b) end

---ne: a bool expression (Lua's == and < give Lua booleans)
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp
function lacc.ne(a, b) end

---lt: a bool expression (Lua's == and < give Lua booleans)
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp
function lacc.lt(a, b) end

---le: a bool expression (Lua's == and < give Lua booleans)
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp
function lacc.le(a, b) end

---gt: a bool expression (Lua's == and < give Lua booleans)
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp
function lacc.gt(a, b) end

---ge: a bool expression (Lua's == and < give Lua booleans)
---@param a lacc.Value
---@param b lacc.Value
---@return lacc.Exp
function lacc.ge(a, b) end

---short-circuit and of bool expressions
---@param a lacc.Exp
---@param b lacc.Exp
---@return lacc.Exp
function lacc.land(a, b) end

---short-circuit or of bool expressions
---@param a lacc.Exp
---@param b lacc.Exp
---@return lacc.Exp
function lacc.lor(a, b) end

---not of a bool expression
---@param a lacc.Exp
---@return lacc.Exp
function lacc.lnot(a) end

---bitwise not of an integer expression
---@param x lacc.Value
---@return lacc.Exp
function lacc.bnot(x) end

---a * b + c rounded once
---@param a lacc.Value
---@param b lacc.Value
---@param c lacc.Value
---@return lacc.Exp|number
function lacc.fma(a, b, c) end

---convert (floats to integers truncate and saturate)
---@param x lacc.Value
---@param t lacc.ScalarType
---@return lacc.Exp
function lacc.cast(x, t) end

---the same bits as another type of one width
---@param x lacc.Exp
---@param t lacc.ScalarType
---@return lacc.Exp
function lacc.bitcast(x, t) end

---a typed constant
---@param v number|boolean
---@param t? lacc.ScalarType
---@return lacc.Exp
function lacc.constant(v, t) end

---c ? t : e (c a bool expression)
---@param c lacc.Exp
---@param t lacc.Value
---@param e lacc.Value
---@return lacc.Exp
function lacc.cond(c, t, e) end

---pattern match on a sum value
---@param v lacc.Exp
---@param cases table<string|integer|boolean, function>
---@return lacc.Exp
function lacc.match(v, cases) end

---f applied n times
---@param n integer|lacc.Exp
---@param f fun(x: lacc.Exp): lacc.Exp
---@param x lacc.Value
---@return lacc.Exp
function lacc.iterate(n, f, x) end

---f applied while c holds
---@param c fun(x: lacc.Exp): lacc.Exp
---@param f fun(x: lacc.Exp): lacc.Exp
---@param x lacc.Value
---@return lacc.Exp
function lacc.while_(c, f, x) end

---a tuple value of expressions, or a tuple type of types
---@param ... any
---@return lacc.Exp|string
function lacc.tuple(...) end

---a named sum type
---@param name string
---@param constructors table
---@return lacc.Data
function lacc.data(name, constructors) end

---a structural sum type
---@param types table
---@return string
function lacc.variant(types) end

---Maybe t
---@param t lacc.Type
---@return string
function lacc.Maybe(t) end

---Either a b
---@param a lacc.Type
---@param b lacc.Type
---@return string
function lacc.Either(a, b) end

---Just x
---@param x lacc.Value
---@return lacc.Exp
function lacc.Just(x) end

---Nothing of Maybe t
---@param t lacc.Type
---@return lacc.Exp
function lacc.Nothing(t) end

---Left x
---@param x lacc.Value
---@param b lacc.Type
---@return lacc.Exp
function lacc.Left(x, b) end

---Right y
---@param a lacc.Type
---@param y lacc.Value
---@return lacc.Exp
function lacc.Right(a, y) end

---the storage layout of a type, as text
---@param t lacc.Type
---@param strategy? string
---@return string
function lacc.layout(t, strategy) end

---the layout of arrays made from now on
---@param strategy string
function lacc.set_layout(strategy) end

---a new host array
---@param t lacc.Type
---@param shape integer[]
---@param fill? any
---@return lacc.Array
function lacc.array(t, shape, fill) end

---a host array from nested tables
---@param t table|number|boolean
---@param type lacc.Type
---@return lacc.Array
function lacc.fromtable(t, type) end

---a host array from packed bytes
---@param s string
---@param t lacc.Type
---@param shape? integer[]
---@return lacc.Array
function lacc.frombytes(s, t, shape) end

---LuaJIT: a copy of packed elements at a pointer
---@param p ffi.cdata*
---@param t lacc.Type
---@param shape integer[]
---@return lacc.Array
function lacc.fromptr(p, t, shape) end

---a NumPy .npy file
---@param path string
---@return lacc.Array
function lacc.load(path) end

---a PNG image as a rank-2 array of its samples
---@param path string
---@return lacc.Array
function lacc.read_png(path) end

---a rank-2 array as a PNG image
---@param path string
---@param a lacc.ArrayLike
function lacc.write_png(path, a) end

---how LuaJIT gives i64/u64 elements
---@param mode "number"|"cdata"
function lacc.set_int64(mode) end

---bytes this state's host arrays hold
---@return integer
function lacc.memory() end

---a host array in a program
---@param a lacc.Array
---@return lacc.Program
function lacc.use(a) end

---a rank-0 array of one value
---@param e lacc.Value
---@return lacc.Program
function lacc.unit(e) end

---f of the 1-based indices
---@param shape lacc.Shape
---@param f fun(...: lacc.Exp): ...
---@return lacc.Program
function lacc.generate(shape, f) end

---every element e
---@param shape lacc.Shape
---@param e lacc.Value
---@return lacc.Program
function lacc.fill(shape, e) end

---1, 2, ..., n (i64 unless a numeric type is given)
---@param n integer|lacc.Exp
---@param t? lacc.ScalarType
---@return lacc.Program
function lacc.iota(n, t) end

---zeros of a shape (f64 unless a numeric type is given)
---@param shape integer|integer[]
---@param t? lacc.ScalarType
---@return lacc.Program
function lacc.zeros(shape, t) end

---ones of a shape (f64 unless a numeric type is given)
---@param shape integer|integer[]
---@param t? lacc.ScalarType
---@return lacc.Program
function lacc.ones(shape, t) end

---v in every element (f64, or bool for a boolean, unless a type is given)
---@param shape integer|integer[]
---@param v number|boolean
---@param t? lacc.ScalarType
---@return lacc.Program
function lacc.full(shape, v, t) end

---start, start + step, ... before stop (0-based; i64 for whole numbers, else f64)
---@param ... number|lacc.ScalarType  stop | start, stop [, step], then an optional type
---@return lacc.Program
function lacc.arange(...) end

---n values from start to stop, both included (f64 unless f32 is given)
---@param start number
---@param stop number
---@param n integer
---@param t? lacc.ScalarType
---@return lacc.Program
function lacc.linspace(start, stop, n, t) end

---ones on the diagonal of an n x m matrix (f64 unless a type is given)
---@param n integer
---@param m? integer|lacc.ScalarType
---@param t? lacc.ScalarType
---@return lacc.Program
function lacc.eye(n, m, t) end

---f of each element
---@param f fun(x: lacc.Exp): ...
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.map(f, xs) end

---f of the indices, then the element
---@param f fun(...: lacc.Exp): ...
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.imap(f, xs) end

---f of the elements at each index
---@param f function
---@param ... lacc.ArrayLike
---@return lacc.Program
function lacc.zipWith(f, ...) end

---zipWith of 3 arrays
---@param f function
---@param ... lacc.ArrayLike
---@return lacc.Program
function lacc.zipWith3(f, ...) end

---zipWith of 4 arrays
---@param f function
---@param ... lacc.ArrayLike
---@return lacc.Program
function lacc.zipWith4(f, ...) end

---zipWith of 5 arrays
---@param f function
---@param ... lacc.ArrayLike
---@return lacc.Program
function lacc.zipWith5(f, ...) end

---zipWith of 6 arrays
---@param f function
---@param ... lacc.ArrayLike
---@return lacc.Program
function lacc.zipWith6(f, ...) end

---zipWith of 7 arrays
---@param f function
---@param ... lacc.ArrayLike
---@return lacc.Program
function lacc.zipWith7(f, ...) end

---zipWith of 8 arrays
---@param f function
---@param ... lacc.ArrayLike
---@return lacc.Program
function lacc.zipWith8(f, ...) end

---zipWith of 9 arrays
---@param f function
---@param ... lacc.ArrayLike
---@return lacc.Program
function lacc.zipWith9(f, ...) end

---arrays of tuples
---@param ... lacc.ArrayLike
---@return lacc.Program
function lacc.zip(...) end

---tuples to arrays
---@param xs lacc.ArrayLike
---@return lacc.Program ...
function lacc.unzip(xs) end

---@class lacc.DimOptions
---@field dim? integer  the dimension reduced or scanned (1 = outermost; default the innermost)

---along the innermost dimension, or opts.dim
---@param f function
---@param z lacc.Value
---@param xs lacc.ArrayLike
---@param opts? lacc.DimOptions
---@return lacc.Program
function lacc.fold(f, z, xs, opts) end

---along the innermost dimension (or opts.dim), no start value
---@param f function
---@param xs lacc.ArrayLike
---@param opts? lacc.DimOptions
---@return lacc.Program
function lacc.fold1(f, xs, opts) end

---sum of the whole array (rank 0), or along dimension d
---@param xs lacc.ArrayLike
---@param d? integer
---@return lacc.Program
function lacc.sum(xs, d) end

---product of the whole array (rank 0), or along dimension d
---@param xs lacc.ArrayLike
---@param d? integer
---@return lacc.Program
function lacc.product(xs, d) end

---maximum of the whole array (rank 0), or along dimension d
---@param xs lacc.ArrayLike
---@param d? integer
---@return lacc.Program
function lacc.maximum(xs, d) end

---minimum of the whole array (rank 0), or along dimension d
---@param xs lacc.ArrayLike
---@param d? integer
---@return lacc.Program
function lacc.minimum(xs, d) end

---1-based position of the largest element (the first on ties; NaN wins):
---linear over the whole array (rank 0), or along dimension d
---@param xs lacc.ArrayLike
---@param d? integer
---@return lacc.Program
function lacc.argmax(xs, d) end

---1-based position of the smallest element (the first on ties; NaN wins)
---@param xs lacc.ArrayLike
---@param d? integer
---@return lacc.Program
function lacc.argmin(xs, d) end

---all of an array of bool, or along dimension d
---@param xs lacc.ArrayLike
---@param d? integer
---@return lacc.Program
function lacc.and_(xs, d) end

---any of an array of bool, or along dimension d
---@param xs lacc.ArrayLike
---@param d? integer
---@return lacc.Program
function lacc.or_(xs, d) end

---whether p holds for some element (or along dimension d)
---@param p fun(x: lacc.Exp): lacc.Exp
---@param xs lacc.ArrayLike
---@param d? integer
---@return lacc.Program
function lacc.any(p, xs, d) end

---a where mask holds, else b (a or b may be a number)
---@param mask lacc.ArrayLike
---@param a lacc.ArrayLike|number
---@param b lacc.ArrayLike|number
---@return lacc.Program
function lacc.where(mask, a, b) end

---the matrix product
---@param a lacc.ArrayLike
---@param b lacc.ArrayLike
---@return lacc.Program
function lacc.matmul(a, b) end

---each segment folded
---@param f function
---@param z lacc.Value
---@param xs lacc.ArrayLike
---@param segs lacc.ArrayLike
---@return lacc.Program
function lacc.foldSeg(f, z, xs, segs) end

---each segment folded, no start value
---@param f function
---@param xs lacc.ArrayLike
---@param segs lacc.ArrayLike
---@return lacc.Program
function lacc.fold1Seg(f, xs, segs) end

---scanl with a start value (one more element per row)
---@param f function
---@param z lacc.Value
---@param xs lacc.ArrayLike
---@param opts? lacc.DimOptions
---@return lacc.Program
function lacc.scanl(f, z, xs, opts) end

---scanr with a start value (one more element per row)
---@param f function
---@param z lacc.Value
---@param xs lacc.ArrayLike
---@param opts? lacc.DimOptions
---@return lacc.Program
function lacc.scanr(f, z, xs, opts) end

---scanl1: inclusive scan
---@param f function
---@param xs lacc.ArrayLike
---@param opts? lacc.DimOptions
---@return lacc.Program
function lacc.scanl1(f, xs, opts) end

---scanr1: inclusive scan
---@param f function
---@param xs lacc.ArrayLike
---@param opts? lacc.DimOptions
---@return lacc.Program
function lacc.scanr1(f, xs, opts) end

---exclusive scan and the rows' totals
---@param f function
---@param z lacc.Value
---@param xs lacc.ArrayLike
---@return lacc.Program, lacc.Program
function lacc.scanl_(f, z, xs) end

---exclusive scan and the rows' totals
---@param f function
---@param z lacc.Value
---@param xs lacc.ArrayLike
---@return lacc.Program, lacc.Program
function lacc.scanr_(f, z, xs) end

---each segment scanned from z
---@param f function
---@param z lacc.Value
---@param xs lacc.ArrayLike
---@param segs lacc.ArrayLike
---@return lacc.Program
function lacc.scanlSeg(f, z, xs, segs) end

---each segment scanned from z
---@param f function
---@param z lacc.Value
---@param xs lacc.ArrayLike
---@param segs lacc.ArrayLike
---@return lacc.Program
function lacc.scanrSeg(f, z, xs, segs) end

---each segment scanned
---@param f function
---@param xs lacc.ArrayLike
---@param segs lacc.ArrayLike
---@return lacc.Program
function lacc.scanl1Seg(f, xs, segs) end

---each segment scanned
---@param f function
---@param xs lacc.ArrayLike
---@param segs lacc.ArrayLike
---@return lacc.Program
function lacc.scanr1Seg(f, xs, segs) end

---each segment's exclusive scan and total
---@param f function
---@param z lacc.Value
---@param xs lacc.ArrayLike
---@param segs lacc.ArrayLike
---@return lacc.Program, lacc.Program
function lacc.scanlSeg_(f, z, xs, segs) end

---each segment's exclusive scan and total
---@param f function
---@param z lacc.Value
---@param xs lacc.ArrayLike
---@param segs lacc.ArrayLike
---@return lacc.Program, lacc.Program
function lacc.scanrSeg_(f, z, xs, segs) end

---the kept elements and their count
---@param p fun(x: lacc.Exp): lacc.Exp
---@param xs lacc.ArrayLike
---@param opts? {per_row: boolean}
---@return lacc.Program, lacc.Program
function lacc.filter(p, xs, opts) end

---a if c holds, else b; with lists of as many arrays, each of them from the branch taken
---@param c lacc.Exp|lacc.ArrayLike|boolean
---@param a lacc.ArrayLike|lacc.ArrayLike[]
---@param b lacc.ArrayLike|lacc.ArrayLike[]
---@return lacc.Program ...
function lacc.acond(c, a, b) end

---body applied while cond holds; with a list of arrays as init, cond and body take them
---as arguments, body returns as many, and awhile returns the arrays the loop ends with
---@param cond fun(...: lacc.Program): lacc.Program|lacc.Exp
---@param body fun(...: lacc.Program): lacc.Program|lacc.Program[]
---@param init lacc.ArrayLike|lacc.ArrayLike[]
---@return lacc.Program ...
function lacc.awhile(cond, body, init) end

---materialised in its own kernel
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.compute(xs) end

---gather
---@param shape lacc.Shape
---@param f fun(...: lacc.Exp): ...
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.backpermute(shape, f, xs) end

---scatter
---@param combine function
---@param defaults lacc.ArrayLike
---@param f fun(...: lacc.Exp): ...
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.permute(combine, defaults, f, xs) end

---same elements, new shape
---@param shape lacc.Shape
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.reshape(shape, xs) end

---rank 1
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.flatten(xs) end

---new dimensions
---@param spec table
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.replicate(spec, xs) end

---per dimension: lacc.all, a fixed index, or a range {from, to [, step]}
---@param xs lacc.ArrayLike
---@param spec table
---@return lacc.Program
function lacc.slice(xs, spec) end

---@class lacc.SortOptions
---@field by? fun(x: lacc.Exp): ...  the key of an element (several values: compared in turn)
---@field descending? boolean

---each row in ascending order, stable (NaN last, -0 before +0)
---@param xs lacc.ArrayLike
---@param opts? lacc.SortOptions
---@return lacc.Program
function lacc.sort(xs, opts) end

---each row's 1-based positions in sorted order (i64)
---@param xs lacc.ArrayLike
---@param opts? lacc.SortOptions
---@return lacc.Program
function lacc.argsort(xs, opts) end

---keys sorted, and values in the same order
---@param keys lacc.ArrayLike
---@param values lacc.ArrayLike
---@return lacc.Program, lacc.Program
function lacc.sort_by_key(keys, values) end

---the first n elements of each row (n clamped to 0..length)
---@param n integer|lacc.Exp
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.take(n, xs) end

---all but the first n elements of each row
---@param n integer|lacc.Exp
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.drop(n, xs) end

---xs at each index of idx (an integer, or a tuple of integers for rank > 1; 1-based)
---@param idx lacc.ArrayLike
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.gather(idx, xs) end

---defaults with each element of xs written at idx's index (the highest position wins; 0 drops)
---@param xs lacc.ArrayLike
---@param idx lacc.ArrayLike
---@param defaults lacc.ArrayLike
---@return lacc.Program
function lacc.scatter(xs, idx, defaults) end

---rank 2
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.transpose(xs) end

---along the innermost dimension
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.reverse(xs) end

---along the innermost dimension
---@param k integer|lacc.Exp
---@param xs lacc.ArrayLike
---@return lacc.Program
function lacc.rotate(k, xs) end

---the extents, as i64 expressions
---@param xs lacc.ArrayLike
---@return lacc.Exp[]
function lacc.shape(xs) end

---the element count, as an expression
---@param xs lacc.ArrayLike
---@return lacc.Exp
function lacc.size(xs) end

---an element, by 1-based indices
---@param xs lacc.ArrayLike
---@param ... lacc.Value
---@return lacc.Exp
function lacc.index(xs, ...) end

---the element of a rank-0 array
---@param xs lacc.ArrayLike
---@return lacc.Exp
function lacc.the(xs) end

---xs then ys along the innermost dimension
---@param xs lacc.ArrayLike
---@param ys lacc.ArrayLike
---@return lacc.Program
function lacc.append(xs, ys) end

---alternating elements
---@param xs lacc.ArrayLike
---@param ys lacc.ArrayLike
---@return lacc.Program
function lacc.interleave(xs, ys) end

---arrays one after another
---@param list lacc.ArrayLike[]
---@return lacc.Program
function lacc.concat(list) end

---f of each neighbourhood
---@param f fun(...: lacc.Exp): ...
---@param boundary string|lacc.Exp
---@param xs lacc.ArrayLike
---@param window? integer[]
---@return lacc.Program
function lacc.stencil(f, boundary, xs, window) end

---two arrays' neighbourhoods
---@param f function
---@param b1 string|lacc.Exp
---@param xs lacc.ArrayLike
---@param b2 string|lacc.Exp
---@param ys lacc.ArrayLike
---@param window? integer[]
---@return lacc.Program
function lacc.stencil2(f, b1, xs, b2, ys, window) end

---a variant-wise collection of a sum type's elements
---@param xs lacc.ArrayLike
---@return lacc.Collection
function lacc.partition(xs) end

---a collection back in element order
---@param c lacc.Collection
---@return lacc.Program
function lacc.merge(c) end

---whether x is a collection
---@param x any
---@return boolean
function lacc.is_collection(x) end

---runs programs, gives host arrays
---@param p lacc.ArrayLike|lacc.ArrayLike[]|lacc.Collection
---@param opts? lacc.RunOptions
---@return lacc.Array ...
function lacc.run(p, opts) end

---a function traced and compiled once
---@param fn function
---@param opts? lacc.RunOptions
---@return lacc.Compiled
function lacc.compile(fn, opts) end

---f's results, then the pullback (cotangents of the results -> of the arguments)
---@param f function
---@param ... lacc.ArrayLike|number
---@return any ...
function lacc.vjp(f, ...) end

---the gradient of f (a rank-0 float result) with respect to the arguments at argnums
---@param f function
---@param argnums? integer|integer[]
---@return function
function lacc.grad(f, argnums) end

---as grad, f's value first
---@param f function
---@param argnums? integer|integer[]
---@return function
function lacc.value_and_grad(f, argnums) end

---f's results, then their tangents along dxs (forward mode)
---@param f function
---@param xs (lacc.ArrayLike|number)[]
---@param dxs (lacc.ArrayLike|number)[]
---@return lacc.Program ...
function lacc.jvp(f, xs, dxs) end

---the program after fusion, as text
---@param p lacc.ArrayLike|lacc.ArrayLike[]
---@param opts? lacc.RunOptions
---@return string, table
function lacc.explain(p, opts) end

---settings (none: those in force)
---@param settings? lacc.Config
---@return lacc.Config?
function lacc.config(settings) end

---Counter-based random numbers (Philox4x32-10): the same bits on every backend.
---@class lacc.RandomModule
lacc.random = {}

---numbers in [lo, hi) (default [0, 1), f64)
---@param shape lacc.Shape
---@param seed integer|lacc.Exp
---@param t? "f32"|"f64"
---@param lo? number
---@param hi? number
---@return lacc.Program
function lacc.random.uniform(shape, seed, t, lo, hi) end

---normally distributed numbers (default mean 0, sd 1, f64)
---@param shape lacc.Shape
---@param seed integer|lacc.Exp
---@param t? "f32"|"f64"
---@param mean? number
---@param sd? number
---@return lacc.Program
function lacc.random.normal(shape, seed, t, mean, sd) end

---unbiased integers from lo to hi inclusive (i64 unless an integer type is given)
---@param shape lacc.Shape
---@param seed integer|lacc.Exp
---@param lo integer
---@param hi integer
---@param t? lacc.ScalarType
---@return lacc.Program
function lacc.random.integers(shape, seed, lo, hi, t) end

---inside a scalar function: the four u32 words of the generator for (seed, counter), a tuple
---@param seed integer|lacc.Exp
---@param counter integer|lacc.Exp
---@return lacc.Exp
function lacc.random.at(seed, counter) end

---@class lacc.MpiStats
---@field bytes_sent integer
---@field bytes_received integer
---@field messages_sent integer
---@field messages_received integer
---@field collectives integer

---Arrays distributed over MPI ranks (SPMD: every rank runs the same script under mpirun).
---@class lacc.MpiModule
lacc.mpi = {}

---A distributed array: this rank's block of consecutive rows of the outermost dimension.
---@class lacc.DistributedArray
---@field block lacc.Array  this rank's rows
local DistributedArray = {}
---@return integer[]
function DistributedArray:shape() end
---@return string
function DistributedArray:type() end
---rows per rank, rank 1 first
---@return integer[]
function DistributedArray:counts() end
---rows before this rank's
---@return integer
function DistributedArray:offset() end
---the whole array on rank `root` (default 1), nil elsewhere (collective)
---@param root? integer
---@return lacc.Array?
function DistributedArray:gather(root) end
---the whole array on every rank (collective)
---@return lacc.Array
function DistributedArray:allgather() end
function DistributedArray:free() end

---starts MPI (unless started); this rank (1-based) and the number of ranks
---@return integer, integer
function lacc.mpi.init() end
---whether this lacc was built with MPI
---@return boolean
function lacc.mpi.available() end
---@return integer
function lacc.mpi.rank() end
---@return integer
function lacc.mpi.size() end
---a distributed program of the global shape: f gets global 1-based indices
---@param shape integer[]
---@param f function
---@return lacc.Program
function lacc.mpi.generate(shape, f) end
---@param shape integer[]
---@param e number|lacc.Exp
---@return lacc.Program
function lacc.mpi.fill(shape, e) end
---rank root's host array (default rank 1; the others pass nil) in balanced row blocks (collective)
---@param a lacc.Array?
---@param root? integer
---@return lacc.DistributedArray
function lacc.mpi.scatter(a, root) end
---this rank's block as its rows of a distributed array (collective)
---@param block lacc.Array
---@return lacc.DistributedArray
function lacc.mpi.from_blocks(block) end
---a .npy file, each rank reading its rows (collective)
---@param path string
---@return lacc.DistributedArray
function lacc.mpi.load(path) end
---whether x is a distributed array or program
---@param x any
---@return boolean
function lacc.mpi.is_distributed(x) end
---nothing when every rank passes nil, else the first failing rank and its message (collective)
---@param err string?
---@return integer?, string?
function lacc.mpi.agree(err) end
function lacc.mpi.barrier() end
---@return number
function lacc.mpi.wtime() end
---what this rank has sent and received
---@return lacc.MpiStats
function lacc.mpi.stats() end
function lacc.mpi.reset_stats() end
---ends the whole job with this exit status
---@param status? integer
function lacc.mpi.abort(status) end

---the OpenCL devices
---@return table[]
function lacc.devices() end

---copies between host and devices
---@return {uploads: integer, downloads: integer, bytes_up: integer, bytes_down: integer}
function lacc.transfers() end

---the opencl backend's pool of device buffers (process-wide)
---@return {pooled: integer, buffers: integer, limit: integer, made: integer, reused: integer}
function lacc.device_memory() end

---the cpu backend's tiers (process-wide): runs on the interpreter, the fast tier's kernels and
---the optimised ones; fast-tier builds, background builds finished and failed
---@return {interp: integer, fast: integer, opt: integer, fast_builds: integer, builds: integer, failed: integer}
function lacc.tiers() end

---the thresholds and sizes that steer lacc's choices (core/base/tune.h): t[k] in a fixed
---order, and t[name], each {name, value, unit, what}
---@return table<integer|string, {name: string, value: number, unit: string, what: string}>
function lacc.tuning() end

return lacc
