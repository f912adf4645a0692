"""The project's set-up contract: pins agree everywhere, README and CI use the same commands."""

import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def test_environment_yml_carries_the_pyproject_pins():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = set(project["dependencies"]).union(*project["optional-dependencies"].values())
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert set(pip_section) == pins
    assert "python=3.11" in env["dependencies"]


def test_lock_agrees_with_direct_pins():
    lock = dict(
        ln.split("==", 1) for ln in (REPO / "requirements.lock").read_text().splitlines() if "==" in ln
    )
    lock = {k.lower().replace("_", "-"): v for k, v in lock.items()}
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for dep in project["dependencies"] + sum(project["optional-dependencies"].values(), []):
        name, version = dep.split("==")
        assert lock.get(name.lower().replace("_", "-")) == version, dep


def test_readme_and_ci_use_the_two_commands():
    readme = (REPO / "README.md").read_text()
    assert "make book" in readme and "make test" in readme
    assert re.search(r"^make test$", (REPO / ".ci/run").read_text(), re.M)
