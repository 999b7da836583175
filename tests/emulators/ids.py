"""Call ids as the real APIs issue them: new for every call of a conversation.

The conversation so far decides the ids, so the whole and the streamed reply to one request
agree and every later round (a longer conversation) gets new ones. OpenAI's Chat Completions
ids are ``call_`` and 24 characters; Anthropic's are ``toolu_`` and 24 (its docs' example:
``toolu_01A09q90qw90lq917835lq9``); the Responses API gives each call a ``call_`` id and its
item an ``fc_`` id.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def conversation_ids(conversation: Any, count: int, prefix: str, size: int = 24) -> list[str]:
    """The ids of a reply's ``count`` calls after ``conversation``, ``prefix`` and ``size``
    hex digits each."""
    seed = json.dumps(conversation, sort_keys=True)
    digest = [hashlib.sha256(f"{seed}#{i}".encode()).hexdigest() for i in range(count)]
    return [f"{prefix}{d[:size]}" for d in digest]
