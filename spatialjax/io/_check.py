"""``spatialjax check FILE...``: lint the inertials of URDF / SDFormat / MJCF files.

One row per link: name, line, mass, CoM, principal moments about the CoM,
the two margins (smallest principal moment ``λ1`` and triangle margin
``λ1 + λ2 − λ3``) and the verdict of :mod:`spatialjax.io._verdict`
(consistent, massless frame, point mass / pseudo-inertia not PD (degenerate,
still valid), non-positive mass, not PSD, triangle inequality violated).

Exit status: 0 when every link is valid, 1 when any link is invalid, 2 when
a file cannot be read (malformed; the message names file, line, link and
field). ``--fix OUT`` writes a copy of the file in which each invalid
inertial is replaced by :func:`spatialjax.nearest_consistent` (pseudo-inertia
clipped about the CoM: CoM and principal axes kept, only the offending
principal second moments and a non-positive mass raised) and every other byte
is unchanged; the exit status still describes the input.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import numpy as np

from ._verdict import DEFAULT_LENGTH_SCALE, DEFAULT_TOL


def add_arguments(parser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="URDF, SDFormat or MJCF files")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
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
    parser.add_argument(
        "--fix",
        metavar="OUT",
        help="write a copy of FILE with every invalid inertial replaced by its nearest "
        "consistent one (everything else byte-identical); OUT is a file, or a directory "
        "when several FILEs are given",
    )


def _x64():
    import jax

    ctx = getattr(jax, "enable_x64", None)
    if callable(ctx):
        return ctx(True)
    from jax.experimental import enable_x64  # older JAX

    return enable_x64()


def _g(x) -> str:
    return f"{float(x):.4g}"


def _vec(v) -> str:
    return "[" + ", ".join(_g(x) for x in v) + "]"


def _fix_targets(files, out):
    out = Path(out)
    if len(files) > 1 or out.is_dir():
        out.mkdir(parents=True, exist_ok=True)
        return {f: out / Path(f).name for f in files}
    return {files[0]: out}


def _fix_eps(tol: float) -> float:
    """``eps`` for nearest_consistent that leaves fixed bodies clear of the check's tolerance.

    The clipped principal second moments are ``≥ eps·s`` with
    ``s = max(|m|, max|σ|)``, so the new triangle margin is ``≥ 2 eps s``;
    the body's tolerance is ``≤ 4 tol s`` (``½ tr I_c = Σσ ≤ 3s`` and
    ``m ℓ0² ≤ s``): ``eps = 10 tol`` leaves a factor 5.
    """
    return max(10.0 * tol, 1000 * float(np.finfo(np.float64).eps))


@functools.cache
def _jitted():
    """``params(m, c, I_c)`` and ``fix(params, eps)``, jitted once per padded batch size."""
    import jax

    from .._consistency import nearest_consistent
    from .._inertia import RigidBodyInertia

    def params(m, c, I_c):
        return RigidBodyInertia.from_mass_com_inertia(m, c, I_c).params

    def fix(p, eps):
        old = RigidBodyInertia(p)
        new = nearest_consistent(old, eps)
        return new.params, new.com, new.inertia_com(), new.pseudo_inertia(), old.pseudo_inertia()

    return jax.jit(params), jax.jit(fix)


def _pad(x, n_pad, fill):
    out = np.broadcast_to(np.asarray(fill, dtype=np.float64), (n_pad,) + x.shape[1:]).copy()
    out[: x.shape[0]] = x
    return out


def _inertia(model):
    """float64 ``RigidBodyInertia`` of the model's links (jitted on a padded batch)."""
    from .._inertia import RigidBodyInertia
    from ._verdict import bucket

    n = len(model.links)
    b = bucket(n)
    m = np.array([link.mass for link in model.links]).reshape(n)
    c = np.array([link.com for link in model.links]).reshape(n, 3)
    I_c = np.array([link.inertia_com for link in model.links]).reshape(n, 3, 3)
    p = _jitted()[0](_pad(m, b, 0.0), _pad(c, b, 0.0), _pad(I_c, b, 0.0))
    return RigidBodyInertia(np.asarray(p)[:n])


