# lacc: `make` builds liblacc.so and the Lua 5.4 module; `make test` runs every test;
# `make demo` installs what is missing, builds and runs an example.
CC ?= cc
LUA54 ?= lua5.4
LUAJIT ?= luajit
BUSTED ?= /usr/bin/busted
LUA_INC ?= $(shell pkg-config --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
LUA_LIB ?= $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)
# libpng is optional, as OpenCL is: without its header or with CFLAGS=-DLACC_NO_PNG (asked
# of core/base/have_png.h itself) lacc builds without write_png/read_png, links no libpng.
PNG_CFLAGS ?= $(shell pkg-config --cflags libpng 2>/dev/null)
HAVE_PNG := $(shell echo LACC_HAVE_PNG | $(CC) -Icore -include base/have_png.h $(PNG_CFLAGS) \
  $(CFLAGS) -E -P -x c - 2>/dev/null | grep -qx 1 && echo 1)
PNG_LIB ?= $(if $(HAVE_PNG),$(shell pkg-config --libs libpng 2>/dev/null || echo -lpng16))
OPT ?= -O2 -g
# WERROR= (the rock build does) leaves warnings as warnings for other compilers' users
WERROR ?= -Werror
WARN = -Wall -Wextra $(WERROR) -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L
B ?= build
CFLAGS_ALL = $(WARN) $(OPT) -fPIC -Icore -Icore/include -I$(B)/gen $(PNG_CFLAGS) $(SAN) $(CFLAGS)
LDFLAGS_ALL = $(SAN) $(LDFLAGS)

