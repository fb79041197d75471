# Every target installs the Debian packages it needs first (scripts/install-deps skips
# what is already there), so both commands work on a fresh Debian bookworm machine.
SWIFT ?= swift
ARGS ?=

.PHONY: run test build release deps bench clean

deps:
	@scripts/install-deps

build: deps
	$(SWIFT) build

# Built as the container image builds it (scripts/build-release): the binary measured is the one shipped.
release: deps
	@SWIFT="$(SWIFT)" scripts/build-release >/dev/null

# Serves on 127.0.0.1:6284 with the embedded SQLite store in ./data; extra flags via ARGS="...".
run: release
	./.build/release/gatehouse serve $(ARGS)

# The whole suite, in debug mode: some bugs (C lifetimes) only show there.
test:
	@scripts/install-deps --test
	$(SWIFT) test

bench: release
	GATEHOUSE_BIN=.build/release/gatehouse bench/http-baseline

clean:
	rm -rf .build