def check_file(path, *, tol=DEFAULT_TOL, length_scale=DEFAULT_LENGTH_SCALE, fix_to=None) -> dict:
    """Check one file; optionally write the fixed copy. Returns the JSON-able report.

    The numbers are computed in float64 whatever JAX's global x64 setting.

    Raises:
      ModelFileError: the file (or the fixed copy, which would be a bug) is malformed.
    """
    with _x64():
        return _check_file(path, tol=tol, length_scale=length_scale, fix_to=fix_to)


def _check_file(path, *, tol, length_scale, fix_to) -> dict:
    from . import read_model
    from ._verdict import bucket, classify
    from ._xml import apply_edits

    model = read_model(path)
    inertia = _inertia(model)
    verdicts = classify(inertia, tol=tol, length_scale=length_scale) if model.links else []
    links = []
    for link, v in zip(model.links, verdicts, strict=True):
        d = v.as_dict()
        links.append({"name": link.name, "line": link.line, "status": link.status, **d})
    report = {
        "path": str(path),
        "format": model.format,
        "n_links": len(links),
        "n_invalid": sum(not v.valid for v in verdicts),
        "n_degenerate": sum(v.degenerate for v in verdicts),
        "n_massless": sum(v.code == "massless" for v in verdicts),
        "notes": list(model.notes),
        "links": links,
    }
    if fix_to is None:
        return report

    bad = [i for i, v in enumerate(verdicts) if not v.valid]
    eps = _fix_eps(tol)
    edits, moved = [], []
    if bad:
        old = np.asarray(inertia.params)[np.array(bad)]
        unit = [1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0]  # padding: a consistent body
        res = _jitted()[1](_pad(old, bucket(len(bad)), unit), eps)
        p_new, c_new, I_new, J_new, J_old = (np.asarray(x)[: len(bad)] for x in res)
        m_new = p_new[:, 0]
        for k, i in enumerate(bad):
            link = model.links[i]
            if link.rewrite is None:  # pragma: no cover - only readable inertials are invalid
                continue
            edits += link.rewrite(float(m_new[k]), c_new[k], I_new[k])
            dI = np.linalg.norm(I_new[k] - link.inertia_com)
            moved.append(
                {
                    "name": link.name,
                    "mass": [link.mass, float(m_new[k])],
                    "com_moved": float(np.linalg.norm(c_new[k] - link.com)),
                    "inertia_com_moved": float(dI),
                    "inertia_com_moved_relative": float(
                        dI / max(np.linalg.norm(link.inertia_com), np.finfo(float).tiny)
                    ),
                    "pseudo_inertia_moved": float(np.linalg.norm(J_new[k] - J_old[k])),
                }
            )
    out = apply_edits(model.source, edits)
    fix_to = Path(fix_to)
    fix_to.write_bytes(out)
    # re-read the copy: every link must now be valid
    fixed = read_model(fix_to)
    after = classify(_inertia(fixed), tol=tol, length_scale=length_scale) if fixed.links else []
    by_name = {link.name: v for link, v in zip(fixed.links, after, strict=True)}
    for entry in moved:
        v = by_name[entry["name"]]
        entry["verdict_after"] = v.code
        entry["valid_after"] = v.valid
    report["fix"] = {
        "output": str(fix_to),
        "method": "nearest_consistent(reference='com'): pseudo-inertia eigenvalues clipped",
        "eps": eps,
        "links": moved,
        "n_invalid_after": sum(not v.valid for v in after),
    }
    return report