# The core by part (docs/architecture.md): the driver, then one folder per part.
CORE_SRC = $(wildcard core/*.c core/base/*.c core/front/*.c core/ast/*.c core/kir/*.c core/cpu/*.c)
CL_SRC = $(wildcard opencl/*.c)
CORE_OBJ = $(patsubst core/%.c,$(B)/obj/%.o,$(CORE_SRC)) $(patsubst opencl/%.c,$(B)/obj/cl_%.o,$(CL_SRC))
HDRS = $(wildcard core/*.h core/include/*.h core/base/*.h core/front/*.h core/ast/*.h core/kir/*.h \
  core/cpu/*.h opencl/*.h)

.PHONY: FORCE all rock rock-install test check test-opencl test-full demo deps lint bench-mpi bench-mpi-model check-asan check-tsan check-valgrind check-clmath check-mpi clean cdef check-cdef entries install-lua bench bench-peers fuzz

# MPI is optional, as OpenCL is: with mpicc (Open MPI) lacc.mpi's library and Lua 5.4 module
# are built beside the core, which never needs MPI (docs/guide.md, "Many machines: MPI").
MPICC ?= mpicc
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null 2>&1 && echo 1)
MPI_GOALS = $(if $(HAVE_MPI),$(B)/liblacc_mpi.so $(B)/lacc/mpi_core.so)

all: $(B)/liblacc.so $(B)/lacc/core.so $(B)/test_core $(B)/examples/saxpy $(B)/examples/threads $(MPI_GOALS)

FORCE:

# Objects depend on the flags they were compiled with (a build folder reused with other
# CFLAGS, as tools/runtests.sh's build without OpenCL and PNG is, recompiles).
$(B)/flags: FORCE
	@mkdir -p $(B)
	@echo '$(CFLAGS_ALL)' | cmp -s - $@ || echo '$(CFLAGS_ALL)' > $@

# lacc's own math functions, compiled into the interpreter and held as text by the kernel
# preludes (core/base/ownmath.h): the file as a C string literal.
$(B)/gen/ownmath.inc: core/base/ownmath.h
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@

$(B)/obj/%.o: core/%.c $(HDRS) $(B)/flags $(B)/gen/ownmath.inc
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(B)/obj/cl_%.o: opencl/%.c $(HDRS) $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(B)/liblacc.so: $(CORE_OBJ)
	$(CC) -shared -o $@ $(CORE_OBJ) $(LDFLAGS_ALL) $(PNG_LIB) -lm -ldl -lpthread

BINDING_SRC = bindings/lacc_core.c bindings/lacc_arrays.c bindings/entries.c
$(B)/lacc/core.so: $(BINDING_SRC) bindings/lacc_core.h core/include/lacc.h $(B)/liblacc.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LUA_INC) -shared -o $@ $(BINDING_SRC) -L$(B) -llacc \
	  -Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS_ALL)

$(B)/liblacc_mpi.so: mpi/lacc_mpi.c mpi/lacc_mpi.h $(B)/flags
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS_ALL) -Impi -shared -o $@ mpi/lacc_mpi.c $(LDFLAGS_ALL) -ldl -lpthread

$(B)/lacc/mpi_core.so: bindings/lacc_mpi_core.c bindings/lacc_mpi_core.h bindings/mpi_entries.c mpi/lacc_mpi.c mpi/lacc_mpi.h $(B)/flags
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS_ALL) $(LUA_INC) -Impi -shared -o $@ bindings/lacc_mpi_core.c bindings/mpi_entries.c mpi/lacc_mpi.c \
	  $(LDFLAGS_ALL) -ldl -lpthread

$(B)/test_core: core/test/test_core.c $(B)/liblacc.so
	$(CC) $(CFLAGS_ALL) -o $@ $< -L$(B) -llacc -Wl,-rpath,'$$ORIGIN' $(LDFLAGS_ALL) $(PNG_LIB) -lm

# Embedding (examples/c): a C program on the C API, and Lua states in threads.
$(B)/examples/saxpy: examples/c/saxpy.c $(B)/liblacc.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< -L$(B) -llacc -Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS_ALL)

$(B)/examples/threads: examples/c/threads.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LUA_INC) -o $@ $< $(LDFLAGS_ALL) $(LUA_LIB) -lpthread

# LuaRocks (rockspec/, build type make): the core compiled once, into liblacc.so; for Lua
# 5.4 the module lacc.core linked to it; for Lua 5.1 only the library, for LuaJIT's FFI
# (PUC Lua 5.1 is not supported: lacc's require says so). LuaRocks gives LUA, LUA_INCDIR,
# CFLAGS and (to rock-install) LIBDIR. Warnings stay warnings there (WERROR=).
ROCK_B = build/rock
ROCK_LUA = $(shell sed -n 's/^.define LUA_VERSION_NUM[^0-9]*\([0-9]*\).*/\1/p' "$(LUA_INCDIR)/lua.h" 2>/dev/null)
ROCK_GOALS = $(ROCK_B)/liblacc.so $(if $(filter 504,$(ROCK_LUA)),$(ROCK_B)/lacc/core.so) \
  $(if $(HAVE_MPI),$(ROCK_B)/liblacc_mpi.so $(if $(filter 504,$(ROCK_LUA)),$(ROCK_B)/lacc/mpi_core.so))
rock:
	@case "$(ROCK_LUA)" in 504|501) ;; *) echo "lacc builds for Lua 5.4, or for LuaJIT (Lua 5.1's \
	  API); LuaRocks asked for Lua $(ROCK_LUA) (headers: $(LUA_INCDIR))"; exit 1 ;; esac
	@$(MAKE) --no-print-directory -j$$(nproc 2>/dev/null || echo 2) B=$(ROCK_B) WERROR= OPT= \
	  LUA_INC=-I"$(LUA_INCDIR)" $(ROCK_GOALS)
	@if [ "$(ROCK_LUA)" = 501 ] && ! "$(LUA)" -e 'assert(jit)' >/dev/null 2>&1; then \
	  echo "lacc: built the LuaJIT route (liblacc.so and the Lua files); $(LUA) is not LuaJIT," \
	  "and lacc runs on LuaJIT or Lua 5.4 only"; fi

