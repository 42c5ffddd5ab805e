"""The model-file readers' entry points: format detection, ``read_model``, arrays.

See ``spatialjax.io`` for the conventions.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np

from .._errors import ArgumentError
from ._common import ModelFileError, ModelInertials, read_bytes
from ._description import ModelDescription
from ._mjcf import read_mjcf
from ._sdf import read_sdf
from ._urdf import read_urdf
from ._xml import parse_xml

_READERS = {"robot": ("urdf", read_urdf), "sdf": ("sdf", read_sdf), "mujoco": ("mjcf", read_mjcf)}
_EXPECTED = {
    "urdf": ("robot", "a URDF file"),
    "sdf": ("sdf", "an SDFormat file"),
    "mjcf": ("mujoco", "an MJCF file"),
}


def _parse(path, fmt: str | None = None):
    """``(bytes, root element, (format, reader))``: one parse; the root must be ``fmt``'s."""
    data = read_bytes(path)
    root = parse_xml(data, path)
    if fmt is not None:
        tag, what = _EXPECTED[fmt]
        if root.tag != tag:
            raise ModelFileError(
                path, f"expected {what} (root element <{tag}>), got <{root.tag}>", line=root.line
            )
    tag = root.tag.rsplit(":", 1)[-1]
    if tag not in _READERS:
        ext = Path(str(path)).suffix
        raise ModelFileError(
            path,
            f"unknown model format: root element <{root.tag}> (expected <robot> for URDF, "
            f"<sdf> for SDFormat or <mujoco> for MJCF; the extension {ext!r} is not used)",
            line=root.line,
        )
    return data, root, _READERS[tag]


def detect_format(path) -> str:
    """``"urdf"``, ``"sdf"`` or ``"mjcf"`` from the file's root element.

    Raises:
      ModelFileError: not XML, or an unknown root element.
    """
    return _parse(path)[2][0]


def read_model(path) -> ModelInertials:
    """Read every link's inertial with everything known about it (float64, NumPy).

    Returns:
      A [`ModelInertials`][spatialjax.io.ModelInertials]: the format, one
      [`LinkInertial`][spatialjax.io.LinkInertial] per link/body and notes about things not
      checked. [`load_inertials`][spatialjax.io.load_inertials] is the array form.

    Raises:
      ModelFileError: malformed file (names file, line, link and field).
    """
    data, root, (_, reader) = _parse(path)
    return cast(ModelInertials, reader(root, path, data).inertials)


def read_description(
    path, fmt: str | None = None, *, model_name: str | None = None
) -> ModelDescription:
    """Parse a model file once into its description: the tree, every link's inertial, the bytes.

    Args:
      path: the model file.
      fmt: ``"urdf"``, ``"sdf"`` or ``"mjcf"``: the root element must be that
        format's, exactly; default: any of the three, from the root element.
      model_name: SDFormat only: the ``<model>`` to read when the file has several.

    Returns:
      A [`ModelDescription`][spatialjax.io.ModelDescription] with its tree
      (``inertials`` is ``None``: each link carries its own).

    Raises:
      ModelFileError: not XML, an unknown format or not ``fmt``, a malformed
        file or tree (names file, line, link and field).
      ValueError: ``fmt`` unknown; ``model_name`` for a file that is not
        SDFormat, or a name that is no model of the file.

    Examples:
      >>> import pathlib, tempfile
      >>> from spatialjax.io import read_description
      >>> path = pathlib.Path(tempfile.mkdtemp()) / "pendulum.urdf"
      >>> _ = path.write_text(
      ...     '<robot name="pendulum"><link name="base"/><link name="arm"><inertial>'
      ...     '<mass value="2"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
      ...     '</inertial></link><joint name="hinge" type="continuous"><parent link="base"/>'
      ...     '<child link="arm"/></joint></robot>'
      ... )
      >>> desc = read_description(path)
      >>> desc.format, [j.name for j in desc.joints], desc.links[1].inertial.mass
      ('urdf', ['hinge'], 2.0)
    """
    if fmt is not None and fmt not in _EXPECTED:
        raise ArgumentError("fmt", f"expected 'urdf', 'sdf', 'mjcf' or None, got {fmt!r}")
    data, root, (found, reader) = _parse(path, fmt)
    if model_name is not None and found != "sdf":
        raise ArgumentError(
            "model_name",
            f"{model_name!r} given, but {path} is {found.upper()}, which holds one "
            "model (only SDFormat files hold several)",
        )
    options = {"model_name": model_name} if found == "sdf" else {}
    return reader(root, path, data, tree=True, **options)


def _strict_check(model: ModelInertials):
    for link in model.links:
        if link.mass < 0:
            raise ModelFileError(
                model.path, f"negative mass {link.mass!r}", line=link.line, link=link.name,
                field="mass",
            )  # fmt: skip
        for i, axis in enumerate("xyz"):
            if link.inertia_file[i, i] < 0:
                raise ModelFileError(
                    model.path,
                    f"negative moment of inertia {link.inertia_file[i, i]!r}",
                    line=link.line,
                    link=link.name,
                    field=f"inertia/i{axis}{axis}",
                )