def _print_report(rep: dict, out) -> None:
    head = (
        f"{rep['path']} ({rep['format'].upper()}): {rep['n_links']} links, "
        f"{rep['n_invalid']} invalid, {rep['n_degenerate']} degenerate, "
        f"{rep['n_massless']} massless"
    )
    print(head, file=out)
    rows = [("link", "line", "mass", "CoM", "principal moments", "min λ", "λ1+λ2−λ3", "verdict")]
    for link in rep["links"]:
        mg = link["margins"]
        verdict = link["text"]
        if not link["valid"]:
            verdict += f" (tol {_g(mg['tolerance'])})"
        rows.append(
            (
                link["name"],
                str(link["line"] or ""),
                _g(link["mass"]),
                _vec(link["com"]),
                _vec(link["principal_moments"]),
                _g(mg["min_eig_inertia_com"]),
                _g(mg["triangle_margin"]),
                ("INVALID: " if not link["valid"] else "") + verdict,
            )
        )
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]) - 1)]
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)]
        print("  " + "  ".join(cells) + "  " + r[-1], file=out)
    for note in rep["notes"]:
        print(f"  note: {note}", file=out)
    fix = rep.get("fix")
    if fix is not None:
        print(
            f"  fixed copy written to {fix['output']}: {len(fix['links'])} inertial(s) replaced "
            f"by nearest_consistent (eps {fix['eps']:.3g}); {fix['n_invalid_after']} invalid after",
            file=out,
        )
        for e in fix["links"]:
            m0, m1 = e["mass"]
            print(
                f"    {e['name']}: mass {_g(m0)} -> {_g(m1)}, CoM moved {_g(e['com_moved'])}, "
                f"|ΔI_c|_F {_g(e['inertia_com_moved'])} "
                f"({_g(100 * e['inertia_com_moved_relative'])}%), "
                f"|ΔJ|_F {_g(e['pseudo_inertia_moved'])}; now {e['verdict_after']}",
                file=out,
            )
            if m0 <= 0:
                print(
                    "      the mass was not positive: the nearest consistent body is almost "
                    "massless; set the intended mass by hand",
                    file=out,
                )


def run(args) -> int:
    from ._common import ModelFileError

    targets = _fix_targets(args.files, args.fix) if args.fix else {}
    reports, errors = [], []
    with _x64():
        for f in args.files:
            try:
                reports.append(
                    check_file(
                        f, tol=args.tol, length_scale=args.length_scale, fix_to=targets.get(f)
                    )
                )
            except ModelFileError as e:
                errors.append({"path": str(f), "error": str(e)})
            except OSError as e:  # writing the fixed copy failed
                errors.append({"path": str(f), "error": f"{f}: cannot write the fixed copy: {e}"})
    n_links = sum(r["n_links"] for r in reports)
    n_invalid = sum(r["n_invalid"] for r in reports)
    status = 2 if errors else (1 if n_invalid else 0)
    if args.json:
        doc = {
            "tol": args.tol,
            "length_scale": args.length_scale,
            "n_files": len(args.files),
            "n_links": n_links,
            "n_invalid": n_invalid,
            "n_errors": len(errors),
            "exit_status": status,
            "files": reports,
            "errors": errors,
        }
        json.dump(doc, sys.stdout, indent=1)
        print()
        return status
    for r in reports:
        _print_report(r, sys.stdout)
        print()
    for e in errors:
        print(f"error: {e['error']}", file=sys.stderr)
    print(
        f"checked {len(reports)} of {len(args.files)} file(s), {n_links} links: "
        f"{n_invalid} invalid, {sum(r['n_degenerate'] for r in reports)} degenerate, "
        f"{sum(r['n_massless'] for r in reports)} massless"
        + (f"; {len(errors)} file(s) could not be read" if errors else "")
    )
    return status


def main(argv=None) -> int:
    """Stand-alone entry (``python -m spatialjax.io._check``); the CLI wires ``run``."""
    import argparse

    parser = argparse.ArgumentParser(prog="spatialjax check", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
