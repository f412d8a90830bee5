# gtsim build. `make` builds build/gtsim; `make test` runs every test; `make demo` is the
# main job; `make asan` runs the suite under ASan+UBSan; `make bench` writes bench tables;
# `make install` (PREFIX, DESTDIR) installs the binary, gtsim-sweep, configs, zoo, docs, scripts.
# Sources are found by wildcard: a new sched/*.c, sim/*.cpp or tests/*/test_*.c(pp) needs no
# edit here. Header dependencies are tracked with -MMD.

BUILD    ?= build
SAN      ?=
CC       ?= cc
CXX      ?= g++
OPT      ?= -O2 -g
WARN_C   := -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wmissing-prototypes
WARN_CXX := -Wall -Wextra -Wshadow
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT      := -O1 -g
endif
GEN      := $(BUILD)/gen
CPPFLAGS := -Isched -Isim -I$(GEN) -MMD -MP
CFLAGS   := -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN_C) $(SANFLAGS)
CXXFLAGS := -std=c++17 $(OPT) $(WARN_CXX) $(SANFLAGS)
LIBS_C   := -lprotobuf-c -linih -lglpk -lz -lm -lpthread
LDLIBS   := -lsystemc $(LIBS_C)
LDFLAGS  := $(SANFLAGS)

