"""Writing node lists in range syntax (the inverse of lassi.core.hostlist's expansion)."""

from __future__ import annotations


def compress_ranges(nums: list[int]) -> str:
    """[12, 13, 20] -> '12-13,20' (ALPS node_list / Slurm bracket contents)."""
    out: list[str] = []
    s = sorted(set(nums))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        out.append(str(s[i]) if i == j else f"{s[i]}-{s[j]}")
        i = j + 1
    return ",".join(out)


def slurm_hostlist(names: list[str], prefix: str, width: int) -> str:
    """Node names `<prefix><zero-padded n>` as a Slurm host list: `cn[00001-00004,00010]`."""
    nums = sorted(int(n[len(prefix):]) for n in names)
    parts = []
    for r in compress_ranges(nums).split(","):
        a, _, b = r.partition("-")
        parts.append(f"{int(a):0{width}d}" + (f"-{int(b):0{width}d}" if b else ""))
    return f"{prefix}[{','.join(parts)}]"
