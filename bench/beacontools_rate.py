"""Reference rate: Python beacontools parsing the same advertising payloads as `loyalty-bench`.

Input: a file of length-prefixed payloads (one byte length, then the AD structures), written by
`loyalty-bench`. Arguments: the file, how many of its payloads (default 100,000), how many passes over them
(default 1). Prints one line a pass: `beacontools <payloads> <seconds> <rate>/s <ibeacons> <cpu rate>/s`,
the last from the process's CPU time (what it needs with a core to itself).
"""
import sys
import time

from beacontools import parse_packet
from beacontools.packet_types import IBeaconAdvertisement

from payloads import read_payloads


def main(path, limit, passes):
    payloads = read_payloads(path, limit)
    for _ in range(passes):
        start = time.perf_counter()
        cpu_start = time.process_time()
        beacons = 0
        for p in payloads:
            if isinstance(parse_packet(p), IBeaconAdvertisement):
                beacons += 1
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
        print(
            f"beacontools {len(payloads)} {seconds:.3f} {len(payloads) / seconds:.0f} {beacons} {len(payloads) / cpu_seconds:.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100_000, int(sys.argv[3]) if len(sys.argv) > 3 else 1)
