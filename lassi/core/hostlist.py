"""Node-list syntaxes of schedulers, expanded to node names.

- Slurm host lists: `nid0[1001-1004,1010]`, `c[1-2]-[3-4]` (several bracket groups give
  their product), `a1,b[01-02]` (comma lists outside brackets), zero padding kept from the
  lower bound (`[08-10]` -> `08 09 10`).
- ALPS nid ranges: `12-13,20` -> `nid00012 nid00013 nid00020`.

Bad syntax raises ValueError naming the offending text; absurdly large expansions too.
"""

from __future__ import annotations

import itertools

MAX_HOSTS = 1_000_000  # guard against typos such as `nid[0-999999999]`


def _split_top(s: str) -> list[str]:
    """Split on commas outside brackets; ValueError on unbalanced or nested brackets."""
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch == "[":
            if depth:
                raise ValueError(f"nested '[' in host list {s!r}")
            depth = 1
        elif ch == "]":
            if not depth:
                raise ValueError(f"unbalanced ']' in host list {s!r}")
            depth = 0
        if ch == "," and not depth:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise ValueError(f"unclosed '[' in host list {s!r}")
    parts.append("".join(cur))
    return parts


def _range_values(spec: str, where: str) -> list[str]:
    """`01-03,7` -> ['01', '02', '03', '7']: one bracket's content, padding kept."""
    out: list[str] = []
    for item in spec.split(","):
        lo, sep, hi = item.strip().partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"bad range {item!r} in {where!r}")
        if not sep:
            out.append(lo)
            continue
        a, b = int(lo), int(hi)
        if b < a:
            raise ValueError(f"descending range {item!r} in {where!r}")
        if len(out) + b - a + 1 > MAX_HOSTS:
            raise ValueError(f"range {item!r} in {where!r} exceeds {MAX_HOSTS} names")
        width = len(lo)
        out.extend(str(i).zfill(width) for i in range(a, b + 1))
    return out


def _expand_item(item: str) -> list[str]:
    """One comma-free host pattern (`c[1-2]-[3-4]`) -> its names, in order."""
    pieces: list[list[str]] = []
    rest = item
    while "[" in rest:
        pre, _, tail = rest.partition("[")
        spec, _, rest = tail.partition("]")
        pieces.extend([[pre], _range_values(spec, item)])
    pieces.append([rest])
    size = 1
    for p in pieces:
        size *= len(p)
    if size > MAX_HOSTS:
        raise ValueError(f"host pattern {item!r} expands to more than {MAX_HOSTS} names")
    return ["".join(parts) for parts in itertools.product(*pieces)]


def expand_hostlist(s: str) -> list[str]:
    """Expand a Slurm host list into node names, in the written order (duplicates kept).

    An empty string gives []. Whitespace or an empty element is an error.
    """
    s = s.strip()
    if not s:
        return []
    names: list[str] = []
    for item in _split_top(s):
        if not item or any(c.isspace() for c in item):
            raise ValueError(f"empty or blank element in host list {s!r}")
        names.extend(_expand_item(item))
        if len(names) > MAX_HOSTS:
            raise ValueError(f"host list {s[:60]!r} expands to more than {MAX_HOSTS} names")
    return names


def expand_nid_ranges(s: str, fmt: str = "nid{:05d}") -> list[str]:
    """Expand ALPS nid ranges (`12-13,20`) into node names formatted by `fmt`."""
    s = s.strip()
    if not s:
        return []
    return [fmt.format(int(v)) for v in _range_values(s, s)]
