"""A command agent's transcript (ENGINE_TRANSCRIPT): recorded with the trial, counted per tool in the
report, and shown on the trial page as a conversation in real Chromium. The agents are small Python
scripts written here and run as real subprocesses by `engine run`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from engine.presentation.file_transcripts import transcript_cap, transcript_json
from tests.browser import BrowserThread, screenshot
from tests.conftest import run_engine
from tests.serve_helpers import serving

AGENT = '''
import json, os, sys

def call(id, name, **arguments):
    return {"id": id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}

prompt = sys.stdin.read()
messages = [
    {"role": "user", "content": prompt},
    {"role": "assistant", "content": None, "tool_calls": [
        call("call_1", "search_docs", query="refund policy"),
        call("call_2", "search_docs", query="store credit")]},
    {"role": "tool", "tool_call_id": "call_1", "content": "Refunds within 30 days."},
    {"role": "tool", "tool_call_id": "call_2", "content": "Store credit never expires."},
    {"role": "assistant", "content": None, "tool_calls": [call("call_3", "send_reply", to="customer")]},
    {"role": "tool", "tool_call_id": "call_3", "content": "sent"},
    {"role": "assistant", "content": "Refunds within 30 days."},
]
with open(os.environ["ENGINE_TRANSCRIPT"], "w") as f:
    for m in messages:
        f.write(json.dumps(m) + "\\n")
print("Refunds within 30 days.")
'''
ROLES = ["user", "assistant", "tool", "tool", "assistant", "tool", "assistant"]


def write_experiment(cwd: Path, agent: str = AGENT, cases: int = 2) -> None:
    (cwd / "agent.py").write_text(agent)
    script = cwd / "agent.py"
    listed = "\n".join(
        f'[[cases]]\nid = "c{i}"\nprompt = "What is the refund policy? ({i})"\nexpected = "30 days"'
        for i in range(cases)
    )
    (cwd / "exp.toml").write_text(
        f'name = "tools"\nseed = 3\n[target]\nkind = "command"\ncommand = ["{sys.executable}", "{script}"]\n'
        f'[[variants]]\nname = "agent"\n[[graders]]\nkind = "contains"\n{listed}\n'
    )


def run(cwd: Path) -> dict:
    ran = run_engine("run", "exp.toml", "--run-id", "t1", "--store", "st", "--json", cwd=cwd)
    assert ran.returncode == 0, ran.stderr.decode()
    return json.loads(ran.stdout)


def test_the_report_counts_the_transcripts_tool_calls_per_tool(tmp_path: Path) -> None:
    write_experiment(tmp_path)
    (variant,) = run(tmp_path)["variants"]
    assert variant["tool_calls_by_tool"] == {"search_docs": 4, "send_reply": 2}  # two cases
    assert variant["mean_tool_calls"] == 3.0  # the transcript counts for an agent that reports none
    shown = run_engine("report", "t1", "--store", "st", cwd=tmp_path)
    assert "agent calls by tool: search_docs 4, send_reply 2" in shown.stdout.decode()


def test_the_exports_carry_the_agents_own_transcript(tmp_path: Path) -> None:
    write_experiment(tmp_path, cases=1)
    run(tmp_path)
    lines = run_engine("export", "t1", "--format", "jsonl", "--store", "st", cwd=tmp_path).stdout.splitlines()
    (record,) = [json.loads(line) for line in lines]
    assert [m["role"] for m in record["transcript"]] == ROLES
    assert record["transcript"][1]["tool_calls"][0]["function"]["name"] == "search_docs"
    ran = run_engine("export", "t1", "--format", "rundir", "--out", "rd", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    (path,) = (tmp_path / "rd").rglob("transcript.json")
    assert json.loads(path.read_text())["messages"] == record["transcript"]
    checked = run_engine("check", "--store", "st", cwd=tmp_path)  # the transcript blob is referenced
    assert checked.returncode == 0, checked.stdout.decode() + checked.stderr.decode()


def test_a_transcript_line_that_is_not_a_message_is_a_bad_transcript_error(tmp_path: Path) -> None:
    broken = 'import os\nopen(os.environ["ENGINE_TRANSCRIPT"], "w").write("{not json\\n")\nprint("30 days")\n'
    write_experiment(tmp_path, broken, cases=1)
    ran = run_engine("run", "exp.toml", "--run-id", "t1", "--store", "st", "--json", cwd=tmp_path)
    (variant,) = json.loads(ran.stdout)["variants"]
    assert variant["errors_by_class"] == {"bad_transcript": 1}


def test_the_trial_page_shows_the_transcript_as_a_conversation(
    browser: BrowserThread, tmp_path: Path
) -> None:
    write_experiment(tmp_path)
    run(tmp_path)
    with serving(tmp_path / "st") as url:

        def open_trial(page):  # noqa: ANN001, ANN202
            page.goto(f"{url}/runs/t1/trial?case=c0&variant=agent")
            page.wait_for_selector("ol.conversation li.msg")
            screenshot(page, "transcript")
            roles = page.locator("ol.conversation li.msg .role").all_inner_texts()
            tools = page.locator("li.msg.assistant .tool-name").all_inner_texts()
            args = page.locator("li.msg.assistant pre.arguments").all_inner_texts()
            answers = page.locator("li.msg.tool .answers").all_inner_texts()
            return roles, tools, args, answers

        roles, tools, args, answers = browser.call(open_trial)
    assert [r.lower() for r in roles] == ROLES
    assert tools == ["search_docs", "search_docs", "send_reply"]
    assert json.loads(args[1]) == {"query": "store credit"}
    assert answers[0] == "result of search_docs (call_1)"


HOSTILE = (
    '"</script><script>document.body.dataset.pwned = 1</script>'
    '<img src=x onerror=\\"document.body.dataset.pwned = 1\\">"'
)


def test_the_html_file_shows_each_repeats_transcript_as_a_conversation(
    browser: BrowserThread, tmp_path: Path
) -> None:
    write_experiment(tmp_path, AGENT.replace('"sent"', HOSTILE), cases=1)
    run(tmp_path)
    wrote = run_engine("report", "t1", "--store", "st", "--html", "t1.html", cwd=tmp_path)
    assert wrote.returncode == 0, wrote.stderr.decode()

    def open_file(page):  # noqa: ANN001, ANN202
        page.goto((tmp_path / "t1.html").as_uri())
        page.wait_for_selector("body[data-ready='1']")
        page.click('tr[data-case="c0"] td[data-variant="agent"] .cell')
        page.wait_for_selector("#drill:not([hidden]) ol.conversation li.msg")
        screenshot(page, "report-file-transcript")
        roles = page.locator("#drill ol.conversation li.msg .role").all_inner_texts()
        tools = page.locator("#drill li.msg.assistant .tool-name").all_inner_texts()
        args = page.locator("#drill li.msg.assistant pre.arguments").all_inner_texts()
        answers = page.locator("#drill li.msg.tool .answers").all_inner_texts()
        shown = page.locator("#drill li.msg.tool pre").all_inner_texts()
        return roles, tools, args, answers, shown, page.evaluate("document.body.dataset.pwned || ''")

    roles, tools, args, answers, shown, pwned = browser.call(open_file)
    assert [r.lower() for r in roles] == ROLES
    assert tools == ["search_docs", "search_docs", "send_reply"]
    assert json.loads(args[0]) == {"query": "refund policy"}
    assert answers[1] == "result of search_docs (call_2)"
    assert "</script><script>" in shown[2] and "onerror" in shown[2]  # shown as text, never run
    assert pwned == ""


def test_the_files_transcripts_are_cut_to_a_budget_and_say_so() -> None:
    lines = [json.dumps({"role": "user", "content": "x" * 600}),
             json.dumps({"role": "assistant", "content": "y" * 600}),
             json.dumps({"role": "assistant", "content": "z" * 600})]  # fmt: skip
    cut = transcript_json("\n".join(lines), cap=1000)
    assert cut is not None
    assert [m["content"] for m in cut["messages"]] == ["x" * 600, "y" * 400]
    assert cut["cut"] == 800
    assert transcript_json(None) is None
    assert transcript_cap(1) == 20_000 and transcript_cap(10_000) == 1_000  # never under the floor


def test_the_servers_search_covers_transcripts_as_the_files_does(tmp_path: Path) -> None:
    """Words only the transcript holds (a tool's answer): the matrix, its download and the trials API
    find them, and the trial page marks them in the conversation."""
    import httpx

    write_experiment(tmp_path)
    run(tmp_path)
    with serving(tmp_path / "st") as url:
        matrix = httpx.get(f"{url}/api/runs/t1/matrix", params={"q": "never expires"}).json()
        trials = httpx.get(f"{url}/api/runs/t1/trials", params={"q": "never expires"}).json()
        nothing = httpx.get(f"{url}/api/runs/t1/matrix", params={"q": "nowhere at all"}).json()
        page = httpx.get(f"{url}/runs/t1/trial", params={"case": "c0", "q": "never expires"}).text
    assert [r["case"] for r in matrix["rows"]] == ["c0", "c1"]
    assert all(c["matching_repeats"] == [1] for r in matrix["rows"] for c in r["cells"].values())
    assert trials["total"] == 2 and nothing["total"] == 0
    assert "Store credit <mark>never expires</mark>." in page
