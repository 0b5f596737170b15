"""The embedded default target (`kind = "local"`): a small statistical language model, not an LLM.

It retrieves the corpus sentences most relevant to the prompt (idf-weighted word
overlap), picks one with a softmax at the request's temperature (and top_p), and
writes it out word by word, where each word may be swapped for a bigram
continuation with a probability that grows with temperature. So answers are real
and vary with prompt, system prompt, temperature, top_p, max_tokens and seed; at
temperature 0 they are deterministic and mostly right, and they degrade as the
temperature rises. The same request always gives the same answer.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections import defaultdict

import trio

from engine.actors.targets.local_corpus import CORPUS
from engine.actors.targets.target_protocol import TargetContext, TargetRequest, TargetResponse
from engine.events.spec import LocalTargetSpec

_WORD = re.compile(r"[A-Za-z0-9']+")
_STOP = set(
    "a an the is are was of to in on and or what which who how at do does you your with for by it its".split()
)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


class _Model:
    """Built once at import from the corpus: an inverted index with idf weights and a bigram table."""

    def __init__(self, sentences: list[str]) -> None:
        self.sentences = sentences
        self.bags = [set(_words(s)) - _STOP for s in sentences]
        df: dict[str, int] = defaultdict(int)
        for bag in self.bags:
            for word in bag:
                df[word] += 1
        self.idf = {w: math.log((1 + len(sentences)) / (1 + n)) + 1 for w, n in df.items()}
        self.next_words: dict[str, list[str]] = defaultdict(list)
        for sentence in sentences:
            tokens = sentence.split()
            for a, b in zip(tokens, tokens[1:], strict=False):
                self.next_words[a.lower()].append(b)

    def ranked(self, prompt: str) -> list[tuple[float, int]]:
        query = set(_words(prompt)) - _STOP
        scores = [(sum(self.idf.get(w, 0.0) for w in query & bag), i) for i, bag in enumerate(self.bags)]
        return sorted(scores, key=lambda s: (-s[0], s[1]))


MODEL = _Model(CORPUS)


def _pick(ranked: list[tuple[float, int]], temperature: float, top_p: float, rng: random.Random) -> int:
    if temperature <= 0:
        return ranked[0][1]
    top = ranked[:8]
    weights = [math.exp((score - top[0][0]) / max(temperature, 1e-3)) for score, _ in top]
    total = sum(weights)
    kept, mass = [], 0.0
    for weight, (_, index) in zip(weights, top, strict=True):
        kept.append((weight, index))
        mass += weight / total
        if mass >= top_p:
            break
    return rng.choices([i for _, i in kept], weights=[w for w, _ in kept])[0]


def _write(sentence: str, temperature: float, rng: random.Random) -> list[str]:
    """Word by word; each word may drift to a bigram continuation of the previous one."""
    drift = min(0.9, 0.35 * temperature * temperature)
    out: list[str] = []
    for word in sentence.split():
        options = MODEL.next_words.get(out[-1].lower()) if out else None
        out.append(rng.choice(options) if options and rng.random() < drift else word)
    return out


def _sentence_count(system: str | None) -> int:
    text = (system or "").lower()
    if any(k in text for k in ("one sentence", "concise", "brief", "short")):
        return 1
    return 3 if any(k in text for k in ("verbose", "detail", "explain")) else 2


def generate(request: TargetRequest) -> str:
    # a parameter set to null (YAML `~`) is unset: the model's default applies
    params = {name: value for name, value in request.params.items() if value is not None}
    temperature = float(params.get("temperature", 0.7))
    top_p = float(params.get("top_p", 1.0))
    max_tokens = int(params.get("max_tokens", 64))
    digest = hashlib.blake2b(f"{request.seed}|{temperature}|{top_p}|{request.system}".encode(), digest_size=8)
    rng = random.Random(int.from_bytes(digest.digest(), "big"))
    ranked = MODEL.ranked(f"{request.context or ''} {request.prompt}")
    words: list[str] = []
    for _ in range(_sentence_count(request.system)):
        index = _pick(ranked, temperature, top_p, rng)
        ranked = [r for r in ranked if r[1] != index]
        words += _write(MODEL.sentences[index], temperature, rng)
    return " ".join(words[: max(1, max_tokens)])


class LocalTarget:
    @classmethod
    def from_spec(cls, spec: LocalTargetSpec, context: TargetContext) -> LocalTarget:
        return cls()

    async def call(self, request: TargetRequest) -> TargetResponse:
        latency_ms = float(request.params.get("latency_ms", 0))
        if latency_ms > 0:
            await trio.sleep(latency_ms / 1000)
        text = generate(request)
        prompt_words = len(_words(f"{request.system or ''} {request.prompt}"))
        return TargetResponse(text=text, tokens_in=prompt_words, tokens_out=len(text.split()))

    async def aclose(self) -> None:
        return None
