# Kernel targets, included by the top-level Makefile.
#   make kernel-test        CPU tests of the C reference (kernels/ref) and, with the nvcc on
#                           PATH, the CMake build of the kernels for sm_90 and sm_120a
#                           (kernels/tests/build-check.sh; KERNEL_TEST_ARCHS overrides;
#                           KERNEL_SPILL_CHECK=warn makes hot-kernel spills a warning)
#   make kernel-cpu-test    only the CPU tests (with the arch table's CMake-vs-C check,
#                           kernels/tests/arch-table-check.sh)
#   make kernel-build-test  only the build checks
#   make kernel-sass-test   the P·V instruction of each mode in the SASS of sm_120a and sm_89
#                           (kernels/tests/sass-check.sh; issue 9; KERNEL_SASS_ARCHS overrides)

# The reference includes src/sa_internal.h (the kernels' constants), which includes
# cuda_runtime.h: take the headers of the nvcc on PATH, else CUDA_HOME, else /usr/local/cuda.
KERNEL_CUDA_HOME := $(or $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)),$(CUDA_HOME),/usr/local/cuda)
KERNEL_TEST_CFLAGS := $(CSTD) $(WARN) -O2 -g -Ikernels/ref -Ikernels/tests -Ikernels/include \
	-Ikernels/selftest -Ikernels/src -isystem $(KERNEL_CUDA_HOME)/include
KERNEL_REF_SRC := $(sort $(wildcard kernels/ref/*.c))
KERNEL_TEST_SUPPORT := kernels/src/mode_names.c kernels/tests/sa_check.c kernels/tests/sa_testdata.c \
	kernels/selftest/st_logic.c kernels/selftest/st_judge.c kernels/archs/sa_archs.c
KERNEL_TEST_HDR := $(wildcard kernels/ref/*.h kernels/tests/*.h kernels/src/sa_internal.h \
	kernels/include/sageattn.h kernels/selftest/st_logic.h kernels/selftest/st_judge.h \
	kernels/archs/sa_archs.h kernels/archs/archs.def)
KERNEL_TEST_BIN := build/kernels/test_sa_convert build/kernels/test_sa_ref
KERNEL_ST_SRC := kernels/selftest/st_logic.c kernels/selftest/st_judge.c kernels/selftest/st_report.c \
	kernels/archs/sa_archs.c

.PHONY: kernel-test kernel-cpu-test kernel-build-test kernel-sass-test

build/kernels/%: kernels/tests/%.c $(KERNEL_REF_SRC) $(KERNEL_TEST_SUPPORT) $(KERNEL_TEST_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(KERNEL_TEST_CFLAGS) -o $@ $< $(KERNEL_TEST_SUPPORT) $(KERNEL_REF_SRC) -lm

# The same tests under ASan/UBSan (the reference tests without their long sequences).
KERNEL_SAN_BIN := $(KERNEL_TEST_BIN:build/kernels/%=build/kernels-san/%)
build/kernels-san/%: kernels/tests/%.c $(KERNEL_REF_SRC) $(KERNEL_TEST_SUPPORT) $(KERNEL_TEST_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(KERNEL_TEST_CFLAGS) -O1 $(SAN) -o $@ $< $(KERNEL_TEST_SUPPORT) $(KERNEL_REF_SRC) -lm

# The self-test's pure logic (verdicts, matrix, JSON) runs on the CPU too.
build/kernels/test_st_logic: kernels/tests/test_st_logic.c kernels/tests/sa_check.c $(KERNEL_ST_SRC) \
	$(wildcard kernels/selftest/*.h kernels/archs/*.h kernels/archs/*.def) kernels/include/sageattn.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -Ikernels/tests -Ikernels/include -Ikernels/selftest -o $@ \
		$< kernels/tests/sa_check.c $(KERNEL_ST_SRC) -lm

# The arch table as the C code reads it, for kernels/tests/arch-table-check.sh (CMake's reading).
build/kernels/dump_arch_table: kernels/tests/dump_arch_table.c kernels/archs/sa_archs.c \
	kernels/archs/sa_archs.h kernels/archs/archs.def
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -o $@ kernels/tests/dump_arch_table.c kernels/archs/sa_archs.c

# The public API's argument validation and mode policy (host C++ in src/api_validate.cu and
# src/mode_policy.cu, which reads the arch table), under ASan/UBSan.
KERNEL_API_HOST_SRC := kernels/src/api_validate.cu kernels/src/mode_policy.cu kernels/src/mode_names.c \
	kernels/archs/sa_archs.c
KERNEL_API_HOST_HDR := kernels/src/api_validate.h kernels/src/mode_policy.h
build/kernels/test_sa_validate build/kernels/test_mode_policy: build/kernels/%: kernels/tests/%.cc \
	$(KERNEL_API_HOST_SRC) $(KERNEL_API_HOST_HDR) kernels/tests/sa_check.c $(KERNEL_TEST_HDR)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(filter-out -Wstrict-prototypes,$(WARN)) -O1 -g $(SAN) -Ikernels/tests \
		-Ikernels/include -Ikernels/src -isystem $(KERNEL_CUDA_HOME)/include -o $@ \
		-x c++ $< $(KERNEL_API_HOST_SRC) kernels/tests/sa_check.c -lm

kernel-cpu-test: $(KERNEL_TEST_BIN) $(KERNEL_SAN_BIN) build/kernels/test_st_logic \
	build/kernels/test_sa_validate build/kernels/test_mode_policy build/kernels/dump_arch_table
	@for t in $(KERNEL_TEST_BIN); do \
		start=$$(date +%s); $$t || exit 1; \
		echo "kernel-test: $$(basename $$t) took $$(( $$(date +%s) - start )) s"; \
	done
	@for t in $(KERNEL_SAN_BIN); do \
		start=$$(date +%s); \
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $$t --small >/dev/null || exit 1; \
		echo "kernel-test: $$t (ASan/UBSan) passed in $$(( $$(date +%s) - start )) s"; \
	done
	@ASAN_OPTIONS=detect_leaks=1 build/kernels/test_sa_validate
	@ASAN_OPTIONS=detect_leaks=1 build/kernels/test_mode_policy
	@sh kernels/tests/test_check_spills.sh
	@bash kernels/tests/arch-table-check.sh build/kernels/dump_arch_table
	@build/kernels/test_st_logic build/kernels/selftest-sample.json && \
		python3 kernels/tests/check_selftest_json.py build/kernels/selftest-sample.json

kernel-build-test:
	@bash kernels/tests/build-check.sh

kernel-sass-test:
	@bash kernels/tests/sass-check.sh

kernel-test: kernel-cpu-test kernel-build-test kernel-sass-test
	@echo "kernel-test: all kernel checks passed"
