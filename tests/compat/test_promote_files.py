"""`engine promote RUN --to FILE` into the files other tools keep: an agents-fleet skill (Markdown, with or
without front matter) takes the winning variant's text as its body; a file engine cannot write into is
refused in one line (exit 2), never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from tests.compat.test_fleet import SKILL, project
from tests.conftest import run_engine


def fleet_run(folder: Path) -> None:
    ran = run_engine("run", str(project(folder)), "-q", "--run-id", "fleet", "--store", "st", cwd=folder)
    assert ran.returncode == 0, ran.stderr.decode()


def promote(folder: Path, variant: str, to: str, *extra: str) -> tuple[int, str, str]:
    done = run_engine("promote", "fleet", variant, "--to", to, "--store", "st", *extra, cwd=folder)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def test_a_skill_file_takes_the_variants_text_and_keeps_its_front_matter(tmp_path: Path) -> None:
    fleet_run(tmp_path)
    code, out, err = promote(tmp_path, "terse-v1", "skills/coder.md")
    assert code == 0, err
    terse = SKILL.replace("Explain every step at length.", "Answer with the fix only.")
    assert (tmp_path / "skills" / "coder.md").read_text() == terse
    assert "body: the variant's text (3 lines)" in out
    skill = tmp_path / "skills" / "reviewer.skill.md"
    skill.write_text("---\nname: coder\ntags: [code]\n---\nold text\n")
    code, out, err = promote(tmp_path, "terse-v1", str(skill), "--json")
    assert code == 0, err
    assert skill.read_text() == "---\nname: coder\ntags: [code]\n---\n" + terse
    assert json.loads(out)["body"] == terse


def test_files_engine_cannot_write_into_are_refused_in_one_line(tmp_path: Path) -> None:
    fleet_run(tmp_path)
    (tmp_path / "broken.toml").write_text("[params\ntemperature = 0.3\n")
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "agent.yaml").write_text("params: {}\n")
    (tmp_path / "open.md").write_text("---\nname: x\nno closing line\n")
    (tmp_path / "scalar.toml").write_text("variant = 3\n")
    (tmp_path / "bad-yaml.skill.md").write_text("---\nname: coder\ntags: [code\n---\nold text\n")
    (tmp_path / "crlf.skill.md").write_text("---\r\nname: coder: reviewer\r\n---\r\nold text\r\n")
    cases = {
        "broken.toml": "does not parse as TOML",
        "broken.json": "does not parse as JSON",
        "agent.yaml": "expected a .toml or .json config file",
        "open.md": "expected front matter closed by a `---` line",
        "scalar.toml": "variant: expected a table to write the values into",
        "bad-yaml.skill.md": "expected front matter that parses: invalid YAML at line 3",
        "crlf.skill.md": "expected front matter that parses: invalid YAML",
        "skills": "cannot read it",
    }
    for name, expected in cases.items():
        before = (tmp_path / name).read_text() if (tmp_path / name).is_file() else None
        code, _, err = promote(tmp_path, "terse-v1", name)
        assert code == 2 and expected in err and name in err, (name, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        if before is not None:
            assert (tmp_path / name).read_text() == before  # nothing half-written
