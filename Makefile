# sagebuild — top-level build.
#   make                 bin/sagebuild (installs missing Debian -dev packages when run as root)
#   make test            unit tests (plain and ASan/UBSan), fuzz-corpus replay, integration tests,
#                        kernel CPU-reference tests and kernel compilation for sm_90 and sm_120a,
#                        Python tests of the drop-in package (make python-test); one line per
#                        suite, each suite's whole output in build/test-logs/
#   make install PREFIX=/usr/local [DESTDIR=]
#   make fuzz            libFuzzer runs (clang), FUZZ_SECONDS each
#   make format          clang-format every C/CUDA source in place

PREFIX ?= /usr/local
DESTDIR ?=
OPT ?= -O2 -g
FUZZ_SECONDS ?= 30
PKGS := libcurl libarchive libcjson openssl

CSTD := -std=c11 -D_GNU_SOURCE
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2
CPPFLAGS_SB := -Isrc -MMD -MP
# Recursive (=) so pkg-config runs after deps-ok has installed what was missing.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(shell pkg-config --libs $(PKGS)) -ldl -lpthread
CMOCKA_LIBS = $(shell pkg-config --libs cmocka)
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

SRC := $(sort $(shell find src -name '*.c'))
# The self-test's judgements (safe bar, goals, recommendation) and the arch table
# (kernels/archs/archs.def) are C files that sageattn-selftest and the CLI both compile.
SHARED_SRC := kernels/selftest/st_judge.c kernels/archs/sa_archs.c
LIB_SRC := $(filter-out src/main.c,$(SRC)) $(SHARED_SRC)
OBJ := $(LIB_SRC:%.c=build/obj/%.o)
SAN_OBJ := $(LIB_SRC:%.c=build/san/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=build/tests/%)
UNIT_SAN_BIN := $(UNIT_SRC:tests/unit/%.c=build/tests-san/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_REPLAY_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz-replay/%)

.PHONY: all deps test unit-test unit-test-san fuzz-replay integration-test kernel-test python-test \
	install uninstall fuzz format clean
.DEFAULT_GOAL := all

all: bin/sagebuild

build/.deps-ok: share/dev/ensure-deps.sh
	@sh share/dev/ensure-deps.sh
	@mkdir -p build && touch $@

build/.test-deps-ok: share/dev/ensure-deps.sh
	@sh share/dev/ensure-deps.sh --test
	@mkdir -p build && touch $@

deps: build/.deps-ok

build/obj/%.o: %.c | build/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) $(CPPFLAGS_SB) $(PKG_CFLAGS) $(CFLAGS) -c $< -o $@

build/san/%.o: %.c | build/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g $(SAN) $(CPPFLAGS_SB) $(PKG_CFLAGS) $(CFLAGS) -c $< -o $@

