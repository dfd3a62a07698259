#!/usr/bin/env python3
"""Writes Tests/Fixtures/eddystone-eid-vectors.json: Eddystone-EID vectors computed by a Python 3 port of
Google's reference tool, eddystone-eid/tools/eidtools.py (google/eddystone, Apache-2.0), which is Python 2.

The port keeps eidtools' own functions: GetAndPrintEid's two AES-128 blocks (AES from PyPI `cryptography`
instead of pycrypto), GetAndPrintIdentityKey's HKDF (the `hkdf` package's extract and expand, written out with
hmac), and its big-integer Curve25519 (ToPrivate, ScalarMult, the Montgomery ladder), so the key exchange does
not go through OpenSSL, which the Swift code uses. Run: python3 scripts/eddystone-eid-vectors.py > FILE
"""
import hashlib
import hmac
import json

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def aes128(key, block):
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return encryptor.update(block) + encryptor.finalize()


def eid(ik, scaler, beacon_time_seconds):
    """eidtools.GetAndPrintEid."""
    tkdata = b"\x00" * 11 + b"\xff" + b"\x00" * 2 + bytes([(beacon_time_seconds >> 24) % 256,
                                                        (beacon_time_seconds >> 16) % 256])
    tk = aes128(ik, tkdata)
    beacon_time_seconds = (beacon_time_seconds // 2 ** scaler) * (2 ** scaler)
    eiddata = b"\x00" * 11 + bytes([scaler]) + beacon_time_seconds.to_bytes(4, "big")
    return tk, aes128(tk, eiddata)[:8]


def identity_key(shared_secret, service_public_key, beacon_public_key):
    """eidtools.GetAndPrintIdentityKey: hkdf_extract(salt, secret), hkdf_expand(prk, "", 32)[:16]."""
    salt = service_public_key + beacon_public_key
    prk = hmac.new(salt, shared_secret, hashlib.sha256).digest()
    okm, block = b"", b""
    for counter in range(1, 3):
        block = hmac.new(prk, block + bytes([counter]), hashlib.sha256).digest()
        okm += block
    return okm[:32][:16]


# eidtools.Curve25519, with its little-endian conversions (ToBinary, FromBinary).
P = 2 ** 255 - 19


def from_binary(x):
    return int.from_bytes(x, "little")


def to_private(source):
    return bytes([source[0] & 248]) + source[1:31] + bytes([(source[31] & 127) | 64])


def scalar_mult(n, q=b"\x09" + b"\x00" * 31):
    n = from_binary(to_private(n))
    q = from_binary(q) % (2 ** 255)
    x1, z1, x2, z2 = 1, 0, q, 1  # nq = (1, 0), nqpq = (q, 1)
    for i in range(255, -1, -1):
        if (n >> i) & 1:
            (x2, z2), (x1, z1) = montgomery((x2, z2), (x1, z1), q)
        else:
            (x1, z1), (x2, z2) = montgomery((x1, z1), (x2, z2), q)
    return ((x1 * pow(z1, P - 2, P)) % P).to_bytes(32, "little")


def montgomery(q, p, qmp):
    """eidtools.Curve25519._Montgomery: given q, p and q - p, return 2q and q + p."""
    qprime = ((q[0] + q[1]) % P, (q[1] - q[0]) % P)
    pprime = ((p[0] + p[1]) % P, (p[1] - p[0]) % P)
    pprime = ((pprime[0] * qprime[1]) % P, (pprime[1] * qprime[0]) % P)
    qprime = ((qprime[0] ** 2) % P, (qprime[1] ** 2) % P)
    qpp = ((pprime[0] + pprime[1]) % P, (pprime[1] - pprime[0]) % P)
    qpp = ((qpp[0] ** 2) % P, (qpp[1] ** 2 * qmp) % P)
    qpq = ((qprime[0] * qprime[1]) % P, (qprime[0] - qprime[1]) % P)
    t = qpq[1]
    qpq = (qpq[0], (((qpq[1] * 121665) + qprime[0]) * t) % P)
    return qpq, qpp


def main():
    vectors = []
    keys = [bytes(range(16)), bytes.fromhex("e2c56db5dffb48d2b060d0f5a71096e0"), bytes([0xFF] * 16)]
    # K = 0, 1, 10, 15; counters on either side of the temporary key's roll-over (mod 65536 near 65280 as the spec
    # recommends starting a beacon's counter, and across 65535 -> 65536), and at the ends of the 32-bit range.
    counters = [0, 1, 65279, 65280, 65281, 65535, 65536, 65537, 0x1234_FF00, 0x1234_FFFF, 0x1235_0000,
                0xFFFF_FF00, 0xFFFF_FFFF]
    for ik in keys:
        for scaler in (0, 1, 10, 15):
            for counter in counters:
                tk, e = eid(ik, scaler, counter)
                vectors.append({"identity_key": ik.hex(), "exponent": scaler, "counter": counter,
                                "temporary_key": tk.hex(), "eid": e.hex()})
    exchanges = []
    for seed in range(3):
        resolver_private = to_private(hashlib.sha256(b"resolver %d" % seed).digest())
        beacon_private = to_private(hashlib.sha256(b"beacon %d" % seed).digest())
        resolver_public, beacon_public = scalar_mult(resolver_private), scalar_mult(beacon_private)
        shared = scalar_mult(beacon_private, resolver_public)
        assert shared == scalar_mult(resolver_private, beacon_public)
        ik = identity_key(shared, resolver_public, beacon_public)
        exchanges.append({"resolver_private_key": resolver_private.hex(), "resolver_public_key": resolver_public.hex(),
                          "beacon_private_key": beacon_private.hex(), "beacon_public_key": beacon_public.hex(),
                          "shared_secret": shared.hex(), "identity_key": ik.hex(),
                          "eid_exponent_10_counter_65280": eid(ik, 10, 65280)[1].hex()})
    # RFC 7748 section 6.1's Alice and Bob, checking the port's Curve25519 against the published values.
    alice = bytes.fromhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    bob_public = bytes.fromhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
    assert scalar_mult(alice).hex() == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
    assert scalar_mult(alice, bob_public).hex() == "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"
    print(json.dumps({
        "how": "scripts/eddystone-eid-vectors.py: a Python 3 port of google/eddystone eddystone-eid/tools/eidtools.py "
               "(GetAndPrintEid with AES-128 from PyPI cryptography; GetAndPrintIdentityKey's HKDF-SHA256 written "
               "with hmac; eidtools' own big-integer Curve25519, checked against RFC 7748 6.1). Private keys are "
               "SHA-256 of 'resolver N' / 'beacon N', clamped by eidtools' ToPrivate.",
        "eids": vectors, "key_exchanges": exchanges}, indent=1))


main()
