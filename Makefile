# loyalty: a new user runs `make demo` and `make test`; everything else is for developers.
SHELL := /bin/bash
APT_PACKAGES := libpq-dev libcurl4-openssl-dev libbluetooth-dev libdbus-1-dev libmicrohttpd-dev libsqlite3-dev \
                libqrencode-dev \
                postgresql pkg-config tshark gpsd gpsd-clients pgbouncer \
                systemd groff-base zsh fish
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_FLAGS ?=

.PHONY: deps test-deps browser-deps build release test demo bench check fuzz clean install uninstall

# Install only the Debian packages that are missing.
deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# The live radio's guest (Tests/GuestRadio, LiveRadioTests): QEMU, the Debian kernel, static busybox, BlueZ's
# tools and daemon, Bumble (pinned: the peer corrects its controller emulation of this version), and Root-Canal
# (pinned: 1.11 needs glibc 2.39), the controller the H4 stream transports are tested against.
GUEST_PACKAGES := qemu-system-x86 linux-image-amd64 busybox-static bluez dbus xz-utils cpio kmod
BUMBLE_VERSION := 0.0.236
ROOTCANAL_VERSION := 1.10.0
test-deps:
	@missing=$$(for p in $(GUEST_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("bumble") != "$(BUMBLE_VERSION)")' 2>/dev/null \
	  || python3 -m pip install -q bumble==$(BUMBLE_VERSION)
	@python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("rootcanal") != "$(ROOTCANAL_VERSION)")' 2>/dev/null \
	  || python3 -m pip install -q rootcanal==$(ROOTCANAL_VERSION)

# The console's browser test (Tests/Browser): Debian's chromium and its driver, Selenium and axe-core from PyPI.
browser-deps:
	@missing=$$(for p in chromium chromium-driver; do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@python3 -c 'import selenium, axe_selenium_python' 2>/dev/null || python3 -m pip install -q selenium axe-selenium-python

build: deps
	swift build $(SWIFT_FLAGS)

release: deps
	swift build -c release $(SWIFT_FLAGS)

test: deps test-deps browser-deps
	swift build --build-tests $(SWIFT_FLAGS)
	swift test --skip-build $(SWIFT_FLAGS)

# The Matey's walk, end to end.
demo: deps
	swift build -c release --product loyalty $(SWIFT_FLAGS)
	swift build -c release --product loyalty-server $(SWIFT_FLAGS)
	scripts/demo.sh "$$(swift build -c release --show-bin-path)"

# Speed and memory figures with their targets and ratios to the references (release build).
# BENCH="beacons client" runs only those sections (proximity, beacons, replay, server, pgbouncer, client, geo, json, retailer).
bench: deps
	@python3 -c 'import beacontools' 2>/dev/null || python3 -m pip install -q beacontools
	@python3 -c 'import bluetooth_data_tools' 2>/dev/null || python3 -m pip install -q bluetooth-data-tools
	@missing=$$(for p in wrk time; do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; fi
	swift build -c release $(SWIFT_FLAGS)
	"$$(swift build -c release --show-bin-path)/loyalty-bench" bench-data $(BENCH)

# libFuzzer targets (Fuzz/) for FUZZ_SECONDS each (default 60): executions and crashes per target.
fuzz: deps
	scripts/fuzz.sh

# Everything that proves it holds, with bounded times: fuzzing, API fuzzing, faults, load, the server tests through
# PgBouncer; a summary table.
check: deps
	scripts/check.sh

# Release builds, man pages, bash/zsh/fish completions and the systemd unit into $(DESTDIR)$(PREFIX)
# (scripts/install.sh says what goes where). SETCAP=1 also gives loyalty the capabilities live scanning
# needs; without it the setcap command is printed. `make uninstall` with the same PREFIX/DESTDIR removes it all.
PREFIX ?= /usr/local
DESTDIR ?=
SETCAP ?= 0
install: deps
	swift build -c release --product loyalty $(SWIFT_FLAGS)
	swift build -c release --product loyalty-server $(SWIFT_FLAGS)
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" SETCAP="$(SETCAP)" \
	  scripts/install.sh install "$$(swift build -c release --show-bin-path)"

uninstall:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh uninstall

clean:
	rm -rf .build
