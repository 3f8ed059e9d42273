"""Quizzes: a few questions per lesson, with immediate feedback and a link to the page that shows the answer.

The questions are data (course/quiz_data.py, texts in i18n/*/quiz.json); numbers in them come
from kvcore through course/facts.py when the question is drawn. ``?qz_lesson=<stem>`` picks the
lesson. In presentation mode the answers stay hidden until the presenter presses "Reveal".
"""

import streamlit as st

from course.quiz import questions
from ui import course, lesson, quiz, t

lesson.rerun_alone(__file__)

lesson.header(t("quiz.title"), t("quiz.intro"))
stem = quiz.lesson_picker()
title = t(course.LESSON_TITLES[stem])
st.page_link(
    course.lesson_page(stem),
    label=t("quiz.open_lesson", lesson=title),
    icon=":material/school:",
    query_params=course.carried_params(),
)
if lesson.presenting():
    st.caption(t("quiz.presenting_note"))
else:
    quiz.show_score(stem)

for number, question in enumerate(questions(stem), start=1):
    quiz.show_question(stem, number, question)

lesson.takeaway(t("quiz.takeaway"))

row = st.container(horizontal=True, gap="medium", vertical_alignment="center")
with row:
    quiz.start_again_button(stem)
    following = course.LESSONS.index(stem) + 1
    if following < len(course.LESSONS):
        st.page_link(
            course.QUIZ_PAGE,
            label=t("quiz.next_quiz", lesson=t(course.LESSON_TITLES[course.LESSONS[following]])),
            icon=":material/arrow_forward:",
            query_params=course.same_page_params(
                **course.carried_params(**{course.QUIZ_KEY: course.LESSONS[following]})
            ),
        )
