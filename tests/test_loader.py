"""Experiment files (TOML, YAML), suites in four formats, and errors naming file, field and expectation."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import InputError
from engine.events.spec import CaseSpec, ExperimentSpec
from engine.input.loader import load_experiment

GOOD_TOML = """
name = "concise-vs-verbose"
seed = 42
[target]
kind = "openai"
base_url = "http://127.0.0.1:8080/v1"
model = "my-model"
api_key_env = "OPENAI_API_KEY"
[params]
temperature = 0.7
max_tokens = 128
[[variants]]
name = "baseline"
[[variants]]
name = "concise"
system = "Answer in one sentence."
params = { temperature = 0.2 }
flags = { max_retries = 5 }
[[cases]]
id = "capital-fr"
prompt = "What is the capital of France?"
expected = "Paris"
tags = ["geo"]
[[graders]]
kind = "contains"
[repeat]
count = 3
strategy = "mean"
[budget]
max_trials = 1000
max_wall_time_s = 3600
max_tokens = 1000000
max_cost_usd = 5.0
"""

GOOD_YAML = """
name: concise-vs-verbose
seed: 42
target:
  kind: openai
  base_url: http://127.0.0.1:8080/v1
  model: my-model
  api_key_env: OPENAI_API_KEY
params: {temperature: 0.7, max_tokens: 128}
variants:
  - name: baseline
  - name: concise
    system: Answer in one sentence.
    params: {temperature: 0.2}
    flags: {max_retries: 5}
cases:
  - id: capital-fr
    prompt: What is the capital of France?
    expected: Paris
    tags: [geo]
graders:
  - kind: contains
