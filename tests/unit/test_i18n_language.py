"""The language a message is written in: the process's (DSCLUSTER_LANG, LANG...) unless a request names
its own (the JupyterLab panel does), and then only inside that request."""

from __future__ import annotations

import asyncio

from dscluster.i18n import current_language, language_of, tr, use_language


def test_locale_names_map_to_the_supported_languages():
    assert [language_of(v) for v in ("zh-TW", "zh_TW.UTF-8", "zh_Hant", "zh-HK", "en", "en_US", "fr")] == \
        ["zh_TW", "zh_TW", "zh_TW", "zh_TW", "en", "en", "en"]


def test_a_requests_language_wins_inside_only_and_follows_into_worker_threads(monkeypatch):
    monkeypatch.setenv("DSCLUSTER_LANG", "en")
    assert tr("error") == "error"
    with use_language("zh-TW"):
        assert current_language() == "zh_TW" and tr("error") == "錯誤"

        async def in_a_thread() -> str:  # what the server's handlers do with blocking work
            return await asyncio.to_thread(current_language)

        assert asyncio.run(in_a_thread()) == "zh_TW"
    assert current_language() == "en" and tr("error") == "error"
    with use_language(None):
        assert current_language() == "en"


def test_literal_braces_come_out_single_in_every_language_with_or_without_values(monkeypatch):
    from dscluster.dsconfig import validate
    from dscluster.errors import ConfigError
    from dscluster.i18n import tr

    for lang in ("en", "zh_TW"):
        monkeypatch.setenv("DSCLUSTER_LANG", lang)
        assert "{{" not in tr('e.g. "zero_optimization": {{"stage": 2}}')
        assert tr('e.g. "zero_optimization": {{"stage": 2}}').count("{") == 1
        try:
            validate({"train_micro_batch_size_per_gpu": 1, "zero_optimization": 2}, 1)
        except ConfigError as exc:
            assert "{{" not in str(exc) and str(exc).count("{") == 1, str(exc)
        else:
            raise AssertionError("a non-object zero_optimization was accepted")
    assert tr("recorded text with {braces} of its own") == "recorded text with {braces} of its own"



def test_a_recorded_explanation_without_templates_is_shown_as_written():
    from dscluster.explain import localized

    recorded = {"cause": 'the recorded text holds {{"stage": 2}} verbatim', "fix": "x"}
    assert localized(recorded)[0] == recorded["cause"]
