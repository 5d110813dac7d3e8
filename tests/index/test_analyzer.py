from openbook.index.analyzer import Analyzer


def test_english_stemming_and_stop_words():
    a = Analyzer()
    assert a.analyze("The running dogs are in the garden") == ["run", "dog", "garden"]


def test_nfkc_and_case_folding():
    a = Analyzer()
    assert a.analyze("ＡＢＣ１２３ Straße") == ["abc123", "strass"]


def test_code_like_tokens_match_exactly_and_not_look_alikes():
    a = Analyzer()
    t = a.analyze("Error E-2043 on SL-PRO-500")
    assert "e-2043" in t and "sl-pro-500" in t
    assert "e-2403" not in t and "sl-pro-510" not in t
    assert "e-2403" in a.analyze("E-2403")
    # parts are kept so a code typed with spaces still matches
    assert {"sl", "pro", "500"} <= set(t)


def test_numbers_and_digit_grouping():
    a = Analyzer()
    assert "1200" in a.analyze("costs $1,200 per seat")
    assert "2.5" in a.analyze("2.5 GB")


def test_cjk_bigrams():
    a = Analyzer()
    assert a.analyze("差旅政策") == ["差旅", "旅政", "政策"]
    assert a.analyze("旅") == ["旅"]
    assert a.analyze("出張です") == ["出張", "張で", "です"]
    assert a.analyze("한국어") == ["한국", "국어"]


def test_mixed_script_splits_cleanly():
    a = Analyzer()
    assert a.analyze("SL-PRO-500价格") == ["sl-pro-500", "sl", "pro", "500", "价格"]


def test_same_analysis_for_documents_and_queries_is_deterministic():
    a, b = Analyzer(), Analyzer()
    text = "Selective sync excludes folders; 选择性同步"
    assert a.analyze(text) == b.analyze(text) == a.analyze(text)
    assert a.settings() == b.settings()
