# loyalty: a new user runs `make demo` and `make test`; everything else is for developers.
SHELL := /bin/bash
APT_PACKAGES := libpq-dev libcurl4-openssl-dev libbluetooth-dev libdbus-1-dev libmicrohttpd-dev libsqlite3-dev \
                libqrencode-dev libssl-dev zlib1g-dev \
                postgresql pkg-config tshark gpsd gpsd-clients pgbouncer \
                systemd groff-base zsh fish
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_FLAGS ?=
# Release builds link the Swift runtime and Foundation into each program: their shared libraries cost every
# run about 10 MiB of memory to load and relocate (an empty program: 18 MiB against 8 MiB), and an installed
# program then runs without the Swift toolchain. Every release build takes the same flags, or each would
# rebuild the others' objects.
RELEASE := -c release --static-swift-stdlib
, := ,
# What single targets need beyond APT_PACKAGES: each target installs its own (MakeTargetTests checks it).
DEMO_PACKAGES := python3
FUZZ_PACKAGES := python3
BENCH_PACKAGES := python3 python3-pip wrk time gcc
CHECK_PACKAGES := python3 python3-pip wrk curl iproute2
INSTALL_PACKAGES := libcap2-bin

# $(call apt_install,PACKAGES[,FLAGS]): installs those of the Debian PACKAGES that are missing.
apt_install = @missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(2) $$missing; \
	fi
# $(call pip_install,PACKAGE,MODULE): installs the PyPI PACKAGE unless MODULE imports (into Debian's own
# Python too, which refuses plain pip installs: PEP 668).
pip_install = @python3 -c 'import $(2)' 2>/dev/null || python3 -m pip install -q $(1) 2>/dev/null \
	|| python3 -m pip install -q --break-system-packages $(1)

.PHONY: deps test-deps browser-deps build release test demo bench check fuzz clean install uninstall

# Install only the Debian packages that are missing.
deps:
	$(call apt_install,$(APT_PACKAGES))

# The live radio's guest (Tests/GuestRadio, LiveRadioTests): QEMU, the Debian kernel, static busybox, BlueZ's
# tools and daemon, Bumble (pinned: the peer corrects its controller emulation of this version), and Root-Canal
# (pinned: 1.11 needs glibc 2.39), the controller the H4 stream transports are tested against.
GUEST_PACKAGES := qemu-system-x86 linux-image-amd64 busybox-static bluez dbus xz-utils cpio kmod
# The guest's peer (Bumble), Root-Canal and the console's browser test are Python; GNU time measures the
# peak memory of the scans and syncs the memory-bound tests run. HAProxy and curl (from a loopback address of
# each client's own) put loyalty-server behind a balancer (BalancerTests); openssl makes the throwaway CA its TLS
# is tested with (TLSTests). strace counts the write calls a replay's output takes (StoreReplayTests). procps's
# pgrep finds what a hung run left (scripts/test.sh).
TEST_PACKAGES := python3 python3-pip time haproxy curl strace procps openssl
# Desktop notifications (NotificationTests, NotificationScreenTests): a private session bus, python-dbusmock's
# notification server (run by Debian's /usr/bin/python3, which has it), dunst under Xvfb with a screenshot
# (xwd, ImageMagick's convert), and desktop-file-validate for loyalty.desktop.
NOTIFY_PACKAGES := dbus python3-dbusmock dunst fonts-dejavu-core xvfb xauth x11-apps imagemagick desktop-file-utils
# A PostgreSQL high-availability cluster on this machine (PatroniCluster, ClusterFailoverTests): etcd for Patroni's
# leader key, Patroni, and HAProxy routing by Patroni's REST checks. make test runs one failover, make check more.
CLUSTER_PACKAGES := patroni etcd-server haproxy openssl
BUMBLE_VERSION := 0.0.236
ROOTCANAL_VERSION := 1.10.0
test-deps:
	$(call apt_install,$(TEST_PACKAGES))
	$(call apt_install,$(GUEST_PACKAGES),--no-install-recommends)
	$(call apt_install,$(NOTIFY_PACKAGES),--no-install-recommends)
	$(call apt_install,$(CLUSTER_PACKAGES),--no-install-recommends)
	@python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("bumble") != "$(BUMBLE_VERSION)")' 2>/dev/null \
	  || python3 -m pip install -q bumble==$(BUMBLE_VERSION)
	@python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("rootcanal") != "$(ROOTCANAL_VERSION)")' 2>/dev/null \
	  || python3 -m pip install -q rootcanal==$(ROOTCANAL_VERSION) 2>/dev/null \
	  || python3 -m pip install -q --break-system-packages rootcanal==$(ROOTCANAL_VERSION)
	$(call pip_install,beacontools,beacontools)

