"""What a trial calls: one spec per target kind, tagged on `kind`.

Each kind is declared once below with its implementation and what it can do (`TargetKind`);
`TargetSpec` is the union of them. Fields every kind has (model, timeout, retries, price) live on the
base; a field another kind uses (`command` on an openai target) is an unknown-field error.
"""

from typing import Annotated, Literal

from msgspec import Meta

from engine.events.kind_registry import Kind, KindRegistry
from engine.events.sandbox import (
    NetworkPolicy,
    Port,
    SandboxKind,
    SandboxLimits,
    SandboxPolicy,
    ServiceSpec,
    check_policy,
    network_of,
)
from engine.events.spec_base import EnvRef, Kinded, Name, Price, Seconds

# error classes a target may opt into retrying; transient infrastructure errors (connect, network,
# http_429, http_5xx) are always retried, up to max_retries
RetryableClass = Literal["timeout", "malformed_response", "agent_exit", "subject_error"]


class BaseTarget(Kinded):
    model: str | None = None
    timeout_s: Seconds = 60.0
    max_retries: Annotated[int, Meta(ge=0, le=100)] = 3
    concurrency: Annotated[int, Meta(ge=1, le=4096)] | None = None
    price: Price | None = None
    # a timeout or a crash of the subject is recorded once; list its class here to retry it too
    retry_on: list[RetryableClass] = []


class HttpTarget(BaseTarget):
    base_url: str | None = None
    api_key_env: Name | None = None  # the name of the variable holding the key; the key is never logged
    # a header's value is text, or {env = "VAR"} read when the run starts (for secrets)
    headers: dict[str, str | EnvRef] = {}
    # query parameters added to every request's URL (Azure's api-version; a key a gateway takes in
    # the query, as { env = "VAR" }); a credential in base_url itself is refused
    query: dict[str, str | EnvRef] = {}
    # params sent beyond the standard sampling ones (e.g. min_p for vLLM or llama.cpp); opt-in, since
    # OpenAI itself rejects fields it does not know
    extra_params: list[str] = []
    # stream the answer (server-sent events; the openai and anthropic kinds): each trial then records
    # its time to first token and tokens per second. first_byte_timeout_s bounds the wait from the
    # request sent to the answer's first byte, idle_timeout_s every gap between streamed pieces (the
    # wait for the first token included); both default to timeout_s, which still bounds the whole call
    stream: bool = False
    first_byte_timeout_s: Seconds | None = None
    idle_timeout_s: Seconds | None = None


class OpenAITargetSpec(HttpTarget, tag="openai", kw_only=True):
    """An OpenAI-compatible /chat/completions server (OpenAI, vLLM, llama.cpp, Ollama)."""

    base_url: Name
    # with stream = true, ask for the usage in the stream's last chunk (stream_options.include_usage);
    # false for a server that refuses the field (the tokens are then the streamed text events)
    stream_usage: bool = True


class AnthropicTargetSpec(HttpTarget, tag="anthropic"):
    """The Anthropic Messages API (base_url defaults to Anthropic's)."""


class CommandTargetSpec(BaseTarget, tag="command", kw_only=True):
    """An agent CLI, one subprocess per trial: argv list or a shell string."""

    command: list[str] | Name
    prompt_via: Literal["stdin", "arg", "template"] = "stdin"
    # the agent's extra environment: text, or { env = "VAR" } read when the trial starts (a secret:
    # a literal one is refused, and its value is redacted from everything the run writes)
    env: dict[str, str | EnvRef] = {}
    workdir: str | None = None
    # "shared": every trial of a variant works in one folder set up once (faster; state can leak)
    workspace: Literal["per_trial", "shared"] = "per_trial"
    # where the agent runs (see engine.events.sandbox): a plain process, or its own sandbox per trial
    sandbox: SandboxKind = "none"
    network: NetworkPolicy | None = None  # "none" inside a sandbox unless set
    host_ports: list[Port] = []  # network "loopback": the host's loopback ports the agent may reach
    limits: SandboxLimits = SandboxLimits()
    services: list[ServiceSpec] = []
    pass_env: list[Name] = []  # in a sandbox: the host's variables the agent sees (besides `env`)

    def __post_init__(self) -> None:
        check_policy(self.policy)

    @property
    def policy(self) -> SandboxPolicy:
        return SandboxPolicy(
            kind=self.sandbox, network=network_of(self.sandbox, self.network), host_ports=self.host_ports,
            limits=self.limits, services=self.services, pass_env=self.pass_env,
        )  # fmt: skip


