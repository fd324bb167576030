"""What every `lassi` command shares: the parser, the common options, the one period parser,
the session helpers and the one error wrapper (every failure is one line on stderr)."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from collections.abc import Callable

EXIT_USAGE, EXIT_FAIL = 2, 1
EXIT_LOCKED = 75        # sysexits' EX_TEMPFAIL: another command is writing the warehouse
EXIT_TEMPFAIL = 75      # ... or a service (the LMT database) did not answer: retry later
_LOCKED: list = []      # warehouses whose writer lock this process holds (run_command frees)


class CliError(Exception):
    """A user-facing error: printed as `lassi: error: <message>`."""


class CliTempFail(CliError):
    """A CliError that a later retry may not meet (a database down): exit EXIT_TEMPFAIL."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2) instead of a usage dump."""

    def error(self, message: str) -> None:
        self.exit(EXIT_USAGE, f"lassi: error: {message} (see `{self.prog} --help`)\n")


# --- argument types ------------------------------------------------------------------------


def date_arg(text: str) -> dt.date:
    """argparse type of a single date (YYYY-MM-DD)."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def positive(text: str) -> int:
    """argparse type of a positive integer."""
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


# --- common options ------------------------------------------------------------------------


def add_warehouse(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warehouse", default=os.environ.get("LASSI_WAREHOUSE", "./warehouse"),
                   help="warehouse root: a directory or Hadoop URI "
                   "(default $LASSI_WAREHOUSE or ./warehouse)")


def add_site(p: argparse.ArgumentParser) -> None:
    p.add_argument("--site", default=os.environ.get("LASSI_SITE", "archer"),
                   help="site name (conf/sites/NAME.yaml: archer, taihulight) or YAML path "
                   "(default $LASSI_SITE or archer)")


def add_nodes(p: argparse.ArgumentParser, default: int | None = None) -> None:
    """--nodes: the site scaled to N compute nodes (a simulated site and its warehouse)."""
    p.add_argument("--nodes", type=positive, default=default,
                   help="scale the site to this many compute nodes (as simulated)"
                   + (f" (default {default})" if default else ""))


def add_period(p: argparse.ArgumentParser, *, date: bool = True, required: bool = True) -> None:
    """The one period: `--date D` (if `date`) or `--from D1 --to D2`; read it with period()."""
    if date:
        p.add_argument("--date", metavar="D", help="one day (YYYY-MM-DD)")
    every = "" if required else "; default: every day"
    p.add_argument("--from", dest="date_from", metavar="D",
                   help=f"first day of a period (YYYY-MM-DD, UTC, with --to{every})")
    p.add_argument("--to", dest="date_to", metavar="D", help="last day of the period")
    p.set_defaults(period_rules=(date, required))


def period(args: argparse.Namespace) -> tuple[dt.date | None, dt.date | None]:
    """(first, last) of the options add_period added: --date D gives (D, D); --from/--to go
    together; neither gives (None, None) unless required. One-line errors (CliError)."""
    with_date, required = args.period_rules
    day = _as_date("--date", args.date) if with_date else None
    first, last = _as_date("--from", args.date_from), _as_date("--to", args.date_to)
    if day is not None:
        if args.date_from is not None or args.date_to is not None:
            raise CliError("give either --date or --from/--to, not both")
        return day, day
    if (first is None) != (last is None) or (required and first is None):
        raise CliError("give --date D, or --from D1 and --to D2" if with_date
                       else "give both --from D1 and --to D2")
    if first is not None and last < first:
        raise CliError(f"--from {first} is after --to {last}")
    return first, last


def _as_date(flag: str, text: str | None) -> dt.date | None:
    try:
        return None if text is None else dt.date.fromisoformat(text)
    except ValueError:
        raise CliError(f"{flag}: not a date (YYYY-MM-DD): {text!r}") from None


# --- what commands open --------------------------------------------------------------------


def site_of(args: argparse.Namespace):
    """The site of --site, scaled by --nodes where the command has it."""
    from lassi.core.config import load_site

    return load_site(args.site, nodes=getattr(args, "nodes", None))


def add_lock_wait(p: argparse.ArgumentParser) -> None:
    """--lock-wait: how long a writing command waits for another one on its warehouse."""
    p.add_argument("--lock-wait", type=float, metavar="SECONDS",
                   default=float(os.environ.get("LASSI_LOCK_WAIT", "0")),
                   help="wait up to SECONDS for another command writing the same warehouse "
                   "(default $LASSI_LOCK_WAIT or 0: refuse at once, exit 75)")


def open_warehouse(args: argparse.Namespace, app: str, short_lived: bool = False,
                   writes: bool = False):
    """The warehouse of --warehouse on a Spark session named `lassi <app>` (`short_lived`:
    a command of a few small queries, see lassi.core.spark.get_spark), started when the
    command first needs it: a daily family with nothing to do for the day starts no Spark
    application. `writes`: the command writes tables, so it takes the warehouse's writer
    lock first (held until the command ends; `--lock-wait`)."""
    from lassi.core.spark import get_spark, start_jvm
    from lassi.core.warehouse import Warehouse

    start_jvm(f"lassi {app}", short_lived=short_lived)
    wh = Warehouse(lambda: get_spark(f"lassi {app}", short_lived=short_lived), args.warehouse)
    if writes:
        wh.lock_writes(getattr(args, "command_line", f"lassi {app}"),
                       getattr(args, "lock_wait", 0.0))
        _LOCKED.append(wh)
    return wh


def existing_warehouse(root: str) -> None:
    """A local warehouse root must exist (checked before Spark starts)."""
    from lassi.core.warehouse import local_root

    local = local_root(root)
    if local is not None and not local.is_dir():
        raise CliError(f"no warehouse at {root}")


def zone(name: str) -> str:
    """A valid IANA time zone name, or a one-line error."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise CliError(f"unknown time zone {name!r} (e.g. America/Los_Angeles, UTC)") from None
    return name


# --- the one error wrapper -----------------------------------------------------------------


def run_command(fn: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """`fn(args)`; any failure becomes one line `lassi: error: ...` and exit 1 (no traceback
    unless $LASSI_DEBUG is set). ConfigError and JobNotFound are ValueErrors."""
    from lassi.core.writer_lock import LockHeld

    try:
        return fn(args)
    except LockHeld as exc:
        _fail(str(exc))
        return EXIT_LOCKED
    except CliTempFail as exc:
        _fail(str(exc))
        return EXIT_TEMPFAIL
    except CliError as exc:
        return _fail(str(exc))
    except (ValueError, OSError, KeyError) as exc:     # FileNotFoundError is an OSError
        return _fail(_first_line(exc))
    except Exception as exc:  # Spark analysis errors and the like: one line, no traceback
        if os.environ.get("LASSI_DEBUG"):
            raise
        return _fail(f"{type(exc).__name__}: {_first_line(exc)[:300]}")
    finally:
        while _LOCKED:
            _LOCKED.pop().release_writes()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _fail(message: str) -> int:
    print(f"lassi: error: {message}", file=sys.stderr)
    return EXIT_FAIL