# The C API goes where C programs look: the tree's include/ (lacc.h, lacc_mpi.h) and lib/
# (liblacc.so, liblacc_mpi.so, pkgconfig/lacc.pc): /usr/local's for the system tree. LuaRocks
# gives the rock's own LIBDIR, <tree>/lib/luarocks/rocks-<v>/lacc/<version>/lib (2.x: the
# tree's lib/lua/<v>).
LACC_VERSION = $(shell sed -n 's/.*LACC_VERSION_MAJOR = \([0-9]*\), LACC_VERSION_MINOR = \([0-9]*\), LACC_VERSION_PATCH = \([0-9]*\).*/\1.\2.\3/p' core/include/lacc.h)
rock-install:
	mkdir -p "$(LIBDIR)"
	cp $(ROCK_B)/liblacc.so "$(LIBDIR)/"
	@case "$(abspath $(LIBDIR))" in \
	  */lib/luarocks/rocks-*/lib) tree=$(abspath $(LIBDIR)/../../../../../..) ;; \
	  */lib/lua/*) tree=$(abspath $(LIBDIR)/../../..) ;; \
	  *) echo "lacc: LIBDIR $(LIBDIR) is in no LuaRocks tree I know: the C API (lacc.h," \
	       "liblacc.so, lacc.pc) is not installed"; exit 0 ;; esac; \
	mkdir -p "$$tree/include" "$$tree/lib/pkgconfig" && \
	cp core/include/lacc.h "$$tree/include/" && cp $(ROCK_B)/liblacc.so "$$tree/lib/" && \
	if [ -f $(ROCK_B)/liblacc_mpi.so ]; then cp mpi/lacc_mpi.h "$$tree/include/" && \
	  cp $(ROCK_B)/liblacc_mpi.so "$$tree/lib/"; fi && \
	printf '%s\n' "prefix=$$tree" 'includedir=$${prefix}/include' 'libdir=$${prefix}/lib' '' \
	  'Name: lacc' 'Description: the C API of lacc, a data-parallel array language' \
	  'Version: $(LACC_VERSION)' 'Cflags: -I$${includedir}' \
	  'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -llacc' > "$$tree/lib/pkgconfig/lacc.pc" && \
	echo "installed the C API: $$tree/include/lacc.h, $$tree/lib/liblacc.so," \
	  "$$tree/lib/pkgconfig/lacc.pc"
	@if [ "$(ROCK_LUA)" = 504 ]; then mkdir -p "$(LIBDIR)/lacc" && \
	  cp $(ROCK_B)/lacc/core.so "$(LIBDIR)/lacc/" && echo "installed lacc.core (Lua 5.4)"; fi
	@if [ -f $(ROCK_B)/liblacc_mpi.so ]; then cp $(ROCK_B)/liblacc_mpi.so "$(LIBDIR)/" && \
	  echo "installed liblacc_mpi.so (lacc.mpi)"; fi
	@if [ -f $(ROCK_B)/lacc/mpi_core.so ] && [ "$(ROCK_LUA)" = 504 ]; then \
	  cp $(ROCK_B)/lacc/mpi_core.so "$(LIBDIR)/lacc/" && echo "installed lacc.mpi_core (Lua 5.4)"; fi

# The LuaJIT cdef is generated from lacc.h and committed; the test fails on a diff.
cdef:
	sh tools/gen_cdef.sh core/include/lacc.h > lua/lacc/cdef.lua
	sh tools/gen_cdef.sh mpi/lacc_mpi.h > lua/lacc/mpi_cdef.lua

# The plain entry points of both bindings, generated from bindings/entries.def and
# mpi/entries.def, and committed.
entries:
	lua5.4 tools/gen_entries.lua c < bindings/entries.def > bindings/entries.c
	lua5.4 tools/gen_entries.lua lua < bindings/entries.def > lua/lacc/ffi_entries.lua
	lua5.4 tools/gen_entries.lua c < mpi/entries.def > bindings/mpi_entries.c
	lua5.4 tools/gen_entries.lua lua < mpi/entries.def > lua/lacc/mpi_entries.lua

check-cdef:
	@sh tools/gen_cdef.sh core/include/lacc.h | diff -u lua/lacc/cdef.lua - \
	  || (echo "lua/lacc/cdef.lua is out of date: run 'make cdef'"; exit 1)
	@sh tools/gen_cdef.sh mpi/lacc_mpi.h | diff -u lua/lacc/mpi_cdef.lua - \
	  || (echo "lua/lacc/mpi_cdef.lua is out of date: run 'make cdef'"; exit 1)

test: deps
	@$(MAKE) --no-print-directory all
	@B=$(B) LUA54=$(LUA54) LUAJIT=$(LUAJIT) BUSTED=$(BUSTED) sh tools/runtests.sh

# The quick tier (under 3 minutes on 2 cores): every spec under Lua 5.4 on interp and cpu,
# kernels from the fast tier, the specs of the optimised build itself left to make test.
check: deps
	@$(MAKE) --no-print-directory all
	@LACC_CHECK=1 B=$(B) LUA54=$(LUA54) LUAJIT=$(LUAJIT) BUSTED=$(BUSTED) sh tools/runtests.sh

# make test with every type sweep whole, on every backend under both VMs (make test
# samples them: spec/helper.lua), OpenCL included: on a new device, run this first.
test-opencl: deps
	@$(MAKE) --no-print-directory all
	@LACC_TEST_SWEEP=full B=$(B) LUA54=$(LUA54) LUAJIT=$(LUAJIT) BUSTED=$(BUSTED) sh tools/runtests.sh

# The exhaustive mode, for releases: test-opencl's whole sweeps, every cpu spec on the
# optimised tier (make test runs them on the fast tier, the #opt specs on the optimised).
test-full: deps
	@$(MAKE) --no-print-directory all
	@LACC_TEST_SWEEP=full LACC_TEST_TIER=opt B=$(B) LUA54=$(LUA54) LUAJIT=$(LUAJIT) BUSTED=$(BUSTED) \
	  sh tools/runtests.sh

deps:
	@sh tools/deps.sh

# luacheck over every Lua file (.luacheckrc) and cppcheck over the C: zero warnings; also
# a step of make test.
CPPCHECK = cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
  --inline-suppr -Icore -Icore/include -I$(B)/gen -Impi core opencl bindings mpi
lint: deps $(B)/gen/ownmath.inc
	@luacheck lua spec tools bench examples types --no-color -q
	@$(CPPCHECK) && echo "cppcheck: clean"

# Differential fuzzing (interp against cpu) for FUZZ_SECONDS (default 600), seed FUZZ_SEED.
FUZZ_SECONDS ?= 600
FUZZ_SEED ?= 1
fuzz: deps
	@$(MAKE) --no-print-directory all
	LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='$(B)/?.so;;' LACC_CACHE='$(B)/kcache' \
	  $(LUA54) tools/fuzz_main.lua $(FUZZ_SECONDS) $(FUZZ_SEED)

NAME ?= dotp
# examples/mpi_*.lua run on RANKS ranks (mpirun; --allow-run-as-root for CI's root).
RANKS ?= 2
DEMO_RUN = $(if $(filter mpi_%,$(NAME)),mpirun --allow-run-as-root --oversubscribe -n $(RANKS))
demo: deps
	@$(MAKE) --no-print-directory all
	LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='$(B)/?.so;;' $(DEMO_RUN) $(LUA54) examples/$(NAME).lua
	LUA_PATH='lua/?.lua;lua/?/init.lua;;' LACC_LIB=$(CURDIR)/$(B)/liblacc.so $(DEMO_RUN) $(LUAJIT) examples/$(NAME).lua

# AddressSanitizer + UBSan over the whole suite. The sanitizer runtime must be loaded
# before the Lua interpreter starts, hence LD_PRELOAD.
check-asan:
	$(MAKE) --no-print-directory B=build-asan OPT='-O1 -g -fno-omit-frame-pointer' \
	  SAN='-fsanitize=address,undefined -fno-sanitize-recover=undefined' all
	@# use_sigaltstack=0: LLVM (inside PoCL) gives a thread that builds a kernel a malloc'd
	@# alternate signal stack, which ASan would try to unmap when the thread ends
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:use_sigaltstack=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tools/lsan.supp:print_suppressions=0 \
	  SAN_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
	  B=build-asan LUA54=$(LUA54) LUAJIT=$(LUAJIT) BUSTED=$(BUSTED) sh tools/runtests.sh

# ThreadSanitizer over the embedding test: Lua states in several threads compiling and
# running programs at once (kernel caches, disk cache, thread pool, OpenCL contexts).
check-tsan:
	$(MAKE) --no-print-directory B=build-tsan OPT='-O1 -g' SAN='-fsanitize=thread' all
	@rm -rf build-tsan/kcache
	@for args in "8 cpu" "8 cpu" "6 interp" $$(build-tsan/examples/saxpy opencl >/dev/null 2>&1 && echo 4,opencl); do \
	  args=$$(echo $$args | tr , ' '); \
	  TSAN_OPTIONS="suppressions=$(CURDIR)/tools/tsan.supp halt_on_error=1 exitcode=66 report_signal_unsafe=0" \
	    LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build-tsan/?.so;;' LACC_CACHE=build-tsan/kcache \
	    build-tsan/examples/threads $$args || { echo "check-tsan: threads $$args failed"; exit 1; }; \
	done; echo "check-tsan: clean"

# Valgrind's memcheck over the suite on Lua 5.4, interp and cpu (about an hour; see
# tools/valgrind.sh). VALGRIND_SPECS='spec/front/sums_spec.lua' picks some specs.
check-valgrind: all
	@B=$(B) LUA54=$(LUA54) BUSTED=$(BUSTED) sh tools/valgrind.sh

# The MPI specs with the cases at every rank count from 1 to 4 and at 7 (more ranks than
# most of their extents), under both VMs (make test runs each count from 1 to 4 once
# between the VMs); MPI_RANKS sets the counts.
MPI_RANKS ?= 1,2,3,4,7
check-mpi: deps
	@$(MAKE) --no-print-directory all
	@for vm in $(LUA54) $(LUAJIT); do \
	  echo "== spec/mpi under $$vm, ranks $(MPI_RANKS)"; \
	  LUA_PATH="$(CURDIR)/lua/?.lua;$(CURDIR)/lua/?/init.lua;$(CURDIR)/spec/?.lua;;" \
	  LUA_CPATH="$(CURDIR)/$(B)/?.so;;" LACC_LIB="$(CURDIR)/$(B)/liblacc.so" \
	  LACC_CACHE="$${LACC_CACHE:-$(CURDIR)/$(B)/kcache}" LACC_MPI_RANKS=$(MPI_RANKS) \
	  $$vm $(BUSTED) --ignore-lua spec/mpi || exit 1; \
	done

# lacc's own f32 exp and log (OpenCL on CPU devices) over every f32 input (~5 minutes).
check-clmath: all
	@B=$(B) CC=$(CC) LUA54=$(LUA54) sh tools/clmath_check.sh

clean:
	rm -rf build build-asan build-tsan

# Benchmarks of issue 4 (bench/README.md): C, NumPy, LuaJIT and lacc rows, one table per
# benchmark with ratios against hand-written C. BENCH_SCALE=0.05 for a quick run.
bench: all
	@B=$(B) CC=$(CC) LUA54=$(LUA54) LUAJIT=$(LUAJIT) sh bench/run.sh

# Issue 45's peer rows (bench/peers/, bench/README.md "Peer rows"): PyTorch, Numba and Halide
# beside the C and lacc rows of the workloads they have, a peers line under each table.
# They are no dependency of lacc: install them with LACC_PEERS=1 sh tools/deps.sh.
bench-peers: all
	@B=$(B) CC=$(CC) LUA54=$(LUA54) LUAJIT=$(LUAJIT) BENCH_PEERS=only sh bench/run.sh

# The MPI path (lacc.mpi) against the cpu backend: 1 and 2 ranks (bench/mpi/run.sh).
bench-mpi: all
	@B=$(B) LUA54=$(LUA54) sh bench/mpi/run.sh

# The scaling model at 64-1,024 simulated ranks (bench/mpi/at_scale.lua; no MPI runs).
bench-mpi-model: all
	@LUA_PATH="$(CURDIR)/lua/?.lua;$(CURDIR)/lua/?/init.lua;$(CURDIR)/spec/?.lua;$(CURDIR)/bench/?.lua;;" \
	  LUA_CPATH="$(CURDIR)/$(B)/?.so;$(CURDIR)/$(B)/bench/?.so;;" LACC_LIB="$(CURDIR)/$(B)/liblacc.so" \
	  LACC_THREADS=1 LACC_TIER=opt $(LUA54) bench/mpi/at_scale.lua
