# hayate — one build. `make run` installs missing Debian packages, builds and serves on :8080;
# `make test` builds and runs every test (unit + integration). See README.md.
CC ?= cc
BUILD ?= build
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

PKGS := libpcre2-8 libssl libcrypto zlib libbrotlienc libzstd libdeflate
DEP_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
DEP_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

OPT ?= -O2
WERROR ?= -Werror
SAN ?=
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g $(OPT) -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
  -Wno-unused-parameter -Werror=implicit-function-declaration -Werror=incompatible-pointer-types -fno-strict-aliasing
ALL_CFLAGS := -Isrc $(CFLAGS_BASE) $(WERROR) $(SAN) $(DEP_CFLAGS) $(CFLAGS) -DHY_CC='"$(shell $(CC) --version | head -1)"'
ALL_LDFLAGS := $(SAN) $(LDFLAGS)

SRC := $(filter-out src/main.c,$(wildcard src/*/*.c))
OBJ := $(SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/default_conf.o
LIB := $(BUILD)/libhayate.a
BIN := $(BUILD)/hayate
UNIT_SRC := $(wildcard tests/unit/*/*_test.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all run test unit integration bench deps deps-test clean fuzz fuzz-smoke asan

all: $(BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(filter 1,$(V)),,@echo "  CC $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gen/default_conf.c: conf/default.conf conf/mime.types tools/embed-conf.sh
	@mkdir -p $(dir $@)
	$(Q)tools/embed-conf.sh $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(BUILD)/src/main.o $(LIB)
	$(if $(filter 1,$(V)),,@echo "  LD $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB) tests/unit/harness.h
	@mkdir -p $(dir $@)
	$(if $(filter 1,$(V)),,@echo "  CC $<")
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc -o $@ $< $(LIB) $(ALL_LDFLAGS) $(DEP_LIBS)

-include $(OBJ:.o=.d) $(BUILD)/src/main.d

# Debian packages: build, run, test. Installed only when missing (apt-get, as root).
DEPS_BUILD := build-essential pkg-config libpcre2-dev libssl-dev zlib1g-dev libbrotli-dev libzstd-dev libdeflate-dev
DEPS_TEST := python3 python3-pytest python3-h2 python3-brotli python3-zstandard curl clang libclang-rt-14-dev sslscan
deps:
	$(Q)tools/install-deps.sh $(DEPS_BUILD)
deps-test:
	$(Q)tools/install-deps.sh $(DEPS_BUILD) $(DEPS_TEST)

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(BIN) -p $(CURDIR)/ -g 'daemon off;'

unit: $(UNIT_BIN)
	$(Q)tools/run-unit.sh $(UNIT_BIN)

integration: $(BIN)
	$(Q)HY_BIN=$(abspath $(BIN)) /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration $(PYTEST_ARGS)

test: deps-test
	$(Q)$(MAKE) --no-print-directory all unit
	$(Q)$(MAKE) --no-print-directory integration

# Same suite under AddressSanitizer + UBSan (CI runs this too).
asan:
	$(Q)$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" all unit integration

FUZZ_SRC := $(wildcard tests/fuzz/*_fuzz.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
build-fuzz/%: tests/fuzz/%.c
	$(Q)$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang OPT=-O1 \
	  SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" build-fuzz/libhayate.a
	$(Q)clang $(CFLAGS_BASE) $(DEP_CFLAGS) -O1 -fsanitize=fuzzer,address,undefined -Isrc -o $@ $< \
	  build-fuzz/libhayate.a $(DEP_LIBS)
fuzz: $(FUZZ_BIN)
FUZZ_SECONDS ?= 30
fuzz-smoke: fuzz
	$(Q)for f in $(FUZZ_BIN); do n=$$(basename $$f); echo "== fuzz $$n ($(FUZZ_SECONDS)s)"; \
	  work=build-fuzz/corpus/$$n; mkdir -p $$work; \
	  [ -d tests/fuzz/corpus/$$n ] && cp -r tests/fuzz/corpus/$$n/. $$work/ ; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -max_len=8192 $$work >build-fuzz/$$n.log 2>&1 \
	  || { tail -50 build-fuzz/$$n.log; exit 1; }; done; echo "fuzz smoke: ok"

bench: all
	$(Q)bench/run.sh

clean:
	rm -rf $(BUILD) build-asan build-fuzz
