"""A CJK bigram the corpus lacks: a cut across two words of the question weighs nothing, a part of one word the
corpus never names (a name it lacks) keeps the largest idf, so a question about it is refused. Words as jieba
cuts the question (``question.chinese_words``); real analyzer, real BM25 store on disk."""

from __future__ import annotations

import pytest

from openbook.answer.extractive import term_weights
from openbook.question import chinese_words

from helpers.stores import bm25_engine

DOCS = {
    "snakes.md": "# 海蛇\n\n海蛇是生活在海洋中的蛇类。青环海蛇的毒素很强，约2毫克的毒素已足以致命。\n",
    "office.md": "# 办公室\n\n办公室的电话号码是 020-1234。办公室周一至周五开放。\n",
    "zoo.md": "# 动物园\n\n大象的鼻子很长。钓鱼用的鱼钩挂在墙上。\n",  # 鼻 and 钩 occur, 钩鼻 does not
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    eng = bm25_engine(tmp_path_factory.mktemp("zh-cuts"), DOCS)
    yield eng
    eng.close()


def test_jieba_cuts_a_question_into_words():
    assert chinese_words("钩鼻海蛇的毒素多少可以致命？")[:4] == ["钩鼻", "海蛇", "的", "毒素"]
    assert "办公室" in chinese_words("办公室的电话号码是多少？")
    assert "匡撒" in chinese_words("安哥拉匡撒是什么？")  # a name the dictionary lacks: the tagger groups it


def test_a_bigram_inside_a_word_the_corpus_lacks_keeps_the_largest_idf(engine):
    question = "钩鼻海蛇的毒素多少可以致命？"  # 钩鼻海蛇 (hook-nosed sea snake): the corpus names another sea snake
    terms = engine.analyzer.analyze(question)
    w = dict(zip(terms, term_weights(terms, engine, question)))
    assert w["钩鼻"] == max(w.values()) > 0  # a part of the name the corpus lacks, though it knows 钩 and 鼻
    assert w["鼻海"] == 0.0  # a cut across 钩鼻 | 海蛇: its characters are known, the bigram is no word
    assert engine.ask(question).refused  # the corpus's sea snake is another one


def test_a_question_about_what_the_corpus_names_is_answered(engine):
    answer = engine.ask("青环海蛇的毒素多少可以致命？")
    assert not answer.refused and "2毫克" in answer.text
