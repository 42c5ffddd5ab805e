"""A requested dtype is honoured or refused, never silently changed.

In JAX's default 32-bit mode ``jnp.asarray(x, float64)`` quietly gives float32;
every public ``dtype=`` argument (the file loaders, ``Model`` loaders and
``Model.astype``) must refuse float64 there instead, naming the argument and
what to do, and refuse non-float dtypes in any mode.
"""

from __future__ import annotations

import re

import jax
import pytest
from helpers import raises_argument

from spatialjax import ArgumentError, ArgumentTypeError
from spatialjax import multibody as mb
from spatialjax.io import load_inertials

URDF = """<robot name="two">
  <link name="base"><inertial><mass value="2"/><origin xyz="0 0 0.1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><mass value="1"/><origin xyz="0.2 0 0"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""


@pytest.fixture
def urdf(tmp_path):
    path = tmp_path / "two.urdf"
    path.write_text(URDF)
    return path


def _msg(*fragments):
    return ".*".join(re.escape(f) for f in fragments)


def test_float64_is_refused_in_32_bit_mode(urdf):
    model = mb.Model.from_urdf(urdf, dtype="float32")
    with jax.enable_x64(False):
        hint = "jax.config.update('jax_enable_x64', True)"
        with raises_argument(ArgumentError, "astype", match=_msg("float64 requested", hint)):
            model.astype("float64")
        with raises_argument(
            ArgumentError, "dtype", match=_msg("dtype: float64 requested", "32-bit")
        ):
            mb.Model.from_urdf(urdf, dtype="float64")
        with raises_argument(ArgumentError, "dtype"):
            load_inertials(urdf, dtype="float64")
        # float32 is honoured
        assert model.astype("float32").dtype == "float32"


def test_non_float_dtypes_are_refused(urdf):
    model = mb.Model.from_urdf(urdf, dtype="float64")
    with raises_argument(ArgumentTypeError, "astype"):
        model.astype("int32")
    with raises_argument(ArgumentTypeError, "dtype"):
        mb.Model.from_urdf(urdf, dtype="int64")
    with raises_argument(ArgumentTypeError, "dtype"):
        load_inertials(urdf, dtype=bool)
    assert model.astype("float32").dtype == "float32"
    assert model.astype("float32").astype("float64").dtype == "float64"
