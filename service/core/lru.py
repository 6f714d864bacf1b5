"""A small thread-safe least-recently-used map with a byte budget: an API process keeps the texts it served last
(stored leaderboards by ETag), so repeated reads of an unchanged result cost a lookup, not a blob read and a parse."""

from __future__ import annotations

import threading
from collections import OrderedDict


class TextCache:
    """At most ``budget`` characters of texts by key; the least recently used go first."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._items: OrderedDict[str, str] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            text = self._items.get(key)
            if text is not None:
                self._items.move_to_end(key)
            return text

    def put(self, key: str, text: str) -> None:
        if len(text) > self.budget:
            return
        with self._lock:
            old = self._items.pop(key, None)
            self._size += len(text) - (len(old) if old is not None else 0)
            self._items[key] = text
            while self._size > self.budget:
                _, dropped = self._items.popitem(last=False)
                self._size -= len(dropped)
