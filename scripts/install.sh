#!/usr/bin/env bash
# make install / make uninstall: the two programs, their man pages, bash/zsh/fish completions, the
# server's systemd unit, the scan's systemd user unit and loyalty's desktop entry (its notifications name it).
#   scripts/install.sh install BINDIR   BINDIR holds the built loyalty and loyalty-server
#   scripts/install.sh uninstall        removes exactly the files `install` writes, nothing else
# Environment: PREFIX (default /usr/local); DESTDIR (a staging root, default none); SYSCONFDIR (default
# /etc); SYSTEMDUNITDIR (default $PREFIX/lib/systemd/system); SYSTEMDUSERUNITDIR (default
# $PREFIX/lib/systemd/user); SETCAP=1 gives the installed loyalty the
# capabilities live scanning needs (otherwise the command is printed).
set -euo pipefail
usage="usage: $0 install BINDIR | uninstall"
action=${1:?$usage}
source_root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${PREFIX:-/usr/local}
destdir=${DESTDIR:-}
sysconfdir=${SYSCONFDIR:-/etc}
unitdir=${SYSTEMDUNITDIR:-$prefix/lib/systemd/system}
userunitdir=${SYSTEMDUSERUNITDIR:-$prefix/lib/systemd/user}
bindir=$prefix/bin
share=$prefix/share

# Every installed file: mode, destination, source. `uninstall` reads the destinations only.
manifest() {
  local built=$1 generated=$2
  cat <<EOF
755 $bindir/loyalty $built/loyalty
755 $bindir/loyalty-server $built/loyalty-server
644 $share/man/man1/loyalty.1 $source_root/man/loyalty.1
644 $share/man/man8/loyalty-server.8 $source_root/man/loyalty-server.8
644 $share/bash-completion/completions/loyalty $generated/loyalty.bash
644 $share/bash-completion/completions/loyalty-server $generated/loyalty-server.bash
644 $share/zsh/site-functions/_loyalty $generated/_loyalty
644 $share/zsh/site-functions/_loyalty-server $generated/_loyalty-server
644 $share/fish/vendor_completions.d/loyalty.fish $generated/loyalty.fish
644 $share/fish/vendor_completions.d/loyalty-server.fish $generated/loyalty-server.fish
644 $unitdir/loyalty-server.service $generated/loyalty-server.service
644 $userunitdir/loyalty-scan.service $generated/loyalty-scan.service
644 $share/applications/loyalty.desktop $source_root/desktop/loyalty.desktop
644 $sysconfdir/loyalty/loyalty-server.env.example $source_root/systemd/loyalty-server.env.example
EOF
}

install_all() {
  local built=${1:?$usage}
  for program in loyalty loyalty-server; do
    [ -x "$built/$program" ] || { echo "install: no $built/$program: build it first" >&2; exit 1; }
  done
  generated=$(mktemp -d)
  trap 'rm -rf "$generated"' EXIT
  # The completions come from each program's own command tree, so they offer exactly what it parses.
  for program in loyalty loyalty-server; do
    "$built/$program" --generate-completion-script bash >"$generated/$program.bash"
    "$built/$program" --generate-completion-script zsh >"$generated/_$program"
    "$built/$program" --generate-completion-script fish >"$generated/$program.fish"
  done
  for unit in loyalty-server loyalty-scan; do
    sed "s|@bindir@|$bindir|g" "$source_root/systemd/$unit.service.in" >"$generated/$unit.service"
  done

  echo "installing${destdir:+ under $destdir}:"
  manifest "$built" "$generated" | while read -r mode destination source; do
    # install(1) replaces the file instead of writing into it, so a running binary is no obstacle.
    install -D -m "$mode" "$source" "$destdir$destination"
    echo "  $destination"
  done

  local setcap=(setcap cap_net_raw,cap_net_admin+ep "$destdir$bindir/loyalty")
  echo
  if [ "${SETCAP:-0}" = 1 ]; then
    echo "SETCAP=1: ${setcap[*]}"
    "${setcap[@]}"
    echo "Any user who can run loyalty can now scan and advertise live."
  else
    echo "Live beacon scanning needs CAP_NET_RAW and CAP_NET_ADMIN. To scan without root, run"
    echo "    sudo ${setcap[*]}"
    echo "or install with 'make install SETCAP=1'. Any user who can run loyalty can then scan."
  fi
  echo
  echo "The server as a service: settings in $sysconfdir/loyalty/loyalty-server.env (start from the .example"
  echo "beside it, mode 0600), then: systemctl daemon-reload && systemctl enable --now loyalty-server"
  case $unitdir in
    /etc/systemd/system | /usr/lib/systemd/system | /lib/systemd/system | /usr/local/lib/systemd/system) ;;
    *) echo "Note: systemd does not look in $unitdir; install with SYSTEMDUNITDIR=/etc/systemd/system." ;;
  esac
  echo
  echo "The scan as your own service, offers as desktop notifications:"
  echo "    systemctl --user daemon-reload && systemctl --user enable --now loyalty-scan"
  echo "It needs the radio as above; 'loyalty doctor' says what applies (docs/USER-SERVICE.md)."
  case $userunitdir in
    /etc/systemd/user | /usr/lib/systemd/user | /lib/systemd/user | /usr/local/lib/systemd/user) ;;
    *) echo "Note: systemd --user does not look in $userunitdir; install with SYSTEMDUSERUNITDIR=/etc/systemd/user." ;;
  esac
}

uninstall_all() {
  if [ -L "$destdir/etc/systemd/system/multi-user.target.wants/loyalty-server.service" ]; then
    echo "loyalty-server.service is enabled: run 'systemctl disable --now loyalty-server' too."
  fi
  echo "removing${destdir:+ under $destdir}:"
  manifest "" "" | while read -r _ destination _; do
    if [ -e "$destdir$destination" ] || [ -L "$destdir$destination" ]; then
      rm -f "$destdir$destination"
      echo "  $destination"
    fi
  done
  # The directory is ours; a loyalty-server.env in it is the administrator's and stays.
  rmdir "$destdir$sysconfdir/loyalty" 2>/dev/null \
    || { [ -d "$destdir$sysconfdir/loyalty" ] && echo "kept $sysconfdir/loyalty: it holds files of yours"; } \
    || true
}

case $action in
  install) install_all "${2:-}" ;;
  uninstall) uninstall_all ;;
  *) echo "$usage" >&2; exit 64 ;;
esac
