"""Odd configs and option values for per-call options and namespaces: ``None``, a read-only ``MappingProxyType``, a
``configurable`` that is not a dict, options already in the config that are malformed, option values of the wrong
type, and key parts / namespaces that would let one namespace spell another."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from promptcache import ResponseCache
from promptcache._config import check_call_options, read_call_options, resolve_scope, validate_key_part
from promptcache.backends._base import validate_namespace
from promptcache.memory import TypedMemoryMiddleware

KEY = "promptcache.response_cache"


def test_context_of_none_is_a_new_config():
    assert ResponseCache.context(None, bust=True) == {"configurable": {KEY: {"bust": True}}}


def test_context_copies_a_read_only_mapping_config():
    config = MappingProxyType({"configurable": MappingProxyType({"user_id": "a"}), "tags": ["t"]})
    merged = ResponseCache.context(config, bust=True)
    assert merged == {"configurable": {"user_id": "a", KEY: {"bust": True}}, "tags": ["t"]}
    assert dict(config["configurable"]) == {"user_id": "a"}  # the original is untouched


def test_apply_context_refuses_a_read_only_config_naming_it():
    with pytest.raises(TypeError, match=r"config must be a RunnableConfig dict, got mappingproxy"):
        ResponseCache.apply_context(MappingProxyType({}), bust=True)
    with pytest.raises(TypeError, match=r"config\['configurable'\] must be a dict, got mappingproxy"):
        ResponseCache.apply_context({"configurable": MappingProxyType({})}, bust=True)


@pytest.mark.parametrize("configurable", [[], "x", 5])
def test_context_refuses_a_configurable_that_is_not_a_mapping(configurable: Any):
    with pytest.raises(TypeError, match=r"config\['configurable'\] must be a dict, got "):
        ResponseCache.context({"configurable": configurable}, bust=True)


@pytest.mark.parametrize("config", [[], "cfg", 5])
def test_context_refuses_a_config_that_is_not_a_mapping(config: Any):
    with pytest.raises(TypeError, match=r"config must be a RunnableConfig dict, got "):
        ResponseCache.context(config, bust=True)


@pytest.mark.parametrize("method", ["context", "apply_context"])
@pytest.mark.parametrize(
    ("existing", "error", "message"),
    [
        ("bust", TypeError, r"configurable\['promptcache.response_cache'\] must be a dict of per-call options"),
        ({"bsut": True}, ValueError, r"unknown per-call option\(s\) \['bsut'\]"),
        ({"bust": "yes"}, TypeError, "per-call bust must be a bool, got str: 'yes'"),
    ],
)
def test_malformed_options_already_in_the_config_are_refused_not_dropped(method, existing, error, message):
    config = {"configurable": {KEY: existing}}
    with pytest.raises(error, match=message):
        getattr(ResponseCache, method)(config, key="k")
    assert config == {"configurable": {KEY: existing}}  # nothing written


@pytest.mark.parametrize(
    ("opts", "error", "message"),
    [
        ({"bust": 1}, TypeError, "per-call bust must be a bool, got int: 1"),
        ({"bust": None}, TypeError, "per-call bust must be a bool, got NoneType: None"),
        ({"scope": {"a": 1}}, TypeError, "per-call scope must be a string or None, got dict"),
        ({"scope": float("nan")}, TypeError, "per-call scope must be a string or None, got float: nan"),
        ({"scope": b"u1"}, TypeError, "per-call scope must be a string or None, got bytes"),
        ({"scope": " "}, ValueError, "per-call scope must be a non-empty string"),
        ({"scope": "\ud800"}, ValueError, "lone surrogate"),
        ({"key": 5}, TypeError, "per-call key must be a str or a callable"),
        ({"key": ""}, ValueError, "per-call key must be a non-empty string or a callable"),
    ],
)
def test_option_values_of_the_wrong_type(opts, error, message):
    with pytest.raises(error, match=message):
        ResponseCache.context(**opts)


def test_unknown_option_names_of_mixed_types_are_all_named():
    with pytest.raises(ValueError, match=r"unknown per-call option\(s\) \[1, 'x'\]"):
        check_call_options(KEY, {"bust"}, {1: True, "x": 2, "bust": True})


def test_hand_written_options_as_a_read_only_mapping_are_read():
    assert check_call_options(KEY, {"bust"}, MappingProxyType({"bust": True})) == {"bust": True}
    config = MappingProxyType({"configurable": {KEY: MappingProxyType({"bust": True})}})
    assert read_call_options(KEY, config, {"bust"}) == {"bust": True}


@pytest.mark.parametrize("configurable", [[1], "x", 5])
def test_reading_options_from_a_bad_configurable_is_a_clear_error(configurable: Any):
    with pytest.raises(TypeError, match=r"config\['configurable'\] must be a dict, got "):
        read_call_options(KEY, {"configurable": configurable}, {"bust"})
    with pytest.raises(TypeError, match=r"config\['configurable'\] must be a dict, got "):
        resolve_scope(None, config={"configurable": configurable})


@pytest.mark.parametrize("config", [[1], "x"])
def test_reading_options_from_a_config_that_is_not_a_mapping_is_a_clear_error(config: Any):
    with pytest.raises(TypeError, match=r"config must be a RunnableConfig dict, got "):
        read_call_options(KEY, config, {"bust"})


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (None, TypeError, "agent_id must be a str, got NoneType: None"),
        (5, TypeError, "agent_id must be a str, got int: 5"),
        (" ", ValueError, "agent_id must be a non-empty string"),
        ("shop:1a2b3c4d", ValueError, "agent_id must not contain ':'"),
        ("a\x00", ValueError, "NUL"),
        ("\ud800", ValueError, "lone surrogate"),
    ],
)
def test_bad_key_parts(value, error, message):
    with pytest.raises(error, match=message):
        validate_key_part(value, "agent_id")


@pytest.mark.parametrize("namespace", ["a:b:", "", ":", "x", "a*:", "{a}:", "\u00e9:", "a b:", "cache:\n"])
def test_bad_namespaces(namespace):
    with pytest.raises(ValueError, match="namespace must be one segment"):
        validate_namespace(namespace)


def test_memory_context_refuses_namespace_injection():
    with pytest.raises(ValueError, match="namespace separator"):
        TypedMemoryMiddleware.context(scope="alice.feedback")
    merged = TypedMemoryMiddleware.context(MappingProxyType({"configurable": {"user_id": "a"}}), scope="u1")
    assert merged == {"configurable": {"user_id": "a", "promptcache.memory": {"scope": "u1"}}}
