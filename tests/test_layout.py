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
