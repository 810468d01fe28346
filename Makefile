# The two commands: `make demo` and `make test`. Both install missing system packages, then
# configure and build with CMake presets (Ninja, ccache). `make format` formats the sources;
# `make format-check` fails on what is not formatted (.clang-format, scripts/format.sh).
# `make ops-support` regenerates docs/ops-support.md.
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)

.PHONY: demo train-digits test test-full sanitize tsan bench install gpu-bundle deps build clean \
	format format-check ops-support check-abi

deps:
	@scripts/install-deps.sh

build: deps
	cmake --preset release
	cmake --build --preset release -j $(JOBS)

demo: build
	build/bin/quickstart

# samples/train_digits: a small CNN trained to 97 % on handwritten digits (ARGS="--epochs 5").
train-digits: build
	build/bin/train_digits $(ARGS)

test: build
	tests/format/format_test.sh
	ctest --preset release -j $(JOBS)

# make test, and the sweeps too long to run at every change (the tests labelled `full`).
test-full: build
	ctest --preset full -j $(JOBS)

# The whole suite again under AddressSanitizer and UndefinedBehaviorSanitizer; any report
# fails it. use_sigaltstack=0: GCC 12's ASan runtime can abort unmapping a finished thread's
# signal stack; no Backplane code depends on the alternate stack. intercept_tls_get_addr=0:
# with many plugins dlopened that each have thread-local storage (bp-info over the loader's
# fixture folder), GCC 12's LeakSanitizer crashes in its exit-time tracer while walking the
# dynamic TLS it tracked, the same way at every run for a given layout of the process. Without
# the tracking, that TLS is not scanned for pointers: a leak check can only report more, never
# less.
ASAN_SETTINGS = detect_leaks=1:abort_on_error=1:use_sigaltstack=0:intercept_tls_get_addr=0
LSAN_SETTINGS = suppressions=$(CURDIR)/tests/sanitizers/lsan.supp:intercept_tls_get_addr=0
SANITIZER_ENV = ASAN_OPTIONS=$(ASAN_SETTINGS) LSAN_OPTIONS=$(LSAN_SETTINGS) \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# A failure of LeakSanitizer's own exit-time tracer (not a leak) gets one rerun of the tests
# it hit; tests/sanitizers/rerun-tracer-crashes.sh says exactly when.
sanitize: deps
	cmake --preset sanitize
	cmake --build --preset sanitize -j $(JOBS)
	$(SANITIZER_ENV) ctest --preset sanitize -j $(JOBS) || \
		$(SANITIZER_ENV) tests/sanitizers/rerun-tracer-crashes.sh build-sanitize \
			--preset sanitize

# The suites of the code that runs on several threads (the core, the loader, the CPU backend's
# thread pool, oneDNN paths and ops) under ThreadSanitizer; any report fails it. The
# suppressions name only the OpenMP runtime and oneDNN, whose synchronisation ThreadSanitizer
# cannot see (tests/sanitizers/tsan.supp says why each line is there). allocator_may_return_null:
# a test asks for more host memory than exists and expects OutOfMemory, not an abort.
TSAN_SETTINGS = suppressions=$(CURDIR)/tests/sanitizers/tsan.supp:halt_on_error=1
TSAN_ENV = TSAN_OPTIONS=$(TSAN_SETTINGS):second_deadlock_stack=1:allocator_may_return_null=1

tsan: deps
	cmake --preset tsan
	cmake --build --preset tsan -j $(JOBS)
	$(TSAN_ENV) ctest --preset tsan -j $(JOBS)

# Every benchmark program in turn; bench/README.md says which ratios to read from each. Exit
# status 77 is a program skipping itself (bench_cuda without a GPU).
bench: build
	@for program in build/bin/bench_*; do echo "== $$program"; "$$program"; status=$$?; \
		[ $$status -eq 0 ] || [ $$status -eq 77 ] || exit 1; done

# A self-contained archive that checks the CUDA backend on a GPU machine without Backplane's
# build dependencies: see plugins/cuda/README.md.
gpu-bundle: build
	scripts/make-gpu-bundle.sh build build/backplane-gpu.tar.xz

# docs/ops-support.md from ops.yaml and the bundled backends' YAMLs (scripts/ops-support.sh);
# `make test` fails while the committed page differs from what this writes.
ops-support: deps
	cmake --preset release
	cmake --build --preset release -j $(JOBS) --target bp-codegen
	scripts/ops-support.sh build/bin/bp-codegen

format: deps
	scripts/format.sh

format-check: deps
	scripts/format.sh --check

# abidiff between today's abi.h and the newest released one (docs/abi-policy.md).
check-abi: deps
	scripts/check-abi.sh

install: build
	cmake --install build --prefix "$(PREFIX)"

clean:
	rm -rf build build-debug build-sanitize build-tsan
