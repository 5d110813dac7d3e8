"""A synonym glossary the user supplies, applied to the lexical (BM25) leg as down-weighted query expansions.

Vocabulary mismatch ("laptop" in the question, "notebook computer" in the policy) is invisible to BM25. A
glossary names the equivalences of a domain, in TOML::

    expansion_weight = 0.5            # optional: weight of an added term (a query's own terms weigh 1)

    [[synonyms]]                      # symmetric: a query with any of these phrases also searches the others
    terms = ["laptop", "notebook computer"]

    [[is_a]]                          # directional: a query for the narrower phrase also searches the broader
    narrower = "exchange-traded fund" # one, never the reverse (an index-fund query is not about ETFs)
    broader = ["index fund"]

Phrases go through the index's own analyzer, so "laptops" matches the entry "laptop" and CJK phrases match
as bigrams. A phrase matches when its terms occur contiguously in the query's terms. Each added term enters
the BM25 query with weight ``expansion_weight`` (BM25 query-term weights as in Robertson and Zaragoza 2009,
§3.5: the score is the weighted sum of the terms' contributions); a term the query already has is not added.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..errors import ConfigError

__all__ = ["Glossary", "Expansion"]


@dataclass(frozen=True)
class Expansion:
    """One expansion that fired: the phrase found in the query and the phrases it added.

    ``source``: ``"glossary"`` (the user's file) or ``"wordnet"`` (``openbook.retrieve.lexicon``);
    ``matched_terms``: the analyzer terms of ``matched`` (the question terms the expansion stands for);
    ``added_terms``: the analyzer terms of each phrase of ``added``, in order. The answerer reads a sentence that
    holds every term of one added phrase as holding ``matched_terms`` (``answer.extractive``).
    """

    matched: str
    added: tuple[str, ...]
    source: str = "glossary"
    matched_terms: tuple[str, ...] = ()
    added_terms: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class _Rule:
    source: str
    source_terms: tuple[str, ...]
    targets: tuple[tuple[str, tuple[str, ...]], ...]  # (phrase, its terms)


class Glossary:
    """Synonym and is-a rules over analyzed terms. Build with ``Glossary.load`` or ``Glossary.from_dict``."""

    def __init__(self, rules: Sequence[_Rule], weight: float) -> None:
        self.rules = tuple(rules)
        self.weight = weight

    @classmethod
    def load(cls, path: str | Path, analyze: Callable[[str], list[str]]) -> "Glossary":
        """Read a glossary TOML file (see the module docstring).

        Raises:
            ConfigError: the file is missing, is not TOML, or an entry is malformed (the message names it).
        """
        import tomllib  # imported where a glossary is configured, not by every search

        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"glossary {p}: no such file; fix [retrieval] glossary in openbook.toml") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"glossary {p}: not valid TOML ({exc})") from None
        return cls.from_dict(data, analyze, source=str(p))

    @classmethod
    def from_dict(cls, data: dict, analyze: Callable[[str], list[str]], source: str = "glossary") -> "Glossary":
        """Build from the parsed TOML mapping (``synonyms``, ``is_a``, optional ``expansion_weight``).

        Raises:
            ConfigError: unknown keys, a weight outside (0, 1], or a malformed entry.
        """
        unknown = set(data) - {"synonyms", "is_a", "expansion_weight"}
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) {', '.join(sorted(unknown))}; "
                              f"valid: synonyms, is_a, expansion_weight")
        weight = data.get("expansion_weight", 0.5)
        if not isinstance(weight, (int, float)) or not 0 < weight <= 1:
            raise ConfigError(f"{source}: expansion_weight must be a number in (0, 1], not {weight!r}")

        def phrases(value: object, where: str) -> list[str]:
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list) or not items or not all(isinstance(x, str) and x.strip() for x in items):
                raise ConfigError(f"{source}: {where} must be a phrase or a list of phrases, not {value!r}")
            return items

        def terms(phrase: str, where: str) -> tuple[str, ...]:
            t = tuple(analyze(phrase))
            if not t:
                raise ConfigError(f"{source}: {where}: {phrase!r} has no searchable word")
            return t

        rules: list[_Rule] = []
        for i, entry in enumerate(data.get("synonyms", []), start=1):
            where = f"synonyms entry {i}"
            if not isinstance(entry, dict) or set(entry) != {"terms"}:
                raise ConfigError(f"{source}: {where} must be a table with one key, terms")
            group = [(p, terms(p, where)) for p in phrases(entry["terms"], where)]
            if len(group) < 2:
                raise ConfigError(f"{source}: {where} needs at least two phrases")
            for p, t in group:
                rules.append(_Rule(p, t, tuple((q, u) for q, u in group if u != t)))
        for i, entry in enumerate(data.get("is_a", []), start=1):
            where = f"is_a entry {i}"
            if not isinstance(entry, dict) or set(entry) != {"narrower", "broader"}:
                raise ConfigError(f"{source}: {where} must be a table with keys narrower and broader")
            broader = [(p, terms(p, where)) for p in phrases(entry["broader"], where)]
            for p in phrases(entry["narrower"], where):
                rules.append(_Rule(p, terms(p, where), tuple(broader)))
        return cls(rules, float(weight))

    def expand(self, query_terms: Sequence[str]) -> tuple[list[tuple[str, float]], list[Expansion]]:
        """The weighted BM25 query for ``query_terms`` and the entries that fired.

        Args:
            query_terms: the analyzer's terms of the query, in order (repeats allowed).

        Returns:
            ``(weighted, fired)``: every query term with weight 1.0, in order, followed by each added term with
            weight ``self.weight`` (at most once each, never a term the query has); and one ``Expansion`` per
            rule that matched, in glossary order.
        """
        weighted = [(t, 1.0) for t in query_terms]
        have = set(query_terms)
        fired: list[Expansion] = []
        for rule in self.rules:
            if not _contains(query_terms, rule.source_terms):
                continue
            added = []
            for phrase, terms in rule.targets:
                new = [t for t in terms if t not in have]
                if new:
                    added.append((phrase, terms))
                    weighted.extend((t, self.weight) for t in new)
                    have.update(new)
            if added:
                fired.append(Expansion(rule.source, tuple(p for p, _ in added), "glossary", rule.source_terms,
                                       tuple(t for _, t in added)))
        return weighted, fired


def _contains(seq: Sequence[str], sub: Sequence[str]) -> bool:
    """Whether ``sub`` occurs contiguously in ``seq``."""
    n = len(sub)
    return any(tuple(seq[i : i + n]) == tuple(sub) for i in range(len(seq) - n + 1))
