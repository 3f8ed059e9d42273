"""The quiz page: feedback on every question of every quiz, both languages, presentation mode, the URL."""

from __future__ import annotations

import re
from urllib.parse import parse_qs

import pytest

import kvcore
from course import seeds
from course.quiz import QUIZZES, Question
from i18n import LANGUAGES, catalogue, translate
from kvcore.units import format_bytes, format_gb, format_gib, format_seconds
from ui import course
from ui.practice import PROGRESS_KEY, Tally

PAGE = "lessons/quiz.py"


def open_quiz(app, stem: str | None, lang: str = "en", **params: str):
    app.query_params.update({"lang": lang, **params})
    if stem is not None:
        app.query_params[course.QUIZ_KEY] = stem
    return app.switch_page(PAGE).run()  # straight to the quiz: app.py runs once, with this page


def answer(app, question: Question, option: str):
    app.radio(key=f"qz_{question.id}").set_value(option)
    return app.button(key=f"qz_check_{question.id}").click().run()


def wrong_option(question: Question) -> str:
    return next(option for option in question.options if option != question.answer)


def explained(app, lang: str, question: Question) -> bool:
    """The explanation is on the page: its longest stretch without numbers or bold marks is in a paragraph."""
    pieces = re.split(r"\{[a-z_0-9]+\}|\*\*", catalogue(lang)[question.explanation])
    fragment = max(pieces, key=len).strip()
    return any(fragment in markdown.value for markdown in app.markdown)


def links_to(app, stem: str) -> bool:
    page = "" if stem == course.DEFAULT_PAGE_STEM else stem  # the default page's url_path is ""
    return any(link.proto.page == page for link in app.page_link)


def success_texts(app) -> list[str]:
    return [element.value for element in app.success]


#: Each quiz in both languages: right answers in one, wrong answers in the other, swapping from quiz to quiz.
RIGHT_IN = [(stem, LANGUAGES[index % 2]) for index, stem in enumerate(course.LESSONS)]
WRONG_IN = [(stem, LANGUAGES[(index + 1) % 2]) for index, stem in enumerate(course.LESSONS)]


@pytest.mark.parametrize(("stem", "lang"), RIGHT_IN)
def test_every_right_answer_says_right_explains_and_links_to_its_page(app, stem, lang):
    open_quiz(app, stem, lang)
    right = translate(lang, "quiz.right")
    for number, question in enumerate(QUIZZES[stem], start=1):
        answer(app, question, question.answer)
        assert not app.exception, [exception.value for exception in app.exception]
        assert success_texts(app).count(right) == number, question.id
        assert explained(app, lang, question), question.id
        assert links_to(app, question.lesson), question.id
    assert not app.warning


@pytest.mark.parametrize(("stem", "lang"), WRONG_IN)
def test_every_wrong_answer_says_not_quite_and_still_explains(app, stem, lang):
    open_quiz(app, stem, lang)
    not_quite = translate(lang, "quiz.not_quite", answer="").split("**")[1]
    for number, question in enumerate(QUIZZES[stem], start=1):
        answer(app, question, wrong_option(question))
        assert len([w for w in app.warning if not_quite in w.value]) == number, question.id
        assert explained(app, lang, question), question.id
        assert links_to(app, question.lesson), question.id
    assert not app.success


@pytest.mark.parametrize("stem", course.LESSONS)
def test_presentation_mode_hides_the_answer_until_reveal(app, stem):
    open_quiz(app, stem, present="true")
    first = QUIZZES[stem][0]
    assert not app.success and not app.warning
    assert not explained(app, "en", first)
    assert not any(button.key and button.key.startswith("qz_check_") for button in app.button)
    app.button(key=f"qz_reveal_{first.id}").click().run()
    assert not app.exception
    [shown] = app.success
    assert shown.value.startswith(translate("en", "quiz.answer_is", answer="")[:10])
    assert explained(app, "en", first)
    assert not explained(app, "en", QUIZZES[stem][1])  # the others stay hidden


def test_presentation_mode_says_whether_the_class_vote_was_right(app):
    open_quiz(app, "memory", present="true")
    first = QUIZZES["memory"][0]
    app.radio(key=f"qz_{first.id}").set_value(wrong_option(first)).run()
    app.button(key=f"qz_reveal_{first.id}").click().run()
    assert any(translate("en", "quiz.not_quite", answer="").split("**")[1] in w.value for w in app.warning)


def test_the_score_counts_right_answers(app):
    open_quiz(app, "memory")
    first, second = QUIZZES["memory"][:2]
    answer(app, first, first.answer)
    answer(app, second, wrong_option(second))
    total = len(QUIZZES["memory"])
    assert any(m.value == translate("en", "quiz.score", right=1, answered=2, total=total) for m in app.markdown)


