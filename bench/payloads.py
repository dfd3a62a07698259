"""The payload file `loyalty-bench` writes for the reference parsers: each payload (the AD structures of one
advertising report) preceded by one byte of length."""


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
