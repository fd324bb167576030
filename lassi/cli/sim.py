"""`lassi simulate`, `lassi evaluate` and `lassi demo`: simulated site-days, detection quality
against the simulator's truth, and the whole pipeline on a small simulated day."""

from __future__ import annotations

import json
from pathlib import Path

from lassi.cli.args import (
    add_nodes,
    add_site,
    add_warehouse,
    date_arg,
    open_warehouse,
    positive,
    site_of,
)


def add_commands(sub) -> None:
    s = sub.add_parser("simulate", help="simulate site-days of raw monitoring files + truth.json")
    add_site(s)
    s.add_argument("--date", type=date_arg, required=True, help="first day (YYYY-MM-DD)")
    s.add_argument("--days", type=positive, default=1)
    add_nodes(s)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", required=True, help="folder for the raw files")
    s.add_argument("--fault", action="append", default=None, metavar="KIND:NAME:FACTOR:HH:MM-HH:MM",
                   help="inject a slow component (repeatable; 'none' for no faults); times "
                        "in UTC from the first day's midnight, 33:00 is 09:00 of the second day")
    s.add_argument("--gzip", action="store_true", help="write .gz files")
    s.add_argument("--traced-fraction", type=float, default=1.0,
                   help="share of jobs with LWFS client traces (forwarding sites)")
    s.add_argument("--no-tokio", action="store_true",
                   help="do not write LMT databases, lfs df and lctl dl snapshots")
    s.add_argument("--lmt-step", type=positive, default=60,
                   help="seconds between LMT samples (default 60; real LMT: 5)")
    s.add_argument("--overwrite", action="store_true",
                   help="replace an earlier simulation in --out (the writers append)")
    s.add_argument("--dense", action="store_true",
                   help="a busy machine (Lustre-capture sites): ~90%% of nodes busy, every "
                        "busy node touching the MDS in every capture window")
    s.add_argument("--lustre-stats", choices=("exports", "jobstats", "both"),
                   default="exports", help="what the simulated Lustre servers print "
                   "(Lustre-capture sites): per-client export statistics, per-job job_stats "
                   "(job ids = PBS job ids), or both (default exports)")
    s.set_defaults(func=cmd_simulate)

    e = sub.add_parser("evaluate", help="detection quality against simulator truth")
    e.add_argument("--truth", required=True, help="truth.json written by `lassi simulate`")
    e.add_argument("--date", type=date_arg, required=True, help="last day to score")
    e.add_argument("--out", default=None,
                   help="JSON file for the scores (default: ./evaluate-<date>.json)")
    add_warehouse(e)
    add_site(e)      # the simulated site's options, as given to simulate (truth.json names it)
    add_nodes(e)
    e.set_defaults(func=cmd_evaluate)

    d = sub.add_parser("demo", help="what `make demo` runs: simulate, ingest, daily run, report")
    add_site(d)
    add_nodes(d, default=256)
    d.add_argument("--date", type=date_arg, default=None,
                   help="default: 2017-10-10 (archer), 2018-02-25 (taihulight)")
    d.add_argument("--seed", type=int, default=1)
    d.add_argument("--dir", default="./demo", help="where raw files, warehouse and report go")
    d.set_defaults(func=cmd_demo)


def cmd_simulate(args) -> int:
    from lassi.sim.runner import simulate

    site = site_of(args)
    res = simulate(site, args.date, args.days, args.seed, Path(args.out), faults=args.fault,
                   gz=args.gzip, traced_fraction=args.traced_fraction,
                   tokio=not args.no_tokio, lmt_step_s=args.lmt_step,
                   overwrite=args.overwrite, dense=args.dense,
                   lustre_stats=args.lustre_stats)
    print(f"simulated {res['runs']} runs at {site.name} ({len(site.compute_nodes)} nodes), "
          f"{res['slowed']} slowed; raw files and truth.json in {res['out']}")
    return 0


def cmd_evaluate(args) -> int:
    from lassi.evaluate.scores import evaluate, load_truth, table

    truth = load_truth(args.truth)
    wh = open_warehouse(args, "evaluate")
    res = evaluate(wh, truth, args.date)
    print(table(res))
    out = Path(args.out or f"evaluate-{args.date.isoformat()}.json")
    out.write_text(json.dumps(res, indent=1, default=str))
    print(f"scores: {out.resolve()}")
    return 0


def cmd_demo(args) -> int:
    from lassi.cli.demo import demo

    for line in demo(args.site, args.nodes, args.date, args.seed, Path(args.dir)):
        print(line, flush=True)
    return 0
