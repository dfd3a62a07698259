"""Reference rate: Python beacontools parsing the same advertising payloads as `loyalty-bench`.

Input: a file of length-prefixed payloads (one byte length, then the AD structures), written by
`loyalty-bench`. Arguments: the file, how many of its payloads (default 100,000). Prints one line: `beacontools <payloads> <seconds> <rate>/s <ibeacons> <cpu rate>/s`,
the last from the process's CPU time (what it needs with a core to itself).
"""
import sys

from beacontools import parse_packet
from beacontools.packet_types import IBeaconAdvertisement

from payloads import print_pass, read_payloads


def count_ibeacons(payloads):
    beacons = 0
    for p in payloads:
        if isinstance(parse_packet(p), IBeaconAdvertisement):
            beacons += 1
    return beacons


def main(path, limit):
    print_pass("beacontools", read_payloads(path, limit), count_ibeacons)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100_000)
