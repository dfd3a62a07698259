"""The payload file `loyalty-bench` writes for the reference parsers: each payload (the AD structures of one
advertising report) preceded by one byte of length; and the one pass the reference scripts time over it."""
import time


def read_payloads(path, limit):
    """The first `limit` payloads of the file at `path`, as bytes."""
    payloads = []
    with open(path, "rb") as f:
        data = f.read()
    i = 0
    while i < len(data) and len(payloads) < limit:
        n = data[i]
        payloads.append(data[i + 1 : i + 1 + n])
        i += 1 + n
    return payloads


def print_pass(name, payloads, count_ibeacons):
    """Times one call of `count_ibeacons(payloads)` (the parser under test, its loop its own so that no call per
    payload is added to its time) and prints one line:
    `<name> <payloads> <seconds> <rate>/s <ibeacons> <cpu rate>/s`, the last from the process's CPU time."""
    start = time.perf_counter()
    cpu_start = time.process_time()
    beacons = count_ibeacons(payloads)
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    print(f"{name} {len(payloads)} {seconds:.3f} {len(payloads) / seconds:.0f} {beacons} {len(payloads) / cpu_seconds:.0f}")
