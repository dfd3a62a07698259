#!/usr/bin/env python3
"""Creates retailers with offers and shopper accounts on a live loyalty-server and prints their
credentials as JSON: {"retailers": [{"key", "uuid", "offers": [{"id", "major", "minor", "per_shopper_limit",
"total_limit"}]}], "devices": ["ld_..."]}. Every device has seen every offer, as after a walk through each shop:
the server redeems only offers in the account's seen set. Used by `make check` to prepare tokens before fuzzing
and load."""
import datetime
import argparse
import json
import urllib.request


def call(base, method, path, token, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", "Bearer " + token)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


parser = argparse.ArgumentParser()
parser.add_argument("url")
parser.add_argument("admin_token")
parser.add_argument("--retailers", type=int, default=1)
parser.add_argument("--offers", type=int, default=1, help="offers per retailer")
parser.add_argument("--devices", type=int, default=1, help="shopper accounts, one device each")
parser.add_argument("--per-shopper-limit", type=int, default=2)
parser.add_argument("--total-limit", type=int, default=50)
arguments = parser.parse_args()

result = {"retailers": [], "devices": []}
for r in range(arguments.retailers):
    retailer = call(arguments.url, "POST", "/v1/retailers", arguments.admin_token, {"name": "Check retailer %d" % r})
    offers = []
    for o in range(arguments.offers):
        major, minor = 1 + o // 100, 1 + o % 100
        draft = {"title": "Offer %d of retailer %d" % (o, r), "category": "food" if o % 2 else "clothing",
                 "per_shopper_limit": arguments.per_shopper_limit, "total_limit": arguments.total_limit}
        offer = call(arguments.url, "PUT", "/v1/retailer/offers/%d/%d" % (major, minor), retailer["api_key"], draft)
        offers.append({"id": offer["id"], "major": major, "minor": minor,
                       "per_shopper_limit": arguments.per_shopper_limit, "total_limit": arguments.total_limit})
    result["retailers"].append({"key": retailer["api_key"], "uuid": retailer["uuid"], "offers": offers})
seen_at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
every_offer = [offer["id"] for retailer in result["retailers"] for offer in retailer["offers"]]
for d in range(arguments.devices):
    account = call(arguments.url, "POST", "/v1/accounts", "none", {"name": "device %d" % d})
    result["devices"].append(account["device_token"])
    for start in range(0, len(every_offer), 500):
        items = [{"offer_id": offer, "seen_at": seen_at} for offer in every_offer[start:start + 500]]
        call(arguments.url, "POST", "/v1/seen", account["device_token"], {"items": items})
print(json.dumps(result))
