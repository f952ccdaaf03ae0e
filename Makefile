# mlasim: `make run` (install, build, the main job) and `make test` (install, build, every test).
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
CMAKE_FLAGS ?=

.PHONY: all deps build build-asan run test test-asan bench kernels-check clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLASIM_SANITIZE=ON \
	  -DMLASIM_BUILD_BENCH=OFF -DMLASIM_BUILD_GUI=OFF $(CMAKE_FLAGS)

build-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The README's main job: ATOM's change of max_split_per_batch 16 -> -1 for batch 4 x 100000 tokens, 16 heads,
# fp8 on MI355X: both plans, their predicted occupancy and kernel time, and the predicted uplift.
EXAMPLE := --gpu mi355x --batch 4 --context 100000 --heads 16 --q-dtype fp8 --kv-dtype fp8
run: build
	$(BUILD)/cli/mlasim plan $(EXAMPLE) --policy aiter-v1:max_split_per_batch=16
	@echo
	$(BUILD)/cli/mlasim plan $(EXAMPLE) --policy aiter-v1:max_split_per_batch=-1
	@echo
	$(BUILD)/cli/mlasim compare $(EXAMPLE) --policy aiter-v1:max_split_per_batch=16 --vs aiter-v1:max_split_per_batch=-1

test: build build-asan
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -LE slow

bench: build
	$(BUILD)/bench/mlasim_bench

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
