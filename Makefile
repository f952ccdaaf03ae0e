# mlasim: `make run` (install, build, the main job) and `make test` (install, build, every test).
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
CMAKE_FLAGS ?=

.PHONY: all deps build build-asan build-tsan build-fuzz run test test-asan test-tsan fuzz fuzz-long bench kernels-check gpu-test format-check clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The sanitizer and fuzz trees are unity builds (CMAKE_UNITY_BUILD: eight sources compiled as one), which share the
# headers' parsing and the JSON, fmt and CLI11 templates' code among them: a fresh ASan tree built in 538 s against
# 1695 s one source at a time (2026-11-28, the 2-core machine). The Release tree stays one source at a time, so a
# source that leans on another's includes still fails there; a name defined twice in one library fails in the
# unity trees, so helpers a library's files share live in a header of their own.
UNITY := -DCMAKE_UNITY_BUILD:BOOL=ON
# A tree configured before it was a unity build becomes one (its cache holds the typed entry once it is).
ensure_unity = @grep -q '^CMAKE_UNITY_BUILD:BOOL=ON' $(1)/CMakeCache.txt || cmake $(1) $(UNITY)

# The ASan and fuzz trees keep line tables only (-g1): their reports still name file and line, and the ASan tree
# builds in 1695 s instead of about 1890 s with full debug information (a fresh clone on the 2-core machine), which
# helps keep `make test` inside CI's time. The TSan tree keeps full debug information: its suppressions
# (tests/sanitizers/tsan.supp) match inlined TBB frames by name.
SAN_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
# The ASan tree compiles at -O1, as ASan's documentation suggests: on the 2-core machine its 203 steps took 2142 s
# of compile time against 2796 s at -O2 (fresh trees that shared the machine with other builds at times; the
# heaviest CLI source alone: 23 s against 33 s), and its 521 tests ran in 157 s against 153 s (2026-11-26, ddfed6d).
# The fuzz tree stays at -O2, where the fuzzers run faster.
ASAN_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) $(GENERATOR) $(ASAN_FLAGS) -DMLASIM_SANITIZE=ON \
	  -DMLASIM_BUILD_BENCH=OFF -DMLASIM_BUILD_GUI=ON $(UNITY) $(CMAKE_FLAGS)

