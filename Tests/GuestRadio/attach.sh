#!/bin/bash
# In the guest: the host's controller (behind the first virtio console) attached as hci0, powered.
modprobe hci_uart || exit 1
btattach -B /dev/hvc0 -P h4 >/tmp/btattach.log 2>&1 &
for _ in $(seq 200); do [ -e /sys/class/bluetooth/hci0 ] && break; sleep 0.05; done
[ -e /sys/class/bluetooth/hci0 ] || { echo "no hci0 after btattach: $(cat /tmp/btattach.log)"; exit 1; }
# The kernel runs the controller's set-up right after registering it; up waits for it.
for _ in $(seq 50); do hciconfig hci0 up 2>/dev/null && exit 0; sleep 0.1; done
hciconfig hci0 up