repeat: {count: 3, strategy: mean}
budget: {max_trials: 1000, max_wall_time_s: 3600, max_tokens: 1000000, max_cost_usd: 5.0}
"""

MINIMAL = """
name = "ok"
[[cases]]
id = "a"
prompt = "p"
expected = "x"
"""


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        load_experiment(path)
    return caught.value


def assert_names(error: InputError, file: Path | str, field: str, *expected: str) -> None:
    """The one-line message starts with the file, then the field path, then what was expected."""
    message = str(error)
    assert error.file == str(file) and error.field == field, message
    assert message.startswith(f"{file}: {field}: " if field else f"{file}: "), message
    for part in expected:
        assert part in error.expected, message
    assert "\n" not in message


# --- good files ---------------------------------------------------------------------------------------
def test_a_good_toml_file_loads(tmp_path: Path) -> None:
    spec = load_experiment(write(tmp_path, GOOD_TOML))
    assert isinstance(spec, ExperimentSpec)
    assert spec.name == "concise-vs-verbose" and spec.seed == 42
    assert spec.target.kind == "openai" and spec.target.base_url == "http://127.0.0.1:8080/v1"
    assert [v.name for v in spec.variants] == ["baseline", "concise"]
    assert spec.variants[1].params == {"temperature": 0.2} and spec.variants[1].flags == {"max_retries": 5}
    assert spec.cases == [
        CaseSpec(id="capital-fr", prompt="What is the capital of France?", expected="Paris", tags=["geo"])
    ]
    assert spec.repeat.count == 3 and spec.budget.max_trials == 1000 and spec.budget.max_cost_usd == 5.0
    assert spec.execution.concurrency == 16  # defaults fill what the file leaves out


@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_yaml_loads_the_same_spec_as_toml(tmp_path: Path, suffix: str) -> None:
    from_toml = load_experiment(write(tmp_path, GOOD_TOML))
    assert load_experiment(write(tmp_path, GOOD_YAML, "exp" + suffix)) == from_toml


# --- errors: file, field path, expectation ---------------------------------------------------------
@pytest.mark.parametrize(
    ("extra", "field", "expected"),
    [
        ('[budget]\nmax_trials = "x"\n', "budget.max_trials", ["expected int", "got str"]),
        ("[budget]\nmax_trials = 1.5\n", "budget.max_trials", ["expected int", "got float"]),
        ("[budget]\nmax_trials = -1\n", "budget.max_trials", ["expected int >= 1"]),
        ("[budget]\nmax_cost_usd = nan\n", "budget.max_cost_usd", ["expected float > 0"]),
        ("[budget]\nmax_wall_time_s = inf\n", "budget.max_wall_time_s", ["expected float <="]),
        ("[budget]\nmax_tokens = 9223372036854775808\n", "budget.max_tokens", ["at most 64 bits"]),
        ("[execution]\nconcurrency = 10000000\n", "execution.concurrency", ["expected int <= 4096"]),
        ("[target]\ntimeout_s = -5\n", "target.timeout_s", ["expected float > 0"]),
        ('[[graders]]\nkind = "contains"\nweight = inf\n', "graders[0].weight", ["expected float <="]),
        ("[pricing]\nm = { input_per_mtok = nan }\n", "pricing[...].input_per_mtok", ["expected float >= 0"]),
        ("[repeat]\ncuont = 3\n", "repeat", ["unknown field cuont"]),
        ('[[variants]]\nname = "b"\nparms = {}\n', "variants[0]", ["unknown field parms"]),
        ('[[graders]]\nkind = "regex"\npattern = "("\n', "graders[0].pattern", ["valid regular expression"]),
        ('[[graders]]\nkind = "regex"\n', "graders[0].pattern", ["required"]),
        ('[[graders]]\nkind = "telepathy"\n', "graders[0].kind", ["of exact, contains", "'telepathy'"]),
        ('[[graders]]\nkind = "exact"\npattern = "x"\n', "graders[0]", ["unknown field pattern"]),
        ('[[graders]]\nkind = "forbidden"\n', "graders[0].value", ["forbidden text"]),
        ('[[graders]]\nkind = "command"\n', "graders[0].commands", ["criteria.commands"]),
        ("[repeat]\ncount = 0\n", "repeat.count", ["expected int >= 1"]),
        ("[repeat]\ncount = 1000000000\n", "repeat.count", ["expected int <= 10000"]),
        ('[repeat]\nstrategy = "median"\n', "repeat.strategy", ["one of mean, pass_at_k"]),
        ('[[cases]]\nid = "a"\nprompt = "again"\nexpected = "y"\n', "cases[1].id", ["unique id", "'a'"]),
        ('[[cases]]\nid = "b"\nexpected = "y"\n', "cases[1].prompt", ["required"]),
        ('[target]\nkind = "openai"\n', "target.base_url", ["required"]),
        ('[target]\nkind = "python"\n', "target.callable", ["required"]),
        ('[target]\nkind = "local"\ncommand = "x"\n', "target", ["unknown field command"]),
        ("[scoring]\npass_threshold = 2\n", "scoring.pass_threshold", ["float <= 1", "run from 0 to 1"]),
        (
            '[tune]\nparameters = [{ name = "t", min = 0, max = 1e9, step = 0.5, default = 0 }]\n',
            "tune.parameters",
            ["at most 100000 grid points", "'t' has 2e+09"],
        ),
    ],
)
def test_errors_name_file_field_and_expectation(
    tmp_path: Path, extra: str, field: str, expected: list[str]
) -> None:
    path = write(tmp_path, MINIMAL + extra)
    assert_names(load_error(path), path, field, *expected)


def test_an_unknown_top_level_field(tmp_path: Path) -> None:
    path = write(tmp_path, 'nmae = "typo"\n' + MINIMAL)
    assert_names(load_error(path), path, "(top level)", "unknown field nmae")


def test_a_case_without_prompt(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "n"\n[[cases]]\nid = "a"\nexpected = "x"\n')
    assert_names(load_error(path), path, "cases[0].prompt", "expected a value", "required")


def test_a_negative_seed(tmp_path: Path) -> None:
    path = write(tmp_path, "seed = -1\n" + MINIMAL)
    assert_names(load_error(path), path, "seed", "expected int >= 0")


def test_a_duplicate_case_id(tmp_path: Path) -> None:
    text = 'name = "n"\n' + '[[cases]]\nid = "dup"\nprompt = "p"\nexpected = "x"\n' * 2
    assert_names(
        load_error(write(tmp_path, text)), tmp_path / "exp.toml", "cases[1].id", "'dup' is used twice"
    )


def test_the_same_errors_from_yaml(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD_YAML.replace("max_trials: 1000", "max_trials: x"), "exp.yaml")
    assert_names(load_error(path), path, "budget.max_trials", "expected int")
    path = write(tmp_path, GOOD_YAML.replace("seed: 42", "sed: 42"), "exp.yaml")
    assert_names(load_error(path), path, "(top level)", "unknown field sed")


def test_invalid_syntax(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "n"\n[[cases]\nid = "a"\n')
    assert_names(load_error(path), path, "", "invalid TOML", "line 2")
    path = write(tmp_path, "name: [unclosed\n", "bad.yaml")
    assert_names(load_error(path), path, "", "invalid YAML")
    path = write(tmp_path, "- just\n- a list\n", "list.yaml")
    assert_names(load_error(path), path, "", "table/mapping at the top level")
    path = write(tmp_path, "name: x\ncases:\n  - id: a\n   prompt: b\n", "indent.yaml")
    assert_names(load_error(path), path, "", "invalid YAML at line 4:4: expected <block end>")
    path = write(tmp_path, '{"name": "j",,}', "exp.json")
    assert_names(load_error(path), path, "", "invalid JSON at line 1:14")


def test_a_json_experiment_file_is_read_as_json(tmp_path: Path) -> None:
    text = '{"name": "j", "cases": [{"id": "a", "prompt": "p", "expected": "x"}]}'
    path = write(tmp_path, text, "exp.json")
    assert load_experiment(path).cases[0].expected == "x"


def test_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.toml"
    assert_names(load_error(path), path, "", "file not found")


def test_no_cases_at_all(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "n"\n')
    assert_names(load_error(path), path, "cases", "at least one case")


# --- suites -------------------------------------------------------------------------------------------
SUITES = {
    "cases.jsonl": (
        '{"id": "geo-1", "prompt": "a", "expected": "x", "tags": ["geo", "easy"]}\n'
        "\n"
        '{"id": "geo-2", "prompt": "b", "expected": "y", "tags": ["geo"]}\n'
        '{"id": "math-1", "prompt": "c", "expected": "z", "tags": ["easy"]}\n'
    ),
    "cases.csv": ("id,prompt,expected,tags\ngeo-1,a,x,geo;easy\ngeo-2,b,y,geo\nmath-1,c,z,easy\n"),
    "cases.yaml": (
        "cases:\n"
        "  - {id: geo-1, prompt: a, expected: x, tags: [geo, easy]}\n"
        "  - {id: geo-2, prompt: b, expected: y, tags: [geo]}\n"
        "  - {id: math-1, prompt: c, expected: z, tags: [easy]}\n"
    ),
    "cases.toml": (
        '[[cases]]\nid = "geo-1"\nprompt = "a"\nexpected = "x"\ntags = ["geo", "easy"]\n'
        '[[cases]]\nid = "geo-2"\nprompt = "b"\nexpected = "y"\ntags = ["geo"]\n'
        '[[cases]]\nid = "math-1"\nprompt = "c"\nexpected = "z"\ntags = ["easy"]\n'
    ),
}


def suite_experiment(tmp_path: Path, suite: str, extra: str = "", inline: str = "") -> Path:
    return write(tmp_path, f'name = "s"\n{inline}[suite]\npath = "{suite}"\n{extra}')


@pytest.mark.parametrize("suite", sorted(SUITES))
@pytest.mark.parametrize(
    ("extra", "ids"),
    [
        ("", ["geo-1", "geo-2", "math-1"]),
        ('select = ["geo-*"]\n', ["geo-1", "geo-2"]),
        ('select = ["*-1", "nothing*"]\n', ["geo-1", "math-1"]),
        ('tags = ["easy"]\n', ["geo-1", "math-1"]),
        ('select = ["geo-*"]\ntags = ["easy"]\n', ["geo-1"]),
        ('tags = ["geo", "easy"]\n', ["geo-1", "geo-2", "math-1"]),
    ],
)
def test_suites_with_select_globs_and_tags(tmp_path: Path, suite: str, extra: str, ids: list[str]) -> None:
    (tmp_path / suite).write_text(SUITES[suite])
    spec = load_experiment(suite_experiment(tmp_path, suite, extra))
    assert [c.id for c in spec.cases] == ids
    assert spec.suite is None  # the cases are inlined
    geo_1 = next(c for c in spec.cases if c.id == "geo-1")
    assert (geo_1.prompt, geo_1.expected, geo_1.tags) == ("a", "x", ["geo", "easy"])


def test_suite_cases_follow_inline_cases_and_may_live_in_a_subfolder(tmp_path: Path) -> None:
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "cases.jsonl").write_text(SUITES["cases.jsonl"])
    inline = '[[cases]]\nid = "inline"\nprompt = "p"\nexpected = "q"\n'
    spec = load_experiment(suite_experiment(tmp_path, "suites/cases.jsonl", 'tags = ["geo"]\n', inline))
    assert [c.id for c in spec.cases] == ["inline", "geo-1", "geo-2"]


def test_a_suite_case_id_clashing_with_an_inline_case(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(SUITES["cases.jsonl"])
    inline = '[[cases]]\nid = "geo-2"\nprompt = "p"\nexpected = "q"\n'
    path = suite_experiment(tmp_path, "cases.jsonl", inline=inline)
    assert_names(load_error(path), path, "cases[2].id", "'geo-2' is used twice")


def test_a_bad_jsonl_line_names_the_line_number(tmp_path: Path) -> None:
    suite = tmp_path / "cases.jsonl"
    suite.write_text('{"id": "a", "prompt": "p", "expected": "x"}\n\n{oops\n')
    error = load_error(suite_experiment(tmp_path, "cases.jsonl"))
    assert_names(error, suite, "line 3", "invalid JSON")


def test_a_jsonl_record_of_the_wrong_shape_names_line_and_field(tmp_path: Path) -> None:
    suite = tmp_path / "cases.jsonl"
    suite.write_text('{"id": "a", "prompt": "p"}\n{"id": "b", "prompt": 3}\n{"id": "c"}\n')
    assert_names(
        load_error(suite_experiment(tmp_path, "cases.jsonl")), suite, "line 2.prompt", "expected str"
    )
    suite.write_text('{"id": "a", "prompt": "p", "colour": "red"}\n')
    assert_names(
        load_error(suite_experiment(tmp_path, "cases.jsonl")), suite, "line 1", "unknown field colour"
    )


def test_a_bad_csv_row_and_a_bad_yaml_item_are_named(tmp_path: Path) -> None:
    suite = tmp_path / "cases.csv"
    suite.write_text("id,prompt,colour\na,p,red\n")
    assert_names(load_error(suite_experiment(tmp_path, "cases.csv")), suite, "line 2", "unknown field colour")
    suite = tmp_path / "cases.yaml"
    suite.write_text("- {id: a, prompt: p}\n- {id: b, prompt: [1]}\n")
    assert_names(
        load_error(suite_experiment(tmp_path, "cases.yaml")), suite, "cases[1].prompt", "expected str"
    )


def test_a_missing_or_unknown_suite_file(tmp_path: Path) -> None:
    path = suite_experiment(tmp_path, "nowhere.jsonl")
    assert_names(load_error(path), path, "suite.path", "'nowhere.jsonl' not found")
    (tmp_path / "cases.txt").write_text("hello\n")
    assert_names(load_error(suite_experiment(tmp_path, "cases.txt")), tmp_path / "cases.txt", "", ".jsonl")


def test_an_experiment_md_file_reads_its_front_matter(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "---\nname: tighten-coder-skill\ncases:\n  - {id: a, prompt: p, expected: x}\n---\n"
        "# Tighten coder skill\nFree-form rationale.\n",
        "tighten.experiment.md",
    )
    spec = load_experiment(path)
    assert spec.name == "tighten-coder-skill" and [c.id for c in spec.cases] == ["a"]
    assert spec.description == "# Tighten coder skill\nFree-form rationale."


@pytest.mark.parametrize(
    ("text", "expected"),
    [("name: x\n", "opening with a '---' line"), ("---\nname: x\n", "closing '---' line")],
)
def test_an_experiment_md_without_front_matter(tmp_path: Path, text: str, expected: str) -> None:
    error = load_error(write(tmp_path, text, "x.experiment.md"))
    assert expected in error.expected


def test_prompt_overrides_by_tag_fill_the_variant(tmp_path: Path) -> None:
    folder = tmp_path / "prompts" / "overrides"
    folder.mkdir(parents=True)
    (folder / "v2.json").write_text('{"system": "Be terse.", "params": {"temperature": 0.1, "top_p": 0.5}}')
    (folder / "latest.toml").write_text('system = "Be helpful."\n')
    path = write(
        tmp_path,
        'name = "o"\noverrides_dir = "prompts/overrides"\n'
        '[[variants]]\nname = "baseline"\n'
        '[[variants]]\nname = "terse"\noverrides_tag = "v2"\nparams = { temperature = 0.3 }\n'
        '[[cases]]\nid = "a"\nprompt = "p"\nexpected = "x"\n',
    )
    baseline, terse = load_experiment(path).variants
    assert baseline.system == "Be helpful."  # "latest" applies its file when there is one
    assert terse.system == "Be terse." and terse.params == {
        "temperature": 0.3,
        "top_p": 0.5,
    }  # the variant wins


def test_prompt_overrides_reach_matrix_variants(tmp_path: Path) -> None:
    folder = tmp_path / "ov"
    folder.mkdir()
    (folder / "v2.json").write_text('{"system": "Be terse."}')
    (folder / "latest.json").write_text('{"system": "Be helpful."}')
    path = write(
        tmp_path,
        'name = "o"\noverrides_dir = "ov"\n[[variants]]\nname = "baseline"\n'
        '[matrix]\noverrides_tag = ["latest", "v2"]\ntemperature = [0.1]\n'
        '[[cases]]\nid = "a"\nprompt = "p"\nexpected = "x"\n',
    )
    spec = load_experiment(path)
    assert spec.matrix is None  # expanded at load: the log records what each variant ran
    assert [v.system for v in spec.variants] == ["Be helpful.", "Be helpful.", "Be terse."]
    assert all(v.params == {"temperature": 0.1} for v in spec.variants[1:])


def test_a_missing_or_bad_override_file(tmp_path: Path) -> None:
    (tmp_path / "ov").mkdir()
    (tmp_path / "ov" / "bad.json").write_text('{"sytem": "typo"}')
    base = 'name = "o"\noverrides_dir = "ov"\n[[cases]]\nid = "a"\nprompt = "p"\nexpected = "x"\n'
    strict = base.replace("overrides_dir", "overrides_strict = true\noverrides_dir")
    missing = load_error(write(tmp_path, strict + '[[variants]]\nname = "v"\noverrides_tag = "v9"\n'))
    assert missing.field == "variants[0].overrides_tag" and "no override file v9" in missing.expected
    bad = load_error(write(tmp_path, base + '[[variants]]\nname = "v"\noverrides_tag = "bad"\n'))
    assert bad.file.endswith("bad.json") and "sytem" in bad.expected
