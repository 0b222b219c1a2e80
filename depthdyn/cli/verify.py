"""``depthdyn verify``: the source documents' claims, checked by computation."""

from __future__ import annotations

import json
import sys


def add_arguments(cmd) -> None:
    cmd.add_argument("--source", help="only this source (e.g. 000 or post); default: all")
    cmd.add_argument("--json", action="store_true",
                     help="emit JSON: claims, not_checked, coverage and the per-source summary")
    cmd.add_argument("--trained", action="store_true",
                     help="also check the experimental claims by training torch blocks (needs the torch "
                     "extra; about 200 s of one CPU core; progress on stderr)")


def run(args) -> int:
    from ..claims import (
        NOT_CHECKED,
        coverage,
        format_table,
        resolve_sources,
        run_claims,
        source_summary,
        summary,
    )

    results = run_claims(args.source)
    if args.trained:
        from .train import torch_part

        torch_part()
        from ..nn.experiments.claims import run_trained_claims

        shown = not getattr(args, "quiet", False)

        def progress(done, total, claim_id, seconds):
            if shown:
                what = f"training for {claim_id}" if claim_id else "done"
                sys.stderr.write(f"[trained claims {done}/{total}, {seconds:.0f} s] {what}\n")

        results += run_trained_claims(args.source, progress=progress)
    keys = {s.key for s in resolve_sources(args.source)}
    listed = [u for u in NOT_CHECKED if u.source in keys]
    if args.json:
        out = {"claims": [res.to_json() for res in results], "not_checked": [u.to_json() for u in listed],
               "coverage": coverage(results, listed),
               "summary": {k: v for k, v in source_summary(results, listed).items() if k in keys}}
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    counts = summary(results)
    tally = (f"{counts['holds']} hold, {counts['fails']} fail, {counts['holds-with-caveat']} hold with a "
             "caveat")
    sys.stdout.write(f"{format_table(results)}\n\n{counts['total']} claims (one per reading or part of a "
                     f"source statement): {tally}\n")
    for key, row in source_summary(results, listed).items():  # counted per source statement
        if key in keys:
            sys.stdout.write(f"source {key}: {row['total']} statements (each counted once, however many "
                             f"claims check it): {row['holds']} hold, {row['fails']} fail, "
                             f"{row['holds-with-caveat']} hold with a caveat, {row['not checked']} "
                             "not checked\n")
    return 0  # verdicts are results, not errors

