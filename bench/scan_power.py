"""What each `loyalty scan --power` profile costs and how soon it hears a beacon (issue 47), over an H4 Unix socket.

The script is the controller: it serves a Unix socket, answers `loyalty scan --hci unix:PATH --json --power P` as a
bare LE controller (legacy, no features) and keeps the scan parameters and enables it is sent. It then schedules
the scan windows those parameters ask for (a window of LE_Scan_Window at the start of each LE_Scan_Interval, from
the Scan Enable) and an iBeacon that starts advertising at a random moment, one advertising event every 100 ms plus
the 0-10 ms random delay the Core spec adds: an event is reported only when it falls inside a window, as a
controller that listens only then. Measured, per profile:
- duty: LE_Scan_Window / LE_Scan_Interval as the controller received them, and whether the scan is passive
  (LE_Scan_Type 0: no scan request ever goes to an advertiser);
- entry: seconds from the beacon's first advertising event to the scan's "enter" line (median and worst of RUNS);
- wake-ups: the scan's threads' voluntary context switches per second over QUIET seconds with nothing in range.
Arguments: the loyalty binary, runs (default 7), quiet seconds (default 20). Prints one JSON object per profile.
"""
import glob
import json
import os
import random
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time

UUID = bytes.fromhex("8f0c1ddc11e54a078910425941b072f9")
ADVERTISING_INTERVAL = 0.1


def report_event():
    """An LE Advertising Report event (H4) of Matey's 1:1 at -59 dBm measured power, heard at -60."""
    data = bytes([2, 1, 6, 26, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + UUID + bytes([0, 1, 0, 1, 0xC5])
    report = bytes([1, 0x03, 1]) + bytes([1, 2, 3, 4, 5, 0xC6]) + bytes([len(data)]) + data + bytes([0xC4])
    meta = bytes([0x02]) + report
    return bytes([0x04, 0x3E, len(meta)]) + meta


class Controller:
    def __init__(self, connection):
        self.connection = connection
        self.pending = b""
        self.parameters = None  # (type, interval, window)
        self.enabled_at = None

    def serve(self, seconds):
        """Answers commands for up to `seconds`; False when the scan has gone."""
        ready, _, _ = select.select([self.connection], [], [], max(0, seconds))
        if not ready:
            return True
        data = self.connection.recv(4096)
        if not data:
            return False
        self.pending += data
        while len(self.pending) >= 4 and len(self.pending) >= 4 + self.pending[3]:
            opcode = self.pending[1] | self.pending[2] << 8
            parameters = self.pending[4:4 + self.pending[3]]
            if opcode == 0x200B:
                self.parameters = (parameters[0], parameters[1] | parameters[2] << 8, parameters[3] | parameters[4] << 8)
            if opcode == 0x200C:
                self.enabled_at = time.monotonic() if parameters[0] == 1 else None
            returned = b"\x00" + bytes(8) if opcode == 0x2003 else b"\x00"
            self.connection.sendall(bytes([0x04, 0x0E, 3 + len(returned), 1, self.pending[1], self.pending[2]]) + returned)
            self.pending = self.pending[4 + self.pending[3]:]
        return True

    def listening(self, moment):
        if self.enabled_at is None or self.parameters is None:
            return False
        _, interval, window = self.parameters
        phase = (moment - self.enabled_at) % (interval * 0.000625)
        return phase < window * 0.000625


def voluntary_switches(pid):
    total = 0
    for status in glob.glob(f"/proc/{pid}/task/*/status"):
        with open(status) as lines:
            for line in lines:
                if line.startswith("voluntary_ctxt_switches:"):
                    total += int(line.split()[1])
    return total


def run_scan(binary, power, body):
    """Starts the scan on a fresh socket and home, calls body(controller, process, output), then stops it."""
    directory = tempfile.mkdtemp(prefix="scan-power-")
    path = os.path.join(directory, "h4.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)
    output = os.path.join(directory, "out.jsonl")
    environment = dict(os.environ, LOYALTY_HOME=os.path.join(directory, "home"), LOYALTY_SERVER="http://127.0.0.1:9")
    with open(output, "w") as out:
        process = subprocess.Popen(
            [binary, "scan", "--hci", "unix:" + path, "--json", "--power", power, "--offline"],
            stdout=out, stderr=subprocess.DEVNULL, env=environment)
    listener.settimeout(30)
    connection, _ = listener.accept()
    controller = Controller(connection)
    deadline = time.monotonic() + 30
    while controller.enabled_at is None and time.monotonic() < deadline:
        controller.serve(0.1)
    try:
        return body(controller, process, output)
    finally:
        process.terminate()
        while controller.serve(0.2):
            pass
        process.wait()
        connection.close()
        listener.close()


def entry_latency(controller, process, output):
    """Seconds from the beacon's first advertising event to the scan's enter line."""
    start = time.monotonic() + random.uniform(0.2, 2.0)
    next_event = start
    event = report_event()
    while time.monotonic() < start + 30:
        now = time.monotonic()
        if now >= next_event:
            if controller.listening(next_event):
                controller.connection.sendall(event)
            next_event += ADVERTISING_INTERVAL + random.uniform(0, 0.01)
        if not controller.serve(min(0.005, max(0, next_event - time.monotonic()))):
            return None
        with open(output) as lines:
            for line in lines:
                if '"event":"enter"' in line:
                    return time.monotonic() - start
    return None


def quiet_wakeups(seconds):
    def body(controller, process, output):
        controller.serve(2)
        before = voluntary_switches(process.pid)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            controller.serve(end - time.monotonic())
        return (voluntary_switches(process.pid) - before) / seconds
    return body


def main(binary, runs, quiet):
    for power in ["high", "balanced", "low"]:
        latencies = []
        parameters = None
        for _ in range(runs):
            def body(controller, process, output):
                return controller.parameters, entry_latency(controller, process, output)
            parameters, latency = run_scan(binary, power, body)
            latencies.append(latency)
        heard = [latency for latency in latencies if latency is not None]
        wakeups = run_scan(binary, power, quiet_wakeups(quiet))
        scan_type, interval, window = parameters
        print(json.dumps({
            "power": power, "passive": scan_type == 0, "interval_ms": interval * 0.625, "window_ms": window * 0.625,
            "duty": window / interval, "runs": runs, "entered": len(heard),
            "entry_median_s": statistics.median(heard) if heard else None, "entry_worst_s": max(heard) if heard else None,
            "wakeups_per_s": wakeups, "quiet_s": quiet,
        }), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 7, float(sys.argv[3]) if len(sys.argv) > 3 else 20)
