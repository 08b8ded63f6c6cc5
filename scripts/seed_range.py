"""Seed lists as the suite scripts take them: "1-5" (a range, both ends included) or "1,3,7"."""


def parse_seeds(text):
    if "-" in text:
        first, last = text.split("-", 1)
        return list(range(int(first), int(last) + 1))
    return [int(s) for s in text.split(",")]
