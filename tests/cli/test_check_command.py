"""``spatialjax check``: verdicts, tolerances, exit status, JSON, and ``--fix``.

Expected margins are closed forms (diagonal inertias) or NumPy eigenvalues
of the matrices written in the fixtures; the fixed copies are compared with
:func:`spatialjax.nearest_consistent` applied to the original parameters and
checked byte-for-byte outside the rewritten ``<inertial>`` elements.
"""

from __future__ import annotations

import glob
import json
import shutil
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import FIXTURES, raises_argument
from helpers import robots_dir as _robots_dir

from spatialjax import ArgumentError, nearest_consistent
from spatialjax import _cli as cli
from spatialjax._cli.check import main
from spatialjax._inertia import RigidBodyInertia
from spatialjax._lint import DEFAULT_TOL, VERDICTS, classify
from spatialjax.io import check_file, read_model
from spatialjax.io._xml import apply_edits, parse_xml

FIX = FIXTURES

BAD = {
    "bad.urdf": {
        "good": "consistent",
        "negative_mass": "non_positive_mass",
        "zero_mass_with_inertia": "non_positive_mass",
        "not_psd": "not_psd",
        "triangle": "triangle_violated",
        "triangle_rotated": "triangle_violated",
        "camera": "massless",
    },
    "bad.sdf": {"good": "consistent", "keel": "triangle_violated", "ballast": "non_positive_mass"},
    "bad_mjcf.xml": {
        "good": "consistent",
        "flat": "triangle_violated",
        "flat_quat": "triangle_violated",
        "negative": "non_positive_mass",
        "full_not_psd": "not_psd",
    },
}
GOOD = {
    "arm.urdf": {
        "base_link": "consistent",
        "link1": "consistent",
        "sensor_link": "massless",
        "tool_frame": "massless",
        "payload": "point_mass",
        "rod": "pseudo_inertia_not_pd",
    },
    "vehicle.sdf": {n: "consistent" for n in ("hull", "fin", "propeller", "marker")},
    "walker.xml": {n: "consistent" for n in ("torso", "upper", "lower", "<body 4>", "foot", "arm")},
}