class PythonTargetSpec(BaseTarget, tag="python", kw_only=True):
    """A Python callable: registered by name through the embedding API, or 'package.module:function'."""

    callable: Name


class LocalTargetSpec(BaseTarget, tag="local"):
    """The embedded statistical model: runs anywhere, no server, no key."""


# the sampling parameters an HTTP kind puts in its request body (besides those `extra_params` names)
OPENAI_SAMPLING = (
    "temperature", "top_p", "top_k", "frequency_penalty", "presence_penalty", "max_tokens", "stop", "seed",
)  # fmt: skip
ANTHROPIC_SAMPLING = ("temperature", "top_p", "top_k", "stop_sequences")
# what the embedded model reads (actors/targets/local.py): anything else would change nothing
LOCAL_READS = ("temperature", "top_p", "max_tokens", "latency_ms")


class TargetKind(Kind, frozen=True):
    """A target kind: its spec, its implementation (a class with `from_spec(spec, context)`,
    `call(request)` and `aclose()`) and what the rest of engine needs to know of it."""

    # the params it sends, others being refused as typos (None: it hands `params` to the agent as is)
    sent_params: tuple[str, ...] | None = None
    callable_field: str | None = None  # the field naming a Python callable ('module:function')
    answer_formats: bool = False  # a judge on it may ask for JSON answers (response_format)
    # it stops a reply at params.max_tokens: a budget reserves that bound, not the worst case
    honours_max_tokens: bool = False
    # its calls report tokens, billed at its `price` or the experiment's [pricing] for its model
    priced_per_token: bool = False
    # an HTTP API (its spec an HttpTarget): base_url, headers and api_key_env are checked before a run
    speaks_http: bool = False
    # runs the agent as a command (its spec a CommandTargetSpec): the command is checked before a run
    runs_command: bool = False
    # reads a streamed answer when its spec says stream = true (else stream = true is refused)
    streams: bool = False

    def __post_init__(self) -> None:
        needs = [(self.speaks_http, HttpTarget), (self.runs_command, CommandTargetSpec)]
        for declared, base in needs:
            if declared and not issubclass(self.spec, base):
                raise TypeError(f"the {self.name!r} target kind's spec must subclass {base.__name__}")


_HERE = "engine.actors.targets."
_HTTP = {"base_url": "{url}", "model": "m", "max_retries": 0}
_PYTHON = {"callable": "json:dumps"}
_ANTHROPIC_SENT = (*ANTHROPIC_SAMPLING, "max_tokens")
_MODEL_API = {"honours_max_tokens": True, "priced_per_token": True}
BUILTIN_TARGETS = [
    TargetKind(
        OpenAITargetSpec, _HERE + "openai:OpenAITarget", _HTTP, OPENAI_SAMPLING, answer_formats=True,
        speaks_http=True, streams=True, **_MODEL_API,
    ),
    TargetKind(AnthropicTargetSpec, _HERE + "anthropic:AnthropicTarget", _HTTP, _ANTHROPIC_SENT,
               speaks_http=True, streams=True, **_MODEL_API),
    TargetKind(CommandTargetSpec, _HERE + "command_target:CommandTarget", {"command": ["cat"]},
               runs_command=True),
    TargetKind(PythonTargetSpec, _HERE + "python_target:PythonTarget", _PYTHON, callable_field="callable"),
    TargetKind(LocalTargetSpec, _HERE + "local:LocalTarget", sent_params=LOCAL_READS, **_MODEL_API),
]  # fmt: skip
TARGETS: KindRegistry[TargetKind] = KindRegistry(
    "target kind", "engine.targets", BaseTarget, BUILTIN_TARGETS, TargetKind
)
TargetSpec = TARGETS.union()
TARGET_KINDS = {k.name: k.spec for k in BUILTIN_TARGETS}