# The explorer's tests run under ASan too: a tree configured when they did not gets the GUI switched on.
build-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	@grep -q '^MLASIM_BUILD_GUI:BOOL=ON' $(ASAN_BUILD)/CMakeCache.txt || cmake $(ASAN_BUILD) -DMLASIM_BUILD_GUI=ON
	$(call ensure_unity,$(ASAN_BUILD))
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# ThreadSanitizer: only what the threaded paths need (the sweep and the CSV writer run on all cores through TBB;
# the CLI and its tests drive them, as do the validate campaign runs).
# At -O1 with full debug information: on the 2-core machine its four targets built in 494 s against 764 s at
# RelWithDebInfo's -O2 (fresh trees, each sharing the machine with other builds at times), and the threaded tests
# ran in 93 s against 100 s, with the same suppressions (2026-11-26).
$(TSAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(TSAN_BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g -DNDEBUG" \
	  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g -DNDEBUG" -DMLASIM_TSAN=ON \
	  -DMLASIM_BUILD_BENCH=OFF -DMLASIM_BUILD_GUI=OFF $(UNITY) $(CMAKE_FLAGS)

build-tsan: deps $(TSAN_BUILD)/CMakeCache.txt
	$(call ensure_unity,$(TSAN_BUILD))
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target mlasim mlasim_cli_tests mlasim_sim_tests mlasim_validate_tests

# libFuzzer targets (fuzz/, docs/reliability.md): clang-15 with ASan + UBSan, the libraries only (no GUI, CLI,
# bench, kernels or tests).
$(FUZZ_BUILD)/CMakeCache.txt:
	cmake -S . -B $(FUZZ_BUILD) $(GENERATOR) -DCMAKE_C_COMPILER=clang-15 -DCMAKE_CXX_COMPILER=clang++-15 \
	  -DMLASIM_FUZZ=ON $(SAN_FLAGS) $(UNITY) $(CMAKE_FLAGS)

build-fuzz: deps $(FUZZ_BUILD)/CMakeCache.txt
	$(call ensure_unity,$(FUZZ_BUILD))
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

# The README's main job: ATOM's change of max_split_per_batch 16 -> -1 for batch 4 x 100000 tokens, 16 heads,
# fp8 on MI355X: both plans, their predicted occupancy and kernel time, and the predicted uplift.
EXAMPLE := --gpu mi355x --batch 4 --context 100000 --heads 16 --q-dtype fp8 --kv-dtype fp8
run: build
	$(BUILD)/cli/mlasim plan $(EXAMPLE) --policy aiter-v1:max_split_per_batch=16
	@echo
	$(BUILD)/cli/mlasim plan $(EXAMPLE) --policy aiter-v1:max_split_per_batch=-1
	@echo
	$(BUILD)/cli/mlasim compare $(EXAMPLE) --policy aiter-v1:max_split_per_batch=16 --vs aiter-v1:max_split_per_batch=-1

# Sanitizer runs. The ASan + UBSan tree runs every test (the committed step predictions of eight folders), the
# explorer's on the offscreen platform included (with LeakSanitizer on; neither our code nor Qt and the libraries
# under it leak anything it reports, so it needs no suppressions). The TSan tree runs the threaded paths; tsan.supp holds the reports from TBB's own task hand-off
# (libtbb is not instrumented).
SAN_DIR := $(CURDIR)/tests/sanitizers
TSAN_ENV := TSAN_OPTIONS=suppressions=$(SAN_DIR)/tsan.supp:halt_on_error=1:second_deadlock_stack=1:history_size=7
# The committed step predictions (348 runs of a single-threaded path, one test per folder; 96 runs took 6 minutes
# under TSan) are checked in the Release tree, and eight of their folders in the ASan tree (below).
define TSAN_CTEST
cd $(TSAN_BUILD) && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) -L cli -E 'CommittedStepPredictions'
cd $(TSAN_BUILD) && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) -L 'sim|validate' -R 'Sweep|CsvWriter|CampaignRun|TimelineRun'
endef

# The ASan tree checks the committed step predictions of eight folders, one of each kind of trace and edit (the
# sequential H100 runs, interleaved ones, a KV cache per layer, op bytes, mixed contexts, ragged batches, 16-head and
# 128-head fp8); the Release tree checks every folder's numbers. All of them under ASan took 1609 of its tests' 2008 s
# (a fresh clone at 90b9ded on the 2-core machine, 2026-12-02: 1006 s of wall time, and `make test` 61 minutes).
ASAN_STEP_FOLDERS := TheTracesGiveThem/(h100_step|h100_step_interleaved_run1|h100_step_kv_per_layer_b24_ctx2048|$\
  h100_step_op_bytes_b16_ctx4096_copy8|h200_step_contexts_b16_ctx4096|h200_step_ragged_b12_ctx4096|$\
  h200_step_fp8_4_h16_b56_ctx4096|h200_step_fp8_carry_fp8_b36_ctx2048)( |$$)
define ASAN_CTEST
cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -LE slow -E 'CommittedStepPredictions'
cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -LE slow -R '$(ASAN_STEP_FOLDERS)'
endef

# Release, then ASan + UBSan, then TSan, then a short run of every fuzz target.
test: format-check build build-asan build-tsan kernels-check fuzz
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(ASAN_CTEST)
	$(TSAN_CTEST)

test-asan: build-asan
	$(ASAN_CTEST)

test-tsan: build-tsan
	$(TSAN_CTEST)

