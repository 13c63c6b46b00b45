# hayate — one build. `make run` installs missing Debian packages, builds and serves on :8080;
# `make test` builds and runs every test (unit + integration). See README.md.
CC ?= cc
BUILD ?= build
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

PKGS := libpcre2-8 libssl libcrypto zlib libbrotlienc libzstd libdeflate libcrypt libnghttp2
DEP_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
DEP_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

OPT ?= -O2
WERROR ?= -Werror
SAN ?=
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g $(OPT) -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
  -Wno-unused-parameter -Werror=implicit-function-declaration -Werror=incompatible-pointer-types -fno-strict-aliasing
ALL_CFLAGS := -Isrc $(CFLAGS_BASE) $(WERROR) $(SAN) $(DEP_CFLAGS) $(CFLAGS) -DHY_CC='"$(shell $(CC) --version | head -1)"'
# `make install` builds in build-install with the compiled-in paths of the install layout (core/paths.h); a
# development build has none (its prefix is the checkout).
ifdef HY_INSTALL_PATHS
ALL_CFLAGS += -include $(BUILD)/gen/paths.h
$(OBJ) $(BUILD)/src/main.o: | $(BUILD)/gen/paths.h
endif
ALL_LDFLAGS := $(SAN) $(LDFLAGS)

SRC := $(filter-out src/main.c,$(wildcard src/*/*.c))
OBJ := $(SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/default_conf.o
LIB := $(BUILD)/libhayate.a
BIN := $(BUILD)/hayate
UNIT_SRC := $(wildcard tests/unit/*/*_test.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all run test unit integration bench deps deps-test clean fuzz fuzz-build fuzz-smoke asan coverage soak lib install deb FORCE

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
DEPS_BUILD := build-essential pkg-config libpcre2-dev libssl-dev zlib1g-dev libbrotli-dev libzstd-dev libdeflate-dev libcrypt-dev libnghttp2-dev
DEPS_TEST := python3 python3-pytest python3-h2 python3-brotli python3-zstandard curl apache2-utils sslscan testssl.sh gcovr iproute2 prometheus whois nghttp2-client php8.2-fpm uwsgi-core uwsgi-plugin-python3 gunicorn nginx memcached
DEPS_FUZZ := clang libclang-rt-14-dev
deps:
	$(Q)tools/install-deps.sh $(DEPS_BUILD)
deps-test:
	$(Q)tools/install-deps.sh $(DEPS_BUILD) $(DEPS_TEST)

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(BIN) -p $(CURDIR)/ -g 'daemon off;'

unit: $(UNIT_BIN)
	$(Q)/usr/bin/python3 tools/layers.py src
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

# Line and branch coverage of unit + integration tests: gcc --coverage into build-cov (workers flush their
# counters before _exit, see src/core/coverage.h), then gcovr's per-file tables (lines, then branches).
COV_GCOVR := gcovr -r $(CURDIR) --object-directory $(CURDIR)/build-cov --filter '$(CURDIR)/src/' \
  --exclude-unreachable-branches --exclude-throw-branches
coverage: deps-test
	$(Q)find build-cov -name '*.gcda' -delete 2>/dev/null || true
	$(Q)rc=0; $(MAKE) --no-print-directory BUILD=build-cov OPT=-O0 SAN=--coverage CFLAGS=-DHY_COVERAGE \
	  all unit integration || rc=$$?; \
	  $(COV_GCOVR) --print-summary && $(COV_GCOVR) --branches | tail -n +4; exit $$rc

# libFuzzer drivers: one file tests/fuzz/NAME_fuzz.c (+ seeds in tests/fuzz/corpus/NAME_fuzz/) is a driver.
# `make fuzz-build` builds them all; `make fuzz TARGET=NAME [FUZZ_SECONDS=N]` runs one (NAME or NAME_fuzz) for N
# seconds (default 600), `make fuzz` without TARGET runs each in turn; `make fuzz-smoke` (CI) runs each for
# FUZZ_SECONDS (default 30). The growing corpus lives in build-fuzz/corpus/NAME_fuzz; crashes land in build-fuzz/.
# Sanitizer soak (CI): a few thousand mixed keep-alive, pipelined, malformed and abandoned connections against
# the ASan+UBSan build, then SIGQUIT; fails on a non-zero exit or any sanitizer/leak report (tests/soak/soak.py).
SOAK_CONNS ?= 4000
soak:
	$(Q)$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" all
	$(Q)HY_BIN=$(abspath build-asan/hayate) /usr/bin/python3 tests/soak/soak.py --conns $(SOAK_CONNS) --seconds 300

FUZZ_SRC := $(wildcard tests/fuzz/*_fuzz.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
build-fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h FORCE
	$(Q)tools/install-deps.sh $(DEPS_BUILD) $(DEPS_FUZZ)
	$(Q)$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang OPT=-O1 \
	  SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" lib
	$(Q)if [ ! -e $@ ] || [ -n "$$(find $< tests/fuzz/fuzz.h build-fuzz/libhayate.a -newer $@)" ]; then \
	  echo "  FUZZ $@"; clang $(CFLAGS_BASE) $(DEP_CFLAGS) -O1 -fsanitize=fuzzer,address,undefined -Isrc \
	  -o $@ $< build-fuzz/libhayate.a $(DEP_LIBS); fi
FORCE:
lib: $(LIB)
	@:
fuzz-build: $(FUZZ_BIN)
FUZZ_TARGETS = $(if $(TARGET),build-fuzz/$(patsubst %_fuzz,%,$(TARGET))_fuzz,$(FUZZ_BIN))
# run-fuzz SECONDS: run each of $(FUZZ_TARGETS) from its seeds for SECONDS; the last stats line is printed
define run-fuzz
	$(Q)for f in $(FUZZ_TARGETS); do n=$$(basename $$f); echo "== fuzz $$n ($(1)s)"; \
	  [ -x $$f ] || { echo "no driver $$f (have: $(notdir $(FUZZ_BIN)))"; exit 1; }; \
	  work=build-fuzz/corpus/$$n; mkdir -p $$work; \
	  [ -d tests/fuzz/corpus/$$n ] && cp -r tests/fuzz/corpus/$$n/. $$work/ ; \
	  $$f -max_total_time=$(1) -max_len=8192 -artifact_prefix=build-fuzz/$$n- $$work >build-fuzz/$$n.log 2>&1 \
	  || { tail -50 build-fuzz/$$n.log; exit 1; }; grep -E '^#[0-9]+' build-fuzz/$$n.log | tail -1; done
endef
fuzz: fuzz-build
	$(call run-fuzz,$(or $(FUZZ_SECONDS),600))
fuzz-smoke: fuzz-build
	$(call run-fuzz,$(or $(FUZZ_SECONDS),30))
	@echo "fuzz smoke: ok"

bench: all
	$(Q)bench/run.sh
	$(Q)bench/proxy.sh
	$(Q)bench/apps.sh

# ---------------------------------------------------------------- installation
# PREFIX=/usr: /usr/sbin/hayate, /etc/hayate/hayate.conf (+ mime.types, params, charset maps), /var/log/hayate, /run/hayate.pid,
# /usr/share/hayate/html, hayate(8), the systemd unit, /etc/logrotate.d/hayate. DESTDIR stages it elsewhere.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
DATADIR ?= $(PREFIX)/share/hayate
MANDIR ?= $(PREFIX)/share/man
LOGDIR ?= /var/log/hayate
PIDFILE ?= /run/hayate.pid
UNITDIR ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
VERSION := $(shell sed -n 's/^\#define HY_VERSION "\(.*\)"/\1/p' src/core/hayate.h)
INSTALL_BUILD := build-install
SUBST := sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' \
  -e 's|@LOGDIR@|$(LOGDIR)|g' -e 's|@PIDFILE@|$(PIDFILE)|g' -e 's|@VERSION@|$(VERSION)|g' \
  -e 's|@PREFIX@|$(DATADIR)/|g' -e 's|@CONF@|$(SYSCONFDIR)/hayate/hayate.conf|g' -e 's|@PID@|$(PIDFILE)|g' \
  -e 's|@ERROR_LOG@|$(LOGDIR)/error.log|g' -e 's|@HTTP_LOG@|$(LOGDIR)/access.log|g'

# rewritten only when the paths change, so objects rebuild exactly then
$(BUILD)/gen/paths.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define HY_PATH_PREFIX "%s/"\n#define HY_PATH_CONF "%s"\n#define HY_PATH_ERROR_LOG "%s"\n#define HY_PATH_HTTP_LOG "%s"\n#define HY_PATH_PID "%s"\n' \
	  '$(DATADIR)' '$(SYSCONFDIR)/hayate/hayate.conf' '$(LOGDIR)/error.log' '$(LOGDIR)/access.log' '$(PIDFILE)' >$@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
FORCE:

install:
	$(Q)$(MAKE) --no-print-directory BUILD=$(INSTALL_BUILD) HY_INSTALL_PATHS=1 PREFIX=$(PREFIX) SYSCONFDIR=$(SYSCONFDIR) \
	  DATADIR=$(DATADIR) LOGDIR=$(LOGDIR) PIDFILE=$(PIDFILE) $(INSTALL_BUILD)/hayate
	install -D -m 0755 $(INSTALL_BUILD)/hayate $(DESTDIR)$(SBINDIR)/hayate
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/hayate/conf.d $(DESTDIR)$(DATADIR)/html $(DESTDIR)$(MANDIR)/man8 \
	  $(DESTDIR)$(UNITDIR) $(DESTDIR)/etc/logrotate.d
	install -d -m 0755 $(DESTDIR)$(LOGDIR)
	install -m 0644 conf/mime.types conf/koi-win conf/koi-utf conf/win-utf conf/fastcgi_params conf/fastcgi.conf \
	  conf/scgi_params conf/uwsgi_params $(DESTDIR)$(SYSCONFDIR)/hayate/
	[ -e $(DESTDIR)$(SYSCONFDIR)/hayate/hayate.conf ] || \
	  $(SUBST) dist/hayate.conf >$(DESTDIR)$(SYSCONFDIR)/hayate/hayate.conf
	install -m 0644 html/index.html $(DESTDIR)$(DATADIR)/html/
	$(SUBST) dist/hayate.8.in >$(DESTDIR)$(MANDIR)/man8/hayate.8
	$(SUBST) dist/hayate.service.in >$(DESTDIR)$(UNITDIR)/hayate.service
	$(SUBST) dist/hayate.logrotate.in >$(DESTDIR)/etc/logrotate.d/hayate

# A Debian package (debhelper): dist/debian becomes debian/ in a copy of the tree; the .deb lands in build-deb/.
deb:
	$(Q)tools/install-deps.sh $(DEPS_BUILD) debhelper
	$(Q)rm -rf build-deb && mkdir -p build-deb/hayate-$(VERSION)
	$(Q)git ls-files -z | grep -zv '^dist/debian/' | xargs -0 cp --parents -t build-deb/hayate-$(VERSION)
	$(Q)cp -r dist/debian build-deb/hayate-$(VERSION)/debian
	$(Q)cd build-deb/hayate-$(VERSION) && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || { tail -40 ../build.log; exit 1; }
	$(Q)ls build-deb/*.deb

clean:
	rm -rf $(BUILD) build-asan build-fuzz build-install build-deb build-cov
