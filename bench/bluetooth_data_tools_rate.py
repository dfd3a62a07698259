"""Reference rate: Home Assistant's bluetooth-data-tools (Cython) parsing the same advertising payloads as
`loyalty-bench`.

Its public entry points keep an LRU cache of parsed payloads, which a store's few dozen beacons would hit
almost every time; the rate here is of its uncached parser, `gap._uncached_parse_advertisement_bytes`,
the work the cache saves. Input: length-prefixed payloads as for beacontools_rate.py. Arguments: the file, how
many of its payloads (default 200,000). Prints one line:
`bluetooth-data-tools <payloads> <seconds> <rate>/s <ibeacons> <cpu rate>/s` (the last from the process's
CPU time).
"""
import sys

from bluetooth_data_tools import gap

from payloads import print_pass, read_payloads


def count_ibeacons(payloads):
    parse = gap._uncached_parse_advertisement_bytes
    beacons = 0
    for p in payloads:
        apple = parse(p)[3].get(76)
        if apple is not None and len(apple) == 23 and apple[0] == 2 and apple[1] == 0x15:
            beacons += 1
    return beacons


def main(path, limit):
    print_pass("bluetooth-data-tools", read_payloads(path, limit), count_ibeacons)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200_000)
