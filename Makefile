# llmload: the one entry point. `make` builds build/llmload.
#   make demo         install deps if root, build, start the sim, sweep it
#   make demo-distributed  the same sweep as 4 mpirun shards, merged (not in make test)
#   make test         install deps if root, build, run unit then integration tests
#                     (INTEG_JOBS=N integration jobs at a time, default 4)
#   make check-layers each #include goes where src/<layer>/README.md allows
#   make format       clang-format the C lines you changed (against HEAD)
#   make check-format fail on a changed line (since .clang-format came) not so formatted
#   make check-asan   the whole suite under AddressSanitizer + UBSan (build-asan/)
#   make valgrind     unit tests under valgrind, leak-checked
#   make fuzz         each libFuzzer target for FUZZ_TIME seconds (clang)
#   make check-docs   man pages and completion agree with every --help; install puts them
#   make install PREFIX=/usr/local [DESTDIR=...]  binary, man pages, bash and zsh completion

CC       ?= cc
PREFIX   ?= /usr/local
BUILD    ?= build
SANITIZE ?=
FUZZ_TIME ?= 60
PKGS     := libcurl jansson libpng libjpeg

VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
CFLAGS  ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Isrc \
           -DLL_VERSION='"$(VERSION)"' $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LIBS    := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -lpthread
TEST_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS    += -fsanitize=$(SANITIZE)
endif

SRC      := $(wildcard src/*/*.c)
LIB_SRC  := $(filter-out src/cli/main.c,$(SRC))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/src/cli/main.o
LIB      := $(BUILD)/libllmload.a
BIN      := $(BUILD)/llmload
# Man pages and bash/zsh completion, typeset from the binary's own --help
# texts (docs/man.md), so they say what --help says. The stamp stands for
# the whole tree under $(DOCS_OUT), which the script replaces at once.
DOCS_OUT := $(BUILD)/share
GEN_DOCS := $(DOCS_OUT)/.stamp

UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
INTEG_SRC  := $(wildcard tests/integration/test_*.c)
INTEG_BIN  := $(INTEG_SRC:tests/integration/%.c=$(BUILD)/tests/integration/%)
INTEG_HARNESS := $(BUILD)/tests/integration/harness.o
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)

check-layers:
	@sh scripts/check-layers.sh src

format:
	@sh scripts/format.sh

check-format: deps
	@sh scripts/format.sh --check

.PHONY: check-layers format check-format check-report all lib deps test tests-build unit integration check-asan valgrind fuzz fuzz-build demo demo-distributed install clean gen-docs check-docs

all: $(BIN) $(GEN_DOCS)

lib: $(LIB)

deps:
	@sh scripts/install-deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# Objects that print the version are rebuilt when `git describe` changes.
VERSION_FILE := $(BUILD)/version.txt
$(shell mkdir -p $(BUILD); echo '$(VERSION)' | cmp -s - $(VERSION_FILE) 2>/dev/null || \
    echo '$(VERSION)' > $(VERSION_FILE))
VERSION_USERS := $(patsubst %.c,$(BUILD)/%.o,$(shell grep -l LL_VERSION src/*/*.c))
$(VERSION_USERS): $(VERSION_FILE)

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(MAIN_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(MAIN_OBJ) $(LIB) $(LIBS)

# testutil.c: the helpers every unit test may share, linked into each;
# decodertest.c: the decoders' tests' own, linked the same way.
UNIT_UTIL := $(BUILD)/tests/unit/testutil.o $(BUILD)/tests/unit/decodertest.o

$(BUILD)/tests/unit/testutil.o: tests/unit/testutil.c tests/unit/testutil.h tests/unit/test.h
$(BUILD)/tests/unit/decodertest.o: tests/unit/decodertest.c tests/unit/decodertest.h \
    tests/unit/testutil.h tests/unit/test.h
$(UNIT_UTIL):
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -Itests/unit -c $< -o $@

$(BUILD)/tests/unit/%: tests/unit/%.c $(UNIT_UTIL) $(LIB) tests/unit/test.h tests/unit/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -Itests/unit $(LDFLAGS) -o $@ $< $(UNIT_UTIL) $(LIB) $(LIBS) $(TEST_LIBS)

# test_record checks requests.jsonl's keys against docs/formats.md's table,
# which it opens by this path, so it runs from any directory (private: the
# library and helpers it links are built without it).
$(BUILD)/tests/unit/test_record: private ALL_CFLAGS += -DLL_FORMATS_MD='"$(abspath docs/formats.md)"'

$(INTEG_HARNESS): tests/integration/harness.c tests/integration/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -Itests/unit -c $< -o $@

$(BUILD)/tests/integration/%: tests/integration/%.c $(INTEG_HARNESS) $(LIB) tests/unit/test.h \
    tests/integration/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -Itests/unit -Itests/integration $(LDFLAGS) -o $@ $< \
	    $(INTEG_HARNESS) $(LIB) $(LIBS) $(TEST_LIBS)

unit: $(UNIT_BIN)
	@fail=0; for t in $(UNIT_BIN); do \
	    echo "== $$t"; $$t || fail=1; \
	done; exit $$fail

# Run again with every request on libcurl (docs/http-client.md): the
# hostile-server matrix and the measurement tests must hold for both clients,
# and so must the spreading over several --url, whose connections each client
# keeps per endpoint (check-asan reruns the matrix only, to keep CI's time down).
INTEG_CURL := $(BUILD)/tests/integration/test_hostile $(BUILD)/tests/integration/test_run \
    $(BUILD)/tests/integration/test_endpoints

INTEG_JOBS ?= 4

integration: $(BIN) $(INTEG_BIN)
	@INTEG_JOBS=$(INTEG_JOBS) LLMLOAD_BIN=$(abspath $(BIN)) LLMLOAD_DATA=$(abspath tests/data) \
	    bash tests/integration/run.sh --curl $(INTEG_CURL) -- $(INTEG_BIN)

# Builds use every core; the tests then run as `unit` and `integration` say.
NPROC := $(shell nproc 2>/dev/null || echo 2)

tests-build: $(BIN) $(UNIT_BIN) $(INTEG_BIN)

test: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all tests-build
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory check-docs
	@$(MAKE) --no-print-directory integration

# A sanitizer report exits 86, not 1: an integration test that accepts
# exit 1 (an INVALID run) must not take a heap error for one.
check-asan: deps
	@$(MAKE) --no-print-directory -j$(NPROC) BUILD=build-asan SANITIZE=address,undefined \
	    CC=clang tests-build
	@LLMLOAD_SANITIZED=1 ASAN_OPTIONS=exitcode=86 UBSAN_OPTIONS=exitcode=86:print_stacktrace=1 \
	    $(MAKE) --no-print-directory BUILD=build-asan SANITIZE=address,undefined \
	    CC=clang INTEG_CURL=build-asan/tests/integration/test_hostile unit integration

# Chromium only here, not in deps: a build and its tests do not need it.
check-report: deps
	@sh scripts/install-deps.sh chromium fonts-dejavu-core || \
	    echo "check-report: chromium could not be installed (not root?)" >&2
	@sh tests/report-screenshot.sh

valgrind: deps
	@$(MAKE) --no-print-directory $(UNIT_BIN)
	@fail=0; for t in $(UNIT_BIN); do \
	    echo "== valgrind $$t"; \
	    valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
	        --error-exitcode=99 $$t >/dev/null || fail=1; \
	done; exit $$fail

# Fuzz targets link an archive built once with clang's fuzzer
# instrumentation (build-fuzz/), instead of recompiling every source per target.
FUZZ_BUILD := build-fuzz
FUZZ_LIB   := $(FUZZ_BUILD)/libllmload.a
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined

ifneq ($(BUILD),$(FUZZ_BUILD))
$(FUZZ_LIB): $(LIB_SRC)
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang CFLAGS="-O1 -g $(FUZZ_FLAGS)" lib
endif

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzzutil.h $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Isrc $(shell pkg-config --cflags $(PKGS) 2>/dev/null) \
	    -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_LIB) $(LIBS)