# Each fuzz target runs one at a time (one process) on a copy of its seed corpus in a temporary directory, so the
# committed seeds stay as they are; a crash leaves its input in $(FUZZ_BUILD)/artifacts/ and fails the run.
# `make fuzz`, the smoke run that ends `make test`, runs each for FUZZ_SECONDS from a fixed seed (FUZZ_SEED), so
# every machine tries the same inputs in the same order (a faster one gets further along): a red CI comes from the
# change, not from a draw. Exploring is for `make fuzz-long` (FUZZ_RUNS inputs, the documented run) and
# `make fuzz FUZZ_SEED=0`, both on a seed of libFuzzer's choosing.
FUZZ_SECONDS ?= 5
FUZZ_SEED ?= 1
FUZZ_RUNS ?= 1000000
FUZZ_TARGETS := $(patsubst fuzz/%_fuzz.cpp,%,$(wildcard fuzz/*_fuzz.cpp))
FUZZ_FLAGS := -timeout=60 -rss_limit_mb=4096 -print_final_stats=1
define FUZZ_RUN
@mkdir -p $(FUZZ_BUILD)/artifacts
@work=$$(mktemp -d) && trap 'rm -rf "$$work"' EXIT && \
for t in $(FUZZ_TARGETS); do \
  cp -r fuzz/corpus/$$t $$work/$$t && \
  printf '%-22s ' "$$t" && \
  if $(FUZZ_BUILD)/fuzz/$${t}_fuzz $(1) $(FUZZ_FLAGS) -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$t- \
       $$work/$$t >$$work/$$t.log 2>&1; then \
    grep -E '^#[0-9]+' $$work/$$t.log | tail -n 1 | sed -E 's/^#([0-9]+)[^c]*(cov: [0-9]+ ft: [0-9]+).*/runs \1 \2/' \
      | tr '\n' ' '; \
    grep -E 'average_exec_per_sec' $$work/$$t.log | sed -E 's/.*: /exec\/s /'; \
  else tail -n 40 $$work/$$t.log; exit 1; fi; \
done
endef

fuzz: build-fuzz
	$(call FUZZ_RUN,-max_total_time=$(FUZZ_SECONDS) -seed=$(FUZZ_SEED))

fuzz-long: build-fuzz
	$(call FUZZ_RUN,-runs=$(FUZZ_RUNS))

# Every C++ and CUDA source as .clang-format formats it (clang-format --dry-run: changes nothing, lists offenders);
# data/ keeps its probes as they were measured.
format-check: deps
	git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' ':!data' | xargs clang-format --dry-run --Werror --style=file

bench: build
	$(BUILD)/bench/mlasim_bench

# Kernels without a GPU: nvcc sm_90a build of the library, tests and benchmark (the gpu tests skip visibly), and
# a hipcc compile of every kernel source for gfx90a and gfx940. docs/kernels.md.
KCHECK_BUILD ?= build-kernels-check
NVCC ?= /usr/local/cuda/bin/nvcc
HIP_ARCHS := --offload-arch=gfx90a --offload-arch=gfx940
kernels-check: deps
	cmake -S . -B $(KCHECK_BUILD) $(GENERATOR) -DMLASIM_KERNELS=CUDA -DCMAKE_CUDA_COMPILER=$(NVCC) \
	  -DMLASIM_BUILD_GUI=OFF -DMLASIM_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(KCHECK_BUILD) -j $(JOBS) --target mlasim_kernels mlasim_kernels_tests mlasim_kernel_bench mlasim_attention
	cd $(KCHECK_BUILD) && ctest --output-on-failure -L gpu
	mkdir -p $(KCHECK_BUILD)/hip
	ls kernels/src/*.cu | xargs -P $(JOBS) -I{} sh -c 'hipcc -x hip $(HIP_ARCHS) -std=c++20 -O2 \
	  -Ikernels/include -Ikernels/src -Isim/include -Imodel/include -c {} -o $(KCHECK_BUILD)/hip/$$(basename {}).o'

# On a GPU machine: build and run the GPU tests.
GPU_BUILD ?= build-gpu
gpu-test:
	cmake -S . -B $(GPU_BUILD) $(GENERATOR) -DMLASIM_KERNELS=CUDA -DCMAKE_CUDA_COMPILER=$(NVCC) \
	  -DMLASIM_BUILD_GUI=OFF -DMLASIM_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(GPU_BUILD) -j $(JOBS) --target mlasim_kernels_tests
	cd $(GPU_BUILD) && ctest --output-on-failure -L gpu

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