SCHED_SRC := $(sort $(wildcard sched/*.c))
SIM_SRC   := $(sort $(filter-out sim/main.cpp,$(wildcard sim/*.cpp)))
ONNX_PROTO := /usr/include/onnx/onnx.proto
GEN_SRC   := $(GEN)/onnx/onnx.pb-c.c
SCHED_OBJ := $(SCHED_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/onnx.pb-c.o
SIM_OBJ   := $(SIM_SRC:%.cpp=$(BUILD)/obj/%.o)
MAIN_OBJ  := $(BUILD)/obj/sim/main.o
LIBSCHED  := $(BUILD)/libgtsched.a
LIBSIM    := $(BUILD)/libgtsim.a
GTSIM     := $(BUILD)/gtsim
DEPS_OK   := $(BUILD)/.deps-ok

UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
SIMT_SRC  := $(sort $(wildcard tests/sim/test_*.cpp))
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
SIMT_BIN  := $(SIMT_SRC:tests/sim/%.cpp=$(BUILD)/tests/%)
TEST_BIN  := $(UNIT_BIN) $(SIMT_BIN)

.PHONY: all test demo asan bench fuzz fuzz-onnx fuzz-gtasm fuzz-gtp fuzz-cfg fuzz-sim clean deps docs \
        install uninstall FORCE
all: $(GTSIM)

# The version: the release and the git commit (+dirty with uncommitted changes), in a header
# rewritten only when it changes, so a new commit rebuilds sim/main.o and nothing else.
VERSION   := 0.1.0
GIT_REV   := $(shell git describe --always --dirty --exclude '*' 2>/dev/null)
VERSION_H := $(GEN)/version.h
$(VERSION_H): FORCE
	@mkdir -p $(GEN)
	@v='#define GTSIM_VERSION "$(VERSION)$(if $(GIT_REV),+$(GIT_REV))"'; \
	  [ -f $@ ] && [ "$$(cat $@)" = "$$v" ] || echo "$$v" > $@
$(MAIN_OBJ): $(VERSION_H)
# Names of configs and models are also looked up in this source tree (sim/cli_find.cpp).
$(BUILD)/obj/sim/cli_find.o: CPPFLAGS += -DGTSIM_SRCDIR='"$(CURDIR)"'

$(DEPS_OK): scripts/deps.sh
	@mkdir -p $(BUILD)
	@bash scripts/deps.sh
	@touch $@
deps: $(DEPS_OK)

# onnx.proto is generated at build time from Debian's libonnx-dev (nothing copied into the tree).
# On a fresh machine the header arrives with the packages: without this rule make would stop
# at "no rule to make target" before scripts/deps.sh had run.
$(ONNX_PROTO): | $(DEPS_OK)
$(GEN_SRC): $(ONNX_PROTO) | $(DEPS_OK)
	@mkdir -p $(GEN)
	protoc-c --c_out=$(GEN) -I/usr/include onnx/onnx.proto
$(BUILD)/obj/gen/onnx.pb-c.o: $(GEN_SRC)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(OPT) $(SANFLAGS) -I$(GEN) -c $< -o $@

$(BUILD)/obj/sched/%.o: sched/%.c | $(DEPS_OK) $(GEN_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
$(BUILD)/obj/sim/%.o: sim/%.cpp | $(DEPS_OK) $(GEN_SRC)
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@
# the vector clocks' joins (sim/hb.cpp: join_max) are vectorised only under this cost model
$(BUILD)/obj/sim/hb.o: CXXFLAGS += -fvect-cost-model=dynamic
$(LIBSCHED): $(SCHED_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(LIBSIM): $(SIM_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(GTSIM): $(MAIN_OBJ) $(LIBSIM) $(LIBSCHED)
	$(CXX) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIBSCHED) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(LIBSCHED) $(LDFLAGS) -lcmocka $(LIBS_C)
$(BUILD)/tests/%: tests/sim/%.cpp $(LIBSIM) $(LIBSCHED) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -o $@ $< $(LIBSIM) $(LIBSCHED) $(LDFLAGS) -lcmocka $(LDLIBS)

# The test programs build in parallel, then tests/run.sh runs them TEST_JOBS at once (default:
# the cores) and prints the summary line "N passed, N failed".
NPROC := $(shell nproc 2>/dev/null || echo 1)
test:
	@$(MAKE) --no-print-directory -j$(NPROC) $(GTSIM) $(TEST_BIN)
	@BUILD=$(BUILD) bash tests/run.sh

# The main job: schedule ResNet-50 (batch 64) on STCP920 with its real 1.5 MiB LBs under
# tvm, astitch and GraphTurbo's ablation ladder, simulate each, compare (with the gap to the
# fastest explained), then GraphTurbo's full report with one row per sub-graph instance.
demo: $(GTSIM)
	$(GTSIM) --arch configs/stcp920-hw.cfg --describe | head -3
	$(GTSIM) --arch configs/stcp920-hw.cfg workloads/resnet50.gtg \
	  --compare tvm,astitch,graphturbo:gb,graphturbo:lb,graphturbo:instances,graphturbo:full
	$(GTSIM) --arch configs/stcp920-hw.cfg workloads/resnet50.gtg

asan:
	@$(MAKE) --no-print-directory BUILD=build-asan SAN=1 test

bench: $(GTSIM)
	@BUILD=$(BUILD) bash scripts/bench.sh

clean:
	rm -rf build build-asan

# make install [PREFIX=/usr/local] [DESTDIR=]: PREFIX/bin/gtsim and gtsim-sweep (a relative
# symlink into the scripts, so that it finds its modules and the gtsim beside it); configs, zoo
# and scripts in PREFIX/share/gtsim (where gtsim looks names up, relative to its own
# executable, so the tree may be moved); README and docs in PREFIX/share/doc/gtsim.
PREFIX  ?= /usr/local
DESTDIR ?=
SHARE   := $(DESTDIR)$(PREFIX)/share/gtsim
DOCDIR  := $(DESTDIR)$(PREFIX)/share/doc/gtsim
INSTALL_SCRIPTS := scripts/plot_occupancy scripts/gtsim-sweep
install: $(GTSIM)
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE)/configs $(SHARE)/workloads $(SHARE)/scripts/gs_sweep \
	  $(DOCDIR)/paper $(DOCDIR)/sweeps
	install -m 755 $(GTSIM) $(DESTDIR)$(PREFIX)/bin/gtsim
	install -m 644 configs/*.cfg $(SHARE)/configs/
	install -m 644 workloads/*.gtg workloads/README.md workloads/gen_zoo.py $(SHARE)/workloads/
	install -m 755 $(INSTALL_SCRIPTS) $(SHARE)/scripts/
	install -m 644 scripts/gs_python.py $(SHARE)/scripts/
	install -m 644 scripts/gs_sweep/*.py $(SHARE)/scripts/gs_sweep/
	ln -sf ../share/gtsim/scripts/gtsim-sweep $(DESTDIR)$(PREFIX)/bin/gtsim-sweep
	install -m 644 README.md docs/*.md $(DOCDIR)/
	install -m 644 traces/README.md $(DOCDIR)/traces.md
	install -m 644 $(filter-out docs/paper/runs,$(wildcard docs/paper/*)) $(DOCDIR)/paper/
	install -m 644 docs/sweeps/*.toml docs/sweeps/*.csv docs/sweeps/*.png $(DOCDIR)/sweeps/
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/gtsim $(DESTDIR)$(PREFIX)/bin/gtsim-sweep
	rm -rf $(SHARE) $(DOCDIR)

-include $(shell find $(BUILD)/obj $(BUILD)/tests -name '*.d' 2>/dev/null)

# libFuzzer targets (clang): tests/fuzz/fuzz_NAME.c -> build/fuzz/fuzz_NAME, run for FUZZ_SECONDS
# over a seed corpus of the project's own files: `make fuzz` (.gtg; the zoo), `make fuzz-onnx`
# (the fixtures of tests/onnx/make_fixtures.py), `make fuzz-gtasm` and `make fuzz-sim` (the
# .gtasm cases), `make fuzz-gtp` (those cases assembled), `make fuzz-cfg` (configs/).
# `fuzz-sim` runs programs on the simulator (tests/fuzz/fuzz_sim.cpp, C++ with SystemC).
# Crashes found are fixed and kept as regression inputs (tests/fuzz/regress/NAME/) that the test
# suite replays, with a short deterministic run of every target (test_fuzz_replay,
# test_sim_fuzz_inputs).
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -Isched -Isim -I$(GEN)
FUZZ_RUN   := UBSAN_OPTIONS=halt_on_error=1 ASAN_OPTIONS=detect_stack_use_after_return=0
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(SCHED_SRC) | $(DEPS_OK) $(GEN_SRC)
	@mkdir -p $(dir $@)
	clang -std=c11 -D_POSIX_C_SOURCE=200809L $(FUZZ_FLAGS) \
	  -o $@ $< $(SCHED_SRC) $(GEN_SRC) -lprotobuf-c -linih -lglpk -lz -lm
# the simulator's: the C library compiled by clang first, then the C++ side linked with SystemC
$(BUILD)/fuzz/fuzz_sim: tests/fuzz/fuzz_sim.cpp $(SCHED_SRC) $(SIM_SRC) | $(DEPS_OK) $(GEN_SRC)
	@mkdir -p $(BUILD)/fuzz/simobj
	cd $(BUILD)/fuzz/simobj && clang -std=c11 -D_POSIX_C_SOURCE=200809L $(FUZZ_FLAGS:-I%=-I$(CURDIR)/%) \
	  -fsanitize=fuzzer-no-link -c $(addprefix $(CURDIR)/,$(SCHED_SRC) $(GEN_SRC))
	clang++ -std=c++17 $(FUZZ_FLAGS) -DFUZZ_SIM_SC_MAIN -o $@ $< $(filter-out sim/cli%,$(SIM_SRC)) \
	  $(BUILD)/fuzz/simobj/*.o \
	  -lsystemc -lprotobuf-c -linih -lglpk -lz -lm -lpthread
fuzz: $(BUILD)/fuzz/fuzz_gtg
	@mkdir -p $(BUILD)/fuzz/corpus
	cp workloads/*.gtg $(BUILD)/fuzz/corpus/ 2>/dev/null || true
	$(FUZZ_RUN) $(BUILD)/fuzz/fuzz_gtg -dict=tests/fuzz/gtg.dict -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus
fuzz-onnx: $(BUILD)/fuzz/fuzz_onnx
	@mkdir -p $(BUILD)/fuzz/onnx-corpus
	/usr/bin/python3 tests/onnx/make_fixtures.py $(BUILD)/fuzz/onnx-corpus >/dev/null
	$(FUZZ_RUN) $(BUILD)/fuzz/fuzz_onnx -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(BUILD)/fuzz/onnx- $(BUILD)/fuzz/onnx-corpus
# (fuzz-sim without LeakSanitizer: it cannot follow SystemC's coroutine stacks, and stops)
fuzz-gtasm fuzz-sim: fuzz-%: $(BUILD)/fuzz/fuzz_%
	@mkdir -p $(BUILD)/fuzz/$*-corpus
	cp tests/cases/asm/*.gtasm tests/cases/sim/*.gtasm $(BUILD)/fuzz/$*-corpus/
	$(FUZZ_RUN)$(if $(filter sim,$*),:detect_leaks=0) $< $(if $(filter sim,$*),-detect_leaks=0) \
	  -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(BUILD)/fuzz/$*- $(BUILD)/fuzz/$*-corpus
fuzz-gtp: $(BUILD)/fuzz/fuzz_gtp $(GTSIM)
	@mkdir -p $(BUILD)/fuzz/gtp-corpus
	for f in tests/cases/sim/*.gtasm; do $(GTSIM) --arch configs/tiny.cfg $$f \
	  --emit $(BUILD)/fuzz/gtp-corpus/$$(basename $$f .gtasm).gtp 2>/dev/null || true; done
	$(FUZZ_RUN) $< -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(BUILD)/fuzz/gtp- $(BUILD)/fuzz/gtp-corpus
fuzz-cfg: $(BUILD)/fuzz/fuzz_cfg
	@mkdir -p $(BUILD)/fuzz/cfg-corpus
	cp configs/*.cfg $(BUILD)/fuzz/cfg-corpus/
	$(FUZZ_RUN) $< -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(BUILD)/fuzz/cfg- $(BUILD)/fuzz/cfg-corpus
