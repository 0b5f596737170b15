"""The team's evaluator: the verdict must be right, within the variant's response budget."""

from typing import Any


def grade(case: Any, output: str, context: Any) -> dict[str, Any]:
    limit = context.variant.flags.get("max_response_tokens", 10)
    right = case.expected.lower() in output.lower()
    short = len(output.split()) <= limit
    reason = "" if right and short else f"{'wrong verdict' if not right else 'too long'}: {output!r}"
    return {"score": (right + short) / 2, "passed": right and short, "reason": reason}
