#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes Tests/Contract/patterns.txt: typed entries and whether each is a
pattern by the rule of docs/ARCHITECTURE.md ("Pattern rules"), the answer the
daemon (Pattern.swift) and the PAM module (pattern.c) must both give. This is a
third, independent statement of the rule; the tests hold both sides to its
output.
    scripts/gen-pattern-contract.py > Tests/Contract/patterns.txt
"""
import itertools
import random


def passed_over(a, b):
    ra, ca = divmod(a - 1, 3)
    rb, cb = divmod(b - 1, 3)
    if (ra + rb) % 2 or (ca + cb) % 2:
        return None
    middle = (ra + rb) // 2 * 3 + (ca + cb) // 2 + 1
    return None if middle in (a, b) else middle


def judge(entry: bytes):
    """('valid', normalized digits) or (reason, '')."""
    if not entry:
        return "empty", ""
    dots = []
    for byte in entry:
        if not 0x31 <= byte <= 0x39:
            return "not_a_dot", ""
        dot = byte - 0x30
        if dot in dots:
            return "repeated_dot", ""
        if dots:
            middle = passed_over(dots[-1], dot)
            if middle is not None and middle not in dots:
                dots.append(middle)
        dots.append(dot)
    if len(dots) < 4:
        return "too_short", ""
    return "valid", "".join(map(str, dots))


def escape(entry: bytes):
    out = []
    for i, byte in enumerate(entry):
        if byte == 0x5C:
            out.append("\\\\")
        elif 0x21 <= byte <= 0x7E and not (i == 0 and byte == 0x23):
            out.append(chr(byte))
        else:
            out.append(f"\\x{byte:02X}")
    return "".join(out)


def entries():
    # Every entry of up to 4 dots: every short one, every knight move, every
    # pass-over of a used and an unused dot among them.
    for n in range(0, 5):
        for t in itertools.product("123456789", repeat=n):
            yield "".join(t).encode()
    rng = random.Random(20)
    digits = "0123456789"
    # Longer entries: some of every length up to 12, with and without 0.
    for n in range(5, 13):
        for _ in range(150):
            yield "".join(rng.choice(digits[1:]) for _ in range(n)).encode()
        for _ in range(40):
            yield "".join(rng.choice(digits) for _ in range(n)).encode()
    # Entries without a repeat, of 5 to 9 dots (most are patterns).
    for n in range(5, 10):
        for _ in range(200):
            yield "".join(rng.sample(digits[1:], n)).encode()
    # All nine dots, and longer.
    yield b"123456789"
    yield b"1234567890"
    yield b"12345678912"
    yield b"9" * 64
    yield b"1" * 65
    # Passwords: letters, 0, signs, spaces, control bytes, non-ASCII digits.
    for word in ["password", "hunter2", "1235a", "a1235", "12 35", " 1235", "1235 ", "1235\n", "\t1235",
                 "0", "0000", "01235", "12350", "1230", "1 2 3 5", "#1235", "\\1235", "1235\\", "12-35",
                 "correct horse battery staple", "Pa55word!", "123456", "2580", "147", "1470",
                 "\u0661\u0662\u0663\u0665", "\uff11\uff12\uff13\uff15", "1235\u00e9", "\u00e9", "\u2460\u2461\u2462\u2464",
                 "12\x7f35", "1235\r", "12\u200b35"]:
        yield word.encode()
    yield b"\xff\xfe1235"
    yield b"12\x80\x35"


def main():
    print("# Typed entries (phone layout) and whether each is a pattern: the rule of")
    print("# docs/ARCHITECTURE.md \"Pattern rules\". Written by scripts/gen-pattern-contract.py;")
    print("# format: Tests/Contract/README.md. The daemon (Pattern) and the PAM module")
    print("# (pl_pattern_check) must both give the second column; the third is the")
    print("# daemon's normalized dots for a valid entry.")
    seen = set()
    for entry in entries():
        if entry in seen:
            continue
        seen.add(entry)
        verdict, normalized = judge(entry)
        line = f"{escape(entry)}\t{verdict}"
        if normalized:
            line += f"\t{normalized}"
        print(line)


if __name__ == "__main__":
    main()
