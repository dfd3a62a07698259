#!/usr/bin/env python3
"""Issue 41: a real loyalty-server's memory (VmHWM growth) and time, on its embedded PostgreSQL.
fleet [OFFERS]: GET /v1/retailer/fleet?days=366, every page (item 1). near [OFFERS] [LOYALTY]: an area's pages of long
offers, then `loyalty sync --near` (item 2). unread [CONNECTIONS]: connections asking a 24 MB page, never reading
(item 3). import [ROWS]: another retailer's offer PUTs during a bulk import (item 15).
usage: measure-memory.py SERVER_BINARY fleet|near|unread|import [N] [LOYALTY_BINARY]"""
import json, os, socket, subprocess, sys, tempfile, time, urllib.request

binary, scenario = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 0
data = tempfile.mkdtemp(prefix="loyalty-measure-")
os.chmod(data, 0o755)
env = dict(os.environ, LOYALTY_ADMIN_TOKEN="operator-measure")
server = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--data-dir", data, "--no-rate-limits"],
                          stdout=subprocess.PIPE, stderr=open(os.path.join(data, "log"), "w"), env=env, text=True)
url = None
for line in server.stdout:
    if "listening on" in line:
        url = line.split("listening on ")[1].strip()
        break
port = int(url.rsplit(":", 1)[1])

def call(method, path, token=None, body=None, ctype="application/json", timeout=600):
    data_ = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data_, method=method)
    if token: request.add_header("Authorization", "Bearer " + token)
    if data_ is not None: request.add_header("Content-Type", ctype)
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return reply.status, reply.read(), dict(reply.headers)

def status(field):
    for line in open(f"/proc/{server.pid}/status"):
        if line.startswith(field + ":"): return int(line.split()[1]) // 1024
def reset_peak():
    with open(f"/proc/{server.pid}/clear_refs", "w") as f: f.write("5")

_, body, _ = call("POST", "/v1/retailers", "operator-measure", {"name": "Measure"})
key = json.loads(body)["api_key"]
_, body, _ = call("POST", "/v1/accounts", None, {})
device = json.loads(body)["device_token"]

def imported(rows, long=False):
    text = "x" * 2000 if long else ""
    for start in range(0, rows, 10_000):
        lines = ["major,minor,title,description"] + [
            f"{i // 60000 + 1},{i % 60000},{'T' * 200 if long else 'Offer %d' % i},{text}"
            for i in range(start, min(rows, start + 10_000))]
        call("POST", "/v1/retailer/offers/import", key, "\n".join(lines).encode(), "text/csv")

time.sleep(1)
base = status("VmRSS")
if scenario == "fleet":
    imported(count or 100_000)
    base = status("VmRSS"); reset_peak()
    started = time.monotonic()
    pages, beacons, largest, after = 0, 0, 0, None
    while True:
        _, body, _ = call("GET", "/v1/retailer/fleet?days=366" + (f"&after={after}" if after else ""), key)
        page = json.loads(body)
        pages += 1; beacons += len(page["beacons"]); largest = max(largest, len(body))
        after = page.get("next")
        if not after: break
        if pages == 1: first = time.monotonic() - started
    if pages == 1: first = time.monotonic() - started
    print(f"fleet days=366, {count or 100_000} offers: first page {first:.2f} s, {pages} pages {time.monotonic() - started:.2f} s, "
          f"{beacons} beacons, largest body {largest} bytes; server RSS {base} MiB before, peak growth {status('VmHWM') - base} MiB")
