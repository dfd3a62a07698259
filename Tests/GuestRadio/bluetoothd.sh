#!/bin/bash
# In the guest: the system bus and bluetoothd managing hci0, as on a desktop; waits until it answers. Arguments go to
# bluetoothd (-E: its experimental interfaces, AdvertisementMonitorManager1 among them).
mkdir -p /run/dbus
pidof dbus-daemon >/dev/null || dbus-daemon --system --fork
/usr/libexec/bluetooth/bluetoothd -n "$@" >/tmp/bluetoothd.log 2>&1 &
for _ in $(seq 100); do bluetoothctl show 2>/dev/null | grep -q 'Powered: yes' && exit 0; sleep 0.1; done
echo "bluetoothd did not come up: $(cat /tmp/bluetoothd.log)"
exit 1
