"""Lustre client NID -> compute node name."""

from __future__ import annotations

from collections.abc import Mapping


def _gni_number(nid: str) -> int | None:
    """The node number of a Cray Gemini/Aries NID (`123@gni`, `123@gni1`), else None."""
    addr, sep, net = nid.partition("@")
    if not sep or not net.startswith("gni"):
        return None
    addr = addr.strip()
    if not addr.isdigit():
        return None
    return int(addr)


def nid_to_node(nid: str | None, nid_map: Mapping[str, str] | None = None) -> str | None:
    """The node name of a client NID, or None when it cannot be known.

    A Cray `<n>@gni*` NID is node `nid%05d` of n without any table (`123@gni1` ->
    `nid00123`). Otherwise `nid_map` is consulted for the full NID (`10.2.4.27@o2ib1`),
    then for its address part before `@` (`10.2.4.27`).
    """
    if not nid:
        return None
    n = _gni_number(nid)
    if n is not None:
        return f"nid{n:05d}"
    if not nid_map:
        return None
    node = nid_map.get(nid)
    if node is None:
        addr = nid.partition("@")[0]
        if addr != nid:
            node = nid_map.get(addr)
    return node