build/libsagebuild.a: $(OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

build/libsagebuild-san.a: $(SAN_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

bin/sagebuild: build/obj/src/main.o build/libsagebuild.a
	@mkdir -p bin
	$(CC) $(OPT) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

build/sagebuild-san: build/san/src/main.o build/libsagebuild-san.a
	$(CC) -g $(SAN) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# Unit tests: one cmocka program per tests/unit/test_*.c, linked with the pure logic.
build/tests/%: tests/unit/%.c build/libsagebuild.a | build/.test-deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) $(CPPFLAGS_SB) -Itests/unit $(PKG_CFLAGS) -o $@ $< \
		build/libsagebuild.a $(CMOCKA_LIBS) $(PKG_LIBS)

build/tests-san/%: tests/unit/%.c build/libsagebuild-san.a | build/.test-deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g $(SAN) $(CPPFLAGS_SB) -Itests/unit $(PKG_CFLAGS) -o $@ $< \
		build/libsagebuild-san.a $(CMOCKA_LIBS) $(PKG_LIBS)

# Fuzz targets replayed over their seed corpus under ASan/UBSan (libFuzzer itself: make fuzz).
build/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/replay_main.c build/libsagebuild-san.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O1 -g $(SAN) $(CPPFLAGS_SB) $(PKG_CFLAGS) -o $@ $< \
		tests/fuzz/replay_main.c build/libsagebuild-san.a $(PKG_LIBS)

unit-test: $(UNIT_BIN)
	@sh tests/run-each.sh "unit" $(UNIT_BIN)

unit-test-san: $(UNIT_SAN_BIN)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		sh tests/run-each.sh "unit (ASan/UBSan)" $(UNIT_SAN_BIN)

fuzz-replay: $(FUZZ_REPLAY_BIN)
	@for t in $(FUZZ_REPLAY_BIN); do \
		n=$$(basename $$t); \
		$$t tests/fuzz/corpus/$$n || exit 1; \
	done

integration-test: bin/sagebuild build/sagebuild-san | build/.test-deps-ok
	@SAGEBUILD=$(CURDIR)/bin/sagebuild SAGEBUILD_SAN=$(CURDIR)/build/sagebuild-san \
		sh tests/run-each.sh "integration" $(sort $(wildcard tests/integration/test_*.sh))

-include kernels/kernels.mk

# Python tests of the drop-in `sageattention` package (share/python): stdlib unittest, no torch
# and no GPU (tests that need one skip with the reason).
python-test:
	@python3 -m unittest discover -s tests/python -t tests/python

# One line per suite; each suite's whole output in build/test-logs/, the failures' printed.
test:
	@MAKE="$(MAKE)" sh tests/run-suite.sh "unit tests" unit-test
	@MAKE="$(MAKE)" sh tests/run-suite.sh "unit tests (ASan/UBSan)" unit-test-san
	@MAKE="$(MAKE)" sh tests/run-suite.sh "fuzz corpora (ASan/UBSan)" fuzz-replay
	@MAKE="$(MAKE)" sh tests/run-suite.sh "integration tests" integration-test
	@MAKE="$(MAKE)" sh tests/run-suite.sh "kernel tests" kernel-test
	@MAKE="$(MAKE)" sh tests/run-suite.sh "python tests" python-test
	@echo "make test: all suites passed"

fuzz: build/libsagebuild-san.a
	@command -v clang >/dev/null || { echo "make fuzz needs clang"; exit 1; }
	@mkdir -p build/fuzz
	@for src in $(FUZZ_SRC); do \
		n=$$(basename $$src .c); \
		clang $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined $(CPPFLAGS_SB) \
			$(PKG_CFLAGS) -o build/fuzz/$$n $$src $(LIB_SRC) $(PKG_LIBS) || exit 1; \
		mkdir -p build/fuzz/corpus-$$n; \
		build/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) build/fuzz/corpus-$$n \
			tests/fuzz/corpus/$$n || exit 1; \
	done

install: bin/sagebuild
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/sagebuild
	install -m 755 bin/sagebuild $(DESTDIR)$(PREFIX)/bin/sagebuild
	install -m 644 man/sagebuild.1 $(DESTDIR)$(PREFIX)/share/man/man1/sagebuild.1
	rm -rf $(DESTDIR)$(PREFIX)/share/sagebuild/kernels $(DESTDIR)$(PREFIX)/share/sagebuild/manifests
	cp -R kernels $(DESTDIR)$(PREFIX)/share/sagebuild/kernels
	rm -rf $(DESTDIR)$(PREFIX)/share/sagebuild/kernels/build
	cp -R manifests $(DESTDIR)$(PREFIX)/share/sagebuild/manifests
	@if [ -d share/python/sageattention ]; then \
		rm -rf $(DESTDIR)$(PREFIX)/share/sagebuild/python && \
		mkdir -p $(DESTDIR)$(PREFIX)/share/sagebuild/python && \
		cp -R share/python/sageattention $(DESTDIR)$(PREFIX)/share/sagebuild/python/ && \
		find $(DESTDIR)$(PREFIX)/share/sagebuild/python -name __pycache__ -prune \
			-exec rm -rf {} +; fi
	@if [ -d share/completion ]; then install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions && \
		install -m 644 share/completion/sagebuild.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/sagebuild; fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/sagebuild $(DESTDIR)$(PREFIX)/share/man/man1/sagebuild.1
	rm -rf $(DESTDIR)$(PREFIX)/share/sagebuild

format:
	clang-format -i $$(find src tests kernels -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh')

clean:
	rm -rf build bin kernels/build

-include $(OBJ:.o=.d) $(SAN_OBJ:.o=.d) build/obj/src/main.d build/san/src/main.d