# The console's browser test (Tests/Browser): Debian's chromium and its driver, Selenium and axe-core from PyPI.
browser-deps:
	$(call apt_install,chromium chromium-driver,--no-install-recommends)
	$(call pip_install,selenium axe-selenium-python,selenium$(,) axe_selenium_python)

build: deps
	swift build $(SWIFT_FLAGS)

release: deps
	swift build $(RELEASE) $(SWIFT_FLAGS)

test: deps test-deps browser-deps
	swift build --build-tests $(SWIFT_FLAGS)
	scripts/test.sh $(SWIFT_FLAGS)

# The Matey's walk, end to end.
demo: deps
	$(call apt_install,$(DEMO_PACKAGES))
	swift build $(RELEASE) --product loyalty $(SWIFT_FLAGS)
	swift build $(RELEASE) --product loyalty-server $(SWIFT_FLAGS)
	scripts/demo.sh "$$(swift build $(RELEASE) --show-bin-path)"

# Speed and memory figures with their targets and ratios to the references (release build).
# BENCH="beacons client" runs only those sections (proximity, beacons, replay, server, pgbouncer, client, geo, json, retailer, radio;
# eddystone: only the replay's comparison of a store with a third Eddystone to the iBeacon-only store).
bench: deps
	$(call apt_install,$(BENCH_PACKAGES))
	$(call pip_install,beacontools,beacontools)
	$(call pip_install,bluetooth-data-tools,bluetooth_data_tools)
	swift build $(RELEASE) $(SWIFT_FLAGS)
	cc -O2 -o "$$(swift build $(RELEASE) --show-bin-path)/floor-server" Benchmarks/floor-server/floor.c -pthread \
	  $$(pkg-config --cflags --libs libmicrohttpd libpq)
	"$$(swift build $(RELEASE) --show-bin-path)/loyalty-bench" bench-data $(BENCH)

# libFuzzer targets (Fuzz/) for FUZZ_SECONDS each (default 60): executions and crashes per target.
fuzz: deps
	$(call apt_install,$(FUZZ_PACKAGES))
	scripts/fuzz.sh

# Everything that proves it holds, with bounded times: fuzzing, API fuzzing, faults, load, the server tests through
# PgBouncer, failovers of a Patroni cluster under load; a summary table.
# schemathesis is pinned so that a run is reproducible: each release adds checks, so move it forward on purpose.
SCHEMATHESIS_VERSION := 4.32.5
check: deps
	$(call apt_install,$(CHECK_PACKAGES))
	$(call apt_install,$(CLUSTER_PACKAGES),--no-install-recommends)
	@python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("schemathesis") != "$(SCHEMATHESIS_VERSION)")' 2>/dev/null \
	  || python3 -m pip install -q schemathesis==$(SCHEMATHESIS_VERSION) 2>/dev/null \
	  || python3 -m pip install -q --break-system-packages schemathesis==$(SCHEMATHESIS_VERSION)
	SCHEMATHESIS_VERSION=$(SCHEMATHESIS_VERSION) scripts/check.sh

# Release builds, man pages, bash/zsh/fish completions and the systemd unit into $(DESTDIR)$(PREFIX)
# (scripts/install.sh says what goes where). SETCAP=1 also gives loyalty the capabilities live scanning
# needs; without it the setcap command is printed. `make uninstall` with the same PREFIX/DESTDIR removes it all.
PREFIX ?= /usr/local
DESTDIR ?=
SETCAP ?= 0
install: deps
	$(call apt_install,$(INSTALL_PACKAGES))
	swift build $(RELEASE) --product loyalty $(SWIFT_FLAGS)
	swift build $(RELEASE) --product loyalty-server $(SWIFT_FLAGS)
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" SETCAP="$(SETCAP)" \
	  scripts/install.sh install "$$(swift build $(RELEASE) --show-bin-path)"

uninstall:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh uninstall

clean:
	rm -rf .build