elif scenario == "near":
    call("PUT", "/v1/retailer/stores/s1", key, {"name": "Store", "latitude": 40.0, "longitude": 3.0, "radius_m": 50})
    imported(count or 30_000, long=True)
    base = status("VmRSS"); reset_peak()
    started = time.monotonic()
    pages, offers, largest, since = 0, 0, 0, None
    while True:
        code, body, headers = call("GET", "/v1/catalog?near=40.0,3.0&radius_km=1" + (f"&since={since}" if since else ""), device)
        page = json.loads(body)
        pages += 1; offers += len(page["offers"]); largest = max(largest, len(body))
        if not page["more"]: break
        since = page["cursor"]
    print(f"near page, {count or 30_000} long offers: {pages} pages, {offers} offers, largest body {largest} bytes, "
          f"{time.monotonic() - started:.2f} s; server RSS {base} MiB before, peak growth {status('VmHWM') - base} MiB")
    if len(sys.argv) > 4:
        home = tempfile.mkdtemp()
        cli_env = dict(os.environ, LOYALTY_HOME=home, LOYALTY_SERVER=url)
        subprocess.run([sys.argv[4], "account", "create"], env=cli_env, capture_output=True)
        run = subprocess.run(["/usr/bin/time", "-f", "peak %M KiB", sys.argv[4], "sync", "--all", "--near", "40.0,3.0",
                              "--radius-km", "1"], env=cli_env, capture_output=True, text=True)
        print(f"loyalty sync --all --near 40.0,3.0 --radius-km 1: exit {run.returncode}; {run.stderr.strip().splitlines()[-1]}; "
              f"{(run.stdout.strip().splitlines() or [''])[-1][:120]} {run.stderr.strip().splitlines()[0][:200]}")
elif scenario == "unread":
    imported(10_000, long=True)
    _, body, _ = call("GET", "/v1/catalog", device)
    page_bytes = len(body)
    connections = count or 32
    base = status("VmRSS"); reset_peak()
    sockets = []
    for _ in range(connections):
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096); s.connect(("127.0.0.1", port))
        s.sendall(f"GET /v1/catalog HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {device}\r\n\r\n".encode())
        sockets.append(s)
    # Until every connection has its answer's first bytes waiting (the handlers have all run), peeking only.
    started = time.monotonic()
    heads = []
    while time.monotonic() - started < 300:
        time.sleep(1)
        heads = []
        for s in sockets:
            try: heads.append(s.recv(12, socket.MSG_PEEK | socket.MSG_DONTWAIT))
            except BlockingIOError: pass
        if len(heads) == connections: break
    time.sleep(2)
    answered = sum(h.startswith(b"HTTP/1.1 200") for h in heads)
    print(f"{len(heads)} answered after {time.monotonic() - started:.0f} s: {answered} 200, {sum(h.startswith(b'HTTP/1.1 503') for h in heads)} 503")
    print(f"{connections} unread connections asking a {page_bytes}-byte page: {answered} answered 200; "
          f"server RSS {base} MiB before, {status('VmRSS') - base} MiB growth now, peak growth {status('VmHWM') - base} MiB")
    for s in sockets: s.close()
elif scenario == "import":
    import threading
    _, body, _ = call("POST", "/v1/retailers", "operator-measure", {"name": "Other"})
    other = json.loads(body)["api_key"]
    rows = count or 100_000
    csv = ("major,minor,title\n" + "\n".join(f"{i // 50000 + 1},{i % 50000},Offer {i}" for i in range(rows))).encode()
    finished = threading.Event()
    took = []
    def run():
        started = time.monotonic(); call("POST", "/v1/retailer/offers/import", key, csv, "text/csv"); took.append(time.monotonic() - started); finished.set()
    threading.Thread(target=run).start()
    slowest, puts = 0.0, 0
    while not finished.is_set():
        started = time.monotonic()
        call("PUT", f"/v1/retailer/offers/1/{puts % 100}", other, {"title": f"Put {puts}"})
        slowest = max(slowest, time.monotonic() - started); puts += 1
    print(f"import of {rows} rows took {took[0]:.2f} s; another retailer's {puts} PUTs meanwhile, the slowest {slowest:.3f} s")
server.terminate(); server.wait(timeout=60)
subprocess.run(["rm", "-rf", data])
