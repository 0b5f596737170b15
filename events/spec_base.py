"""What every part of an experiment file is made of: a strict Struct base and constrained numbers.

Ranges live in the types (msgspec `Meta`), so a NaN, an infinity, a negative timeout or an integer
that does not fit in 64 bits is refused where the file is read, with the field's path, and never
reaches the log (a NaN compares false with every bound, so every bounded float refuses it).
"""


from typing import Annotated

import msgspec
from msgspec import Meta

BIG = 1e15  # beyond any real count, price or duration: a bigger figure is a mistake
Finite = Annotated[float, Meta(ge=-BIG, le=BIG)]
NonNegative = Annotated[float, Meta(ge=0, le=BIG)]
Positive = Annotated[float, Meta(gt=0, le=BIG)]
Fraction = Annotated[float, Meta(ge=0, le=1)]
Seconds = Annotated[float, Meta(gt=0, le=30 * 24 * 3600)]  # a timeout: positive, at most 30 days
Count = Annotated[int, Meta(ge=0, le=2**53)]
PositiveInt = Annotated[int, Meta(ge=1, le=2**53)]
Seed = Annotated[int, Meta(ge=0, le=2**63 - 1)]
Name = Annotated[str, Meta(min_length=1, max_length=500)]


class Spec(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """Base for every part of an experiment file: unknown fields are errors, not silently ignored."""


class Kinded(Spec, tag_field="kind"):
    """Base of a tagged union: one Struct per `kind`, each with only the fields that kind uses."""

    @property
    def kind(self) -> str:
        return str(self.__struct_config__.tag)


class Price(Spec):
    """USD per million tokens, for one model."""

    input_per_mtok: NonNegative = 0.0
    output_per_mtok: NonNegative = 0.0

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """What a call cost in USD: the one place engine prices tokens."""
        return (tokens_in * self.input_per_mtok + tokens_out * self.output_per_mtok) / 1e6


class EnvRef(Spec):
    """A value read from an environment variable when the run starts: `{env = "AZURE_KEY"}`. The spec
    (and so the log) holds the variable's name, never the secret itself."""

    env: Name
