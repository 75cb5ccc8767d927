"""placeholder until the adapter is written"""
from .strategies import Strategy, StrategyUnavailable


class MultiPointAdapter(Strategy):
    name = "multi-point"

    def __init__(self, *a, **k):
        raise StrategyUnavailable("not yet")