def _resolve_dtype(dtype):
    from .._checks import resolve_float_dtype  # imports jax: only when arrays are built

    return resolve_float_dtype(dtype)


def load_inertials(path, *, dtype=None, strict: bool = False):
    """Inertial parameters of every link in a URDF, SDFormat or MJCF file.

    Args:
      path: the model file (format detected from the root element).
      dtype: float dtype of the result; default JAX's default float (parsed in float64).
      strict: raise [`ModelFileError`][spatialjax.io.ModelFileError] for a negative mass or a
        negative moment of inertia instead of returning it.

    Returns:
      ``(names, inertia)``: the link (URDF/SDF) or body (MJCF) names in document order
      and a [`RigidBodyInertia`][spatialjax.RigidBodyInertia] of batch shape
      ``(len(names),)``, each about its link's origin in the link's axes. URDF links
      without ``<inertial>`` are zero; SDF links without one carry the SDF default (1 kg,
      unit inertia); MJCF bodies without ``<inertial>`` are left out (see
      [`read_model`][spatialjax.io.read_model]'s notes). An SDF ``<fluid_added_mass>`` is
      not included: see [`load_sdf_added_mass`][spatialjax.io.load_sdf_added_mass].

    Raises:
      ModelFileError: malformed file (names file, line, link and field).
    """
    model = read_model(path)
    if strict:
        _strict_check(model)
    return model.names, inertia_of(model, dtype)


def inertia_of(model: ModelInertials, dtype=None):
    """The links of a ``read_model`` result as a ``RigidBodyInertia`` of batch ``(n,)``."""
    import jax.numpy as jnp

    from .._inertia import RigidBodyInertia

    dtype = _resolve_dtype(dtype)
    n = len(model.links)
    m = np.array([link.mass for link in model.links], dtype=np.float64).reshape(n)
    c = np.array([link.com for link in model.links], dtype=np.float64).reshape(n, 3)
    I_c = np.array([link.inertia_com for link in model.links], dtype=np.float64).reshape(n, 3, 3)
    return RigidBodyInertia.from_mass_com_inertia(
        jnp.asarray(m, dtype), jnp.asarray(c, dtype), jnp.asarray(I_c, dtype)
    )


def load_sdf_added_mass(path, *, about: str = "origin", dtype=None):
    """The ``<fluid_added_mass>`` of every link of an SDFormat file, in ``[ω; v]`` order.

    SDF's ``[x, y, z, p, q, r]`` (linear first) is reordered so that the result adds to
    ``RigidBodyInertia.as_matrix()``.

    Args:
      path: an SDFormat file.
      about: ``"origin"`` (default, SDF 1.10): the file's matrix is about the link
        origin in its axes; ``"com"``: about the CoM in the inertial frame's axes
        (gz-math's reading), moved exactly to the link origin.
      dtype: as in [`load_inertials`][spatialjax.io.load_inertials].

    Returns:
      ``(names, added, present)``: link names, ``(n, 6, 6)`` added-mass matrices about
      the link origin in link axes (zeros where absent) and an ``(n,)`` boolean mask of
      the links that have a ``<fluid_added_mass>``.

    Raises:
      ModelFileError: malformed file or not an SDFormat file.
      ValueError: unknown ``about``.
    """
    import jax.numpy as jnp

    from .._transforms import Plxb

    if about not in ("origin", "com"):
        raise ArgumentError("about", f"expected 'origin' or 'com', got {about!r}")
    model = read_model(path)
    if model.format != "sdf":
        raise ModelFileError(path, f"expected an SDFormat file, got {model.format.upper()}")
    dtype = _resolve_dtype(dtype)
    from .._spatial_matrix import swap_linear_angular, transform_spatial_matrix

    n = len(model.links)
    added = np.zeros((n, 6, 6))
    present = np.zeros(n, dtype=bool)
    for k, link in enumerate(model.links):
        if link.added_mass is not None:
            added[k] = link.added_mass
            present[k] = True
    added_j = swap_linear_angular(jnp.asarray(added, dtype))  # [x y z p q r] -> [ω; v]
    if about == "com" and n:
        # Plxb(R_BC, c_BoBcm_B) maps motion from link (B) to CoM-frame (C) coordinates;
        # inverse=True returns M_B = Xᵀ M_C X.
        R = np.array([link.rotation for link in model.links])
        c = np.array([link.com for link in model.links])
        X_CB = Plxb(jnp.asarray(R, dtype), jnp.asarray(c, dtype))
        added_j = transform_spatial_matrix(added_j, X_CB, inverse=True)
    return model.names, added_j, jnp.asarray(present)
