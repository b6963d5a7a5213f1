"""common.package_data: a data file inside an installed package, found without importing it (a fake
package written in tmp_path whose import would fail)."""

import sys

import pytest

from paper_pipelines.common.package_data import package_files

HINT = "install it with `pip install fakepkg==1.0`"


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """``fakepkg`` on sys.path: a data file two folders down, and an __init__ that raises if run."""
    folder = tmp_path / "fakepkg"
    (folder / "data" / "sets").mkdir(parents=True)
    (folder / "__init__.py").write_text("raise RuntimeError('fakepkg must not be imported')\n")
    (folder / "data" / "sets" / "a.csv").write_text("x\n1\n")
    (folder / "data" / "b.sdf").write_text("$$$$\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield folder
    sys.modules.pop("fakepkg", None)


def test_files_are_found_in_order_without_importing_the_package(fake_package):
    paths = package_files(
        "fakepkg", ["data/b.sdf", "data/sets/a.csv"], needed_by="x.source = y", install_hint=HINT
    )
    assert paths == [fake_package / "data" / "b.sdf", fake_package / "data" / "sets" / "a.csv"]
    assert paths[1].read_text() == "x\n1\n"
    assert "fakepkg" not in sys.modules


def test_a_missing_package_names_the_parameter_the_distribution_and_the_hint():
    with pytest.raises(FileNotFoundError) as info:
        package_files(
            "no_such_pkg_xyz",
            ["data.csv"],
            needed_by="les_molecules.data.source = moses",
            install_hint=HINT,
            distribution="molsets",
        )
    assert str(info.value) == (
        f"les_molecules.data.source = moses needs the molsets package; {HINT}"
    )
    with pytest.raises(FileNotFoundError, match=r"^p = q needs the no_such_pkg_xyz package; "):
        package_files("no_such_pkg_xyz", ["data.csv"], needed_by="p = q", install_hint=HINT)


def test_a_plain_module_is_not_a_package(tmp_path, monkeypatch):
    (tmp_path / "plainmod.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="needs the plainmod package"):
        package_files("plainmod", ["data.csv"], needed_by="p = q", install_hint=HINT)


def test_missing_files_are_all_listed_with_a_reinstall_hint(fake_package):
    with pytest.raises(FileNotFoundError) as info:
        package_files(
            "fakepkg",
            ["data/b.sdf", "data/gone.sdf", "data/sets/none.csv"],
            needed_by="nego.split.kinds with molecules",
            install_hint=HINT,
            distribution="fake-pkg",
        )
    gone, none = fake_package / "data" / "gone.sdf", fake_package / "data" / "sets" / "none.csv"
    assert str(info.value) == (
        f"nego.split.kinds with molecules: {gone}, {none} missing from the fake-pkg package; "
        f"reinstall it ({HINT})"
    )
    # a folder of that name is no data file
    (fake_package / "data" / "gone.sdf").mkdir()
    with pytest.raises(FileNotFoundError, match="gone.sdf"):
        package_files("fakepkg", ["data/gone.sdf"], needed_by="p = q", install_hint=HINT)
