#!/bin/bash
# Builds the guest's kernel and initramfs into OUT (default .build/guest-radio), once per kernel:
#   vmlinux        the Debian kernel's bzImage payload unpacked: an ELF with a PVH note, which QEMU boots
#                  directly (about 3.5 s to a shell instead of 8 s through the bzImage's decompressor)
#   initramfs.cpio.gz  static busybox, the virtio/9p/overlay modules and ./init
# Prints the kernel release. Needs linux-image-amd64, busybox-static, xz-utils, cpio and kmod.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-.build/guest-radio}
image=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
[ -n "$image" ] || { echo "no kernel in /boot: apt-get install linux-image-amd64" >&2; exit 69; }
release=${image#/boot/vmlinuz-}
[ -d "/lib/modules/$release" ] || { echo "no modules for $release in /lib/modules" >&2; exit 69; }
mkdir -p "$out"
stamp="$out/built-for"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$release $(md5sum < "$here/init")" ] \
    && [ -f "$out/vmlinux" ] && [ -f "$out/initramfs.cpio.gz" ]; then
    echo "$release"; exit 0
fi
offset=$(LC_ALL=C grep -obUa $'\xfd7zXZ' "$image" | head -1 | cut -d: -f1)
[ -n "$offset" ] || { echo "$image has no xz payload" >&2; exit 69; }
tail -c +$((offset + 1)) "$image" | xz -dc --single-stream > "$out/vmlinux.new" 2>/dev/null || true
[ "$(head -c 4 "$out/vmlinux.new" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] \
    || { echo "$image: the payload is not an ELF" >&2; exit 69; }
mv "$out/vmlinux.new" "$out/vmlinux"

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/bin" "$tree/proc" "$tree/sys" "$tree/dev" "$tree/lib/modules"
cp /bin/busybox "$tree/bin/busybox"
file "$tree/bin/busybox" 2>/dev/null | grep -q 'statically linked' || ldd /bin/busybox 2>&1 | grep -q 'not a dynamic' \
    || { echo "/bin/busybox is not static: apt-get install busybox-static" >&2; exit 69; }
: > "$tree/modules"
for module in virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -S "$release" --show-depends "$module" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r path; do
    cp "$path" "$tree/lib/modules/"
    echo "/lib/modules/$(basename "$path")" >> "$tree/modules"
done
cp "$here/init" "$tree/init"
(cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initramfs.cpio.gz"
echo "$release $(md5sum < "$here/init")" > "$stamp"
echo "$release"
