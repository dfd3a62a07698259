"""Reference rate: Python beacontools parsing the same advertising payloads as `loyalty-bench`.

Input: a file of length-prefixed payloads (one byte length, then the AD structures), written by
`loyalty-bench payloads`. Prints one line: `beacontools <payloads> <seconds> <rate>/s <ibeacons>`.
"""
import sys
import time

from beacontools import parse_packet
from beacontools.packet_types import IBeaconAdvertisement

from payloads import read_payloads


def main(path, limit):
    payloads = read_payloads(path, limit)
    start = time.perf_counter()
    beacons = 0
    for p in payloads:
        if isinstance(parse_packet(p), IBeaconAdvertisement):
            beacons += 1
    seconds = time.perf_counter() - start
    print(f"beacontools {len(payloads)} {seconds:.3f} {len(payloads) / seconds:.0f} {beacons}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100_000)
