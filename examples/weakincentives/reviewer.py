"""A stand-in review agent (the adapter weakincentives would call): it finds the problem in each diff,
but under the source prompt it wraps every verdict in a paragraph of hedging."""

import json
from typing import Any

PROBLEMS = {
    "execute(": "SQL injection",
    "data = fetch(": "missing await",
    "sk-live": "hard-coded secret",
    "range(1,": "off-by-one",
    "except:": "swallowed exception",
}


def answer(request: Any) -> str:
    diff = json.loads(request.prompt)["diff"]
    verdict = next((problem for marker, problem in PROBLEMS.items() if marker in diff), "LGTM")
    if request.system and "verdict only" in request.system:
        return verdict
    return f"Thanks for the change! I looked at it carefully, line by line. Overall: {verdict}."
