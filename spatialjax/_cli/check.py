"""``spatialjax check FILE...``: lint the inertials of URDF / SDFormat / MJCF files.

Options, outputs and exit status (0 nothing invalid remains, 1 something does,
2 usage error or unreadable file): docs page ``model-files.md#spatialjax-check``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from .._lint import DEFAULT_LENGTH_SCALE, DEFAULT_TOL, VERDICTS
from ..identification.output.report import number_text, vector_text
from ._args import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``spatialjax check``."""
    parser.epilog = (
        "exit status: 0 when no invalid inertial remains (none found, or all fixed by --fix or "
        "--in-place), 1 when one remains, 2 for a usage error or a file that cannot be read"
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="URDF, SDFormat or MJCF files (any extension)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document on stdout instead of text"
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only the problems, the files written and the summary line",
    )
    parser.add_argument(
        "--tol",
        type=float,
        default=DEFAULT_TOL,
        help="relative tolerance of the checks (default %(default)g); the absolute tolerance of "
        "a body is tol * (tr(I_c)/2 + m * length_scale^2) plus float64 round-off",
    )
    parser.add_argument(
        "--length-scale",
        type=float,
        default=DEFAULT_LENGTH_SCALE,
        help="size below which a body counts as a point, in the file's length unit "
        "(default %(default)g = 1 mm for SI files)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--fix",
        metavar="OUT",
        help="write a copy of each FILE with every invalid inertial replaced by its nearest "
        "consistent one (everything else byte-identical); OUT is a file for one FILE, a folder "
        "(created if needed) for several; never overwrites an input",
    )
    where.add_argument(
        "--in-place",
        action="store_true",
        help="rewrite each FILE that has an invalid inertial, in place (instead of --fix OUT)",
    )


# --------------------------------------------------------------------------- planning
def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _looks_like_folder(text: str) -> bool:
    return text.endswith(("/", os.sep)) or Path(text).is_dir()


def plan_fix_targets(files: list[str], out: str) -> tuple[dict[str, Path], Path | None]:
    """Output path of each input for ``--fix OUT``, and the folder to create (or ``None``).

    Raises:
      UsageError: OUT is a file name but several FILEs are given, two FILEs
        would be written to the same output, or an output is an input.
    """
    folder: Path | None = None
    if len(files) > 1 or _looks_like_folder(out):
        folder = Path(out)
        if folder.exists() and not folder.is_dir():
            raise UsageError(
                f"--fix {out}: with {len(files)} FILEs, OUT must be a folder, but it is an "
                "existing file"
            )
        if not folder.exists() and folder.suffix and not out.endswith(("/", os.sep)):
            raise UsageError(
                f"--fix {out}: with {len(files)} FILEs, OUT must be a folder, but {out!r} looks "
                f"like a file name (extension {folder.suffix!r}); give a folder, or one FILE "
                "per --fix"
            )
        targets = {f: folder / Path(f).name for f in files}
    else:
        targets = {files[0]: Path(out)}
    by_output: dict[str, list[str]] = {}
    for f, t in targets.items():
        by_output.setdefault(os.path.abspath(t), []).append(f)
    for t, srcs in by_output.items():
        if len(srcs) > 1:
            raise UsageError(
                f"--fix {out}: {' and '.join(srcs)} would both be written to {t}; fix them into "
                "separate folders"
            )
    for t in targets.values():
        for g in files:
            if t.exists() and os.path.samefile(t, g):
                raise UsageError(
                    f"--fix {out}: the output {t} is the input {g}; choose another OUT, or use "
                    "--in-place to rewrite the inputs"
                )
    return targets, (folder if folder is not None and not folder.exists() else None)


# --------------------------------------------------------------------------- printing
def _print_report(rep: dict, quiet: bool, out) -> None:
    n_bad = rep["n_invalid"]
    if quiet and n_bad == 0 and rep.get("fix") is None:
        return
    print(
        f"{rep['path']} ({rep['format'].upper()}): {_plural(rep['n_links'], 'link')}, "
        f"{n_bad} invalid, {rep['n_degenerate']} degenerate, {rep['n_massless']} massless",
        file=out,
    )
    rows = [("link", "line", "mass", "CoM", "principal moments", "min λ", "λ1+λ2−λ3", "verdict")]
    for link in rep["links"]:
        if quiet and link["valid"]:
            continue
        mg = link["margins"]
        verdict = link["text"]
        if not link["valid"]:
            verdict += f" (tol {number_text(mg['tolerance'])})"
        rows.append(
            (
                link["name"],
                str(link["line"] or ""),
                number_text(link["mass"]),
                vector_text(link["com"]),
                vector_text(link["principal_moments"]),
                number_text(mg["min_eig_inertia_com"]),
                number_text(mg["triangle_margin"]),
                ("INVALID: " if not link["valid"] else "") + verdict,
            )
        )
    if len(rows) > 1:
        widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]) - 1)]
        for r in rows:
            cells = [c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)]
            print("  " + "  ".join(cells) + "  " + r[-1], file=out)
    if not quiet:
        for note in rep["notes"]:
            print(f"  note: {note}", file=out)
    fix = rep.get("fix")
    if fix is not None:
        _print_fix(fix, out)


