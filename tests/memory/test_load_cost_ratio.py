"""The load model's threshold comes from a stated cost ratio; its word classes; reading the shipped JSON."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore
from promptcache.memory._load_model import MISS_COST, LoadModel, features, load_model

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import memory_load_train as train  # noqa: E402

# (score, is_general): work rows at 1.0 and 3.0, general rows at 2.0, 4.0 and 5.0
SCORED = [(1.0, False), (2.0, True), (3.0, False), (4.0, True), (5.0, True)]


def test_the_cut_weighs_a_skipped_work_row_by_the_miss_cost():
    # at even costs 1.5 (one work row skipped, no general row loaded) ties 3.5 (one general loaded): the lower cut
    assert train.cost(SCORED, 1.5, 1) == 1 and train.cost(SCORED, 3.5, 1) == 1
    assert train.choose_threshold(SCORED, 1) == 1.5
    # a skipped work row worth 20 loads: the cut goes above every work row
    assert train.cost(SCORED, 1.5, 20) == 20 and train.cost(SCORED, 3.5, 20) == 1
    assert train.choose_threshold(SCORED, 20) == 3.5


def test_the_shipped_model_records_its_cost_ratio_and_smoothing():
    meta = load_model().meta
    assert MISS_COST == 20
    assert meta["miss_cost"] == MISS_COST and meta["alpha"] == 0.02
    assert meta["files"] == list(train.TRAIN_FILES)


@pytest.mark.parametrize(
    ("question", "we", "now"),
    [
        ("how do we tag releases", True, False),
        ("what's our burn rate", True, False),
        ("can you send us the draft", True, False),
        ("how does a bill become law in the US", False, False),
        ("why is the build so slow today", False, True),
        ("what shipped last sprint", False, True),
        ("who is on call this weekend", False, True),
        ("how many tickets so far", False, True),
        ("is Pluto still a planet", False, False),
        ("who is currently the UN secretary-general", False, False),
    ],
)
def test_word_classes(question, we, now):
    feats = features(question)
    assert ("<we>" in feats) is we
    assert ("<now>" in feats) is now


def test_from_json_names_what_is_wrong():
    good = {"prior": 0.5, "unseen": 0.0, "threshold": 1.0, "meta": {}, "weights": {"a": 1.5}}
    model = LoadModel.from_json(good)
    assert (model.prior, model.threshold, dict(model.weights)) == (0.5, 1.0, {"a": 1.5})
    with pytest.raises(ValueError, match="weights and meta must be objects"):
        LoadModel.from_json({**good, "weights": [1.5]})
    with pytest.raises(ValueError, match="'prior' must be a number"):
        LoadModel.from_json({**good, "prior": True})
    with pytest.raises(ValueError, match="'a' must be a number"):
        LoadModel.from_json({**good, "weights": {"a": "1.5"}})
    with pytest.raises(ValueError, match="'threshold' must be a number, got None"):
        LoadModel.from_json({k: v for k, v in good.items() if k != "threshold"})


def test_the_middleware_refuses_a_state_that_is_not_a_mapping():
    middleware = TypedMemoryMiddleware(TypedMemoryStore(), scope="u1")
    with pytest.raises(TypeError, match="the agent state must be a mapping, got list"):
        middleware.before_agent([("user", "hi")], None)


def test_store_items_whose_value_is_not_a_mapping_are_left_alone():
    from types import SimpleNamespace

    from promptcache.memory._changes import stale_by_change
    from promptcache.memory._kinds import MemoryKind
    from promptcache.memory._records import TypedMemory, content_hash, resolve_duplicates

    text = "We run PostgreSQL 14"
    items = [
        SimpleNamespace(key="c-odd", value=["not", "a", "mapping"]),
        SimpleNamespace(key="c-old", value={"content": text, "content_hash": content_hash(text), "subject": None}),
    ]
    record = TypedMemory(id="c-new", kind=MemoryKind.PROJECT_STATE, content=text)
    assert resolve_duplicates(record, items) == (record, ["c-old"])
    assert stale_by_change("We moved from Postgres 14 to 16", "c-new", items) == ["c-old"]
