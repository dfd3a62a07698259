#!/usr/bin/env python3
"""Issue 41, item 4: `loyalty sync --all`'s peak memory (GNU time; the whole catalog's pages) against a server that
creates the account, then answers a catalog page of valid long offers that never ends (1 GiB, no length), or with `finite` one of 10,000
offers (24 MB; every GET gets it, so the seen pull after it fails).
usage: hostile-catalog.py LOYALTY_BINARY [finite]"""
import http.server, json, os, subprocess, sys, tempfile, threading, uuid
ACCOUNT = json.dumps({"account_id": str(uuid.uuid4()), "device_id": str(uuid.uuid4()), "device_token": "ld_canned"}).encode()
offer = json.dumps({"id": "%s", "retailer_id": str(uuid.uuid4()).upper(), "major": 1, "minor": 1, "title": "T" * 200,
                    "description": "d" * 2000, "per_shopper_limit": 1, "updated_at": "2026-01-01T00:00:00Z"})
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(201); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(ACCOUNT))); self.end_headers(); self.wfile.write(ACCOUNT)
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers()
        try:
            self.wfile.write(b'{"cursor":"x","full":true,"more":false,"server_time":"2026-01-01T00:00:00Z","retailers":[],"stores":[],"removed":[],"removed_stores":[],"offers":[')
            sent = 0
            chunk = ",".join(offer % str(uuid.uuid4()).upper() for _ in range(100)).encode()
            first = True
            for _ in range(100 if len(sys.argv) > 2 else 1 << 30):
                self.wfile.write((b"" if first else b",") + chunk); first = False; sent += len(chunk)
            if len(sys.argv) > 2: self.wfile.write(b']}')
        except (BrokenPipeError, ConnectionResetError): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
home = tempfile.mkdtemp()
env = dict(os.environ, LOYALTY_HOME=home, LOYALTY_SERVER=f"http://127.0.0.1:{server.server_port}")
subprocess.run([sys.argv[1], "account", "create"], env=env, capture_output=True)
run = subprocess.run(["/usr/bin/time", "-f", "peak %M KiB", sys.argv[1], "sync", "--all"], env=env, capture_output=True, text=True)
print(f"exit {run.returncode}; {run.stderr.strip().splitlines()[-1]}; {run.stderr.strip().splitlines()[0][:160]}")