def _print_fix(fix: dict, out) -> None:
    n = len(fix["links"])
    replaced = _plural(n, "inertial")
    if fix["in_place"]:
        if not fix["written"]:
            print(f"  nothing to fix: {fix['output']} left unchanged", file=out)
            return
        what = f"rewrote {fix['output']} in place"
    else:
        what = ("replaced the existing file " if fix["replaced_existing"] else "wrote ") + str(
            fix["output"]
        )
        if n == 0:
            print(f"  {what}: an unchanged copy (nothing to fix)", file=out)
            return
    print(
        f"  {what}: {replaced} replaced by nearest_consistent (eps {fix['eps']:.3g}); "
        f"{fix['n_invalid_after']} invalid after",
        file=out,
    )
    for e in fix["links"]:
        m0, m1 = e["mass"]
        print(
            f"    {e['name']}: mass {number_text(m0)} -> {number_text(m1)}, "
            f"CoM moved {number_text(e['com_moved'])}, "
            f"|ΔI_c|_F {number_text(e['inertia_com_moved'])} "
            f"({number_text(100 * e['inertia_com_moved_relative'])}%), "
            f"|ΔJ|_F {number_text(e['pseudo_inertia_moved'])}; now {e['verdict_after']}",
            file=out,
        )
        if m0 <= 0:
            print(
                "      the mass was not positive: the nearest consistent body is almost "
                "massless; set the intended mass by hand",
                file=out,
            )


def _remaining(rep: dict) -> int:
    """Invalid inertials left after this run (after the fix, when one was written)."""
    fix = rep.get("fix")
    return rep["n_invalid"] if fix is None else fix["n_invalid_after"]


#: how the summary line counts the valid verdicts (the invalid ones use VERDICTS' text)
_VALID_LABELS = {
    "consistent": "consistent",
    "massless": "massless",
    "point_mass": "point mass (degenerate)",
    "pseudo_inertia_not_pd": "rod/lamina (degenerate)",
}


def summary_line(reports: list[dict], n_files: int, n_errors: int) -> str:
    """``checked 2 files, 13 links: 8 consistent, 3 massless frames, 2 INVALID (...)``."""
    counts = Counter(link["verdict"] for r in reports for link in r["links"])
    n_links = sum(r["n_links"] for r in reports)
    parts = [f"{counts[code]} {label}" for code, label in _VALID_LABELS.items() if counts[code]]
    bad = {code: counts[code] for code in VERDICTS if not VERDICTS[code][1] and counts[code]}
    n_bad = sum(bad.values())
    if n_bad:
        detail = ", ".join(f"{k} {VERDICTS[c][0]}" for c, k in bad.items())
        parts.append(f"{n_bad} INVALID ({detail})")
    elif n_links:
        parts.append("0 invalid")
    head = f"checked {len(reports)} of {_plural(n_files, 'file')}, {_plural(n_links, 'link')}"
    line = head + (": " + ", ".join(parts) if parts else "")
    fixed = [r for r in reports if r.get("fix") is not None]
    if fixed and n_bad:
        left = sum(_remaining(r) for r in fixed)
        line += f"; fixed {n_bad - left} of {n_bad}" if left < n_bad else "; none fixed"
    if n_errors:
        line += f"; {_plural(n_errors, 'file')} could not be read"
    return line


# ------------------------------------------------------------------------------- run
def run(args: argparse.Namespace) -> int:
    """Check ``args.files``; print the reports; return the exit status."""
    from .._lint import check_file
    from .._util import x64
    from ..io._common import ModelFileError

    targets: dict[str, Path] = {}
    try:
        if args.fix is not None:
            targets, make = plan_fix_targets(args.files, args.fix)
            if make is not None:
                make.mkdir(parents=True)
    except (UsageError, OSError) as e:
        print(f"spatialjax check: error: {e}", file=sys.stderr)
        return 2
    reports, errors = [], []
    with x64():
        for f in args.files:
            try:
                reports.append(
                    check_file(
                        f,
                        tol=args.tol,
                        length_scale=args.length_scale,
                        fix_to=targets.get(f),
                        in_place=args.in_place,
                    )
                )
            except ModelFileError as e:
                errors.append({"path": str(f), "error": str(e)})
            except OSError as e:  # writing the fixed copy failed
                errors.append({"path": str(f), "error": f"{f}: cannot write the fixed copy: {e}"})
    remaining = sum(_remaining(r) for r in reports)
    status = 2 if errors else (1 if remaining else 0)
    if args.json:
        doc = {
            "tol": args.tol,
            "length_scale": args.length_scale,
            "n_files": len(args.files),
            "n_links": sum(r["n_links"] for r in reports),
            "n_invalid": sum(r["n_invalid"] for r in reports),
            "n_invalid_remaining": remaining,
            "n_errors": len(errors),
            "verdicts": dict(Counter(link["verdict"] for r in reports for link in r["links"])),
            "exit_status": status,
            "files": reports,
            "errors": errors,
        }
        json.dump(doc, sys.stdout, indent=1)
        print()
        return status
    for r in reports:
        before = r["n_invalid"] or r.get("fix") is not None or not args.quiet
        _print_report(r, args.quiet, sys.stdout)
        if before:
            print()
    for e in errors:
        print(f"error: {e['error']}", file=sys.stderr)
    print(summary_line(reports, len(args.files), len(errors)))
    return status


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry with ``spatialjax check``'s options; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="spatialjax check", description=(__doc__ or "").split("\n")[0]
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))