def test_an_answer_counts_once_in_the_sessions_progress(app):
    open_quiz(app, "memory")
    first = QUIZZES["memory"][0]
    answer(app, first, wrong_option(first))
    answer(app, first, first.answer)  # trying again changes the score, not the progress
    assert app.session_state[PROGRESS_KEY]["quiz"]["memory"] == Tally(answered=1, correct=0)


def test_checking_without_an_option_asks_for_one(app):
    open_quiz(app, "memory")
    first = QUIZZES["memory"][0]
    app.button(key=f"qz_check_{first.id}").click().run()
    assert any(info.value == translate("en", "quiz.choose_first") for info in app.info)
    assert PROGRESS_KEY not in app.session_state or "quiz" not in app.session_state[PROGRESS_KEY]


def test_start_again_clears_the_answers(app):
    open_quiz(app, "memory")
    first = QUIZZES["memory"][0]
    answer(app, first, first.answer)
    app.button(key="qz_start_again").click().run()
    assert not app.success
    assert app.radio(key=f"qz_{first.id}").value is None


def test_the_url_picks_the_quiz(app):
    open_quiz(app, "flash_attention")
    assert app.selectbox(key=course.QUIZ_KEY).value == "flash_attention"
    assert {radio.key for radio in app.radio} == {f"qz_{question.id}" for question in QUIZZES["flash_attention"]}


def test_an_unknown_lesson_in_the_url_falls_back_to_the_first_quiz_with_a_notice(app):
    open_quiz(app, "no-such<b>lesson</b>")
    assert not app.exception
    assert app.selectbox(key=course.QUIZ_KEY).value == course.LESSONS[0]
    [notice] = [info for info in app.info if f"`{course.QUIZ_KEY}`" in info.value]
    assert "<b>" not in notice.value


def test_the_next_quiz_link_keeps_the_language(app):
    open_quiz(app, "memory", lang="pt")
    [following] = [link for link in app.page_link if link.proto.page == "quiz"]
    assert parse_qs(following.proto.query_string) == {"lang": ["pt"], course.QUIZ_KEY: ["attention_variants"]}


def test_the_bytes_per_token_options_come_from_kvcore(app, models):
    open_quiz(app, "memory")
    model = models["llama-3.1-8b"]
    options = app.radio(key="qz_mem_per_token").options
    assert f"**{format_bytes(kvcore.kv_bytes_per_token(model))}**" in options  # 128 KiB, seed 000
    assert f"**{format_bytes(kvcore.mha_equivalent_bytes_per_token(model))}**" in options  # 512 KiB, MHA
    assert f"**{format_bytes(kvcore.kv_bytes_per_token(model, bytes_per_value=1.0))}**" in options  # K without V


def test_the_1m_token_options_come_from_kvcore(app, models, gpus):
    open_quiz(app, "agent_1m")
    ledger = kvcore.ledger(models[seeds.SEED_MODEL_ID], gpus[seeds.SEED_GPU_ID], context_tokens=1_000_000)
    [right] = [o for o in app.radio(key="qz_ag_cache").options if format_gb(ledger.cache_bytes) in o]
    assert format_gib(ledger.cache_bytes) in right  # 327.68 GB = 305.18 GiB, seed 004's "320 GB"
    assert any(format_seconds(ledger.kv_token_s) in o for o in app.radio(key="qz_ag_time").options)  # 97.8 ms


def test_numbers_follow_the_sidebars_memory_units(app, models):
    open_quiz(app, "kv_quantization", units="GB")
    cache = float(kvcore.kv_cache_bytes(models["llama-3.1-8b"], context_tokens=131072, bytes_per_value=1.0))
    assert f"**{format_gb(cache)}**" in app.radio(key="qz_kq_fp8").options


def test_portuguese_numbers_use_a_decimal_comma(app):
    open_quiz(app, "agent_1m", lang="pt")
    assert any("327,68 GB" in option for option in app.radio(key="qz_ag_cache").options)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_option_of_every_quiz_is_distinct_and_fully_translated(app, lang):
    open_quiz(app, course.LESSONS[0], lang)
    for stem in course.LESSONS:
        app.selectbox(key=course.QUIZ_KEY).set_value(stem).run()
        assert len(app.radio) == len(QUIZZES[stem]), stem
        for radio in app.radio:
            assert len(set(radio.options)) == len(radio.options), radio.key
            assert not [option for option in radio.options if "quiz." in option or "{" in option], radio.key