fuzz-build: $(FUZZ_BIN)

fuzz: deps
	@$(MAKE) --no-print-directory -j$(NPROC) fuzz-build
	@fail=0; for f in $(FUZZ_BIN); do \
	    n=$$(basename $$f); corpus=$(BUILD)/fuzz/corpus-$$n; mkdir -p $$corpus; \
	    echo "== $$n for $(FUZZ_TIME)s"; \
	    $$f -max_total_time=$(FUZZ_TIME) -print_final_stats=0 $$corpus tests/data/fuzz/$$n \
	        2>$(BUILD)/fuzz/$$n.log || { tail -40 $(BUILD)/fuzz/$$n.log; fail=1; }; \
	done; exit $$fail

# Man pages and bash/zsh completion (DOCS_OUT, GEN_DOCS: see above).
$(GEN_DOCS): $(BIN) scripts/gen-docs.sh scripts/help2man.awk scripts/help2comp.awk
	sh scripts/gen-docs.sh $(BIN) $(DOCS_OUT)
	@touch $@

gen-docs: $(GEN_DOCS)

check-docs: $(GEN_DOCS)
	@MAKE="$(MAKE)" sh tests/docs/check-docs.sh $(BIN) $(DOCS_OUT)

demo: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/demo.sh $(BIN)

demo-distributed: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/demo-distributed.sh $(BIN)

install: $(BIN) $(GEN_DOCS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	    $(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/llmload
	install -m 0644 $(DOCS_OUT)/man/man1/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 $(DOCS_OUT)/bash-completion/completions/llmload \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions/llmload
	install -m 0644 $(DOCS_OUT)/zsh/site-functions/_llmload \
	    $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_llmload

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
