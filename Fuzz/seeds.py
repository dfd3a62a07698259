#!/usr/bin/env python3
"""Seed corpora for the fuzz targets from the shared fixtures: HCI events split out of the captures,
advertising data from their reports and from vectors.json, small BTSnoop files, and request bodies."""
import hashlib
import json
import os
import struct
import sys

fixtures, out = sys.argv[1], sys.argv[2]


def put(target, data):
    directory = os.path.join(out, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def records(path):
    with open(path, "rb") as f:
        blob = f.read()
    offset = 16
    while offset + 24 <= len(blob):
        included = struct.unpack(">I", blob[offset + 4:offset + 8])[0]
        yield blob[offset + 24:offset + 24 + included]
        offset += 24 + included


def ad_data(event):
    """Advertising data of each report of a bare LE (extended) advertising report event."""
    if len(event) < 4 or event[0] != 0x3E:
        return
    cursor, subevent = 4, event[2]
    for _ in range(event[3]):
        if subevent == 0x02 and cursor + 9 <= len(event):
            length = event[cursor + 8]
            yield event[cursor + 9:cursor + 9 + length]
            cursor += 10 + length
        elif subevent == 0x0D and cursor + 24 <= len(event):
            length = event[cursor + 23]
            yield event[cursor + 24:cursor + 24 + length]
            cursor += 24 + length


captures = sorted(name for name in os.listdir(fixtures) if name.endswith(".btsnoop"))
for name in captures:
    path = os.path.join(fixtures, name)
    kept = 0
    for packet in records(path):
        if not packet or packet[0] != 0x04 or kept >= 200:
            continue  # events only (H4 type 4), a few hundred per capture
        kept += 1
        put("hci-event", packet)
        for data in ad_data(packet[1:]):
            put("advertising-data", data)
    # BTSnoop seeds: the header and the first records of each capture, so mutations reach the records.
    with open(path, "rb") as f:
        blob = f.read()
    end, count = 16, 0
    while end + 24 <= len(blob) and count < 40:
        end += 24 + struct.unpack(">I", blob[end + 4:end + 8])[0]
        count += 1
    put("btsnoop", blob[:end])

for vector in json.load(open(os.path.join(fixtures, "vectors.json"))):
    data = bytes.fromhex(vector["hex"])
    put("hci-event" if vector["input"] == "hci" else "advertising-data", data)

bodies = [
    (0, {"name": "Matey's", "uuid": "8F0C1DDC-11E5-4A07-8910-425941B072F9"}),
    (0, {"name": "Corner Shop"}),
    (1, {"title": "30% off sushi", "category": "food", "description": "at The Japanese Kitchen",
         "image_url": "https://example.com/sushi.png", "starts_at": "2026-01-01T00:00:00Z",
         "ends_at": "2026-12-31T23:59:59.500Z", "per_shopper_limit": 1, "total_limit": 100, "reshow_after_s": 3600}),
    (1, {"title": "x", "starts_at": None, "ends_at": "2030-01-01T00:00:00+02:00"}),
    (2, {"code": "ABCD-1234", "name": "tablet"}),
    (3, {"name": "phone"}),
    (3, {}),
    (4, {"items": [{"offer_id": "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "seen_at": "2026-01-31T09:00:00Z"}]}),
    (5, {"offer_id": "3F2504E0-4F89-11D3-9A0C-0305E82C3301"}),
]
for selector, body in bodies:
    put("request-body", bytes([selector]) + json.dumps(body).encode())

# PROXY protocol v2 headers as HAProxy's send-proxy-v2 writes them (IPv4, IPv6 with a TLV, a LOCAL health check),
# each followed by the request it precedes.
signature = bytes([0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A])
request = b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n"
ipv4 = bytes([192, 0, 2, 7, 127, 0, 0, 1, 0xC8, 0x01, 0x1F, 0x90])
ipv6 = bytes([0x20, 0x01, 0x0D, 0xB8] + [0] * 11 + [9] + [0] * 15 + [1, 0xC8, 0x01, 0x1F, 0x90]) + bytes([5, 0, 2, 0x61, 0x62])
for command, family, addresses in [(0x21, 0x11, ipv4), (0x21, 0x21, ipv6), (0x20, 0x00, b"")]:
    put("proxy-header", signature + bytes([command, family]) + len(addresses).to_bytes(2, "big") + addresses + request)
