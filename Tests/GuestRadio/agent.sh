#!/bin/bash
# Stage 2 in the guest (the host's files under a tmpfs overlay): commands from the host on the second
# virtio console, one a line, "ID BASE64-COMMAND"; each runs under bash as root with its output in
# $results/ID.out and .err, and the answer is "done ID STATUS". End of input powers the guest off.
# Bluetooth stays unloaded until a test runs attach.sh. $results and $agent come from the kernel's
# command line (unknown name=value words become init's environment).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mkdir -p /dev/pts /root && mount -t devpts devpts /dev/pts
ip link set lo up
# /tmp stays the host's (under the overlay): the repository may be there.
# The results share, at the same path as on the host.
mkdir -p "$results"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results "$results"
modprobe virtio_console
for _ in $(seq 100); do [ -e /dev/hvc1 ] && break; sleep 0.02; done
control=/dev/hvc1
exec 3<>"$control"
stty raw -echo <&3
echo "ready $(cut -d' ' -f1 /proc/uptime)" >&3
while read -r id command <&3; do
    [ "$id" = poweroff ] && break
    bash -c "$(echo "$command" | base64 -d)" >"$results/$id.out" 2>"$results/$id.err" </dev/null
    echo "done $id $?" >&3
done
sync
poweroff -f