def _json(capsys, argv):
    status = main(argv + ["--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_status"] == status
    return status, doc


def _verdicts(doc, i=0):
    return {link["name"]: link["verdict"] for link in doc["files"][i]["links"]}


# ---------------------------------------------------------------------- verdicts


@pytest.mark.parametrize("fixture", sorted(BAD) + sorted(GOOD))
def test_verdicts_and_exit_status(capsys, fixture):
    expected = {**BAD, **GOOD}[fixture]
    status, doc = _json(capsys, [str(FIX / fixture)])
    assert _verdicts(doc) == expected
    invalid = sum(not VERDICTS[v][1] for v in expected.values())
    assert doc["n_invalid"] == doc["files"][0]["n_invalid"] == invalid
    assert status == (1 if invalid else 0)
    for link in doc["files"][0]["links"]:
        assert link["valid"] == VERDICTS[link["verdict"]][1]
        assert link["degenerate"] == VERDICTS[link["verdict"]][2]


def test_margins_in_json_match_closed_forms(capsys):
    _, doc = _json(capsys, [str(FIX / "bad.urdf")])
    links = {link["name"]: link for link in doc["files"][0]["links"]}
    # diag(0.1, 0.1, 0.3): λ1 + λ2 − λ3 = −0.1
    tri = links["triangle"]
    assert tri["margins"]["triangle_margin"] == pytest.approx(-0.1, abs=1e-15)
    assert tri["principal_moments"] == pytest.approx([0.1, 0.1, 0.3], abs=1e-15)
    assert tri["com"] == [0.0, 0.1, 0.0] and tri["line"] == 56
    # diag(-0.01, 0.03, 0.03): smallest moment −0.01
    assert links["not_psd"]["margins"]["min_eig_inertia_com"] == pytest.approx(-0.01, abs=1e-15)
    # a rotated inertial frame does not change the principal moments
    I = np.array([[0.05, 0.01, 0.0], [0.01, 0.06, 0.0], [0.0, 0.0, 0.2]])
    lam = np.linalg.eigvalsh(I)
    rot = links["triangle_rotated"]
    assert rot["principal_moments"] == pytest.approx(lam, abs=1e-15)
    assert rot["margins"]["triangle_margin"] == pytest.approx(lam[0] + lam[1] - lam[2], abs=1e-15)
    # the tolerance scales with the body: tol * (tr(I_c) / 2 + m * (1 mm)^2) + round-off
    tau = DEFAULT_TOL * (0.5 * 0.5 + 1.0 * 1e-6)
    assert tri["margins"]["tolerance"] == pytest.approx(tau, rel=1e-6)


def _body(m, c, I_c):
    return RigidBodyInertia.from_mass_com_inertia(
        jnp.asarray(m, jnp.float64), jnp.asarray(c, jnp.float64), jnp.asarray(I_c, jnp.float64)
    )


def test_classify_definitions():
    z = np.zeros(3)
    cases = {
        "massless": _body(0.0, z, np.zeros((3, 3))),
        "non_positive_mass": _body(0.0, z, np.eye(3) * 1e-3),
        "point_mass": _body(2.0, [0.3, 0.0, 0.0], np.zeros((3, 3))),
        # two point masses at ±1 on x: I = diag(0, 1, 1), a rod
        "pseudo_inertia_not_pd": RigidBodyInertia.from_point_masses(
            jnp.array([0.5, 0.5]), jnp.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
        ),
        # I = diag(1, 0, 0) is PSD but violates the triangle inequality
        "triangle_violated": _body(1.0, z, np.diag([1.0, 0.0, 0.0])),
        "not_psd": _body(1.0, z, np.diag([-1e-3, 1.0, 1.0])),
        "consistent": _body(1.0, z, np.diag([1.0, 2.0, 2.5])),
    }
    for code, body in cases.items():
        assert classify(body[None])[0].code == code, code
    # a negative mass with a perfectly good inertia is still an error
    assert classify(_body(-1.0, z, np.eye(3))[None])[0].code == "non_positive_mass"


def test_roundoff_on_a_point_mass_is_not_an_error():
    """Eigenvalues of −1e−20 on a 1 kg point mass are round-off, not a non-PSD inertia."""
    body = _body(1.0, np.zeros(3), np.diag([-1e-20, 1e-20, 0.0]))
    v = classify(body[None])[0]
    assert v.code == "point_mass" and v.valid and v.degenerate
    assert v.min_eig_inertia_com < 0 < v.tolerance
    # the same numbers on a 1 g body with real moments are judged against that body's scale
    real = _body(1e-3, [0.0, 0.0, 0.0], np.diag([-1e-7, 2e-6, 2e-6]))
    assert classify(real[None])[0].code == "not_psd"


def test_tol_option_changes_what_counts_as_roundoff(tmp_path, capsys):
    # a lamina printed with 6 significant digits: 0.000416666 + 0.000833333 < 0.00125 by 1e-9
    p = tmp_path / "plate.urdf"
    p.write_text(
        "<robot name='r'><link name='plate'><inertial><mass value='0.05'/>"
        "<inertia ixx='0.000416666' ixy='0' ixz='0' iyy='0.000833333' iyz='0' izz='0.00125'/>"
        "</inertial></link></robot>"
    )
    status, doc = _json(capsys, [str(p)])
    assert (status, _verdicts(doc)) == (1, {"plate": "triangle_violated"})
    status, doc = _json(capsys, [str(p), "--tol", "1e-6"])
    assert (status, _verdicts(doc)) == (0, {"plate": "pseudo_inertia_not_pd"})


def test_text_output_and_exit_status_for_several_files(tmp_path, capsys):
    malformed = tmp_path / "broken.urdf"
    malformed.write_text("<robot name='r'><link name='a'><inertial><mass value='x'/>")
    assert main([str(FIX / "arm.urdf"), str(FIX / "walker.xml")]) == 0
    out = capsys.readouterr().out
    assert "payload" in out and "point mass (degenerate)" in out
    assert "note: 1 body without <inertial>" in out
    assert main([str(FIX / "arm.urdf"), str(FIX / "bad.urdf")]) == 1
    out = capsys.readouterr().out
    assert "INVALID: triangle inequality violated" in out
    assert "checked 2 of 2 files, 13 links: 3 consistent, 3 massless, " in out
    assert "5 INVALID (2 non-positive mass, 1 not PSD, 2 triangle inequality violated)" in out
    assert main([str(FIX / "bad.urdf"), str(malformed)]) == 2
    captured = capsys.readouterr()
    assert "broken.urdf:1: not well-formed XML" in captured.err


def test_registered_in_the_command_line(monkeypatch, capsys):
    monkeypatch.setitem(
        cli.SUBCOMMANDS,
        "check",
        ("spatialjax._cli.check", "check the inertials of URDF/SDF/MJCF files"),
    )
    assert cli.main(["check", str(FIX / "bad.sdf"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["n_invalid"] == 2


# -------------------------------------------------------------------------- --fix


def _params(model) -> np.ndarray:
    """(n, 10) parameters about each link origin, in NumPy: h = m c, I_o = I_c − m c× c×."""
    out = []
    for link in model.links:
        m, c, I_c = link.mass, link.com, link.inertia_com
        I_o = I_c + m * (c @ c * np.eye(3) - np.outer(c, c))
        out.append([m, *(m * c), I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2]])
    return np.array(out)


def _inertial_spans(data: bytes, names) -> list[tuple[int, int]]:
    """Byte spans of the <inertial> elements of the named links/bodies."""
    spans = []
    for node in parse_xml(data, "x").iter():
        if node.tag in ("link", "body") and node.attrib.get("name") in names:
            inertial = node.find("inertial")
            spans.append((inertial.start, inertial.end))
    assert len(spans) == len(names)
    return sorted(spans)


def _outside(data: bytes, spans) -> list[bytes]:
    chunks, pos = [], 0
    for s, e in spans:
        chunks.append(data[pos:s])
        pos = e
    return chunks + [data[pos:]]


@pytest.mark.parametrize("fixture", sorted(BAD))
def test_fix_rewrites_only_invalid_inertials(tmp_path, capsys, fixture):
    src = FIX / fixture
    out = tmp_path / ("fixed_" + fixture)
    status, doc = _json(capsys, [str(src), "--fix", str(out)])
    assert status == 0  # ruff's convention: everything found was fixed
    invalid = [n for n, v in BAD[fixture].items() if not VERDICTS[v][1]]
    fix = doc["files"][0]["fix"]
    assert [e["name"] for e in fix["links"]] == invalid
    assert fix["n_invalid_after"] == 0
    assert all(e["valid_after"] and e["verdict_after"] == "consistent" for e in fix["links"])

    # re-read: everything valid, and consistent wherever it was fixed
    status, after = _json(capsys, [str(out)])
    assert status == 0
    for name, code in _verdicts(after).items():
        assert code == ("consistent" if name in invalid else BAD[fixture][name])

    # bytes outside the rewritten <inertial> elements are identical
    a, b = src.read_bytes(), out.read_bytes()
    assert _outside(a, _inertial_spans(a, invalid)) == _outside(b, _inertial_spans(b, invalid))

    # valid links read back bit-for-bit; fixed ones equal nearest_consistent of the original
    p0, p1 = _params(read_model(src)), _params(read_model(out))
    names = read_model(src).names
    idx = np.array([names.index(n) for n in invalid])
    expected = jax.jit(nearest_consistent)(RigidBodyInertia(p0[idx]), fix["eps"])
    np.testing.assert_allclose(p1[idx], expected.params, rtol=1e-14, atol=1e-16)
    keep = np.array([n not in invalid for n in names])
    np.testing.assert_array_equal(p1[keep], p0[keep])

    # the report says how far each one moved
    text_status = main([str(src), "--fix", str(tmp_path / "again")])
    assert text_status == 0
    text = capsys.readouterr().out
    assert f"wrote {tmp_path / 'again'}" in text and "|ΔJ|_F" in text and "now consistent" in text


def test_fix_several_files_into_a_directory(tmp_path, capsys):
    outdir = tmp_path / "out"
    assert main([str(FIX / "bad.urdf"), str(FIX / "arm.urdf"), "--fix", str(outdir)]) == 0
    capsys.readouterr()
    assert (outdir / "arm.urdf").read_bytes() == (FIX / "arm.urdf").read_bytes()
    assert main([str(outdir / "bad.urdf"), str(outdir / "arm.urdf")]) == 0


_R = np.array([[0.36, 0.48, -0.8], [-0.8, 0.6, 0.0], [0.48, 0.64, 0.6]])  # a rotation


@pytest.mark.parametrize(
    "ext, text",
    [
        ("urdf", "<robot name='r'><link name='L'><inertial><mass value='1'/><inertia ixx='1' "
                 "ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link></robot>"),
        ("urdf", "<robot name='r'><link name='L'><inertial><origin rpy='0.1 0.2 0.3'/>"
                 "<mass value='1'/><inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/>"
                 "</inertial></link></robot>"),
        ("sdf", "<sdf version='1.9'><model name='m'><link name='L'><inertial>"
                "<inertia><ixx>1</ixx><ixy>0</ixy><ixz>0</ixz><iyy>1</iyy><iyz>0</iyz><izz>1</izz>"
                "</inertia></inertial></link></model></sdf>"),
        ("sdf", "<sdf version='1.9'><model name='m'><link name='L'><inertial>"
                "<pose degrees='true'>1 2 3 10 20 30</pose><mass>2</mass></inertial></link>"
                "</model></sdf>"),
        ("xml", "<mujoco><worldbody><body name='L'>"
                "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/></body></worldbody></mujoco>"),
        ("xml", "<mujoco><compiler angle='radian'/><worldbody><body name='L'><inertial pos='0 0 0' "
                "euler='0.1 0.2 0.3' mass='1' diaginertia='1 2 2.5'/></body></worldbody></mujoco>"),
        ("xml", "<mujoco><worldbody><body name='L'><inertial pos='0 0 0' quat='1 0 0 0.2' mass='1' "
                "diaginertia='1 2 2.5'/></body></worldbody></mujoco>"),
        ("xml", "<mujoco><worldbody><body name='L'><inertial pos='0 0 0' mass='1' "
                "fullinertia='1 1 1 0 0 0'/></body></worldbody></mujoco>"),
    ],
)  # fmt: skip
def test_writers_round_trip_any_inertial(tmp_path, ext, text):
    """Each format's writer can express any (m, c, I_c), inserting missing elements."""
    p = tmp_path / f"m.{ext}"
    p.write_text(text)
    model = read_model(p)
    m, c = 2.75, np.array([0.125, -0.5, 0.03125])
    I_c = _R @ np.diag([0.3, 0.5, 0.7]) @ _R.T  # not diagonal in any file frame above
    data = apply_edits(model.source, model.links[0].rewrite(m, c, I_c))
    q = tmp_path / f"out.{ext}"
    q.write_bytes(data)
    link = read_model(q).links[0]
    assert link.mass == m
    np.testing.assert_allclose(link.com, c, atol=1e-16)
    np.testing.assert_allclose(link.inertia_com, I_c, atol=1e-15)
    # unchanged values are left as written
    same = apply_edits(model.source, model.links[0].rewrite(*_as_read(model.links[0])))
    assert same == model.source


def _as_read(link):
    return link.mass, link.com, link.inertia_com


# --------------------------------------------------------------------- example-robot-data


@pytest.mark.skipif(_robots_dir() is None, reason="example-robot-data is not installed")
@pytest.mark.slow  # every robot of example-robot-data
def test_example_robot_data_corpus(tmp_path):
    """Check every URDF (and SDF) of example-robot-data; fix the invalid ones."""
    root = _robots_dir()
    files = sorted(glob.glob(str(root / "**" / "*.urdf"), recursive=True))
    files += sorted(glob.glob(str(root / "**" / "*.sdf"), recursive=True))
    t0 = time.perf_counter()
    n_links, invalid, counts = 0, [], {}
    for k, path in enumerate(files):
        rep = check_file(path)
        n_links += rep["n_links"]
        model = read_model(path)
        for link, entry in zip(model.links, rep["links"], strict=True):
            counts[entry["verdict"]] = counts.get(entry["verdict"], 0) + 1
            # independent check of the verdict with NumPy on the values read
            lam = np.linalg.eigvalsh(link.inertia_com)
            tau = entry["margins"]["tolerance"]
            numpy_invalid = entry["verdict"] != "massless" and (
                link.mass <= 0 or lam[0] < -tau or lam[0] + lam[1] - lam[2] < -tau
            )
            assert numpy_invalid == (not entry["valid"]), (path, link.name)
            if not entry["valid"]:
                invalid.append(f"{Path(path).relative_to(root)}: {link.name}: {entry['text']}")
        if rep["n_invalid"]:
            out = tmp_path / f"{k}_{Path(path).name}"
            fixed = check_file(path, fix_to=out)
            assert fixed["fix"]["n_invalid_after"] == 0, path
            assert check_file(out)["n_invalid"] == 0
            names = [e["name"] for e in fixed["fix"]["links"]]
            a, b = Path(path).read_bytes(), out.read_bytes()
            assert _outside(a, _inertial_spans(a, set(names))) == _outside(
                b, _inertial_spans(b, set(names))
            )
    elapsed = time.perf_counter() - t0
    print(
        f"\nexample-robot-data: {len(files)} files, {n_links} links checked in {elapsed:.1f} s; "
        f"verdicts {dict(sorted(counts.items()))}; {len(invalid)} invalid:"
    )
    print("\n".join("  " + line for line in invalid))
    assert len(files) > 20 and n_links > 1000
    assert set(counts) <= set(VERDICTS)


def test_fixture_copy_untouched_by_check(tmp_path, capsys):
    """Checking never writes to the input."""
    p = tmp_path / "bad.urdf"
    shutil.copy(FIX / "bad.urdf", p)
    before = p.read_bytes()
    main([str(p)])
    capsys.readouterr()
    assert p.read_bytes() == before


# ----------------------------------------------------- regressions: --fix never clobbers


def _copy(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    return dst


def test_fix_into_the_folder_of_an_input_refuses_to_overwrite_it(tmp_path, capsys):
    """Regression: ``check c.urdf d.urdf --fix DIR`` overwrote an input living in DIR."""
    a = _copy(FIX / "bad.urdf", tmp_path / "dir" / "bad.urdf")
    b = _copy(FIX / "arm.urdf", tmp_path / "other" / "arm.urdf")
    before = a.read_bytes()
    assert main([str(a), str(b), "--fix", str(tmp_path / "dir")]) == 2
    err = capsys.readouterr().err
    assert "is the input" in err and "--in-place" in err
    assert a.read_bytes() == before
    assert not (tmp_path / "dir" / "arm.urdf").exists()  # nothing written at all


def test_fix_of_one_file_onto_itself_is_refused(tmp_path, capsys):
    a = _copy(FIX / "bad.urdf", tmp_path / "bad.urdf")
    before = a.read_bytes()
    assert main([str(a), "--fix", str(a)]) == 2
    assert "is the input" in capsys.readouterr().err
    assert a.read_bytes() == before
    with raises_argument(ArgumentError, "fix_to", match="in_place=True"):  # what to do
        check_file(a, fix_to=tmp_path / "." / "bad.urdf")
    assert a.read_bytes() == before


def test_fix_two_inputs_with_the_same_name_into_one_folder_is_refused(tmp_path, capsys):
    """Regression: ``a/robot.urdf`` and ``b/robot.urdf`` into one folder made one file."""
    a = _copy(FIX / "bad.urdf", tmp_path / "a" / "robot.urdf")
    b = _copy(FIX / "arm.urdf", tmp_path / "b" / "robot.urdf")
    out = tmp_path / "out"
    assert main([str(a), str(b), "--fix", str(out)]) == 2
    err = capsys.readouterr().err
    assert "would both be written to" in err and str(a) in err and str(b) in err
    assert not out.exists()


def test_fix_to_a_file_name_with_several_inputs_is_an_error(tmp_path, capsys):
    """Regression: ``--fix out.urdf`` with two inputs silently created a directory."""
    out = tmp_path / "out.urdf"
    assert main([str(FIX / "bad.urdf"), str(FIX / "arm.urdf"), "--fix", str(out)]) == 2
    assert "OUT must be a folder" in capsys.readouterr().err
    assert not out.exists()
    out.write_text("not a folder")
    assert main([str(FIX / "bad.urdf"), str(FIX / "arm.urdf"), "--fix", str(out)]) == 2
    assert "existing file" in capsys.readouterr().err
    assert out.read_text() == "not a folder"


def test_fix_prints_every_file_it_wrote_even_when_quiet(tmp_path, capsys):
    out = tmp_path / "out"
    assert main([str(FIX / "bad.urdf"), str(FIX / "arm.urdf"), "--fix", str(out), "-q"]) == 0
    text = capsys.readouterr().out
    assert f"wrote {out / 'bad.urdf'}: 5 inertials replaced" in text
    assert f"wrote {out / 'arm.urdf'}: an unchanged copy (nothing to fix)" in text
    assert text.strip().splitlines()[-1].endswith("; fixed 5 of 5")
    # a second run replaces its own earlier outputs (not inputs), and says so
    assert main([str(FIX / "bad.urdf"), "--fix", str(out / "bad.urdf")]) == 0
    assert f"replaced the existing file {out / 'bad.urdf'}" in capsys.readouterr().out


def test_in_place_rewrites_only_files_with_invalid_inertials(tmp_path, capsys):
    bad = _copy(FIX / "bad.urdf", tmp_path / "bad.urdf")
    good = _copy(FIX / "arm.urdf", tmp_path / "arm.urdf")
    good_mtime = good.stat().st_mtime_ns
    assert main([str(bad), str(good), "--in-place"]) == 0
    text = capsys.readouterr().out
    assert f"rewrote {bad} in place: 5 inertials replaced" in text
    assert f"nothing to fix: {good} left unchanged" in text
    assert good.stat().st_mtime_ns == good_mtime
    assert main([str(bad), str(good)]) == 0
    capsys.readouterr()
    assert not list(tmp_path.glob(".*.tmp"))  # the atomic write leaves no temporary file
    # a symbolic link is followed: the target is rewritten, the link and the mode kept
    target = _copy(FIX / "bad.urdf", tmp_path / "real" / "model.urdf")
    target.chmod(0o640)
    link = tmp_path / "link.urdf"
    link.symlink_to(target)
    assert main([str(link), "--in-place"]) == 0
    capsys.readouterr()
    assert link.is_symlink() and oct(target.stat().st_mode & 0o777) == oct(0o640)
    assert main([str(target)]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:  # --fix and --in-place are exclusive
        main([str(bad), "--in-place", "--fix", str(tmp_path / "x.urdf")])
    assert exc.value.code == 2


# --------------------------------------------------------- exit status, --quiet, summary


def test_exit_status_follows_ruff_remaining_problems_decide(tmp_path, capsys):
    """0: nothing invalid or everything fixed; 1: something remains; 2: unreadable input."""
    assert main([str(FIX / "arm.urdf")]) == 0
    assert main([str(FIX / "bad.urdf")]) == 1
    assert main([str(FIX / "bad.urdf"), "--fix", str(tmp_path / "fixed.urdf")]) == 0
    capsys.readouterr()
    status, doc = _json(capsys, [str(FIX / "bad.urdf"), "--fix", str(tmp_path / "f2.urdf")])
    assert (status, doc["n_invalid"], doc["n_invalid_remaining"]) == (0, 5, 0)


def test_internal_entity_expanding_to_markup_is_a_clear_error_exit_2(tmp_path, capsys):
    """Regression: such an entity crashed ``check`` with a traceback and exit status 1."""
    p = tmp_path / "entity.urdf"
    p.write_text(
        "<?xml version='1.0'?>\n<!DOCTYPE robot [<!ENTITY L \"<link name='x'><inertial>"
        "<mass value='1'/><inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/>"
        "</inertial></link>\">]>\n<robot name='r'>\n&L;\n</robot>\n"
    )
    assert main([str(p)]) == 2
    captured = capsys.readouterr()
    assert f"error: {p}:4: element <link> comes from the expansion of an XML entity" in captured.err
    assert "Traceback" not in captured.err + captured.out


def test_quiet_prints_problems_and_summary_only(capsys):
    assert main([str(FIX / "arm.urdf"), str(FIX / "bad.urdf"), "--quiet"]) == 1
    text = capsys.readouterr().out
    assert "arm.urdf" not in text  # a file without problems is not listed
    assert "base_link" not in text and "note:" not in text
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert lines[0].startswith(f"{FIX / 'bad.urdf'} (URDF): 7 links, 5 invalid")
    assert sum("INVALID:" in ln for ln in lines) == 5
    assert "good " not in text and "camera" not in text
    assert lines[-1] == (
        "checked 2 of 2 files, 13 links: 3 consistent, 3 massless, 1 point mass (degenerate), "
        "1 rod/lamina (degenerate), 5 INVALID (2 non-positive mass, 1 not PSD, "
        "2 triangle inequality violated)"
    )


def test_counts_are_pluralised(tmp_path, capsys):
    """Regression: ``1 links``."""
    p = tmp_path / "one.urdf"
    p.write_text(
        "<robot name='r'><link name='a'><inertial><mass value='1'/><inertia ixx='1' ixy='0' "
        "ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link></robot>"
    )
    assert main([str(p)]) == 0
    text = capsys.readouterr().out
    assert f"{p} (URDF): 1 link, " in text
    assert "checked 1 of 1 file, 1 link: 1 consistent, 0 invalid" in text
    assert "1 links" not in text and "1 files" not in text
